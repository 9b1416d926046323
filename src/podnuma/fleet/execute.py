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
  the same paths, as for any Dask reader. A worker keeps the pods of the
  dumps it indexed and the partitions of their nodes go to it
  (:class:`_FollowsPods`): each pod decoded once, as in one process
  (the command, too, replays the nodes of the dumps it indexed itself).
* :class:`DaskProcess` - the same, with the Dask client in a process the
  command forks (:mod:`podnuma.fleet.daskproc`; a local cluster's workers
  forked from it, :mod:`podnuma.fleet.forked`): what ``--dask`` uses where
  forking is safe.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import gc
import itertools
import math
import operator
import os
import re
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from podnuma.errors import InputError
from podnuma.fleet import MAX_LOCAL_WORKERS, inputs, podscan
from podnuma.fleet.batches import consecutive_batches, guided_batches
from podnuma.fleet.forked import ForkedCluster
from podnuma.fleet.inputs import Scan
from podnuma.fleet.model import NodeSpec
from podnuma.fleet.podscan import Piece, Range
from podnuma.fleet.replay import replay_partition
from podnuma.fleet.whatif import WhatIf

if TYPE_CHECKING:
    from podnuma.fleet.daskproc import Beside

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
#: replay does not use is left to it. No HTTP routes on the scheduler and the
#: workers (Prometheus metrics, health, info pages: on a port chosen at random
#: and shown nowhere): their modules and metric collectors are not loaded,
#: about 0.035 CPU s of a local cluster's start.
CLUSTER_CONFIG: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
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


#: the holder of the pods the command keeps itself: those of the dumps it
#: indexed while its cluster came up (:class:`DaskProcess`), whose nodes it
#: then replays itself alongside the workers
HERE = ""
#: the run whose dumps' pods this process keeps as the command, not as a
#: worker (set by an executor that replays those nodes here)
_HERE_RUN: list[str | None] = [None]


#: who keeps the pods of each dump read on a cluster: per file, the start of
#: each piece (0 for a dump read whole) and the address of the worker that
#: keeps the pods that begin there, up to the next piece's start
Holders = dict[str, list[tuple[int, str]]]


def _holder(holders: Holders, r: Range) -> str | None:
    """The worker that keeps the pods of range ``r`` (``None``: none)."""
    pieces = holders.get(r[0])
    if not pieces:
        return None
    i = bisect.bisect_right(pieces, r[1], key=operator.itemgetter(0)) - 1
    return pieces[i][1] if i >= 0 else None


def routed_partition(nodes: Sequence[NodeSpec], holders: Holders,
                     runners: int) -> tuple[list[list[NodeSpec]], list[tuple[str | None, int]]]:
    """Partitions for a cluster whose workers keep the pods of the dumps
    they indexed (``holders``): the nodes grouped
    by the worker that keeps the pods of their first range (``None``: kept
    nowhere), each group cut as :func:`partition` cuts for ``runners``
    that take the next partition when free (a kept group: for its one
    worker); with each partition its worker and its pods. A worker keeps
    at most its share of the pods (the total over ``runners``): the nodes
    past it (the last in the order of the dumps) go to the group kept
    nowhere, shared by all, so that a worker that indexed more dumps than
    another does not end the run alone with its large partitions. The
    command's own (:data:`HERE`, replayed by the command beside the
    ``runners`` and sharing their cores) keeps at most the share of one
    more runner."""
    groups: dict[str | None, list[NodeSpec]] = {}
    for n in nodes:
        where = _holder(holders, n.pod_ranges[0]) if n.pod_ranges else None
        groups.setdefault(where, []).append(n)
    total = sum(_weight(n) for n in nodes)
    share = math.ceil(total / max(1, runners))
    tail = math.ceil(total / (max(1, runners) * TAIL_SHARE))
    cut: dict[str | None, list[NodeSpec]] = {}
    shared = sorted(groups.pop(None, []), key=_locality)
    for where in sorted(groups, key=lambda w: w or ""):
        ordered = sorted(groups[where], key=_locality)
        cap = math.ceil(total / (max(1, runners) + 1)) if where == HERE else share
        acc = 0
        for i, n in enumerate(ordered):
            acc += _weight(n)
            if acc > cap:
                shared.extend(ordered[i:])
                ordered = ordered[:i]
                break
        cut[where] = ordered
    if shared:
        cut[None] = sorted(shared, key=_locality)
    # the shared partitions come last (see DaskExecutor._routed): with them
    # there, a worker's own need no small ones at their end
    own_tail = max(tail, MAX_TASK_PODS // 4) if shared else tail
    parts: list[list[NodeSpec]] = []
    hints: list[tuple[str | None, int]] = []
    for where in sorted(cut, key=lambda w: (w is not None, w or "")):
        ordered = cut[where]
        weights = [_weight(n) for n in ordered]
        for batch in guided_batches(ordered, weights, runners=max(1, runners) if where is None else 1,
                                    largest=MAX_TASK_PODS, smallest=tail if where is None else own_tail):
            parts.append(batch)
            hints.append((where, sum(_weight(n) for n in batch)))
    return parts, hints


#: the run whose dumps' pods this worker keeps (see :func:`scan_kept`)
_KEPT_RUN: list[str | None] = [None]


def _worker_address() -> str | None:
    """This process's address when it runs a Dask worker's task, else
    ``None`` (Dask not imported here: not a worker)."""
    dist = sys.modules.get("distributed")
    if dist is None:
        return None
    try:
        return str(dist.get_worker().address)
    except ValueError:
        return None


def scan_kept(arg: tuple[Sequence[str | Piece], str | None]) -> tuple[str | None, list[tuple[str, int]], list[Scan]]:
    """:func:`~podnuma.fleet.inputs.scan_files` of a batch of files, on a
    cluster whose replay follows the pods: on a Dask worker (and in the
    command whose executor replays here what it read, :data:`HERE`), given
    a run's tag (``arg[1]``), the dumps' pods are decoded once and kept
    there for the replay of their nodes (:func:`~podnuma.fleet.podscan.index_pod_file`
    with ``hold``; what an earlier run left let go first). The worker's
    address and the files (or pieces: a file and a piece's start) whose
    pods it keeps (none elsewhere), and the scans."""
    paths, run = arg
    where = _worker_address() if run is not None else None
    if where is None and run is not None and _HERE_RUN[0] == run:
        where = HERE  # the command, reading while its cluster comes up
    if where is None:
        return None, [], inputs.scan_files(paths)
    if _KEPT_RUN[0] != run:
        podscan.release_held()
        _KEPT_RUN[0] = run
    # the collector paused as where one process keeps the pods (many small
    # objects, none in a cycle)
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        scans = inputs.scan_files(paths, hold=True)
        if paused:  # (kept out of the collector's passes until replayed)
            podscan.freeze_held()
    finally:
        if paused:
            gc.enable()
    kept = [(p.path, p.lo) if isinstance(p, Piece) else (str(Path(p)), 0) for p in paths
            if podscan.is_held(p.path if isinstance(p, Piece) else str(Path(p)))]
    return where, kept, scans


def _keeps(batches: Sequence[Sequence[str | Piece]], runners: int) -> bool:
    """Whether the JSON files among ``batches`` total at most
    :data:`~podnuma.fleet.podscan.HOLD_BYTES` per worker of ``runners``
    (the workers then keep the pods they decode, each up to that bound)."""
    limit = podscan.HOLD_BYTES * max(1, runners)
    total = 0
    for b in batches:
        for f in b:
            if isinstance(f, Piece):
                total += f.hi - f.lo
            elif f.lower().endswith(".json"):
                with contextlib.suppress(OSError):
                    total += Path(f).stat().st_size
            if total > limit:
                return False
    return True


class _FollowsPods:
    """An executor on a Dask cluster whose replay runs where the pods
    are: each worker keeps the pods of the dumps (or pieces of dumps) it
    indexed (when the fleet's JSON files are at most
    :data:`~podnuma.fleet.podscan.HOLD_BYTES` per worker, the bound each
    process keeps them under) and the partitions of their nodes are
    handed to it (another worker takes them when its own are
    done, reading their ranges back from the files); the pods a worker
    kept and did not replay are let go when the replay ends."""

    holders: Holders
    runners: int | None
    parts: int
    #: the dumps this process indexes itself (while the cluster comes up)
    #: have their pods kept here, and their nodes are replayed here
    #: (:data:`HERE`), beside the cluster's tasks
    replays_here: bool = False

    def _map(self, fn: Callable[[_A], _R], args: Sequence[_A], done: Callable[[int], None] | None,
             where: Sequence[tuple[str | None, int]] | None,
             arrived: Callable[[int, _R], None] | None = None,
             alongside: Beside | None = None) -> list[_R]:
        """The map on the cluster; ``alongside`` (with ``where`` only) run
        in this process meanwhile (given a function that says when to stop,
        looked at between its pieces), ended before this returns or raises:
        what it raised raised at once, and it is stopped when the map fails."""
        raise NotImplementedError

    def _release(self) -> None:
        raise NotImplementedError

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None,
            arrived: Callable[[int, _R], None] | None = None) -> list[_R]:
        if fn is not inputs.scan_files:  # type: ignore[comparison-overlap]
            return self._map(fn, args, done, None, arrived)
        import uuid

        batches: Sequence[Sequence[str | Piece]] = args  # type: ignore[assignment]
        run = uuid.uuid4().hex if _keeps(batches, self.runners or 1) else None
        self.holders = {}
        _HERE_RUN[0] = run if self.replays_here else None
        out: list[Any] = []
        scans_arrived = None
        if arrived is not None:
            def scans_arrived(i: int, result: tuple[str | None, list[tuple[str, int]], list[Scan]]) -> None:
                arrived(i, result[2])  # type: ignore[arg-type]

        for where, kept, scans in self._map(scan_kept, [(b, run) for b in batches], done, None,
                                            scans_arrived):
            if where is not None:
                for f, lo in kept:
                    self.holders.setdefault(f, []).append((lo, where))
            out.append(scans)
        for pieces in self.holders.values():
            pieces.sort()
        return out

    def replay(self, nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf],
               progress: Progress | None = None) -> list[dict[str, Any]]:
        holders = getattr(self, "holders", None)
        if not holders:
            return Executor.replay(self, nodes, what_ifs, progress)  # type: ignore[arg-type]
        parts, hints = routed_partition(nodes, holders, self.runners or 1)
        w = tuple(what_ifs)
        told = threading.Lock()  # (this process's own partitions end on a thread of their own)

        def done(i: int) -> None:
            if progress is not None:
                with told:
                    progress(len(parts[i]))

        try:
            # the cluster's partitions, each worker's first ones first (a
            # client process submits them as their arguments come); this
            # process replays its own (if any) meanwhile
            here = [i for i, (h, _) in enumerate(hints) if h == HERE]
            sent = _first_of_each([i for i in range(len(parts)) if hints[i][0] != HERE], hints)
            mine: list[list[dict[str, Any]]] = []

            def alongside(stopped: Callable[[], bool]) -> None:
                for i in here:
                    if stopped():  # (the cluster's map failed)
                        return
                    mine.append(_replay_args((parts[i], w)))
                    done(i)

            theirs = self._map(_replay_args, [(parts[i], w) for i in sent], lambda k: done(sent[k]),
                               [hints[i] for i in sent], alongside=alongside if here else None)
            return _ordered([*theirs, *mine])
        finally:
            self.holders = {}
            _let_go_here()
            with contextlib.suppress(Exception):
                self._release()


def _let_go_here() -> None:
    """The pods this process kept as the command (:data:`HERE`) let go."""
    if _HERE_RUN[0] is not None:
        _HERE_RUN[0] = None
        podscan.release_held()


def _first_of_each(indices: Sequence[int], hints: Sequence[tuple[str | None, int]]) -> list[int]:
    """``indices`` taken a group at a time (a group: the partitions of one
    holder, in their order): the first of every group, then the second of
    every group, and so on; each group's order is kept."""
    groups: dict[str | None, deque[int]] = {}
    for i in indices:
        groups.setdefault(hints[i][0], deque()).append(i)
    out: list[int] = []
    while groups:
        for h in list(groups):
            out.append(groups[h].popleft())
            if not groups[h]:
                del groups[h]
    return out


def _tell(i: int, result: _R, arrived: Callable[[int, _R], None] | None,
          done: Callable[[int], None] | None) -> None:
    """A map's result ``i`` told as it comes: ``arrived`` given it, then
    ``done`` its index."""
    if arrived is not None:
        arrived(i, result)
    if done is not None:
        done(i)


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
            done: Callable[[int], None] | None = None,
            arrived: Callable[[int, _R], None] | None = None) -> list[_R]:
        """``fn`` of each argument, in their order; as each result comes,
        ``arrived`` is given it (with its index), then ``done`` its index."""
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
            done: Callable[[int], None] | None = None,
            arrived: Callable[[int, _R], None] | None = None) -> list[_R]:
        out = []
        for i, a in enumerate(args):
            out.append(fn(a))
            _tell(i, out[i], arrived, done)
        return out

    def replay(self, nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf],
               progress: Progress | None = None) -> list[dict[str, Any]]:
        # small partitions: progress is shown often, memory stays low
        total = sum(_weight(n) for n in nodes)
        self.parts = max(1, math.ceil(total / 10_000))
        try:
            return super().replay(nodes, what_ifs, progress)
        finally:  # the pods kept for nodes not replayed (not in the nodes dump) let go too
            podscan.release_held()


def _replay_args(arg: tuple[Sequence[NodeSpec], tuple[WhatIf, ...]]) -> list[dict[str, Any]]:
    return replay_partition(arg[0], arg[1])


class Processes(Executor):
    """A pool of ``workers`` local processes (spawned)."""

    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        try:  # (a spawned process starts in the command's working directory)
            os.getcwd()
        except OSError as e:
            raise InputError(f"cannot start worker processes: the working directory is gone ({e.strerror}); "
                             "run from another directory, or without --workers", file="--workers") from None
        self.parts = workers * PARTS_PER_WORKER
        self.runners = workers
        self.pool = ProcessPoolExecutor(max_workers=workers,
                                        mp_context=multiprocessing.get_context("spawn"))

    def close(self) -> None:
        self.pool.shutdown()

    def map(self, fn: Callable[[_A], _R], args: Sequence[_A],
            done: Callable[[int], None] | None = None,
            arrived: Callable[[int, _R], None] | None = None) -> list[_R]:
        from concurrent.futures import as_completed

        futures = {self.pool.submit(fn, a): i for i, a in enumerate(args)}
        out: list[Any] = [None] * len(args)
        for fut in as_completed(futures):
            i = futures[fut]
            out[i] = fut.result()
            _tell(i, out[i], arrived, done)
        return out


class DaskExecutor(_FollowsPods, Executor):
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
        self.holders = {}

    def close(self) -> None:
        if self.owned is None:
            self.client.close()
            return
        import logging

        # a cluster this process owns is torn down without its scheduler's
        # complaints (a worker cut off while joining logs a traceback)
        log = logging.getLogger("distributed")
        level = log.level
        log.setLevel(logging.CRITICAL + 1)
        try:
            self.client.close()
            self.owned.close()
        finally:
            log.setLevel(level)

    def close_at_exit(self) -> None:
        """:meth:`close`, in a process that ends right after (the Dask
        client process, :mod:`~podnuma.fleet.daskproc`): a cluster of workers
        forked here (:class:`~podnuma.fleet.forked.ForkedCluster`) is ended
        by ending its workers and removing their scratch space, without the
        scheduler's round of goodbyes (each worker told to close, its
        comms, threads and memory taken down one by one: 30-50 ms that the
        command's exit waited for); the scheduler, the client and their
        threads end with this process."""
        if isinstance(self.owned, ForkedCluster):
            self.owned.end()
            return
        self.close()

    def _release(self) -> None:
        if isinstance(self.owned, ForkedCluster):
            # Workers forked for this command end with it, and their memory
            # with them: letting go of the pods they kept (a call to every
            # worker, each freeing what it kept object by object) would only
            # delay the end of the run. A later reading of the same cluster
            # lets go of them first (:func:`scan_kept`), and a later replay
            # takes what it finds kept as this one did.
            return
        self.client.run(podscan.release_held)

    def release_kept(self) -> None:
        """Every worker lets go of the pods it kept (see :class:`_FollowsPods`),
        on a cluster that outlives the command."""
        self._release()

    def _map(self, fn: Callable[[_A], _R], args: Sequence[_A], done: Callable[[int], None] | None,
             where: Sequence[tuple[str | None, int]] | None,
             arrived: Callable[[int, _R], None] | None = None,
             alongside: Beside | None = None) -> list[_R]:
        if alongside is not None:  # (this executor keeps no pods here: not met)
            alongside(lambda: False)
        out: list[Any] = [None] * len(args)
        for i, result in self.each(fn, args, where=where):
            out[i] = result
            _tell(i, result, arrived, done)
        return out

    def each(self, fn: Callable[[_A], _R], args: Sequence[_A], name: str | None = None,
             where: Sequence[tuple[str | None, int]] | None = None) -> Iterator[tuple[int, _R]]:
        """``(i, fn(args[i]))`` for every argument, as the tasks finish. A
        few tasks per worker thread are submitted at a time, the next as one
        finishes: the scheduler always has work queued, and the arguments of
        a million-pod fleet are not all held in the cluster at once.
        ``name``: in the tasks' keys (default: the function's). ``where``:
        each task's worker and weight (see :meth:`_routed`)."""
        import uuid

        tag = uuid.uuid4().hex[:8]
        name = name or getattr(fn, "__name__", "task")
        if where is not None:
            yield from self._routed(fn, args, where, f"podnuma-fleet-{name}-{tag}")
            return
        from distributed import as_completed

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

    def _routed(self, fn: Callable[[_A], _R], args: Sequence[_A], where: Sequence[tuple[str | None, int]],
                prefix: str) -> Iterator[tuple[int, _R]]:
        """:meth:`each` with each task meant for a worker (``where[i]``: its
        address, or ``None`` for any, and its weight): two tasks per thread
        of each worker at a time (one running, the next queued there), the
        next one for a worker as one of its tasks ends: the larger of the
        first of its own and the first meant for any; when there are none
        of those, the last (smallest) of the worker with the most left. A
        task goes to its worker while that one is there, else to another
        (``allow_other_workers``): a worker that dies stops nothing."""
        from distributed import as_completed

        info = self.client.scheduler_info().get("workers", {})
        slots = {w: 2 * max(1, int(d.get("nthreads", 1))) for w, d in info.items()}
        if not slots:  # no worker there now: the scheduler places them as they come
            yield from self.each(fn, args)
            return
        own: dict[str, deque[int]] = {w: deque() for w in slots}
        anyone: deque[int] = deque()
        for i, (w, _) in enumerate(where):
            q = own.get(w) if w is not None else None
            (anyone if q is None else q).append(i)
        left = {w: sum(where[i][1] for i in q) for w, q in own.items()}

        def pick(w: str | None) -> int | None:
            mine = own.get(w) if w is not None else None
            if w is not None and mine and (not anyone or where[mine[0]][1] >= where[anyone[0]][1]):
                i = mine.popleft()
                left[w] -= where[i][1]
                return i
            if anyone:
                return anyone.popleft()
            victim = max((v for v in own if own[v]), key=lambda v: left[v], default=None)
            if victim is None:
                return None
            i = own[victim].pop()
            left[victim] -= where[i][1]
            return i

        target: dict[str, str | None] = {}  # a task's key -> its worker (None: any)
        index: dict[str, int] = {}
        futures: dict[str, Any] = {}
        arg: dict[int, Any] = {}  # the arguments of the tasks not ended (to be sent again)
        moved: set[str] = set()  # tasks given up (their worker gone), sent again to any
        lock = threading.Lock()

        def submit(i: int, w: str | None) -> Any:
            if i not in arg:
                arg[i] = args[i]
            key = f"{prefix}-{i}" if w is not None else f"{prefix}-{i}-any{len(moved)}"
            where = {"workers": [w], "allow_other_workers": True} if w is not None else {}
            fut = self.client.submit(fn, arg[i], key=key, retries=self.retries, pure=False, **where)
            target[key], index[key], futures[key] = w, i, fut
            return fut

        # each worker's first task before any worker's second: a worker does
        # not wait for the submission of another's queued task
        first = []
        for k in range(max(slots.values())):
            for w, n in slots.items():
                got = pick(w) if k < n else None
                if got is not None:
                    first.append(submit(got, w))
        running = as_completed(first, with_results=True)  # type: ignore[no-untyped-call]
        stop = threading.Event()

        def watch() -> None:
            """A task meant for a worker that is gone goes to any worker.
            The scheduler does that itself while another worker is there;
            when none is at the moment its worker leaves (every worker died
            at once), the task waits as ``no-worker`` and the workers that
            join later are never given it, its restriction to the gone
            worker checked as if it were strict (the scheduler's
            ``bulk_schedule_unrunnable_after_adding_worker`` leaves out
            ``allow_other_workers``; see dask/distributed#7346)."""
            while not stop.wait(ROUTED_WATCH_S):
                try:
                    alive = set(self.client.nthreads())
                except Exception:  # noqa: BLE001 - asked again at the next look
                    continue
                with lock:
                    for key in [k for k, w in target.items() if w is not None and w not in alive]:
                        moved.add(key)
                        target.pop(key)
                        futures.pop(key).cancel()
                        running.add(submit(index.pop(key), None))  # type: ignore[no-untyped-call]

        watcher = threading.Thread(target=watch, name="podnuma-fleet-routes", daemon=True)
        watcher.start()
        try:
            for fut, result in running:
                with lock:
                    if fut.key in moved:  # (cancelled: its task was sent again)
                        continue
                    fut.release()
                    w = target.pop(fut.key)
                    futures.pop(fut.key, None)
                    i = index.pop(fut.key)
                    arg.pop(i, None)
                    nxt = pick(w)
                    if nxt is not None:
                        running.add(submit(nxt, w))  # type: ignore[no-untyped-call]
                yield i, result
        finally:
            stop.set()


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
    -> (address, None). ``ValueError`` (a usage error: said before any
    work) for anything else: no port, a port that is not 1-65535, an IPv6
    address not in brackets (``tcp://[::1]:8786``), another scheme. ``tls://``
    (and ``wss://``) is refused: Dask needs certificates for it, which
    podnuma takes no option for (reach a remote scheduler with tcp:// over
    a private network or an SSH tunnel)."""
    if text == "local" or text.startswith("local:"):
        n: int | None = None
        if ":" in text:
            raw = text.split(":", 1)[1]
            if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_LOCAL_WORKERS:
                raise ValueError(f"--dask {text}: local:N needs a worker count from 1 to {MAX_LOCAL_WORKERS}")
            n = int(raw)
        return "local", n
    if "://" not in text:
        raise ValueError(f"--dask {text}: expected local, local:N or tcp://HOST:PORT")
    scheme, _, rest = text.partition("://")
    if scheme.lower() in ("tls", "wss"):
        raise ValueError(f"--dask {text}: {scheme}:// needs TLS certificates, which podnuma takes no "
                         "option for: give tcp://HOST:PORT (over a private network or an SSH tunnel)")
    if scheme != "tcp":
        raise ValueError(f"--dask {text}: expected local, local:N or tcp://HOST:PORT "
                         f"({scheme}:// is not supported)")
    problem = _tcp_address_problem(rest)
    if problem is not None:
        raise ValueError(f"--dask {text}: {problem} (expected tcp://HOST:PORT)")
    return text, None


#: a host name or IPv4 address in ``tcp://HOST:PORT``
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_PORT = re.compile(r"[0-9]{1,5}")


def _tcp_address_problem(rest: str) -> str | None:
    """What is wrong with ``HOST:PORT`` (after ``tcp://``), or None."""
    import ipaddress

    if rest.startswith("["):  # [IPv6]:PORT
        close = rest.find("]")
        if close < 0:
            return "the IPv6 address has no closing ']'"
        host, after = rest[1:close], rest[close + 1:]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return f"{host!r} is not an IPv6 address"
        if not after.startswith(":"):
            return "no port"
        port = after[1:]
    else:
        host, colon, port = rest.rpartition(":")
        if not colon:
            return "no port" if rest else "no host and no port"
        if ":" in host:
            return "an IPv6 address goes in brackets: tcp://[ADDRESS]:PORT"
        if not host:
            return "no host"
        if not _HOST.fullmatch(host):
            return f"{host!r} is not a host name or an IP address"
    if not port:
        return "no port"
    if not _PORT.fullmatch(port) or not 1 <= int(port) <= 65535:
        return f"the port {port!r} is not a number from 1 to 65535"
    return None


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

    from podnuma.fleet.daskimport import import_dask

    import_dask()
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


#: how often a routed map (:meth:`DaskExecutor._routed`) looks whether the
#: worker of each of its running tasks is still there
ROUTED_WATCH_S = 1.0

#: how often the client process asks the scheduler whether a worker is
#: there (``Client.wait_for_workers`` asks every 0.1 s: a local cluster's
#: forked workers register a few milliseconds after the scheduler starts,
#: and the tasks would wait up to a tenth of a second more for them)
WORKER_POLL_S = 0.005


def _first_worker(client: Any, cluster: Any) -> None:
    """Return once the scheduler has a worker (a question to it every
    :data:`WORKER_POLL_S`), for a cluster this process started, whose
    workers come up within a second; a running cluster's scheduler (remote,
    perhaps waiting for workers to be scaled up) is left to
    ``Client.wait_for_workers``'s slower questions."""
    import time

    if cluster is None:
        _worker_in_time(client)
        return
    while not client.nthreads():
        time.sleep(WORKER_POLL_S)


def _worker_in_time(client: Any) -> None:
    """Return once a running cluster's scheduler has a worker, waiting at
    most Dask's connect timeout (``distributed.comm.timeouts.connect``, 30 s
    unless set, as for reaching the scheduler): ``TimeoutError`` (an input
    error of ``--dask``) when none joined, not a run that waits for ever."""
    import dask
    from dask.utils import parse_timedelta

    timeout = parse_timedelta(dask.config.get("distributed.comm.timeouts.connect", "30s"))
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise TimeoutError(
            f"no worker joined the scheduler within {timeout:g} s (Dask's connect timeout: "
            "distributed.comm.timeouts.connect)"
        ) from None


def _connect(target: str) -> tuple[DaskExecutor, int]:
    """In the client process: the cluster reached (or started), once a
    worker can take a task; the executor and the workers' threads."""
    from podnuma.fleet.daskimport import import_dask

    import_dask(freeze=True, lean=True)  # this process lives for one run
    podscan.freeze_kept_pods()  # (and so do the workers forked from it)
    client, cluster = dask_client(target, fork=True)
    _first_worker(client, cluster)
    client.wait_for_workers(1)  # (at once now: what the client knows of the workers brought up to date)
    ex = DaskExecutor(client, owned=cluster,
                      threads=cluster.n if isinstance(cluster, ForkedCluster) else None)
    return ex, ex.parts // PARTS_PER_WORKER


class DaskProcess(_FollowsPods, Executor):
    """A Dask cluster behind a client process the command forks
    (:mod:`podnuma.fleet.daskproc`): this process runs the first tasks
    while that one comes up, keeps the pods of the dumps it indexed then
    and replays their nodes itself, beside the cluster (:data:`HERE`).
    ``pid``: the client process."""

    replays_here = True

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.pid: int = proc.pid
        self.client = proc.client
        self.parts = proc.parts
        self.runners = proc.threads
        self.holders = {}

    @property
    def ready(self) -> bool:
        return bool(self.proc.ready)

    def _map(self, fn: Callable[[_A], _R], args: Sequence[_A], done: Callable[[int], None] | None,
             where: Sequence[tuple[str | None, int]] | None,
             arrived: Callable[[int, _R], None] | None = None,
             alongside: Beside | None = None) -> list[_R]:
        try:
            return list(self.proc.map(fn, args, done, where, arrived, alongside))
        finally:
            # the workers counted once the cluster is there
            self.parts = self.proc.parts
            self.runners = self.proc.threads

    def run(self, fn: Callable[[], Any]) -> dict[str, Any]:
        """``fn()`` on every worker (``Client.run``)."""
        return dict(self.proc.run(fn))

    def wind_down(self) -> None:
        """Nothing more to run: the cluster closes while this process
        writes its report (:meth:`close` waits for it)."""
        self.proc.wind_down()

    def _release(self) -> None:
        # the client process lets go itself, once it has sent the results
        # (the report is not kept waiting for it)
        pass

    def close(self) -> None:
        try:
            self.proc.close()
        finally:  # the pods kept here for a replay that did not come let go too
            _let_go_here()


#: modules that both this process (YAML inputs) and Dask import: imported
#: here before the Dask client process is forked, they are imported once.
#: (numpy is Dask's only: this process matches the pod keys of the dumps
#: read on a cluster with plain sets, and forks that process sooner.)
SHARED_IMPORTS = ("yaml",)


def _import_shared() -> None:
    import importlib

    for name in SHARED_IMPORTS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


@contextlib.contextmanager
def open_executor(*, workers: int | None = None, dask_target: str | None = None) -> Iterator[Executor]:
    """The executor the options choose: a Dask cluster (``dask_target``:
    ``local[:N]`` or ``tcp://HOST:PORT``), ``workers`` local processes (more
    than one), else this process; closed on exit."""
    ex: Executor
    if dask_target is not None:
        from podnuma.fleet import daskproc

        where, n = parse_dask_target(dask_target)
        _import_shared()
        # Dask imported and the cluster reached by a process of its own (this
        # one runs the first tasks meanwhile) where forking is safe; else here
        proc = daskproc.start(dask_target, functools.partial(_connect, dask_target),
                              threads=(n or 2) if where == "local" else None,
                              parts_per_thread=PARTS_PER_WORKER)
        if proc is not None:
            ex = DaskProcess(proc)
        else:
            client, cluster = dask_client(dask_target, fork=True)
            if cluster is None:
                _worker_in_time(client)
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
