"""The build backend: setuptools', plus mypy when the compiled build is asked for.

``PODNUMA_MYPYC=1`` adds ``MYPYC_REQUIREMENTS`` (mypyc ships inside mypy) to
the build requirements of a wheel; without it the build needs only
setuptools, so a default install compiles nothing and downloads no
compiler. An editable install cannot be compiled (the extension modules
would sit in ``src/`` next to the sources, shadow every later edit and be
picked up by any other editable install of the same tree): asking for one
is an error.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - the backend's hooks

#: for the compiled build: mypy (mypyc), the version the repository is
#: type-checked with, and numpy, whose types the engine's annotations use
MYPYC_REQUIREMENTS = ["mypy==2.4.1", "numpy>=2.0"]


def _compiled() -> bool:
    return os.environ.get("PODNUMA_MYPYC", "").strip().lower() not in ("", "0", "false", "no", "off")


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    if _compiled():
        # not setuptools' hook: it runs setup.py, which needs mypyc already
        # (setup.py declares no setup_requires, so nothing else is missed)
        return list(MYPYC_REQUIREMENTS)
    return list(_setuptools.get_requires_for_build_wheel(config_settings))


def _refuse_editable() -> None:
    if _compiled():
        raise RuntimeError(
            "PODNUMA_MYPYC=1: the compiled engine cannot be installed editable "
            "(pip install -e); install it with pip install . (non-editable)"
        )


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    _refuse_editable()
    return list(_setuptools.get_requires_for_build_editable(config_settings))


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    _refuse_editable()
    return str(_setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings))


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _refuse_editable()
    return str(_setuptools.build_editable(wheel_directory, config_settings, metadata_directory))
