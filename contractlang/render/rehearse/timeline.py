"""A rehearsal as people read it: its timeline (allocations, notices, checkpoints, replays,
waits) and its failure path (per reclaim: the last valid checkpoint, the replay, the wait).

Times are the recorded ones, after the rehearsal's start (``0:02:06.4``). Facts such as the
last valid checkpoint and the replay are the engine's (the evaluated allocations), so the
timeline says what the bill was computed from.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from rich import box
from rich.table import Table
from rich.text import Text

from contractlang.diagnostics import printable
from contractlang.lang.numbers import MICROS_PER_SECOND, micros
from contractlang.rehearse.record import AllocationRecord, Record
from contractlang.rehearse.results import Rehearsal
from contractlang.render.common.numbers import duration_human


def clock(us: int) -> str:
    """Recorded microseconds after the start as ``h:mm:ss.s`` (tenths, rounded down).

    >>> clock(126_450_000), clock(3_725_000_000)
    ('0:02:06.4', '1:02:05.0')
    """
    tenths = us // (MICROS_PER_SECOND // 10)
    secs, tenth = divmod(tenths, 10)
    h, rest = divmod(secs, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}.{tenth}"


def span(us: int) -> str:
    """A duration for the timeline: to the tenth of a second (rounded half up).

    >>> span(5_967_163), span(900_000_000), span(40)
    ('6 s', '15 min', '0 s')
    """
    tenths = (us + 50_000) // 100_000
    return duration_human(tenths * 100_000)


def facts_by_alloc(rehearsal: Rehearsal) -> dict[str, dict[str, Any]]:
    """The engine's facts of each allocation (the same under every draft of a rehearsal)."""
    frame = rehearsal.contracts[0].allocations
    return {row["alloc_id"]: row for row in frame.iter_rows(named=True)}


def _since(record: Record, value: object) -> int | None:
    """A facts timestamp as recorded microseconds after the start."""
    if value is None:
        return None
    return micros(value - record.started_at)  # type: ignore[operator]


def timeline_table(rehearsal: Rehearsal) -> Table:
    """One row per thing that happened (progress reports are summed up per allocation)."""
    record = rehearsal.record
    facts = facts_by_alloc(rehearsal)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    table.add_column("recorded", justify="right", no_wrap=True)
    table.add_column("allocation", no_wrap=True)
    table.add_column("what happened", overflow="fold")
    previous: AllocationRecord | None = None
    for a in record.allocations:
        if previous is not None:
            wait = a.start_us - previous.end_us
            table.add_row(
                clock(previous.end_us), "", f"waited {span(wait)} for a replacement", style="dim"
            )
        for at, text, style in _rows(record, a, facts[a.alloc_id]):
            table.add_row(clock(at), printable(a.alloc_id), printable(text), style=style)
        previous = a
    return table


def _rows(record: Record, a: AllocationRecord, f: dict[str, Any]) -> list[tuple[int, str, str]]:
    rows: list[tuple[int, str, str]] = [(a.start_us, f"started (attempt {a.attempt})", "")]
    for e in record.events:
        if e.alloc_id != a.alloc_id or e.event not in ("restored", "accepted", "rejected"):
            continue
        text = f"restored step {e.step}" if e.event == "restored" else f"validation: {e.event}"
        rows.append((e.at_us, text, "bold" if e.event != "restored" else ""))
    for c in record.checkpoints:
        if c.alloc_id != a.alloc_id:
            continue
        if c.valid:
            rows.append((c.at_us, f"checkpoint {c.step} ✓", ""))
        else:
            rows.append((c.at_us, f"checkpoint {c.step} ✗ invalid: {c.reason}", "red"))
    if a.notice_us is not None:
        rows.append((a.notice_us, _notice_text(record, a), "yellow"))
    rows.append((a.end_us, _end_text(record, a, f), "bold" if a.end_reason != "released" else ""))
    rows.sort(key=lambda r: r[0])  # stable: same-time rows keep the order above
    return rows


def _notice_text(record: Record, a: AllocationRecord) -> str:
    k = a.interrupt or 0
    planned = record.interrupts[k - 1] if k else None
    lead = span(record.plan.notice.us)
    at = f", planned at {planned.percent} = step {planned.step}" if planned else ""
    return (
        f"notice by {record.notice_signal}, reclaim in {lead} "
        f"(interrupt {k} of {len(record.interrupts)}{at})"
    )


def _end_text(record: Record, a: AllocationRecord, f: dict[str, Any]) -> str:
    ran = _steps(a)
    at = f" at step {a.end_step}" if a.end_step is not None else ""
    if a.end_reason == "released":
        before = " before the reclaim" if a.notice_us is not None else ""
        return f"released{at}{ran}{before}: the job exited with status 0"
    head = f"{a.end_reason}{at}"
    if a.end_reason == "reclaimed" and a.notice_us is None:
        head += " without notice"
    if a.end_reason == "failed" and a.exited is not None:
        head += f": the job {a.exited}"
    verdict = a.end_reason == "reclaimed" and any(
        e.alloc_id == a.alloc_id and e.event in ("accepted", "rejected") for e in record.events
    )
    after = "; the job had reported its result, so no allocation follows" if verdict else ""
    return f"{head}{ran}; {replay_text(f)}{after}"


def replay_text(f: dict[str, Any]) -> str:
    """``replays 3 steps and 5.9 s from checkpoint 20`` for a reclaimed or failed allocation."""
    steps = f["replayed_steps"]
    time = span(micros(f["replayed_time"]))
    what = f"{steps} steps, {time}," if steps is not None else f"{time},"
    if f["last_checkpoint_step"] is None:
        return f"replays {what[:-1]}: no valid checkpoint yet"
    return f"replays {what} from checkpoint {f['last_checkpoint_step']}"


def _steps(a: AllocationRecord) -> str:
    if a.first_step is None or a.end_step is None:
        return ""
    return f" (ran steps {a.first_step}–{a.end_step})"


def failure_path_table(rehearsal: Rehearsal) -> Table | Text:
    """Per reclaimed or failed allocation: notice, last valid checkpoint, replay, wait."""
    record = rehearsal.record
    frame = rehearsal.contracts[0].allocations.filter(
        pl.col("end_reason").is_in(["reclaimed", "failed"])
    )
    if frame.is_empty():
        return Text("  no allocation was reclaimed or failed", style="dim")
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
    for name in ("allocation", "notice", "last valid checkpoint", "replayed", "wait"):
        table.add_column(name, no_wrap=True)
    for f in frame.iter_rows(named=True):
        lead = f["notice_lead"]
        ckpt_at = _since(record, f["last_checkpoint_at"])
        ckpt = (
            "none"
            if f["last_checkpoint_step"] is None or ckpt_at is None
            else f"step {f['last_checkpoint_step']} at {clock(ckpt_at)}"
        )
        steps = f["replayed_steps"]
        replay = span(micros(f["replayed_time"]))
        wait = f["replacement_wait"]
        failed = " (failed)" if f["end_reason"] == "failed" else ""
        table.add_row(
            printable(f"{f['alloc_id']}{failed}"),
            span(micros(lead)) if lead is not None else "—",
            ckpt,
            f"{steps} steps, {replay}" if steps is not None else replay,
            span(micros(wait)) if wait is not None else "none",
        )
    return table
