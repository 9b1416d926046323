"""The format ``--output-file``'s suffix names, checked against ``-o``:
one function for ``topology`` and ``fleet analyze``, without click (the
fast path runs ``fleet analyze --output-file FILE``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from podnuma.cli.guard import command_path, fail

__all__ = ["format_from_suffix"]


def format_from_suffix(
    fmt: str | None, output_file: Path | None, suffixes: Mapping[str, str], default: str,
    aliases: Mapping[str, str] | None = None,
) -> str:
    """The output's format: ``-o``'s (``fmt``, read through ``aliases``:
    ``topology``'s ``table`` is ``text``), else the one ``output_file``'s
    suffix names (``suffixes``, by lower-case suffix), else ``default``. A
    usage error (one line, exit 2, before anything is read or written)
    when the suffix is none of ``suffixes`` or names another format than
    ``-o``."""
    chosen = (aliases or {}).get(fmt, fmt) if fmt is not None else None
    suffix = output_file.suffix if output_file is not None else ""
    if not suffix:
        return chosen or default
    named = suffixes.get(suffix.lower())
    if named is None:
        known = ", ".join(suffixes)
        _refused(f"unknown suffix {suffix!r} (one of {known}; or no suffix, with -o FORMAT)")
    if chosen is not None and chosen != named:
        _refused(f"the suffix {suffix!r} is for {named}, not -o {fmt}")
    return named


def _refused(problem: str) -> NoReturn:
    # (click's words for a bad option value, as its usage errors are shown)
    fail(f"Invalid value for '--output-file': {problem} (see '{command_path()} --help')")
