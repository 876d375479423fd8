"""`contractlang reconcile TERMS… TRACE`: the bill the contract implies beside the invoice lines
in the trace (docs/reconcile.md).

Exit codes: 0 every comparison within the tolerance, 1 a discrepancy beyond it (or invoice
lines not reconciled: set aside with a quarantined run), 2 bad input, 3 internal error,
130 interrupted.
"""

from __future__ import annotations

import re
from decimal import Decimal
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
from contractlang.cli.files import Outputs, write_file
from contractlang.cli.inputs import progress_status, split_terms_and_traces, usage_error
from contractlang.cli.options import Format
from contractlang.cli.reading import (
    DEFAULT_CLOCK_SKEW,
    ClockSkew,
    OnInvalid,
    OpenAt,
    reading,
    write_set_aside,
)
from contractlang.cli.report import Report
from contractlang.cli.tables import write_table
from contractlang.errors import ExitCode
from contractlang.reconcile import reconcile
from contractlang.render.reconcile.json import DISPUTE_NUMBERS, dispute_table, render_json
from contractlang.render.reconcile.terminal import render_reconciliation
from contractlang.render.report import REPORT_SUFFIXES
from contractlang.render.report.reconcile import render_reconcile_report

_TOLERANCE = re.compile(r"^([0-9]{1,20}(?:\.[0-9]{1,18})?)(?:\s+([A-Z]{3}))?$", re.ASCII)


def parse_tolerance(text: str) -> tuple[Decimal, str | None]:
    """``--tolerance 0.05`` or ``--tolerance "0.05 USD"``: an exact amount ≥ 0 and, when
    written, its currency.

    >>> parse_tolerance("0.05 USD")
    (Decimal('0.05'), 'USD')
    """
    m = _TOLERANCE.match(text.strip())
    if m is None:
        raise usage_error(
            f"`--tolerance {text}` is not an amount of money of 0 or more",
            help="for example `--tolerance 0.05` or `--tolerance '0.05 USD'`",
        )
    return Decimal(m.group(1)), m.group(2)


def register(app: typer.Typer) -> None:
    @app.command("reconcile")
    @guarded()
    def reconcile_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                metavar="FILE...",
                help="Terms files (.spot) and the trace with the invoice lines (several files "
                "are read as one trace: the scheduler's export and the invoice's, say).",
            ),
        ],
        tolerance: Annotated[
            str,
            typer.Option(
                metavar="MONEY",
                help="Differences up to this amount match (e.g. 0.05, or '0.05 USD').",
            ),
        ] = "0.00",
        fmt: Format = OutputFormat.text,
        out_path: Annotated[
            Path | None,
            typer.Option(
                "--out",
                metavar="PATH",
                help="Write every comparison, for a dispute (.csv or .parquet).",
            ),
        ] = None,
        contract: Annotated[
            list[str] | None,
            typer.Option(metavar="NAME", help="Reconcile only this contract (repeatable)."),
        ] = None,
        report: Report = None,
        open_at: OpenAt = None,
        clock_skew: ClockSkew = DEFAULT_CLOCK_SKEW,
        on_invalid: OnInvalid = "strict",
    ) -> None:
        """Compare the bill the contract implies with the invoice lines in the trace.

        Exit codes: 0 every comparison within the tolerance, 1 a discrepancy beyond it or
        invoice lines set aside unreconciled, 2 bad input, 3 internal error, 130 interrupted.
        """
        terms, traces = split_terms_and_traces(paths)
        limit, currency = parse_tolerance(tolerance)
        outputs = Outputs([*terms, *traces])
        outputs.add(out_path, "--out")
        outputs.add(report, "--report", REPORT_SUFFIXES)
        options = reading(open_at, clock_skew, on_invalid, outputs)
        with progress_status() as step:
            result = reconcile(
                terms,
                traces,
                tolerance=limit,
                progress=step,
                contracts=contract,
                **options.load_options(),
            )
            write_set_aside(result.evaluation.trace, options)
            for c in result.contracts:
                if currency is not None and currency != c.contract.settings.currency:
                    raise usage_error(
                        f"`--tolerance {tolerance}` is in {currency}, but contract `{c.name}` "
                        f"bills in {c.contract.settings.currency}"
                    )
            if out_path is not None:
                step("writing the comparisons")
                write_table(dispute_table(result), out_path, DISPUTE_NUMBERS)
            if report is not None:
                step("writing the report")
                text = render_reconcile_report(result, report)
                write_file(report, lambda target: target.write_text(text, encoding="utf-8"))
        if fmt is OutputFormat.json:
            write_stdout(render_json(result))
        else:
            warnings = [*result.evaluation.warnings]
            warnings += [w for c in result.contracts for w in c.contract.warnings]
            warnings += result.warnings  # W801: the invoice's credit lines of positive amount
            print_diagnostics(warnings, result.evaluation.sources, OutputFormat.text)
            out.print(render_reconciliation(result), markup=False, end="")
            for path, what in ((out_path, "comparisons"), (report, "report")):
                if path is not None:
                    err.print(f"wrote the {what} to {path}", markup=False)
        exit_with(ExitCode.OK if result.checks_out else ExitCode.NOT_MET)
