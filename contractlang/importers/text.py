"""Reading a file to import as UTF-8 text, with every reason it cannot be read (``I001``) in our
words, and the whole-file errors every adapter raises the same way.

>>> from pathlib import Path
>>> try:
...     read_text(Path("missing.txt"))
... except ContractlangError as exc:
...     print(exc.diagnostics[0].headline())
missing.txt: error[I001]: cannot read `missing.txt`: no such file
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from contractlang.diagnostics import NO_SPAN, Diagnostic, Span, did_you_mean, error
from contractlang.errors import ContractlangError
from contractlang.lang.numbers import counted

#: At most this many row errors (a DST problem, say) are shown; the rest are counted.
MAX_ERRORS = 50


def _cannot(name: str, reason: str, help: str | None = None) -> ContractlangError:
    return ContractlangError(
        [error("I001", f"cannot read `{name}`: {reason}", NO_SPAN, file=name, help=help)]
    )


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, or I001 when it is missing, not a file, UTF-16 or binary."""
    name = str(path)
    if not path.exists():
        raise _cannot(name, "no such file")
    if not path.is_file():
        raise _cannot(name, "not a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _cannot(name, (exc.strerror or "read error").lower()) from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise _cannot(name, "it is UTF-16 text, not UTF-8", help="save it as UTF-8")
    if b"\x00" in data[:8192]:
        raise _cannot(name, "binary content, not text")
    return data


def read_text(path: Path) -> str:
    """The file's text (UTF-8, a byte-order mark allowed), or I001 saying why not."""
    data = _read_bytes(path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _cannot(
            str(path),
            f"invalid utf-8 at line {line:,}, byte offset {exc.start:,}",
            help="save the file as UTF-8",
        ) from None


def read_text_keeping_bytes(path: Path) -> str:
    """The file's text as :func:`read_text` reads it, except that bytes that are not UTF-8
    are kept as lone surrogates (``errors="surrogateescape"``), for the adapter to judge field
    by field (:func:`has_bad_bytes`); UTF-16 and binary content are still I001.

    >>> has_bad_bytes(b"caf\\xe9".decode("utf-8", "surrogateescape"))
    True
    """
    return _read_bytes(path).decode("utf-8-sig", errors="surrogateescape")


#: A byte that was not UTF-8, as ``surrogateescape`` keeps it.
_BAD_BYTE = re.compile("[\udc80-\udcff]")


def has_bad_bytes(text: str) -> bool:
    """Whether ``text`` holds bytes that were not UTF-8 (read by
    :func:`read_text_keeping_bytes`)."""
    return _BAD_BYTE.search(text) is not None


def replace_bad_bytes(text: str) -> str:
    """``text`` with each byte that was not UTF-8 replaced by U+FFFD, the replacement
    character (text that can be written and shown).

    >>> replace_bad_bytes(b"caf\\xe9".decode("utf-8", "surrogateescape"))
    'caf\ufffd'
    """
    return _BAD_BYTE.sub("\ufffd", text)


def header_index(header: Sequence[str], fields: Sequence[str]) -> dict[str, int]:
    """Each of ``fields`` the header names (in any case, blanks around it ignored) → its
    column; the first wins when one is named twice.

    >>> header_index(["jobid", " State ", "JobID"], ["JobID", "State", "End"])
    {'JobID': 0, 'State': 1}
    """
    known = {f.lower(): f for f in fields}
    index: dict[str, int] = {}
    for i, h in enumerate(header):
        field = known.get(h.strip().lower())
        if field is not None and field not in index:
            index[field] = i
    return index


def refuse_repeated(name: str, header: Sequence[str], index: dict[str, int], kind: str) -> None:
    """I003 when the header names a ``kind`` (``field``, ``column``) that ``index`` reads more
    than once (in any case, blanks around it ignored): which of the two to read is not ours to
    guess, and reading the first dropped the other silently.

    >>> try:
    ...     refuse_repeated("x.csv", ["Cost", "Tags", " cost"], {"Cost": 0, "Tags": 1}, "column")
    ... except ContractlangError as exc:
    ...     print(exc.diagnostics[0].message)
    `x.csv` names the column `Cost` more than once in its header (columns 1 and 3)
    """
    for field, first in index.items():
        again = [
            i for i, h in enumerate(header) if i != first and h.strip().lower() == field.lower()
        ]
        if again:
            raise format_error(
                name,
                f"`{name}` names the {kind} `{field}` more than once in its header "
                f"({kind}s {first + 1} and {again[0] + 1})",
                help=f"export each {kind} once",
            )


def missing_column(
    name: str, header: Sequence[str], field: str, message: str, help: str | None = None
) -> Diagnostic:
    """I002 for a missing ``field``, with the closest name in the header as help (else
    ``help``)."""
    guess = did_you_mean(field, [h.strip() for h in header])
    hint = f"did you mean `{guess}`?" if guess else help
    return error("I002", message, NO_SPAN, file=name, help=hint)


def format_error(name: str, message: str, help: str | None = None) -> ContractlangError:
    """The file is not what the adapter reads (I003)."""
    return ContractlangError([error("I003", message, NO_SPAN, file=name, help=help)])


def cut_short(name: str, line: int, fields: int, width: int) -> ContractlangError:
    """I003: the file's last line, ``line``, has no line break and its record has fewer
    ``fields`` than the header's ``width``: the file was cut inside it.

    >>> print(cut_short("jobs.txt", 24, 11, 13).diagnostics[0].message)
    `jobs.txt` ends mid-line, on line 24 (cut short?): its last record has 11 fields, the header 13
    """
    return format_error(
        name,
        f"`{name}` ends mid-line, on line {line:,} (cut short?): its last record has "
        f"{counted(fields, 'field')}, the header {width:,}",
        help="a complete export ends its last line with a line break: export it again",
    )


def parse_json(
    name: str,
    text: str,
    help: str | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``text`` read as JSON, or I003 when it is not JSON that can be read: where it breaks,
    a number of more digits than Python converts (4,300), lists or objects nested too deeply.

    >>> parse_json("x.json", '{"jobs": []}')
    {'jobs': []}
    >>> try:
    ...     parse_json("x.json", "[" * 100_000)
    ... except ContractlangError as exc:
    ...     print(exc.diagnostics[0].message)
    `x.json` is not JSON that can be read: lists or objects nested too deeply
    """
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError as exc:
        message = f"`{name}` is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        raise format_error(name, message, help) from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        message = (
            f"`{name}` is not JSON that can be read: a number in it has more digits than can be "
            "read"
        )
        raise format_error(name, message, help) from None
    except RecursionError:
        message = f"`{name}` is not JSON that can be read: lists or objects nested too deeply"
        raise format_error(name, message, help) from None


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words.

    >>> json_kind([1]), json_kind(None), json_kind(True), json_kind(2.5)
    ('an array', 'null', 'a boolean', 'a number')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, Decimal)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def row_error(code: str, name: str, row: int, message: str, help: str | None = None) -> Diagnostic:
    """An error on one data row of the imported file (rows from 1; a header is not a row)."""
    return error(code, message, Span.point(row, 0), file=name, help=help)


def raise_row_errors(name: str, errors: Sequence[Diagnostic]) -> None:
    """Stop the import with every row error found (the first :data:`MAX_ERRORS` shown)."""
    if not errors:
        return
    shown = list(errors[:MAX_ERRORS])
    if len(errors) > MAX_ERRORS:
        shown.append(
            error(
                "T019",
                f"found {len(errors):,} problems; the first {MAX_ERRORS} are shown",
                NO_SPAN,
                file=name,
            )
        )
    raise ContractlangError(shown)
