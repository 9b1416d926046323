"""Running the per-node replays: one process, local processes, or Dask.

The nodes are cut into partitions (nodes whose pods are in the same files
go together, so each pod file is read once per partition), and each
partition is replayed by :func:`podnuma.fleet.replay.replay_partition`.
Every node's result depends only on that node's inputs and the results are
put back in node-name order, so the report is the same whichever backend
ran it and however the nodes were cut.

* :func:`run_serial` - in this process;
* :func:`run_processes` - a pool of local worker processes;
* :func:`run_dask` - a Dask distributed cluster (a ``Client`` to a
  ``LocalCluster`` or to a scheduler at ``tcp://HOST:PORT``): one task per
  partition. A task whose worker dies is run again on another worker by the
  scheduler (``distributed.scheduler.allowed-failures``), and a task that
  raised is retried (``retries``); the result is the same. The files the
  nodes name (pod dumps, machine files) must be readable by the workers at
  the same paths, as for any Dask reader.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from podnuma.fleet.model import NodeSpec
from podnuma.fleet.replay import replay_partition
from podnuma.fleet.whatif import WhatIf

__all__ = ["partition", "run_serial", "run_processes", "run_dask", "parse_dask_target",
           "Progress", "run_fleet"]

Progress = Callable[[int], None]  # called with the number of nodes just finished
MAX_PARTITION = 500


def partition(nodes: Sequence[NodeSpec], parts_hint: int = 1) -> list[list[NodeSpec]]:
    """Nodes grouped by the pod files they need, cut into at most
    ``MAX_PARTITION`` nodes and about ``parts_hint`` partitions overall."""
    groups: dict[tuple[str, ...], list[NodeSpec]] = {}
    for n in nodes:
        groups.setdefault(n.pod_files, []).append(n)
    total = max(1, len(nodes))
    size = max(1, min(MAX_PARTITION, math.ceil(total / max(1, parts_hint))))
    out: list[list[NodeSpec]] = []
    for key in sorted(groups):
        g = sorted(groups[key], key=lambda s: s.name)
        for i in range(0, len(g), size):
            out.append(g[i: i + size])
    return out


def _ordered(results: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    flat = [r for part in results for r in part]
    return sorted(flat, key=lambda r: str(r["name"]))


def run_serial(
    nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], progress: Progress | None = None
) -> list[dict[str, Any]]:
    results: list[list[dict[str, Any]]] = []
    for part in partition(nodes, parts_hint=max(1, math.ceil(len(nodes) / 100))):
        results.append(replay_partition(part, what_ifs))
        if progress is not None:
            progress(len(part))
    return _ordered(results)


def run_processes(
    nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], workers: int,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    parts = partition(nodes, parts_hint=workers * 4)
    ctx = multiprocessing.get_context("spawn")
    results: list[list[dict[str, Any]]] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {pool.submit(replay_partition, p, tuple(what_ifs)): len(p) for p in parts}
        for fut in as_completed(futures):
            results.append(fut.result())
            if progress is not None:
                progress(futures[fut])
    return _ordered(results)


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
    from distributed import as_completed

    workers = max(1, len(client.scheduler_info().get("workers", {})))
    parts = partition(nodes, parts_hint=workers * 4)
    futures = [
        client.submit(replay_partition, p, tuple(what_ifs), key=f"podnuma-fleet-{i}-{p[0].name}",
                      retries=retries, pure=False)
        for i, p in enumerate(parts)
    ]
    sizes = {f.key: len(p) for f, p in zip(futures, parts, strict=True)}
    results: list[list[dict[str, Any]]] = []
    for fut in as_completed(futures):  # type: ignore[no-untyped-call]
        results.append(fut.result())
        if progress is not None:
            progress(sizes[fut.key])
    return _ordered(results)


def dask_client(target: str) -> tuple[Any, Any]:
    """A ``Client`` (and the ``LocalCluster`` it owns, or ``None``) for
    ``--dask TARGET``; the caller closes both."""
    import logging

    from distributed import Client, LocalCluster

    where, n = parse_dask_target(target)
    if where == "local":
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=n or 2, threads_per_worker=1, processes=True,
            # Loopback only: the scheduler, the workers and the HTTP endpoint.
            host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
        )
        return Client(cluster), cluster  # type: ignore[no-untyped-call]
    return Client(where, timeout=30), None  # type: ignore[no-untyped-call]


def run_fleet(
    nodes: Sequence[NodeSpec], what_ifs: Sequence[WhatIf], *, workers: int | None = None,
    dask_target: str | None = None, progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Replay ``nodes`` on the executor the options choose: a Dask cluster
    (``dask_target``: ``local[:N]`` or ``tcp://HOST:PORT``), ``workers``
    local processes (more than one), else this process."""
    if dask_target is not None:
        client, cluster = dask_client(dask_target)
        try:
            return run_dask(nodes, what_ifs, client, progress)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    if workers is not None and workers > 1:
        return run_processes(nodes, what_ifs, workers, progress)
    return run_serial(nodes, what_ifs, progress)
