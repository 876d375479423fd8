"""Importers: users' data — scheduler exports, billing exports, job attempt lists — as traces
in the schema of ``docs/trace.md`` (``docs/import.md``).

Each adapter reads one format, maps every row it can to trace events, rejects the rest with a
code and a reason (never a silent drop), validates its own output with the trace rules, and
returns an :class:`~contractlang.importers.result.ImportResult`: the events, the loaded trace
and the mapping report.

- :func:`import_sacct`: Slurm ``sacct --parsable2 --duplicates`` output (``sacct/``).
- :func:`import_focus`: a FOCUS 1.0–1.3 billing export (CSV or Parquet) as invoice lines
  (``focus/``).
- :func:`import_attempts`: job attempt lists (JSON), as in the Philly trace (``attempts.py``).
- :func:`import_availability`: a spot availability trace (SkyPilot JSON, Bamboo CSV)
  (``availability/``, whose reader ``simulate`` replays too).

The modules at this level are the adapters' shared pieces: the mapping report (``result.py``),
events as a validated trace (``frame.py``), reading text and JSON (``text.py``), times
(``localtime.py``), a CSV file as a table of text (``csv_table.py``) and its columns read at
once (``columns.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contractlang.importers.attempts import import_attempts
    from contractlang.importers.availability import import_availability
    from contractlang.importers.focus import UNATTRIBUTED, RunKey, import_focus
    from contractlang.importers.result import ImportReport, ImportResult, Reject
    from contractlang.importers.sacct import import_sacct

#: Where each name lives. Imported when first used, so ``simulate``, which reads availability
#: traces with :mod:`~contractlang.importers.availability.read`, and ``reconcile``, which needs
#: ``UNATTRIBUTED``, load no other adapter (PEP 562).
_HOMES = {
    "import_attempts": "contractlang.importers.attempts",
    "import_availability": "contractlang.importers.availability",
    "UNATTRIBUTED": "contractlang.importers.focus",
    "RunKey": "contractlang.importers.focus",
    "import_focus": "contractlang.importers.focus",
    "ImportReport": "contractlang.importers.result",
    "ImportResult": "contractlang.importers.result",
    "Reject": "contractlang.importers.result",
    "import_sacct": "contractlang.importers.sacct",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'contractlang.importers' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "UNATTRIBUTED",
    "ImportReport",
    "ImportResult",
    "Reject",
    "RunKey",
    "import_attempts",
    "import_availability",
    "import_focus",
    "import_sacct",
]
