"""What the agent's ``--manifests`` (the kubelet's ``staticPodPath``) may
name, checked once at start.

The kubelet's file source (``pkg/kubelet/config/file.go``,
``NewSourceFile`` and ``listConfig``) drops the path's trailing
separators, then takes a directory (its ``[^.]*`` entries), one regular
file (that one pod) or nothing at all: a path that does not exist
(``ENOENT`` from ``stat``, whatever part of it is missing) is no error at
start, the source sends an empty set (``path does not exist, ignoring``)
and keeps looking, so pods appear once it is made. The agent starts on
all three. A path under a regular file (``afile/sub``: ``stat`` fails with
``ENOTDIR``) is started on too: to the kubelet it is an error, logged, no
update sent (the pods stay as they are), and looked at again at every
re-list (every 20 s) and watch retry (with a back-off), so its pods are
read once ``afile`` is made a directory holding ``sub``, as for a missing
path; the agent does the same (``Manifests not read, pods kept``, then the
pods once it is there). It refuses at start, in podnuma's one wording for
directories (:func:`~podnuma.inputs.pathcheck.path_problem`), what is more
likely a mistake than a path still to be made: a path whose ``stat`` fails
otherwise (a loop of links, a directory that cannot be searched), another
kind of file, a directory that cannot be listed or searched, and ``-``.
"""

from __future__ import annotations

import os
import stat

from podnuma.inputs.pathcheck import DASH_DIRECTORY, path_problem

__all__ = ["static_pod_path_problem"]


def static_pod_path_problem(given: str) -> str | None:
    """Why ``given`` cannot be the agent's static-pod path (the words after
    ``PATH: --manifests:``); ``None`` for a directory that can be listed
    and searched, a regular file, or nothing there (yet)."""
    if given == "-":
        return DASH_DIRECTORY
    trimmed = given.rstrip("/")
    try:
        st = os.stat(trimmed)
    except FileNotFoundError:
        return None  # (the kubelet: "path does not exist, ignoring")
    except NotADirectoryError:
        return None  # (the kubelet: logged, looked at again; read once made)
    except (OSError, ValueError) as e:
        return path_problem(given) or f"cannot reach it: {e}"
    if stat.S_ISREG(st.st_mode):
        return None
    problem = path_problem(trimmed)
    if problem is not None or not stat.S_ISDIR(st.st_mode):
        return problem or "not a directory"
    try:
        os.stat(os.path.join(trimmed, "."))  # (a name looked up in it: search permission)
    except OSError as e:
        return f"cannot search it: {e.strerror or e}"
    return None
