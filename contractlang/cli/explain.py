"""`contractlang explain TERMS… TRACE --run R [--alloc A]`: one run's bill, line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import exit_with, guarded, out
from contractlang.cli.inputs import (
    parse_open_at,
    progress_status,
    split_terms_and_trace,
    usage_error,
)
from contractlang.errors import ExitCode
from contractlang.pipeline.evaluation import evaluate
from contractlang.render.explain import ExplainError, explain_runs


def register(app: typer.Typer) -> None:
    @app.command("explain")
    @guarded(fmt_param=None)
    def explain_cmd(
        paths: Annotated[list[Path], typer.Argument(help="Terms files (.spot), then the trace.")],
        run: Annotated[str, typer.Option("--run", help="The run to explain.")],
        alloc: Annotated[
            str | None, typer.Option("--alloc", help="Only this allocation of the run.")
        ] = None,
        contract: Annotated[
            list[str] | None, typer.Option(help="Only this contract (repeatable).")
        ] = None,
        open_at: Annotated[
            str | None, typer.Option(help="Close allocations still open at this time.")
        ] = None,
    ) -> None:
        """Every line of one run's bill, with the facts and the term behind it."""
        terms, trace = split_terms_and_trace(paths)
        with progress_status() as step:
            result = evaluate(
                terms, trace, open_at=parse_open_at(open_at), progress=step, contracts=contract
            )
        try:
            text = explain_runs(result, run, alloc)
        except ExplainError as exc:
            raise usage_error(exc.message, help=exc.help) from None
        out.print(text, markup=False, end="")
        exit_with(ExitCode.OK)
