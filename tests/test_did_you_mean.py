"""`did_you_mean`: the closest candidate within a few edits, and a cost linear in a long
word's length (a 1 MB name once took 100 s to check: the edit distance was a full table)."""

from __future__ import annotations

import random

from contractlang.diagnostics import _distance, did_you_mean


def _levenshtein(a: str, b: str) -> int:
    """The full table, as the textbook computes it: the independent implementation."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def test_the_banded_distance_is_the_full_one_up_to_its_limit() -> None:
    rng = random.Random(7)
    letters = "abcAB_"
    for _ in range(5000):
        a = "".join(rng.choice(letters) for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice(letters) for _ in range(rng.randint(0, 9)))
        for limit in (1, 2, 3):
            assert _distance(a, b, limit) == min(_levenshtein(a, b), limit + 1), (a, b, limit)


def test_suggestions() -> None:
    # 1 edit of 12 letters (limit min(3, 12 // 3) = 3): suggested; 4 edits: not
    assert did_you_mean("replayed_tme", ["replayed_time", "runtime"]) == "replayed_time"
    assert did_you_mean("rxplxyxd_tixe", ["replayed_time"]) is None
    # ties go to the first in sorted order; case is ignored
    assert did_you_mean("GPUZ", ["gpux", "gpuy"]) == "gpux"
    assert did_you_mean("x", []) is None


def test_a_long_word_costs_its_length() -> None:
    # the full table would be 4 × 10^8 cells for the second (minutes in Python); the band
    # computes 7 a row, 140,000 (a fraction of a second); bench/ is where speed is measured
    assert did_you_mean("x" * 1_000_000, ["runtime", "gpus"]) is None
    assert did_you_mean("a" * 20_000, ["a" * 20_001, "b" * 20_000]) == "a" * 20_001
