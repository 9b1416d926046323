"""The files a command writes where an option says (``--output-file``,
``--as-scenario``), without click (the fast path runs ``fleet analyze
--output-file FILE``): whether one can be written, checked before the
work in one wording for every option and command (:func:`check_output_file`,
the words of :func:`~podnuma.inputs.pathcheck.cannot_write`), and the
format ``--output-file``'s suffix names, checked against ``-o``
(``topology`` and ``fleet analyze``)."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

from podnuma.cli.guard import command_path, fail
from podnuma.inputs.pathcheck import MISSING_DIRECTORY, cannot_write

__all__ = ["check_output_file", "format_from_suffix"]


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


def check_output_file(path: str | os.PathLike[str], option: str) -> None:
    """``InputError`` (``PATH: OPTION: cannot write: ...``, naming the file)
    for what would stop an atomic write of a file at ``path`` once the
    work is done: a directory there, a device, a pipe or a socket (never
    replaced by a file), a link into ``/proc`` or ``/dev``, a missing or
    unwritable directory to hold it. Nothing is written (a probe file is
    made and removed: ``access()`` says yes to root on a read-only file
    system)."""
    import stat
    import tempfile

    from podnuma.fileio import check_file_name, check_replaceable

    name = os.fspath(path)
    try:
        check_file_name(name)
        st: os.stat_result | None = os.stat(name)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise cannot_write(option, name, e) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise cannot_write(option, name, os.strerror(errno.EISDIR))
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise cannot_write(option, name, "it exists and is not a regular file (a device, a named pipe or a "
                           "socket is not replaced)")
    try:
        check_replaceable(name)
    except OSError as e:
        raise cannot_write(option, name, e) from None
    parent = os.path.dirname(name) or "."
    if not os.path.isdir(parent):
        raise cannot_write(option, name, MISSING_DIRECTORY)
    try:  # (access() answers yes to root on a read-only file system: a file made and removed)
        fd, probe = tempfile.mkstemp(prefix=".podnuma-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:  # (ENOENT in a directory that exists: /proc, where no file can be made)
        raise cannot_write(option, name, e) from None
