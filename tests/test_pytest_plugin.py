"""The pytest plugin in a fresh project: a folder holding only a fixture — no conftest, no
pytest configuration — is collected by ``python -m pytest`` through the ``pytest11`` entry
point that installing contractlang registers, fails with the same diff as ``contractlang
test``, and ``--contractlang-update`` writes its expectations."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

CONTRACT = 'contract "c" {\n  currency USD\n  rate 2.00 USD per gpu_hour\n}\n'
TRACE = """\
run_id,alloc_id,ts,source,event,gpus
r1,r1-a1,2025-01-01T00:00:00Z,scheduler,started,8
r1,r1-a1,2025-01-01T01:00:00Z,scheduler,released,
"""
MANIFEST = 'story = "one hour on 8 GPUs"\nterms = ["c.spot"]\ntrace = "trace.csv"\n'


def pytest_in(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in ``project``, as a team would run it there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_plugin_is_registered_by_the_entry_point() -> None:
    (plugin,) = [e for e in entry_points(group="pytest11") if e.name == "contractlang"]
    assert plugin.value == "contractlang.pytest_plugin"


def test_a_fresh_project_runs_its_fixture_with_plain_pytest(tmp_path: Path) -> None:
    project = tmp_path / "procurement"
    folder = project / "contracts" / "flat-rate"
    folder.mkdir(parents=True)
    (folder / "fixture.toml").write_text(MANIFEST)
    (folder / "c.spot").write_text(CONTRACT)
    (folder / "trace.csv").write_text(TRACE)
    assert sorted(p.name for p in project.rglob("*") if p.is_file()) == [
        "c.spot",
        "fixture.toml",
        "trace.csv",
    ]

    # collected through the entry point alone; with no expectation yet, the flag writes it
    updated = pytest_in(project, "--contractlang-update")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert "1 passed" in updated.stdout
    assert "wrote contracts/flat-rate/expected.json" in updated.stdout
    assert (folder / "expected.json").is_file()

    # 8 GPU-h × 2.00 = 16.00; at 2.05, 16.40 (+0.40)
    (folder / "c.spot").write_text(CONTRACT.replace("2.00", "2.05"))
    failed = pytest_in(project)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "net 16.00 → 16.40 USD (+0.40)" in failed.stdout
    assert "1 failed" in failed.stdout
    assert "FAILED contracts/flat-rate/fixture.toml::flat-rate" in failed.stdout
    said = " ".join(failed.stdout.split())
    assert "accept it: pytest --contractlang-update contracts/flat-rate/fixture.toml" in said
