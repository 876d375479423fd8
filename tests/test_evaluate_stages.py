"""One contract's evaluation as data (`evaluate/stages.py`): run whole or in the slices a
sharded evaluation takes, and run again from any stage a variant restarts at with nothing
changed, the stages give the same figures; in a shard, E401 and W401 are counted for the
global step, not raised."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from support.events import frame, released, started

from contractlang.errors import ContractlangError
from contractlang.evaluate.contract_run import ContractRun
from contractlang.evaluate.stages import (
    STAGES,
    Stage,
    Staged,
    allocation_caps,
    amounts,
    billable_time,
    caps_above,
    charge,
    credit_lines,
    credit_pools,
    exclusions,
    fit_sums,
    run_sums,
    settle_month,
    through,
)
from contractlang.lang.terms import Terms
from contractlang.pipeline.language import load_terms, terms_from_text
from contractlang.trace.derive import derive_facts
from contractlang.trace.load import load_trace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "trace.parquet"
RULESETS = sorted((ROOT / "rulesets").glob("*.spot"))


@pytest.fixture(scope="module")
def facts() -> tuple[pl.DataFrame, pl.DataFrame]:
    return derive_facts(load_trace(EXAMPLE)).collect()


@pytest.fixture(scope="module")
def terms() -> Terms:
    return load_terms(RULESETS)


def _run(terms: Terms, name: str) -> ContractRun:
    (contract,) = [c for c in terms.contracts if c.name == name]
    return ContractRun.of(contract, terms.file_of(contract), terms.source_of(contract))


def _assert_same(a: Staged, b: Staged) -> None:
    ra, rb = a.result(), b.result()
    assert ra.totals == rb.totals
    assert ra.promises == rb.promises
    assert ra.plan == rb.plan
    assert ra.warnings == rb.warnings
    assert ra.runs.equals(rb.runs)
    assert ra.allocations.equals(rb.allocations)


def test_the_stages_are_the_steps_in_order() -> None:
    # design §6: exclusions (2, 3), billable time (4), charge (5), credits (6), caps (7a),
    # then the run sums and the caps above them (7b–d)
    order = [STAGES.index(s) for s in (exclusions, billable_time, charge, credit_lines)]
    order += [STAGES.index(s) for s in (credit_pools, allocation_caps, amounts, run_sums)]
    order += [STAGES.index(s) for s in (settle_month, fit_sums, caps_above)]
    assert order == sorted(order)
    assert len(set(STAGES)) == len(STAGES)


def test_the_slices_of_a_sharded_evaluation_give_what_the_whole_gives(
    terms: Terms, facts: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    for contract in terms.contracts:
        start = Staged(_run(terms, contract.name), *facts)
        whole = through(start)
        billed = through(start, until=run_sums)
        assert billed.sums is None  # nothing past the slice ran
        assert billed.runs is None
        summed = through(billed, first=run_sums, until=caps_above)
        assert summed.runs is None
        _assert_same(whole, through(summed, first=caps_above))


#: Every stage a variant restarts at, with what it reads there: the facts (exclusions), the
#: collected allocations again (billable time to the credit pools), or the run sums. Not the
#: allocation caps: the collected pools are already cut, so a variant restarts at the pools.
RESTARTS = [
    exclusions,
    billable_time,
    charge,
    credit_lines,
    credit_pools,
    run_sums,
    settle_month,
    fit_sums,
    caps_above,
]


@pytest.mark.parametrize("first", RESTARTS, ids=[s.__name__ for s in RESTARTS])
def test_running_again_from_a_stage_with_nothing_changed_changes_nothing(
    first: Stage, terms: Terms, facts: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    # northwind-negotiated has exclusions, every billing clause, six credits and caps at every
    # level: every stage has something to do
    done = through(Staged(_run(terms, "northwind-negotiated"), *facts))
    assert done.wide is not None
    again = done
    if STAGES.index(billable_time) <= STAGES.index(first) < STAGES.index(amounts):
        again = replace(done, lazy=done.wide.lazy())
    _assert_same(done, through(again, first=first))


UNPRICED = """
contract "big-only" {
  currency USD
  rate 2 USD per gpu_hour when gpus >= 8 gpus
}
"""


def test_a_shard_counts_its_unpriced_allocations_for_the_global_step() -> None:
    rows = [
        started("r1", "a1", 0, gpus=8),
        released("r1", "a1", 60),
        started("r2", "a2", 0, gpus=1),  # 1 GPU: no rate prices it
        released("r2", "a2", 60),
        started("r3", "a3", 0, gpus=2),  # 2 GPUs: no rate prices it
        released("r3", "a3", 60),
    ]
    facts = derive_facts(load_trace(frame(rows))).collect()
    terms = terms_from_text(UNPRICED, "t.spot")
    run = _run(terms, "big-only")
    shard = through(Staged(replace(run, shard=True), *facts), until=run_sums)
    assert shard.unpriced_count == 2  # a2 and a3
    assert shard.unpriced is not None
    assert sorted(shard.unpriced["alloc_id"].to_list()) == ["a2", "a3"]
    with pytest.raises(ContractlangError) as exc:
        through(Staged(run, *facts), until=run_sums)
    assert [d.code for d in exc.value.diagnostics] == ["E401"]
    assert "for 2 allocation(s)" in exc.value.diagnostics[0].message
