"""What one Dask task costs on the cluster ``--dask local:N`` starts.

A fleet run on a forked local cluster (:mod:`podnuma.fleet.forked`) sends
a few dozen tasks; each costs CPU in the Dask client process (its client
and the scheduler) and in the workers beyond the work it does. This bench
starts that cluster as the command does, sends ``--tasks`` tasks through
the executor the command uses (:class:`podnuma.fleet.execute.DaskExecutor`,
a window of tasks in flight, results gathered as they finish), each
returning ``--result-bytes`` bytes (``bytes(n)``: no work of its own), and
prints the CPU milliseconds per task of the client process and of all
the workers together, and the wall time. ``--rounds`` repeats it, each
round in a fresh interpreter (a process that has run a cluster's threads
forks no more workers), and prints the medians.

    python bench/bench_dask_tasks.py [--workers 2] [--tasks 200] [--result-bytes 60000] [--rounds 3]

A benchmark, not a test: it asserts nothing about time. Run it with
``PYTHONPATH`` set to another tree's ``src`` to compare two trees.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one_round(workers: int, tasks: int, size: int) -> tuple[float, float, float]:
    """(client process ms/task, workers ms/task, wall s) of one cluster."""
    from podnuma.fleet import execute, forked

    cluster = forked.start(workers, execute.CLUSTER_CONFIG, execute.WORKER_PRELOAD)
    if cluster is None:
        raise SystemExit("forking is not possible here")
    ex = execute.DaskExecutor(cluster.client, owned=cluster, threads=workers)
    try:
        execute._first_worker(cluster.client, cluster)
        while len(cluster.client.nthreads()) < workers:
            time.sleep(0.005)
        list(ex.each(bytes, [size] * 10))  # (the first tasks fill caches)
        w0 = cluster.client.run(_cpu)
        c0, t0 = _cpu(), time.perf_counter()
        list(ex.each(bytes, [size] * tasks))
        wall, c1 = time.perf_counter() - t0, _cpu()
        w1 = cluster.client.run(_cpu)
    finally:
        ex.close()
    return 1000 * (c1 - c0) / tasks, 1000 * sum(w1[k] - w0[k] for k in w1) / tasks, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--result-bytes", type=int, default=60_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        from podnuma.fleet.daskimport import import_dask

        import_dask(freeze=True, lean=True)  # as the Dask client process imports it
        print(json.dumps(one_round(args.workers, args.tasks, args.result_bytes)))
        return
    rows = []
    for r in range(args.rounds):
        out = subprocess.run([sys.executable, __file__, "--one", "--workers", str(args.workers),
                              "--tasks", str(args.tasks), "--result-bytes", str(args.result_bytes)],
                             capture_output=True, text=True, check=True).stdout
        client, workers, wall = json.loads(out.splitlines()[-1])
        rows.append((client, workers, wall))
        print(f"[{r + 1}] {args.tasks} tasks of {args.result_bytes} result bytes on {args.workers} workers: "
              f"client process {client:.2f} ms CPU/task, workers {workers:.2f} ms CPU/task, {wall:.2f} s wall")
    print(f"median: client process {statistics.median(r[0] for r in rows):.2f} ms/task, "
          f"workers {statistics.median(r[1] for r in rows):.2f} ms/task, "
          f"wall {statistics.median(r[2] for r in rows):.2f} s")


if __name__ == "__main__":
    main()
