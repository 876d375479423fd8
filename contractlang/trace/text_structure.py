"""Where a CSV or NDJSON trace breaks its format, in our words: the first row that has more
fields than the header, a quote never closed, a line that is not a JSON object — each named by
its row and line (T017). Used only when the fast reader has failed, so a well-formed file
costs nothing here. Also: how many blank lines end a CSV file (harmless layout, not rows).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from contractlang.diagnostics import Span, error
from contractlang.errors import ContractlangError

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
                value = json.loads(line.rstrip("\r\n"))
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
    return None


def _at(name: str, row: int, message: str, help: str | None = None) -> ContractlangError:
    span = Span.point(row, 0) if row > 0 else Span(0, 0, 0, 0)
    return ContractlangError([error("T017", message, span, file=name, help=help)])
