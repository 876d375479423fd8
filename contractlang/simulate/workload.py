"""The workload file of ``contractlang simulate`` (TOML): the job, the reclaim process, the
replacement waits, and how many runs to simulate with which seed.

:func:`load_workload` reads and validates it (pydantic, strict: a string is never a number);
every problem is reported at once, each naming the key and its line
(:mod:`contractlang.tomlfile`, codes ``E601``–``E607``), and raises
:class:`~contractlang.errors.ContractlangError` (exit 2). Numbers are read as exact decimals
(``price = 2.10`` stays 2.10). ``docs/simulate.md`` documents every key.

>>> w = parse_workload('''
... runs = 10
... seed = 1
... gpus = 8
... sku = "H100-80G"
... total_steps = 100
... step_seconds = 1.5
... checkpoint_every_steps = 10
... [reclaims]
... rate_per_hour = 0.5
... [replacement]
... distribution = "fixed"
... minutes = 5
... ''', "w.toml").workload
>>> w.step_us, w.replacement.distribution if w.replacement else None
(1500000, 'fixed')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from contractlang.codes import LAST_LINE_OPEN
from contractlang.diagnostics import Diagnostic, Severity, Source, Span, did_you_mean, warning
from contractlang.errors import ContractlangError
from contractlang.importers.availability.read import CUT_HELP, Availability, read_availability
from contractlang.lang.durations import in_micros, whole_micros
from contractlang.lang.numbers import (
    INT64_MAX,
    MICROS_PER_HOUR,
    MICROS_PER_MINUTE,
    MICROS_PER_SECOND,
    duration_human,
)
from contractlang.lang.vocabulary import ENUMS
from contractlang.tomlfile import Codes, KeySpans, read_text, validate
from contractlang.tomlfile.problems import Broken, Rule, Written, check_rules, problem
from contractlang.trace.limits import (
    HIGH_PRICE,
    LONG_ALLOCATION,
    MANY_GPUS,
    MAX_GPU_US,
    MAX_TS,
    MIN_TS,
)

__all__ = ["LoadedWorkload", "Reclaims", "Replacement", "Workload", "load_workload"]

DEFAULT_START = datetime(2025, 1, 1, tzinfo=UTC)
SECONDS_PER_YEAR = 365 * 24 * 3600
MICROS_PER_YEAR = SECONDS_PER_YEAR * MICROS_PER_SECOND
#: Limits that keep every simulated time and draw index in range (and so every simulated trace
#: inside the trace's own limits, :mod:`contractlang.trace.limits`).
MAX_SAVES = 1_000_000
MAX_YEARS = 10
#: The longest replacement wait: a distribution's scale may not exceed it, and a draw from its
#: far tail is cut here (one year).
MAX_WAIT_US = MICROS_PER_YEAR
MAX_WAIT_MINUTES = MAX_WAIT_US // MICROS_PER_MINUTE
#: The highest price per GPU-hour: far inside the 20 whole digits the trace's decimal `price`
#: holds, and low enough that a charge stays far inside the engine's exact decimals.
MAX_PRICE = Decimal(10**12)
#: The lowest Poisson reclaim rate per hour (about one reclaim in 114 million years).
MIN_RATE = Decimal("1e-12")


def _number(v: Any) -> Any:
    """Whole numbers are numbers too; a boolean is not (``true`` is not 1)."""
    if isinstance(v, bool):
        raise PydanticCustomError("number_type", "a number")
    return Decimal(v) if isinstance(v, int) else v


Num = Annotated[Decimal, BeforeValidator(_number)]
Chance = Annotated[Decimal, BeforeValidator(_number), Field(ge=0, le=1)]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Reclaims(_Table):
    """How the provider takes capacity back: a Poisson rate or an availability trace."""

    rate_per_hour: Num | None = Field(
        None, ge=MIN_RATE, le=MICROS_PER_HOUR, description="Poisson, per allocation-hour"
    )
    trace: str | None = Field(None, min_length=1, description="a public availability trace")
    nodes: int = Field(1, ge=1, description="with `trace`: instances the job needs at once")
    notice_breach_chance: Chance = Field(Decimal(0), description="a notice given with lead 0")


Distribution = Literal["exponential", "lognormal", "fixed"]
#: Each distribution's parameters: required, then optional.
PARAMETERS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "exponential": (("mean_minutes",), ()),
    "lognormal": (("median_minutes",), ("sigma",)),
    "fixed": (("minutes",), ()),
}


class Replacement(_Table):
    """How long a replacement takes after a reclaim (before any promise caps it)."""

    distribution: Distribution = Field(description="`exponential`, `lognormal` or `fixed`")
    mean_minutes: Num | None = Field(None, gt=0, le=MAX_WAIT_MINUTES)
    median_minutes: Num | None = Field(None, gt=0, le=MAX_WAIT_MINUTES)
    sigma: Num | None = Field(None, gt=0, le=10)
    minutes: Num | None = Field(None, ge=0, le=MAX_WAIT_MINUTES)
    restart_breach_chance: Chance = Field(Decimal(0), description="a wait the promise misses")

    @property
    def scale_minutes(self) -> Decimal:
        """The distribution's scale: its mean, median or fixed value."""
        value = {"exponential": self.mean_minutes, "lognormal": self.median_minutes}.get(
            self.distribution, self.minutes
        )
        assert value is not None  # the rules require it
        return value

    @property
    def shape(self) -> Decimal:
        """The lognormal's sigma (the standard deviation of the log), 1 by default."""
        return self.sigma if self.sigma is not None else Decimal(1)


class Workload(_Table):
    """One workload file, validated; durations also in integer microseconds (``*_us``)."""

    runs: int = Field(ge=1, le=10_000_000, description="how many runs to simulate")
    seed: int = Field(ge=0, le=INT64_MAX, description="the seed: the same seed, the same runs")
    gpus: int = Field(ge=1, le=1_000_000, description="GPUs the job holds")
    sku: str = Field(min_length=1, description="the GPU type, written as `sku` on each start")
    capacity: str = "spot"
    price: Num | None = Field(None, ge=0, le=MAX_PRICE)
    total_steps: int = Field(ge=1, le=10**12, description="training steps of one attempt")
    step_seconds: Num = Field(gt=0, le=SECONDS_PER_YEAR, description="seconds one step takes")
    checkpoint_every_steps: int = Field(ge=1, le=10**12, description="steps between checkpoints")
    save_seconds: Num = Field(Decimal(0), ge=0, le=SECONDS_PER_YEAR)
    restore_seconds: Num = Field(Decimal(0), ge=0, le=SECONDS_PER_YEAR)
    checkpoint_on_notice: bool = False
    invalid_checkpoint_chance: Chance = Decimal(0)
    accept_chance: Chance = Decimal(1)
    max_attempts: int = Field(1, ge=1, le=1000)
    max_allocations: int = Field(1000, ge=1, le=100_000)
    start: datetime = DEFAULT_START
    reclaims: Reclaims = Field(description="a table: `rate_per_hour` or `trace`")
    replacement: Replacement | None = None

    @property
    def step_us(self) -> int:
        return _micros(self.step_seconds)

    @property
    def save_us(self) -> int:
        return _micros(self.save_seconds)

    @property
    def restore_us(self) -> int:
        return _micros(self.restore_seconds)

    @property
    def saves_per_attempt(self) -> int:
        """Saves of an attempt from step 0: every multiple of the interval, and the last step."""
        return -(-self.total_steps // self.checkpoint_every_steps)

    @property
    def attempt_us(self) -> int:
        """One attempt on one allocation, never reclaimed: every step and every save."""
        return self.total_steps * self.step_us + self.saves_per_attempt * self.save_us

    @property
    def longest_allocation_us(self) -> int:
        """No allocation runs longer: a restore, then the whole attempt."""
        return self.restore_us + self.attempt_us


def _micros(seconds: Decimal) -> int:
    """Seconds in whole microseconds (a value finer than that breaks a rule: truncated)."""
    return int(in_micros(seconds, "s"))


@dataclass(frozen=True)
class LoadedWorkload:
    """A validated workload, its source text, and the availability trace it names (read, from
    ``availability_path``)."""

    workload: Workload
    source: Source
    availability: Availability | None = None
    spans: KeySpans = field(default_factory=KeySpans, repr=False)  # where each key is written
    availability_path: Path | None = None
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def inputs(self) -> tuple[Path, ...]:
        """The files read besides the workload itself (no output may be one of them)."""
        return () if self.availability_path is None else (self.availability_path,)


#: The codes of a workload file's problems.
CODES = Codes(
    unreadable="E607",
    syntax="E601",
    unknown="E602",
    missing="E603",
    type="E604",
    value="E605",
    choices={"distribution": "E606"},
    keys_doc="every key is described in docs/simulate.md (“The workload”)",
)


def load_workload(path: str | Path) -> LoadedWorkload:
    """Read and validate a workload file; ``reclaims.trace`` is read relative to it."""
    p = Path(path)
    return parse_workload(read_text(p, CODES), str(p), base=p.parent)


def parse_workload(text: str, name: str, *, base: Path | None = None) -> LoadedWorkload:
    """Validate workload text; ``base`` is where a relative ``reclaims.trace`` is found (the
    trace is not read when ``base`` is None)."""
    validated = validate(text, name, Workload, MODELS, CODES)
    workload, source, spans = validated.value, validated.source, validated.spans
    diags = check_rules(workload, spans, source, RULES)
    if diags:
        raise ContractlangError(diags, {name: source})
    availability, path = None, None
    if workload.reclaims.trace is not None and base is not None:
        path = base / workload.reclaims.trace
        availability = _read_trace(workload, path, spans, source)
    warnings = check_rules(workload, spans, source, WARNINGS, severity=Severity.WARNING)
    if availability is not None and availability.open_line is not None:
        warnings.append(open_line_warning(availability))
    return LoadedWorkload(workload, source, availability, spans, path, tuple(warnings))


def open_line_warning(a: Availability) -> Diagnostic:
    """I044 at the last line of a Bamboo trace that has no line break: its row read whole,
    and is replayed, but a copy cut there would read whole too."""
    line, width = a.open_line or 0, len(a.open_row or "")
    return warning(
        "I044",
        LAST_LINE_OPEN,
        Span(line, 1, line, width + 1),
        file=a.name,
        help=CUT_HELP,
    )


def _read_trace(w: Workload, path: Path, spans: KeySpans, source: Source) -> Availability:
    trace = w.reclaims.trace
    availability = read_availability(path)
    nodes = w.reclaims.nodes
    if not availability.held(nodes):
        what = "an instance" if nodes == 1 else f"{nodes} instances"
        key = ("reclaims", "nodes") if nodes > 1 else ("reclaims", "trace")
        diag = problem(
            "E610",
            f"the availability trace `{trace}` never has {what} available at once "
            f"(its most is {availability.peak})",
            key,
            spans,
            source,
            help="lower `nodes`, or choose a trace with capacity",
        )
        raise ContractlangError([diag], {source.name: source})
    return availability


#: The models whose fields name the keys of each table (for unknown-key suggestions).
MODELS: dict[tuple[str, ...], type[BaseModel]] = {
    (): Workload,
    ("reclaims",): Reclaims,
    ("replacement",): Replacement,
}


def _exactly_one_process(w: Workload, said: Written) -> str | Broken | None:
    r = w.reclaims
    if (r.rate_per_hour is None) == (r.trace is None):
        which = "both" if r.rate_per_hour is not None else "neither"
        return (
            f"`[reclaims]` needs one of `rate_per_hour` (Poisson) or `trace` (an availability "
            f"trace), not {which}"
        )
    return None


def _replacement_matches(w: Workload, said: Written) -> str | Broken | None:
    if w.reclaims.trace is not None and w.replacement is not None:
        return (
            "`[replacement]` does not apply with `reclaims.trace`: replacement comes when the "
            "trace shows capacity again"
        )
    return None


def _nodes_with_trace(w: Workload, said: Written) -> str | Broken | None:
    if "nodes" in w.reclaims.model_fields_set and w.reclaims.trace is None:
        return "`nodes` applies only with `reclaims.trace` (the instances the job needs at once)"
    return None


def _parameters(w: Workload, said: Written) -> str | Broken | None:
    rep = w.replacement
    if rep is None:
        return None
    required, optional = PARAMETERS[rep.distribution]
    given = {k for k in rep.model_fields_set if k in ("mean_minutes", "median_minutes", "sigma")}
    given |= {"minutes"} if "minutes" in rep.model_fields_set else set()
    for extra in sorted(given - set(required) - set(optional)):
        takes = " and ".join(f"`{k}`" for k in (*required, *optional))
        return Broken(
            f"`{extra}` is not a parameter of `{rep.distribution}`, which takes {takes}",
            at=("replacement", extra),
        )
    for need in required:
        if need not in given:
            return f"`{rep.distribution}` needs `{need}`"
    return None


def _whole_micros(key: str) -> Rule:
    def rule(w: Workload, said: Written) -> str | Broken | None:
        value: Decimal = getattr(w, key)
        if whole_micros(value, "s") is None:
            return f"`{key}` {said((key,), value)} is finer than a microsecond"
        return None

    return rule


def _replacement_given(w: Workload, said: Written) -> str | Broken | None:
    if w.reclaims.rate_per_hour is not None and w.replacement is None:
        return (
            "missing table `[replacement]`: with `rate_per_hour`, replacement waits are drawn "
            "from it"
        )
    return None


def _capacity_known(w: Workload, said: Written) -> str | Broken | None:
    if w.capacity not in ENUMS["capacity"]:
        options = ", ".join(f"`{c}`" for c in ENUMS["capacity"])
        hint = did_you_mean(w.capacity, ENUMS["capacity"])
        also = f" (did you mean `{hint}`?)" if hint else ""
        return f"`capacity` must be one of {options}, not `{w.capacity}`{also}"
    return None


def _checkpoints_per_attempt(w: Workload, said: Written) -> str | Broken | None:
    saves = w.total_steps // w.checkpoint_every_steps
    if saves > MAX_SAVES:
        return (
            f"{saves:,} checkpoints per attempt is more than can be simulated ({MAX_SAVES:,}): "
            "raise `checkpoint_every_steps`"
        )
    return None


def _attempt_length(w: Workload, said: Written) -> str | Broken | None:
    if w.attempt_us > MAX_YEARS * MICROS_PER_YEAR:
        step = said(("step_seconds",), w.step_seconds)
        save = said(("save_seconds",), w.save_seconds)
        return (
            f"one attempt ({w.total_steps:,} steps of {step} s and {w.saves_per_attempt:,} "
            f"saves of {save} s) would train for more than {MAX_YEARS} years, the most that "
            "can be simulated"
        )
    return None


def _start_has_offset(w: Workload, said: Written) -> str | Broken | None:
    if w.start.tzinfo is None:
        return f"`start` {said(('start',), w.start)} has no UTC offset"
    return None


def _start_whole_micros(w: Workload, said: Written) -> str | Broken | None:
    """A ``start`` written to the nanosecond: TOML's reader keeps microseconds and drops the
    rest, so the simulated times would be silently cut; an error, as a duration finer than a
    microsecond is (trailing zeros are exact, so allowed)."""
    shown = said(("start",), w.start)
    fraction = _FRACTION.search(shown)
    if fraction is not None and fraction.group(1)[6:].strip("0"):
        return f"`start` {shown} is finer than a microsecond, the finest time a trace holds"
    return None


#: The fraction of a second of a TOML time (``12:00:00.123456789``).
_FRACTION = re.compile(r"\d{2}:\d{2}:\d{2}\.(\d+)")


def _start_in_range(w: Workload, said: Written) -> str | Broken | None:
    """Every simulated time must lie in the trace's range: the start, and the end of the
    shortest run (one attempt, never reclaimed). A run that goes on longer is checked as it is
    simulated (:mod:`~contractlang.simulate.generate`)."""
    if w.start.tzinfo is None:
        return None  # `_start_has_offset`
    shown = said(("start",), w.start)
    if w.start < MIN_TS:
        return f"`start` {shown} is before {MIN_TS:%Y-%m-%d}, the earliest time a trace may hold"
    left = (MAX_TS - w.start) // timedelta(microseconds=1)
    if w.attempt_us >= left:
        return (
            f"`start` {shown} leaves too little time: a trace ends on "
            f"{MAX_TS - timedelta(days=1):%Y-%m-%d} and one attempt takes "
            f"{duration_human(w.attempt_us)}"
        )
    return None


def _gpu_time(w: Workload, said: Written) -> str | Broken | None:
    if w.gpus * w.attempt_us > MAX_GPU_US:
        attempt = duration_human(w.attempt_us)
        return (
            f"{w.gpus:,} GPUs for one attempt of {attempt} would hold more than "
            f"{MAX_GPU_US // MICROS_PER_HOUR:,} GPU-hours, the most one run may hold"
        )
    return None


def _price_places(w: Workload, said: Written) -> str | Broken | None:
    exponent = w.price.as_tuple().exponent if w.price is not None else 0
    if isinstance(exponent, int) and exponent < -18:
        return f"`price` {said(('price',), w.price)} has more than 18 decimal places"
    return None


def _many_gpus(w: Workload, said: Written) -> str | Broken | None:
    if w.gpus > MANY_GPUS:
        return f"an allocation of {w.gpus:,} GPUs: more than {MANY_GPUS:,} in one is unusual"
    return None


def _long_allocation(w: Workload, said: Written) -> str | Broken | None:
    if w.longest_allocation_us > LONG_ALLOCATION // timedelta(microseconds=1):
        longest = duration_human(w.longest_allocation_us)
        return (
            f"an allocation may run for {longest} (a restore and one attempt): longer than a year"
        )
    return None


def _high_price(w: Workload, said: Written) -> str | Broken | None:
    if w.price is not None and w.price > HIGH_PRICE:
        shown = said(("price",), w.price)
        return f"`price` {shown} per GPU-hour is over {HIGH_PRICE:,}"
    return None


#: Rules no single key can check, each with the key its problem is reported at and its code.
RULES: tuple[tuple[str, tuple[str, ...], Rule], ...] = (
    ("E605", ("reclaims",), _exactly_one_process),
    ("E605", ("replacement",), _replacement_matches),
    ("E603", ("reclaims", "rate_per_hour"), _replacement_given),
    ("E605", ("capacity",), _capacity_known),
    ("E605", ("reclaims", "nodes"), _nodes_with_trace),
    ("E606", ("replacement", "distribution"), _parameters),
    ("E605", ("step_seconds",), _whole_micros("step_seconds")),
    ("E605", ("save_seconds",), _whole_micros("save_seconds")),
    ("E605", ("restore_seconds",), _whole_micros("restore_seconds")),
    ("E605", ("checkpoint_every_steps",), _checkpoints_per_attempt),
    ("E605", ("total_steps",), _attempt_length),
    ("E605", ("start",), _start_has_offset),
    ("E605", ("start",), _start_whole_micros),
    ("E605", ("start",), _start_in_range),
    ("E605", ("gpus",), _gpu_time),
    ("E605", ("price",), _price_places),
)
#: What the trace would warn about on every row (``W103``–``W105``), said once at its key.
WARNINGS: tuple[tuple[str, tuple[str, ...], Rule], ...] = (
    ("W103", ("gpus",), _many_gpus),
    ("W104", ("total_steps",), _long_allocation),
    ("W105", ("price",), _high_price),
)
#: The trace's warnings the workload's own say instead (so none names a simulated trace).
TRACE_WARNINGS_SAID = frozenset(code for code, _, _ in WARNINGS)
