"""The layering rules of docs/architecture.md, checked on the source.

Every ``import`` in ``src/podnuma`` (module level, inside a function, or
under ``if TYPE_CHECKING:``) is an edge of the module graph. The graph must
have no cycle (an annotation-only import counts: two modules that name each
other's types are one piece of code in two files), every edge must go to
the same layer or a lower one, click may be imported only in
``podnuma.cli``, rich only in ``podnuma.render`` and ``podnuma.cli``, and
the engine imports no I/O or presentation library.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "podnuma"

#: Layers, lowest first. A module may import from its own layer or below.
#: The first component after ``podnuma`` names the unit
#: (``podnuma.cm.cpumanager.policy`` -> ``cm``).
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({"errors", "units", "golang", "buildinfo", "fieldkit"})),
    ("engine", frozenset({"machine", "api", "cm"})),
    ("inputs", frozenset({"inputs", "fileio", "fds"})),
    ("scenario", frozenset({"scenario"})),
    ("analysis", frozenset({"analysis"})),
    ("render", frozenset({"render"})),
    ("domains", frozenset({"cgroups", "grpc", "fleet"})),
    ("service", frozenset({"service"})),
    ("doors", frozenset({"agent", "web"})),
    ("cli", frozenset({"cli"})),
)
LAYER_OF = {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}
ENGINE = LAYERS[1][1] | LAYERS[0][1]

#: third-party or standard modules the engine (pure, no I/O) must not use
ENGINE_FORBIDDEN = frozenset({
    "click", "rich", "yaml", "PIL", "sys", "pathlib", "io", "tempfile", "shutil",
    "subprocess", "socket", "threading", "asyncio", "logging",
})


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path) -> Iterator[str]:
    """Every module ``name`` imports (absolute names), wherever the import
    stands (``if TYPE_CHECKING:`` included)."""
    return _imports_in(name, path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py")


def _imports_in(name: str, text: str, *, is_package: bool = False) -> Iterator[str]:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield module
            for alias in node.names:  # "from podnuma.x import y" may name module y
                yield f"{module}.{alias.name}"


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {
            imported for imported in _imports(name, path)
            if imported in modules and imported != name
        }
    return graph


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _externals(path: Path, name: str) -> set[str]:
    return {m.split(".")[0] for m in _imports(name, path) if not m.startswith("podnuma")}


def test_every_unit_has_a_layer() -> None:
    units = {_unit(m) for m in _modules()} - {""}
    assert units <= set(LAYER_OF), f"add to LAYERS: {sorted(units - set(LAYER_OF))}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def _upward(graph: dict[str, set[str]]) -> list[str]:
    upward = []
    for module, deps in graph.items():
        unit = _unit(module)
        if unit not in LAYER_OF:
            continue
        for dep in deps:
            dep_unit = _unit(dep)
            if dep_unit in LAYER_OF and LAYER_OF[dep_unit] > LAYER_OF[unit]:
                upward.append(f"{module} -> {dep}")
    return sorted(upward)


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert cycles == [], f"import cycles (annotation-only imports included): {cycles}"


def test_no_upward_imports() -> None:
    upward = _upward(_graph())
    assert upward == [], "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_click_only_in_cli_and_rich_only_in_render_and_cli() -> None:
    bad = []
    for name, path in _modules().items():
        ext = _externals(path, name)
        unit = _unit(name)
        if "click" in ext and unit != "cli":
            bad.append(f"{name} imports click")
        if "rich" in ext and unit not in ("render", "cli"):
            bad.append(f"{name} imports rich")
    assert bad == []


def test_doors_do_not_import_each_other() -> None:
    # web/ and agent/ are doors beside each other and below cli/ (which
    # starts them): neither imports the command line or the other door
    bad = [
        f"{module} -> {dep}"
        for module, deps in _graph().items()
        for dep in deps
        if _unit(module) in ("web", "agent") and _unit(dep) in ({"web", "agent", "cli"} - {_unit(module)})
    ]
    assert bad == []


def test_engine_does_no_io() -> None:
    bad = []
    for name, path in _modules().items():
        if _unit(name) in ENGINE:
            used = _externals(path, name) & ENGINE_FORBIDDEN
            if used:
                bad.append(f"{name} imports {sorted(used)}")
    assert bad == []


@pytest.mark.parametrize("module", ["podnuma.cli.app", "podnuma.analysis.explain"])
def test_the_checker_sees_imports(module: str) -> None:
    # guards the checker itself: a parse that finds nothing would pass everything
    graph = _graph()
    assert graph[module], f"no imports found in {module}"


def test_the_checker_catches_a_cycle_and_an_upward_edge() -> None:
    # a type-only import closes the circle: it counts
    a = _imports_in("podnuma.api.a", (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from podnuma.api.b import B\n"
    ))
    b = _imports_in("podnuma.api.b", "from . import a\nfrom podnuma.render import c\n")
    graph = {
        "podnuma.api.a": set(a) & {"podnuma.api.b"},
        "podnuma.api.b": set(b) & {"podnuma.api.a", "podnuma.render.c"},
        "podnuma.render.c": set(),
    }
    assert _cycles(graph) == [["podnuma.api.a", "podnuma.api.b"]]
    assert _upward(graph) == ["podnuma.api.b -> podnuma.render.c"]
