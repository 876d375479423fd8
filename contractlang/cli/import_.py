"""`contractlang import sacct|focus|attempts|availability FILE`: users' data as a trace
(docs/import.md).

contractlang import sacct jobs.txt --tz America/New_York --out jobs.parquet
contractlang import sacct jobs.txt --tz UTC --capacity spot --sku-map h100=H100-80G
contractlang import sacct jobs.json --out jobs.parquet   # `sacct --json`: no `--tz`
contractlang import focus invoice.csv --run-from tag:slurm_job --out invoice.parquet
contractlang import attempts philly.json --tz UTC --out philly.parquet --rejects rejects.csv
contractlang import availability us-east-1a_v100_1.json --start 2025-01-01T00:00Z --gpus 8

Each writes the trace (`--out`: Parquet, or CSV/NDJSON by extension; by default the input's
name with `.parquet`, never over an existing file) and prints the mapping report; rows it could
not map go to `--rejects PATH` with their reasons. Exit codes: 0 written, 2 bad input (a file
that cannot be imported, events that break a trace rule, a wrong flag), 3 internal error,
130 interrupted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import exit_with, guarded, out
from contractlang.cli.files import TRACE_SUFFIXES, Outputs
from contractlang.cli.inputs import parse_open_at, progress_status, usage_error
from contractlang.cli.tables import write_table, write_trace_file
from contractlang.diagnostics import NO_SPAN, did_you_mean, error
from contractlang.errors import ContractlangError, ExitCode
from contractlang.importers import RunKey, import_attempts, import_focus, import_sacct
from contractlang.importers.availability import import_availability
from contractlang.importers.localtime import read_zone
from contractlang.importers.result import ImportReport, ImportResult, rejects_frame
from contractlang.importers.sacct import Allocations
from contractlang.importers.sacct.text_export import check_delimiter
from contractlang.render.importers.terminal import render_import
from contractlang.trace.limits import MAX_GPUS
from contractlang.trace.schema import CAPACITIES

FileArg = Annotated[
    Path, typer.Argument(metavar="FILE", help="The file to import.", show_default=False)
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        metavar="PATH",
        help="Where to write the trace (.parquet, .csv or .ndjson); by default the input's "
        "name with .parquet, which must not exist yet.",
        show_default=False,
    ),
]
RejectsOpt = Annotated[
    Path | None,
    typer.Option(
        "--rejects",
        metavar="PATH",
        help="Write the rows that could not be mapped (.csv or .parquet).",
    ),
]
TzOpt = Annotated[
    str,
    typer.Option(
        "--tz",
        metavar="ZONE",
        help="The time zone of the file's times (IANA name, e.g. Europe/Berlin).",
    ),
]
SacctTzOpt = Annotated[
    str | None,
    typer.Option(
        "--tz",
        metavar="ZONE",
        help="The cluster's time zone (IANA name, e.g. Europe/Berlin): required for a text "
        "export, whose times have no offset; a `sacct --json` export needs none.",
        show_default=False,
    ),
]
CapacityOpt = Annotated[
    str | None,
    typer.Option(
        "--capacity",
        metavar="|".join(CAPACITIES),
        help="Write this capacity on every allocation (`import sacct` with `--capacity-map`: "
        "on those of the partitions it does not name).",
    ),
]
SkuOpt = Annotated[
    str | None,
    typer.Option(
        "--sku",
        metavar="SKU",
        help="Write this SKU on every allocation (with `--sku-map`: on those of untyped GPUs).",
    ),
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price",
        metavar="PRICE",
        help="Write this price per GPU-hour (an exact decimal) on every allocation.",
    ),
]
ZoneOpt = Annotated[
    str | None, typer.Option("--zone", metavar="ZONE", help="Write this zone on every allocation.")
]


def register(app: typer.Typer) -> None:
    import_app = typer.Typer(
        name="import",
        help="Import scheduler exports, billing exports, job attempt lists and spot "
        "availability traces as traces.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )

    @import_app.command("sacct")
    @guarded(fmt_param=None)
    def sacct_cmd(
        file: FileArg,
        tz: SacctTzOpt = None,
        out_path: OutOpt = None,
        rejects: RejectsOpt = None,
        capacity: CapacityOpt = None,
        open_at: Annotated[
            str | None,
            typer.Option(
                "--open-at",
                metavar="TIME",
                help="Keep jobs still running as open allocations, closed at this ISO 8601 time "
                "when the trace is read (without it they are rejected).",
            ),
        ] = None,
        fields: Annotated[
            str | None,
            typer.Option(
                "--fields",
                metavar="F1,F2,…",
                help="The fields of a `--noheader` export, in the order `--format` listed them.",
            ),
        ] = None,
        delimiter: Annotated[
            str,
            typer.Option(
                "--delimiter", metavar="CHARS", help="The delimiter it was exported with."
            ),
        ] = "|",
        sku: SkuOpt = None,
        sku_map: Annotated[
            list[str] | None,
            typer.Option(
                "--sku-map",
                metavar="TYPE=SKU",
                help="Write SKU on the allocations of Slurm's GPU type TYPE (repeatable); "
                "a type not mapped keeps its Slurm name.",
            ),
        ] = None,
        capacity_map: Annotated[
            list[str] | None,
            typer.Option(
                "--capacity-map",
                metavar="PARTITION=CAPACITY",
                help="Write CAPACITY on the allocations of PARTITION (repeatable); the others "
                "get `--capacity`.",
            ),
        ] = None,
        price: PriceOpt = None,
        zone: ZoneOpt = None,
    ) -> None:
        """Slurm accounting records (`sacct --parsable2 --duplicates`; `--parsable`, any
        `--delimiter`, `--noheader` read with `--fields`; or `sacct --json`, found by its
        content) as a trace: one allocation per attempt, the same attempt in overlapping
        exports once. A text export needs `--tz`; a JSON one does not.

        Exit codes: 0 written, 2 bad input, 3 internal error, 130 interrupted.
        """
        tzone = read_zone(tz) if tz is not None else None
        when = parse_open_at(open_at)
        check_delimiter(delimiter)
        names = _fields(fields)
        caps = _mapping("--capacity-map", capacity_map, "PARTITION=CAPACITY")
        for partition, cap in caps.items():
            if cap not in CAPACITIES:
                guess = did_you_mean(cap, CAPACITIES)
                raise usage_error(
                    f"`--capacity-map {partition}={cap}`: `{cap}` is not a capacity",
                    help=f"did you mean `{guess}`?" if guess else "use " + ", ".join(CAPACITIES),
                )
        settings = Allocations(
            capacity=_capacity(capacity),
            capacity_map=caps,
            sku=_text("--sku", sku),
            sku_map=_mapping("--sku-map", sku_map, "TYPE=SKU", fold=True),
            price=_price(price),
            zone=_text("--zone", zone),
        )

        def adapter() -> ImportResult:
            return import_sacct(
                file, tzone, open_at=when, fields=names, delimiter=delimiter,
                allocations=settings,
            )  # fmt: skip

        _run(file, out_path, rejects, adapter)

    @import_app.command("focus")
    @guarded(fmt_param=None)
    def focus_cmd(
        file: FileArg,
        run_from: Annotated[
            str,
            typer.Option(
                "--run-from",
                metavar="tag:KEY|resource",
                help="Where each line's run is: `tag:KEY` (a key of Tags) or `resource` "
                "(ResourceId).",
            ),
        ],
        out_path: OutOpt = None,
        rejects: RejectsOpt = None,
    ) -> None:
        """A FOCUS billing export (FOCUS 1.0–1.3, CSV or Parquet) as invoice lines.

        Exit codes: 0 written, 2 bad input, 3 internal error, 130 interrupted.
        """
        key = RunKey.parse(run_from)
        if key is None:
            raise usage_error(
                f"`--run-from {run_from}` is neither `tag:KEY` nor `resource`",
                help="for example `--run-from tag:training_run`",
            )
        _run(file, out_path, rejects, lambda: import_focus(file, key))

    @import_app.command("attempts")
    @guarded(fmt_param=None)
    def attempts_cmd(
        file: FileArg,
        tz: TzOpt,
        out_path: OutOpt = None,
        rejects: RejectsOpt = None,
        capacity: CapacityOpt = None,
        sku: SkuOpt = None,
        price: PriceOpt = None,
        zone: ZoneOpt = None,
    ) -> None:
        """Job attempt lists (JSON, as the Philly trace) as a trace: every attempt an
        allocation, every attempt but the last failed.

        Exit codes: 0 written, 2 bad input, 3 internal error, 130 interrupted.
        """
        tzone = read_zone(tz)
        cap = _capacity(capacity)
        text = {"sku": _text("--sku", sku), "zone": _text("--zone", zone)}
        cost = _price(price)

        def adapter() -> ImportResult:
            return import_attempts(file, tzone, capacity=cap, price=cost, **text)

        _run(file, out_path, rejects, adapter)

    @import_app.command("availability")
    @guarded(fmt_param=None)
    def availability_cmd(
        file: FileArg,
        start: Annotated[
            str,
            typer.Option(
                "--start",
                metavar="TIME",
                help="The wall-clock time of the trace's tick 0 (ISO 8601 with an offset).",
            ),
        ],
        out_path: OutOpt = None,
        run_id: Annotated[
            str | None,
            typer.Option(metavar="ID", help="The run's id (default: the file's name)."),
        ] = None,
        gpus: Annotated[
            int,
            typer.Option(min=1, max=MAX_GPUS, metavar="N", help="GPUs per instance."),
        ] = 1,
        sku: Annotated[str | None, typer.Option(metavar="SKU", help="The instances' SKU.")] = None,
        zone: Annotated[
            str | None, typer.Option(metavar="ZONE", help="The instances' zone.")
        ] = None,
        capacity: Annotated[
            str,
            typer.Option(metavar="|".join(CAPACITIES), help="The allocations' capacity."),
        ] = "spot",
        price: Annotated[
            str | None,
            typer.Option(metavar="PRICE", help="A price per GPU-hour on every allocation."),
        ] = None,
    ) -> None:
        """A spot availability trace (SkyPilot JSON or Bamboo add/remove CSV) as
        allocations: each stretch of capacity an allocation, ended by a reclaim.

        Exit codes: 0 written, 2 bad input, 3 internal error, 130 interrupted.
        """
        when = parse_open_at(start, "--start")
        assert when is not None  # a required option
        cap = _capacity(capacity)
        cost = _price(price)
        for flag, value in (("--run-id", run_id), ("--sku", sku), ("--zone", zone)):
            _text(flag, value)
        if run_id is None and not file.stem.strip():
            raise usage_error(
                f"`{file}` has no name to make a run id of", help="give one with `--run-id ID`"
            )

        def adapter() -> ImportResult:
            return import_availability(
                file, when, run_id=run_id, gpus=gpus, sku=sku, zone=zone, capacity=cap,
                price=cost,
            )  # fmt: skip

        _run(file, out_path, None, adapter)

    app.add_typer(import_app, name="import")


_PRICE = re.compile(r"[0-9]{1,20}(\.[0-9]{1,18})?")


def _price(text: str | None) -> Decimal | None:
    """``--price``: a plain decimal of ASCII digits, at most 20 before the point (below 10^20,
    what a trace's ``price`` holds) and 18 after; exact, never a float.

    >>> _price("2.50"), _price(None)
    (Decimal('2.50'), None)
    """
    if text is None:
        return None
    if _PRICE.fullmatch(text.strip()) is None:
        raise usage_error(
            f"`--price {text}` is not a price per GPU-hour",
            help="a decimal of at least 0 and below 10^20 with at most 18 places, e.g. 2.50",
        )
    return Decimal(text.strip())


def _text(flag: str, value: str | None) -> str | None:
    """A name given to a flag (``--sku``, ``--zone``): E502 when it is empty, holds a
    control character, or bytes that are not UTF-8 (which Python keeps as lone surrogates,
    and no trace can hold)."""
    if value is not None and not value.strip():
        raise usage_error(f"`{flag}` is empty", help=f"leave `{flag}` out to write none")
    if value is not None and any(unicodedata.category(ch) == "Cs" for ch in value):
        raise usage_error(
            f"`{flag} {value!r}` holds bytes that are not UTF-8",
            help="give the name as UTF-8 text, as the trace holds it",
        )
    if value is not None and any(unicodedata.category(ch) == "Cc" for ch in value):
        raise usage_error(
            f"`{flag} {value!r}` holds a control character",
            help="a name with a tab, newline or escape in it cannot be typed back",
        )
    return value


def _mapping(
    flag: str, values: list[str] | None, form: str, *, fold: bool = False
) -> dict[str, str]:
    """Repeated ``KEY=VALUE`` flags as a mapping (blanks around each side taken off; keys in
    lower case with ``fold``); E502 for one without ``=``, an empty side, a control character,
    or a key mapped twice to different values."""
    out: dict[str, str] = {}
    for item in values or []:
        key, eq, value = (part.strip() for part in item.partition("="))
        key = key.lower() if fold else key
        if not eq or not key or not value:
            raise usage_error(
                f"`{flag} {item}` is not `{form}`", help=f"for example `{flag} {_EXAMPLES[flag]}`"
            )
        _text(flag, item)
        if out.setdefault(key, value) != value:
            raise usage_error(
                f"`{flag}` maps `{key}` twice: to `{out[key]}` and to `{value}`",
                help="give each one value",
            )
    return out


_EXAMPLES = {"--sku-map": "a100_80=A100-80G", "--capacity-map": "gpu-spot=spot"}


def _fields(text: str | None) -> list[str] | None:
    """``--fields F1,F2,…``: E502 when a name is empty or holds a control character."""
    if text is None:
        return None
    _text("--fields", text)
    names = [f.strip() for f in text.split(",")]
    if any(not n for n in names):
        raise usage_error(
            f"`--fields {text}` has an empty field name",
            help="name the fields in the order `sacct --format` listed them, e.g. "
            "`--fields JobID,State,Start,End,AllocTRES`",
        )
    return names


def _capacity(value: str | None) -> str | None:
    if value is None or value in CAPACITIES:
        return value
    guess = did_you_mean(value, CAPACITIES)
    raise usage_error(
        f"`--capacity {value}` is not a capacity",
        help=f"did you mean `{guess}`?" if guess else "use " + ", ".join(CAPACITIES),
    )


def _run(
    file: Path, out_path: Path | None, rejects: Path | None, adapter: Callable[[], ImportResult]
) -> None:
    target = out_path if out_path is not None else file.with_suffix(".parquet")
    if out_path is None and target.exists():
        raise usage_error(
            f"`{target}` already exists",
            help="pass `--out PATH` to choose where to write the trace",
        )
    outputs = Outputs([file])  # nothing written may be the input, or another output
    outputs.add(target, "--out", TRACE_SUFFIXES)
    outputs.add(rejects, "--rejects")
    with progress_status() as step:
        step(f"reading {file}")
        result = adapter()
        if rejects is not None:
            write_table(rejects_frame(result.report.rejects), rejects)
        if result.events.height == 0:
            out.print(render_import(result.report, None, rejects), markup=False, end="")
            raise nothing_imported(result.report, rejects)
        step(f"writing {target}")
        write_trace_file(result.events, target)
    out.print(render_import(result.report, target, rejects), markup=False, end="")
    exit_with(ExitCode.OK)


def nothing_imported(report: ImportReport, rejects: Path | None) -> ContractlangError:
    """I007: the import made no event (every row rejected, or none to read); no trace is
    written, since an empty one would pass for a month with nothing in it."""
    name = report.source
    if report.rejects:
        why = (
            f"every row of `{name}` was rejected"
            if not report.rows_mapped
            else (f"no row of `{name}` made an event")
        )
        where = f"in `{rejects}`" if rejects is not None else "above; `--rejects PATH` keeps all"
        help = f"the reasons are {where}"
    else:
        why = f"`{name}` has no rows that make events"
        help = (
            "no instance is ever available in the trace"
            if report.adapter == "availability"
            else "the file has a header and nothing else, or only rows that make no event"
        )
    return ContractlangError(
        [error("I007", f"nothing to import: {why}; no trace was written", NO_SPAN, file=name,
               help=help)]
    )  # fmt: skip
