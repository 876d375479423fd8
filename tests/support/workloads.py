"""Workload files for the `simulate` tests: the example workload, and small variations.

    text = workload(runs=200, rate_per_hour=0.5)          # the example with keys replaced
    path = write_workload(tmp_path, runs=50)              # written as tmp_path/w.toml

Top-level keys and the keys of `[reclaims]` and `[replacement]` may be replaced by name; a
value of ``None`` leaves the key out. Values are written as TOML (strings quoted, numbers given
as text written as they are); :class:`Raw` text is written as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The example workload of ``docs/simulate.md`` ("The workload"), less the optional keys it
#: sets to their defaults.
EXAMPLE: dict[str, dict[str, Any]] = {
    "": {
        "runs": 2000,
        "seed": 7,
        "gpus": 64,
        "sku": "H100-80G",
        "capacity": "spot",
        "price": "2.10",
        "total_steps": 20000,
        "step_seconds": "8.6",
        "checkpoint_every_steps": 200,
        "save_seconds": 40,
        "restore_seconds": 90,
        "checkpoint_on_notice": True,
        "invalid_checkpoint_chance": "0.02",
        "accept_chance": "0.9",
        "max_attempts": 3,
    },
    "reclaims": {"rate_per_hour": "0.2"},
    "replacement": {"distribution": "lognormal", "median_minutes": 12},
}

_TABLE_OF = {k: t for t, keys in EXAMPLE.items() for k in keys}
_TABLE_OF.update(
    {
        "trace": "reclaims",
        "nodes": "reclaims",
        "notice_breach_chance": "reclaims",
        "mean_minutes": "replacement",
        "minutes": "replacement",
        "sigma": "replacement",
        "restart_breach_chance": "replacement",
    }
)
#: numbers written as exact decimal text (not quoted) in TOML
_NUMBERS = {"price", "step_seconds", "invalid_checkpoint_chance", "accept_chance",
            "rate_per_hour", "notice_breach_chance", "restart_breach_chance", "sigma",
            "median_minutes", "mean_minutes", "minutes"}  # fmt: skip


class Raw(str):
    """TOML text written as it is: ``runs=Raw('"2000"')`` writes ``runs = "2000"``."""


def _toml(key: str, value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and key not in _NUMBERS:
        return f'"{value}"'
    return str(value)


def workload(*, replacement: bool = True, **changes: Any) -> str:
    """The example workload's text with ``changes`` (``replacement=False`` drops the table)."""
    tables = {t: dict(keys) for t, keys in EXAMPLE.items()}
    if not replacement:
        del tables["replacement"]
    for key, value in changes.items():
        table = _TABLE_OF.get(key, "")
        if table not in tables:
            tables[table] = {}
        if key == "distribution" and "median_minutes" not in changes:
            tables[table].pop("median_minutes", None)  # the example's lognormal parameter
        tables[table][key] = value
    lines = []
    for table, keys in tables.items():
        if table:
            lines.append(f"\n[{table}]")
        lines.extend(f"{k} = {_toml(k, v)}" for k, v in keys.items() if v is not None)
    return "\n".join(lines) + "\n"


def write_workload(folder: Path, name: str = "w.toml", **changes: Any) -> Path:
    path = folder / name
    path.write_text(workload(**changes), encoding="utf-8")
    return path
