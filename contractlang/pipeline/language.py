"""The language half of the pipeline: text → tree → AST → checked terms, and formatting.

:func:`parse` reads one text (syntax errors are diagnostics, never exceptions);
:func:`check_paths` parses and checks several files together (contract and budget names are
unique across them) and never raises; :func:`load_terms` does the same and raises
:class:`~contractlang.errors.ContractlangError` if anything is wrong, so nothing downstream
ever sees terms with an error in them. :func:`format_source` lays a text out canonically and
refuses (``E012``) if reparsing its output would change the AST or the comments.

    >>> t = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> [c.name for c in t.contracts]
    ['c']
    >>> parse('budget "b" { require share(accepted) >= 90% }').ok
    True
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from contractlang.check import check
from contractlang.diagnostics import NO_SPAN, Diagnostic, Source, error, has_errors, sort_key
from contractlang.errors import ContractlangError
from contractlang.fmt import format_file
from contractlang.lang.ast import Comment, SpotFile
from contractlang.lang.terms import Terms
from contractlang.syntax.parser import parse_text

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
class ParseResult:
    """The outcome of parsing one source: the AST (``None`` on a syntax error), the
    diagnostics, and the source text they point into."""

    file: SpotFile | None
    diagnostics: tuple[Diagnostic, ...]
    source: Source

    @property
    def ok(self) -> bool:
        """True when the text parsed without errors."""
        return self.file is not None and not any(d.is_error for d in self.diagnostics)


def parse(text: str | bytes, filename: str = "<input>") -> ParseResult:
    """Parse the text of a `.spot` file: text → AST. Never raises on any input.

    >>> r = parse('contract "c" { rate 2 USD per gpu_hour capacity == spot }')
    >>> r.ok, r.diagnostics[0].code
    (False, 'E002')
    """
    with gc_paused():
        parsed = parse_text(text, filename)
    return ParseResult(parsed.file, parsed.diagnostics, parsed.source)


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused (reference counting still frees everything).
    Parsing builds millions of small objects with no cycles among them, and every
    full collection walks all that are alive: with it running, a 4.5 MB file cost 3.6 times a
    1.5 MB one (`bench/bench_startup.py`); paused, the cost grows with the file."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_path(path: str | Path) -> ParseResult:
    """Read and parse a file. A missing or unreadable file is an ``E013`` diagnostic."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        diag = error("E013", f"cannot read `{name}`: {reason}", NO_SPAN, file=name)
        return ParseResult(None, (diag,), Source(name, ""))
    return parse(data, name)


# --------------------------------------------------------------------------- checking


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


def check_paths(
    paths: Sequence[str | Path], *, stdin: Callable[[], bytes] | None = None
) -> CheckedFiles:
    """Parse and check ``paths`` together; never raises for bad input. With ``stdin``, the
    path ``-`` is the text it returns, named ``<stdin>``."""
    return _check_results(
        [
            parse(stdin(), "<stdin>") if stdin is not None and str(p) == "-" else parse_path(p)
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


# --------------------------------------------------------------------------- formatting


@dataclass(frozen=True)
class FormatResult:
    """The formatted text (``None`` when the source does not parse or the formatter refused),
    whether it differs from the input, and the diagnostics."""

    text: str | None
    changed: bool
    diagnostics: tuple[Diagnostic, ...] = ()


def format_source(text: str | bytes, filename: str = "<input>") -> FormatResult:
    """Parse ``text``, lay it out canonically (:mod:`contractlang.fmt`), and check the result
    means the same: reparsed, it has the same AST and the same comments.

    >>> format_source('budget "b" {require  share(accepted)>=90%}').text
    'budget "b" {\\n  require share(accepted) >= 90%\\n}\\n'
    """
    parsed = parse(text, filename)
    if parsed.file is None:
        return FormatResult(None, False, parsed.diagnostics)
    with gc_paused():
        out = format_file(parsed.file)
        problem = _meaning_changed(parsed.file, out, filename)
    if problem is not None:
        diag = error(
            "E012",
            f"formatting would change {problem}, so the file was left as it is",
            NO_SPAN,
            file=filename,
            help="this is a bug in contractlang's formatter; please report it with the file",
        )
        return FormatResult(None, False, (diag,))
    return FormatResult(out, out != _original(text), ())


def _original(text: str | bytes) -> str:
    """The text as the file holds it (the parse reads a lone CR as a line end)."""
    if isinstance(text, bytes):
        return text.decode("utf-8-sig", errors="replace")
    return text.removeprefix("\ufeff")


def _meaning_changed(before: SpotFile, out: str, filename: str) -> str | None:
    again = parse(out, filename)
    if again.file is None:
        return "the file into one that does not parse"
    if again.file != before:
        return "the meaning of the file"
    if _comment_texts(again.file.comments) != _comment_texts(before.comments):
        return "the comments of the file"
    return None


def _comment_texts(comments: Sequence[Comment]) -> list[str]:
    return [c.text.rstrip() for c in comments]
