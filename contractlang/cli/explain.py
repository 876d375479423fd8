"""`contractlang explain TERMS… TRACE --run R [--alloc A]`: one run's bill, line by line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import polars as pl
import typer

from contractlang.cli.common import exit_with, guarded, out
from contractlang.cli.inputs import (
    parse_open_at,
    progress_status,
    split_terms_and_trace,
    usage_error,
)
from contractlang.diagnostics import did_you_mean
from contractlang.errors import ExitCode
from contractlang.pipeline.evaluation import evaluate
from contractlang.render.explain import explain_run


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
        if not result.contracts:
            raise usage_error("no contract to explain", help="check the `--contract` names")
        first = result.contracts[0]
        known = first.runs["run_id"]
        if run not in set(known.to_list()):
            guess = did_you_mean(run, known.to_list())
            raise usage_error(
                f"run `{run}` is not in the trace",
                help=f"did you mean `{guess}`?" if guess else None,
            )
        if alloc is not None:
            allocs = first.allocations.filter(pl.col("run_id") == run)["alloc_id"].to_list()
            if alloc not in allocs:
                raise usage_error(
                    f"run `{run}` has no allocation `{alloc}`",
                    help="its allocations: " + ", ".join(f"`{a}`" for a in allocs),
                )
        texts = [explain_run(c, run, alloc) for c in result.contracts]
        out.print("\n".join(texts), markup=False, end="")
        exit_with(ExitCode.OK)
