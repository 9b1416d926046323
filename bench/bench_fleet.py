"""Fleet analysis throughput: ``podnuma fleet analyze`` as a user runs it,
in one process and on a 2-worker Dask LocalCluster.

Generates a synthetic fleet (``podnuma fleet generate``: N nodes x M pods,
the dumps a real cluster gives) unless ``--dir`` holds one, then runs
``podnuma fleet analyze DIR -o json --output-file ...`` in a child process:

1. one process (no executor option);
2. ``--dask local:W``: a Dask ``LocalCluster`` of W worker processes (one
   thread each), started by the command: the workers read and index the
   dumps and replay the nodes, the command only assembles and reports.

For each: the wall time of the whole command (start-up, reading, replay,
report; the cluster's start included), the CPU seconds of the command and
all its processes, pods per second of wall and of CPU, and the peak of the
summed resident memory of the command's process tree (sampled every 0.1 s
with psutil: the client, the scheduler, the nannies and the workers). Then
the ratio of the one-process wall time to the Dask wall time, and whether
the two reports are byte-identical. A benchmark, not a test: it asserts
nothing about time. On a busy machine the wall figures are what the
machine gave; the CPU figures say what the work costs. The issue's full
size is ``--nodes 10000 --pods-per-node 100``.

    python bench/bench_fleet.py [--nodes N] [--pods-per-node M] [--workers W]
                                [--what-if pod-level] [--dir DIR] [--skip-serial] [--skip-dask]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (the process and its descendants) and the
    peak of the summed RSS of its process tree (bytes)."""
    import psutil  # type: ignore[import-untyped]

    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    top = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        total = 0
        try:
            procs = [top, *top.children(recursive=True)]
        except psutil.Error:
            procs = []
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        peak = max(peak, total)
        time.sleep(0.1)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err}")
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    return wall, cpu, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods-per-node", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--what-if", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=None, help="reuse (or keep) the generated fleet here")
    ap.add_argument("--skip-serial", action="store_true")
    ap.add_argument("--skip-dask", action="store_true")
    args = ap.parse_args()

    from podnuma.fleet.generate import generate_fleet

    tmp = tempfile.TemporaryDirectory(prefix="bench-fleet-")
    d = args.dir or Path(tmp.name) / "fleet"
    if not (d / "nodes.json").exists():
        t = time.perf_counter()
        g = generate_fleet(d, nodes=args.nodes, pods_per_node=args.pods_per_node, seed=args.seed)
        print(f"generated {g.nodes} nodes, {g.pods} pods, {g.files} files in {time.perf_counter() - t:.1f} s")
    size = sum(p.stat().st_size for p in d.rglob("*") if p.is_file())
    pods = args.nodes * args.pods_per_node
    try:
        from podnuma import engine_build
    except ImportError:  # trees before the optional compiled build
        build = "pure Python"
    else:
        build = engine_build()
    print(f"engine: {build}")
    print(f"fleet: {args.nodes} nodes x {args.pods_per_node} pods = {pods} pods, {size / 2**20:.0f} MiB "
          f"of dumps; what-ifs: {args.what_if or 'none'}; {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")

    base = [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(d), "-o", "json"]
    for w in args.what_if:
        base += ["--what-if", w]
    modes: list[tuple[str, list[str]]] = []
    if not args.skip_serial:
        modes.append(("one process", []))
    if not args.skip_dask:
        modes.append((f"dask local:{args.workers}", ["--dask", f"local:{args.workers}"]))
    walls: dict[str, float] = {}
    docs: dict[str, bytes] = {}
    for name, extra in modes:
        out = Path(tmp.name) / f"{len(docs)}.json"
        wall, cpu, peak = _run([*base, *extra, "--output-file", str(out)])
        walls[name] = wall
        docs[name] = out.read_bytes()
        print(f"{name:16} {wall:7.1f} s wall {pods / wall:8.0f} pods/s | {cpu:7.1f} CPU s "
              f"{pods / cpu:8.0f} pods/CPU-s | peak RSS (sum) {peak / 2**20:6.0f} MiB "
              f"| load {os.getloadavg()[0]:.1f}")
    if len(walls) == 2:
        (a, ta), (b, tb) = walls.items()
        print(f"ratio {a} wall / {b} wall: {ta / tb:.2f}; "
              f"byte-identical reports: {docs[a] == docs[b]}")


if __name__ == "__main__":
    main()
