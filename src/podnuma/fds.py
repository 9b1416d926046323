"""File descriptors: the limit of the long-running processes (the agent, the web server), and running out of them.

The kubelet is a Go program, and the Go runtime raises its own soft
``RLIMIT_NOFILE`` when it starts (since Go 1.19; in go1.26, package
``syscall``'s start-up code: when the soft limit is below the hard limit
minus one, it is set to the hard limit minus one; a failure is ignored;
processes it starts get the original limit back; on macOS it is capped at
``kern.maxfilesperproc`` first). :func:`raise_open_files_limit` does the
same for the agent, which starts no process, and for the web server (on macOS, a value the system
refuses leaves the limit as it was, where Go would cap it). A Python process otherwise keeps the
soft limit it was given, often 1024, that a local client opening
connections can reach.

Running out (``EMFILE``: this process's limit, ``ENFILE``: the system's)
is a passing condition, not a fault of the input: the agent's loop logs it
and tries again later (:func:`descriptors_exhausted` recognises it, also
in the file watcher's errors, which carry the OS error's number in their
text).
"""

from __future__ import annotations

import errno
import resource

__all__ = ["descriptors_exhausted", "raise_open_files_limit"]

_EXHAUSTED = (errno.EMFILE, errno.ENFILE)


def raise_open_files_limit() -> tuple[int, int] | None:
    """Raise the soft ``RLIMIT_NOFILE`` as Go's runtime does at start; the
    (old, new) soft limits when it was raised, else ``None``."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return None
    if hard == resource.RLIM_INFINITY:
        # (Go computes "infinity minus one", which Linux refuses: nothing changes)
        return None
    want = hard - 1
    if hard <= 0 or (soft != resource.RLIM_INFINITY and soft >= want):
        return None
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (OSError, ValueError):
        return None
    return (soft, want)


def descriptors_exhausted(e: BaseException) -> bool:
    """Whether ``e`` (or what caused it) is running out of file descriptors."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in _EXHAUSTED:
            return True
        text = str(cur)
        # (the watcher's errors: "... Too many open files (os error 24)")
        if any(f"(os error {n})" in text for n in _EXHAUSTED):
            return True
        cur = cur.__cause__ or cur.__context__
    return False
