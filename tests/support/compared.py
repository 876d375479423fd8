"""The bundled drafts compared over the example trace, with attribution — computed once per
test session and shared by the tests that read it (it takes a few seconds)."""

from __future__ import annotations

import functools
from pathlib import Path

from contractlang.compare import Comparison, compare
from contractlang.pipeline.language import load_terms
from contractlang.trace.load import load_trace
from contractlang.trace.model import Trace

ROOT = Path(__file__).resolve().parents[2]
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))
EXAMPLE = ROOT / "examples" / "trace.parquet"


@functools.cache
def example_trace() -> Trace:
    return load_trace(EXAMPLE)


@functools.cache
def rulesets_attributed() -> Comparison:
    """``compare rulesets/*.spot examples/trace.parquet --attribute``."""
    return compare(load_terms(RULESETS), example_trace(), attribute_clauses=True)


@functools.cache
def rulesets_report_html() -> str:
    from contractlang.render.report import render_html  # noqa: PLC0415 — loads vl-convert

    return render_html(rulesets_attributed())
