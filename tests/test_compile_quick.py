"""The compiler's two ways of applying a factor (``decimals.apply_factor``): the quick way,
``x·n/d`` at once, and the careful way, no intermediate wider than the value. They give the
same exact figures wherever the quick way fits; where it does not it fails loudly (E405) and
the engine runs the stages again the careful way (``engine.run_stages``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from support.scenario import contract_result, released, started, trace_frame

from contractlang.errors import ContractlangError
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.engine import run_stages, stage_contract
from contractlang.evaluate.results import ContractResult
from contractlang.evaluate.stages import Staged, through
from contractlang.lang.terms import Terms
from contractlang.pipeline.language import load_terms, terms_from_text
from contractlang.trace.derive import derive_facts
from contractlang.trace.load import load_trace

EXAMPLE_TRACE = Path(__file__).resolve().parents[1] / "examples" / "trace.parquet"
RULESETS = sorted((Path(__file__).resolve().parents[1] / "rulesets").glob("*.spot"))


def _contract(rate: str) -> str:
    return f'contract "c" {{\n  currency USD\n  rate {rate}\n}}\n'


def _both_ways(
    terms: Terms, facts: tuple[pl.DataFrame, pl.DataFrame]
) -> list[tuple[ContractResult, ContractResult]]:
    """Each contract of ``terms`` evaluated over ``facts`` the quick way and the careful way."""
    out = []
    for contract in terms.contracts:
        run = ContractRun.of(contract, terms.file_of(contract), terms.source_of(contract))
        quick = stage_contract(run, *facts)
        assert quick.run.arithmetic == "quick"  # it fits: no retry
        slow = stage_contract(replace(run, arithmetic="careful"), *facts)
        out.append((quick.result(), slow.result()))
    return out


@pytest.fixture(scope="module")
def example_facts() -> tuple[pl.DataFrame, pl.DataFrame]:
    return derive_facts(load_trace(EXAMPLE_TRACE)).collect()


def test_an_amount_the_quick_way_cannot_hold_is_done_the_careful_way() -> None:
    rows = [started("r1", "a1", 0, gpus=1_000_000), released("r1", "a1", 59 + 59 / 60)]
    # 1,000 USD per GPU-hour × 10^6 GPUs × 3,599/3,600 h = 999,722,222.2… → 999,722,222.22
    result = contract_result(_contract("1000 USD per gpu_hour"), rows)
    assert result.totals.gross_minor == 99_972_222_222
    # the quick way alone: 10^6 GPUs × 3,599 × 10^6 µs at 20 places passes 38 digits
    terms = terms_from_text(_contract("1000 USD per gpu_hour"))
    (contract,) = terms.contracts
    facts = derive_facts(load_trace(trace_frame(rows))).collect()
    staged = Staged(ContractRun.of(contract, "terms.spot", terms.source_of(contract)), *facts)
    with pytest.raises(ContractlangError) as exc:
        through(staged)
    assert [d.code for d in exc.value.diagnostics] == ["E405"]
    # the engine's retry: the same stages the careful way, the same figure
    done = run_stages(staged)
    assert done.run.arithmetic == "careful"
    assert done.totals is not None
    assert done.totals.gross_minor == 99_972_222_222


def test_both_ways_give_the_same_runs_for_every_bundled_ruleset(
    example_facts: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    both = _both_ways(load_terms(RULESETS), example_facts)
    assert len(both) > 1
    for a, b in both:
        assert a.totals == b.totals
        assert a.runs.equals(b.runs)
        assert a.allocations.equals(b.allocations)


@pytest.mark.parametrize(
    "clauses",
    [
        'rate 2.123457 USD per gpu_hour\n  credit "c" 7% of charge when runtime > 1 hour',
        "rate trace.price per gpu_hour when capacity == spot\n  rate 1.6 USD per gpu_hour\n"
        '  credit "r" 2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)'
        " when replacement_wait > 15 minutes",
        "rate 3 USD per gpu_hour / 7\n  billing increment 1 minute",
    ],
)
def test_both_ways_agree_on_fine_rates_and_credits(
    clauses: str, example_facts: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    text = f'contract "c" {{\n  currency USD\n  {clauses}\n}}\n'
    [(quick, slow)] = _both_ways(terms_from_text(text), example_facts)
    assert quick.totals == slow.totals
    assert quick.allocations.equals(slow.allocations)
    assert quick.runs.equals(slow.runs)
