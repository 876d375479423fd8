"""What a rehearsal is asked to do, and the readers of its settings' text (durations,
progress fractions, signals, the time scale, the allocation). A bad value is ``E702``.

>>> parse_duration("2 min", "--notice")
120000000
>>> [str(f) for f in parse_progress("30%,70%")]
['3/10', '7/10']
>>> [str(f) for f in evenly(2)]
['1/3', '2/3']
"""

from __future__ import annotations

import re
import shlex
import shutil
import signal
import sys
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

from contractlang.diagnostics import NO_SPAN, error, shortened
from contractlang.errors import ContractlangError
from contractlang.lang.durations import BadDuration, DurationReader
from contractlang.lang.numbers import MICROS_PER_DAY
from contractlang.lang.vocabulary import ENUMS, TIME_UNITS
from contractlang.trace.limits import MAX_DECIMAL, MAX_GPUS, MAX_STEP

MOCK_MODULE = "contractlang.mock_trainer"
#: The most interrupts one rehearsal plans (each is a real allocation of the job).
MAX_INTERRUPTS = 1000
#: The longest notice lead or replacement wait a flag may ask for: 365 days.
MAX_DURATION_US = 365 * MICROS_PER_DAY
#: ``--notice`` and ``--replacement-wait``: a number and a unit (in any case), at most 365 days.
DURATIONS = DurationReader(
    frozenset({"ms", "s", "sec", "m", "min", "h", "d"} | TIME_UNITS.keys())
    | {unit + "s" for unit in TIME_UNITS},
    MAX_DURATION_US,
    "365 days",
    any_case=True,
    long_help="a rehearsal's notice leads and waits are really waited (`--time-scale` "
    "shortens them) and recorded in its trace",
)
#: The most a rehearsal may be sped up (a 365-day wait then takes 32 s).
MAX_TIME_SCALE = 1_000_000
#: The most decimal places of ``--time-scale``.
_PLACES = 6
#: The most places of ``--price`` (as the trace's money columns hold).
PRICE_PLACES = 18
#: Signals that cannot be a notice: the job could not see them.
_NOT_NOTICES = (signal.SIGKILL, signal.SIGSTOP)


def setting_error(message: str, help: str | None = None) -> ContractlangError:
    """A bad rehearsal setting (E702), exit code 2."""
    return ContractlangError([error("E702", message, NO_SPAN, file="contractlang", help=help)])


@dataclass(frozen=True)
class AllocationSpec:
    """What every allocation of a rehearsal is recorded as (the trace's ``started`` row)."""

    gpus: int = 8
    sku: str = "H100-80G"
    capacity: str = "spot"
    zone: str | None = None
    price: Decimal | None = Decimal("2.50")  # per GPU-hour: the trace's `price` column

    def __post_init__(self) -> None:
        if not 1 <= self.gpus <= MAX_GPUS:
            raise setting_error(
                f"`--gpus {self.gpus}` must be at least 1 and at most {MAX_GPUS:,}",
                help="the most GPUs one allocation of a trace may have",
            )
        if not self.sku.strip():
            raise setting_error("`--sku` must not be empty")
        if self.capacity not in ENUMS["capacity"]:
            names = ", ".join(f"`{c}`" for c in ENUMS["capacity"])
            raise setting_error(f"unknown capacity `{self.capacity}`", help=f"one of {names}")
        if self.price is not None:
            check_price(self.price, str(self.price))


@dataclass(frozen=True)
class RehearsalSettings:
    """Everything a rehearsal needs besides the terms. ``notice_us`` and
    ``replacement_wait_us`` of ``None`` mean each draft's own promise."""

    command: tuple[str, ...]
    shown_command: str
    interrupts: tuple[Fraction, ...] = (Fraction(1, 2),)
    notice_us: int | None = None
    replacement_wait_us: int | None = None
    notice_signal: signal.Signals = signal.SIGTERM
    time_scale: Fraction = Fraction(1)
    run_id: str = "rehearsal"
    allocation: AllocationSpec = field(default_factory=AllocationSpec)
    total_steps: int | None = None
    workdir: Path | None = None

    def __post_init__(self) -> None:
        if not self.command:
            raise setting_error("the command is empty", help='e.g. --command "python train.py"')
        if not self.run_id.strip():
            raise setting_error("`--run-id` must not be empty")
        if "\0" in self.run_id or any("\0" in word for word in self.command):
            raise setting_error("the run ID and the command must not hold a NUL character")
        if not 1 <= self.time_scale <= MAX_TIME_SCALE:
            raise _bad_scale(str(self.time_scale))
        if self.total_steps is not None and not 1 <= self.total_steps <= MAX_STEP:
            raise setting_error(
                f"`--steps {self.total_steps}` must be at least 1 and at most {MAX_STEP:,}",
                help="the largest step a trace holds",
            )
        for us, flag in (
            (self.notice_us, "--notice"),
            (self.replacement_wait_us, "--replacement-wait"),
        ):
            if us is not None and not 0 <= us <= MAX_DURATION_US:
                too_long = DURATIONS.too_long(f"{us} µs", flag)
                raise setting_error(too_long.message, help=too_long.help)
        if any(not 0 < f <= 1 for f in self.interrupts):
            raise setting_error("interrupts must fall between 0% and 100% of the progress")
        if len(self.interrupts) > MAX_INTERRUPTS:
            raise _too_many(f"{len(self.interrupts)} interrupts")


def parse_duration(text: str, flag: str) -> int:
    """A duration flag (``30s``, ``2 min``, ``1.5 hours``) in exact microseconds, at most
    365 days."""
    try:
        return DURATIONS.micros(text, flag)
    except BadDuration as exc:
        raise setting_error(exc.message, help=exc.help) from None


def parse_progress(text: str) -> tuple[Fraction, ...]:
    """``--at 30%,70%``: fractions of the job's progress, in order, each in (0%, 100%]."""
    found: list[Fraction] = []
    for part in (p.strip() for p in text.split(",")):
        m = re.fullmatch(r"(\d+(?:\.\d+)?)%", part)
        value = Fraction(m.group(1)) / 100 if m else None
        if value is None or not 0 < value <= 1:
            raise setting_error(
                f"`--at {text}`: `{part}` is not a share of the progress above 0% and up to 100%",
                help="write percentages separated by commas, e.g. `--at 30%,70%`",
            )
        if value in found:
            raise setting_error(f"`--at {text}` names `{part}` twice")
        found.append(value)
        if len(found) > MAX_INTERRUPTS:
            raise _too_many("`--at` with more shares than that")
    return tuple(sorted(found))


def evenly(n: int) -> tuple[Fraction, ...]:
    """``--interrupts N``: evenly spaced fractions of the progress (N = 2: 1/3 and 2/3)."""
    if n < 0:
        raise setting_error(f"`--interrupts {n}` must not be negative")
    if n > MAX_INTERRUPTS:
        raise _too_many(f"`--interrupts {n}`")
    return tuple(Fraction(k, n + 1) for k in range(1, n + 1))


def _too_many(what: str) -> ContractlangError:
    return setting_error(
        f"a rehearsal interrupts its job at most {MAX_INTERRUPTS:,} times; {what} is too many",
        help="each interrupt is a real reclaim and a new allocation of the job",
    )


def parse_signal(text: str) -> signal.Signals:
    """``--notice-signal``: a signal name (``TERM``, ``SIGUSR1``) or number."""
    name = text.strip().upper()
    try:
        sig = signal.Signals(int(name)) if name.isdigit() else signal.Signals[_sig_name(name)]
    except (KeyError, ValueError):
        raise setting_error(
            f"`--notice-signal {text}` is not a signal", help="e.g. `TERM`, `INT`, `USR1`"
        ) from None
    if sig in _NOT_NOTICES:
        raise setting_error(
            f"`--notice-signal {text}` cannot be a notice: the job cannot catch it",
            help="the reclaim itself is SIGKILL; a notice is a signal the job can handle",
        )
    return sig


def _sig_name(name: str) -> str:
    return name if name.startswith("SIG") else "SIG" + name


def parse_scale(text: str) -> Fraction:
    """``--time-scale X``: a decimal from 1 to 1,000,000, at most 6 places."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise setting_error(f"`--time-scale {text}` is not a number") from None
    if not value.is_finite() or not 1 <= value <= MAX_TIME_SCALE or _places(value) > _PLACES:
        raise _bad_scale(text)
    return Fraction(value)


def _bad_scale(text: str) -> ContractlangError:
    return setting_error(
        f"`--time-scale {shortened(text)}` must be a number from 1 to {MAX_TIME_SCALE:,} "
        f"with at most {_PLACES} places",
        help="60 runs each notice and wait 60 times faster than it is recorded",
    )


def _places(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def parse_price(text: str) -> Decimal:
    """``--price``: an exact decimal per GPU-hour, at least 0 and below 10²⁰ (what the trace's
    ``price`` column holds), at most 18 places."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise setting_error(f"`--price {text}` is not a decimal number") from None
    check_price(value, text)
    return value


def check_price(value: Decimal, text: str) -> None:
    """E702 unless ``value`` fits the trace's ``price`` column (see :func:`parse_price`)."""
    if not value.is_finite() or not 0 <= value < MAX_DECIMAL or _places(value) > PRICE_PLACES:
        raise setting_error(
            f"`--price {shortened(text)}` must be a decimal of at least 0 and below 10^20, "
            f"with at most {PRICE_PLACES} places",
            help="the price per GPU-hour, as a trace's `price` column holds it",
        )


def command_from_text(text: str) -> tuple[str, ...]:
    """``--command``: split as a shell would (no shell runs it); the program must exist."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise setting_error(f"`--command {text}` cannot be split into words: {exc}") from None
    if not argv:
        raise setting_error("`--command` is empty", help='e.g. --command "python train.py"')
    if shutil.which(argv[0]) is None:
        program = Path(argv[0])
        if "/" in argv[0] and program.is_dir():
            why, help = "it is a folder", "give the program inside it"
        elif "/" in argv[0] and program.exists():
            why = "it is not executable"
            help = f"make it executable (`chmod +x {argv[0]}`) or run it through its interpreter"
        else:
            why = "no such program"
            help = (
                "give a program on PATH or a path to an executable; pipes and variables need "
                "`sh -c '…'`"
            )
        raise ContractlangError(
            [
                error(
                    "E701",
                    f"cannot start `{argv[0]}`: {why}",
                    NO_SPAN,
                    file="contractlang",
                    help=help,
                )
            ]
        )
    return argv


def mock_command() -> tuple[tuple[str, ...], str]:
    """The bundled mock job (run by this Python), and how it is shown."""
    return (sys.executable, "-m", MOCK_MODULE), f"python -m {MOCK_MODULE}"
