"""How this copy of the engine was built: pure Python or compiled by mypyc.

The engine (``ENGINE_SOURCES``, paths relative to ``src/``; a directory
means every module under it) can be compiled to C extension modules with
mypyc. ``pip install .`` compiles the modules admission spends its time in
(``ADMISSION_SOURCES``) when a C compiler and the Python headers are there,
and installs pure Python, saying why, when they are not;
``PODNUMA_MYPYC=full`` compiles all of ``ENGINE_SOURCES``, ``PODNUMA_MYPYC=0``
nothing (``setup.py`` reads these lists; ``tests/test_build.py`` checks
them). The compiled and the pure-Python engine behave identically; the
compiled one is faster.

``ENGINE_COMPILED`` is true when this module runs compiled, which only
happens in a compiled build (it is in both lists). The build also
tells mypy ``--always-true=ENGINE_COMPILED``, so a branch taken only by
pure Python (``if ENGINE_COMPILED: ... else: ...``) is left out of the C
code: engine modules use that, at module level only, where a construct
that is fastest in pure Python does not work on mypyc's native classes
(every such module is in ``ADMISSION_SOURCES``, so it is compiled
whenever ``ENGINE_COMPILED`` is true).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import FunctionType
from typing import Final, TypeVar

__all__ = [
    "ADMISSION_SOURCES",
    "ENGINE_COMPILED",
    "ENGINE_SOURCES",
    "ENGINE_NOTE_FILE",
    "engine_build",
    "engine_note",
    "mypyc_attr",
]

_T = TypeVar("_T")

#: the modules the full mypyc build compiles (``PODNUMA_MYPYC=full``; relative to ``src/``)
ENGINE_SOURCES: Final[tuple[str, ...]] = (
    "podnuma/buildinfo.py",
    "podnuma/fieldkit.py",
    # not errors.py: the edges subclass its errors in Python, which a
    # compiled (native) class does not allow
    "podnuma/golang/__init__.py",
    "podnuma/golang/duration.py",
    "podnuma/golang/fnv.py",
    "podnuma/golang/spew.py",
    "podnuma/golang/strconv.py",
    "podnuma/golang/types.py",
    # not golang/jsonnumbers.py (a float subclass) nor golang/jsonsyntax.py (a
    # JSON text's syntax check, read once per file) nor golang/fmtscan.py
    # (sysfs discovery, off the admission path) nor golang/rfc3339.py (a
    # pod's times, read once per pod text, off the admission path);
    # not golang/json.py: its str and list subclasses would be non-native
    # classes, which need mypy_extensions at run time; it reads checkpoint
    # files, off the admission path
    "podnuma/api",
    "podnuma/machine",
    "podnuma/cm",
    # the edges of ``podnuma simulate`` a step at a time: reading the steps,
    # playing them and writing each step's JSON (docs/speed.md)
    "podnuma/inputs/scenario.py",
    "podnuma/inputs/scenario_pods.py",
    "podnuma/inputs/scenario_stream.py",
    "podnuma/scenario/run.py",
    "podnuma/render/step_json.py",
    "podnuma/render/serialize.py",
)

#: the modules the default build compiles: the ones admitting and removing
#: pods spends its time in (``bench/bench_admission.py``, profiled by module,
#: static and restricted + Static memory), their base classes and every module
#: that reads ``ENGINE_COMPILED``; docs/speed.md gives the measured trade-off
ADMISSION_SOURCES: Final[tuple[str, ...]] = (
    "podnuma/buildinfo.py",
    "podnuma/machine/cpuset.py",
    "podnuma/api/qos.py",
    "podnuma/api/resources.py",
    "podnuma/api/pod.py",
    "podnuma/api/quantity.py",
    "podnuma/cm/container_manager.py",
    "podnuma/cm/active.py",
    "podnuma/cm/results.py",
    "podnuma/cm/admission.py",
    "podnuma/cm/cpumanager/cpu_assignment.py",
    "podnuma/cm/cpumanager/policy_static.py",
    "podnuma/cm/cpumanager/cpu_manager.py",
    "podnuma/cm/cpumanager/state.py",
    "podnuma/cm/cpumanager/native_twins.py",
    "podnuma/cm/cpumanager/cpu_hint_table.py",
    "podnuma/cm/cpumanager/policy.py",
    "podnuma/cm/memorymanager/memory_manager.py",
    "podnuma/cm/memorymanager/state.py",
    "podnuma/cm/memorymanager/policy_static.py",
    "podnuma/cm/memorymanager/native_twins.py",
    "podnuma/cm/memorymanager/policy.py",
    "podnuma/cm/devicemanager/manager.py",
    "podnuma/cm/devicemanager/topology_hints.py",
    "podnuma/cm/topologymanager/manager.py",
    "podnuma/cm/topologymanager/policy_fastmerge.py",
    "podnuma/cm/topologymanager/native_twins.py",
    "podnuma/cm/topologymanager/policy_best_effort.py",
    "podnuma/cm/topologymanager/policy_restricted.py",
    "podnuma/cm/topologymanager/bitmask.py",
    "podnuma/cm/topologymanager/policy.py",
    "podnuma/cm/topologymanager/numa_info.py",
    "podnuma/cm/topologymanager/hint.py",
)


def _probe() -> None:
    """A function: a Python function object in pure Python, a builtin
    function when this module is compiled."""


ENGINE_COMPILED: Final[bool] = not isinstance(_probe, FunctionType)


def _no_mypyc_attr(*attrs: str, **kwattrs: object) -> Callable[[_T], _T]:
    return lambda cls: cls


# ``@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)``
# marks an engine class that ``copy.deepcopy`` copies (the explanations
# snapshot whole nodes): compiled, such a class is rebuilt without calling
# its ``__init__``, as in Python (the second flag keeps ``Class(...)`` from
# Python code running ``__init__``: mypyc skips it for a serializable
# class without it).
# mypyc reads the decorator at build time; at run time it does nothing, and
# mypy_extensions (which defines it) is not needed: pure Python does not
# import it (a start-up saved), the compiled build (``--always-true``, above)
# imports it as before.
if ENGINE_COMPILED:
    try:
        from mypy_extensions import mypyc_attr
    except ImportError:  # pragma: no cover - installs without mypy
        mypyc_attr = _no_mypyc_attr
else:
    mypyc_attr = _no_mypyc_attr


#: written into the package by a default build that could not compile: why
#: (no C compiler, no Python headers, no mypy in the build environment)
ENGINE_NOTE_FILE: Final[str] = "engine_build.txt"


def engine_note() -> str:
    """What the build recorded about falling back to pure Python ("" when
    it did not: a compiled install, ``PODNUMA_MYPYC=0``, a source tree)."""
    try:
        with open(os.path.join(os.path.dirname(__file__), ENGINE_NOTE_FILE), encoding="utf-8") as f:
            return " ".join(f.read().split())
    except OSError:
        return ""


def _engine_modules() -> list[str]:
    """The modules of ``ENGINE_SOURCES`` as installed (names)."""
    src = os.path.dirname(os.path.dirname(__file__))
    names: list[str] = []
    for entry in ENGINE_SOURCES:
        path = os.path.join(src, entry)
        files = (
            [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".py")]
            if os.path.isdir(path)
            else [path]
        )
        for file in files:
            parts = os.path.relpath(file[: -len(".py")], src).split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            names.append(".".join(parts))
    return names


def engine_build() -> str:
    """``"pure Python"`` (with why, when the build fell back to it),
    ``"compiled (mypyc)"`` (every engine module) or ``"compiled (mypyc, N of
    M engine modules)"`` (the default build: the admission path)."""
    if not ENGINE_COMPILED:
        note = engine_note()
        return f"pure Python ({note})" if note else "pure Python"
    import importlib.util  # (here: a start-up does not need it)
    from importlib.machinery import EXTENSION_SUFFIXES

    names = _engine_modules()
    compiled = 0
    for name in names:
        spec = importlib.util.find_spec(name)
        origin = (spec.origin or "") if spec is not None else ""
        compiled += origin.endswith(tuple(EXTENSION_SUFFIXES))
    if compiled == len(names):
        return "compiled (mypyc)"
    return f"compiled (mypyc, {compiled} of {len(names)} engine modules)"
