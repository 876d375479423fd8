"""`contractlang trace validate|facts|generate`: check a trace, derive its facts, make one.

contractlang trace validate trace.parquet            # exit 0 valid, 2 invalid
contractlang trace facts trace.parquet --out facts.parquet --runs-out runs.parquet
contractlang trace generate --runs 200 --seed 1 --out examples/trace.parquet
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from contractlang.cli.common import (
    OutputFormat,
    err,
    exit_with,
    guarded,
    out,
    print_diagnostics,
    write_stdout,
)
from contractlang.cli.files import TRACE_SUFFIXES, Outputs, write_file
from contractlang.cli.inputs import parse_open_at, progress_status, usage_error
from contractlang.cli.options import Format
from contractlang.cli.reading import (
    DEFAULT_CLOCK_SKEW,
    ClockSkew,
    OnInvalid,
    OpenAt,
    Reading,
    reading,
    write_set_aside,
)
from contractlang.cli.tables import POLARS_FAILURES, write_table, write_trace_file
from contractlang.errors import ContractlangError, ExitCode
from contractlang.lang.numbers import MAX_TS, MIN_TS, TRACE_DAYS
from contractlang.render.common.numbers import counted
from contractlang.render.common.tables import csv_ready
from contractlang.render.trace.json import summary_json
from contractlang.render.trace.terminal import invalid_total, render_summary, valid_total
from contractlang.trace import derive_facts, load_trace, summarize
from contractlang.trace.generate import (
    BATCH_DAYS,
    BATCH_REACH,
    BATCH_RUNS,
    DAY,
    DEFAULT_START,
    HOUR,
    MAX_INVOICE_DELAY,
    MAX_RUNTIME,
    MAX_SEGMENTS,
    MAX_WAIT,
    SPAN,
    generate_batches,
    latest_time,
    write_generated,
)
from contractlang.trace.model import Trace
from contractlang.trace.schema import TraceSummary

TraceArg = Annotated[
    list[Path],
    typer.Argument(
        help="The trace (.parquet, .csv, .ndjson); several files are read as one trace.",
        show_default=False,
        metavar="TRACE...",
    ),
]
MaxProblems = Annotated[
    int, typer.Option("--max-problems", min=1, metavar="N", help="Show at most this many problems.")
]


def register(app: typer.Typer) -> None:
    trace_app = typer.Typer(
        name="trace",
        help="Validate a usage trace, derive its facts, or generate a realistic one.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )

    @trace_app.command("validate")
    @guarded()
    def validate_cmd(
        trace: TraceArg,
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
        on_invalid: OnInvalid = "strict",
        fmt: Format = OutputFormat.text,
        max_problems: MaxProblems = 50,
    ) -> None:
        """Check every rule of the trace schema and print a summary.

        Exit codes: 0 valid (with `--on-invalid quarantine`: the runs left are), 2 invalid
        (every problem with its row and rule), 3 internal error, 130 interrupted.
        """
        # a bad option is a command-line error, not the trace's
        options = reading(open_at, clock_skew, on_invalid, Outputs(trace))
        try:
            loaded, summary = _load_and_summarize(trace, options, max_problems)
        except ContractlangError as exc:
            if fmt is OutputFormat.json:
                raise
            print_diagnostics(exc.diagnostics, exc.sources, OutputFormat.text)
            err.print(invalid_total(exc), markup=False)
            exit_with(ExitCode.BAD_INPUT)
        write_set_aside(loaded, options)
        _report(loaded, summary, fmt, {})
        if fmt is OutputFormat.text:
            out.print(valid_total(summary, loaded.quarantine), markup=False)

    @trace_app.command("facts")
    @guarded()
    def facts_cmd(
        trace: TraceArg,
        *,
        out_path: Annotated[
            Path | None,
            typer.Option(
                "--out", metavar="PATH", help="Write the per-allocation facts (.parquet or .csv)."
            ),
        ] = None,
        runs_out: Annotated[
            Path | None,
            typer.Option(
                "--runs-out", metavar="PATH", help="Write the per-run facts (.parquet or .csv)."
            ),
        ] = None,
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
        on_invalid: OnInvalid = "strict",
        fmt: Format = OutputFormat.text,
        max_problems: MaxProblems = 50,
    ) -> None:
        """Derive the facts of every allocation and run; print a summary, write the tables.

        Exit codes: 0 done, 2 invalid trace or bad option, 3 internal error, 130 interrupted.
        """
        outputs = Outputs(trace)
        outputs.add(out_path, "--out")
        outputs.add(runs_out, "--runs-out")
        options = reading(open_at, clock_skew, on_invalid, outputs)
        with progress_status() as step:
            step("loading the trace")
            loaded = load_trace(trace, max_problems=max_problems, **options.load_options())
            write_set_aside(loaded, options)
            step("deriving facts")
            allocations, runs = derive_facts(loaded).collect()
            written = {}
            if out_path is not None:
                step("writing allocation facts")
                write_table(csv_ready(allocations, out_path), out_path)
                written["allocation facts"] = str(out_path)
            if runs_out is not None:
                step("writing run facts")
                write_table(csv_ready(runs, runs_out), runs_out)
                written["run facts"] = str(runs_out)
        _report(loaded, summarize(loaded, runs), fmt, written)

    @trace_app.command("generate")
    @guarded(fmt_param=None)
    def generate_cmd(
        runs: Annotated[int, typer.Option("--runs", min=0, metavar="N", help="How many runs.")],
        seed: Annotated[int, typer.Option("--seed", min=0, metavar="N", help="Random seed.")] = 0,
        out_path: Annotated[
            Path,
            typer.Option(
                "--out", metavar="PATH", help="Where to write it (.parquet, .csv or .ndjson)."
            ),
        ] = Path("trace.parquet"),
        start: Annotated[
            str | None,
            typer.Option(
                "--start", metavar="TIME", help="Earliest request, ISO 8601 with an offset."
            ),
        ] = None,
    ) -> None:
        """Generate a realistic trace: the same runs and seed give the same bytes.

        Exit codes: 0 written, 2 bad option, 3 internal error, 130 interrupted.
        """
        Outputs().add(out_path, "--out", TRACE_SUFFIXES)
        begin = parse_open_at(start, "--start")
        if begin is not None and not MIN_TS <= begin < MAX_TS:
            raise usage_error(
                f"`--start {start}` is outside the times a trace holds ({TRACE_DAYS})"
            )
        _within_range(runs, begin, start)
        counts: list[tuple[int, int]] = []
        kind = out_path.suffix.lower()
        with progress_status() as step:

            def batches() -> Iterator[pl.DataFrame]:
                done = 0
                for batch in generate_batches(runs, seed, start=begin):
                    done += batch.get_column("run_id").n_unique()
                    step(f"generated {done:,} of {runs:,} runs")
                    yield batch

            step(f"generating {runs:,} runs into {out_path}")
            write_file(
                out_path,
                lambda target: counts.append(write_generated(batches(), target, kind=kind)),
                POLARS_FAILURES,
            )
        ((events, allocations),) = counts
        err.print(
            f"wrote {counted(events, 'event')} ({counted(runs, 'run')}, "
            f"{counted(allocations, 'allocation')}) to {out_path}",
            markup=False,
        )

    @trace_app.command("merge")
    @guarded(fmt_param=None)
    def merge_cmd(
        traces: TraceArg,
        out_path: Annotated[
            Path,
            typer.Option(
                "--out", metavar="PATH", help="Where to write it (.parquet, .csv or .ndjson)."
            ),
        ],
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
        on_invalid: OnInvalid = "strict",
        max_problems: MaxProblems = 50,
    ) -> None:
        """Read several trace files as one trace and write it as one file (the scheduler's
        export and the invoice's, say): every rule is checked over all the rows together.

        Exit codes: 0 written, 2 an invalid trace or a bad option, 3 internal error,
        130 interrupted.
        """
        outputs = Outputs(traces)
        outputs.add(out_path, "--out", TRACE_SUFFIXES)
        options = reading(open_at, clock_skew, on_invalid, outputs)
        with progress_status() as step:
            step("loading the traces")
            loaded = load_trace(traces, max_problems=max_problems, **options.load_options())
            write_set_aside(loaded, options)
            step(f"writing {out_path}")
            write_trace_file(loaded.as_frame(), out_path)
        print_diagnostics(loaded.warnings, {}, OutputFormat.text)
        s = loaded.summary
        err.print(
            f"wrote {counted(s.rows_read, 'event')} ({counted(len(traces), 'file')}, "
            f"{counted(s.runs, 'run')}, {counted(s.allocations, 'allocation')}) to {out_path}",
            markup=False,
        )

    app.add_typer(trace_app, name="trace")


def _load_and_summarize(
    path: list[Path], options: Reading, max_problems: int
) -> tuple[Trace, TraceSummary]:
    with progress_status() as step:
        step("loading the trace")
        loaded = load_trace(path, max_problems=max_problems, **options.load_options())
        step("deriving facts")
        _, runs = derive_facts(loaded).collect()
    return loaded, summarize(loaded, runs)


def _report(
    loaded: Trace, summary: TraceSummary, fmt: OutputFormat, written: dict[str, str]
) -> None:
    if fmt is OutputFormat.json:
        doc = summary_json(summary, loaded)
        write_stdout(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return
    print_diagnostics(loaded.warnings, {}, OutputFormat.text)
    render_summary(summary, loaded.source, out.console, loaded.quarantine)
    for what, path in written.items():
        err.print(f"wrote the {what} to {path}", markup=False)


def _within_range(runs: int, begin: datetime | None, start: str | None) -> None:
    """E502, before any work, when ``runs`` runs from ``--start`` could put generated events
    after the last day a trace holds (a trace written so would fail every command that reads
    it): the latest time is an upper bound from the generator's parameters
    (:func:`contractlang.trace.generate.latest_time`), said in the help."""
    if runs == 0:
        return
    latest = latest_time(runs, begin)
    if latest is not None and latest < MAX_TS:
        return
    given = f"`--start {start}`" if start is not None else "the default `--start`"
    when = f"as late as {latest:%Y-%m-%dT%H:%M:%SZ}" if latest is not None else "past the year 9999"
    fix = "fewer `--runs`"
    if latest is not None:  # the latest start, to the second, whose events stay within
        reach = latest - (begin or DEFAULT_START)
        last = (MAX_TS - reach - timedelta(microseconds=1)).replace(microsecond=0)
        if last >= MIN_TS:
            fix = f"a `--start` no later than {last:%Y-%m-%dT%H:%M:%SZ}, or fewer `--runs`"
    raise usage_error(
        f"`--runs {runs}` from {given} could put generated events {when}, outside the times "
        f"a trace holds ({TRACE_DAYS})",
        help=f"a batch of up to {BATCH_RUNS:,} runs spans at most {_span(BATCH_REACH)} from "
        f"its start (runs start within {SPAN // DAY} days; a run has at most {MAX_SEGMENTS} "
        f"segments of at most {MAX_RUNTIME // DAY} days, waits of at most "
        f"{MAX_WAIT // DAY} days, invoice lines at most {MAX_INVOICE_DELAY // HOUR} hours "
        f"after its end), and each further batch starts {BATCH_DAYS} days later; give {fix}",
    )


def _span(us: int) -> str:
    """Microseconds as days and a time of day: ``376 days 12:01:31``, the microseconds cut.

    >>> _span(BATCH_REACH)
    '376 days 12:01:31'
    """
    days, rest = divmod(us // 1_000_000, 86_400)
    return f"{days} days {rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
