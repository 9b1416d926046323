"""The build backend: setuptools', plus mypy when the engine is compiled.

``PODNUMA_MYPYC`` chooses the build of a wheel (``pip install .``):

* unset (or ``auto``), the default: compile the admission path of the
  engine (``ADMISSION_SOURCES`` in ``src/podnuma/buildinfo.py``) when a C
  compiler builds an extension against this Python's headers; otherwise a
  pure-Python install that records why (``podnuma --version`` and
  ``podnuma demo`` say it);
* ``full`` (or ``1``): compile every engine module (``ENGINE_SOURCES``);
  no C compiler is an error;
* ``0``: pure Python, nothing compiled, no compiler looked for.

A compiled build adds ``MYPYC_REQUIREMENTS`` (mypyc ships inside mypy) to
the build requirements; a pure one needs only setuptools. An editable
install (``pip install -e``) is always pure Python: the extension modules
would sit in ``src/`` next to the sources, shadow every later edit and be
picked up by any other editable install of the same tree, so asking for
``PODNUMA_MYPYC=full`` with it is an error and the default builds it pure.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - the backend's hooks

#: for the compiled build: mypy (mypyc), the version the repository is
#: type-checked with, numpy, whose types the engine's annotations use, and
#: msgspec, which the compiled scenario reader calls
MYPYC_REQUIREMENTS = ["mypy==2.4.1", "numpy>=2.0", "msgspec>=0.18", "types-PyYAML"]

_PURE = ("0", "false", "no", "off")
_FULL = ("1", "true", "yes", "on", "full")


def engine_mode() -> str:
    """``"auto"``, ``"full"`` or ``"pure"``, from ``PODNUMA_MYPYC``."""
    value = os.environ.get("PODNUMA_MYPYC", "").strip().lower()
    if value in ("", "auto"):
        return "auto"
    if value in _PURE:
        return "pure"
    if value in _FULL:
        return "full"
    raise SystemExit(f"PODNUMA_MYPYC={os.environ['PODNUMA_MYPYC']!r}: expected auto, full or 0")


def toolchain_problem() -> str | None:
    """Why no C extension can be built here (``None``: one can).

    Builds a one-line extension that includes ``Python.h`` with the
    compiler, flags and linker setuptools would use for the engine, in a
    temporary directory: this finds a missing compiler, missing headers
    and a compiler that cannot link alike."""
    import sysconfig

    from setuptools import Distribution, Extension

    include = sysconfig.get_paths().get("include") or ""
    if not Path(include, "Python.h").is_file():
        return f"no Python headers ({Path(include, 'Python.h')} is missing)"
    with tempfile.TemporaryDirectory(prefix="podnuma-cc-") as tmp:
        source = Path(tmp, "podnuma_cc_probe.c")
        source.write_text('#include <Python.h>\nint podnuma_cc_probe(void) { return Py_IsInitialized(); }\n')
        dist = Distribution({"name": "podnuma-cc-probe", "ext_modules": [Extension("podnuma_cc_probe", [str(source)])]})
        dist.script_args = ["build_ext", "--build-lib", tmp, "--build-temp", tmp]
        try:
            dist.parse_command_line()
            dist.run_commands()
        except (Exception, SystemExit) as exc:  # CompileError, LinkError, a missing program
            reason = " ".join(str(exc).split()) or type(exc).__name__
            return f"no working C compiler ({reason})"
    return None


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    mode = engine_mode()
    if mode == "full" or (mode == "auto" and toolchain_problem() is None):
        # not setuptools' hook: it runs setup.py, which needs mypyc already
        # (setup.py declares no setup_requires, so nothing else is missed)
        return list(MYPYC_REQUIREMENTS)
    return list(_setuptools.get_requires_for_build_wheel(config_settings))


def _editable() -> None:
    """An editable build is pure Python; asking for a compiled one is an error."""
    if engine_mode() == "full":
        raise RuntimeError(
            "PODNUMA_MYPYC=full: the compiled engine cannot be installed editable "
            "(pip install -e); install it with pip install . (non-editable)"
        )
    os.environ["PODNUMA_MYPYC"] = "0"  # this hook's process only: setup.py builds it pure


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    _editable()
    return list(_setuptools.get_requires_for_build_editable(config_settings))


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    _editable()
    return str(_setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings))


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _editable()
    return str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))
