"""contractlang: contract terms for spot GPU capacity, evaluated against usage traces.

The Python API mirrors the command line::

    import contractlang

    parsed = contractlang.parse(text, "terms.spot")   # AST + syntax diagnostics
    checked = contractlang.check(parsed.file)         # names, units, types, stages
    result = contractlang.evaluate(["terms.spot"], "trace.parquet")
    result.verdict, result.contracts[0].ledger()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from contractlang.version import __version__

if TYPE_CHECKING:
    from contractlang.check import CheckResult, check
    from contractlang.errors import ContractlangError, ExitCode
    from contractlang.evaluate.results import ContractResult, Evaluation
    from contractlang.fmt import format_file
    from contractlang.lang.terms import Terms
    from contractlang.pipeline.evaluation import EvaluateOptions, evaluate, evaluate_facts
    from contractlang.pipeline.language import load_terms, terms_from_text
    from contractlang.pipeline.parsing import ParseResult, format_source, parse, parse_path
    from contractlang.trace import derive_facts, generate_trace, load_trace

#: Where each public name lives. Imported when first used, so ``contractlang --version``,
#: ``check`` and ``fmt`` never load polars (PEP 562).
_HOMES = {
    "CheckResult": "contractlang.check",
    "check": "contractlang.check",
    "ContractlangError": "contractlang.errors",
    "ExitCode": "contractlang.errors",
    "ContractResult": "contractlang.evaluate.results",
    "Evaluation": "contractlang.evaluate.results",
    "format_file": "contractlang.fmt",
    "Terms": "contractlang.lang.terms",
    "EvaluateOptions": "contractlang.pipeline.evaluation",
    "evaluate": "contractlang.pipeline.evaluation",
    "evaluate_facts": "contractlang.pipeline.evaluation",
    "ParseResult": "contractlang.pipeline.parsing",
    "format_source": "contractlang.pipeline.parsing",
    "load_terms": "contractlang.pipeline.language",
    "parse": "contractlang.pipeline.parsing",
    "parse_path": "contractlang.pipeline.parsing",
    "terms_from_text": "contractlang.pipeline.language",
    "derive_facts": "contractlang.trace",
    "generate_trace": "contractlang.trace",
    "load_trace": "contractlang.trace",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'contractlang' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "CheckResult",
    "ContractResult",
    "ContractlangError",
    "EvaluateOptions",
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
