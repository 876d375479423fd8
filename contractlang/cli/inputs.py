"""Command-line inputs shared by `evaluate`, `explain` and the commands to come: terms files
followed by a trace, `--open-at`, usage errors (E502), and the progress display."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from contractlang.cli.common import err
from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError


def usage_error(message: str, help: str | None = None) -> ContractlangError:
    """Bad command-line input (E502): a message naming the flag or argument, exit code 2."""
    return ContractlangError([error("E502", message, NO_SPAN, file="contractlang", help=help)])


#: The path that stands for standard input.
STDIN = "-"


def spot_paths(files: Sequence[str]) -> list[str]:
    """`.spot` files as given on the command line: a directory stands for every ``*.spot``
    file below it (sorted); ``-`` (standard input) and files stay as they are."""
    paths: list[str] = []
    for f in files:
        p = Path(f)
        if f != STDIN and p.is_dir():
            paths.extend(str(q) for q in sorted(p.rglob("*.spot")))
        else:
            paths.append(f)
    return paths


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


@contextmanager
def progress_status(enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr (only on a terminal) that each phase updates."""
    if not enabled or not err.is_terminal:
        yield lambda _msg: None
        return
    with err.status("starting…") as status:
        yield lambda msg: status.update(msg + "…")
