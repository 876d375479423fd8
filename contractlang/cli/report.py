"""`--report PATH.html|PATH.md`, shared by the commands that report: the option, and writing
the report (rendered first, then written atomically: a failed write is E501 and leaves any
old file as it was)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contractlang.cli.files import write_file
from contractlang.compare.model import Comparison
from contractlang.compare.run import from_evaluation
from contractlang.evaluate.results import Evaluation
from contractlang.render.report import render_report

Report = Annotated[
    Path | None,
    typer.Option(
        "--report",
        metavar="PATH",
        help="Write a report: PATH.html (one self-contained page with charts) or PATH.md "
        "(Markdown for a pull-request comment).",
    ),
]


def write_report(
    result: Comparison | Evaluation,
    path: Path,
    notes: tuple[str, ...] = (),
    baseline: str | None = None,
) -> None:
    """Render the report for ``path``'s extension and write it (``notes``: where the figures
    come from, for contracts evaluated on traces of their own; ``baseline``: the contract the
    deltas are measured against, the first unless named)."""
    cmp = result if isinstance(result, Comparison) else from_evaluation(result, notes, baseline)
    text = render_report(cmp, path)
    write_file(path, lambda target: target.write_text(text, encoding="utf-8"))
