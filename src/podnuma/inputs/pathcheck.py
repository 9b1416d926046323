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
  a block device, a socket); a trailing ``/`` does not change it
  (``afile/`` is the file ``afile``);
* ``no such directory`` (``no such file or directory`` where a file will
  do); ``... (a symbolic link to nothing)`` for a dangling link, also
  given for a directory the command creates (it cannot be made there);
  a missing directory the command creates is not refused (whatever is on
  the way to it is: a file, a symbolic link to nothing);
* ``cannot reach it: STRERROR`` when the path cannot be looked at (a
  regular file on the way: ``Not a directory (a file on the way, where a
  directory should be)``; a symbolic link to nothing on the way; a
  symbolic link loop; a directory on the way that cannot be searched);
* ``cannot read: STRERROR``: a directory there that cannot be listed
  (and, for the agent's ``--manifests``, whose files are opened by name,
  ``cannot search it: STRERROR``: a directory listed but not searchable);
* ``'-' names no directory (...)``: ``-`` (standard input or output
  elsewhere) is never taken for a directory named ``-``;
* ``not empty (...)``: a directory the command fills that holds files
  (:func:`check_empty`).

A file an option names for the command to write (``--as-scenario FILE``,
``--output-file``) is refused as ``PATH: OPTION: cannot write: WHY``
(:func:`cannot_write`), WHY the system's words but for a missing directory
to hold it, ``its directory does not exist`` (:func:`write_problem`).
"""

from __future__ import annotations

import errno
import os
import stat

from podnuma.errors import InputError

__all__ = [
    "DASH_DIRECTORY", "MISSING_DIRECTORY", "cannot_write", "check_directory", "check_empty", "path_message",
    "path_problem", "unreachable", "write_problem",
]

#: what is said of ``-`` given as a directory
DASH_DIRECTORY = ("'-' names no directory (standard input and output are not directories): "
                  "name a directory")

#: what is said of a directory that cannot be listed for want of descriptors
#: (not the directory's fault: left to the work that follows)
_EXHAUSTED = (errno.EMFILE, errno.ENFILE)

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


def unreachable(e: OSError) -> str:
    """Why a path could not be looked at, for a message: the system's
    words, and what they mean on the way to it (:data:`_WHY`)."""
    why = _WHY.get(e.errno) if e.errno is not None else None
    return f"{e.strerror or e}" + (f" ({why})" if why else "")


def _classified(given: str) -> str:
    """The path looked at for ``given``: without its trailing slashes and
    ``/.`` parts (``afile/`` and ``afile/.`` are the file ``afile``; ``/``
    and ``.`` stay)."""
    p = given
    while True:
        stripped = p.rstrip("/")
        if stripped.endswith("/."):
            stripped = stripped[:-2]
        if stripped == p or not stripped:
            return p if stripped else given
        p = stripped


def _dangling_on_the_way(path: str) -> str | None:
    """The nearest part of ``path`` that is there (its nearest existing
    ancestor), when it is a symbolic link to nothing."""
    parent = os.path.dirname(path)
    while parent and parent not in ("/", "."):
        if os.path.lexists(parent):
            try:
                os.stat(parent)
            except FileNotFoundError:
                return parent
            except OSError:
                return None
            return None
        parent = os.path.dirname(parent.rstrip("/"))
    return None


def _unreadable(path: str) -> str | None:
    """``cannot read: STRERROR`` when the directory ``path`` cannot be
    listed: it is listed (its first entry read), not asked of
    ``access(2)``, which answers for the real user and without the
    process's capabilities (an agent run as another user with
    ``CAP_DAC_READ_SEARCH`` lists what ``access`` refuses), and may say yes
    where listing fails (``/proc/1/fdinfo``)."""
    try:
        with os.scandir(path) as entries:
            next(entries, None)  # (/proc/1/map_files opens, and its first read fails)
    except OSError as e:
        if e.errno in _EXHAUSTED:
            return None
        return f"cannot read: {e.strerror or e}"
    return None


def path_problem(path: str | os.PathLike[str], *, must_exist: bool = True, file_okay: bool = False) -> str | None:
    """What is wrong with ``path`` as a directory (``file_okay``: a file or
    a directory), in the words of the module's docstring; ``None`` when
    nothing is. ``must_exist=False``: a directory the command creates (a
    missing path is fine, whatever is in its way is not)."""
    given = os.fspath(path)
    if given == "-" and not file_okay:
        return DASH_DIRECTORY
    p = _classified(given)
    noun = "file or directory" if file_okay else "directory"
    try:
        st = os.stat(p)
    except FileNotFoundError as e:
        if os.path.lexists(p):
            return f"no such {noun} (a symbolic link to nothing)"
        if must_exist:
            return f"no such {noun}"
        link = _dangling_on_the_way(p)
        if link is not None:
            return f"cannot reach it: {e.strerror} (a symbolic link to nothing on the way: {link})"
        return None
    except OSError as e:
        if e.errno == errno.EACCES:
            try:  # (the last part itself looked at: the parents were searched)
                os.lstat(p)
            except OSError:
                pass
            else:
                why = " (a symbolic link that cannot be followed)" if os.path.islink(p) else ""
                return f"cannot reach it: {e.strerror or e}{why}"
        return f"cannot reach it: {unreachable(e)}"
    except ValueError as e:  # (an embedded NUL byte)
        return f"cannot reach it: {e}"
    if not stat.S_ISDIR(st.st_mode):
        if file_okay and p == given:  # ('afile/' asks for a directory)
            return None
        kind = next((k for test, k in _KINDS if test(st.st_mode)), "a special file")
        return f"not a directory ({kind})"
    return _unreadable(p)


def path_message(path: str | os.PathLike[str], option: str, problem: str) -> str:
    """The line after ``error:``: ``PATH: OPTION: PROBLEM``."""
    return f"{os.fspath(path)}: {option}: {problem}"


def check_directory(path: str | os.PathLike[str], option: str, *, must_exist: bool = True) -> None:
    """``InputError`` (``PATH: OPTION: PROBLEM``) when ``path`` cannot be
    used as the directory ``option`` names (:func:`path_problem`)."""
    problem = path_problem(path, must_exist=must_exist)
    if problem is not None:
        raise InputError(f"{option}: {problem}", file=os.fspath(path))


#: why a file cannot be written where its directory is missing (``ENOENT``
#: from making the file: the system's words name no culprit)
MISSING_DIRECTORY = "its directory does not exist"


def write_problem(path: str | os.PathLike[str], e: OSError) -> str:
    """Why the file ``path`` could not be written, after ``e``: the one
    wording of every output an option names (``--as-scenario``,
    ``--output-file``, checked before the work or failing at the write):
    :data:`MISSING_DIRECTORY` when making the file failed for want of its
    directory (a name ending as a directory's, ``r.json/``, held by the
    directory before it), else the system's words."""
    if e.errno == errno.ENOENT:
        parent = os.path.dirname(_classified(os.fspath(path))) or "."
        if not os.path.isdir(parent):
            return MISSING_DIRECTORY
    return f"{e.strerror or e}"


def cannot_write(option: str | None, path: str | os.PathLike[str], why: OSError | str) -> InputError:
    """The error for a file an option names that cannot be written:
    ``PATH: OPTION: cannot write: WHY`` (``PATH: cannot write: WHY`` without
    an option), ``why`` an ``OSError`` said by :func:`write_problem`."""
    said = write_problem(path, why) if isinstance(why, OSError) else why
    head = f"{option}: " if option else ""
    return InputError(f"{head}cannot write: {said}", file=os.fspath(path))


def check_empty(path: str | os.PathLike[str], option: str, hint: str) -> None:
    """:func:`check_directory` for a directory the command creates and
    fills: also ``PATH: OPTION: not empty (HINT)`` when it holds anything."""
    check_directory(path, option, must_exist=False)
    try:
        with os.scandir(path) as entries:
            held = next(entries, None) is not None
    except FileNotFoundError:
        return  # (created)
    except OSError as e:
        if e.errno in _EXHAUSTED:  # (not the directory's fault, as in path_problem)
            return
        raise InputError(f"{option}: cannot read: {e.strerror or e}", file=os.fspath(path)) from None
    if held:
        raise InputError(f"{option}: not empty ({hint})", file=os.fspath(path))
