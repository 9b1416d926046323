"""The engine's builds: pure Python, compiled (mypyc) by default, compiled in full.

``ENGINE_SOURCES`` (``podnuma.buildinfo``) is the one list of what
``PODNUMA_MYPYC=full pip install .`` compiles and ``ADMISSION_SOURCES`` of
what the default ``pip install .`` compiles (``setup.py`` reads both):
every entry must exist, every engine module the simulation imports must be
in the full list, and the default list must be a part of it that mypyc
can compile on its own. With ``PODNUMA_EXPECT_COMPILED=1`` (the compiled CI
job: a default install) every module of the default list must have been
imported from a C extension module, with ``PODNUMA_EXPECT_COMPILED=full``
every listed module, so the job cannot pass on pure Python by mistake.
Where no C compiler works, the default build is pure Python and says why.
"""

from __future__ import annotations

import ast
import importlib
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from click.testing import CliRunner

import podnuma
from podnuma import buildinfo
from podnuma.buildinfo import ADMISSION_SOURCES, ENGINE_COMPILED, ENGINE_SOURCES, engine_build
from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

#: engine modules deliberately left as Python (see ENGINE_SOURCES)
NOT_COMPILED = frozenset({"podnuma.golang.json", "podnuma.golang.jsonnumbers", "podnuma.golang.fmtscan",
                          "podnuma.golang.rfc3339", "podnuma.golang.jsonsyntax", "podnuma.errors"})


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def listed_modules(listing: tuple[str, ...] = ENGINE_SOURCES) -> list[str]:
    """The modules a list names, as setup.py expands it."""
    out: list[str] = []
    for entry in listing:
        target = SRC / entry
        paths = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        out.extend(_module(p) for p in paths)
    return out


def _is_extension(module: str) -> bool:
    file = importlib.import_module(module).__file__ or ""
    return file.endswith(tuple(EXTENSION_SUFFIXES))


def test_every_listed_source_exists() -> None:
    missing = [entry for entry in ENGINE_SOURCES if not (SRC / entry).exists()]
    assert missing == []
    for entry in ENGINE_SOURCES:
        target = SRC / entry
        assert target.suffix == ".py" or any(target.rglob("*.py")), entry


def test_every_engine_module_the_node_needs_is_listed() -> None:
    # in a fresh interpreter: the engine modules importing the node loads
    # (not those other tests of this process loaded, e.g. the agent's)
    listed = set(listed_modules())
    got = subprocess.run(
        [sys.executable, "-c", "import sys, podnuma.cm.container_manager; print(*sorted(sys.modules))"],
        capture_output=True, text=True, check=True,
    )
    loaded = {
        name for name in got.stdout.split()
        if name.split(".")[:2][-1] in {"api", "machine", "cm", "golang", "errors", "buildinfo",
                                       "fieldkit"}
        and name.startswith("podnuma.")
    }
    assert loaded, "importing podnuma.cm.container_manager loaded no engine module"
    assert sorted(loaded - listed - NOT_COMPILED) == []


def test_the_default_build_compiles_a_part_of_the_engine() -> None:
    full = set(listed_modules())
    default = listed_modules(ADMISSION_SOURCES)
    assert len(default) == len(set(default)) == len(ADMISSION_SOURCES)
    assert all(entry.endswith(".py") and (SRC / entry).is_file() for entry in ADMISSION_SOURCES)
    assert sorted(set(default) - full) == []
    assert "podnuma.buildinfo" in default  # ENGINE_COMPILED is true only when it is compiled
    assert set(default) < full


def _module_trees() -> dict[str, ast.Module]:
    return {
        _module(path): ast.parse(path.read_text(encoding="utf-8"))
        for entry in ENGINE_SOURCES
        for path in ((SRC / entry).rglob("*.py") if (SRC / entry).is_dir() else [SRC / entry])
    }


def test_every_module_that_reads_engine_compiled_is_compiled_by_default() -> None:
    # ENGINE_COMPILED says whether buildinfo is compiled; a module that picks
    # a body with it must then be compiled as well (the build drops the
    # pure-Python branch from the C code, and the other one is slow in Python)
    readers = {
        name for name, tree in _module_trees().items()
        if name != "podnuma.buildinfo"
        and any(isinstance(n, ast.Name) and n.id == "ENGINE_COMPILED" for n in ast.walk(tree))
    }
    assert readers, "no engine module reads ENGINE_COMPILED: the test looks at nothing"
    assert sorted(readers - set(listed_modules(ADMISSION_SOURCES))) == []


def test_interpreted_subclasses_of_compiled_classes_are_allowed() -> None:
    # a class left as Python may derive from a compiled (native) class only
    # when that class allows it: mypyc refuses such a subclass at import
    # time otherwise
    trees = _module_trees()
    compiled = set(listed_modules(ADMISSION_SOURCES))
    classes: dict[str, tuple[str, ast.ClassDef]] = {}
    for name, tree in trees.items():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes[f"{name}.{node.name}"] = (name, node)
    crossings = 0
    for name, tree in trees.items():
        if name in compiled:
            continue
        imported = {
            alias.asname or alias.name: f"{node.module}.{alias.name}"
            for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names
        }
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for base in node.bases:
                target = imported.get(ast.unparse(base).split("[")[0], "")
                if target not in classes or classes[target][0] not in compiled:
                    continue
                crossings += 1
                decorators = [ast.unparse(d) for d in classes[target][1].decorator_list]
                assert any("allow_interpreted_subclasses=True" in d for d in decorators), (
                    f"{name}.{node.name} (Python) derives from {target} (compiled)"
                )
    assert crossings, "no Python class derives from a compiled one: the test looks at nothing"


def test_engine_build_says_what_was_imported() -> None:
    compiled = _is_extension("podnuma.cm.container_manager")
    assert compiled == ENGINE_COMPILED
    build = engine_build()
    if not compiled:
        assert build == "pure Python" or build.startswith("pure Python (not compiled, ")
    elif all(_is_extension(m) for m in listed_modules()):
        assert build == "compiled (mypyc)"
    else:
        count = sum(_is_extension(m) for m in listed_modules())
        assert build == f"compiled (mypyc, {count} of {len(listed_modules())} engine modules)"
    assert podnuma.engine_build() == build


def test_version_names_the_engine_build() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.rstrip().endswith(f"(engine: {engine_build()})")


@pytest.mark.skipif(ENGINE_COMPILED, reason="the note of a pure-Python install")
def test_a_pure_install_that_could_not_compile_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "podnuma"
    package.mkdir()
    monkeypatch.setattr(buildinfo, "__file__", str(package / "buildinfo.py"))
    assert buildinfo.engine_note() == ""
    assert engine_build() == "pure Python"
    quiet = CliRunner().invoke(cli, ["demo"])
    assert quiet.exit_code == 0, quiet.output
    assert "note:" not in quiet.stderr

    (package / buildinfo.ENGINE_NOTE_FILE).write_text(
        "not compiled, no working C compiler (command 'cc' failed:\n"
        "No such file or directory)\n", encoding="utf-8")
    reason = "not compiled, no working C compiler (command 'cc' failed: No such file or directory)"
    assert buildinfo.engine_note() == reason
    assert engine_build() == f"pure Python ({reason})"
    version = CliRunner().invoke(cli, ["--version"])
    assert version.stdout.rstrip().endswith(f"(engine: pure Python ({reason}))")
    demo = CliRunner().invoke(cli, ["demo"])
    assert demo.exit_code == 0, demo.output
    assert demo.stdout == quiet.stdout
    notes = [line for line in demo.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and reason in notes[0], demo.stderr


def _backend() -> object:
    sys.path.insert(0, str(ROOT))
    try:
        return importlib.import_module("build_backend")
    finally:
        sys.path.remove(str(ROOT))


@pytest.mark.parametrize(
    ("value", "mode"),
    [("", "auto"), ("auto", "auto"), ("0", "pure"), ("off", "pure"), ("1", "full"), ("full", "full")],
)
def test_podnuma_mypyc_picks_the_build(monkeypatch: pytest.MonkeyPatch, value: str, mode: str) -> None:
    monkeypatch.setenv("PODNUMA_MYPYC", value)
    assert _backend().engine_mode() == mode  # type: ignore[attr-defined]


def test_podnuma_mypyc_refuses_other_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODNUMA_MYPYC", "fast")
    with pytest.raises(SystemExit, match="PODNUMA_MYPYC='fast': expected auto, full or 0"):
        _backend().engine_mode()  # type: ignore[attr-defined]


def test_no_c_compiler_is_found_out(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    backend = _backend()
    missing = tmp_path / "no-such-cc"
    monkeypatch.setenv("CC", str(missing))
    monkeypatch.setenv("LDSHARED", f"{missing} -shared")
    problem = backend.toolchain_problem()  # type: ignore[attr-defined]
    assert problem is not None and problem.startswith("no working C compiler (")
    assert "no-such-cc" in problem


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="no C compiler here")
def test_a_c_compiler_is_found() -> None:
    assert _backend().toolchain_problem() is None  # type: ignore[attr-defined]


def _build(tmp_path: Path, env: dict[str, str]) -> list[str]:
    """The files ``setup.py build`` puts in ``build/lib`` (what the wheel
    holds) for a copy of the repository, built in this environment."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "build_backend.py", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(SRC, tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info"))
    out = subprocess.run(
        [sys.executable, "setup.py", "build"], cwd=tree,
        env={**os.environ, **env}, capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    lib = tree / "build" / "lib"
    return sorted(str(p.relative_to(lib)) for p in lib.rglob("*") if p.is_file())


def test_without_a_c_compiler_the_default_build_is_pure_and_says_why(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-cc")
    files = _build(tmp_path, {"PODNUMA_MYPYC": "", "CC": missing, "LDSHARED": f"{missing} -shared"})
    assert "podnuma/cm/container_manager.py" in files
    assert [f for f in files if f.endswith(tuple(EXTENSION_SUFFIXES))] == []
    note = (tmp_path / "tree" / "build" / "lib" / "podnuma" / "engine_build.txt").read_text()
    assert note.startswith("not compiled, no working C compiler (") and "no-such-cc" in note


def test_podnuma_mypyc_0_builds_pure_python_without_a_note(tmp_path: Path) -> None:
    files = _build(tmp_path, {"PODNUMA_MYPYC": "0"})
    assert "podnuma/cm/container_manager.py" in files
    assert [f for f in files if f.endswith(tuple(EXTENSION_SUFFIXES))] == []
    assert "podnuma/engine_build.txt" not in files


_EXPECT = os.environ.get("PODNUMA_EXPECT_COMPILED", "")


@pytest.mark.skipif(
    _EXPECT not in ("1", "full"),
    reason="PODNUMA_EXPECT_COMPILED=1 (or full) is the compiled build's job",
)
def test_the_engine_is_compiled() -> None:
    expected = listed_modules() if _EXPECT == "full" else listed_modules(ADMISSION_SOURCES)
    pure = [m for m in expected if not _is_extension(m)]
    assert pure == [], f"imported as Python, not compiled: {pure}"
    assert engine_build().startswith("compiled (mypyc")
    if _EXPECT == "full":
        assert engine_build() == "compiled (mypyc)"
