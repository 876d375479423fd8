"""`contractlang simulate TERMS… --workload W`: the failure budget before any trace exists."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
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
from contractlang.cli.inputs import progress_status, usage_error
from contractlang.cli.options import Format, Ledger, Runs, TraceOut
from contractlang.cli.report import Report, write_report
from contractlang.cli.tables import write_table
from contractlang.errors import ExitCode, cannot_write, os_reason
from contractlang.evaluate.results import Evaluation
from contractlang.lang.terms import Terms
from contractlang.pipeline.language import load_terms
from contractlang.render.report import REPORT_SUFFIXES
from contractlang.render.simulate.json import render_simulation_json
from contractlang.render.simulate.terminal import render_simulation
from contractlang.simulate import LoadedWorkload, Simulation, load_workload, simulate
from contractlang.simulate.bootstrap import RESAMPLES
from contractlang.simulate.run import choose, trace_files

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


def plan_outputs(
    terms: list[Path],
    t: Terms,
    lw: LoadedWorkload,
    contracts: list[str] | None,
    files: dict[str, Path | None],
    trace_out: Path | None,
    report: Path | None = None,
) -> None:
    """Every file the command reads and writes, checked before any work: no output is an
    input (the terms, the workload, its availability trace) or another output (``--ledger``,
    ``--runs``, ``--report``, each ``DIR/<contract>.parquet``), E502 otherwise."""
    outputs = Outputs([*terms, lw.source.name, *lw.inputs])
    outputs.add_folder(trace_out, "--trace-out")  # first: other outputs may be made in it
    for flag, path in files.items():
        outputs.add(path, flag)
    outputs.add(report, "--report", REPORT_SUFFIXES)
    if trace_out is not None:
        for path in trace_files(t, trace_out, contracts):
            outputs.add(path, "--trace-out", (".parquet",))


@contextmanager
def trace_dir(path: Path | None) -> Iterator[None]:
    """``--trace-out DIR``, made when missing (its outputs are planned already); a folder this
    command made is removed again when the command fails and leaves it empty."""
    if path is None:
        yield
        return
    made = not path.exists()
    try:
        path.mkdir(exist_ok=True)
    except OSError as exc:
        raise cannot_write(path, os_reason(exc)) from None
    try:
        yield
    except BaseException:
        if made:
            with suppress(OSError):
                path.rmdir()  # only when empty
        raise


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
        fmt: Format = OutputFormat.text,
        ledger: Ledger = None,
        runs: Runs = None,
        trace_out: TraceOut = None,
        contract: Annotated[
            list[str] | None,
            typer.Option(metavar="NAME", help="Simulate only this contract (repeatable)."),
        ] = None,
        baseline: Annotated[
            str | None,
            typer.Option(
                metavar="NAME",
                help="Measure the others against this contract (default: the first).",
            ),
        ] = None,
        resamples: Annotated[
            int, typer.Option(metavar="N", help="Bootstrap resamples for the 95% intervals.")
        ] = RESAMPLES,
        report: Report = None,
    ) -> None:
        """Simulate a workload under each contract's promises, evaluate the simulated
        traces, and give every figure with its Monte Carlo error.

        Exit codes: 0 every budget met (or none given), 1 a budget not met, 2 bad input,
        3 internal error, 130 interrupted.
        """
        check_terms(terms)
        if not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
            raise usage_error(
                f"`--resamples {resamples}` must be between {MIN_RESAMPLES:,} and {MAX_RESAMPLES:,}"
            )
        with progress_status() as step:
            step("reading terms")
            t = load_terms(terms)
            choose(t, contract, baseline)
            step("reading the workload")
            lw = load_workload(workload)
            plan_outputs(
                terms, t, lw, contract, {"--ledger": ledger, "--runs": runs}, trace_out, report
            )
            with trace_dir(trace_out):
                result = simulate(
                    t,
                    lw,
                    trace_dir=trace_out,
                    resamples=resamples,
                    contracts=contract,
                    baseline=baseline,
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
                write_report(simulated_evaluation(result), report, SIMULATED, result.baseline)
        if fmt is OutputFormat.json:
            write_stdout(render_simulation_json(result))
        else:
            print_diagnostics(result.warnings, result.sources, OutputFormat.text)
            render_simulation(result, out.console)
            for path, what in ((ledger, "ledger"), (runs, "per-run table"), (report, "report")):
                if path is not None:
                    err.print(f"wrote the {what} to {path}", markup=False)
            if trace_out is not None:
                err.print(f"wrote the traces to {trace_out}", markup=False)
        exit_with(exit_code(result))
