"""The package's imports flow one way (docs/architecture.md): read from the source, every import
counts — inside functions and under ``if TYPE_CHECKING:`` too — and none may go up a layer,
sideways between sibling passes, or round in a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "contractlang"

#: The layers, lowest first. A module may import from its own unit (the same package, or the
#: same module) and from any lower layer; units that share a layer are siblings and may not
#: import each other.
LAYERS: list[tuple[str, ...]] = [
    ("contractlang.codes", "contractlang.version", "contractlang.mock_trainer"),
    ("contractlang.diagnostics",),
    ("contractlang.errors",),
    ("contractlang.lang", "contractlang.tomlfile"),
    (
        "contractlang.syntax",
        "contractlang.trace",
        "contractlang.check",
        "contractlang.decimals",
    ),
    ("contractlang.fmt", "contractlang.compile", "contractlang.importers"),
    ("contractlang.evaluate",),
    ("contractlang.pipeline",),
    (
        "contractlang.simulate",
        "contractlang.rehearse",
        "contractlang.reconcile",
        "contractlang.compare",
    ),
    ("contractlang.render",),
    ("contractlang.fixtures",),
    ("contractlang.cli",),
    ("contractlang", "contractlang.__main__", "contractlang.pytest_plugin"),
]


#: What a renderer may import from outside ``render/``: the foundations every pass shares and,
#: of the engines, only the modules holding their results. What a renderer needs from an engine
#: is computed before rendering and carried by the result (docs/architecture.md).
RENDER_MAY_IMPORT = frozenset(
    {
        # foundations
        "contractlang.codes",
        "contractlang.diagnostics",
        "contractlang.errors",
        "contractlang.version",
        "contractlang.lang.ast",
        "contractlang.lang.numbers",
        "contractlang.lang.show",
        # results
        "contractlang.evaluate.results",
        "contractlang.compare.model",
        "contractlang.reconcile.model",
        "contractlang.simulate.results",
        "contractlang.simulate.workload",
        "contractlang.rehearse.results",
        "contractlang.rehearse.record",
        "contractlang.rehearse.plan",
        "contractlang.trace.schema",
        "contractlang.trace.model",
        "contractlang.trace.problems",
        "contractlang.importers.result",
    }
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def unit_of(module: str) -> str:
    """The longest layer unit that ``module`` is, or is inside."""
    units = [u for layer in LAYERS for u in layer]
    found = [u for u in units if module == u or module.startswith(u + ".")]
    assert found, f"{module} is in no layer: add it to LAYERS"
    return max(found, key=len)


def layer_of(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def imports_of(module: str) -> set[str]:
    """Every contractlang module ``module`` imports, wherever the import stands."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> set[str]:
    """The contractlang modules a source imports (``package``: where relative imports start)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            # `from contractlang.lang import ast` imports the module contractlang.lang.ast (its
            # package's __init__ runs first, as for any import of a module of the package)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
    return {m for m in found if m == "contractlang" or m.startswith("contractlang.")}


def violations(module: str, targets: set[str]) -> list[str]:
    """The imports of ``module`` that go up a layer or sideways to a sibling unit."""
    unit = unit_of(module)
    wrong = []
    for target in sorted(targets - {module}):
        other = unit_of(target)
        if other == unit or layer_of(other) < layer_of(unit):
            continue
        way = "sideways to" if layer_of(other) == layer_of(unit) else "up to"
        wrong.append(f"{module} imports {target}: {way} {other}")
    return wrong


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, if there is any."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if n not in graph:
                continue
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


GRAPH = {m: imports_of(m) - {m} for m in MODULES}


def test_the_graph_was_read() -> None:
    assert len(MODULES) > 40
    assert "contractlang.lang.ast" in GRAPH["contractlang.check.infer"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down(module: str) -> None:
    wrong = violations(module, GRAPH[module])
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles() -> None:
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


def test_hidden_imports_are_seen_and_judged() -> None:
    """An upward import under TYPE_CHECKING and one inside a function are read and reported,
    a relative one is read (and allowed, inside its package), a sideways one is reported, and
    a cycle made only of imports inside functions is found."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import vocabulary\n"
        "if TYPE_CHECKING:\n    from contractlang.evaluate.results import Evaluation\n"
        "def f():\n    from contractlang.render.evaluate import terminal\n"
    )
    seen = imports_in(source, "contractlang.lang")
    assert seen == {
        "contractlang.lang.vocabulary",
        "contractlang.evaluate.results",
        "contractlang.render.evaluate.terminal",
    }
    wrong = violations("contractlang.lang.fake", seen)
    assert len(wrong) == 2  # the relative import stays inside its own package
    assert all("up to" in w for w in wrong)
    sideways = violations("contractlang.trace.fake", {"contractlang.check.infer"})
    assert sideways == [
        "contractlang.trace.fake imports contractlang.check.infer: sideways to contractlang.check"
    ]
    looped = imports_in("def g():\n    from contractlang.a import x\n", "contractlang")
    assert find_cycle({"contractlang.a": {"contractlang.b"}, "contractlang.b": looped}) == [
        "contractlang.a",
        "contractlang.b",
        "contractlang.a",
    ]


def engine_imports(targets: set[str]) -> list[str]:
    """The imports of a renderer that reach past the results into an engine."""
    inside = ("contractlang.render", "contractlang.render.")
    return sorted(t for t in targets if not t.startswith(inside) and t not in RENDER_MAY_IMPORT)


RENDERERS = sorted(m for m in MODULES if m.startswith("contractlang.render"))


@pytest.mark.parametrize("module", RENDERERS)
def test_renderers_import_results_not_engines(module: str) -> None:
    wrong = engine_imports(GRAPH[module])
    assert not wrong, f"{module} imports {wrong}: carry what it needs on the result"


def test_an_engine_import_in_a_renderer_is_caught() -> None:
    source = (
        "from contractlang.compare.model import Comparison\n"
        "from contractlang.compare.rank import delta\n"
        "from contractlang.render.common.numbers import money\n"
        "def f():\n    from contractlang.trace.digest import trace_digest\n"
    )
    seen = imports_in(source, "contractlang.render.compare")
    assert engine_imports(seen) == ["contractlang.compare.rank", "contractlang.trace.digest"]


def test_the_renderers_allowed_imports_exist_and_render_holds_only_rooms() -> None:
    assert not RENDER_MAY_IMPORT - set(MODULES), "an allowed module no longer exists"
    assert len(RENDERERS) > 30
    top = PACKAGE / "render"
    assert [p.name for p in top.glob("*.py")] == ["__init__.py"]


def test_architecture_doc_names_every_module() -> None:
    """docs/architecture.md stays true: every module is named there (as `name.py` or by its
    path), and so is every layer unit."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for module, path in MODULES.items():
        if path.name == "__init__.py" and module.count(".") <= 1:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        if f"`{rel}`" not in doc and f"`{path.name}`" not in doc and f"{path.name}`" not in doc:
            missing.append(rel)
    for unit in (u for layer in LAYERS for u in layer if u != "contractlang"):
        name = unit.removeprefix("contractlang.").replace(".", "/")
        if name not in doc:
            missing.append(unit)
    assert not missing, f"not in docs/architecture.md: {missing}"
