"""Optional mypyc build of the engine.

``pip install .`` (and ``-e .``) installs pure Python: nothing is compiled.
``PODNUMA_MYPYC=1 pip install .`` compiles the engine modules listed in
``src/podnuma/buildinfo.py`` (``ENGINE_SOURCES``) to C extension modules
with mypyc; it needs a C compiler and the Python headers, and it fails
when compilation fails (no silent fallback to pure Python). The compiled
build is non-editable: ``build_backend.py`` refuses ``PODNUMA_MYPYC=1``
with ``pip install -e``.

Knobs (compiled build only): ``PODNUMA_MYPYC_OPT`` the C optimisation level
(default 3); ``PODNUMA_MYPYC_MULTI_FILE=0`` one big C file instead of one per
module (measured: 248 s instead of 157 s of compilation, no faster engine).
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent


def _flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value == "":
        return default
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise SystemExit(f"{name}={os.environ[name]!r}: expected 1 or 0")


def engine_paths() -> list[str]:
    """Every engine source file, relative to this directory, in a stable order."""
    info = runpy.run_path(str(HERE / "src" / "podnuma" / "buildinfo.py"))
    paths: list[str] = []
    for entry in info["ENGINE_SOURCES"]:
        target = HERE / "src" / entry
        if target.is_dir():
            paths.extend(str(p.relative_to(HERE)) for p in sorted(target.rglob("*.py")))
        elif target.is_file():
            paths.append(str(target.relative_to(HERE)))
        else:
            raise SystemExit(f"ENGINE_SOURCES names {entry}, which does not exist")
    return paths


def ext_modules() -> list[object]:
    if not _flag("PODNUMA_MYPYC"):
        return []
    if "bdist_wheel" not in sys.argv and "build_ext" not in sys.argv and (
        "dist_info" in sys.argv or "egg_info" in sys.argv
    ):
        return []  # metadata only (the backend's first pass): no need to compile
    from mypyc.build import mypycify  # the build requirement added by build_backend.py

    return list(
        mypycify(
            ["--always-true=ENGINE_COMPILED", *engine_paths()],
            opt_level=os.environ.get("PODNUMA_MYPYC_OPT", "3"),
            multi_file=_flag("PODNUMA_MYPYC_MULTI_FILE", default=True),
            # one shared library, podnuma_engine__mypyc, next to the package
            # (mypyc derives the modules' __file__ from its location, so it
            # must be top-level)
            group_name="podnuma_engine",
            target_dir="build/mypyc",
        )
    )


_options: dict[str, dict[str, object]] = {}
if _flag("PODNUMA_MYPYC"):
    # its own build tree: a later pure build must not pick up extension
    # modules left in build/lib
    _options["build"] = {"build_base": "build/mypyc"}
setup(ext_modules=ext_modules(), options=_options)
