"""Topology-manager hint merging on an eight-NUMA-node machine.

Three providers (CPU, memory, devices) each offer every non-empty NUMA mask
(255 hints each, the single-node masks preferred): 255^3 = 16.6 million
permutations for the kubelet's literal walk. podnuma folds the same sequence
with memoisation and must return the walk's answer. Prints the time per
merge for each policy, with and without prefer-closest-numa-nodes. A
benchmark, not a test.

    python bench/bench_hint_merge.py [--repeat N]
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

NODES = 8
# Two sockets of four NUMA nodes: 10 local, 12 same socket, 32 remote.
DISTANCES = {
    i: [10 if i == j else (12 if i // 4 == j // 4 else 32) for j in range(NODES)]
    for i in range(NODES)
}


def provider(resource: str, preferred_width: int) -> dict[str, list[TopologyHint]]:
    hints = []
    for m in range(1, 1 << NODES):
        mask = BitMask.from_int(m)
        hints.append(TopologyHint(mask, mask.count() == preferred_width))
    return {resource: hints}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    providers = [
        provider("cpu", 1),
        provider("memory", 1),
        provider("example.com/gpu", 2),
    ]
    info = NUMAInfo.of(list(range(NODES)), DISTANCES)
    print(f"{NODES} NUMA nodes, 3 providers x 255 hints (16,581,375 permutations upstream)")
    for policy_name in ("best-effort", "restricted", "single-numa-node"):
        for closest in (False, True):
            opts = PolicyOptions(prefer_closest_numa=closest)
            policy = new_policy(policy_name, info, opts)
            times = []
            result = None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                result = policy.merge(providers)
                times.append(time.perf_counter() - t0)
            assert result is not None
            hint, admit = result
            nodes = None if hint.numa_node_affinity is None else hint.numa_node_affinity.bits()
            label = f"{policy_name}{' +prefer-closest' if closest else ''}"
            print(f"  {label:34s} median {statistics.median(times) * 1e3:8.1f} ms   "
                  f"-> {nodes} preferred={hint.preferred} admit={admit}")


if __name__ == "__main__":
    main()
