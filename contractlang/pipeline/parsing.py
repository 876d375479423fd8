"""The text half of the language pipeline: text → AST, and formatting. It imports no checker,
so ``contractlang fmt`` never loads one, and loads the formatter only to format, so
``contractlang check`` never does.

:func:`parse` reads one text (syntax errors are diagnostics, never exceptions);
:func:`format_source` lays a text out canonically and refuses (``E012``) if reparsing its
output would change the AST or the comments. Checking is :mod:`contractlang.pipeline.language`.

    >>> parse('budget "b" { require share(accepted) >= 90% }').ok
    True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from contractlang.diagnostics import NO_SPAN, Diagnostic, Source, error
from contractlang.lang.ast import Comment, SpotFile
from contractlang.syntax.parser import parse_text

__all__ = ["FormatResult", "ParseResult", "format_source", "gc_paused", "parse", "parse_path"]


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
    full collection walks all that are alive: with it running, the cost grew faster than the
    file; paused, it grows with the file (`bench/bench_startup.py`'s 10 MB ÷ 1 MB ratio)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


#: The largest terms file read (64 MiB: a thousand times a large contract, and bounded, so
#: that `check /dev/zero` stops rather than reading until memory runs out).
MAX_SPOT_BYTES = 64 << 20


def read_spot(path: str | Path, stream: BinaryIO | None = None) -> bytes | Diagnostic:
    """The bytes of a terms file (or of ``stream``, named ``path``), at most
    :data:`MAX_SPOT_BYTES`; ``E013`` when it cannot be read or is larger."""
    name = str(path)
    try:
        if stream is not None:
            data = stream.read(MAX_SPOT_BYTES + 1)
        else:
            with Path(path).open("rb") as fh:
                data = fh.read(MAX_SPOT_BYTES + 1)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        return error("E013", f"cannot read `{name}`: {reason}", NO_SPAN, file=name)
    if len(data) > MAX_SPOT_BYTES:
        return error(
            "E013",
            f"cannot read `{name}`: it is larger than {MAX_SPOT_BYTES >> 20} MiB "
            f"({MAX_SPOT_BYTES:,} bytes), the most read of a terms file",
            NO_SPAN,
            file=name,
            help="split the contracts into several files",
        )
    return data


def parse_path(path: str | Path) -> ParseResult:
    """Read and parse a file. A missing, unreadable or too large file is an ``E013``
    diagnostic (:func:`read_spot`)."""
    return parse_stream(path)


def parse_stream(path: str | Path, stream: BinaryIO | None = None) -> ParseResult:
    """Read and parse ``stream`` (named ``path``), or the file ``path``: :func:`read_spot`."""
    data = read_spot(path, stream)
    if isinstance(data, Diagnostic):
        return ParseResult(None, (data,), Source(str(path), ""))
    return parse(data, str(path))


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
    means the same: reparsed, it has the same AST and the same comments. A text already laid
    out so is the text just parsed, so it is not parsed again.

    >>> format_source('budget "b" {require  share(accepted)>=90%}').text
    'budget "b" {\\n  require share(accepted) >= 90%\\n}\\n'
    """
    parsed = parse(text, filename)
    if parsed.file is None:
        return FormatResult(None, False, parsed.diagnostics)
    # imported here, for start-up time: `check` parses but never formats
    from contractlang.fmt import format_file  # noqa: PLC0415

    with gc_paused():
        out = format_file(parsed.file)
        changed = out != _original(text)
        problem = _meaning_changed(parsed.file, out, filename) if changed else None
    if problem is not None:
        diag = error(
            "E012",
            f"formatting would change {problem}, so the file was left as it is",
            NO_SPAN,
            file=filename,
            help="this is a bug in contractlang's formatter; please report it with the file",
        )
        return FormatResult(None, False, (diag,))
    return FormatResult(out, changed, ())


def _original(text: str | bytes) -> str:
    """The text as the file holds it (the parse reads a lone CR as a line end; the formatter
    writes no CR, so a text equal to its output has none)."""
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
