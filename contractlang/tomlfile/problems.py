"""Problems in a TOML file as diagnostics that name the key and its line: TOML syntax errors,
pydantic's validation errors in plain words, and the rules that look at more than one key.
Each kind of file has its own codes (:class:`Codes`): the workload of ``simulate`` uses
``E601``–``E607``, a fixture's manifest ``F001``–``F006``.

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
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from contractlang.diagnostics import NO_SPAN, Diagnostic, Source, Span, did_you_mean, error
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


#: A rule over a validated workload: a message when it is broken, else None.
Rule = Callable[[Any], str | None]

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
) -> Diagnostic:
    return error(code, message, where(path, spans, value=value), file=source.name, help=help)


def toml_syntax_error(exc: tomllib.TOMLDecodeError, source: Source, codes: Codes) -> Diagnostic:
    """``codes.syntax`` at the line and column tomllib names (its message ends ``(at line L, column
    C)`` or ``(at end of document)``)."""
    text = str(exc)
    m = re.search(r"\(at line (\d+), column (\d+)\)\s*$", text)
    if m:
        span = Span.point(int(m.group(1)), int(m.group(2)))
    else:
        lines = source.text.splitlines() or [""]
        span = Span.point(len(lines), len(lines[-1]) + 1)
    message = re.sub(r"\s*\(at [^)]*\)\s*$", "", text)
    # tomllib names a table by a Python tuple, ('a', 'b'): write it as TOML does, `a.b`
    message = re.sub(
        r"\(((?:'[^']*'(?:, )?)+),?\)",
        lambda m: "`" + ".".join(re.findall(r"'([^']*)'", m.group(1))) + "`",
        message,
    )
    message = message[:1].lower() + message[1:]
    return error(codes.syntax, f"not valid TOML: {message}", span, file=source.name)


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
    for e in exc.errors():
        path = tuple(str(x) for x in e["loc"])
        out.append(
            _one(e["type"], path, e.get("input"), e.get("ctx") or {}, spans, source, models, codes)
        )
    return out


def _one(
    kind: str,
    path: KeyPath,
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
        model = models.get(table)
        hint = did_you_mean(key, model.model_fields) if model else None
        return problem(
            codes.unknown,
            f"unknown key `{key}`{where_table}",
            path,
            spans,
            source,
            help=f"did you mean `{hint}`?" if hint else _known(model),
            value=False,
        )
    if kind in _TYPE_WORDS:
        message = f"`{name}` must be {_TYPE_WORDS[kind]}, not {show_value(given)}"
        return problem(codes.type, message, path, spans, source)
    if kind in _RANGE_WORDS:
        bound, words = _RANGE_WORDS[kind]
        message = f"`{name}` must be {words} {ctx.get(bound)}, not {show_value(given)}"
        return problem(codes.value, message, path, spans, source)
    if kind == "literal_error":
        options = _options(models.get(table), key)
        listed = ", ".join(f"`{o}`" for o in options[:-1]) + f" or `{options[-1]}`"
        hint = did_you_mean(str(given), options) if isinstance(given, str) else None
        code = codes.choices.get(key, codes.value)
        return problem(
            code,
            f"`{name}` must be {listed}, not {show_value(given)}",
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
) -> list[Diagnostic]:
    """The rules over several keys; each broken one is a diagnostic at its key."""
    out = []
    for code, path, rule in rules:
        message = rule(workload)
        if message is not None:
            out.append(problem(code, message, path, spans, source, value=False))
    return out
