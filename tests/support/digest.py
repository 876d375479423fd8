"""A second, row-by-row implementation of the trace digest of ``docs/evaluate.md``, written
from the documented rules (not from :mod:`contractlang.trace.digest`), for tests to check the
engine's against: plain Python over dictionaries of values."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

SCHEMA_COLUMNS = (
    *("run_id", "alloc_id", "ts", "source", "event", "gpus", "sku", "zone", "capacity"),
    *("price", "step", "valid", "quantity", "amount"),
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def value_text(v: Any) -> str:
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        return str((v - EPOCH) // timedelta(microseconds=1))
    if isinstance(v, timedelta):
        return str(v // timedelta(microseconds=1))
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, (int, Decimal)):
        d = Decimal(v)
        text = format(d, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return "0" if text == "-0" else text
    text = str(v)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def canonical_text(rows: Iterable[Mapping[str, Any]], extras: Sequence[str] = ()) -> bytes:
    """What the trace digest hashes, from the documented rules: the header line (every schema
    column, then ``extras`` sorted), then one line per run — its ``run_id`` text, a tab, the
    SHA-256 of its event lines sorted by their bytes — those lines sorted by their bytes."""
    columns = [*SCHEMA_COLUMNS, *sorted(extras)]
    header = "\t".join(columns)
    runs: dict[str, list[bytes]] = {}
    for row in rows:
        line = "\t".join(value_text(row.get(c)) for c in columns)
        runs.setdefault(value_text(row.get("run_id")), []).append(line.encode("utf-8"))
    run_lines = []
    for run, lines in runs.items():
        text = b"".join(x + b"\n" for x in sorted(lines))
        run_lines.append(run.encode("utf-8") + b"\t" + hashlib.sha256(text).hexdigest().encode())
    return b"".join(x + b"\n" for x in [header.encode("utf-8"), *sorted(run_lines)])


def digest(rows: Iterable[Mapping[str, Any]], extras: Sequence[str] = ()) -> str:
    return "sha256:" + hashlib.sha256(canonical_text(rows, extras)).hexdigest()
