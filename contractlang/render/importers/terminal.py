"""The mapping report of `contractlang import`, as plain text that fits 80 columns: what was
mapped, what was rejected and why (counts and the first rows), the notes, the figures, and where
everything was written.

    imported `jobs.txt` (sacct)
      18 rows read: every one mapped or rejected
      mapped        7  job records (one allocation each)
                   10  job steps (inside their job's allocation)
      rejected      1  written to rejects.csv
        row 12  I016  no GPUs: `AllocTRES` `cpu=4,mem=16G,node=1` has no `gres/gpu`
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from rich.cells import cell_len

from contractlang.diagnostics import printable
from contractlang.importers.result import FIRST_ROWS, ImportReport
from contractlang.render.common.numbers import counted

WIDTH = 80


def _fit(text: str, width: int = WIDTH) -> str:
    """One line of at most ``width`` columns; control characters from the file (an escape
    sequence in a value) shown as ``\\x1b``, never obeyed by the terminal."""
    text = printable(text)
    if cell_len(text) <= width:
        return text
    kept, used = [], 0
    for ch in text:  # measured in terminal cells: a CJK character takes two
        used += cell_len(ch)
        if used > width - 1:
            break
        kept.append(ch)
    return "".join(kept) + "…"


def _wrap(text: str, later: int) -> list[str]:
    """``text`` in lines of at most 80 columns, continued ``later`` columns in; control
    characters shown, as :func:`_fit` shows them."""
    return textwrap.wrap(
        printable(text),
        WIDTH,
        subsequent_indent=" " * later,
        break_on_hyphens=False,
        drop_whitespace=True,
    )


def rows(n: int) -> str:
    """``1 row``, ``2 rows``, ``1,000 rows``."""
    return counted(n, "row")


def render_import(
    report: ImportReport, out: Path | None = None, rejects: Path | None = None
) -> str:
    """The report, with the paths written (``out``, ``rejects``) when there are any."""
    r = report
    if not r.accounted:
        whole = "NOT every row is accounted for"
    else:
        whole = "every one mapped, rejected or blank" if r.blank else "every one mapped or rejected"
    lines = [_fit(f"imported `{r.source}` ({r.adapter})"), f"  {rows(r.rows_read)} read: {whole}"]
    for k, m in enumerate(r.mapped):
        head = "  mapped" if k == 0 else ""
        lines.append(_fit(f"{head:<10}{m.rows:>7,}  {m.shown}"))
    if not r.mapped:
        lines.append(f"{'  mapped':<10}{0:>7}")
    n = len(r.rejects)
    if n:
        where = (
            f"written to {rejects}"
            if rejects is not None
            else "pass `--rejects PATH` to keep them with their reasons"
        )
        lines.append(_fit(f"{'  rejected':<10}{n:>7,}  {where}"))
        for j in r.rejects[:FIRST_ROWS]:
            lines += _wrap(f"    row {j.row:<5} {j.code}  {j.reason}", 20)
        if n > FIRST_ROWS:
            lines.append(f"    … and {n - FIRST_ROWS:,} more")
    else:
        lines.append(f"{'  rejected':<10}{0:>7}")
    if r.blank:
        listed = ", ".join(str(row) for row in r.blank_rows)
        rest = r.blank - len(r.blank_rows)
        tail = f" and {rest:,} more" if rest else ""
        word = "row" if r.blank == 1 else "rows"
        lines.append(_fit(f"{'  blank':<10}{r.blank:>7,}  nothing on them: {word} {listed}{tail}"))
    if r.notes:
        lines.append("notes (rows imported with a caveat)")
        for note in r.notes:
            lines += _wrap(f"  {note.code}  {rows(note.count)}: {note.message}", 8)
            more = note.count - len(note.examples)
            if not any(detail for _, detail in note.examples):
                listed = ", ".join(str(row) for row, _ in note.examples)
                tail = f" and {more:,} more" if more else ""
                word = "row" if len(note.examples) == 1 else "rows"
                lines.append(_fit(f"        {word} {listed}{tail}"))
                continue
            for row, detail in note.examples:
                lines += _wrap(f"        row {row}: {detail}", 12)
            if more:
                lines.append(f"        … and {more:,} more")
    if r.facts:
        lines.append("figures")
        label = max(len(name) for name, _ in r.facts)
        for name, value in r.facts:
            lines.append(_fit(f"  {name:<{label}}  {value}".rstrip()))
    shape = (
        f"{counted(r.events, 'event')} ({counted(r.runs, 'run')}, "
        f"{counted(r.allocations, 'allocation')})"
    )
    if out is not None:
        lines.append(_fit(f"wrote {shape} to {out}"))
    else:
        lines.append(_fit(f"made {shape}"))
    if r.open_allocations:
        verb = "is" if r.open_allocations == 1 else "are"
        lines.append(
            _fit(
                f"{counted(r.open_allocations, 'allocation')} {verb} still running: read the "
                "trace with `--open-at`"
            )
        )
    return "\n".join(lines) + "\n"
