"""Public spot availability traces (SkyPilot JSON, Bamboo add/remove CSV): read as capacity
over time, for ``simulate``, and imported as a trace (``docs/import.md``, ``docs/simulate.md``).

- :mod:`~contractlang.importers.availability.read`: a trace file → :class:`Availability`,
  stretches of capacity over time; :func:`read_availability`, :func:`parse_availability`.
- :mod:`~contractlang.importers.availability.mapping`: each stretch of each instance slot an
  allocation; :func:`import_availability`.
"""

from __future__ import annotations

from contractlang.importers.availability.mapping import import_availability
from contractlang.importers.availability.read import (
    Availability,
    Format,
    Stretch,
    parse_availability,
    parse_bamboo,
    parse_skypilot,
    read_availability,
)

__all__ = [
    "Availability",
    "Format",
    "Stretch",
    "import_availability",
    "parse_availability",
    "parse_bamboo",
    "parse_skypilot",
    "read_availability",
]
