"""`contractlang explain TERMS… TRACE --run R [--alloc A]`: one run's bill, line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import OutputFormat, exit_with, guarded, out, write_stdout
from contractlang.cli.files import Outputs
from contractlang.cli.inputs import (
    progress_status,
    split_terms_and_traces,
    usage_error,
)
from contractlang.cli.options import Format
from contractlang.cli.reading import DEFAULT_CLOCK_SKEW, ClockSkew, OpenAt, reading
from contractlang.compare.run import attribute_for_run
from contractlang.errors import ExitCode
from contractlang.pipeline.evaluation import EvaluateOptions, evaluate
from contractlang.render.explain.attribution import run_attribution_text
from contractlang.render.explain.json import render_explain_json
from contractlang.render.explain.terminal import ExplainError, explain_run, explain_runs


def register(app: typer.Typer) -> None:
    @app.command("explain")
    @guarded()
    def explain_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                metavar="FILE...", help="Terms files (.spot) and the trace (one file or several)."
            ),
        ],
        run: Annotated[str, typer.Option("--run", metavar="RUN", help="The run to explain.")],
        alloc: Annotated[
            str | None,
            typer.Option("--alloc", metavar="ALLOC", help="Only this allocation of the run."),
        ] = None,
        contract: Annotated[
            list[str] | None, typer.Option(metavar="NAME", help="Only this contract (repeatable).")
        ] = None,
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
        fmt: Format = OutputFormat.text,
        attribute: Annotated[
            bool,
            typer.Option(
                "--attribute",
                help="After each bill, the run's net without each exclusion, credit, cap and "
                "billing setting (text only).",
            ),
        ] = False,
    ) -> None:
        """Every line of one run's bill, with the facts and the term behind it.

        Exit codes: 0 the bill was shown, 2 bad input (also: no such run or allocation),
        3 internal error, 130 interrupted.
        """
        terms, traces = split_terms_and_traces(paths)
        options = reading(open_at, clock_skew, "strict", Outputs())
        if attribute and fmt is OutputFormat.json:
            raise usage_error("`--attribute` shows text: leave out `--format json`")
        with progress_status() as step:
            if attribute:
                result, found = attribute_for_run(
                    terms, traces, run, contracts=contract, progress=step,
                    open_at=options.open_at, clock_skew=options.clock_skew,
                )  # fmt: skip
            else:
                chosen = EvaluateOptions(contracts=contract, **options.load_options())
                result = evaluate(terms, traces, chosen, progress=step)
        try:
            if fmt is OutputFormat.json:
                write_stdout(render_explain_json(result, run, alloc))
            elif attribute:
                for c in result.contracts:
                    out.print(explain_run(c, run, alloc), markup=False)
                    out.print(run_attribution_text(c, run, found[c.name]), markup=False, end="")
            else:
                out.print(explain_runs(result, run, alloc), markup=False, end="")
        except ExplainError as exc:
            raise usage_error(exc.message, help=exc.help) from None
        exit_with(ExitCode.OK)
