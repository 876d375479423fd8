"""`simulate`'s terminal summary fits the terminal (COLUMNS 60, 80, 120) without splitting a
figure or a name, measures wide characters as two cells, and shows control characters from the
terms or the workload escaped, not obeyed."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from support.workloads import Raw, workload

from contractlang.diagnostics import printable
from contractlang.evaluate.results import DisplayUnit
from contractlang.render.common.numbers import money
from contractlang.render.simulate.terminal import render_simulation
from contractlang.render.simulate.uncertainty import plus_minus
from contractlang.simulate import Simulation, simulate

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "simulate"
LONG = "northwind-h100-spot-third-revision-with-restart-priority"  # 56 characters
WIDE = "東京リージョン-スポット"  # 12 characters, 23 cells
EVIL = "evil\x1b[31m-draft"
NAMES = ["priority", LONG, WIDE, EVIL]


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Simulation:
    d = tmp_path_factory.mktemp("terminal")
    drafts = (EXAMPLE / "drafts.spot").read_text(encoding="utf-8")
    drafts = drafts.replace('"basic"', f'"{LONG}"').replace('"priority-at-par"', f'"{WIDE}"')
    drafts += (
        f'\ncontract "{EVIL}" {{\n  currency USD\n  rate 2.20 USD per gpu_hour\n'
        "  promise reclaim notice 1000001 seconds\n}\n"
    )
    (d / "drafts.spot").write_text(drafts, encoding="utf-8")
    (d / "budget.spot").write_text((EXAMPLE / "budget.spot").read_text(encoding="utf-8"))
    # TOML writes a control character as an escape: the sku holds a real BEL
    sku = Raw('"H100-80G-\\u0007sxm5-with-a-long-name"')
    (d / "w.toml").write_text(workload(runs=60, sku=sku))
    return simulate([d / "drafts.spot", d / "budget.spot"], d / "w.toml", resamples=100,
                    baseline=LONG)  # fmt: skip


def shown(sim: Simulation, width: int) -> list[str]:
    file = io.StringIO()
    render_simulation(sim, Console(file=file, width=width, color_system=None, legacy_windows=False))
    return file.getvalue().splitlines()


def figures(sim: Simulation) -> list[str]:
    """Every figure the summary shows, each of which must stand whole on one line."""
    out = []
    for c in sim.contracts:
        s, mc = c.result.settings, c.monte_carlo
        cur = DisplayUnit(s.currency, Fraction(1), "money")
        out += [
            plus_minus(mc.mean_cost.value, mc.mean_cost.half_width, cur, s.precision),
            plus_minus(mc.p95_cost.value, mc.p95_cost.half_width, cur, s.precision),
            money(c.result.totals.net_minor, s.precision, s.currency),
        ]
        for ri in mc.requirements:
            r = ri.requirement
            out.append(plus_minus(r.value, ri.interval.half_width, r.unit, s.precision))
        if c.delta is not None:
            for i in (c.delta.mean_cost, c.delta.p95_cost):
                out.append(plus_minus(i.value, i.half_width, cur, s.precision, sign=True))
    return out


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_summary_fits_the_width_and_keeps_every_figure_and_name_whole(
    sim: Simulation, width: int
) -> None:
    lines = shown(sim, width)
    assert all(cell_len(line) <= width for line in lines), max(lines, key=cell_len)
    for figure in figures(sim):
        assert any(figure in line for line in lines), (width, figure)
    for name in NAMES:
        assert any(printable(name) in line for line in lines), (width, name)
    # the promise of 1,000,001 s, whole and in plain digits
    assert any("notice 11 d 13 h 46 min 41 s," in line for line in lines)
    # the sections of several drafts
    assert any(line.startswith("ranked by p95(cost_per_accepted_run)") for line in lines)
    assert any(line.startswith("differences from") for line in lines)


def test_names_and_the_sku_are_shown_escaped_not_obeyed(sim: Simulation) -> None:
    text = "\n".join(shown(sim, 80))
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "evil\\x1b[31m-draft" in text
    assert "H100-80G-\\x07sxm5-with-a-long-name" in text


def test_wide_characters_count_as_two_cells(sim: Simulation) -> None:
    assert cell_len(WIDE) == 23
    lines = shown(sim, 60)
    line = next(x for x in lines if x.startswith(WIDE))
    assert cell_len(line) <= 60 < len(line) * 2


def test_at_80_columns_nothing_wraps_that_fits(sim: Simulation) -> None:
    lines = shown(sim, 80)
    assert "  cost per accepted run  mean " in "\n".join(lines)
    assert any(line.startswith("                         p95  ") for line in lines)


def test_the_command_follows_columns(tmp_path: Path) -> None:
    """COLUMNS is read by the command itself (a real process: rich reads it at start)."""
    (tmp_path / "w.toml").write_text(workload(runs=30))
    env = {**os.environ, "COLUMNS": "60"}
    proc = subprocess.run(
        [sys.executable, "-m", "contractlang", "simulate", str(EXAMPLE / "drafts.spot"),
         str(EXAMPLE / "budget.spot"), "--workload", str(tmp_path / "w.toml"),
         "--resamples", "100"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    lines = proc.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 60
    assert max(cell_len(line) for line in lines) > 50  # the width is used, not a narrow default
