"""The bundled sacct sample, imported with the flags docs/import.md shows, is billed by every
shipped ruleset: `evaluate` exits 0 (or 1, a budget not met), never 2 (an allocation no rate
prices); and one net is checked against a hand computation."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from support.cli import run
from test_docs_audit import sessions

ROOT = Path(__file__).resolve().parents[1]
RULESETS = sorted(p.name for p in (ROOT / "rulesets").glob("*.spot"))
BUDGETS = {"fy27-budget.spot"}


def documented_import() -> list[str]:
    """The `import sacct` of the bundled sample that the page shows pricing."""
    page = (ROOT / "docs" / "import.md").read_text(encoding="utf-8")
    found = [a for a, _ in sessions(page) if a[:2] == ["import", "sacct"] and "--sku-map" in a]
    assert len(found) == 1
    return found[0]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("billing")
    shutil.copytree(ROOT / "examples" / "audit", folder / "examples" / "audit")
    shutil.copytree(ROOT / "rulesets", folder / "rulesets")
    args = documented_import()
    out = args[args.index("--out") + 1]
    args[args.index("--out") + 1] = str(folder / out)
    if "--rejects" in args:
        args[args.index("--rejects") + 1] = str(folder / args[args.index("--rejects") + 1])
    args = [str(folder / a) if a.startswith("examples/") else a for a in args]
    result = run(*args)
    assert result.exit_code == 0, result.output
    return folder / out


def test_the_page_shows_the_rulesets_their_flags() -> None:
    assert set(RULESETS) >= {
        "aws-ec2-spot-linux.spot", "azure-spot-vms.spot", "coreweave-spot.spot",
        "fy27-budget.spot", "gcp-spot-vms.spot", "northwind-negotiated.spot",
    }  # fmt: skip
    page = (ROOT / "docs" / "import.md").read_text(encoding="utf-8")
    for name in RULESETS:
        assert f"rulesets/{name}" in page, name


@pytest.mark.parametrize("ruleset", RULESETS)
def test_every_ruleset_bills_the_imported_sample(imported: Path, ruleset: str) -> None:
    terms = imported.parent / "rulesets" / ruleset
    if ruleset in BUDGETS:  # a budget applies to the contracts evaluated with it
        contract = imported.parent / "rulesets" / "northwind-negotiated.spot"
        result = run("evaluate", contract, terms, imported)
        assert result.exit_code in (0, 1), result.output
    else:
        result = run("evaluate", terms, imported)
        assert result.exit_code == 0, result.output
    assert "error[" not in result.output


def _net(terms: Path, trace: Path) -> Decimal:
    result = run("evaluate", terms, trace, "--format", "json")
    assert result.exit_code == 0, result.output
    [contract] = json.loads(result.stdout)["contracts"]
    return Decimal(contract["totals"]["net"])


def test_a_net_by_hand(imported: Path) -> None:
    # azure-spot-vms: per second, no minimum, no exclusion; H100-80G 3.80, A100-80G 1.50 USD
    # per GPU-hour, each allocation rounded to the cent. GPU-seconds (End − Start × GPUs):
    #   7001#1  8 × 9,000 = 72,000     × 3.80 / 3600 =  76.00
    #   7001#2  8 × 2,352 = 18,816     × 3.80 / 3600 =  19.8613 →  19.86
    #   7001#3  8 × 57,600 = 460,800   × 3.80 / 3600 = 486.40
    #   7002#1  8 × 15,097 = 120,776   × 3.80 / 3600 = 127.4858 → 127.49
    #   7002#2  8 × 28,800 = 230,400   × 3.80 / 3600 = 243.20
    #   7003#1  4 × 15,600 = 62,400    × 1.50 / 3600 =  26.00   (a100 → A100-80G)
    #   7005#1  16 × 25,200 = 403,200  × 3.80 / 3600 = 425.60   (7 h across the DST change)
    #   7006_1  2 × 9,000 = 18,000     × 3.80 / 3600 =  19.00
    #   7006_2  2 × 747 = 1,494        × 3.80 / 3600 =   1.5770 →   1.58
    # 76.00 + 19.86 + 486.40 + 127.49 + 243.20 + 26.00 + 425.60 + 19.00 + 1.58 = 1,425.13
    assert _net(imported.parent / "rulesets" / "azure-spot-vms.spot", imported) == Decimal(
        "1425.13"
    )


def test_a_price_on_the_trace_is_the_rate_it_bills(tmp_path: Path) -> None:
    out = tmp_path / "priced.parquet"
    args = documented_import()
    args[args.index("--out") + 1] = str(out)
    args = [str(ROOT / a) if a.startswith("examples/") else a for a in args]
    args = [a for i, a in enumerate(args) if a != "--rejects" and args[i - 1] != "--rejects"]
    result = run(*args, "--price", "2.10")
    assert result.exit_code == 0, result.output
    # `rate trace.price per gpu_hour when capacity == spot` now applies, at 2.10 for every SKU:
    # 72,000 → 42.00; 18,816 → 10.976 → 10.98; 460,800 → 268.80; 120,776 → 70.4527 → 70.45;
    # 230,400 → 134.40; 62,400 → 36.40; 403,200 → 235.20; 18,000 → 10.50; 1,494 → 0.8715 →
    # 0.87 (GPU-seconds × 2.10 / 3600); together 809.60
    assert _net(ROOT / "rulesets" / "azure-spot-vms.spot", out) == Decimal("809.60")
