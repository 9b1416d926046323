"""How this copy of the engine was built: pure Python or compiled by mypyc.

The engine (``ENGINE_SOURCES``, paths relative to ``src/``; a directory
means every module under it) can be compiled to C extension modules with
mypyc: ``PODNUMA_MYPYC=1 pip install .`` (``setup.py`` reads this list;
``tests/test_build.py`` checks that every entry exists). The compiled and
the pure-Python engine behave identically; the compiled one is faster.

``ENGINE_COMPILED`` is true when this module runs compiled, which only
happens in a compiled build (it is itself in the list). The build also
tells mypy ``--always-true=ENGINE_COMPILED``, so a branch taken only by
pure Python (``if ENGINE_COMPILED: ... else: ...``) is left out of the C
code: engine modules use that, at module level only, where a construct
that is fastest in pure Python does not work on mypyc's native classes.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Final, TypeVar

__all__ = ["ENGINE_COMPILED", "ENGINE_SOURCES", "engine_build", "mypyc_attr"]

_T = TypeVar("_T")

#: the modules compiled by the optional mypyc build (relative to ``src/``)
ENGINE_SOURCES: Final[tuple[str, ...]] = (
    "podnuma/buildinfo.py",
    "podnuma/fieldkit.py",
    # not errors.py: the edges subclass its errors in Python, which a
    # compiled (native) class does not allow
    "podnuma/golang/__init__.py",
    "podnuma/golang/fnv.py",
    "podnuma/golang/spew.py",
    "podnuma/golang/strconv.py",
    "podnuma/golang/types.py",
    # not golang/json.py: its str and list subclasses would be non-native
    # classes, which need mypy_extensions at run time; it reads checkpoint
    # files, off the admission path
    "podnuma/api",
    "podnuma/machine",
    "podnuma/cm",
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
# mypy_extensions (which defines it) is not needed.
try:
    from mypy_extensions import mypyc_attr
except ImportError:  # pragma: no cover - installs without mypy
    mypyc_attr = _no_mypyc_attr


def engine_build() -> str:
    """``"compiled (mypyc)"`` or ``"pure Python"``."""
    return "compiled (mypyc)" if ENGINE_COMPILED else "pure Python"
