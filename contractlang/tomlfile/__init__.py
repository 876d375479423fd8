"""TOML files validated by pydantic models, with every problem at its key and line: the
workload of ``simulate`` and the manifest of a regression fixture.

:func:`read_text` reads a file as UTF-8 (at most :data:`MAX_BYTES`); :func:`validate` parses
the text (exact decimals: ``2.10`` stays 2.10), finds where each key is written
(:mod:`.positions`, since ``tomllib`` gives no positions) and validates it against a model,
reporting every problem at once (:mod:`.problems`), each under the codes of its kind of file
(:class:`Codes`).

>>> from pydantic import BaseModel, ConfigDict
>>> class M(BaseModel):
...     model_config = ConfigDict(extra="forbid", strict=True)
...     n: int
>>> codes = Codes("E607", "E601", "E602", "E603", "E604", "E605")  # a workload's
>>> validate('n = 3\\n', "m.toml", M, {(): M}, codes).value.n
3
>>> try:
...     validate('n = 3\\nm = 4\\n', "m.toml", M, {(): M}, codes)
... except ContractlangError as e:
...     d = e.diagnostics[0]
>>> d.code, d.span.line, d.message, d.help
('E602', 2, 'unknown key `m`', 'did you mean `n`?')
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from contractlang.diagnostics import Source
from contractlang.errors import ContractlangError
from contractlang.tomlfile.positions import KeySpans, key_spans
from contractlang.tomlfile.problems import (
    Codes,
    KeyPath,
    diagnostics_of,
    toml_beyond_limits,
    toml_syntax_error,
    too_large,
    unreadable,
)

__all__ = ["MAX_BYTES", "Codes", "KeySpans", "Validated", "read_text", "validate"]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Validated(Generic[M]):
    """A validated document: the model, its source, and where each key is written."""

    value: M
    source: Source
    spans: KeySpans


#: The most a TOML file here may hold (a workload, a fixture's manifest: a few keys each). No
#: more is read, so a device that never ends (``--workload /dev/zero``) or a wrong, huge file
#: is ``codes.unreadable`` at once, not memory that grows until the machine runs out.
MAX_BYTES = 1 << 20


def read_text(path: Path, codes: Codes) -> str:
    """The text of ``path``; a file that cannot be read, is larger than :data:`MAX_BYTES` or is
    not UTF-8 is ``codes.unreadable``."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise unreadable(path, exc, codes) from None
    if len(data) > MAX_BYTES:
        raise too_large(path, MAX_BYTES, codes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise unreadable(path, exc, codes) from None


def validate(
    text: str,
    name: str,
    model: type[M],
    models: dict[KeyPath, type[BaseModel]],
    codes: Codes,
) -> Validated[M]:
    """``text`` (TOML, file ``name``) validated as ``model``; ``models`` names the model of each
    table, for suggestions on unknown keys. Raises :class:`ContractlangError` with every
    problem found."""
    source = Source(name, text)
    try:
        data = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise ContractlangError([toml_syntax_error(exc, source, codes)], {name: source}) from None
    except (RecursionError, ValueError) as exc:  # nesting, or digits, beyond what Python reads
        diag = toml_beyond_limits(exc, source, codes)
        raise ContractlangError([diag], {name: source}) from None
    spans = key_spans(text)
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        diags = diagnostics_of(exc, data, spans, source, models, codes)
        raise ContractlangError(diags, {name: source}) from None
    return Validated(value, source, spans)
