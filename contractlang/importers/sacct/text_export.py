"""The text of a ``sacct`` export as rows of fields: ``--parsable2``, or ``--parsable`` (the
delimiter at the end of every line too), split at ``|`` or any ``--delimiter``; with a header,
or ``--noheader`` read with the field names given (``--fields``).

Rows are the data lines (with a header, row N is line N + 1, or further down by the blank
lines before the header; without one, line N); blank lines are rows with nothing on them.
Lines end at ``\\n`` (or ``\\r\\n``) only: ``str.splitlines`` also breaks at ``\\x0c``,
``\\x85`` and U+2028, which a job name may hold.
A last line without a line break is read when it has every field (``I044``: it may have been
cut), and is ``I003`` when it has fewer. Bytes that are not UTF-8 stay as the text reader kept
them, for the mapping to judge field by field; the record of a row (``--rejects``) shows them
as U+FFFD.

>>> t = split_export("x.txt", "7|COMPLETED^|^8|PENDING^|^\\n", fields=["JobID", "State"],
...                  delimiter="^|^")
>>> t.header, t.has_header, t.lines
(['JobID', 'State'], False, ['7|COMPLETED^|^8|PENDING^|^'])
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from contractlang.codes import LAST_LINE_OPEN
from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError
from contractlang.importers.result import Collector, Reject, last_line_detail
from contractlang.importers.sacct import fields as sf
from contractlang.importers.text import cut_short, format_error, replace_bad_bytes


@dataclass(frozen=True)
class TextTable:
    """An export split into lines: the field names (the header's, or ``--fields``), whether
    line 1 is a header, the data lines as written, the delimiter, whether every line ends with
    it (``--parsable``), and whether the last line has no line break."""

    header: list[str]
    has_header: bool
    lines: list[str]
    header_line: str | None  # the header as written, when the file has one
    before: int  # lines before the first row: the header, and blank lines before it
    delimiter: str
    trailing: bool
    open_end: bool

    def values(self, line: str) -> list[str]:
        """A line's values (the ``--parsable`` trailing delimiter taken off)."""
        values = line.split(self.delimiter)
        if self.trailing and len(values) == len(self.header) + 1 and values[-1] == "":
            values.pop()
        return values

    def line_of(self, row: int) -> int:
        """The line of the file that row ``row`` is."""
        return row + self.before


def usage(message: str, help: str) -> ContractlangError:
    """A bad option (E502), as the command line reports it."""
    return ContractlangError([error("E502", message, NO_SPAN, file="contractlang", help=help)])


def check_delimiter(delimiter: str) -> None:
    """E502 for a delimiter that cannot split a line: empty, or holding a line break."""
    if not delimiter:
        raise usage("`--delimiter` is empty", help="leave it out to split at `|`")
    if "\n" in delimiter or "\r" in delimiter:
        raise usage(
            f"`--delimiter {delimiter!r}` holds a line break",
            help="records are lines: the delimiter separates the fields of one line",
        )


def check_fields(fields: Sequence[str]) -> list[str]:
    """``--fields`` as names (blanks around each taken off); E502 when one is empty or one
    is named twice (in any case: which of the two columns to read is not ours to guess).

    >>> check_fields([" JobID", "State "])
    ['JobID', 'State']
    """
    names = [f.strip() for f in fields]
    if not names or any(not n for n in names):
        raise usage(
            f"`--fields {','.join(fields)}` has an empty field name",
            help="name the fields in the order `sacct --format` listed them, e.g. "
            "`--fields JobID,State,Start,End,AllocTRES`",
        )
    seen: dict[str, int] = {}
    for i, n in enumerate(names, start=1):
        if n.lower() in seen:
            raise usage(
                f"`--fields` names `{n}` twice (fields {seen[n.lower()]} and {i})",
                help="name each field once, in the order `sacct --format` listed them",
            )
        seen[n.lower()] = i
    return names


def split_export(
    name: str, text: str, *, fields: Sequence[str] | None = None, delimiter: str = "|"
) -> TextTable:
    """The export's lines and field names; I003 when the file is empty, is not delimited
    text, has no header and no ``--fields``, has a header other than ``--fields``, or ends
    inside its last record."""
    check_delimiter(delimiter)
    names = check_fields(fields) if fields is not None else None
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    open_end = lines[-1] != ""
    if not open_end:
        lines.pop()
    top = next((i for i, line in enumerate(lines) if line.strip()), None)
    if top is None:
        what = "no header" if names is None else "no line"
        raise format_error(name, f"`{name}` is empty: it has {what}", help=_help_export(None))
    first = [replace_bad_bytes(v) for v in lines[top].split(delimiter)]
    trailing = len(first) > 1 and first[-1] == ""
    header_like = _header_like(first[:-1] if trailing else first)
    if names is None:
        header = first[:-1] if trailing else first
        other = _delimiter_between_fields(replace_bad_bytes(lines[top]))
        if len(header) < 2 and other is not None:
            raise _no_header(name, header, replace_bad_bytes(lines[top]), delimiter)
        if len(header) < 2:
            raise format_error(
                name,
                f"`{name}` is not `sacct --parsable2` output: its header has no `{delimiter}`",
                _help_export(None)
                if delimiter == "|"
                else "is `--delimiter` the one it was exported with?",
            )
        if not header_like:
            raise _no_header(name, header, replace_bad_bytes(lines[top]), delimiter)
        table = TextTable(
            header, True, lines[top + 1 :], lines[top], top + 1, delimiter, trailing, open_end
        )
    elif header_like:
        header = first[:-1] if trailing else first
        _same_fields(name, header, names)
        table = TextTable(
            names, True, lines[top + 1 :], lines[top], top + 1, delimiter, trailing, open_end
        )
    else:
        trailing = len(first) == len(names) + 1 and first[-1] == ""
        # every line is a row: blank lines before the first record are blank rows
        table = TextTable(names, False, lines, None, 0, delimiter, trailing, open_end)
    _refuse_cut(name, table)
    return table


def _header_like(values: list[str]) -> bool:
    """A first line reads as a header when its first value is not a job ID and at least one
    of its values is a field ``sacct`` prints."""
    return sf.parse_job_id(values[0]) is None and any(
        v.strip().lower() in sf.ALL_FIELDS for v in values
    )


def _help_export(width: int | None) -> str:
    standard = ",".join(sf.STANDARD_FIELDS)
    if width is None:
        return f"export with `sacct --parsable2 --duplicates --format={standard}`"
    if width == len(sf.STANDARD_FIELDS):
        example = f"`--fields {standard}`"
    else:
        example = f"`--fields JobID,State,Start,End,AllocTRES,…` ({width} names)"
    return f"name its fields in the order they were exported (`sacct --format=…`), e.g. {example}"


def _no_header(name: str, first: list[str], line: str, delimiter: str) -> ContractlangError:
    other = _delimiter_between_fields(line)
    if other is not None and other != delimiter:
        return format_error(
            name,
            f"`{name}` is not split at `{delimiter}`: its first line is field names separated "
            f"by `{other}`",
            help=f"pass `--delimiter '{other}'`, the delimiter it was exported with",
        )
    job = sf.parse_job_id(first[0])
    why = (
        f"its first line is a record (`{first[0].strip()}` is a job ID)"
        if job is not None
        else "none of its first line's values is a `sacct` field name"
    )
    message = f"`{name}` has no header: {why}; read a `--noheader` export with `--fields`"
    return format_error(name, message, _help_export(len(first)))


def _delimiter_between_fields(line: str) -> str | None:
    """What stands between the first two field names of a header split at another delimiter
    (``JobID^|^State`` → ``^|^``), when the line starts with one.

    >>> _delimiter_between_fields("JobID^|^State^|^End"), _delimiter_between_fields("7|x")
    ('^|^', None)
    """
    words = list(re.finditer("[A-Za-z]+", line))
    if len(words) < 2 or words[0].start() != 0:
        return None
    a, b = words[0], words[1]
    if a.group().lower() not in sf.ALL_FIELDS or b.group().lower() not in sf.ALL_FIELDS:
        return None
    between = line[a.end() : b.start()]
    return between if between and "\n" not in between else None


def _same_fields(name: str, header: list[str], names: list[str]) -> None:
    """I003 when a file with a header is read with ``--fields`` that name other fields: which
    of the two is right is not ours to guess."""
    help = "leave `--fields` out to read the header, or export with `--noheader`"
    if len(header) != len(names):
        message = (
            f"`{name}` has a header of {len(header)} fields, and `--fields` names {len(names)}"
        )
        raise format_error(name, message, help)
    for i, (h, f) in enumerate(zip(header, names, strict=True), start=1):
        if h.strip().lower() != f.lower():
            message = (
                f"`{name}` has a header that `--fields` contradicts: field {i} is "
                f"`{h.strip()}` there, `{f}` in `--fields`"
            )
            raise format_error(name, message, help)


def _refuse_cut(name: str, table: TextTable) -> None:
    """I003 when the last line has no line break and fewer fields than the header: the file
    was cut inside its last record."""
    if not table.open_end or not table.lines or not table.lines[-1].strip():
        return
    have = len(table.values(table.lines[-1]))
    if have < len(table.header):
        raise cut_short(name, table.line_of(len(table.lines)), have, len(table.header))


def records(
    table: TextTable, index: dict[str, int], c: Collector
) -> Iterator[tuple[int, dict[str, str], str]]:
    """Each data row that has as many fields as the header, as ``(row, fields, record)``:
    its values of the fields ``index`` reads (by name), and the line as written. Every row is
    counted in ``c``; a blank one is counted as blank, one with more or fewer fields is
    rejected (I010), the header again (exports put together with ``cat``) too (I012)."""
    width = len(table.header)
    for row, line in enumerate(table.lines, start=1):
        c.rows_read += 1
        if not line.strip():
            c.blank(row)
            continue
        values = table.values(line)
        record = replace_bad_bytes(line)
        if line == table.header_line:
            reason = f"repeats the header (line {table.before}): two exports put together?"
            c.reject(Reject(row, "I012", reason, record))
            continue
        if len(values) != width:
            reason = f"has {len(values)} fields, the header {width}"
            if len(values) > width:
                reason += f" (a `{table.delimiter}` inside a value?)"
            c.reject(Reject(row, "I010", reason, record))
            continue
        if table.open_end and row == len(table.lines):
            c.note(
                "I044",
                LAST_LINE_OPEN,
                row,
                last_line_detail(table.line_of(row), replace_bad_bytes(values[-1])),
            )
        yield row, {f: values[i].strip() for f, i in index.items()}, record
