"""`contractlang simulate TERMS… --workload W`: the failure budget before any trace exists."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import (
    OutputFormat,
    err,
    exit_with,
    guarded,
    os_reason,
    out,
    print_diagnostics,
    write_error,
    write_stdout,
)
from contractlang.cli.files import Outputs, write_table
from contractlang.cli.inputs import progress_status, usage_error
from contractlang.cli.report import Report, write_report
from contractlang.errors import ExitCode
from contractlang.evaluate.results import Evaluation
from contractlang.render.report import REPORT_SUFFIXES
from contractlang.render.simulate_json import render_simulation_json
from contractlang.render.simulate_terminal import render_simulation
from contractlang.simulate import Simulation, simulate
from contractlang.simulate.bootstrap import RESAMPLES

MIN_RESAMPLES, MAX_RESAMPLES = 100, 100_000


def exit_code(result: Simulation) -> ExitCode:
    return ExitCode.NOT_MET if result.verdict == "not met" else ExitCode.OK


def check_terms(paths: list[Path]) -> None:
    if not paths:
        raise usage_error("expected one or more terms files (`.spot`)")
    for p in paths:
        if p.suffix != ".spot":
            raise usage_error(
                f"`{p}` is not a `.spot` terms file",
                help="give terms files as arguments and the workload with `--workload W.toml`",
            )


def prepare_trace_dir(path: Path | None) -> None:
    """`--trace-out DIR`: made when missing (its parent must exist), never a file."""
    if path is None:
        return
    if path.exists() and not path.is_dir():
        raise usage_error(f"`--trace-out {path}`: `{path}` is a file, not a folder")
    if not path.parent.exists():
        raise usage_error(f"`--trace-out {path}`: the folder `{path.parent}` does not exist")
    try:
        path.mkdir(exist_ok=True)
        probe = path / ".contractlang-write-test"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise write_error(path, os_reason(exc)) from None


SIMULATED = (
    "Simulated: each draft is evaluated on the trace simulated under its own promises "
    "(common random numbers keep the drafts in step); the figures carry Monte Carlo error — "
    "the terminal and the JSON document give every 95% interval.",
)


def simulated_evaluation(sim: Simulation) -> Evaluation:
    """Every simulated contract as one evaluation, for the report."""
    first = sim.evaluations[0]
    return Evaluation(
        tuple(c.result for c in sim.contracts), sim.budgets, first.trace, sim.warnings,
        sim.sources,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    @app.command("simulate")
    @guarded()
    def simulate_cmd(
        terms: Annotated[
            list[Path], typer.Argument(metavar="TERMS...", help="Terms files (.spot).")
        ],
        workload: Annotated[
            Path, typer.Option("--workload", "-w", metavar="FILE", help="The workload file (TOML).")
        ],
        fmt: Annotated[
            OutputFormat,
            typer.Option("--format", metavar="text|json", help="text for people, json for tools"),
        ] = OutputFormat.text,
        ledger: Annotated[
            Path | None,
            typer.Option(
                metavar="PATH", help="Write every contract's line items (.parquet, .csv)."
            ),
        ] = None,
        runs: Annotated[
            Path | None,
            typer.Option(metavar="PATH", help="Write the per-run table (.parquet or .csv)."),
        ] = None,
        trace_out: Annotated[
            Path | None,
            typer.Option(
                metavar="DIR", help="Keep each contract's trace as DIR/<contract>.parquet."
            ),
        ] = None,
        contract: Annotated[
            list[str] | None,
            typer.Option(metavar="NAME", help="Simulate only this contract (repeatable)."),
        ] = None,
        resamples: Annotated[
            int, typer.Option(metavar="N", help="Bootstrap resamples for the 95% intervals.")
        ] = RESAMPLES,
        report: Report = None,
    ) -> None:
        """Simulate a workload under each contract's promises, evaluate the simulated
        traces, and give every figure with its Monte Carlo error.

        Exit codes: 0 every budget met (or none given), 1 a budget not met, 2 bad input,
        3 internal error.
        """
        check_terms(terms)
        if not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
            raise usage_error(
                f"`--resamples {resamples}` must be between {MIN_RESAMPLES:,} and {MAX_RESAMPLES:,}"
            )
        outputs = Outputs([*terms, workload])
        outputs.add(ledger, "--ledger")
        outputs.add(runs, "--runs")
        outputs.add(report, "--report", REPORT_SUFFIXES)
        prepare_trace_dir(trace_out)
        with progress_status() as step:
            result = simulate(
                terms,
                workload,
                trace_dir=trace_out,
                resamples=resamples,
                contracts=contract,
                progress=step,
            )
            if ledger is not None:
                step("writing the ledger")
                write_table(result.ledger(), ledger)
            if runs is not None:
                step("writing the per-run table")
                write_table(result.runs_table(), runs)
            if report is not None:
                step("writing the report")
                write_report(simulated_evaluation(result), report, SIMULATED)
        if fmt is OutputFormat.json:
            write_stdout(render_simulation_json(result))
        else:
            print_diagnostics(result.warnings, result.sources, OutputFormat.text)
            render_simulation(result, out)
            for path, what in ((ledger, "ledger"), (runs, "per-run table"), (report, "report")):
                if path is not None:
                    err.print(f"wrote the {what} to {path}", markup=False)
            if trace_out is not None:
                err.print(f"wrote the traces to {trace_out}", markup=False)
        exit_with(exit_code(result))
