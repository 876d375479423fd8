"""The language half of the pipeline: text → AST → checked terms (parsing and formatting,
which need no checker, are :mod:`contractlang.pipeline.parsing`; their names are here too).

:func:`check_paths` parses and checks several files together (contract and budget names are
unique across them) and never raises; :func:`load_terms` does the same and raises
:class:`~contractlang.errors.ContractlangError` if anything is wrong, so nothing downstream
ever sees terms with an error in them.

    >>> t = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> [c.name for c in t.contracts]
    ['c']
    >>> parse('budget "b" { require share(accepted) >= 90% }').ok
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from contractlang.check import check
from contractlang.diagnostics import Diagnostic, Source, has_errors, sort_key
from contractlang.errors import ContractlangError
from contractlang.lang.ast import SpotFile
from contractlang.lang.terms import Terms
from contractlang.pipeline.parsing import (
    FormatResult,
    ParseResult,
    format_source,
    gc_paused,
    parse,
    parse_path,
    parse_stream,
)

__all__ = [
    "CheckedFiles",
    "FormatResult",
    "ParseResult",
    "check_paths",
    "check_texts",
    "format_source",
    "load_terms",
    "parse",
    "parse_path",
    "terms_from_text",
]


@dataclass(frozen=True)
class CheckedFiles:
    """What `contractlang check` reports: the files that parsed, every diagnostic (syntax and
    check, sorted), and the source of each file that could be read."""

    files: tuple[SpotFile, ...]
    diagnostics: tuple[Diagnostic, ...]
    sources: dict[str, Source]
    count: int  # how many files were given

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def check_paths(paths: Sequence[str | Path], *, stdin: BinaryIO | None = None) -> CheckedFiles:
    """Parse and check ``paths`` together; never raises for bad input. With ``stdin``, the
    path ``-`` is the text read from it, named ``<stdin>``."""
    return _check_results(
        [
            parse_stream("<stdin>", stdin) if stdin is not None and str(p) == "-" else parse_path(p)
            for p in paths
        ]
    )


def check_texts(texts: Sequence[tuple[str, str]]) -> CheckedFiles:
    """Like :func:`check_paths` for ``(text, filename)`` pairs already in memory."""
    return _check_results([parse(text, name) for text, name in texts])


def _check_results(results: Sequence[ParseResult]) -> CheckedFiles:
    diags: list[Diagnostic] = []
    sources: dict[str, Source] = {}
    files: list[SpotFile] = []
    for r in results:
        diags.extend(r.diagnostics)
        sources[r.source.name] = r.source
        if r.file is not None:
            files.append(r.file)
    with gc_paused():
        diags.extend(check(files).diagnostics)
    return CheckedFiles(
        files=tuple(files),
        diagnostics=tuple(sorted(diags, key=sort_key)),
        sources=sources,
        count=len(results),
    )


def _terms(checked: CheckedFiles) -> Terms:
    if not checked.ok:
        raise ContractlangError(checked.diagnostics, checked.sources)
    return Terms(
        files=checked.files,
        sources=checked.sources,
        warnings=tuple(d for d in checked.diagnostics if not d.is_error),
    )


def load_terms(paths: Sequence[str | Path]) -> Terms:
    """Parse and check the `.spot` files at ``paths``.

    Raises :class:`ContractlangError` (with every diagnostic, warnings included) when any
    file cannot be read, does not parse or does not check.
    """
    return _terms(check_paths(paths))


def terms_from_text(text: str, filename: str = "<input>") -> Terms:
    """Parse and check one `.spot` text; raises :class:`ContractlangError` on any error."""
    return _terms(check_texts([(text, filename)]))
