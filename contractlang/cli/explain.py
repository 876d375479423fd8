"""`contractlang explain TERMS… TRACE --run R [--alloc A]`: one run's bill, line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import exit_with, guarded, out
from contractlang.cli.files import Outputs
from contractlang.cli.inputs import (
    progress_status,
    split_terms_and_traces,
    usage_error,
)
from contractlang.cli.reading import DEFAULT_CLOCK_SKEW, ClockSkew, OpenAt, reading
from contractlang.errors import ExitCode
from contractlang.pipeline.evaluation import evaluate
from contractlang.render.explain import ExplainError, explain_runs


def register(app: typer.Typer) -> None:
    @app.command("explain")
    @guarded(fmt_param=None)
    def explain_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(help="Terms files (.spot) and the trace (one file or several)."),
        ],
        run: Annotated[str, typer.Option("--run", help="The run to explain.")],
        alloc: Annotated[
            str | None, typer.Option("--alloc", help="Only this allocation of the run.")
        ] = None,
        contract: Annotated[
            list[str] | None, typer.Option(help="Only this contract (repeatable).")
        ] = None,
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
    ) -> None:
        """Every line of one run's bill, with the facts and the term behind it.

        Exit codes: 0 the bill was shown, 2 bad input (also: no such run or allocation),
        3 internal error.
        """
        terms, traces = split_terms_and_traces(paths)
        options = reading(open_at, clock_skew, "strict", Outputs())
        with progress_status() as step:
            result = evaluate(
                terms, traces, progress=step, contracts=contract, **options.load_options()
            )
        try:
            text = explain_runs(result, run, alloc)
        except ExplainError as exc:
            raise usage_error(exc.message, help=exc.help) from None
        out.print(text, markup=False, end="")
        exit_with(ExitCode.OK)
