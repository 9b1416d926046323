"""Topology-manager hint merging on a machine with N NUMA nodes (default 8).

Three providers (CPU, memory, devices) each offer every non-empty NUMA mask
(2^N - 1 hints each; CPU and memory prefer the single-node masks, the device
the two-node ones): (2^N - 1)^3 permutations for the kubelet's literal walk
(16.6 million at 8 nodes, 2.8e14 at 16). podnuma must return the walk's
answer. Prints the time per merge for each policy, with and without
prefer-closest-numa-nodes, by wall clock and by this thread's CPU time
(steadier on a shared machine). A benchmark, not a test.

    python bench/bench_hint_merge.py [--nodes N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time

from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.new_manager import new_policy
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy_options import PolicyOptions


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
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
    for policy_name in ("best-effort", "restricted", "single-numa-node"):
        for closest in (False, True):
            opts = PolicyOptions(prefer_closest_numa=closest)
            policy = new_policy(policy_name, info, opts)
            times = []
            cpu = []
            result = None
            for _ in range(args.repeat):
                c0, t0 = time.thread_time(), time.perf_counter()
                result = policy.merge(providers)
                times.append(time.perf_counter() - t0)
                cpu.append(time.thread_time() - c0)
            assert result is not None
            hint, admit = result
            nodes = None if hint.numa_node_affinity is None else hint.numa_node_affinity.bits()
            label = f"{policy_name}{' +prefer-closest' if closest else ''}"
            print(f"  {label:34s} median {statistics.median(times) * 1e3:8.1f} ms "
                  f"(CPU {statistics.median(cpu) * 1e3:8.1f} ms)   "
                  f"-> {nodes} preferred={hint.preferred} admit={admit}")


if __name__ == "__main__":
    main()
