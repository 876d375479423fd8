"""Start-up stays light: ``--version``, ``check`` and ``fmt`` never import polars or numpy (the
entry point registers only the command asked for; ``import contractlang`` is lazy), nor pydantic
(their flags are converted without typer's adapters: ``cli/values.py``), and the
grammar's LALR tables come from lark's cache, rebuilt when the cache file is damaged;
``simulate`` loads no importer but the availability traces'. Times are measured by
bench/bench_startup.py, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import contractlang
from contractlang import importers

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("polars", "numpy", "pyarrow", "duckdb")


def modules_after(
    argv: list[str], env: dict[str, str] | None = None, libraries: tuple[str, ...] = HEAVY
) -> tuple[int, list[str]]:
    """Run the entry point with ``argv`` in a fresh interpreter; its exit code and which of
    ``libraries`` it imported."""
    probe = (
        "import json, sys\n"
        f"sys.argv = ['contractlang', *{argv!r}]\n"
        "from contractlang.cli.app import main\n"
        "code = 0\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code or 0\n"
        f"heavy = [m for m in {libraries!r} if m in sys.modules]\n"
        "print('\\n' + json.dumps([code, heavy]))\n"
    )
    code, heavy = _probe(probe, {**os.environ, **(env or {})})
    return code, heavy


def _probe(probe: str, env: dict[str, str]) -> Any:
    """Run ``probe`` in a fresh interpreter with ``env``; the JSON of its last line."""
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["check", "rulesets/northwind-negotiated.spot"],
        ["check", "rulesets"],
        ["fmt", "--check", "rulesets"],
        ["check", "--format", "json", "rulesets/fy27-budget.spot"],
    ],
)
def test_language_commands_import_no_heavy_library(argv: list[str]) -> None:
    code, heavy = modules_after(argv, libraries=(*HEAVY, "pydantic"))
    assert code == 0
    assert heavy == []


def test_fmt_loads_no_checker_and_check_no_formatter() -> None:
    assert modules_after(["fmt", "--check", "rulesets"], libraries=("contractlang.check",)) == (
        0,
        [],
    )
    assert modules_after(["check", "rulesets"], libraries=("contractlang.fmt",)) == (0, [])


def test_a_file_that_parses_loads_no_syntax_error_wording() -> None:
    wording = ("contractlang.syntax.errors", "contractlang.syntax.kinds")
    assert modules_after(["check", "rulesets"], libraries=wording) == (0, [])
    unchecked = ["check", "tests/broken/compare_time_money.spot"]
    assert modules_after(unchecked, libraries=wording) == (2, [])  # an error of the checker
    unparsed = ["check", "tests/broken/syntax_missing_when.spot"]
    assert modules_after(unparsed, libraries=wording) == (2, list(wording))


def test_an_evaluating_command_still_gets_what_it_needs() -> None:
    code, heavy = modules_after(["trace", "validate", "examples/trace.parquet"])
    assert code == 0
    assert "polars" in heavy


def test_a_mistyped_command_lists_every_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "contractlang", "chekc"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "check" in done.stderr


def test_the_package_api_is_lazy_and_complete() -> None:
    for name in contractlang.__all__:
        assert getattr(contractlang, name) is not None, name
    with pytest.raises(AttributeError):
        _ = contractlang.no_such_thing  # type: ignore[attr-defined]
    probe = "import sys, contractlang; print(any(m in sys.modules for m in ('polars', 'numpy')))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.stdout.strip() == "False"


def test_simulate_loads_the_availability_reader_and_no_other_adapter() -> None:
    """``simulate`` reads availability traces with ``importers/availability/``; the importers'
    package re-exports its adapters lazily, so ``simulate`` loads none of the others."""
    reader = "contractlang.importers.availability.read"
    others = tuple(f"contractlang.importers.{a}" for a in ("sacct", "focus", "attempts"))
    assert modules_after(["simulate", "--help"], libraries=(reader, *others)) == (0, [reader])
    assert modules_after(["import", "--help"], libraries=others) == (0, list(others))


def test_the_importers_api_is_lazy_and_complete() -> None:
    for name in importers.__all__:
        assert getattr(importers, name) is not None, name
    missing = "no_such_thing"
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        getattr(importers, missing)


def test_a_damaged_grammar_cache_is_rebuilt(tmp_path: Path) -> None:
    env = {"TMPDIR": str(tmp_path)}
    code, _ = modules_after(["check", "rulesets/northwind-negotiated.spot"], env)
    assert code == 0
    (cache,) = tmp_path.glob(".lark_cache_*")
    cache.write_bytes(b"\x00not a pickle")
    code, _ = modules_after(["check", "rulesets/northwind-negotiated.spot"], env)
    assert code == 0


def test_parsing_pauses_the_garbage_collector_and_restores_it() -> None:
    import gc  # noqa: PLC0415

    from contractlang.pipeline.parsing import gc_paused, parse  # noqa: PLC0415

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: still paused when the inner one ends
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    assert not parse("contract {").ok  # a syntax error returns from inside the pause
    assert gc.isenabled()
    gc.disable()  # a caller that paused it keeps it paused
    try:
        parse('contract "c" { currency USD rate 2 USD per gpu_hour }')
        assert not gc.isenabled()
    finally:
        gc.enable()


def _allocator_seen(argv: list[str], env: dict[str, str]) -> tuple[bool, str | None, str | None]:
    """In a fresh interpreter with ``env``, ``tune_allocator`` as ``main`` calls it for
    ``argv``: whether polars was imported before it, the setting in the environment when
    polars was imported by it (``"-"``: it was not), and the setting left afterwards."""
    probe = (
        "import builtins, json, os, sys\n"
        "from contractlang.cli.app import tune_allocator, wanted\n"
        "early = 'polars' in sys.modules\n"
        "seen = []\n"
        "real = builtins.__import__\n"
        "def spy(name, *args, **kwargs):\n"
        "    if name == 'polars' and not seen:\n"
        "        seen.append(os.environ.get('_RJEM_MALLOC_CONF'))\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = spy\n"
        f"tune_allocator(wanted({argv!r}))\n"
        "builtins.__import__ = real\n"
        "loaded = seen[0] if 'polars' in sys.modules else '-'\n"
        "print('\\n' + json.dumps([early, loaded, os.environ.get('_RJEM_MALLOC_CONF')]))\n"
    )
    early, loaded, conf = _probe(probe, env)
    return early, loaded, conf


def test_polars_loads_with_the_allocator_setting_which_then_leaves_the_environment() -> None:
    from contractlang.cli.app import ALLOCATOR  # noqa: PLC0415 (a test of start-up)

    name, setting = ALLOCATOR
    assert setting == "dirty_decay_ms:200,muzzy_decay_ms:0"
    env = {k: v for k, v in os.environ.items() if k != name}
    # an evaluating command: polars loaded with the setting, which is not left for children
    assert _allocator_seen(["evaluate", "t.spot", "t.parquet"], env) == (False, setting, None)
    # check, fmt and --version load no polars: nothing set or loaded
    assert _allocator_seen(["check", "t.spot"], env) == (False, "-", None)
    assert _allocator_seen(["--version"], env) == (False, "-", None)
    # a setting of the user's own is kept, and polars not loaded early for it
    assert _allocator_seen(["evaluate"], {**env, name: "narenas:2"}) == (False, "-", "narenas:2")
