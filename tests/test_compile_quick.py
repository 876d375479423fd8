"""The compiler's two ways of applying a factor (``decimals.apply_factor``): the quick way,
``x·n/d`` at once, and the careful way, no intermediate wider than the value. They give the
same exact figures wherever the quick way fits; where it does not it fails loudly (E405) and
the evaluation is done again the careful way (``trace_checks.exact_on_overflow``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.scenario import contract_result, released, started

from contractlang.decimals import careful
from contractlang.errors import ContractlangError
from contractlang.evaluate import trace_checks
from contractlang.pipeline.evaluation import evaluate
from contractlang.pipeline.language import terms_from_text

EXAMPLE_TRACE = Path(__file__).resolve().parents[1] / "examples" / "trace.parquet"
RULESETS = sorted((Path(__file__).resolve().parents[1] / "rulesets").glob("*.spot"))


def _contract(rate: str) -> str:
    return f'contract "c" {{\n  currency USD\n  rate {rate}\n}}\n'


@contextmanager
def _no_retry() -> Iterator[None]:
    yield


def test_an_amount_the_quick_way_cannot_hold_is_done_the_careful_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = [started("r1", "a1", 0, gpus=1_000_000), released("r1", "a1", 59 + 59 / 60)]
    # 1,000 USD per GPU-hour × 10^6 GPUs × 3,599/3,600 h = 999,722,222.2… → 999,722,222.22
    result = contract_result(_contract("1000 USD per gpu_hour"), rows)
    assert result.totals.gross_minor == 99_972_222_222
    # the quick way alone: 10^6 GPUs × 3,599 × 10^6 µs at 20 places passes 38 digits
    monkeypatch.setattr(trace_checks, "careful", _no_retry)
    with pytest.raises(ContractlangError) as exc:
        contract_result(_contract("1000 USD per gpu_hour"), rows)
    assert [d.code for d in exc.value.diagnostics] == ["E405"]


def test_both_ways_give_the_same_runs_for_every_bundled_ruleset() -> None:
    quick = evaluate(RULESETS, EXAMPLE_TRACE)
    with careful():
        slow = evaluate(RULESETS, EXAMPLE_TRACE)
    assert len(quick.contracts) == len(slow.contracts) > 1
    for a, b in zip(quick.contracts, slow.contracts, strict=True):
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
def test_both_ways_agree_on_fine_rates_and_credits(clauses: str) -> None:
    text = f'contract "c" {{\n  currency USD\n  {clauses}\n}}\n'
    quick = evaluate(terms_from_text(text), EXAMPLE_TRACE).contracts[0]
    with careful():
        slow = evaluate(terms_from_text(text), EXAMPLE_TRACE).contracts[0]
    assert quick.totals == slow.totals
    assert quick.allocations.equals(slow.allocations)
    assert quick.runs.equals(slow.runs)
