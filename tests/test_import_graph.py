"""The layering rules of docs/architecture.md, checked on the source.

Every ``import`` in ``src/podnuma`` (module level or inside a function) is
an edge of the module graph. The graph must have no cycle (imports under
``if TYPE_CHECKING:`` are annotations, never executed: they count for the
layers, not for cycles), every edge must
go to the same layer or a lower one, click may be imported only in
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
    ("foundation", frozenset({"errors", "units", "golang", "buildinfo"})),
    ("engine", frozenset({"machine", "api", "cm"})),
    ("inputs", frozenset({"inputs", "fileio"})),
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


def _type_checking_blocks(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    out.add(id(sub))
    return out


def _imports(name: str, path: Path, *, annotations: bool = True) -> Iterator[str]:
    """Every module ``name`` imports (absolute names); with ``annotations``
    false, not those under ``if TYPE_CHECKING:`` (never run, so no cycle)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skip = set() if annotations else _type_checking_blocks(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
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


def _graph(*, annotations: bool = True) -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        graph[name] = {
            imported for imported in _imports(name, path, annotations=annotations)
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


def test_no_import_cycles() -> None:
    graph = _graph(annotations=False)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
    assert cycles == [], f"import cycles: {cycles}"


def test_no_upward_imports() -> None:
    upward = []
    for module, deps in _graph().items():
        unit = _unit(module)
        if unit not in LAYER_OF:
            continue
        for dep in deps:
            dep_unit = _unit(dep)
            if dep_unit in LAYER_OF and LAYER_OF[dep_unit] > LAYER_OF[unit]:
                upward.append(f"{module} -> {dep}")
    assert upward == [], "imports from a lower layer to a higher one:\n" + "\n".join(sorted(upward))


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


def test_the_checker_catches_a_cycle_and_an_upward_edge(tmp_path: Path) -> None:
    fake = {"podnuma.api.a": {"podnuma.render.b"}, "podnuma.render.b": {"podnuma.api.a"}}
    upward = [
        (m, d) for m, deps in fake.items() for d in deps
        if LAYER_OF[_unit(d)] > LAYER_OF[_unit(m)]
    ]
    assert upward == [("podnuma.api.a", "podnuma.render.b")]
