"""contractlang: contract terms for spot GPU capacity, evaluated against usage traces.

The Python API mirrors the command line::

    import contractlang
    result = contractlang.parse(text, "terms.spot")     # AST + syntax diagnostics
"""

from __future__ import annotations

__version__ = "0.1.0"
