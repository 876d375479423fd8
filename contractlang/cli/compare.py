"""`contractlang compare TERMS… TRACE`: drafts side by side over one trace, ranked by the budget,
with deltas against a baseline; `--attribute` for each clause's effect and the price to pass."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import err, exit_with, guarded, out, print_diagnostics, write_stdout
from contractlang.cli.files import Outputs
from contractlang.cli.inputs import progress_status, split_terms_and_traces, usage_error
from contractlang.cli.reading import (
    DEFAULT_CLOCK_SKEW,
    ClockSkew,
    OnInvalid,
    OpenAt,
    reading,
    write_set_aside,
)
from contractlang.cli.report import Report, write_report
from contractlang.compare.model import Comparison
from contractlang.compare.run import compare
from contractlang.errors import ExitCode
from contractlang.lang.terms import Terms
from contractlang.pipeline.language import load_terms
from contractlang.render.compare.csv import render_compare_csv
from contractlang.render.compare.json import render_compare_json
from contractlang.render.compare.terminal import render_comparison
from contractlang.render.report import REPORT_SUFFIXES


class CompareFormat(StrEnum):
    text = "text"
    json = "json"
    csv = "csv"


def exit_code(cmp: Comparison) -> ExitCode:
    """0 when some draft meets every budget (or there is none), 1 when no draft does."""
    if not cmp.evaluation.budgets or any(c.result.budgets_met for c in cmp.contracts):
        return ExitCode.OK
    return ExitCode.NOT_MET


def ranking_budget(terms: Terms, budget_file: Path | None) -> str | None:
    """The budget that ranks the drafts: the first budget of ``--budget FILE`` (E502 when it
    defines none), else the first budget of the terms."""
    if budget_file is None:
        return None
    wanted = str(budget_file)
    found = [b for f in terms.files if f.name == wanted for b in f.budgets]
    if not found:
        raise usage_error(
            f"`--budget {budget_file}` defines no budget",
            help="give a `.spot` file with a `budget` block; its first budget ranks the drafts",
        )
    return found[0].name


def register(app: typer.Typer) -> None:
    @app.command("compare")
    @guarded()
    def compare_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                metavar="FILE...",
                help="Terms files (.spot: the drafts, and budgets) and the trace (.parquet, "
                ".csv, .ndjson; several files are read as one trace).",
            ),
        ],
        budget: Annotated[
            Path | None,
            typer.Option(
                "--budget",
                metavar="FILE",
                help="A .spot file of budgets; its first budget ranks the drafts (default: "
                "the first budget of the terms).",
            ),
        ] = None,
        baseline: Annotated[
            str | None,
            typer.Option(
                "--baseline",
                metavar="NAME",
                help="The contract deltas are taken against (default: the first).",
            ),
        ] = None,
        attribute: Annotated[
            bool,
            typer.Option(
                "--attribute",
                help="Evaluate each draft without each of its exclusions, credits, caps and "
                "billing settings, and search the price multiplier at which it passes.",
            ),
        ] = False,
        report: Report = None,
        fmt: Annotated[
            CompareFormat,
            typer.Option(
                "--format",
                metavar="text|json|csv",
                help="text for people, json or csv (one row per contract and figure) for tools",
            ),
        ] = CompareFormat.text,
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
        on_invalid: OnInvalid = "strict",
    ) -> None:
        """Drafts side by side over one trace: figures, deltas against a baseline, budget
        verdicts, ranked by the budget's headline requirement.

        Exit codes: 0 some draft meets every budget (or none given), 1 no draft does, 2 bad
        input, 3 internal error, 130 interrupted.
        """
        if budget is not None and budget.suffix != ".spot":
            raise usage_error(f"`--budget {budget}`: the budgets file must end in `.spot`")
        files = [*paths, *([budget] if budget is not None and budget not in paths else [])]
        terms_paths, traces = split_terms_and_traces(files)
        outputs = Outputs([*terms_paths, *traces])
        outputs.add(report, "--report", REPORT_SUFFIXES)
        options = reading(open_at, clock_skew, on_invalid, outputs)
        with progress_status() as step:
            step("reading terms")
            terms = load_terms(terms_paths)
            cmp = compare(
                terms,
                traces,
                ranking=ranking_budget(terms, budget),
                baseline=baseline,
                attribute_clauses=attribute,
                progress=step,
                digest=fmt is CompareFormat.json,
                **options.load_options(),
            )
            write_set_aside(cmp.evaluation.trace, options)
            if report is not None:
                step("writing the report")
                write_report(cmp, report)
        result = cmp.evaluation
        warnings = [*result.warnings, *(w for c in result.contracts for w in c.warnings)]
        if fmt is CompareFormat.json:
            write_stdout(render_compare_json(cmp))
        elif fmt is CompareFormat.csv:
            print_diagnostics(warnings, result.sources)
            write_stdout(render_compare_csv(cmp))
        else:
            print_diagnostics(warnings, result.sources)
            render_comparison(cmp, out.console)
        if report is not None:
            err.print(f"wrote the report to {report}", markup=False)
        exit_with(exit_code(cmp))
