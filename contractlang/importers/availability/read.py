"""Public spot availability traces, read into one model: capacity over time.

Two formats are read (``docs/simulate.md`` describes both, with their sources):

- **SkyPilot spot traces** (JSON): ``{"metadata": {"gap_seconds": G}, "data": [n₀, n₁, …]}``;
  ``data[i]`` is the number of spot instances available during ``[i·G, (i+1)·G)`` seconds from
  the trace's start. One-node files hold 0 or 1; 4- and 16-node files count instances; any
  other key (``prices``) is ignored. ``G`` differs from file to file and is read from each.
- **Bamboo add/remove CSV**: rows ``time_ms,add|remove,node`` without a header; a row is one
  node joining or leaving at ``time_ms`` milliseconds from the trace's start. The trace ends at
  its last row. Lines end at a line feed only (a carriage return before it is dropped), so a
  node name may hold U+2028 or a form feed and every line keeps its number. A last line
  without a line break is read when its row reads whole (three fields, a whole number of
  milliseconds, ``add`` or ``remove``, a node): :attr:`Availability.open_line` names it, as it
  may have been cut; a last row that does not read whole is E608, the file cut short.

Either becomes an :class:`Availability`: contiguous :class:`Stretch` es ``[start, end)`` in
integer microseconds from the trace's start, each with the number of instances available.
Malformed input raises :class:`~contractlang.errors.ContractlangError` with the file, line and
column of the problem (codes ``E607``–``E609``). The API, for ``simulate`` and for an importer::

    >>> a = parse_availability('{"metadata": {"gap_seconds": 60}, "data": [1, 1, 0, 4]}', "t.json")
    >>> [(s.start_us // 1_000_000, s.end_us // 1_000_000, s.count) for s in a.stretches]
    [(0, 120, 1), (120, 180, 0), (180, 240, 4)]
    >>> a.held(nodes=2)  # [start, end) in µs where at least 2 instances are available
    ((180000000, 240000000),)
    >>> str(a.available_fraction(nodes=1))
    '3/4'
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from contractlang.codes import LAST_LINE_OPEN
from contractlang.diagnostics import NO_SPAN, Source, Span, did_you_mean, error
from contractlang.errors import ContractlangError
from contractlang.lang.durations import whole_micros
from contractlang.lang.numbers import MICROS_PER_DAY, MICROS_PER_SECOND, counted

__all__ = [
    "Availability",
    "Format",
    "Stretch",
    "parse_availability",
    "parse_bamboo",
    "parse_skypilot",
    "read_availability",
]

Format = Literal["skypilot", "bamboo"]
FORMATS: dict[str, Format] = {".json": "skypilot", ".csv": "bamboo"}
EVENTS = ("add", "remove")
#: The longest a trace may span: ten years of 365 days (public traces span days to months).
#: A simulation replays it from any offset, so every time it yields stays far inside 64 bits.
MAX_SPAN_DAYS = 3650
MAX_SPAN_US = MAX_SPAN_DAYS * MICROS_PER_DAY
#: The most instances a trace may count at once (public traces count at most a few dozen).
MAX_INSTANCES = 100_000


@dataclass(frozen=True, slots=True)
class Stretch:
    """``count`` instances available from ``start_us`` to ``end_us`` (µs from the trace's
    start, end excluded)."""

    start_us: int
    end_us: int
    count: int


@dataclass(frozen=True)
class Availability:
    """Capacity over time: stretches that cover ``[0, span_us)`` without gaps, neighbours
    differing in count."""

    name: str
    format: Format
    stretches: tuple[Stretch, ...]
    #: a SkyPilot file's tick (``gap_seconds``) in µs; None for Bamboo, which has none
    tick_us: int | None = None
    #: the instances left after the trace's last row (Bamboo: its last time's rows can take
    #: nodes away as the trace ends); None when that is the last stretch's count
    final_count: int | None = None
    #: Bamboo: the last line, when it has no line break (it read whole, but may have been cut)
    open_line: int | None = None
    #: that line's text
    open_row: str | None = None

    @property
    def span_us(self) -> int:
        return self.stretches[-1].end_us

    @property
    def peak(self) -> int:
        """The most instances available at once."""
        return max(s.count for s in self.stretches)

    def held(self, nodes: int = 1) -> tuple[tuple[int, int], ...]:
        """The stretches ``[start, end)`` in which at least ``nodes`` instances are available,
        neighbours merged: where a job that needs ``nodes`` instances can hold capacity."""
        out: list[tuple[int, int]] = []
        for s in self.stretches:
            if s.count < nodes:
                continue
            if out and out[-1][1] == s.start_us:
                out[-1] = (out[-1][0], s.end_us)
            else:
                out.append((s.start_us, s.end_us))
        return tuple(out)

    def available_fraction(self, nodes: int = 1) -> Fraction:
        """The share of the trace's time with at least ``nodes`` instances available."""
        return Fraction(sum(e - s for s, e in self.held(nodes)), self.span_us)


def read_availability(path: str | Path, format: Format | None = None) -> Availability:
    """Read an availability trace; the format follows the extension (``.json`` SkyPilot,
    ``.csv`` Bamboo) unless given. A file that cannot be read is ``E607``."""
    p = Path(path)
    fmt = format or FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise _fail("E607", f"`{p}` is neither `.json` (SkyPilot) nor `.csv` (Bamboo)", str(p))
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"cannot read `{p}`: it is not UTF-8 text ({exc.reason})"
        raise _fail("E607", message, str(p)) from None
    except OSError as exc:
        reason = (exc.strerror or "unreadable").lower()
        raise _fail("E607", f"cannot read `{p}`: {reason}", str(p)) from None
    return parse_availability(text, str(p), fmt)


def parse_availability(text: str, name: str, format: Format | None = None) -> Availability:
    """Parse an availability trace from text; without ``format``, text that starts with
    ``{`` is SkyPilot JSON and anything else Bamboo CSV."""
    fmt = format or ("skypilot" if text.lstrip().startswith("{") else "bamboo")
    return parse_skypilot(text, name) if fmt == "skypilot" else parse_bamboo(text, name)


# --------------------------------------------------------------------------- SkyPilot JSON


def parse_skypilot(text: str, name: str) -> Availability:
    """A SkyPilot spot-trace JSON document: ``gap_seconds`` from its own metadata, one
    stretch per run of equal counts in ``data``."""
    src = Source(name, text)
    try:
        doc = json.loads(text, parse_float=Decimal, object_pairs_hook=_unique_keys)
    except _RepeatedKey as exc:
        message = f"the key `{exc.key}` is given twice in one object: which one counts?"
        raise _fail("E608", message, name, NO_SPAN, src) from None
    except json.JSONDecodeError as exc:
        span = Span.point(exc.lineno, exc.colno, exc.pos)
        raise _fail("E608", f"not valid JSON: {exc.msg.lower()}", name, span, src) from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        message = "a number in the file has more digits than can be read"
        raise _fail("E609", message, name, NO_SPAN, src) from None
    except RecursionError:
        raise _fail("E608", "not valid JSON: lists nested too deeply", name, NO_SPAN, src) from None

    def where(*path: str | int) -> Span:
        return _json_span(text, path)

    if not isinstance(doc, dict):
        raise _fail("E608", "expected a JSON object with `metadata` and `data`", name, where(), src)
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or "gap_seconds" not in meta:
        raise _fail(
            "E608",
            "missing `metadata.gap_seconds`: the seconds each entry of `data` covers",
            name,
            where("metadata") if "metadata" in doc else where(),
            src,
        )
    gap = meta["gap_seconds"]
    gap_us = _whole_micros(gap)
    if gap_us is None or not 0 < gap_us <= MAX_SPAN_US:
        raise _fail(
            "E609",
            f"`gap_seconds` must be a positive number of seconds (whole microseconds) up to "
            f"{MAX_SPAN_US // MICROS_PER_SECOND:,} ({MAX_SPAN_DAYS:,} days), not `{_show(gap)}`",
            name,
            where("metadata", "gap_seconds"),
            src,
        )
    data = doc.get("data")
    if not isinstance(data, list) or not data:
        what = "missing" if data is None else "empty" if data == [] else "not a list"
        at = where("data") if "data" in doc else where()
        raise _fail("E608", f"`data` is {what}: expected a list of instance counts", name, at, src)
    if len(data) * gap_us > MAX_SPAN_US:
        raise _fail(
            "E609",
            f"the trace spans more than {MAX_SPAN_DAYS:,} days ({len(data):,} entries of "
            f"`{_show(gap)}` s), the longest a trace may",
            name,
            where("data"),
            src,
        )
    for i, v in enumerate(data):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise _fail(
                "E609",
                f"`data[{i}]` is `{_show(v)}`: counts are whole numbers of instances, 0 or more",
                name,
                where("data", i),
                src,
            )
        if v > MAX_INSTANCES:
            raise _fail(
                "E609",
                f"`data[{i}]` counts {v:,} instances, more than the {MAX_INSTANCES:,} a trace "
                "may count at once",
                name,
                where("data", i),
                src,
            )
    stretches: list[Stretch] = []
    for i, v in enumerate(data):
        if stretches and stretches[-1].count == v:
            stretches[-1] = Stretch(stretches[-1].start_us, (i + 1) * gap_us, v)
        else:
            stretches.append(Stretch(i * gap_us, (i + 1) * gap_us, v))
    return Availability(name, "skypilot", tuple(stretches), gap_us)


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key given twice (JSON does not say which one counts)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(key)
        out[key] = value
    return out


def _whole_micros(v: Any) -> int | None:
    """``v`` seconds as whole microseconds; None when it is not a number, not whole in
    microseconds, or beyond any span (``1e999999999``)."""
    if isinstance(v, bool) or not isinstance(v, (int, Decimal)):
        return None
    seconds = Decimal(v)
    if not seconds.is_finite() or seconds.copy_abs() > MAX_SPAN_US:
        return None
    return whole_micros(seconds, "s")


def _show(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, Decimal) else str(v)


def _json_span(text: str, path: Sequence[str | int]) -> Span:
    """The span of the value at ``path`` (keys and indices) in a JSON text that parsed, or of
    the whole document when it is not found."""
    dec = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    for step in path:
        found = None
        if pos < len(text) and text[pos] in "{[":
            obj = text[pos] == "{"
            i, n = _skip_ws(text, pos + 1), 0
            while i < len(text) and text[i] not in "}]":
                key: object = n
                if obj:
                    key, i = dec.raw_decode(text, i)
                    i = _skip_ws(text, _skip_ws(text, i) + 1)  # past the colon
                if key == step:
                    found = i
                    break
                _, i = dec.raw_decode(text, i)
                i, n = _skip_ws(text, _skip_ws(text, i) + 1), n + 1  # past the comma
        if found is None:
            break
        pos = found
    try:
        _, end = dec.raw_decode(text, pos)
    except json.JSONDecodeError:
        end = pos + 1
    end = min(end, text.find("\n", pos) if "\n" in text[pos:end] else end)
    return _span(text, pos, max(end, pos + 1))


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _span(text: str, start: int, end: int) -> Span:
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1) + 1
    return Span(line, col, line, col + (end - start), start, end)


# --------------------------------------------------------------------------- Bamboo CSV


def text_lines(text: str) -> list[str]:
    r"""The lines of a text file, as the readers of line formats read them: split at ``\n``
    only, a ``\r`` before it dropped, a last line without a line break kept. (``str.
    splitlines`` also breaks at U+2028, U+2029, U+0085, a form feed and more, which a node
    name may hold: every line after one would be numbered wrong.)

    >>> text_lines("0,add,a\u2028b\r\n5,remove,a\u2028b")
    ['0,add,a\u2028b', '5,remove,a\u2028b']
    >>> text_lines("0,add,a\n\n"), text_lines("")
    (['0,add,a', ''], [])
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the text ends with a line break, or is empty
    return [line.removesuffix("\r") for line in lines]


def open_last_line(text: str) -> int | None:
    r"""The number of the text's last line when it has no line break and holds a row (a
    blank one holds nothing that could have been cut).

    >>> open_last_line("0,add,a\n5,remove,a"), open_last_line("0,add,a\n"), open_last_line("a\n ")
    (2, None, None)
    """
    if not text or text.endswith("\n"):
        return None
    lines = text_lines(text)
    return len(lines) if lines[-1].strip() else None


def unread_bamboo_row(row: str) -> str | None:
    """Why a Bamboo row does not read whole — what a row cut short looks like — or None: it
    has three fields, a whole number of milliseconds, `add` or `remove` and a node.

    >>> unread_bamboo_row("1200,remove,n1"), unread_bamboo_row("1200,rem")
    (None, '2 fields, not 3')
    >>> unread_bamboo_row("1200,rem,"), unread_bamboo_row("12")
    ('the event `rem` is neither `add` nor `remove`', '1 field, not 3')
    """
    fields = [f.strip() for f in row.split(",")]
    if len(fields) != 3:
        return f"{counted(len(fields), 'field')}, not 3"
    ms, event, node = fields
    if re.fullmatch("[0-9]+", ms) is None:
        return f"the time `{ms}` is not a whole number"
    if event not in EVENTS:
        return f"the event `{event}` is neither `add` nor `remove`"
    return None if node else "no node"


def cut_bamboo_row(text: str) -> tuple[int, str] | None:
    """The last line of a Bamboo file and why it does not read whole, when it has no line
    break and does not: the file was cut short. None otherwise."""
    line = open_last_line(text)
    if line is None:
        return None
    reason = unread_bamboo_row(text_lines(text)[-1])
    return None if reason is None else (line, reason)


def cut_short_message(name: str, line: int, reason: str) -> str:
    """What a Bamboo file cut short is told (E608 here; I003 when imported)."""
    return (
        f"`{name}` ends mid-line, on line {line:,}, in a row that does not read whole "
        f"({reason}): cut short?"
    )


#: The help of a last line without a line break (cut short, or whole but perhaps cut).
CUT_HELP = (
    "a complete export ends its last line with a line break: export it again, or add the line "
    "break if the file is whole"
)


def parse_bamboo(text: str, name: str) -> Availability:
    """A Bamboo add/remove CSV: the count after every row at a time holds until the next
    time; the trace starts at 0 ms with no instance and ends at its last row."""
    src = Source(name, text)
    cut = cut_bamboo_row(text)
    if cut is not None:
        line, reason = cut
        span = Span(line, 1, line, len(text_lines(text)[-1]) + 1)
        raise _fail("E608", cut_short_message(name, line, reason), name, span, src, CUT_HELP)
    open_line = open_last_line(text)
    try:
        return _bamboo(text, name, src, open_line)
    except ContractlangError as exc:  # a problem of a last line that may have been cut
        (diag,) = exc.diagnostics
        if open_line is None or diag.span.line != open_line:
            raise
        # the row may be what is left of another: the help says so
        said = f"{diag.help}; {LAST_LINE_OPEN}" if diag.help else LAST_LINE_OPEN
        raise ContractlangError([replace(diag, help=said)], exc.sources) from None


def _bamboo(text: str, name: str, src: Source, open_line: int | None) -> Availability:
    present: dict[str, int] = {}  # node → the line that added it
    changes: list[tuple[int, int]] = []  # (time µs, count after the rows at that time)
    last_ms = -1
    offset = 0  # of the current line in the text
    for number, full in enumerate(text.split("\n"), start=1):
        raw = full.removesuffix("\r")
        line_start, offset = offset, offset + len(full) + 1
        if not raw.strip():
            continue
        fields = [f.strip() for f in raw.split(",")]

        def at(field: int, row: str = raw, line_no: int = number, base: int = line_start) -> Span:
            parts = row.split(",")
            col = sum(len(f) + 1 for f in parts[:field])
            width = max(1, len(parts[field]))
            return Span(line_no, col + 1, line_no, col + 1 + width, base + col, base + col + width)

        if len(fields) != 3:
            raise _fail(
                "E608",
                f"a row has {len(fields)} field(s); expected `time_ms,add|remove,node`",
                name,
                Span(number, 1, number, len(raw) + 1),
                src,
            )
        ms_text, event, node = fields
        if re.fullmatch("[0-9]+", ms_text) is None:
            raise _fail(
                "E609",
                f"time `{ms_text}` is not a whole number of milliseconds",
                name,
                at(0),
                src,
            )
        if len(ms_text) > 20 or int(ms_text) * 1000 > MAX_SPAN_US:
            raise _fail(
                "E609",
                f"time `{ms_text}` ms is more than {MAX_SPAN_DAYS:,} days "
                f"({MAX_SPAN_US // 1000:,} ms), the longest a trace may span",
                name,
                at(0),
                src,
            )
        ms = int(ms_text)
        if ms < last_ms:
            raise _fail("E609", f"time goes back: `{ms}` ms after `{last_ms}` ms", name, at(0), src)
        if event not in EVENTS:
            hint = did_you_mean(event, EVENTS)
            raise _fail(
                "E609",
                f"unknown event `{event}`; expected `add` or `remove`",
                name,
                at(1),
                src,
                help=f"did you mean `{hint}`?" if hint else None,
            )
        if not node:
            raise _fail("E609", "a row names no node", name, at(2), src)
        if event == "add" and node in present:
            raise _fail(
                "E609",
                f"node `{node}` is added again; it was added on line {present[node]} "
                "and not removed since",
                name,
                at(2),
                src,
            )
        if event == "remove" and node not in present:
            raise _fail("E609", f"node `{node}` is removed but is not present", name, at(2), src)
        if event == "add":
            present[node] = number
            if len(present) > MAX_INSTANCES:
                raise _fail(
                    "E609",
                    f"{len(present):,} nodes at once, more than the {MAX_INSTANCES:,} a trace "
                    "may count",
                    name,
                    at(2),
                    src,
                )
        else:
            del present[node]
        us = ms * 1000
        if changes and changes[-1][0] == us:
            changes[-1] = (us, len(present))
        else:
            changes.append((us, len(present)))
        last_ms = ms
    if not changes:
        raise _fail("E608", "the file has no rows", name, NO_SPAN, src)
    span_us = changes[-1][0]
    if span_us == 0:
        raise _fail("E608", "the trace spans no time: every row is at 0 ms", name, NO_SPAN, src)
    stretches: list[Stretch] = []
    if changes[0][0] > 0:
        stretches.append(Stretch(0, changes[0][0], 0))
    for (t, count), (t_next, _) in pairwise(changes):
        if stretches and stretches[-1].count == count:
            stretches[-1] = Stretch(stretches[-1].start_us, t_next, count)
        else:
            stretches.append(Stretch(t, t_next, count))
    return Availability(
        name,
        "bamboo",
        tuple(stretches),
        final_count=changes[-1][1],
        open_line=open_line,
        open_row=text_lines(text)[-1] if open_line is not None else None,
    )


def _fail(
    code: str,
    message: str,
    name: str,
    span: Span = NO_SPAN,
    source: Source | None = None,
    help: str | None = None,
) -> ContractlangError:
    diag = error(code, message, span, file=name, help=help)
    return ContractlangError([diag], {name: source} if source is not None else {})
