"""A local Dask cluster whose workers are forks of this process.

``--dask local:N`` starts a cluster for one command. Dask's
``LocalCluster`` starts each worker as a new interpreter (a nanny spawns
it) that imports Dask and the fleet modules again: about half a CPU second
per worker, on a machine whose cores the replay wants. Here the command,
which has imported them already, forks its workers before it starts any
thread: each child is a plain Dask ``Worker`` (no nanny) with the modules
in memory, connecting to the scheduler this process then starts (a
``LocalCluster`` without workers of its own). The address goes to the
children through a pipe, so they are forked while the scheduler is still
coming up.

The workers keep their scratch space (Dask's ``temporary-directory``) in
a directory of the cluster's own, removed when it closes: a worker
stopped while it closes leaves nothing behind in the temporary directory
(Dask's shared ``dask-scratch-space`` and its lock files included).

A worker that dies is replaced by a spawned worker (what a nanny does), so
the run goes on with as many workers; its tasks are run again by the
scheduler. One that Ctrl-C ended is not (the terminal's interrupt reaches
the whole process group: the command is ending too). When this process
runs other threads, forking is not safe (a lock another thread holds
stays held in the child): :func:`start` then returns ``None`` and the
caller starts a ``LocalCluster`` the usual way.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.fleet.daskproc import command_ignores_sigint, flush_std

__all__ = ["ForkedCluster", "start", "serve"]


def serve(address: str, config: Mapping[str, Any], ignore_sigint: bool = False) -> None:
    """Run one single-threaded Dask worker of the scheduler at ``address``
    until the scheduler closes it (or it is terminated); ``ignore_sigint``:
    as the command does."""
    import asyncio
    import logging

    if ignore_sigint:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    import dask
    from distributed import Worker

    dask.config.set(config)  # for good, in this process
    logging.getLogger("distributed").setLevel(logging.ERROR)

    async def run() -> None:
        async with Worker(address, nthreads=1, host="127.0.0.1",  # type: ignore[no-untyped-call]
                          dashboard=False, silence_logs=logging.ERROR) as worker:
            await worker.finished()  # type: ignore[no-untyped-call]

    asyncio.run(run())


def _child(read_fd: int, config: Mapping[str, Any], ignore_sigint: bool) -> None:
    # the command's standard output is its report's: a reader waiting for its
    # end must not wait for the workers too
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    # Ctrl-C as the command takes it: on a terminal it reaches the whole
    # process group and ends the worker with the command; a command that
    # ignores it (started in the background by a script) has workers that
    # do too, else they would end under a command that goes on waiting
    signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_sigint else signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    with os.fdopen(read_fd, "rb") as f:
        address = f.read().decode()
    if address:  # else the command gave up before the scheduler started
        serve(address, config, ignore_sigint)


class ForkedCluster:
    """``n`` forked workers and a scheduler in this process; ``client``
    is a ``distributed.Client`` to it. Closed by :meth:`close`."""

    def __init__(self, n: int, config: Mapping[str, Any], preload: Sequence[str] = ()) -> None:
        import logging

        import dask
        import distributed

        for module in preload:
            importlib.import_module(module)
        # What Dask reports of this host and installation (the processor, by
        # running ``uname -p``; each package's version, by scanning the
        # installed distributions: 35-54 ms of CPU), asked once here: the
        # scheduler and the client ask for it in this process, and each
        # worker when it registers, the forks inheriting the answers
        # (functools and platform caches) instead of finding them again.
        with contextlib.suppress(Exception):
            from distributed.versions import get_versions

            get_versions()
        import tempfile  # (here: the command that imports this module need not)

        self.n = n
        self.ignore_sigint = command_ignores_sigint()
        # the workers' scratch space, removed with the cluster
        self.scratch = tempfile.mkdtemp(prefix="podnuma-dask-")
        self.config = {**config, "temporary-directory": self.scratch}
        self.pids: list[int] = []
        self.spawned: list[Any] = []
        self.closing = False
        self.cluster: Any = None
        self.client: Any = None
        writers: list[int] = []
        try:
            for _ in range(n):
                r, w = os.pipe()
                flush_std()
                pid = os.fork()
                if pid == 0:  # the worker
                    code = 1
                    try:
                        os.close(w)
                        for other in writers:
                            os.close(other)
                        _child(r, self.config, self.ignore_sigint)
                        code = 0
                    finally:
                        os._exit(code)
                os.close(r)
                self.pids.append(pid)
                writers.append(w)
            with dask.config.set(self.config):
                self.cluster = distributed.LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=0, threads_per_worker=1, processes=True, host="127.0.0.1",
                    dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
                )
            address = str(self.cluster.scheduler_address)
            for w in writers:
                with contextlib.suppress(OSError):
                    os.write(w, address.encode())
        except BaseException:
            self.close()
            raise
        finally:
            for w in writers:
                with contextlib.suppress(OSError):
                    os.close(w)
        self.address = address
        # The client reaches the scheduler of this same process in memory
        # (Dask's ``inproc://`` transport, a listener added beside the
        # workers' TCP one), not through a loopback socket: its messages
        # are neither framed, serialised nor sent through the kernel, which
        # saves about a millisecond of this process's CPU per task.
        scheduler = self.cluster.scheduler
        self.cluster.sync(scheduler.listen, "inproc://")
        self.client = distributed.Client(  # type: ignore[no-untyped-call]
            scheduler.listeners[-1].contact_address, loop=self.cluster.loop)
        self.watcher = threading.Thread(target=self._watch, name="podnuma-fleet-workers", daemon=True)
        self.watcher.start()

    def _watch(self) -> None:
        """Replace a forked worker that ends before the cluster closes,
        unless Ctrl-C ended it (the terminal's interrupt reaches the whole
        process group: the command is ending too)."""
        live = set(self.pids)
        while live and not self.closing:
            for pid in list(live):
                status = 0
                try:
                    done, status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done and not self.closing:
                    live.discard(pid)
                    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT):
                        self._spawn()
            time.sleep(0.2)

    def _spawn(self) -> None:
        import multiprocessing

        p = multiprocessing.get_context("spawn").Process(
            target=serve, args=(self.address, self.config, self.ignore_sigint), daemon=True)
        p.start()
        self.spawned.append(p)

    def _reap(self) -> None:
        """Wait for the forked workers told to end (``SIGKILL`` for one
        still there after 5 s), and for their spawned replacements (told to
        stop as the forked ones are: one still starting would not hear the
        scheduler's close)."""
        deadline = time.monotonic() + 5
        for pid in self.pids:
            pause = 0.001
            while True:
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:  # (reaped by the watcher)
                    break
                if done:
                    break
                if time.monotonic() > deadline:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    deadline = time.monotonic() + 5
                time.sleep(pause)
                pause = min(0.02, pause * 2)
        for p in self.spawned:
            p.terminate()
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()

    def end(self) -> None:
        """The workers ended (``SIGTERM``: a forked worker dies at once, its
        memory returned whole) and reaped, replacements too, and the scratch
        space removed; the scheduler and the client are left as they are,
        for a process about to end (see :meth:`~podnuma.fleet.execute.DaskExecutor.close_at_exit`)."""
        self.closing = True
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        self._reap()
        import shutil

        shutil.rmtree(self.scratch, ignore_errors=True)

    def close(self) -> None:
        self.closing = True
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close()
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.close()  # the scheduler tells its workers to close
        self.end()  # and one still connecting stops too


def start(n: int, config: Mapping[str, Any], preload: Sequence[str] = ()) -> ForkedCluster | None:
    """A cluster of ``n`` forked workers, or ``None`` where forking is not
    safe (no ``fork``, or other threads running here)."""
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return None
    return ForkedCluster(n, config, preload)
