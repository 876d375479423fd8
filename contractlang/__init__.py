"""contractlang: contract terms for spot GPU capacity, evaluated against usage traces.

The Python API mirrors the command line::

    import contractlang

    parsed = contractlang.parse(text, "terms.spot")   # AST + syntax diagnostics
    checked = contractlang.check(parsed.file)         # names, units, types, stages
    result = contractlang.evaluate(["terms.spot"], "trace.parquet")
    result.verdict, result.contracts[0].ledger()
"""

from __future__ import annotations

from contractlang.check import CheckResult, check
from contractlang.errors import ContractlangError, ExitCode
from contractlang.evaluate.engine import evaluate_facts
from contractlang.evaluate.results import ContractResult, Evaluation
from contractlang.fmt import format_file
from contractlang.lang.terms import Terms
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import (
    ParseResult,
    format_source,
    load_terms,
    parse,
    parse_path,
    terms_from_text,
)
from contractlang.trace import derive_facts, generate_trace, load_trace
from contractlang.version import __version__

__all__ = [
    "CheckResult",
    "ContractResult",
    "ContractlangError",
    "Evaluation",
    "ExitCode",
    "ParseResult",
    "Terms",
    "__version__",
    "check",
    "derive_facts",
    "evaluate",
    "evaluate_facts",
    "format_file",
    "format_source",
    "generate_trace",
    "load_terms",
    "load_trace",
    "parse",
    "parse_path",
    "terms_from_text",
]
