"""`x in [...]` compiled: the ``or`` of equalities it means (Kleene), one lookup for a list of
words, and an empty list."""

from __future__ import annotations

from decimal import Decimal

from support.events import released, started
from support.scenario import contract_result, lines

D = Decimal


def test_in_a_list_of_words_and_in_an_empty_list() -> None:
    """``sku in [...]`` with many words is one lookup, with the same answers as the ``or``
    chain; ``in []`` is false (an empty ``or``) and ``not in []`` true (it was exit 3)."""
    events = [
        started("r1", "a1", 0, gpus=8, sku="H100-80G"),
        released("r1", "a1", 60),
        started("r2", "a2", 0, gpus=8, sku="A100-40G"),
        released("r2", "a2", 60),
    ]
    many = ", ".join(f'"SKU-{k}"' for k in range(300)) + ', "H100-80G"'

    def gross(condition: str) -> dict[str, Decimal]:
        spot = (
            'contract "c" {\n  currency USD\n'
            f"  rate 2 USD per gpu_hour when {condition}\n"
            "  rate 1 USD per gpu_hour\n}\n"
        )
        return {r[1]: r[4] for r in lines(contract_result(spot, events)) if r[2] == "charge"}

    # a matching allocation: 8 GPUs × 1 h × 2 USD = 16.00; the others 8 × 1 × 1 = 8.00
    assert gross(f"sku in [{many}]") == {"a1": D("16.00"), "a2": D("8.00")}
    assert gross(f"sku not in [{many}]") == {"a1": D("8.00"), "a2": D("16.00")}
    assert gross("sku in []") == {"a1": D("8.00"), "a2": D("8.00")}
    assert gross("sku not in []") == {"a1": D("16.00"), "a2": D("16.00")}
    assert gross("capacity in [spot, reserved]") == {"a1": D("16.00"), "a2": D("16.00")}
