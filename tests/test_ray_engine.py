"""`evaluate --engine ray`: the shards as Ray tasks on a local Ray (`ray.init(num_cpus=2)`),
byte-identical to the local engine; and never a silent fallback.

Ray starts slowly (seconds), so one local instance serves every test here. Without Ray these
tests are skipped — but not in CI, which installs the `[ray]` extra and sets
``CONTRACTLANG_REQUIRE_RAY=1``, so a missing Ray fails there instead of passing unseen."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contractlang.trace import generate_trace
from tests.support.cli import no_traceback, run
from tests.test_shards import TERMS, broken_trace, outputs

if os.environ.get("CONTRACTLANG_REQUIRE_RAY"):
    import ray
else:
    ray = pytest.importorskip("ray")


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def spot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("terms") / "terms.spot"
    path.write_text(TERMS, encoding="utf-8")
    return path


def test_ray_gives_the_bytes_the_local_engine_gives(
    local_ray: Any, spot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate_trace(40, seed=3).write_parquet(tmp_path / "t.parquet")
    monkeypatch.chdir(tmp_path)
    trace = Path("t.parquet")  # relative: the workers' working directory is another
    here = outputs(spot, [trace], tmp_path / "here", "--shards", "3")
    assert here["exit"] in (b"0", b"1")
    assert outputs(spot, [trace], tmp_path / "ray", "--engine", "ray", "--shards", "3") == here
    # the default: at least one shard per CPU of the cluster
    assert outputs(spot, [trace], tmp_path / "auto", "--engine", "ray") == here


def test_ray_reports_a_broken_trace_as_the_local_engine(
    local_ray: Any, spot: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "t.parquet"
    broken_trace().write_parquet(trace)
    here = run("evaluate", spot, trace, "--shards", "4")
    there = run("evaluate", spot, trace, "--engine", "ray", "--shards", "4")
    assert here.exit_code == 2
    assert (there.exit_code, there.stderr) == (here.exit_code, here.stderr)


def test_an_address_where_no_cluster_answers_is_an_error(
    local_ray: Any, spot: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "t.parquet"
    generate_trace(3, seed=1).write_parquet(trace)
    result = run("evaluate", spot, trace, "--engine", "ray", "--ray-address", "127.0.0.1:9")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E503]: no Ray cluster answers at `127.0.0.1:9`" in result.stderr
    bad = run("evaluate", spot, trace, "--engine", "ray", "--ray-address", "head-node")
    assert bad.exit_code == 2
    assert "`--ray-address` must be HOST:PORT" in bad.stderr


def test_an_error_raised_in_a_task_comes_back_whole(local_ray: Any, tmp_path: Path) -> None:
    """A shard's ContractlangError is pickled back from its task with its diagnostics (it was
    rebuilt from its message text, failed, and `--engine ray` exited 3): terms reading
    `trace.discount` of a trace without that column (E403), as the local engine says it."""
    spot = tmp_path / "discount.spot"
    spot.write_text('contract "d" {\n  currency USD\n  rate trace.discount per gpu_hour\n}\n')
    trace = tmp_path / "t.parquet"
    generate_trace(3, seed=1).write_parquet(trace)
    here = run("evaluate", spot, trace, "--shards", "2")
    there = run("evaluate", spot, trace, "--engine", "ray", "--shards", "2")
    no_traceback(there)
    assert here.exit_code == 2
    assert "error[E403]" in here.stderr
    assert (there.exit_code, there.stderr) == (here.exit_code, here.stderr)
