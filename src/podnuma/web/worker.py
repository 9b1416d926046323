"""Running a request's work in a sandboxed process, under limits.

Every simulation a request asks for runs in a job process, never in the
server's own process. The job processes are forked from a ``forkserver``
that has already imported :mod:`podnuma.web.service` and are kept warm:
each one closes its sandbox once (below) and then runs one job after
another, so a job costs a message each way rather than a process start.
A job process:

* is killed when a job runs longer than the time limit
  (:class:`TimeLimitExceeded`), and replaced by a fresh one;
* has its address space capped (``RLIMIT_AS``), so a huge input fails
  instead of exhausting the machine;
* refuses, through a Python audit hook, to open, list or execute anything:
  whatever a request holds, no file on the server is read for it (the
  scenario loader turns the refusal into its usual field-path message);
  so every module a job may need (the engine, numpy) is imported by the
  forkserver before any job starts (:data:`PRELOAD`);
* encodes its answer itself (JSON, or the text of a picture), inside the
  time and memory limits, and refuses an answer over ``max_answer`` bytes:
  the server's process only passes the bytes on;
* is retired (it exits, and a fresh one takes its place) after a job that
  ran out of memory or nesting, and after ``MAX_JOBS`` jobs, so that
  nothing a job leaves behind grows without bound.

The only thing a job process reads with its sandbox closed is the job
message from the server's process (the function to run, by name, and its
arguments): the audit hook lets that message's unpickling import a module
the forkserver did not (a function defined in a test, say), and nothing
else.

At most ``workers`` jobs run at once (one per job process); a request that
finds them all busy waits up to the time limit and :data:`SLOT_GRACE`
(room for the kill of a job that ran to the limit, and its process's
replacement: a request queued behind such a job gets the slot it frees),
then fails with :class:`Busy`. The time limit counts from the moment a
request has its slot, and covers all it does there: starting a job
process, laying its files out (``prepare``), the job, and removing its
files (``cleanup``, left to finish in the background once the limit is
reached). The server's requests wait with :meth:`WorkerPool.run_async`:
the wait is a task waiting for a token (no thread is held while it waits),
and only a request that has a job process takes a thread, from a limiter of
its own (``workers`` threads), to run its job; the server's other routes
keep the event loop's thread pool to themselves. A job whose process is
killed because the server is stopping fails with :class:`Busy` ("the
server is stopping"), not as a job that ran out of memory.
"""

from __future__ import annotations

import contextlib
import errno
import json
import multiprocessing
import os
import pickle
import queue
import resource
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from podnuma.web.answers import Drawn, Encoded

__all__ = [
    "Busy",
    "Encoded",
    "JobError",
    "Limits",
    "MAX_JOBS",
    "PRELOAD",
    "REFUSED_EVENTS",
    "SLOT_GRACE",
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

#: jobs a job process runs before it is retired for a fresh one
MAX_JOBS = 500

#: Seconds a request waits for a slot beyond the time limit: the slot of a
#: job that runs to the limit is free only once its process is killed and
#: reaped (a fraction of a second), and a request queued right behind it
#: gets that slot rather than a 503.
SLOT_GRACE = 1.0


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


class JobError(Exception):
    """A job failed: ``kind`` is ``input`` (bad input, the CLI's message),
    ``startup`` (the kubelet would not start), or ``internal``. ``message``
    holds its problems a line each, every one inert (:func:`_answer`):
    ``problems``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    @property
    def problems(self) -> list[str]:
        """The problems, one entry each."""
        return self.message.split("\n")


class TimeLimitExceeded(Exception):
    pass


class Busy(Exception):
    pass


#: true only while a job process unpickles the server's job message
_LOADING = [False]


def _refuse(event: str, args: tuple[Any, ...]) -> None:
    if event in REFUSED_EVENTS and not _LOADING[0]:
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
    elif isinstance(result, Drawn):
        body, media = result.text.encode("utf-8"), result.media_type
    else:
        return result
    if len(body) > max_answer:
        raise _AnswerTooLarge(len(body))
    return Encoded(body, media, result.warnings if isinstance(result, Drawn) else ())


class _AnswerTooLarge(Exception):
    pass


def _answer(fn: Callable[..., Any], args: tuple[Any, ...], max_answer: int) -> tuple[str, Any]:
    """A job's message back: ``("ok", answer)`` or ``("error", (kind,
    message))``; kind ``limit`` for a job that ran out of memory."""
    from podnuma.cm.checkpoint import CheckpointError
    from podnuma.errors import InputError, KubeletStartupError
    from podnuma.fieldkit import inert
    from podnuma.web.service import error_message

    try:
        return ("ok", _encode(fn(*args), max_answer))
    except _AnswerTooLarge as e:
        return ("error", ("limit", f"the answer ({e.args[0]} bytes) is larger than the server's "
                          f"limit of {max_answer} bytes"))
    except (InputError, CheckpointError, KubeletStartupError) as e:
        kind = "startup" if isinstance(e, KubeletStartupError) and not isinstance(
            e, CheckpointError
        ) else "input"
        return ("error", (kind, "\n".join(inert(p) for p in _problems_of(e, error_message(e)))))
    except MemoryError:
        return ("error", ("limit", "the input needs more memory than the server allows a request"))
    except RecursionError:
        return ("error", ("input", "the input is nested too deeply"))
    except Exception as e:  # a bug: a one-line message, as the CLI gives
        return ("error", ("internal", inert(error_message(e))))


def _problems_of(err: BaseException, message: str) -> list[str]:
    """The problems an error's message holds: those of an
    :class:`~podnuma.errors.InputErrors` (the pods of a what-if request's
    file that are not valid, each as the CLI prints it), else one, the
    message (inert, never split at a line break a request's value holds)."""
    from podnuma.errors import InputErrors

    if isinstance(err, InputErrors):
        return err.problems
    return [message]


def _child(
    conn: Connection, memory: int, max_answer: int, fn: Callable[..., Any], args: tuple[Any, ...],
    readable: str,
) -> None:
    """A job process for one job that may read beneath ``readable`` (its
    request's own files): its own sandbox, then the job, then it exits."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.addaudithook(_refuse_outside(os.path.realpath(readable)))
    out = _answer(fn, args, max_answer)
    try:
        conn.send(out)
    except MemoryError:
        conn.send(("error", ("limit", "the answer needs more memory than the server allows")))
    conn.close()


def _retires(status: str, payload: Any) -> bool:
    """Whether a job process is retired after this answer: it ran out of
    memory or of nesting (the process may be left in doubt)."""
    return status == "error" and (
        payload[0] == "limit" or payload[1] == "the input is nested too deeply"
    )


def _job_process(conn: Connection, memory: int, max_answer: int) -> None:
    """A job process: close the sandbox, then run jobs until the server
    closes the pipe, or until a job leaves the process in doubt."""
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    sys.addaudithook(_refuse)
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            return
        except MemoryError:
            # the job itself does not fit: say so, and leave (the server
            # sees the answer, or the pipe closed, and retires the process)
            with contextlib.suppress(Exception):
                conn.send(("error", ("limit", "the input needs more memory than the server allows")))
            return
        _LOADING[0] = True
        try:
            fn, args = pickle.loads(message)
        finally:
            _LOADING[0] = False
        del message
        out = _answer(fn, args, max_answer)
        del fn, args
        retire = _retires(*out)
        try:
            conn.send(out)
        except MemoryError:
            conn.send(("error", ("limit", "the answer needs more memory than the server allows")))
            retire = True
        if retire:
            conn.close()
            return


class _Worker:
    """A job process and the server's end of its pipe."""

    def __init__(self, proc: Any, conn: Connection) -> None:
        self.proc = proc
        self.conn = conn
        self.jobs = 0

    def stop(self, *, kill: bool) -> None:
        with contextlib.suppress(OSError):
            self.conn.close()
        if kill and self.proc.is_alive():
            with contextlib.suppress(Exception):
                self.proc.kill()
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.proc.close()


class WorkerPool:
    """Runs jobs in warm, sandboxed job processes forked from a preloaded
    forkserver (see the module's docstring)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(PRELOAD)
        # a slot per job process; None: not started (or retired) yet
        self._idle: queue.LifoQueue[_Worker | None] = queue.LifoQueue()
        for _ in range(limits.workers):
            self._idle.put(None)
        self._running: set[Any] = set()  # every live job process
        self._lock = threading.Lock()
        self.closed = False
        # run_async: a token per job process (waited for without a thread),
        # and the threads that run the jobs (never waited for: a token
        # holder finds one free)
        self._slots: Any = None
        self._threads: Any = None

    def kill_all(self) -> None:
        """Stop: kill every job process (a running job's request answers at
        once) and refuse new jobs."""
        with self._lock:
            self.closed = True
            running = list(self._running)
        for proc in running:
            with contextlib.suppress(Exception):
                proc.kill()

    def warm_up(self) -> None:
        """Start every job process now rather than on the first requests."""
        taken = []
        try:
            for _ in range(self.limits.workers):
                worker = self._idle.get(timeout=self.limits.time_limit + SLOT_GRACE)
                taken.append(worker if worker is not None else self._start())
        finally:
            for worker in taken:
                self._idle.put(worker)

    def _start(self) -> _Worker:
        mine, theirs = self._ctx.Pipe(duplex=True)
        proc = self._spawn(_job_process, (theirs, self.limits.memory, self.limits.max_answer))
        theirs.close()
        return _Worker(proc, mine)

    def _spawn(self, target: Callable[..., None], args: tuple[Any, ...]) -> Any:
        """A started job process (refused once the pool is stopping)."""
        proc = self._ctx.Process(target=target, args=args, daemon=True)
        with self._lock:
            if self.closed:
                raise Busy("the server is stopping")
            proc.start()
            self._running.add(proc)
        return proc

    def _retire(self, worker: _Worker, *, kill: bool) -> None:
        with self._lock:
            self._running.discard(worker.proc)
        worker.stop(kill=kill)

    def run(self, fn: Callable[..., Any], *args: Any, readable: str | None = None,
            deadline: float | None = None) -> Any:
        """``fn(*args)`` in a job process; its result (picklable), or
        :class:`JobError`, :class:`TimeLimitExceeded`, :class:`Busy`.
        ``readable``: a directory the job may read and list (the files of
        its own request, laid out by the server); nothing else. Such a job
        runs in a process of its own, started for it and ended after it
        (the warm job processes may read nothing). ``deadline`` (a
        :func:`time.monotonic` time): when the job is killed; by default the
        time limit from when it has a job process (its start counted)."""
        if self.closed:
            raise Busy("the server is stopping")
        try:
            worker = self._idle.get(timeout=self.limits.time_limit + SLOT_GRACE)
        except queue.Empty:
            raise self._busy() from None
        if deadline is None:
            deadline = time.monotonic() + self.limits.time_limit
        try:
            if readable is not None:  # the warm process stays idle, its slot taken
                status, payload = self._run_once(fn, args, deadline, readable)
            else:
                if worker is not None and not worker.proc.is_alive():
                    self._retire(worker, kill=True)
                    worker = None
                if worker is None:
                    worker = self._start()
                try:
                    status, payload, keep = self._run(worker, fn, args, deadline)
                except BaseException:
                    self._retire(worker, kill=True)
                    worker = None
                    raise
                if not keep or worker.jobs >= MAX_JOBS or self.closed:
                    self._retire(worker, kill=not keep)
                    worker = None
        finally:
            self._idle.put(worker)
        return self._result(status, payload)

    def _busy(self) -> Busy:
        return Busy(f"the server is busy (at most {self.limits.workers} simulations at once): try again")

    async def run_async(self, fn: Callable[..., Any], *args: Any, readable: str | None = None,
                        prepare: Callable[[Callable[[], None]], None] | None = None,
                        cleanup: Callable[[], None] | None = None) -> Any:
        """:meth:`run` for the server's event loop: wait (at most the time
        limit and :data:`SLOT_GRACE`) for a job process as a task, holding no
        thread, then run the job in a thread of the pool's own (one per job
        process); the same result or exceptions. The time limit counts from
        the moment the slot is taken and covers all that runs in it:
        ``prepare`` (laying out the ``readable`` directory) runs in that
        thread first, given a check to call between its steps that raises
        :class:`TimeLimitExceeded` once the limit is past (a request waiting
        for a slot has written nothing; what ``prepare`` raises is raised
        here, the job not run); then the job, killed at the limit; then
        ``cleanup`` (whatever happened, ``prepare`` failing included), off
        the event loop, waited for until the limit and otherwise left to
        finish in a thread of its own, so that the slot is free at the
        limit."""
        import anyio
        import anyio.to_thread

        if self.closed:
            raise Busy("the server is stopping")
        if self._slots is None:
            self._slots = anyio.CapacityLimiter(self.limits.workers)
            self._threads = anyio.CapacityLimiter(self.limits.workers)
        with anyio.move_on_after(self.limits.time_limit + SLOT_GRACE) as waited:
            await self._slots.acquire()
        if waited.cancelled_caught:  # (no token taken: the limiter gives it back)
            raise self._busy()
        deadline = time.monotonic() + self.limits.time_limit

        def check() -> None:
            if time.monotonic() >= deadline:
                raise self._too_long()

        def call() -> Any:
            try:
                if prepare is not None:
                    prepare(check)
                check()
                return self.run(fn, *args, readable=readable, deadline=deadline)
            finally:
                if cleanup is not None:
                    _within(cleanup, deadline)

        try:
            if self.closed:  # (stopped while it waited: no thread for the same answer)
                raise Busy("the server is stopping")
            return await anyio.to_thread.run_sync(call, limiter=self._threads)
        finally:
            self._slots.release()

    @staticmethod
    def _result(status: str, payload: Any) -> Any:
        if status == "ok":
            return payload
        kind, message = payload
        raise JobError(kind, message)

    def _too_long(self) -> TimeLimitExceeded:
        return TimeLimitExceeded(
            f"the simulation took longer than the server's limit of {self.limits.time_limit:g} s "
            "(fewer steps, a smaller machine, or no search for explain)"
        )

    def _run_once(
        self, fn: Callable[..., Any], args: tuple[Any, ...], deadline: float, readable: str
    ) -> tuple[str, Any]:
        recv, send = self._ctx.Pipe(duplex=False)
        proc = self._spawn(_child, (send, self.limits.memory, self.limits.max_answer, fn, args, readable))
        send.close()
        try:
            if not recv.poll(_left(deadline)):
                raise self._too_long()
            try:
                status, payload = recv.recv()
            except EOFError:
                proc.join(1)
                raise self._stopped(proc.exitcode) from None
        finally:
            recv.close()
            with self._lock:
                self._running.discard(proc)
            if proc.is_alive():
                proc.kill()
            proc.join()
            proc.close()
        return status, payload

    def _run(
        self, worker: _Worker, fn: Callable[..., Any], args: tuple[Any, ...], deadline: float
    ) -> tuple[str, Any, bool]:
        """(status, payload, whether the job process may run another job)."""
        conn = worker.conn
        try:
            conn.send_bytes(pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            # the job process went away while it read the job (it could not
            # hold it): its last word, if it had one, is in the pipe
            worker.jobs += 1
            if not conn.poll(1):
                raise self._lost(worker) from None
        else:
            worker.jobs += 1
            if not conn.poll(_left(deadline)):
                raise self._too_long()
        try:
            status, payload = conn.recv()
        except (EOFError, OSError):
            raise self._lost(worker) from None
        return status, payload, not _retires(status, payload)

    def _lost(self, worker: _Worker) -> JobError | Busy:
        """The error of a job process that ended without an answer."""
        worker.proc.join(1)
        return self._stopped(worker.proc.exitcode)

    def _stopped(self, exitcode: int | None) -> JobError | Busy:
        """A job process that ended without an answer: killed because the
        server is stopping (:meth:`kill_all`), or else most likely out of
        memory."""
        if self.closed:
            return Busy("the server is stopping")
        return JobError(
            "limit", f"the simulation stopped without an answer (exit {exitcode}): "
            "it may need more memory than the server allows"
        )


def _left(deadline: float) -> float:
    """Seconds until ``deadline`` (none once it is past)."""
    return max(0.0, deadline - time.monotonic())


def _within(cleanup: Callable[[], None], deadline: float) -> None:
    """Run ``cleanup`` in a thread of its own and wait for it until
    ``deadline``: past it, the cleanup is left to finish on its own (its
    work is bounded by what the request could lay out in the time limit),
    and the caller goes on."""
    done = threading.Thread(target=_quietly, args=(cleanup,), name="podnuma-cleanup", daemon=True)
    done.start()
    done.join(_left(deadline))


def _quietly(cleanup: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):
        cleanup()
