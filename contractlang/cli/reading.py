"""How a command reads its trace: the options every trace-reading command shares —
``--open-at``, ``--clock-skew`` and ``--on-invalid`` — and writing the runs set aside."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from contractlang.cli.common import err
from contractlang.cli.files import TRACE_SUFFIXES, Outputs
from contractlang.cli.inputs import parse_duration, parse_on_invalid, parse_open_at
from contractlang.cli.tables import write_trace_file
from contractlang.lang.durations import written
from contractlang.lang.numbers import micros
from contractlang.render.common.numbers import counted
from contractlang.trace import load
from contractlang.trace.model import Trace

OpenAt = Annotated[
    str | None,
    typer.Option(
        "--open-at",
        metavar="TIME",
        help="Close allocations still open at this ISO 8601 time (with an offset), as released.",
    ),
]
ClockSkew = Annotated[
    str,
    typer.Option(
        "--clock-skew",
        metavar="DURATION",
        help="Job and invoice events this close outside their allocation's lifetime are taken "
        "as at its edge (a clock a little off the scheduler's); 0 to be strict.",
    ),
]
OnInvalid = Annotated[
    str,
    typer.Option(
        "--on-invalid",
        metavar="strict|quarantine=PATH",
        help="strict: an invalid trace is an error (exit 2). quarantine=PATH: evaluate the "
        "runs with no error and write the others, with their rows and reasons, to PATH.",
    ),
]
#: The default of ``--clock-skew``: the trace reader's own, as the flag writes it (``1s``).
DEFAULT_CLOCK_SKEW = written(micros(load.DEFAULT_CLOCK_SKEW))


@dataclass(frozen=True)
class Reading:
    """The parsed trace options of one command."""

    open_at: datetime | None
    clock_skew: timedelta
    quarantine: Path | None

    def load_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`contractlang.trace.load_trace`."""
        return {
            "open_at": self.open_at,
            "clock_skew": self.clock_skew,
            "quarantine": self.quarantine is not None,
        }


def reading(open_at: str | None, clock_skew: str, on_invalid: str, outputs: Outputs) -> Reading:
    """Parse the trace options (before any work), the quarantine file planned with the
    command's other outputs."""
    quarantine = parse_on_invalid(on_invalid)
    outputs.add(quarantine, "--on-invalid quarantine=", TRACE_SUFFIXES)
    return Reading(parse_open_at(open_at), parse_duration(clock_skew, "--clock-skew"), quarantine)


def write_set_aside(trace: Trace, options: Reading) -> None:
    """Write the runs set aside to the quarantine file, and say so on stderr."""
    if options.quarantine is None or trace.quarantine is None:
        return
    q = trace.quarantine
    write_trace_file(q.frame, options.quarantine)
    err.print(
        f"wrote the {counted(q.runs, 'run')} set aside ({counted(q.rows, 'row')}) to "
        f"{options.quarantine}",
        markup=False,
    )
