"""``contractlang import focus``: a FOCUS billing export (CSV or Parquet) as invoice lines
(``docs/import.md``).

- :mod:`~contractlang.importers.focus.table`: the header and the table of the columns read
  (CSV or Parquet), mapped and validated; :func:`import_focus`.
- :mod:`~contractlang.importers.focus.columns`: the FOCUS columns kept, the kind of line each
  ChargeCategory makes, and where a line's run comes from (:class:`RunKey`).
- :mod:`~contractlang.importers.focus.rows`: the rows mapped column by column.
- :mod:`~contractlang.importers.focus.values`: ``NULL``, enums, exact decimals, ``Tags``.
- :mod:`~contractlang.importers.focus.parquet_table`: a Parquet file as a table of text.
"""

from __future__ import annotations

from contractlang.importers.focus.columns import UNATTRIBUTED, RunKey
from contractlang.importers.focus.table import import_focus

__all__ = ["UNATTRIBUTED", "RunKey", "import_focus"]
