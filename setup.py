"""The engine's build: pure Python, or compiled to C with mypyc.

``build_backend.py`` (the PEP 517 backend) says how ``PODNUMA_MYPYC`` picks
the build; it runs this file in its own process. The default compiles the
engine modules listed in ``ADMISSION_SOURCES`` (``src/podnuma/buildinfo.py``)
when a C compiler and the Python headers are there, and otherwise builds
pure Python, writing why into the package (``podnuma/engine_build.txt``,
which ``podnuma --version`` and ``podnuma demo`` show) and warning in the
build's output. ``PODNUMA_MYPYC=full`` compiles every module of
``ENGINE_SOURCES`` and fails when it cannot (no silent fallback there);
``PODNUMA_MYPYC=0`` compiles nothing. A failed compilation fails the
install in both compiled builds.

Knobs (compiled builds only): ``PODNUMA_MYPYC_OPT`` the C optimisation
level (default: ``g``, i.e. ``-Og``, for the default build, 3 for ``full``);
``PODNUMA_MYPYC_MULTI_FILE=0`` one big C file instead of one per module
(measured: 248 s instead of 157 s of compilation, no faster engine);
``PODNUMA_BUILD_JOBS`` how many C files are compiled at once (default: one
per CPU this process may use; 1 compiles them one after another).
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # build_backend.py, when run as ``python setup.py``
from build_backend import engine_mode, toolchain_problem  # noqa: E402

#: what each build compiles (a list in buildinfo.py), its C optimisation
#: level and its debug information level (docs/speed.md has the measurements)
BUILDS = {"auto": ("ADMISSION_SOURCES", "g", "0"), "full": ("ENGINE_SOURCES", "3", "1")}


def _flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value == "":
        return default
    if value in ("0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise SystemExit(f"{name}={os.environ[name]!r}: expected 1 or 0")


def engine_paths(listing: str = "ENGINE_SOURCES") -> list[str]:
    """The source files of a list of ``buildinfo.py``, relative to this
    directory, in a stable order."""
    info = runpy.run_path(str(HERE / "src" / "podnuma" / "buildinfo.py"))
    paths: list[str] = []
    for entry in info[listing]:
        target = HERE / "src" / entry
        if target.is_dir():
            paths.extend(str(p.relative_to(HERE)) for p in sorted(target.rglob("*.py")))
        elif target.is_file():
            paths.append(str(target.relative_to(HERE)))
        else:
            raise SystemExit(f"{listing} names {entry}, which does not exist")
    return paths


def _metadata_only() -> bool:
    """The backend's metadata passes run this file too: nothing to build."""
    return "bdist_wheel" not in sys.argv and "build_ext" not in sys.argv and (
        "dist_info" in sys.argv or "egg_info" in sys.argv
    )


def plan() -> tuple[str, str]:
    """(the build: ``"pure"``, ``"auto"`` or ``"full"``; why the default
    build is pure Python, ``""`` when it is not)."""
    mode = engine_mode()
    if mode == "pure" or _metadata_only():
        return "pure", ""
    if mode == "auto":
        problem = toolchain_problem()
        if problem is None:
            try:
                import mypyc.build  # noqa: F401 - the build requirement build_backend.py adds
            except ImportError:
                problem = "mypy (mypyc) is not installed where the package is built"
        if problem is not None:
            return "pure", f"not compiled, {problem}"
    return mode, ""


def ext_modules(build: str) -> list[object]:
    if build == "pure":
        return []
    from mypyc.build import mypycify  # the build requirement added by build_backend.py

    listing, opt, debug = BUILDS[build]
    return list(
        mypycify(
            ["--always-true=ENGINE_COMPILED", *engine_paths(listing)],
            opt_level=os.environ.get("PODNUMA_MYPYC_OPT", opt),
            multi_file=_flag("PODNUMA_MYPYC_MULTI_FILE", default=True),
            debug_level=debug,
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


def _build_py(note: str) -> type:
    """``build_py`` that writes ``note`` into the package as
    ``podnuma/engine_build.txt`` (and removes one an earlier build left)."""

    class NotingBuildPy(build_py):  # type: ignore[misc]
        def run(self) -> None:
            super().run()
            if getattr(self, "editable_mode", False):
                return
            target = Path(self.build_lib, "podnuma", "engine_build.txt")
            if note:
                target.write_text(note + "\n", encoding="utf-8")
            elif target.exists():
                target.unlink()

    return NotingBuildPy


BUILD, NOTE = plan()
if NOTE:
    print(f"warning: podnuma: the engine is installed as pure Python: {NOTE}", file=sys.stderr)
_options: dict[str, dict[str, object]] = {}
_cmdclass: dict[str, type] = {"build_py": _build_py(NOTE)}
if BUILD != "pure":
    # its own build tree: a later pure build must not pick up extension
    # modules left in build/lib
    _options["build"] = {"build_base": f"build/mypyc-{BUILD}"}
    _cmdclass["build_ext"] = _parallel_build_ext()
setup(ext_modules=ext_modules(BUILD), options=_options, cmdclass=_cmdclass)
