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
module (measured: 248 s instead of 157 s of compilation, no faster engine);
``PODNUMA_BUILD_JOBS`` how many C files are compiled at once (default: one
per CPU this process may use; 1 compiles them one after another).
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


def _build_jobs() -> int:
    """``PODNUMA_BUILD_JOBS``, else the CPUs this process may run on."""
    value = os.environ.get("PODNUMA_BUILD_JOBS", "").strip()
    if value:
        try:
            jobs = int(value)
        except ValueError:
            raise SystemExit(f"PODNUMA_BUILD_JOBS={value!r}: expected a whole number") from None
        if jobs < 1:
            raise SystemExit(f"PODNUMA_BUILD_JOBS={value!r}: expected 1 or more")
        return jobs
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _parallel_build_ext() -> type:
    """``build_ext`` compiling the C files of one extension concurrently.

    The engine's shared library is one extension with one C file per module
    (plus mypyc's runtime), which setuptools compiles one after another.
    Here each file goes to the compiler's own ``compile`` on its own, from a
    pool of ``_build_jobs()`` threads (the work happens in the compiler
    processes); the objects come back in the sources' order, so linking is
    unchanged. With one job, or one source, nothing changes."""
    from concurrent.futures import ThreadPoolExecutor

    from setuptools.command.build_ext import build_ext

    jobs = _build_jobs()  # (read, and refused when invalid, before anything is built)

    class ParallelBuildExt(build_ext):  # type: ignore[misc]
        def build_extension(self, ext: object) -> None:
            compiler = self.compiler
            serial = compiler.compile

            def compile_each(sources: list[str], output_dir: str | None = None, **kwargs: object) -> list[str]:
                if jobs < 2 or len(sources) < 2:
                    return list(serial(sources, output_dir=output_dir, **kwargs))
                # the object directories first, one thread: creating them is
                # not safe to race
                for obj in compiler.object_filenames(sources, strip_dir=False, output_dir=output_dir):
                    os.makedirs(os.path.dirname(obj) or ".", exist_ok=True)
                with ThreadPoolExecutor(max_workers=jobs) as pool:
                    parts = pool.map(lambda src: serial([src], output_dir=output_dir, **kwargs), sources)
                    return [obj for part in parts for obj in part]

            compiler.compile = compile_each
            try:
                super().build_extension(ext)
            finally:
                del compiler.compile  # the class's method again

    return ParallelBuildExt


_options: dict[str, dict[str, object]] = {}
_cmdclass: dict[str, type] = {}
if _flag("PODNUMA_MYPYC"):
    # its own build tree: a later pure build must not pick up extension
    # modules left in build/lib
    _options["build"] = {"build_base": "build/mypyc"}
    _cmdclass["build_ext"] = _parallel_build_ext()
setup(ext_modules=ext_modules(), options=_options, cmdclass=_cmdclass)
