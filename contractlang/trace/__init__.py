"""Usage traces: loading and validation, the facts of every allocation and run, and a
generator of realistic traces.

    >>> from contractlang.trace import generate_trace, load_trace, derive_facts
    >>> trace = load_trace(generate_trace(5, seed=1))
    >>> allocations, runs = derive_facts(trace).collect()
    >>> runs.height
    5

See ``docs/trace.md`` for the schema, the rules and the definition of every fact.
"""

from __future__ import annotations

from contractlang.trace.derive import Facts, derive_facts
from contractlang.trace.generate import generate_trace, write_trace
from contractlang.trace.load import load_trace
from contractlang.trace.model import Trace, TraceIndex
from contractlang.trace.schema import TraceSummary
from contractlang.trace.summary import summarize

__all__ = [
    "Facts",
    "Trace",
    "TraceIndex",
    "TraceSummary",
    "derive_facts",
    "generate_trace",
    "load_trace",
    "summarize",
    "write_trace",
]
