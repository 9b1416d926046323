"""Fleet analysis throughput: one process vs a 2-worker Dask LocalCluster.

Generates a synthetic fleet (``podnuma fleet generate``: N nodes x M pods,
the dumps a real cluster gives), then times ``fleet analyze`` on it:

1. single process (run in a child process, so that its peak RSS is its own);
2. a Dask ``LocalCluster`` of W worker processes (one thread each),
   partitioned by node.

Prints wall time, nodes and pods per second, peak memory (the child's
peak RSS; for Dask, the client's and each worker's peak RSS) and the
scaling ratio (single-process time / Dask time), and checks that both runs
produced the same report. A benchmark, not a test: it asserts nothing about
time. The issue's full size is ``--nodes 10000 --pods-per-node 100``.

    python bench/bench_fleet.py [--nodes N] [--pods-per-node M] [--workers W]
                                [--what-if pod-level] [--dir DIR] [--skip-serial]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import json, sys, time
from pathlib import Path
from podnuma.fleet.execute import run_serial
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.report import fleet_report
from podnuma.fleet.whatif import parse_what_if
w = [parse_what_if(x) for x in json.loads(sys.argv[2])]
t = time.perf_counter()
fleet = load_fleet([Path(sys.argv[1])])
rep = fleet_report(fleet, run_serial(fleet.nodes, w), [x.label for x in w])
dt = time.perf_counter() - t
Path(sys.argv[3]).write_text(json.dumps(rep, sort_keys=True))
print(dt)
"""


def _mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def _worker_usage() -> tuple[int, float]:
    """Peak RSS (KiB) and CPU seconds of this (worker) process."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_maxrss, u.ru_utime + u.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods-per-node", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--what-if", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=None, help="reuse (or keep) the generated fleet here")
    ap.add_argument("--skip-serial", action="store_true")
    args = ap.parse_args()

    from podnuma.fleet.generate import generate_fleet

    tmp = tempfile.TemporaryDirectory(prefix="bench-fleet-")
    d = args.dir or Path(tmp.name) / "fleet"
    if not (d / "nodes.json").exists():
        t = time.perf_counter()
        g = generate_fleet(d, nodes=args.nodes, pods_per_node=args.pods_per_node, seed=args.seed)
        size = sum(p.stat().st_size for p in d.rglob("*") if p.is_file())
        print(f"generated {g.nodes} nodes, {g.pods} pods, {g.files} files, {size / 2**20:.0f} MiB "
              f"in {time.perf_counter() - t:.1f} s")
    pods = args.nodes * args.pods_per_node
    try:
        from podnuma import engine_build
    except ImportError:  # trees before the optional compiled build
        build = "pure Python"
    else:
        build = engine_build()
    print(f"engine: {build}")
    print(f"fleet: {args.nodes} nodes x {args.pods_per_node} pods = {pods} pods; "
          f"what-ifs: {args.what_if or 'none'}; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")

    serial_doc: str | None = None
    serial_time: float | None = None
    if not args.skip_serial:
        out = Path(tmp.name) / "serial.json"
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        before = ru0.ru_maxrss
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", _CHILD, str(d), json.dumps(args.what_if), str(out)],
                           check=True, capture_output=True, text=True)
        serial_time = time.perf_counter() - t
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        peak = ru1.ru_maxrss
        serial_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        inner = float(r.stdout.strip().splitlines()[-1])
        print(f"single process: {serial_time:.1f} s wall ({inner:.1f} s in analysis), "
              f"{serial_cpu:.1f} CPU s, {args.nodes / inner:.1f} nodes/s, {pods / inner:.0f} pods/s, "
              f"peak RSS {_mib(max(peak, before))}")
        serial_doc = out.read_text()

    import logging

    from distributed import Client, LocalCluster

    from podnuma.fleet.execute import run_dask
    from podnuma.fleet.inputs import load_fleet
    from podnuma.fleet.report import fleet_report
    from podnuma.fleet.whatif import parse_what_if

    w = [parse_what_if(x) for x in args.what_if]
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
    client = Client(cluster)
    try:
        t = time.perf_counter()
        fleet = load_fleet([d])
        rep = fleet_report(fleet, run_dask(fleet.nodes, w, client), [x.label for x in w])
        dask_time = time.perf_counter() - t
        worker_usage = client.run(_worker_usage)
    finally:
        client.close()
        cluster.close()
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    worker_cpu = sum(v[1] for v in worker_usage.values())
    print(f"dask LocalCluster, {args.workers} workers: {dask_time:.1f} s wall, "
          f"{worker_cpu:.1f} CPU s in workers, "
          f"{args.nodes / dask_time:.1f} nodes/s, {pods / dask_time:.0f} pods/s, "
          f"peak RSS client {_mib(client_peak)}, workers "
          + ", ".join(_mib(v[0]) for v in sorted(worker_usage.values())))
    if serial_doc is not None and serial_time is not None:
        same = json.dumps(rep, sort_keys=True) == serial_doc
        print(f"scaling ratio (single wall / dask wall): {serial_time / dask_time:.2f}; "
              f"identical reports: {same}")
        if serial_cpu > 0:
            print(f"CPU-time overhead of the distributed run (worker CPU s / single CPU s): "
                  f"{worker_cpu / serial_cpu:.2f}")


if __name__ == "__main__":
    main()
