"""Running the per-node replays: one process, local processes, or Dask.

An :class:`Executor` runs both steps of an analysis where the replay runs:
reading the files (:func:`podnuma.fleet.inputs.scan_files`: each pods dump
is indexed, per node the byte ranges of its pods; no pod goes back to the
process that assembles the fleet) and replaying the nodes
(:func:`podnuma.fleet.replay.replay_partition`, which reads each node's
pods from its byte ranges). The nodes are cut into partitions of about the
same number of pods (nodes whose pods are in the same files go together);
each partition's result is its nodes' results, not their pods. Every
node's result depends only on that node's inputs and the results are put
back in node-name order, so the report is the same whichever backend ran
it and however the nodes were cut.

* :class:`Serial` - in this process;
* :class:`Processes` - a pool of local worker processes;
* :class:`DaskExecutor` - a Dask distributed cluster (a ``Client`` to a
  ``LocalCluster`` or to a scheduler at ``tcp://HOST:PORT``, e.g. started
  by ``dask scheduler`` and ``dask worker``): one task per batch of files,
  then one per partition. A task whose worker dies is run again on
  another worker by the scheduler (``distributed.scheduler.allowed-failures``),
  and a task that raised is retried (``retries``); the result is the same.
  The files (pod dumps, machine files) must be readable by the workers at
  the same paths, as for any Dask reader.
* :class:`DaskProcess` - the same, with the Dask client in a process the
  command forks (:mod:`podnuma.fleet.daskproc`; a local cluster's workers
  forked from it, :mod:`podnuma.fleet.forked`): what ``--dask`` uses where
  forking is safe.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from podnuma.fleet.batches import consecutive_batches, guided_batches
from podnuma.fleet.forked import ForkedCluster
from podnuma.fleet.model import NodeSpec
from podnuma.fleet.replay import replay_partition
from podnuma.fleet.whatif import WhatIf

__all__ = ["partition", "run_serial", "run_processes", "run_dask", "parse_dask_target",
           "Progress", "run_fleet", "Executor", "Serial", "Processes", "DaskExecutor", "DaskProcess",
           "open_executor"]

Progress = Callable[[int], None]  # called with the number of nodes just finished
#: the most pods in one partition (bounds a worker's memory, the work a
#: retried task redoes and the time the last task keeps one worker busy
#: while the others wait)
MAX_PARTITION_PODS = 5_000
#: the most pods in one task of a pool or a cluster (the first, largest
#: partitions): a task's fixed cost (the scheduler's, the transfers', the
#: worker's) paid half as often; a worker's memory still bounded
MAX_TASK_PODS = 10_000
#: partitions per worker of a pool or a cluster: enough that the workers
#: finish together (the scheduler hands the next partition to the worker
#: that is free), few enough that a task's fixed cost stays small
PARTS_PER_WORKER = 8
#: the modules a Dask worker of a ``LocalCluster`` imports when it starts,
#: while the cluster comes up, rather than in its first task
WORKER_PRELOAD = ("podnuma.fleet.inputs", "podnuma.fleet.replay")
#: Dask settings of a ``LocalCluster`` the command starts (its scheduler,
#: nannies and workers): no statistical profiler in the workers (it samples
#: the running task's stack every 10 ms) and the housekeeping loops (event
#: loop tick, system monitor, the nannies' memory poll) a few times a second
#: rather than every 20-500 ms. Measured on an idle 2-worker cluster: 0.066
#: CPU seconds per second with Dask's defaults, 0.012 with these; what the
#: replay does not use is left to it.
CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
}
_A = TypeVar("_A")
_R = TypeVar("_R")


def _weight(n: NodeSpec) -> int:
    """A node's share of the work: its pods (at least 1)."""
    if n.pods is not None:
        return max(1, len(n.pods))
    return max(1, n.pods_bound)


def _locality(n: NodeSpec) -> tuple[Any, ...]:
    first = n.pod_ranges[0] if n.pod_ranges else ("", 0, 0)
    return (n.pod_files, first[0], first[1], n.name)


#: with runners that take partitions as they come free: the smallest
#: partitions at the end, as a share of a runner's pods
TAIL_SHARE = 32


def partition(nodes: Sequence[NodeSpec], parts_hint: int = 1,
              runners: int | None = None) -> list[list[NodeSpec]]:
    """Nodes in the order of their pods in the dumps (nodes of the same
    files together), cut into partitions of at most ``MAX_PARTITION_PODS``
    pods: about ``parts_hint`` of the same number of pods; or, for
    ``runners`` that each take the next partition when free, the largest
    first (at most ``MAX_TASK_PODS``) and shrinking towards the end (down to
    a 32nd of a runner's share of the pods), so that the runners finish
    together."""
    ordered = sorted(nodes, key=_locality)
    weights = [_weight(n) for n in ordered]
    total = sum(weights)
    if runners is not None:
        tail = math.ceil(total / (max(1, runners) * TAIL_SHARE))
        return guided_batches(ordered, weights, runners=runners,
                              largest=MAX_TASK_PODS, smallest=tail)
    size = max(1, min(MAX_PARTITION_PODS, math.ceil(total / max(1, parts_hint))))
    return consecutive_batches(ordered, weights, size)


def _ordered(results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    flat = [r for part in results for r in part]
    return sorted(flat, key=lambda r: str(r["name"]))


class Executor:
    """Where the reading and the replay run. ``map`` gives the results in
    the order of its arguments; ``parts`` how many pieces keep it busy."""

    parts: int = 1
    #: how many tasks run at once, each runner taking the next task when it
    #: is free (``None``: the tasks are cut to ``parts``)
    runners: int | None = None
    #: ``map`` runs the functions in this process
    in_process: bool = False

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None) -> list[_R]:
        raise NotImplementedError

    def replay(self, nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf],
               progress: Progress | None = None) -> list[dict[str, Any]]:
        parts = partition(nodes, parts_hint=self.parts, runners=self.runners)
        w = tuple(what_ifs)

        def done(i: int) -> None:
            if progress is not None:
                progress(len(parts[i]))

        return _ordered(self.map(_replay_args, [(p, w) for p in parts], done))


class Serial(Executor):
    in_process = True

    def __init__(self, parts: int = 1) -> None:
        self.parts = parts

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None) -> list[_R]:
        out = []
        for i, a in enumerate(args):
            out.append(fn(a))
            if done is not None:
                done(i)
        return out

    def replay(self, nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf],
               progress: Progress | None = None) -> list[dict[str, Any]]:
        # small partitions: progress is shown often, memory stays low
        total = sum(_weight(n) for n in nodes)
        self.parts = max(1, math.ceil(total / 10_000))
        return super().replay(nodes, what_ifs, progress)


def _replay_args(arg: tuple[Sequence[NodeSpec], tuple[WhatIf, ...]]) -> list[dict[str, Any]]:
    return replay_partition(arg[0], arg[1])


class Processes(Executor):
    """A pool of ``workers`` local processes (spawned)."""

    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.parts = workers * PARTS_PER_WORKER
        self.runners = workers
        self.pool = ProcessPoolExecutor(max_workers=workers,
                                        mp_context=multiprocessing.get_context("spawn"))

    def close(self) -> None:
        self.pool.shutdown()

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None) -> list[_R]:
        from concurrent.futures import as_completed

        futures = {self.pool.submit(fn, a): i for i, a in enumerate(args)}
        out: list[Any] = [None] * len(args)
        for fut in as_completed(futures):
            out[futures[fut]] = fut.result()
            if done is not None:
                done(futures[fut])
        return out


class DaskExecutor(Executor):
    """The cluster behind ``client`` (a ``distributed.Client``)."""

    def __init__(self, client: Any, *, retries: int = 2, owned: Any = None,
                 threads: int | None = None) -> None:
        self.client = client
        self.retries = retries
        self.owned = owned
        # a task per thread at a time: partitions per thread of the cluster
        # (``threads``: the workers' threads, when they are still coming up)
        if threads is None:
            threads = sum(int(w.get("nthreads", 1))
                          for w in client.scheduler_info().get("workers", {}).values())
        self.parts = max(1, threads) * PARTS_PER_WORKER
        self.runners = max(1, threads)

    def close(self) -> None:
        self.client.close()
        if self.owned is not None:
            self.owned.close()

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None) -> list[_R]:
        out: list[Any] = [None] * len(args)
        for i, result in self.each(fn, args):
            out[i] = result
            if done is not None:
                done(i)
        return out

    def each(self, fn: Callable[[_A], _R], args: Sequence[_A],
             name: str | None = None) -> Iterator[tuple[int, _R]]:
        """``(i, fn(args[i]))`` for every argument, as the tasks finish. A
        few tasks per worker thread are submitted at a time, the next as one
        finishes: the scheduler always has work queued, and the arguments of
        a million-pod fleet are not all held in the cluster at once.
        ``name``: in the tasks' keys (default: the function's)."""
        import uuid

        from distributed import as_completed

        tag = uuid.uuid4().hex[:8]
        name = name or getattr(fn, "__name__", "task")
        window = max(2, self.parts // 2)  # 4 per worker thread
        index: dict[str, int] = {}

        def submit(i: int) -> Any:
            fut = self.client.submit(fn, args[i], key=f"podnuma-fleet-{name}-{tag}-{i}",
                                     retries=self.retries, pure=False)
            index[fut.key] = i
            return fut

        following = iter(range(len(args)))
        # results gathered as they come, several per round trip
        running = as_completed([submit(i) for i in itertools.islice(following, window)],  # type: ignore[no-untyped-call]
                               with_results=True)
        for fut, result in running:
            fut.release()
            nxt = next(following, None)
            if nxt is not None:
                running.add(submit(nxt))  # type: ignore[no-untyped-call]
            yield index.pop(fut.key), result


def run_serial(
    nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], progress: Progress | None = None
) -> list[dict[str, Any]]:
    return Serial().replay(nodes, what_ifs, progress)


def run_processes(
    nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], workers: int,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    ex = Processes(workers)
    try:
        return ex.replay(nodes, what_ifs, progress)
    finally:
        ex.close()


def parse_dask_target(text: str) -> tuple[str, int | None]:
    """``local`` / ``local:N`` -> ("local", N or None); ``tcp://HOST:PORT``
    (or another scheme Dask knows) -> (address, None)."""
    if text == "local" or text.startswith("local:"):
        n: int | None = None
        if ":" in text:
            raw = text.split(":", 1)[1]
            if not raw.isdigit() or int(raw) < 1:
                raise ValueError(f"--dask {text}: local:N needs a worker count >= 1")
            n = int(raw)
        return "local", n
    if "://" not in text:
        raise ValueError(f"--dask {text}: expected local, local:N or tcp://HOST:PORT")
    return text, None


def run_dask(
    nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], client: Any,
    progress: Progress | None = None, *, retries: int = 2,
) -> list[dict[str, Any]]:
    """Replay on the cluster behind ``client`` (a ``distributed.Client``)."""
    return DaskExecutor(client, retries=retries).replay(nodes, what_ifs, progress)


def dask_client(target: str, *, fork: bool = False) -> tuple[Any, Any]:
    """A ``Client`` (and the cluster it owns, or ``None``) for ``--dask
    TARGET``; the caller closes both. With ``fork``, a local cluster's
    workers are forks of this process where that is safe
    (:mod:`podnuma.fleet.forked`)."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    where, n = parse_dask_target(target)
    if where == "local" and fork:
        from podnuma.fleet import forked

        fc = forked.start(n or 2, CLUSTER_CONFIG, WORKER_PRELOAD)
        if fc is not None:
            return fc.client, fc
    if where == "local":
        # the nannies keep the settings for the workers they start (and restart)
        with dask.config.set(CLUSTER_CONFIG):
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=n or 2, threads_per_worker=1, processes=True,
                # Loopback only: the scheduler, the workers and the HTTP endpoint.
                host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
                preload=list(WORKER_PRELOAD),
            )
        return Client(cluster), cluster  # type: ignore[no-untyped-call]
    # Dask's connect timeout (30 s unless set, e.g. DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)
    timeout = dask.config.get("distributed.comm.timeouts.connect", "30s")
    return Client(where, timeout=timeout), None  # type: ignore[no-untyped-call]


def _connect(target: str) -> tuple[DaskExecutor, int]:
    """In the client process: the cluster reached (or started), once a
    worker can take a task; the executor and the workers' threads."""
    client, cluster = dask_client(target, fork=True)
    client.wait_for_workers(1)
    ex = DaskExecutor(client, owned=cluster,
                      threads=cluster.n if isinstance(cluster, ForkedCluster) else None)
    return ex, ex.parts // PARTS_PER_WORKER


class DaskProcess(Executor):
    """A Dask cluster behind a client process the command forks
    (:mod:`podnuma.fleet.daskproc`): this process runs the first tasks
    while that one comes up. ``pid``: the client process."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.pid: int = proc.pid
        self.client = proc.client
        self.parts = proc.parts
        self.runners = proc.threads

    @property
    def ready(self) -> bool:
        return bool(self.proc.ready)

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None) -> list[_R]:
        try:
            return list(self.proc.map(fn, args, done))
        finally:
            # the workers counted once the cluster is there
            self.parts = self.proc.parts
            self.runners = self.proc.threads

    def run(self, fn: Callable[[], Any]) -> dict[str, Any]:
        """``fn()`` on every worker (``Client.run``)."""
        return dict(self.proc.run(fn))

    def close(self) -> None:
        self.proc.close()


@contextlib.contextmanager
def open_executor(*, workers: int | None = None, dask_target: str | None = None) -> Iterator[Executor]:
    """The executor the options choose: a Dask cluster (``dask_target``:
    ``local[:N]`` or ``tcp://HOST:PORT``), ``workers`` local processes (more
    than one), else this process; closed on exit."""
    ex: Executor
    if dask_target is not None:
        from podnuma.fleet import daskproc

        where, n = parse_dask_target(dask_target)
        # Dask imported and the cluster reached by a process of its own (this
        # one runs the first tasks meanwhile) where forking is safe; else here
        proc = daskproc.start(dask_target, functools.partial(_connect, dask_target),
                              threads=(n or 2) if where == "local" else None,
                              parts_per_thread=PARTS_PER_WORKER)
        if proc is not None:
            ex = DaskProcess(proc)
        else:
            client, cluster = dask_client(dask_target, fork=True)
            ex = DaskExecutor(client, owned=cluster,
                              threads=cluster.n if isinstance(cluster, ForkedCluster) else None)
    elif workers is not None and workers > 1:
        ex = Processes(workers)
    else:
        ex = Serial()
    try:
        yield ex
    finally:
        close = getattr(ex, "close", None)
        if close is not None:
            close()


def run_fleet(
    nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], *, workers: int | None = None,
    dask_target: str | None = None, progress: Progress | None = None,
    executor: Executor | None = None,
) -> list[dict[str, Any]]:
    """Replay ``nodes`` on ``executor``, else on the one the options choose
    (see :func:`open_executor`)."""
    if executor is not None:
        return executor.replay(nodes, what_ifs, progress)
    with open_executor(workers=workers, dask_target=dask_target) as ex:
        return ex.replay(nodes, what_ifs, progress)
