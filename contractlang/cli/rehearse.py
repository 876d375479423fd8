"""`contractlang rehearse TERMS… --command CMD | --mock`: interrupt a real job as a spot
provider would, and bill what happened under each draft (docs/rehearse.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import (
    INTERRUPTED,
    OutputFormat,
    err,
    exit_with,
    guarded,
    out,
    print_diagnostics,
    write_stdout,
)
from contractlang.cli.files import TRACE_SUFFIXES, Outputs
from contractlang.cli.inputs import progress_status, usage_error
from contractlang.cli.options import Format, Ledger, Runs, TraceOut
from contractlang.cli.report import Report, write_report
from contractlang.cli.tables import write_table, write_trace_file
from contractlang.errors import ExitCode
from contractlang.evaluate.results import Evaluation
from contractlang.lang.terms import Terms
from contractlang.pipeline.language import load_terms
from contractlang.rehearse import AllocationSpec, RehearsalReport, RehearsalSettings, rehearse
from contractlang.rehearse.allocation import safe_name
from contractlang.rehearse.settings import (
    command_from_text,
    evenly,
    mock_command,
    parse_duration,
    parse_price,
    parse_progress,
    parse_scale,
    parse_signal,
)
from contractlang.render.rehearse.json import render_json
from contractlang.render.rehearse.terminal import render_rehearsal
from contractlang.render.report import REPORT_SUFFIXES


def exit_code(report: RehearsalReport) -> ExitCode:
    return ExitCode.NOT_MET if report.verdict == "not met" else ExitCode.OK


def trace_file(folder: Path, contract: str) -> Path:
    """``DIR/<contract>.parquet``; characters a file name should not hold become ``_``, and
    a long name is cut short.

    >>> trace_file(Path("out"), "northwind v3/b").as_posix()
    'out/northwind_v3_b.parquet'
    """
    return folder / (safe_name(contract) + ".parquet")


def plan_outputs(
    outputs: Outputs, terms: Terms, trace_out: Path | None, workdir: Path | None
) -> None:
    """Every output of a rehearsal, checked before anything runs or is made: the
    ``--trace-out`` folder and its ``DIR/<contract>.parquet`` for every draft, and the
    ``--workdir`` folder (the rehearsal's own: new or empty, no other output inside it). Two
    drafts whose names make the same file name (``a/b`` and ``a_b``) are E502 saying so (it
    was "the same file as" itself, naming neither draft)."""
    outputs.add_folder(trace_out, "--trace-out")
    outputs.add_folder(workdir, "--workdir", own=True)
    if trace_out is not None:
        named: dict[str, str] = {}  # file name → the draft it is for
        for c in terms.contracts:
            path = trace_file(trace_out, c.name)
            other = named.setdefault(path.name, c.name)
            if other != c.name:
                raise usage_error(
                    f"`--trace-out {trace_out}`: the drafts `{other}` and `{c.name}` would both "
                    f"be written to `{path}`",
                    help="a draft's file name keeps its first 100 letters, digits, `.`, `_` and "
                    "`-` (any other character becomes `_`): rename one of the two drafts",
                )
            outputs.add(path, "--trace-out", TRACE_SUFFIXES)


def _command(command: str | None, mock: bool) -> tuple[tuple[str, ...], str]:
    if mock and command is not None:
        raise usage_error("give `--command` or `--mock`, not both")
    if mock:
        return mock_command()
    if command is None:
        raise usage_error(
            'nothing to rehearse: give the job with `--command "…"`, or `--mock`',
            help='e.g. contractlang rehearse terms.spot --command "python train.py"',
        )
    return command_from_text(command), command


REHEARSED = (
    "Rehearsed: each draft is evaluated on the record of a rehearsal under its own promises "
    "(drafts with the same promises share one); the terminal shows the rehearsal's timeline.",
)


def rehearsed_evaluation(rehearsed: RehearsalReport) -> Evaluation:
    """Every rehearsed draft as one evaluation, in the terms' order, for the report."""
    first = rehearsed.rehearsals[0].evaluation
    return Evaluation(
        tuple(c for c, _ in rehearsed.drafts()), rehearsed.budgets, first.trace,
        rehearsed.warnings, rehearsed.sources,
    )  # fmt: skip


def register(app: typer.Typer) -> None:
    @app.command("rehearse")
    @guarded()
    def rehearse_cmd(
        terms: Annotated[
            list[Path], typer.Argument(metavar="TERMS...", help="Terms files (.spot).")
        ],
        command: Annotated[
            str | None,
            typer.Option(metavar="CMD", help='The job to rehearse, e.g. "python train.py".'),
        ] = None,
        mock: Annotated[
            bool, typer.Option("--mock", help="Rehearse the bundled mock job.")
        ] = False,
        interrupts: Annotated[
            int | None,
            typer.Option(metavar="N", help="Reclaims at evenly spaced shares of progress [1]."),
        ] = None,
        at: Annotated[
            str | None, typer.Option(metavar="SHARES", help="Reclaims at these shares: 30%,70%.")
        ] = None,
        notice: Annotated[
            str | None,
            typer.Option(metavar="DURATION", help="Notice lead, e.g. 10s [each draft's promise]."),
        ] = None,
        notice_signal: Annotated[
            str, typer.Option(metavar="SIGNAL", help="How the notice is sent.")
        ] = "TERM",
        replacement_wait: Annotated[
            str | None,
            typer.Option(metavar="DURATION", help="Wait before the next allocation [the promise]."),
        ] = None,
        time_scale: Annotated[
            str, typer.Option(metavar="X", help="Run notices and waits this many times faster.")
        ] = "1",
        run_id: Annotated[
            str, typer.Option(metavar="ID", help="The run's ID in the trace.")
        ] = "rehearsal",
        gpus: Annotated[int, typer.Option(metavar="N", help="GPUs in each allocation.")] = 8,
        sku: Annotated[str, typer.Option(metavar="SKU", help="The allocation's SKU.")] = "H100-80G",
        capacity: Annotated[
            str, typer.Option(metavar="CAPACITY", help="spot, on_demand or reserved.")
        ] = "spot",
        zone: Annotated[
            str | None, typer.Option(metavar="ZONE", help="The allocation's zone.")
        ] = None,
        price: Annotated[
            str, typer.Option(metavar="PRICE", help="The trace's price per GPU-hour.")
        ] = "2.50",
        steps: Annotated[
            int | None, typer.Option(metavar="N", help="The job's total steps, if it does not say.")
        ] = None,
        workdir: Annotated[
            Path | None,
            typer.Option(metavar="DIR", help="Keep checkpoints and job output here (new folder)."),
        ] = None,
        fmt: Format = OutputFormat.text,
        ledger: Ledger = None,
        runs: Runs = None,
        trace_out: TraceOut = None,
        report: Report = None,
    ) -> None:
        """Interrupt a real job as a spot provider would, and bill what happened under each
        draft.

        Exit codes: 0 every budget met (or none given), 1 a budget not met, 2 bad input (a
        flag, the terms, a command that cannot start, a checkpoint outside the checkpoint
        directory), 3 internal error, 130 interrupted (Ctrl-C, SIGTERM or SIGHUP; the job's
        processes are stopped).
        """
        for t in terms:
            if t.suffix != ".spot":
                raise usage_error(f"`{t}` is not a `.spot` terms file")
        if interrupts is not None and at is not None:
            raise usage_error("give `--interrupts N` or `--at …`, not both")
        argv, shown = _command(command, mock)
        outputs = Outputs(terms)
        outputs.add(ledger, "--ledger")
        outputs.add(runs, "--runs")
        outputs.add(report, "--report", REPORT_SUFFIXES)
        checked = load_terms(terms)
        plan_outputs(outputs, checked, trace_out, workdir)
        settings = RehearsalSettings(
            command=argv,
            shown_command=shown,
            interrupts=(
                parse_progress(at)
                if at is not None
                else evenly(1 if interrupts is None else interrupts)
            ),
            notice_us=parse_duration(notice, "--notice") if notice is not None else None,
            replacement_wait_us=(
                parse_duration(replacement_wait, "--replacement-wait")
                if replacement_wait is not None
                else None
            ),
            notice_signal=parse_signal(notice_signal),
            time_scale=parse_scale(time_scale),
            run_id=run_id,
            allocation=AllocationSpec(gpus, sku, capacity, zone, parse_price(price)),
            total_steps=steps,
            workdir=workdir,
        )
        try:
            with progress_status() as step:
                rehearsed = rehearse(checked, settings, progress=step, ready=outputs.make_folders)
        except KeyboardInterrupt:
            outputs.remove_empty_folders()
            err.print("rehearsal interrupted: the job's processes were stopped", markup=False)
            raise typer.Exit(INTERRUPTED) from None
        except BaseException:
            outputs.remove_empty_folders()
            raise
        _write(rehearsed, ledger, runs, trace_out)
        if report is not None:
            write_report(rehearsed_evaluation(rehearsed), report, REHEARSED)
            err.print(f"wrote the report to {report}", markup=False)
        warnings = [
            *rehearsed.warnings,
            *(w for r in rehearsed.rehearsals for w in r.record.warnings),
            *(w for r in rehearsed.rehearsals for c in r.contracts for w in c.warnings),
        ]
        if fmt is OutputFormat.json:
            write_stdout(render_json(rehearsed))
        else:
            print_diagnostics(warnings, rehearsed.sources, OutputFormat.text)
            given = [
                f
                for f, v in (
                    ("--trace-out", trace_out),
                    ("--ledger", ledger),
                    ("--runs", runs),
                    ("--report", report),
                )
                if v
            ]
            render_rehearsal(rehearsed, out.console, given)
        exit_with(exit_code(rehearsed))


def _write(
    report: RehearsalReport, ledger: Path | None, runs: Path | None, trace_out: Path | None
) -> None:
    if ledger is not None:
        write_table(report.ledger(), ledger)
        err.print(f"wrote the ledger to {ledger}", markup=False)
    if runs is not None:
        write_table(report.runs_table(), runs)
        err.print(f"wrote the per-run table to {runs}", markup=False)
    if trace_out is not None:
        for c, r in report.drafts():
            path = trace_file(trace_out, c.name)
            write_trace_file(r.trace, path)
            err.print(f"wrote the trace of {c.name} to {path}", markup=False)
