"""What the agent's ``--manifests`` (the kubelet's ``staticPodPath``) may
name, checked once at start.

The kubelet's file source (``pkg/kubelet/config/file.go``,
``NewSourceFile`` and ``listConfig``) drops the path's trailing
separators, then takes a directory (its ``[^.]*`` entries), one regular
file (that one pod) or nothing at all: a path that does not exist
(``ENOENT`` from ``stat``, whatever part of it is missing) is no error at
start, the source sends an empty set (``path does not exist, ignoring``)
and keeps looking, so pods appear once it is made. The agent starts on
all three. It refuses at start, in podnuma's one wording for directories
(:func:`~podnuma.inputs.pathcheck.path_problem`), what the kubelet would
start on but never read pods from: a path whose ``stat`` fails otherwise
(a file on the way, a loop of links, a directory that cannot be
searched), another kind of file, a directory that cannot be listed or
searched, and ``-``.
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
