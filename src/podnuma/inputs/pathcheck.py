"""The one wording of a path an option names that cannot be used: the
command line's options say it as they are read (without click: the fast
path's ``fleet analyze INPUT...`` says it too), and the service's own
checks of the same paths, for its other callers and for a path that
changed since, say it in the same words (:func:`check_directory`).

Every option that names a directory (``state inspect DIRECTORY``,
``--sysfs``, ``--state-dir``, ``--manifests``, ``--cgroup-root``,
``--checkpoint-dir``, ``cgroups apply --root``, ``fleet generate
--output-dir``, ``fleet analyze --as-scenario``) and ``fleet analyze``'s
inputs (a file or a directory) are refused in the shape of a field error,
one line, exit 2 (:func:`path_message`)::

    error: PATH: OPTION: PROBLEM

with PROBLEM (:func:`path_problem`) one of:

* ``not a directory (a regular file)`` (a named pipe, a character device,
  a block device, a socket);
* ``no such directory`` (``no such file or directory`` where a file will
  do), ``... (a symbolic link to nothing)`` for a dangling link; not said
  of a directory the command creates;
* ``cannot reach it: STRERROR`` when the path cannot be looked at (a
  regular file on the way: ``Not a directory (a file on the way, where a
  directory should be)``; a symbolic link loop; a directory on the way that
  cannot be searched);
* ``cannot read: STRERROR``: a directory there that cannot be read.
"""

from __future__ import annotations

import errno
import os
import stat

from podnuma.errors import InputError

__all__ = ["check_directory", "path_message", "path_problem"]

#: what a path is when it is not a directory
_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

#: why a path cannot be looked at, when the system's words need it
_WHY = {
    errno.EACCES: "a directory on the way cannot be searched",
    errno.ENOTDIR: "a file on the way, where a directory should be",
}


def path_problem(path: str | os.PathLike[str], *, must_exist: bool = True, file_okay: bool = False) -> str | None:
    """What is wrong with ``path`` as a directory (``file_okay``: a file or
    a directory), in the words of the module's docstring; ``None`` when
    nothing is. ``must_exist=False``: a directory the command creates (a
    missing path is fine, whatever is in its way is not)."""
    noun = "file or directory" if file_okay else "directory"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.lexists(path):
            return f"no such {noun} (a symbolic link to nothing)"
        return f"no such {noun}" if must_exist else None
    except OSError as e:
        why = _WHY.get(e.errno) if e.errno is not None else None
        return f"cannot reach it: {e.strerror or e}" + (f" ({why})" if why else "")
    except ValueError as e:  # (an embedded NUL byte)
        return f"cannot reach it: {e}"
    if file_okay:
        return None
    if not stat.S_ISDIR(st.st_mode):
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "a special file")
        return f"not a directory ({kind})"
    if not os.access(path, os.R_OK):
        return f"cannot read: {os.strerror(errno.EACCES)}"
    return None


def path_message(path: str | os.PathLike[str], option: str, problem: str) -> str:
    """The line after ``error:``: ``PATH: OPTION: PROBLEM``."""
    return f"{os.fspath(path)}: {option}: {problem}"


def check_directory(path: str | os.PathLike[str], option: str, *, must_exist: bool = True) -> None:
    """``InputError`` (``PATH: OPTION: PROBLEM``) when ``path`` cannot be
    used as the directory ``option`` names (:func:`path_problem`)."""
    problem = path_problem(path, must_exist=must_exist)
    if problem is not None:
        raise InputError(f"{option}: {problem}", file=os.fspath(path))
