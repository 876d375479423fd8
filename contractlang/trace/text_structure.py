"""Where a CSV or NDJSON trace breaks its format, in our words: the first row that has more
fields than the header, a quote never closed, a line that is not a JSON object — each named by
its row and line (T017) — or an NDJSON number no reader can hold (``1e1000000``, an integer of
5,000 digits, ``NaN``: T002 on its row, naming its column). Used only when the fast reader has
failed, so a well-formed file costs nothing here. Also: how many blank lines end a CSV file
(harmless layout, not rows).
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contractlang.diagnostics import Span, error
from contractlang.errors import ContractlangError
from contractlang.trace.problems import shortened
from contractlang.trace.schema import DECIMAL_SCALE

#: How much of a file's end is read to count its trailing blank lines.
_TAIL_BYTES = 1 << 16


def trailing_blank_lines(path: Path) -> int:
    """The lines after the last line with content that hold only spaces (CRLF or LF): a CSV
    reader would read each as a row of nothing.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".csv", delete=False) as f:
    ...     _ = f.write(b"a,b\\r\\n1,2\\r\\n\\r\\n  \\n")
    >>> trailing_blank_lines(Path(f.name)); os.unlink(f.name)
    2
    """
    size = path.stat().st_size
    with path.open("rb") as fh:
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read()
    stripped = tail.rstrip()
    if len(stripped) == 0 and len(tail) == size:
        return 0  # nothing but blank lines: no header, nothing to drop
    lines = tail[len(stripped) :].replace(b"\r", b"").split(b"\n")
    return len(lines) - 1 - (1 if lines[-1] == b"" else 0)


def csv_problem(name: str, path: Path) -> ContractlangError | None:
    """T017 at the first record of a CSV file that breaks the format: more fields than the
    header, or a quote that is never closed. ``None`` when Python's reader finds nothing."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        reader = csv.reader(fh, strict=True)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            return _csv_error(name, 0, 1, exc)
        if header is None:
            return None
        start_line = reader.line_num + 1
        record = 0
        try:
            for fields in reader:
                record += 1
                if len(fields) > len(header):
                    return _at(
                        name,
                        record,
                        f"cannot read `{name}`: row {record:,} (line {start_line:,}) has "
                        f"{len(fields)} fields, but the header names {len(header)}",
                        help="remove the extra fields, or quote a value that holds a comma",
                    )
                start_line = reader.line_num + 1
        except csv.Error as exc:
            return _csv_error(name, record + 1, start_line, exc)
    return None


def _csv_error(name: str, record: int, line: int, exc: csv.Error) -> ContractlangError:
    text = str(exc)
    if "unexpected end of data" in text or "EOF" in text:
        what = f"a quote opened on line {line:,} is never closed"
        help_ = 'close the quoted value with `"`; a quote inside a value is written `""`'
    else:
        what = f"line {line:,} is not well-formed CSV ({text.lower()})"
        help_ = None
    where = "the header" if record == 0 else f"row {record:,}"
    return _at(name, record, f"cannot read `{name}`: in {where}, {what}", help=help_)


def ndjson_problem(name: str, path: Path) -> ContractlangError | None:
    """T017 at the first line of an NDJSON file that is not one JSON object (blank lines are
    fine). ``None`` when every line is."""
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(
                    line.rstrip("\r\n"),
                    parse_int=_integer,
                    parse_float=_float,
                    parse_constant=_constant,
                )
            except json.JSONDecodeError as exc:
                reason = exc.msg[0].lower() + exc.msg[1:]
                return _at(
                    name,
                    number,
                    f"cannot read `{name}`: line {number:,} is not valid JSON: {reason} "
                    f"(column {exc.colno})",
                    help="each line of an NDJSON trace is one JSON object",
                )
            except RecursionError:
                return _at(
                    name,
                    number,
                    f"cannot read `{name}`: line {number:,} is not valid JSON: lists or "
                    "objects nested too deeply",
                    help="each line of an NDJSON trace is one JSON object of plain values",
                )
            if not isinstance(value, dict):
                return _at(
                    name,
                    number,
                    f"cannot read `{name}`: line {number:,} is not a JSON object",
                    help="each line of an NDJSON trace is one JSON object, `{...}`",
                )
            for column, v in value.items():
                bad = _unreadable_number(v)
                if bad is not None:
                    return _number_at(name, number, column, bad)
    return None


@dataclass(frozen=True)
class _Unreadable:
    """A JSON number the trace's reader cannot hold: its text, and why."""

    text: str
    reason: str


_PLACES_HELP = "money and decimals are kept exactly, to at most 18 places"
#: A JSON number whose exponent reaches below a double's smallest (about 4.9 × 10⁻³²⁴).
_TINY = re.compile(rb"[eE]-0*[0-9]{3}")
#: How much of an NDJSON file is searched at a time for such a number.
_CHUNK_BYTES = 1 << 20


def vanishing_number(name: str, path: Path, columns: Sequence[str]) -> ContractlangError | None:
    """T002 on the first line of an NDJSON file where one of ``columns`` (those holding JSON
    numbers with a fraction or an exponent, read through doubles) holds a number other than 0
    that a double holds as 0 (``1e-400``): it needs more than 18 decimal places, and would
    otherwise be read as 0 without a word. The file is searched a chunk at a time for a
    three-digit negative exponent, and only the lines holding one are parsed; ``None`` when
    there is none."""
    wanted = set(columns)
    first = 1  # the line the next block starts on
    pending = b""
    with path.open("rb") as fh:
        while True:
            chunk = fh.read(_CHUNK_BYTES)
            data = pending + chunk
            cut = data.rfind(b"\n") + 1 if chunk else len(data)
            block, pending = data[:cut], data[cut:]
            for m in _TINY.finditer(block):
                start = block.rfind(b"\n", 0, m.start()) + 1
                end = block.find(b"\n", m.end())
                line = block[start : len(block) if end < 0 else end]
                found = _vanishing_in(line.decode("utf-8-sig", errors="replace"), wanted)
                if found is not None:
                    column, text = found
                    return ContractlangError(
                        [
                            error(
                                "T002",
                                f"`{column}` value `{shortened(text)}` has more than "
                                f"{DECIMAL_SCALE} decimal places",
                                Span.point(first + block.count(b"\n", 0, start), 0),
                                file=name,
                                help=_PLACES_HELP,
                            )
                        ]
                    )
            first += block.count(b"\n")
            if not chunk:
                return None


def _vanishing_in(line: str, columns: set[str]) -> tuple[str, str] | None:
    """The first of ``columns`` in the JSON object ``line`` whose number a double holds as 0
    though it is not, with its text."""
    try:
        value = json.loads(line, parse_float=_Tiny.of)
    except (ValueError, RecursionError):
        return None  # a line the reader refuses: said where it fails
    if not isinstance(value, dict):
        return None
    for column, v in value.items():
        if column in columns and isinstance(v, _Tiny) and v.vanishes:
            return column, v.text
    return None


@dataclass(frozen=True)
class _Tiny:
    """A JSON number with a fraction or an exponent, as written, and whether a double holds it
    as 0 though it is not."""

    text: str
    vanishes: bool

    @classmethod
    def of(cls, text: str) -> _Tiny:
        zero = not any(ch in "123456789" for ch in re.split("[eE]", text)[0])
        return cls(text, float(text) == 0 and not zero)


#: The largest integer the NDJSON reader holds (128 bits).
_MAX_INT = 2**127 - 1


def _integer(text: str) -> int | _Unreadable:
    """A JSON integer, or why the reader cannot hold it (never Python's limit on the digits
    it converts: a longer one is too large for 128 bits anyway)."""
    digits = text.lstrip("-")
    if len(digits) > 39 or int(text) > _MAX_INT or int(text) < -_MAX_INT - 1:
        return _Unreadable(text, "is too large")
    return int(text)


def _float(text: str) -> float | _Unreadable:
    """A JSON number with a fraction or an exponent, or why the reader cannot hold it: beyond
    a double's range (``1e1000000``), or so small a double holds it as 0 (``1e-400``)."""
    value = float(text)
    if math.isinf(value):
        return _Unreadable(text, "is too large")
    if _Tiny.of(text).vanishes:
        return _Unreadable(text, f"has more than {DECIMAL_SCALE} decimal places")
    return value


def _constant(text: str) -> _Unreadable:
    """``NaN``, ``Infinity``, ``-Infinity``: no JSON numbers, which Python's reader allows."""
    return _Unreadable(text, "is not a number")


def _unreadable_number(value: Any) -> _Unreadable | None:
    """The first number in ``value`` (nested lists and objects too) the reader cannot hold."""
    if isinstance(value, _Unreadable):
        return value
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for v in inner:
        found = _unreadable_number(v)
        if found is not None:
            return found
    return None


def _number_at(name: str, row: int, column: str, bad: _Unreadable) -> ContractlangError:
    """T002 on the row of a number no reader holds, naming its column."""
    help_ = {
        "is not a number": "JSON has no NaN or infinity: leave the value out, or write null",
        "is too large": "a trace keeps whole numbers in 64 bits, and money and decimals to at "
        "most 20 digits before the point",
    }.get(bad.reason, _PLACES_HELP)
    message = f"`{column}` value `{shortened(bad.text)}` {bad.reason}"
    span = Span.point(row, 0)
    return ContractlangError([error("T002", message, span, file=name, help=help_)])


def _at(name: str, row: int, message: str, help: str | None = None) -> ContractlangError:
    span = Span.point(row, 0) if row > 0 else Span(0, 0, 0, 0)
    return ContractlangError([error("T017", message, span, file=name, help=help)])
