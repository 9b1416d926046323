"""The optional compiled (mypyc) build of the engine.

``ENGINE_SOURCES`` (``podnuma.buildinfo``) is the one list of what
``PODNUMA_MYPYC=1 pip install .`` compiles (``setup.py`` reads it): every
entry must exist, and every engine module the simulation imports must be
in it. With ``PODNUMA_EXPECT_COMPILED=1`` (the compiled CI job) every
listed module must have been imported from a C extension module, so the
job cannot pass on pure Python by mistake.
"""

from __future__ import annotations

import importlib
import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from click.testing import CliRunner

import podnuma
from podnuma.buildinfo import ENGINE_COMPILED, ENGINE_SOURCES, engine_build
from podnuma.cli import cli

SRC = Path(__file__).resolve().parents[1] / "src"

#: engine modules deliberately left as Python (see ENGINE_SOURCES)
NOT_COMPILED = frozenset({"podnuma.golang.json", "podnuma.errors"})


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def listed_modules() -> list[str]:
    """The modules ENGINE_SOURCES names, as setup.py expands it."""
    out: list[str] = []
    for entry in ENGINE_SOURCES:
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
    # run in a fresh interpreter's view: the engine modules loaded by importing the node
    listed = set(listed_modules())
    importlib.import_module("podnuma.cm.container_manager")
    loaded = {
        name for name in sys.modules
        if name.split(".")[:2][-1] in {"api", "machine", "cm", "golang", "errors", "buildinfo",
                                       "fieldkit"}
        and name.startswith("podnuma.")
    }
    assert loaded, "importing podnuma.cm.container_manager loaded no engine module"
    assert sorted(loaded - listed - NOT_COMPILED) == []


def test_engine_build_says_what_was_imported() -> None:
    compiled = _is_extension("podnuma.cm.container_manager")
    assert compiled == ENGINE_COMPILED
    assert engine_build() == ("compiled (mypyc)" if compiled else "pure Python")
    assert podnuma.engine_build() == engine_build()


def test_version_names_the_engine_build() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.rstrip().endswith(f"(engine: {engine_build()})")


@pytest.mark.skipif(
    os.environ.get("PODNUMA_EXPECT_COMPILED") != "1",
    reason="PODNUMA_EXPECT_COMPILED=1 is the compiled build's job",
)
def test_the_engine_is_compiled() -> None:
    pure = [m for m in listed_modules() if not _is_extension(m)]
    assert pure == [], f"imported as Python, not compiled: {pure}"
    assert engine_build() == "compiled (mypyc)"
