"""Command-line inputs shared by `evaluate`, `explain` and `compare`: terms files followed by a
trace, `--open-at`, and output paths checked before any work starts."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import polars as pl

from contractlang.cli.common import err
from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError

TABLE_SUFFIXES = (".parquet", ".csv")


def usage_error(message: str, help: str | None = None) -> ContractlangError:
    """Bad command-line input (E502): a message naming the flag or argument, exit code 2."""
    return ContractlangError([error("E502", message, NO_SPAN, file="contractlang", help=help)])


def write_error(path: Path, reason: str) -> ContractlangError:
    return ContractlangError(
        [error("E501", f"cannot write `{path}`: {reason}", NO_SPAN, file="contractlang")]
    )


def split_terms_and_trace(paths: Sequence[Path]) -> tuple[list[Path], Path]:
    """`TERMS… TRACE`: every argument but the last is a terms file, the last is the trace."""
    if len(paths) < 2:
        raise usage_error(
            "expected one or more terms files and then a trace",
            help="for example: contractlang evaluate rulesets/aws-ec2-spot-linux.spot "
            "examples/trace.parquet",
        )
    *terms, trace = paths
    for t in terms:
        if t.suffix != ".spot":
            raise usage_error(
                f"`{t}` is not a `.spot` terms file",
                help="terms files come first and end in `.spot`; the trace comes last",
            )
    return terms, trace


def parse_open_at(value: str | None, flag: str = "--open-at") -> datetime | None:
    """A timestamp flag (`--open-at`, `--start`): ISO 8601 with an offset (naive times are
    ambiguous)."""
    if value is None:
        return None
    try:
        ts = datetime.fromisoformat(value)
    except ValueError:
        raise usage_error(
            f"`{flag} {value}` is not an ISO 8601 timestamp",
            help="write it with an offset, e.g. 2026-03-31T23:59:59Z",
        ) from None
    if ts.tzinfo is None:
        raise usage_error(
            f"`{flag} {value}` has no UTC offset",
            help="add `Z` or an offset such as `+00:00`",
        )
    return ts


def check_table_path(
    path: Path | None, flag: str, suffixes: tuple[str, ...] = TABLE_SUFFIXES
) -> None:
    """An output path, checked before any work: a known extension, in a folder that exists."""
    if path is None:
        return
    if path.suffix.lower() not in suffixes:
        kinds = ", ".join(f"`{x}`" for x in suffixes[:-1]) + f" or `{suffixes[-1]}`"
        raise usage_error(f"`{flag} {path}`: the file must end in {kinds}")
    parent = path.parent
    if not parent.exists():
        raise usage_error(f"`{flag} {path}`: the folder `{parent}` does not exist")
    if not parent.is_dir():
        raise usage_error(f"`{flag} {path}`: `{parent}` is a file, not a folder")
    if path.is_dir():
        raise usage_error(f"`{flag} {path}`: `{path}` is a folder")


def write_table(frame: pl.DataFrame, path: Path) -> None:
    """Write Parquet or CSV by extension; a failure to write is a clean E501 (exit 2)."""
    try:
        if path.suffix.lower() == ".csv":
            frame.write_csv(path)
        else:
            frame.write_parquet(path)
    except OSError as exc:
        raise write_error(path, os_reason(exc)) from None


def os_reason(exc: OSError) -> str:
    """Why a write failed, in lowercase words: ``exc.strerror``, or for the errors polars
    raises (``Not a directory (os error 20): /path``) their text without the code and path.

    >>> os_reason(OSError("Not a directory (os error 20): /tmp/a/b.parquet"))
    'not a directory'
    """
    text = exc.strerror or re.sub(r"\s*\(os error \d+\).*$", "", str(exc), flags=re.DOTALL)
    text = text.strip() or "write error"
    return text[0].lower() + text[1:]


@contextmanager
def progress_status(enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr (only on a terminal) that each phase updates."""
    if not enabled or not err.is_terminal:
        yield lambda _msg: None
        return
    with err.status("starting…") as status:
        yield lambda msg: status.update(msg + "…")
