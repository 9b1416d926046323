"""The deep check: many seeded random scenarios through podnuma and the
kubelet oracle, in parallel processes, with the mismatches counted by area.

    python -m tests.oracle.deep --count 100000 [--seed S] [--start I] [--jobs N] [--batch 200]
                                [--oracle PATH] [--shrink]

Each job generates a batch, sends it through the oracle's multi-file mode
in one process, runs podnuma in-process and compares (checkpoint bytes for
every 10th scenario). ``--shrink`` shrinks up to 20 mismatches into
tests/oracle/regressions/.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.oracle import generate
from tests.oracle.harness import random_settings, run_both

ROOT = Path(__file__).resolve().parents[2]


def area(diff: str) -> str:
    """The engine area a difference belongs to."""
    path = diff.split(":", 1)[0]
    rules = (
        ("start-up error", "start-up"),
        ("outcome", "outcome (input/start-up)"),
        ("checkpoint file cpu", "CPU checkpoint bytes"),
        ("checkpoint file memory", "memory checkpoint bytes"),
        (".checkpoints.cpuManager", "CPU manager state"),
        (".checkpoints.memoryManager", "memory manager state"),
        (".memory", "memory manager"),
        (".mems", "memory manager"),
        (".devices", "device manager"),
        (".topologyHint", "topology manager"),
        (".cpus", "CPU manager"),
        ("defaultCpuSet", "CPU manager"),
        (".podAllocation", "pod-level allocation"),
        (".admitted", "admission"),
        (".reason", "admission"),
        (".message", "admission"),
        (".qosClass", "QoS"),
    )
    for needle, name in rules:
        if needle in path:
            return name
    return re.sub(r"\[\d+\]", "[]", path)


def _job(args: tuple[str, int, int, int]) -> tuple[int, list[tuple[str, Any, list[str]]], dict[str, int]]:
    binary, seed, start, n = args
    stats: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="oracle-deep-") as d:
        items = generate.scenarios(seed, n, Path(d), start=start, oracle=binary)
        return n, run_both(binary, items, Path(d), bytes_every=10, stats=stats), stats


def _binary(explicit: str | None) -> str:
    if explicit:
        return explicit
    if os.environ.get("PODNUMA_ORACLE"):
        return os.environ["PODNUMA_ORACLE"]
    proc = subprocess.run([str(ROOT / "oracle" / "build")], capture_output=True, text=True, check=True)
    return proc.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    seed0, _ = random_settings()
    ap = argparse.ArgumentParser(prog="python -m tests.oracle.deep", description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=seed0)
    ap.add_argument("--start", type=int, default=0, help="index of the first scenario (to resume a run)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--oracle", default=None)
    ap.add_argument("--shrink", action="store_true")
    opts = ap.parse_args(argv)
    binary = _binary(opts.oracle)
    print(f"kubelet oracle deep check: seed {opts.seed}, scenarios {opts.start}..{opts.start + opts.count - 1}, "
          f"{opts.jobs} jobs", flush=True)
    tasks = [
        (binary, opts.seed, opts.start + start, min(opts.batch, opts.count - start))
        for start in range(0, opts.count, opts.batch)
    ]
    t0 = time.monotonic()
    done = 0
    by_area: collections.Counter[str] = collections.Counter()
    mismatches: list[tuple[str, Any, list[str]]] = []
    totals: collections.Counter[str] = collections.Counter()
    with multiprocessing.Pool(opts.jobs) as pool:
        for n, found, stats in pool.imap_unordered(_job, tasks):
            done += n
            totals.update(stats)
            mismatches += found
            for _, _, diffs in found:
                by_area[area(diffs[0])] += 1
            print(f"\r{done}/{opts.count} scenarios, {len(mismatches)} mismatches", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    elapsed = time.monotonic() - t0
    print(f"scenarios run: {done} in {elapsed:.0f}s ({done / max(elapsed, 1e-9):.1f}/s)")
    print(f"sent to the oracle and compared: {totals['compared']} (checkpoint bytes compared for "
          f"{totals['bytes']})")
    print(f"slow lane (podnuma reports the picker's endless loop, or a merge walk over 2,000,000 "
          f"permutations): {totals['slow']}; answered and compared: {totals['slow_compared']}; "
          f"endless loops confirmed (no answer in time): {totals['livelock_confirmed']}; "
          f"unfinished in time (not compared): {totals['slow_unfinished']}")
    print(f"compared only up to a random device pick: {totals['device_pick']}; restored memory "
          f"checkpoints the kubelet accepts or refuses by Go map order: {totals['map_order_start']}")
    print(f"mismatches: {len(mismatches)}")
    for name, count in by_area.most_common():
        print(f"  {name}: {count}")
    for name, _, diffs in mismatches[:10]:
        print(f"- {name}: {diffs[0][:300]}")
    if opts.shrink and mismatches:
        from tests.oracle.shrink import oracle_mismatch, save_regression, shrink

        for name, doc, diffs in mismatches[:20]:
            path = save_regression(name, shrink(dict(doc), oracle_mismatch(binary, diffs)), diffs)
            print(f"shrunk: {path.relative_to(ROOT)}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
