"""Importers: users' data — scheduler exports, billing exports, job attempt lists — as traces
in the schema of design §3 (``docs/import.md``).

Each adapter reads one format, maps every row it can to trace events, rejects the rest with a
code and a reason (never a silent drop), validates its own output with the trace rules, and
returns an :class:`~contractlang.importers.result.ImportResult`: the events, the loaded trace
and the mapping report.

- :func:`import_sacct`: Slurm ``sacct --parsable2 --duplicates`` output.
- :func:`import_focus`: a FOCUS 1.0–1.3 billing export (CSV or Parquet) as invoice lines.
- :func:`import_attempts`: job attempt lists (JSON), as in the Philly trace.
- :func:`import_availability`: a spot availability trace (SkyPilot JSON, Bamboo CSV).
"""

from __future__ import annotations

from contractlang.importers.attempts import import_attempts
from contractlang.importers.availability import import_availability
from contractlang.importers.focus import UNATTRIBUTED, RunKey, import_focus
from contractlang.importers.result import ImportReport, ImportResult, Reject
from contractlang.importers.sacct import import_sacct

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
