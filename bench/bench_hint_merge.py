"""Topology-manager hint merging on a machine with N NUMA nodes (default 8).

Three providers (CPU, memory, devices) each offer every non-empty NUMA mask
(2^N - 1 hints each; CPU and memory prefer the single-node masks, the device
the two-node ones): (2^N - 1)^3 permutations for the kubelet's literal walk
(16.6 million at 8 nodes, 2.8e14 at 16). podnuma must return the walk's
answer. Prints the time per merge for each policy, with and without
prefer-closest-numa-nodes, by wall clock and by this thread's CPU time
(steadier on a shared machine). A benchmark, not a test.

Next to it, up to ``KUBELET_WALK_MAX_NODES`` nodes, the kubelet's own merge
(``kubelet-oracle merge --repeat``, the real walk, wall clock) on the same
hints, the ratio of the two wall times, and whether the answers agree. The
binary is ``$PODNUMA_ORACLE`` or ``oracle/bin/kubelet-oracle`` (built by
``oracle/build``); without it one line says so.

    python bench/bench_hint_merge.py [--nodes N] [--repeat R] [--kubelet-repeat K] [--no-kubelet]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.new_manager import new_policy
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy_options import PolicyOptions

ROOT = Path(__file__).resolve().parents[1]
# (2^8 - 1)^3 = 16.6 million permutations take the kubelet seconds per
# merge; (2^9 - 1)^3 = 133 million would take minutes.
KUBELET_WALK_MAX_NODES = 8


def distances(nodes: int) -> dict[int, list[int]]:
    """Sockets of four NUMA nodes: 10 local, 12 same socket, 32 remote."""
    return {
        i: [10 if i == j else (12 if i // 4 == j // 4 else 32) for j in range(nodes)]
        for i in range(nodes)
    }


def provider(nodes: int, resource: str, preferred_width: int) -> dict[str, list[TopologyHint]]:
    hints = []
    for m in range(1, 1 << nodes):
        mask = BitMask.from_int(m)
        hints.append(TopologyHint(mask, mask.count() == preferred_width))
    return {resource: hints}


def oracle_binary() -> str | None:
    path = os.environ.get("PODNUMA_ORACLE") or str(ROOT / "oracle" / "bin" / "kubelet-oracle")
    return path if os.access(path, os.X_OK) else None


def kubelet_request(
    n: int, policy: str, closest: bool, providers: list[dict[str, list[TopologyHint]]]
) -> dict[str, Any]:
    """A ``kubelet-oracle merge`` request for the same machine and hints."""
    options = {"prefer-closest-numa-nodes": str(closest).lower()}
    if n > 8:
        options["max-allowable-numa-nodes"] = str(n)
    rows = distances(n)
    return {
        "numaNodes": list(range(n)),
        "distances": [rows[i] for i in range(n)],
        "policy": policy,
        "options": options,
        "providersHints": [
            {res: [h.to_json() for h in hints] for res, hints in p.items()} for p in providers
        ],
    }


def kubelet_merges(binary: str, requests: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """The kubelet's answers and median seconds per merge, in request order."""
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    proc = subprocess.run(
        [binary, "merge", "--repeat", str(repeat)],
        input=stdin, capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"kubelet-oracle merge failed: {proc.stderr.strip()}")
    return [json.loads(line) for line in proc.stdout.splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--kubelet-repeat", type=int, default=None,
                    help="merges per configuration for the kubelet's walk "
                         "(default: --repeat below a million permutations, else 1)")
    ap.add_argument("--no-kubelet", action="store_true", help="skip the kubelet's walk")
    args = ap.parse_args()
    n = args.nodes
    providers = [
        provider(n, "cpu", 1),
        provider(n, "memory", 1),
        provider(n, "example.com/gpu", 2),
    ]
    info = NUMAInfo.of(list(range(n)), distances(n))
    width = (1 << n) - 1
    print(f"{n} NUMA nodes, 3 providers x {width:,} hints "
          f"({width**3:,} permutations upstream)")
    configs = [(p, c) for p in ("best-effort", "restricted", "single-numa-node") for c in (False, True)]
    ours: list[tuple[float, float, float, dict[str, Any]]] = []
    for policy_name, closest in configs:
        opts = PolicyOptions(prefer_closest_numa=closest)
        policy = new_policy(policy_name, info, opts)
        times = []
        cpu = []
        result = None
        for _ in range(args.repeat):
            # the previous merge's garbage is collected before the timer
            # starts, not inside the next merge (as bench_admission does)
            gc.collect()
            c0, t0 = time.thread_time(), time.perf_counter()
            result = policy.merge(providers)
            times.append(time.perf_counter() - t0)
            cpu.append(time.thread_time() - c0)
        assert result is not None
        hint, admit = result
        ours.append((statistics.median(times), statistics.median(cpu), max(times),
                     {**hint.to_json(), "admit": admit}))

    kubelet: list[dict[str, Any]] | None = None
    binary = oracle_binary()
    if args.no_kubelet:
        pass
    elif n > KUBELET_WALK_MAX_NODES:
        print(f"kubelet merge: not run ({width**3:,} permutations per merge; "
              f"the walk is timed up to {KUBELET_WALK_MAX_NODES} nodes)")
    elif binary is None:
        print("kubelet merge: not run (no kubelet-oracle: build it with oracle/build "
              "or set PODNUMA_ORACLE)")
    else:
        kubelet_repeat = args.kubelet_repeat or (args.repeat if width**3 < 1_000_000 else 1)
        print(f"kubelet merge: {binary} merge --repeat {kubelet_repeat} ...",
              file=sys.stderr, flush=True)
        requests = [kubelet_request(n, p, c, providers) for p, c in configs]
        kubelet = kubelet_merges(binary, requests, kubelet_repeat)

    for i, (policy_name, closest) in enumerate(configs):
        wall, cpu_s, slowest, answer = ours[i]
        label = f"{policy_name}{' +prefer-closest' if closest else ''}"
        line = (f"  {label:34s} median {wall * 1e3:8.1f} ms (CPU {cpu_s * 1e3:8.1f} ms, "
                f"slowest {slowest * 1e3:8.1f} ms)   "
                f"-> {answer['numaNodes']} preferred={answer['preferred']} admit={answer['admit']}")
        if kubelet is not None:
            theirs = kubelet[i]
            seconds = theirs.pop("seconds")
            same = "same answer" if theirs == answer else f"DIFFERENT: kubelet {theirs}"
            ratio = "-" if wall <= 0 else (
                f"{seconds / wall:,.0f}x" if seconds >= 10 * wall else f"{seconds / wall:.2f}x"
            )
            line += f"\n  {'':34s} kubelet {seconds * 1e3:10.1f} ms  kubelet/podnuma {ratio}  ({same})"
        print(line)


if __name__ == "__main__":
    main()
