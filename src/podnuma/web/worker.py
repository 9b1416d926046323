"""Running a request's work in a process of its own, under limits.

Every simulation a request asks for runs in a fresh process forked from a
``forkserver`` that has already imported :mod:`podnuma.web.service`, so a
job starts in milliseconds and the server's own process never runs the
engine. The job process:

* is killed when it runs longer than the time limit
  (:class:`TimeLimitExceeded`);
* has its address space capped (``RLIMIT_AS``), so a huge input fails
  instead of exhausting the machine;
* refuses, through a Python audit hook, to open, list or execute anything:
  whatever a request holds, no file on the server is read for it (the
  scenario loader turns the refusal into its usual field-path message);
  so every module a job may need (the engine, numpy) is imported by the
  forkserver before any job starts (:data:`PRELOAD`);
* encodes its answer itself (JSON, or the text of a picture), inside the
  time and memory limits, and refuses an answer over ``max_answer`` bytes:
  the server's process only passes the bytes on.

At most ``workers`` jobs run at once; a request that finds them all busy
waits up to the time limit, then fails with :class:`Busy`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import multiprocessing
import os
import resource
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = [
    "Busy",
    "Encoded",
    "JobError",
    "Limits",
    "PRELOAD",
    "REFUSED_EVENTS",
    "TimeLimitExceeded",
    "WorkerPool",
]

#: Modules the forkserver imports before forking any job ("__main__" first:
#: children then find it imported and skip importing it again). A job may
#: not open files, so nothing it runs may be left to import lazily: numpy
#: (imported by the topology manager's merge only for large hint lists, and
#: the parts numpy itself imports on first use: numpy.ma by np.unique) and
#: the service (which imports the engine whole), and, where the fleet extra
#: is installed, plotly warmed up by drawing a report once (it imports its
#: figure classes and reads its script and templates on first use); the
#: fork server skips a module whose import fails.
PRELOAD = [
    "__main__", "numpy", "numpy.ma", "numpy.linalg", "podnuma.web.service", "podnuma.web.fleet_warm",
]

#: Audit events a job may not raise: file access, directory listing,
#: processes, network.
REFUSED_EVENTS = frozenset({
    "open", "os.listdir", "os.scandir", "os.chdir", "os.mkdir", "os.remove", "os.rename",
    "os.rmdir", "os.symlink", "os.link", "os.truncate", "os.chmod", "os.chown", "os.utime",
    "glob.glob", "shutil.copyfile", "shutil.rmtree", "shutil.move",
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.startfile", "pty.spawn",
    "socket.connect", "socket.bind", "socket.getaddrinfo",
    "ctypes.dlopen", "urllib.Request",
})

REFUSAL = "the server reads no files and runs nothing on behalf of a request"


@dataclass(frozen=True)
class Limits:
    """The server's limits: request body bytes, seconds of work per
    request (encoding the answer included), concurrent jobs, the address
    space of a job, answer bytes, and the seconds a client may take to send
    a request's headers and, separately, its body."""

    max_body: int = 1 << 20
    time_limit: float = 20.0
    workers: int = 2
    memory: int = 2 << 30
    max_answer: int = 32 << 20
    read_timeout: float = 5.0


@dataclass(frozen=True)
class Encoded:
    """An answer encoded by the job: its bytes and media type."""

    body: bytes
    media_type: str


class JobError(Exception):
    """A job failed: ``kind`` is ``input`` (bad input, the CLI's message),
    ``startup`` (the kubelet would not start), or ``internal``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class TimeLimitExceeded(Exception):
    pass


class Busy(Exception):
    pass


def _refuse(event: str, args: tuple[Any, ...]) -> None:
    if event in REFUSED_EVENTS:
        raise PermissionError(errno.EACCES, REFUSAL)


#: ``open`` flags a job may never use, even beneath its readable directory.
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _beneath(path: object, root: str) -> bool:
    """Whether ``path`` (a name, not a descriptor) resolves inside ``root``."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return False
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _refuse_outside(root: str) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook of a job given its own request's files: reading and
    listing beneath ``root`` (symlinks resolved first) pass, everything
    :data:`REFUSED_EVENTS` names is refused elsewhere, and writing is
    refused everywhere."""

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in REFUSED_EVENTS:
            return
        if event == "open" and len(args) == 3 and isinstance(args[2], int) and not (
            args[2] & _WRITING
        ) and _beneath(args[0], root):
            return
        if event in ("os.listdir", "os.scandir") and args and _beneath(args[0], root):
            return
        raise PermissionError(errno.EACCES, REFUSAL)

    return hook


def _encode(result: Any, max_answer: int) -> Any:
    """The answer as the server sends it: JSON documents encoded here (as
    the framework would: UTF-8, compact, no NaN), text as UTF-8."""
    if isinstance(result, dict | list):
        body = json.dumps(
            result, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        ).encode("utf-8")
        media = "application/json"
    elif isinstance(result, str):
        body, media = result.encode("utf-8"), "text/plain; charset=utf-8"
    else:
        return result
    if len(body) > max_answer:
        raise _AnswerTooLarge(len(body))
    return Encoded(body, media)


class _AnswerTooLarge(Exception):
    pass


def _child(
    conn: Connection, memory: int, max_answer: int, fn: Callable[..., Any], args: tuple[Any, ...],
    readable: str | None = None,
) -> None:
    from podnuma.cm.checkpoint import CheckpointError
    from podnuma.errors import InputError, KubeletStartupError
    from podnuma.web.service import error_message

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.addaudithook(_refuse if readable is None else _refuse_outside(os.path.realpath(readable)))
    try:
        out: tuple[str, Any] = ("ok", _encode(fn(*args), max_answer))
    except _AnswerTooLarge as e:
        out = ("error", ("limit", f"the answer ({e.args[0]} bytes) is larger than the server's "
                         f"limit of {max_answer} bytes"))
    except (InputError, CheckpointError, KubeletStartupError) as e:
        kind = "startup" if isinstance(e, KubeletStartupError) and not isinstance(
            e, CheckpointError
        ) else "input"
        out = ("error", (kind, error_message(e)))
    except MemoryError:
        out = ("error", ("limit", "the input needs more memory than the server allows a request"))
    except RecursionError:
        out = ("error", ("input", "the input is nested too deeply"))
    except Exception as e:  # a bug: a one-line message, as the CLI gives
        out = ("error", ("internal", error_message(e)))
    try:
        conn.send(out)
    except MemoryError:
        conn.send(("error", ("limit", "the answer needs more memory than the server allows")))
    conn.close()


class WorkerPool:
    """Runs jobs in processes forked from a preloaded forkserver."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(PRELOAD)
        self._slots = threading.BoundedSemaphore(limits.workers)
        self._running: set[Any] = set()
        self._lock = threading.Lock()
        self.closed = False

    def kill_all(self) -> None:
        """Stop: kill every running job (its request answers at once) and
        refuse new ones."""
        with self._lock:
            self.closed = True
            running = list(self._running)
        for proc in running:
            with contextlib.suppress(Exception):
                proc.kill()

    def warm_up(self) -> None:
        """Start the forkserver now rather than on the first request."""
        self.run(os.getpid)

    def run(self, fn: Callable[..., Any], *args: Any, readable: str | None = None) -> Any:
        """``fn(*args)`` in a job process; its result (picklable), or
        :class:`JobError`, :class:`TimeLimitExceeded`, :class:`Busy`.
        ``readable``: a directory the job may read and list (the files of
        its own request, laid out by the server); nothing else."""
        limit = self.limits.time_limit
        if self.closed:
            raise Busy("the server is stopping")
        if not self._slots.acquire(timeout=limit):
            raise Busy(f"the server is busy (at most {self.limits.workers} simulations at once): try again")
        try:
            return self._run(fn, args, limit, readable)
        finally:
            self._slots.release()

    def _run(
        self, fn: Callable[..., Any], args: tuple[Any, ...], limit: float, readable: str | None
    ) -> Any:
        recv, send = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(
            target=_child,
            args=(send, self.limits.memory, self.limits.max_answer, fn, args, readable),
            daemon=True,
        )
        with self._lock:
            if self.closed:
                raise Busy("the server is stopping")
            proc.start()
            self._running.add(proc)
        send.close()
        try:
            if not recv.poll(limit):
                raise TimeLimitExceeded(
                    f"the simulation took longer than the server's limit of {limit:g} s "
                    "(fewer steps, a smaller machine, or no search for explain)"
                )
            try:
                status, payload = recv.recv()
            except EOFError:
                proc.join(1)
                code = proc.exitcode
                raise JobError(
                    "limit", f"the simulation stopped without an answer (exit {code}): "
                    "it may need more memory than the server allows"
                ) from None
        finally:
            recv.close()
            with self._lock:
                self._running.discard(proc)
            if proc.is_alive():
                proc.kill()
            proc.join()
            proc.close()
        if status == "ok":
            return payload
        kind, message = payload
        raise JobError(kind, message)
