"""``contractlang import sacct``: Slurm accounting records as a trace (``docs/import.md``).

- :mod:`~contractlang.importers.sacct.mapping`: rows of sacct fields → attempts → events,
  priced by :class:`Allocations`; :func:`import_sacct`.
- :mod:`~contractlang.importers.sacct.text_export`: the text of an export (``--parsable2``)
  as those rows.
- :mod:`~contractlang.importers.sacct.json_export`: a ``sacct --json`` export as those rows.
- :mod:`~contractlang.importers.sacct.fields`: Slurm's field formats (``JobID``, ``State``,
  ``AllocTRES``, ``Elapsed``, …) as the man page defines them.
"""

from __future__ import annotations

from contractlang.importers.sacct.mapping import Allocations, import_sacct

__all__ = ["Allocations", "import_sacct"]
