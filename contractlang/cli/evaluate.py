"""`contractlang evaluate TERMS… TRACE`: the ledger, per-run figures, metrics and verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
from contractlang.cli.files import Outputs
from contractlang.cli.inputs import progress_status, split_terms_and_traces, usage_error
from contractlang.cli.options import Format, Ledger, Runs
from contractlang.cli.reading import (
    DEFAULT_CLOCK_SKEW,
    ClockSkew,
    OnInvalid,
    OpenAt,
    reading,
    write_set_aside,
)
from contractlang.cli.report import Report, write_report
from contractlang.cli.tables import write_table
from contractlang.errors import ExitCode
from contractlang.evaluate.results import Evaluation
from contractlang.pipeline.evaluation import Engine, EvaluateOptions, evaluate
from contractlang.render.evaluate.json import render_json
from contractlang.render.evaluate.terminal import render_summary
from contractlang.render.report import REPORT_SUFFIXES


def parse_shards(text: str) -> int | None:
    """``--shards``: a whole number of at least 1, or ``auto`` (None)."""
    if text.strip().lower() == "auto":
        return None
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise usage_error(
            f"`--shards` must be a whole number of at least 1, or `auto`, not `{text}`"
        )
    return count


def parse_engine(text: str, address: str | None) -> Engine:
    """``--engine``: ``local`` or ``ray``; ``--ray-address`` only with ``ray``."""
    if text not in ("local", "ray"):
        raise usage_error(f"`--engine` must be `local` or `ray`, not `{text}`")
    if address is not None and text != "ray":
        raise usage_error("`--ray-address` needs `--engine ray`")
    return "ray" if text == "ray" else "local"


def exit_code(result: Evaluation) -> ExitCode:
    return ExitCode.NOT_MET if result.verdict == "not met" else ExitCode.OK


def register(app: typer.Typer) -> None:
    @app.command("evaluate")
    @guarded()
    def evaluate_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                metavar="FILE...",
                help="Terms files (.spot) and the trace (.parquet, .csv, .ndjson; several files "
                "are read as one trace).",
            ),
        ],
        fmt: Format = OutputFormat.text,
        ledger: Ledger = None,
        runs: Runs = None,
        contract: Annotated[
            list[str] | None,
            typer.Option(metavar="NAME", help="Evaluate only this contract (repeatable)."),
        ] = None,
        report: Report = None,
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
        on_invalid: OnInvalid = "strict",
        shards: Annotated[
            str,
            typer.Option(
                "--shards",
                metavar="N|auto",
                help="Evaluate the trace N shards of its runs at a time (same output); auto: "
                "as many as a quarter of the available memory needs (docs/scale.md).",
            ),
        ] = "auto",
        engine: Annotated[
            str,
            typer.Option(
                "--engine",
                metavar="local|ray",
                help="Where the shards run: in this process, or as Ray tasks (pip install "
                "'contractlang[ray]').",
            ),
        ] = "local",
        ray_address: Annotated[
            str | None,
            typer.Option(
                "--ray-address",
                metavar="HOST:PORT",
                help="The Ray cluster's head (with --engine ray; default: a new local Ray).",
            ),
        ] = None,
    ) -> None:
        """Apply contract terms to a usage trace: ledger, per-run figures, budget verdicts.

        Exit codes: 0 every budget met (or none given), 1 a budget not met, 2 bad input,
        3 internal error, 130 interrupted.
        """
        terms, traces = split_terms_and_traces(paths)
        outputs = Outputs([*terms, *traces])
        outputs.add(ledger, "--ledger")
        outputs.add(runs, "--runs")
        outputs.add(report, "--report", REPORT_SUFFIXES)
        options = reading(open_at, clock_skew, on_invalid, outputs)
        count = parse_shards(shards)
        chosen = parse_engine(engine, ray_address)
        with progress_status() as step:
            asked = EvaluateOptions(
                contracts=contract,
                shards=count,
                engine=chosen,
                ray_address=ray_address,
                ledger=ledger is not None,
                keep_events=False,
                digest=fmt is OutputFormat.json,
                all_columns=report is not None,
                **options.load_options(),
            )
            result = evaluate(terms, traces, asked, progress=step)
            write_set_aside(result.trace, options)
            if ledger is not None:
                step("writing the ledger")
                write_table(result.ledger(), ledger)
            if runs is not None:
                step("writing the per-run table")
                write_table(result.runs_table(), runs)
            if report is not None:
                step("writing the report")
                write_report(result, report)
        warnings = [*result.warnings, *(w for c in result.contracts for w in c.warnings)]
        if fmt is OutputFormat.json:
            write_stdout(render_json(result))
        else:
            print_diagnostics(warnings, result.sources, OutputFormat.text)
            render_summary(result, out.console)
            for path, what in ((ledger, "ledger"), (runs, "per-run table"), (report, "report")):
                if path is not None:
                    err.print(f"wrote the {what} to {path}", markup=False)
        exit_with(exit_code(result))
