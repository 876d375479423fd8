"""The options several commands share, declared once: the same flag has the same name,
metavariable and help wherever it appears.

    >>> from contractlang.cli.options import Format, Ledger
    >>> Format.__metadata__[0].metavar, Ledger.__metadata__[0].metavar
    ('text|json', 'PATH')
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.common import OutputFormat

__all__ = ["Format", "Ledger", "Runs", "TraceOut"]

Format = Annotated[
    OutputFormat,
    typer.Option("--format", metavar="text|json", help="text for people, json for tools"),
]
Ledger = Annotated[
    Path | None,
    typer.Option(metavar="PATH", help="Write every contract's line items (.parquet or .csv)."),
]
Runs = Annotated[
    Path | None,
    typer.Option(metavar="PATH", help="Write the per-run table (.parquet or .csv)."),
]
TraceOut = Annotated[
    Path | None,
    typer.Option(metavar="DIR", help="Write each contract's trace as DIR/<contract>.parquet."),
]
