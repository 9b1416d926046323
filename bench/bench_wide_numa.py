"""End-to-end admission on a 16-NUMA-node machine.

A synthetic node with 4 sockets x 4 NUMA nodes (sub-NUMA clustering),
4 cores of 2 threads per NUMA node (128 CPUs), 64Gi per NUMA node, and
topology-manager option ``max-allowable-numa-nodes: 16``. Static CPU and
Memory managers; for every topology policy, with and without
``prefer-closest-numa-nodes``, a Guaranteed pod (4 CPUs, 2Gi) is admitted
on the empty node, then a second one that must avoid the first one's NUMA
node, then a pod too large for one NUMA node (48 CPUs). Prints the time of
each admission (the first includes the per-node tables the managers build
once), in CPU time of this thread (steadier than the wall clock on a
shared machine); each node starts after the previous nodes' garbage is
collected. A benchmark, not a test.

    python bench/bench_wide_numa.py
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod_manifest import parse_pod

try:
    from podnuma.inputs.discover import load_node
except ImportError:  # trees before the inputs/ layout (before/after runs)
    from podnuma.machine.discover import load_node  # type: ignore[no-redef]
from podnuma.cm.container_manager import Node

NODES = 16
POLICIES = ("best-effort", "restricted", "single-numa-node")


def _distances() -> dict[int, list[int]]:
    return {
        i: [10 if i == j else (12 if i // 4 == j // 4 else 32) for j in range(NODES)]
        for i in range(NODES)
    }


def _pod(name: str, cpus: int, memory: str, gates: Any) -> Any:
    return parse_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
            "spec": {
                "containers": [
                    {"name": "app", "resources": {"limits": {"cpu": str(cpus), "memory": memory}}}
                ]
            },
        },
        gates=gates,
    )


def main() -> None:
    machine = load_node(
        {
            "synthetic": {
                "sockets": 4,
                "numaNodesPerSocket": 4,
                "coresPerNumaNode": 4,
                "threadsPerCore": 2,
                "memoryPerNumaNode": "64Gi",
                "distances": _distances(),
            }
        },
        base_dir=Path("."),
    )
    print(f"{NODES} NUMA nodes, {machine.topology.num_cpus} CPUs; static CPU + Static memory")
    for policy in POLICIES:
        for closest in (False, True):
            options = {"max-allowable-numa-nodes": "16"}
            if closest:
                options["prefer-closest-numa-nodes"] = "true"
            config = load_kubelet_config(
                {
                    "cpuManagerPolicy": "static",
                    "reservedSystemCPUs": "0",
                    "memoryManagerPolicy": "Static",
                    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
                    "topologyManagerPolicy": policy,
                    "topologyManagerPolicyOptions": options,
                }
            )
            # the previous nodes' garbage is collected before this one is
            # timed (as bench_admission.py does between its runs)
            gc.collect()
            node = Node(machine, config)
            gates = config.feature_gates
            cells = []
            for i, (cpus, mem) in enumerate(((4, "2Gi"), (4, "2Gi"), (48, "96Gi"))):
                pod = _pod(f"p{i}", cpus, mem, gates)
                t0 = time.thread_time()
                result = node.add_pod(pod, i)
                ms = (time.thread_time() - t0) * 1e3
                hint = result.containers[0].topology_hint if result.admitted else None
                nodes = None if hint is None or hint.numa_node_affinity is None else hint.numa_node_affinity.bits()
                cells.append(f"{ms:7.1f} ms {'ok ' if result.admitted else 'rej'} {nodes}")
            label = f"{policy}{' +closest' if closest else ''}"
            print(f"  {label:26s} " + " | ".join(cells))


if __name__ == "__main__":
    main()
