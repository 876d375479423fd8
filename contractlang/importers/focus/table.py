"""``contractlang import focus``: a FOCUS billing export (FOCUS 1.0–1.3, CSV or Parquet) as
invoice lines.

Each row becomes one run-level invoice line (no ``alloc_id``), dated by its
``ChargePeriodStart``, with ``BilledCost`` as its exact ``amount``. Its ChargeCategory decides
its kind, never its sign: ``Usage`` and ``Purchase`` rows are ``charge`` lines (a negative one
is a reversal, flagged ``reversal``: a negative charge, not a credit), ``Credit`` rows
``credit`` lines, ``Adjustment`` rows ``adjustment`` lines, ``Tax`` rows ``tax`` lines. The run
is read from a tag (``--run-from tag:KEY``) or is the ``ResourceId`` (``--run-from
resource``); rows without one go to the run ``unattributed`` and are reported. ChargeCategory,
ChargeClass, PricingCategory, EffectiveCost, ListCost, the billing period and the other columns
an audit reads are kept beside ``amount``; a correction (ChargeClass ``Correction``) is kept and
flagged (``correction``).

Rows are the file's data rows, from 1 (a CSV header is not a row). A CSV file is read as a
table of text (:mod:`~contractlang.importers.csv_table`), a Parquet file — found by its
content, ``PAR1`` — as the same table, its typed values spelled exactly
(:mod:`~contractlang.importers.focus.parquet_table`); either is mapped column by column
(:mod:`~contractlang.importers.focus.rows`): every rejection, note and figure is the one a
row-by-row reading gives (``tests/test_import_focus_reader.py`` compares them).
"""

from __future__ import annotations

from pathlib import Path

from contractlang.diagnostics import NO_SPAN, NOT_UTF8_NAME, RENAME, error, utf8_name
from contractlang.errors import ContractlangError
from contractlang.importers.csv_table import Table, header_of, read_table
from contractlang.importers.focus.columns import KINDS, OPTIONAL, REQUIRED, RunKey
from contractlang.importers.focus.parquet_table import (
    is_parquet,
    parquet_schema,
    read_parquet_table,
)
from contractlang.importers.focus.rows import map_rows
from contractlang.importers.frame import validated
from contractlang.importers.result import Collector, ImportResult
from contractlang.importers.text import (
    format_error,
    header_index,
    missing_column,
    raise_row_errors,
    refuse_repeated,
)

__all__ = ["import_focus"]


def import_focus(path: str | Path, run_from: RunKey | str) -> ImportResult:
    """Read a FOCUS export (CSV or Parquet) as invoice lines (see the module docstring)."""
    p = Path(path)
    name = str(p)
    key = run_from if isinstance(run_from, RunKey) else RunKey.parse(run_from)
    if key is None:
        raise ValueError(f"not a run key: {run_from!r} (use `tag:KEY` or `resource`)")
    table, index = _parquet(p, name, key) if is_parquet(p) else _csv(p, name, key)
    c = Collector("focus", name)
    frame = map_rows(table, index, key, c)
    trace = validated(frame, name, None)
    report = c.report(events=frame.height, runs=trace.summary.runs, allocations=0)
    return ImportResult(frame, trace, report)


def _csv(p: Path, name: str, key: RunKey) -> tuple[Table, dict[str, int]]:
    """The CSV file's table of the columns the import reads, and where each is."""
    header = header_of(p, name)
    if header is None:
        raise format_error(name, f"`{name}` is empty: it has no header")
    index = _header_index(name, header, key)
    return read_table(p, name, sorted(set(index.values()))), index


def _parquet(p: Path, name: str, key: RunKey) -> tuple[Table, dict[str, int]]:
    """The Parquet file's table of the columns the import reads, and where each is."""
    if not utf8_name(p):  # polars, which reads a Parquet file, takes UTF-8 names only
        raise ContractlangError(
            [
                error(
                    "I001",
                    f"cannot read `{name}`: {NOT_UTF8_NAME}",
                    NO_SPAN,
                    file=name,
                    help=RENAME,
                )
            ]
        )
    schema = parquet_schema(p, name)
    header = list(schema)
    index = _header_index(name, header, key)
    kinds = {i: KINDS[x] for x, i in index.items()}
    return read_parquet_table(p, name, header, list(schema.values()), kinds), index


def _header_index(name: str, header: list[str], key: RunKey) -> dict[str, int]:
    """Column name (as FOCUS spells it) → position; a column named twice is I003, required
    ones missing I002."""
    index = header_index(header, (*REQUIRED, *OPTIONAL))
    refuse_repeated(name, header, index, "column")
    needed = [*REQUIRED, "Tags" if key.kind == "tag" else "ResourceId"]
    missing = [f for f in needed if f not in index]
    if len(missing) >= len(REQUIRED):
        raise format_error(
            name,
            f"`{name}` is not a FOCUS export: it has no `BilledCost`, `ChargeCategory` or "
            "`ChargePeriodStart` column",
            help="export the billing data in FOCUS 1.0 or later, as CSV with a header or as "
            "Parquet",
        )
    diags = []
    for f in missing:
        why = "" if f in REQUIRED else " (needed by `--run-from`)"
        diags.append(missing_column(name, header, f, f"the export has no `{f}` column{why}"))
    raise_row_errors(name, diags)
    return index
