"""The trace digest of ``contractlang.evaluate/1`` (docs/evaluate.md): the documented canonical
text, checked against a second implementation (support/digest.py), the same for the same
events in any file format and row order, and different when any value differs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from support import digest as oracle
from support.events import TRACE_SCHEMA, frame, released, started

from contractlang import terms_from_text
from contractlang.compare.run import compare
from contractlang.errors import InternalError
from contractlang.pipeline.evaluation import EvaluateOptions, evaluate
from contractlang.render.evaluate.json import render_json
from contractlang.trace import digest as digest_module
from contractlang.trace import load_trace
from contractlang.trace.digest import canonical_text, trace_digest
from contractlang.trace.generate import generate_trace, write_trace

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "trace.parquet"


def test_the_digest_is_the_documented_text_of_the_example_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trace = load_trace(EXAMPLE)
    expected = oracle.digest(trace.as_frame().to_dicts())
    assert trace_digest(trace) == expected
    # written a group of runs at a time: 20,207 events in groups of at most 1,000 (or one
    # run), and of one run each, give the same digest
    for rows in (1000, 1):
        monkeypatch.setattr(digest_module, "SLICE_ROWS", rows)
        assert trace_digest(trace) == expected


@pytest.mark.parametrize("kind", [".csv", ".ndjson", ".parquet"])
def test_the_same_events_in_any_format_and_order_have_one_digest(tmp_path: Path, kind: str) -> None:
    events = load_trace(EXAMPLE).as_frame()
    expected = trace_digest(load_trace(EXAMPLE))
    shuffled = events.sample(fraction=1.0, shuffle=True, seed=11)
    assert shuffled["run_id"].to_list() != events["run_id"].to_list()
    path = tmp_path / f"t{kind}"
    write_trace(shuffled, path)
    assert trace_digest(load_trace(path)) == expected


def test_text_is_escaped_numbers_are_plain_and_extras_follow_sorted_by_name() -> None:
    rows = [
        {**started("r1", "a\t1", 0, gpus=8), "price": Decimal("2.10")},
        released("r1", "a\t1", 60),
    ]
    df = frame(rows).with_columns(
        pl.Series("zeta", ["x\\y\nz", None]), pl.Series("alpha", [Decimal("1.50"), None])
    )
    text = "".join(canonical_text(load_trace(df)))
    header, first, second, end = text.split("\n")
    assert header.endswith("\tamount\talpha\tzeta")
    assert end == ""
    # 2025-01-01T00:00Z is 1,735,689,600 s after the epoch; 2.10 is written 2.1, 1.50 as 1.5
    assert first.split("\t") == [
        *("r1", "a\\t1", "1735689600000000", "scheduler", "started", "8"),
        *("H100-80G", "us-east-1a", "spot", "2.1", "\\N", "\\N", "\\N", "\\N", "1.5", "x\\\\y\\nz"),
    ]
    assert second.startswith("r1\ta\\t1\t1735693200000000\tscheduler\treleased\t\\N")
    assert trace_digest(load_trace(df)) == oracle.digest(
        load_trace(df).as_frame().to_dicts(), extras=["alpha", "zeta"]
    )


def test_a_digest_moves_with_any_value() -> None:
    rows = [started("r1", "a1", 0, gpus=8), released("r1", "a1", 60)]
    base = trace_digest(load_trace(frame(rows)))
    one_more_gpu = [started("r1", "a1", 0, gpus=9), released("r1", "a1", 60)]
    a_second_later = [started("r1", "a1", 0, gpus=8), released("r1", "a1", 60 + 1 / 60)]
    assert trace_digest(load_trace(frame(one_more_gpu))) != base
    assert trace_digest(load_trace(frame(a_second_later))) != base


def test_an_empty_trace_is_its_header() -> None:
    empty = pl.DataFrame(schema=TRACE_SCHEMA)
    text = "".join(canonical_text(load_trace(empty)))
    assert text == "\t".join(oracle.SCHEMA_COLUMNS) + "\n"


def test_times_are_microseconds_since_the_epoch() -> None:
    assert oracle.value_text(datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=UTC)) == "1000005"


def test_the_digest_is_the_same_whole_in_shards_and_once_the_events_are_let_go(
    tmp_path: Path,
) -> None:
    # run ids where one is the start of another ("r1", "r10", "r1 x") and one with a tab:
    # each run's lines are together whatever the sort, and each run is hashed apart
    rows = []
    for k, run in enumerate(["r1", "r10", "r1 x", "r\t2", "r2"]):
        rows += [started(run, f"a{k}", 0, gpus=k + 1), released(run, f"a{k}", 60 + k)]
    path = tmp_path / "t.parquet"
    frame(rows).sample(fraction=1.0, shuffle=True, seed=5).write_parquet(path)
    expected = oracle.digest(load_trace(path).as_frame().to_dicts())
    assert trace_digest(load_trace(path)) == expected
    terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    let_go = evaluate(terms, path, EvaluateOptions(keep_events=False))
    assert let_go.trace.events.height == 0
    assert trace_digest(let_go.trace) == expected
    for shards in (2, 3, 7):
        assert trace_digest(evaluate(terms, path, EvaluateOptions(shards=shards)).trace) == expected


def test_a_comparison_takes_the_digest_only_when_asked() -> None:
    # `compare --format json` asks; the text summary, the CSV and the reports do not hash
    terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    expected = trace_digest(load_trace(EXAMPLE))
    assert compare(terms, EXAMPLE, digest=True).evaluation.trace.digest == expected
    assert compare(terms, EXAMPLE).evaluation.trace.digest is None


def test_a_trace_whose_events_were_let_go_without_its_digest_has_none() -> None:
    # never the digest of no events: an internal error (exit 3) names the slip
    terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    result = evaluate(terms, EXAMPLE, EvaluateOptions(keep_events=False, digest=False))
    with pytest.raises(InternalError):
        trace_digest(result.trace)


def test_the_json_document_reads_the_digest_and_never_takes_it() -> None:
    # the renderer hashes nothing: an evaluation whose digest nobody took is a slip (exit 3),
    # even when its events are still there to hash
    terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    kept = evaluate(terms, EXAMPLE)
    assert kept.trace.digest is None
    with pytest.raises(InternalError, match="digest was not taken"):
        render_json(kept)
    taken = evaluate(terms, EXAMPLE, EvaluateOptions(keep_events=False))
    doc = json.loads(render_json(taken))
    assert doc["trace"]["digest"] == taken.trace.digest == trace_digest(load_trace(EXAMPLE))


@pytest.mark.parametrize(
    "extra",
    [
        pl.Series("arr", [[1, 2]] * 0, dtype=pl.Array(pl.Int64, 2)),
        pl.Series("cat", [], dtype=pl.Categorical),
        pl.Series("tod", [], dtype=pl.Time),
    ],
    ids=["array", "categorical", "time-of-day"],
)
def test_extra_columns_of_any_type_have_one_digest(tmp_path: Path, extra: pl.Series) -> None:
    # an Array column once showed a series object's address in the text (a digest that
    # changed from run to run); a categorical or time-of-day one was an internal error
    events = generate_trace(12, seed=3)
    values: list[object] | pl.Series = {
        "arr": lambda: [[k, k + 1] for k in range(events.height)],
        "cat": lambda: ["a\tb", "c"] * (events.height // 2),
        "tod": lambda: [time(1, 2, k % 60) for k in range(events.height)],
    }[extra.name]()
    values = pl.Series(extra.name, values, dtype=extra.dtype)
    path = tmp_path / "t.parquet"
    events.head(len(values)).with_columns(values).write_parquet(path)
    whole = trace_digest(load_trace(path))
    assert "object at 0x" not in "".join(canonical_text(load_trace(path)))
    terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    assert trace_digest(evaluate(terms, path, EvaluateOptions(shards=3)).trace) == whole
    shuffled = pl.read_parquet(path).sample(fraction=1.0, shuffle=True, seed=4)
    assert trace_digest(load_trace(shuffled)) == whole
