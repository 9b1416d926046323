"""The Dask client in a process of its own, forked by the command.

Importing Dask (``distributed``) costs about half a CPU second, and a
command that connects to a cluster or starts one pays it before any task
can run. Here the command forks a process that imports Dask, connects to
the scheduler (``tcp://...``) or starts the local cluster (its workers
forked from that process, :mod:`podnuma.fleet.forked`) and then runs the
command's tasks there. The command itself never imports Dask: while that
process comes up, it runs the first tasks itself, one at a time, and hands
the tasks not begun over the moment the cluster is ready (and a map can
run work of the command's own beside the cluster's tasks: ``alongside``
of :meth:`ClientProcess.map`). The two talk
over a pipe (:func:`multiprocessing.Pipe`: the functions by reference,
their arguments and results pickled, and left pickled on their way
through that process and the scheduler to the workers and back:
:func:`call_pickled`): a task's result comes back as it finishes, in the
order of the arguments once all have.

A task that raised raises here (after the retries); a cluster that cannot
be reached, or a helper process that ends, raises
:class:`~podnuma.errors.InputError` naming the ``--dask`` target.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from queue import SimpleQueue
from typing import Any, TypeVar

from podnuma.errors import InputError

__all__ = ["Beside", "ClientProcess", "Connect", "flush_std", "start"]

#: Work of the command's own, run beside a map's tasks: given a function
#: that says when to stop (looked at between its pieces of work)
Beside = Callable[[Callable[[], bool]], None]

#: Run in the client process: an executor of the cluster (``each(fn,
#: args)`` yielding ``(i, result)`` as tasks finish, ``client.run``,
#: ``close``) and its workers' thread count.
Connect = Callable[[], tuple[Any, int]]

_A = TypeVar("_A")
_R = TypeVar("_R")


def flush_std() -> None:
    """Standard output and error flushed before a fork (what is buffered
    would be written twice); one closed when the command started is ``None``."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()


def _sendable(e: BaseException) -> BaseException:
    try:
        pickle.dumps(e)
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")
    return e


def _quiet() -> None:
    """From here on nothing the client process writes reaches the command's
    standard error: the command has stopped it or is writing its own report,
    and what Dask says while its cluster is torn down (a scheduler's
    traceback for a worker cut off while joining, an exception ignored in a
    lock the signal interrupted) is noise, not an answer."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)


def _stop(*_: Any) -> None:
    _quiet()
    raise SystemExit(1)


#: in the client process: whether the command it was forked from ignored
#: ``SIGINT`` (set there, see :func:`command_ignores_sigint`)
_COMMAND_IGNORES_SIGINT: list[bool | None] = [None]


def command_ignores_sigint() -> bool:
    """Whether the command ignores ``SIGINT`` (a job a non-interactive
    shell started in the background, ``nohup``-like wrappers): in the
    client process, as the command did when it forked it; elsewhere, this
    process's own way."""
    recorded = _COMMAND_IGNORES_SIGINT[0]
    if recorded is not None:
        return recorded
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def _serve(conn: Any, connect: Connect) -> None:
    """The client process: the cluster's client, running what it is sent."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)  # the command's report goes there
    os.close(null)
    # (the command's own way with Ctrl-C kept for the workers forked from here)
    _COMMAND_IGNORES_SIGINT[0] = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command stops it
    signal.signal(signal.SIGTERM, _stop)  # its cluster closed on the way out
    try:
        ex, threads = connect()
    except BaseException as e:  # noqa: BLE001 - told to the command
        conn.send(("error", _sendable(e)))
        return
    try:
        conn.send(("ready", threads))
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg[0] == "map":
                # (each task's worker and weight, when the replay follows the pods)
                where = {"where": msg[4]} if len(msg) > 4 and msg[4] is not None else {}
                try:
                    fn = msg[1]
                    calls = ex.each(functools.partial(call_pickled, fn), _Pickled(msg[2], msg[3], conn),
                                    name=getattr(fn, "__name__", "task"), **where)
                    for i, result in calls:
                        conn.send(("result", i, result))
                except BaseException as e:  # noqa: BLE001 - told to the command
                    conn.send(("error", _sendable(e)))
                else:
                    conn.send(("end",))
                    if where:  # the pods the workers kept for it let go, the command not kept waiting
                        with contextlib.suppress(Exception):
                            ex.release_kept()
            elif msg[0] == "more":  # the rest of the arguments of a map that failed
                continue
            elif msg[0] == "run":
                try:
                    conn.send(("ran", ex.client.run(msg[1])))
                except BaseException as e:  # noqa: BLE001
                    conn.send(("error", _sendable(e)))
            else:
                return
    finally:
        _quiet()
        # this process ends right after: a cluster whose workers are its
        # own forks is ended, not closed politely (see close_at_exit)
        getattr(ex, "close_at_exit", ex.close)()


def call_pickled(fn: Callable[[Any], Any], arg: bytes) -> bytes:
    """``fn`` of the pickled ``arg``, pickled: a task's argument and result
    go through this process and the scheduler as bytes, unpickled only where
    they are used (the worker, the command)."""
    return pickle.dumps(fn(pickle.loads(arg)), protocol=pickle.HIGHEST_PROTOCOL)


class _Pickled(Sequence[Any]):
    """Arguments sent pickled, each given (once) as its bytes and then let
    go; ``total`` of them, those past the first message read from ``conn``
    when first asked for."""

    def __init__(self, blobs: list[bytes | None], total: int, conn: Any) -> None:
        self.blobs = blobs
        self.total = total
        self.conn = conn

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, i: Any) -> Any:
        if not 0 <= i < self.total:
            raise IndexError(i)
        while i >= len(self.blobs):
            msg = self.conn.recv()
            assert msg[0] == "more", msg[0]
            self.blobs.extend(msg[1])
        blob = self.blobs[i]
        assert blob is not None, "an argument read twice"
        self.blobs[i] = None
        return blob


class ClientProcess:
    """Tasks run on the Dask cluster behind a forked client process (see
    the module's docstring); :meth:`close` ends it and its cluster."""

    def __init__(self, target: str, connect: Connect, threads: int | None, parts_per_thread: int) -> None:
        import multiprocessing

        self.target = target
        # a local cluster's threads are known now, a remote one's when its
        # client is ready
        self.threads = threads
        self.parts_per_thread = parts_per_thread
        self.parts = max(1, threads or 2) * parts_per_thread
        self.ready = False
        self.busy = False
        self.closing = False  # told to close (:meth:`wind_down`)
        self._sender: threading.Thread | None = None  # sending a map's arguments (:meth:`_send`)
        here, there = multiprocessing.Pipe()
        flush_std()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                here.close()
                _serve(there, connect)
                code = 0
            finally:
                os._exit(code)
        there.close()
        self.pid = pid
        self.conn = here
        self.client = _Runner(self)

    def _recv(self) -> Any:
        try:
            msg = self.conn.recv()
        except (EOFError, OSError):
            raise InputError(f"--dask {self.target}: the Dask client process ended") from None
        if msg[0] == "error":
            err = msg[1]
            if isinstance(err, OSError | TimeoutError):
                raise InputError(f"--dask {self.target}: {err}") from None
            raise err
        return msg

    def _check_ready(self, wait: bool) -> bool:
        if not self.ready and (wait or self.conn.poll()):
            _, threads = self._recv()
            self.threads = threads or self.threads
            self.parts = max(1, self.threads or 2) * self.parts_per_thread
            self.ready = True
        return self.ready

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None,
            where: Sequence[tuple[str | None, int]] | None = None,
            arrived: Callable[[int, _R], None] | None = None,
            alongside: Beside | None = None) -> list[_R]:
        """``fn`` of each argument; ``where``: each task's worker and
        weight, once the cluster is up (:meth:`podnuma.fleet.execute.DaskExecutor.each`);
        ``arrived``: given each result as it comes, then ``done`` its index.
        ``alongside`` (with ``where``): run in this process, on a thread of
        its own, while the cluster runs the tasks (this thread reading their
        results meanwhile), given a function that tells it to stop (see
        :class:`_Beside`); it has ended when this returns or raises: what it
        raised is raised here at once (the cluster's tasks not waited for),
        and when the map fails it is stopped before its next piece (on
        Ctrl-C, told to stop and not waited for). A map that raises leaves
        the client process to :meth:`close`, which stops it (what it was
        running is not known); no other map runs."""
        if self.busy:
            raise RuntimeError("the Dask client process is still in a map given up half-way")
        try:
            return self._map(fn, args, done, where, arrived, alongside)
        except BaseException:
            self.busy = True
            raise

    def _map(self, fn: Callable[[_A], _R], args: Sequence[_A],
             done: Callable[[int], None] | None,
             where: Sequence[tuple[str | None, int]] | None,
             arrived: Callable[[int, _R], None] | None,
             alongside: Beside | None = None) -> list[_R]:
        if alongside is not None and where is None:
            raise ValueError("alongside runs beside a map whose tasks have their workers")
        if alongside is not None and not args:
            alongside(lambda: False)  # (nothing for the cluster)
            return []
        out: list[Any] = [None] * len(args)

        def got(i: int) -> None:
            if arrived is not None:
                arrived(i, out[i])
            if done is not None:
                done(i)

        if self.ready or where is not None:
            self._check_ready(wait=True)
            start = 0
            if args:
                self._send(fn, args, 0, where)
        else:  # the tasks from ``start`` on sent once the cluster came up
            start = self._here_until_ready(fn, args, out, got)
        if start == len(args):
            return out
        beside = _Beside(alongside) if alongside is not None else None
        try:
            while True:
                if beside is not None:  # what the command's own work raised, raised at once
                    while not self.conn.poll(_BESIDE_POLL_S):
                        beside.check()
                msg = self._recv()
                if msg[0] == "end":
                    self.busy = False
                    if self._sender is not None:  # (every argument was read: it has ended)
                        self._sender.join()
                        self._sender = None
                    if beside is not None:
                        beside.join()
                    return out
                i = start + msg[1]
                out[i] = pickle.loads(msg[2])
                got(i)
        except Exception:
            if beside is not None:  # (stopped before its next piece, ended before this raises)
                beside.stop()
            raise
        except BaseException:  # Ctrl-C: the process is ending, not waited for
            if beside is not None:
                beside.stop(wait=False)
            raise

    def _send(self, fn: Callable[[_A], _R], args: Sequence[_A], start: int,
              where: Sequence[tuple[str | None, int]] | None = None) -> None:
        """The map of ``args[start:]`` sent to the client process: the first
        argument with it, the others each in a message of its own, sent by a
        thread of their own as soon as each is pickled here (each pickled
        apart: the workers unpickle them). The cluster starts on the first
        while the rest are pickled, a worker's first task does not wait for
        the pickling of all the others, and this process reads the results
        meanwhile: the client process reads an argument only when it submits
        its task, and it sends results as they come; were this process
        blocked sending arguments, neither process would move once the pipe
        is full both ways."""
        self.busy = True
        blobs = [pickle.dumps(args[start], protocol=pickle.HIGHEST_PROTOCOL)]
        self.conn.send(("map", fn, blobs, len(args) - start,
                        None if where is None else list(where[start:])))
        if len(args) == start + 1:
            return
        queue: SimpleQueue[bytes | None] = SimpleQueue()
        sender = threading.Thread(target=self._send_each, args=(queue,), name="podnuma-dask-send",
                                  daemon=True)
        sender.start()
        self._sender = sender
        try:
            for a in args[start + 1:]:
                queue.put(pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL))
        finally:
            queue.put(None)

    def _send_each(self, queue: SimpleQueue[bytes | None]) -> None:
        """The sending thread of :meth:`_send`: each argument as it comes,
        until ``None``. A client process that is gone ends it (the reading
        side says so)."""
        while (blob := queue.get()) is not None:
            try:
                self.conn.send(("more", [blob]))
            except Exception:  # noqa: BLE001 - closed under it (OSError, or TypeError mid-write)
                return

    def _here_until_ready(self, fn: Callable[[_A], _R], args: Sequence[_A], out: list[Any],
                          done: Callable[[int], None]) -> int:
        """While the cluster comes up, this process runs the first tasks,
        one at a time; the moment it is ready (a thread waits for it), the
        tasks not begun here are sent to it, while the one running here
        ends. The index of the first task sent (``len(args)``: none). The
        cluster asked for is there (or its error raised) on return, even
        when this process could run every task before it came up."""
        lock = threading.Lock()
        claimed = [0]  # the next task not begun here
        handed: list[int] = []  # the first task sent to the cluster
        failed: list[BaseException] = []

        def watch() -> None:
            try:
                self._check_ready(wait=True)
            except BaseException as e:  # noqa: BLE001 - raised by the caller
                failed.append(e)
            with lock:
                first = claimed[0]
                handed.append(first)
            if not failed and first < len(args):
                try:
                    self._send(fn, args, first)
                except BaseException as e:  # noqa: BLE001 - raised by the caller
                    failed.append(e)

        watcher = threading.Thread(target=watch, name="podnuma-dask-ready", daemon=True)
        watcher.start()
        while True:
            with lock:
                if handed or claimed[0] >= len(args):
                    break
                i = claimed[0]
                claimed[0] += 1
            try:
                out[i] = fn(args[i])
                done(i)
            except BaseException:
                with lock:  # nothing more for the cluster: the caller gets this error
                    claimed[0] = len(args)
                raise
        watcher.join()
        if failed:
            raise failed[0]
        return handed[0]

    def run(self, fn: Callable[[], Any]) -> dict[str, Any]:
        """``fn()`` on every worker (``Client.run``)."""
        self._check_ready(wait=True)
        self.conn.send(("run", fn))
        return dict(self._recv()[1])

    def wind_down(self) -> None:
        """No more tasks: the client process closes its cluster now (the
        workers end) while this process goes on; :meth:`close` then waits
        for it."""
        if self.ready and not self.busy and not self.closing:
            self.closing = True
            with contextlib.suppress(OSError):
                self.conn.send(("close",))

    def close(self) -> None:
        if self.busy or not self.ready:  # a map given up half-way, or a cluster not needed after all
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
        if not self.closing:
            with contextlib.suppress(OSError):
                self.conn.send(("close",))
        self.conn.close()
        for _ in range(2):
            try:
                os.waitpid(self.pid, 0)
                return
            except ChildProcessError:
                return
            except KeyboardInterrupt:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGTERM)


#: how often a map with work of the command's own beside it looks whether
#: that work raised, while no result comes
_BESIDE_POLL_S = 0.05


class _Beside:
    """``fn(stopped)`` run on a thread of its own from now on (``fn``
    looks at ``stopped()`` between its pieces of work and returns once it
    is true); :meth:`check` raises what it raised, :meth:`join` waits for
    it and then does, :meth:`stop` asks it to stop (and waits for it)."""

    def __init__(self, fn: Beside) -> None:
        self.failed: list[BaseException] = []
        self.stopping = threading.Event()

        def run() -> None:
            try:
                fn(self.stopping.is_set)
            except BaseException as e:  # noqa: BLE001 - raised by check and join
                self.failed.append(e)

        self.thread = threading.Thread(target=run, name="podnuma-fleet-here", daemon=True)
        self.thread.start()

    def check(self) -> None:
        if self.failed:
            raise self.failed[0]

    def join(self) -> None:
        self.thread.join()
        self.check()

    def stop(self, *, wait: bool = True) -> None:
        self.stopping.set()
        if wait:
            self.thread.join()


class _Runner:
    """``run`` as a ``distributed.Client`` has it (for measuring)."""

    def __init__(self, owner: ClientProcess) -> None:
        self.owner = owner

    def run(self, fn: Callable[[], Any]) -> dict[str, Any]:
        return self.owner.run(fn)


def start(target: str, connect: Connect, *, threads: int | None,
          parts_per_thread: int) -> ClientProcess | None:
    """A client process for ``--dask TARGET`` (``connect`` run there), or
    ``None`` where forking is not safe here (no ``fork``, or other threads
    running)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return None
    return ClientProcess(target, connect, threads, parts_per_thread)
