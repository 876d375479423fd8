"""Command-line inputs shared by `evaluate`, `explain` and the commands to come: terms files
followed by a trace, `--open-at`, usage errors (E502), and the progress display."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

from contractlang.cli.common import err
from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError, os_reason
from contractlang.lang.durations import BadDuration, DurationReader
from contractlang.lang.numbers import LONGEST_US, TRACE_DAYS


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
        if not f:  # Path("") is the current folder: an empty argument is a mistake
            raise usage_error("an empty path was given", help="name a `.spot` file or a folder")
        p = Path(f)
        if f != STDIN and p.is_dir():
            paths.extend(_spot_files(p))
        else:
            paths.append(f)
    return paths


def _spot_files(folder: Path) -> list[str]:
    """Every ``*.spot`` file below ``folder``, sorted; a folder that cannot be read is E013
    (``rglob`` passed over it in silence: `check` then said "checked 0 files")."""

    def refuse(exc: OSError) -> None:
        name = exc.filename or str(folder)
        message = f"cannot read the folder `{name}`: {os_reason(exc)}"
        raise ContractlangError([error("E013", message, NO_SPAN, file=name)])

    found: list[Path] = []
    for root, _dirs, names in os.walk(folder, onerror=refuse):
        found.extend(Path(root) / n for n in names if n.endswith(".spot"))
    return [str(q) for q in sorted(found)]


def split_terms_and_traces(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """`TERMS… TRACE…`: the files ending in `.spot` are terms, every other one is a trace
    (several trace files are read as one trace)."""
    terms = [p for p in paths if p.suffix == ".spot"]
    traces = [p for p in paths if p.suffix != ".spot"]
    if not terms or not traces:
        missing = "terms file (`.spot`)" if not terms else "trace"
        raise usage_error(
            f"expected one or more terms files and one or more traces; no {missing} was given",
            help="for example: contractlang evaluate rulesets/aws-ec2-spot-linux.spot "
            "examples/trace.parquet",
        )
    return terms, traces


#: A duration flag (``--clock-skew``): seconds when no unit is written; at most the span of the
#: times a trace may hold, as no two of its times are further apart.
FLAG_DURATIONS = DurationReader(
    frozenset(
        {"us", "µs", "ms", "s", "sec", "secs", "second", "seconds"}
        | {"m", "min", "mins", "minute", "minutes", "h", "hour", "hours"}
    ),
    LONGEST_US,
    f"the times a trace holds ({TRACE_DAYS})",
    bare="s",
)


def parse_duration(value: str, flag: str) -> timedelta:
    """A duration flag: ``1s``, ``500ms``, ``2 minutes``, ``0`` (seconds when no unit).

    >>> parse_duration("500ms", "--clock-skew"), parse_duration("2 min", "--clock-skew")
    (datetime.timedelta(microseconds=500000), datetime.timedelta(seconds=120))
    """
    try:
        return FLAG_DURATIONS.delta(value, flag)
    except BadDuration as exc:
        raise usage_error(exc.message, help=exc.help) from None


def parse_on_invalid(value: str | None) -> Path | None:
    """``--on-invalid strict`` (the default: an invalid trace is an error) or
    ``--on-invalid quarantine=PATH`` (set aside the runs that break a rule, into PATH)."""
    if value is None or value == "strict":
        return None
    kind, _, path = value.partition("=")
    if kind != "quarantine" or not path:
        raise usage_error(
            f"`--on-invalid {value}` is neither `strict` nor `quarantine=PATH`",
            help="write `--on-invalid quarantine=bad-runs.parquet` to evaluate the valid runs "
            "and set the others aside in that file",
        )
    return Path(path)


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
    if _FINER_THAN_MICROS.search(value):  # Python reads them, cutting the digits after 6
        raise usage_error(
            f"`{flag} {value}` has more than 6 digits after the second",
            help="times are kept to the microsecond: give at most 6 fractional digits",
        )
    return ts


#: A fraction of a second with more than 6 digits (finer than the microseconds a trace holds).
_FINER_THAN_MICROS = re.compile(r"[.,][0-9]{7,}")


@contextmanager
def progress_status(enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr (only on a terminal) that each phase updates."""
    if not enabled or not err.is_terminal:
        yield lambda _msg: None
        return
    with err.status("starting…") as status:
        yield lambda msg: status.update(msg + "…")
