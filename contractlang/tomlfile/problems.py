"""Problems in a TOML file as diagnostics that name the key and its line: TOML syntax errors,
pydantic's validation errors in plain words, and the rules that look at more than one key.
Each kind of file has its own codes (:class:`Codes`): the workload of ``simulate`` uses
``E601``–``E607``, a fixture's manifest ``F001``–``F006``. Values are shown as the file writes
them (``1e-7``, not Python's ``1E-7``), and every ``help:`` fits an 80-column terminal.

>>> show_value("64"), show_value(True), show_value({"a": 1})
('`"64"`', '`true`', 'a table')
"""

from __future__ import annotations

import json
import re
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from contractlang.diagnostics import (
    NO_SPAN,
    Diagnostic,
    Severity,
    Source,
    Span,
    did_you_mean,
    error,
    warning,
)
from contractlang.errors import ContractlangError
from contractlang.tomlfile.positions import KeySpans

KeyPath = tuple[str, ...]


@dataclass(frozen=True)
class Codes:
    """The codes of one kind of TOML file: for a file that cannot be read, is not TOML, has an
    unknown key, misses a key, has a value of the wrong type or an invalid value; ``choices``
    gives a key whose value is one of a list its own code (``distribution`` in a workload)."""

    unreadable: str
    syntax: str
    unknown: str
    missing: str
    type: str
    value: str
    choices: Mapping[str, str] = field(default_factory=dict)
    #: The help for an unknown key with no close name anywhere (else the table's keys).
    keys_doc: str | None = None


@dataclass(frozen=True)
class Broken:
    """A broken rule: its message, and the key to point at when it is not the rule's own."""

    message: str
    at: KeyPath | None = None
    help: str | None = None


class Written:
    """Values as the file writes them, in backticks (``1e-7`` stays ``1e-7``); a value without
    a place in the file (a default) as :func:`show_value` shows it."""

    def __init__(self, spans: KeySpans, source: Source) -> None:
        self.spans, self.text = spans, source.text

    def __call__(self, path: KeyPath, value: Any) -> str:
        span = self.spans.values.get(path)
        if span is None or isinstance(value, (dict, list)) or span.end_line != span.line:
            return show_value(value)
        return f"`{self.text[span.start_pos : span.end_pos]}`"


#: A rule over a validated document: a message (or :class:`Broken`) when it is broken, else
#: None; it shows values with the :class:`Written` it is given.
Rule = Callable[[Any, Written], "str | Broken | None"]

_TYPE_WORDS: dict[str, str] = {
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "int_parsing": "a whole number",
    "bool_type": "`true` or `false`",
    "string_type": "text in quotes",
    "is_instance_of": "a number",
    "number_type": "a number",
    "decimal_type": "a number",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "dict_type": "a table",
    "list_type": "a list in brackets",
    "datetime_type": "a date and time with an offset, such as 2025-01-01T00:00:00Z",
}
_RANGE_WORDS: dict[str, tuple[str, str]] = {
    "greater_than": ("gt", "more than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}


def show_value(v: Any) -> str:
    """A value as it is written in TOML, in backticks (tables and lists by their kind)."""
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, bool):
        return "`true`" if v else "`false`"
    if isinstance(v, str):
        return f"`{json.dumps(v, ensure_ascii=False)}`"
    if isinstance(v, (datetime, date, time)):
        return f"`{v.isoformat()}`"
    return f"`{v}`"


def key_name(path: Sequence[str]) -> str:
    return ".".join(path)


def where(path: KeyPath, spans: KeySpans, *, value: bool = True) -> Span:
    """Where to point for ``path``: its value (or key), else the nearest table written above
    it, else the file's first line."""
    found = spans.values.get(path) if value else None
    found = found or spans.of(path)
    return found or Span(1, 1, 1, 2, 0, 1)


def problem(
    code: str,
    message: str,
    path: KeyPath,
    spans: KeySpans,
    source: Source,
    *,
    help: str | None = None,
    value: bool = True,
    severity: Severity = Severity.ERROR,
) -> Diagnostic:
    make = warning if severity is Severity.WARNING else error
    return make(code, message, where(path, spans, value=value), file=source.name, help=help)


def toml_syntax_error(exc: tomllib.TOMLDecodeError, source: Source, codes: Codes) -> Diagnostic:
    """``codes.syntax`` at the line and column tomllib names (its message ends ``(at line L, column
    C)`` or ``(at end of document)``)."""
    text = str(exc)
    m = re.search(r"\(at line (\d+), column (\d+)\)\s*$", text)
    if m:
        span = Span.point(int(m.group(1)), int(m.group(2)))
    else:
        # lines end at `\n` only, as tomllib counts them (`splitlines` also breaks at U+2028)
        lines = source.text.removesuffix("\n").split("\n")
        span = Span.point(len(lines), len(lines[-1].removesuffix("\r")) + 1)
    message = re.sub(r"\s*\(at [^)]*\)\s*$", "", text)
    # tomllib names a table by a Python tuple, ('a', 'b'): write it as TOML does, `a.b`
    message = re.sub(
        r"\(((?:'[^']*'(?:, )?)+),?\)",
        lambda m: "`" + ".".join(re.findall(r"'([^']*)'", m.group(1))) + "`",
        message,
    )
    message = message[:1].lower() + message[1:]
    return error(codes.syntax, f"not valid TOML: {message}", span, file=source.name)


def toml_beyond_limits(exc: Exception, source: Source, codes: Codes) -> Diagnostic:
    """``codes.syntax`` for TOML that parses but that Python cannot hold: arrays or tables
    nested deeper than its recursion allows, or a whole number of more than 4,300 digits — at
    the first place it happens.

    >>> codes = Codes("E607", "E601", "E602", "E603", "E604", "E605")
    >>> d = toml_beyond_limits(ValueError(), Source("w.toml", "runs = " + "1" * 5000), codes)
    >>> d.message, (d.span.line, d.span.col)
    ('not valid TOML: a number of more than 4,300 digits', (1, 8))
    """
    text = source.text
    if isinstance(exc, RecursionError):
        depth, at = 0, 0
        for i, ch in enumerate(text):
            depth += 1 if ch in "[{" else -1 if ch in "]}" else 0
            if depth > 100:
                at = i
                break
        message = "not valid TOML: arrays or tables nested too deeply"
    else:
        m = re.search(r"\d{4301,}", text)
        at = m.start() if m else 0
        message = "not valid TOML: a number of more than 4,300 digits"
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return error(codes.syntax, message, Span.point(line, col, at), file=source.name)


def unreadable(path: Path, exc: Exception, codes: Codes) -> ContractlangError:
    """``codes.unreadable``: the file cannot be read."""
    if isinstance(exc, UnicodeDecodeError):
        reason = f"it is not UTF-8 text ({exc.reason})"
    elif isinstance(exc, OSError):
        reason = (exc.strerror or "unreadable").lower()
    else:
        reason = str(exc)
    diag = error(codes.unreadable, f"cannot read `{path}`: {reason}", NO_SPAN, file=str(path))
    return ContractlangError([diag])


def too_large(path: Path, limit: int, codes: Codes) -> ContractlangError:
    """``codes.unreadable``: the file holds more than ``limit`` bytes (it was not read whole).

    >>> codes = Codes("E607", "E601", "E602", "E603", "E604", "E605")
    >>> print(too_large(Path("/dev/zero"), 1 << 20, codes).diagnostics[0].message)
    cannot read `/dev/zero`: it is larger than 1 MiB (1,048,576 bytes), the most read of a TOML file
    """
    message = (
        f"cannot read `{path}`: it is larger than {limit / (1 << 20):g} MiB ({limit:,} bytes), "
        "the most read of a TOML file"
    )
    help = "give the TOML file itself: one this large (or a device) is not one"
    diag = error(codes.unreadable, message, NO_SPAN, file=str(path), help=help)
    return ContractlangError([diag])


def diagnostics_of(
    exc: ValidationError,
    data: dict[str, Any],
    spans: KeySpans,
    source: Source,
    models: dict[KeyPath, type[BaseModel]],
    codes: Codes,
) -> list[Diagnostic]:
    """Every pydantic error as a diagnostic at its key (``models``: the model of each table,
    whose fields name the keys it may hold)."""
    out = []
    written = Written(spans, source)
    for e in exc.errors():
        path = tuple(str(x) for x in e["loc"])
        shown = written(path, e.get("input"))
        out.append(_one(e["type"], path, shown, e.get("input"), e.get("ctx") or {}, spans,
                        source, models, codes))  # fmt: skip
    return out


def _one(
    kind: str,
    path: KeyPath,
    shown: str,
    given: Any,
    ctx: dict[str, Any],
    spans: KeySpans,
    source: Source,
    models: dict[KeyPath, type[BaseModel]],
    codes: Codes,
) -> Diagnostic:
    name = key_name(path)
    table, key = path[:-1], path[-1]
    where_table = f" in `[{key_name(table)}]`" if table else ""
    if kind == "missing":
        return problem(
            codes.missing,
            f"missing key `{key}`{where_table}",
            path,
            spans,
            source,
            help=_describe(models.get(table), key),
        )
    if kind == "extra_forbidden":
        return problem(
            codes.unknown,
            f"unknown key `{key}`{where_table}",
            path,
            spans,
            source,
            help=_unknown_key_help(table, key, models, codes),
            value=False,
        )
    if kind in _TYPE_WORDS:
        message = f"`{name}` must be {_TYPE_WORDS[kind]}, not {shown}"
        return problem(codes.type, message, path, spans, source)
    if kind in _RANGE_WORDS:
        bound, words = _RANGE_WORDS[kind]
        message = f"`{name}` must be {words} {show_bound(ctx.get(bound))}, not {shown}"
        return problem(codes.value, message, path, spans, source)
    if kind == "literal_error":
        options = _options(models.get(table), key)
        listed = ", ".join(f"`{o}`" for o in options[:-1]) + f" or `{options[-1]}`"
        hint = did_you_mean(str(given), options) if isinstance(given, str) else None
        code = codes.choices.get(key, codes.value)
        return problem(
            code,
            f"`{name}` must be {listed}, not {shown}",
            path,
            spans,
            source,
            help=f"did you mean `{hint}`?" if hint else None,
        )
    if kind in ("string_too_short", "too_short"):
        return problem(codes.value, f"`{name}` must not be empty", path, spans, source)
    return problem(
        codes.value, f"`{name}` is not valid: {kind.replace('_', ' ')}", path, spans, source
    )


def _describe(model: type[BaseModel] | None, key: str) -> str | None:
    field = model.model_fields.get(key) if model else None
    return f"`{key}`: {field.description}" if field and field.description else None


def _known(model: type[BaseModel] | None) -> str | None:
    if model is None:
        return None
    return "the keys here are " + ", ".join(f"`{k}`" for k in model.model_fields)


def _unknown_key_help(
    table: KeyPath, key: str, models: dict[KeyPath, type[BaseModel]], codes: Codes
) -> str | None:
    """A close name in the same table, else the same key where it belongs, else the doc (or
    the table's keys)."""
    model = models.get(table)
    hint = did_you_mean(key, model.model_fields) if model else None
    if hint:
        return f"did you mean `{hint}`?"
    for home, other in models.items():
        if home != table and key in other.model_fields:
            if not home:
                return f"`{key}` is a top-level key: write it before the first `[table]`"
            return f"did you mean `{key_name((*home, key))}`? it belongs in `[{key_name(home)}]`"
    return codes.keys_doc or _known(model)


def show_bound(bound: Any) -> str:
    """A range's bound in plain digits: ``1,000,000``, ``0.000000000001``.

    >>> show_bound(10**6), show_bound(Decimal("1E-12")), show_bound("Decimal('1')")
    ('1,000,000', '0.000000000001', '1')
    """
    if isinstance(bound, str):  # pydantic writes a bound of an annotated field as its repr
        m = re.fullmatch(r"Decimal\('([^']*)'\)", bound)
        bound = Decimal(m.group(1)) if m else bound
    if isinstance(bound, bool) or not isinstance(bound, (int, Decimal)):
        return str(bound)
    if isinstance(bound, int) or bound == bound.to_integral_value():
        return f"{int(bound):,}"
    return format(bound, "f")


def _options(model: type[BaseModel] | None, key: str) -> list[str]:
    field = model.model_fields.get(key) if model else None
    if field is None:
        return ["?"]
    args = [a for a in typing.get_args(field.annotation) if a is not type(None)]
    literal = next((a for a in args if typing.get_origin(a) is typing.Literal), field.annotation)
    return [str(x) for x in typing.get_args(literal)] or ["?"]


def check_rules(
    workload: Any,
    spans: KeySpans,
    source: Source,
    rules: Sequence[tuple[str, KeyPath, Rule]],
    severity: Severity = Severity.ERROR,
) -> list[Diagnostic]:
    """The rules over several keys; each broken one is a diagnostic at its key (or at the key
    the rule names)."""
    out = []
    written = Written(spans, source)
    for code, path, rule in rules:
        found = rule(workload, written)
        if found is None:
            continue
        broken = found if isinstance(found, Broken) else Broken(found)
        at = broken.at or path
        out.append(problem(code, broken.message, at, spans, source, help=broken.help,
                           value=False, severity=severity))  # fmt: skip
    return out
