"""Admission throughput of the CPU manager path.

A synthetic two-socket node with eight NUMA nodes and 256 logical CPUs
(2 sockets x 4 NUMA nodes x 16 cores x 2 threads), CPU manager policy
``static``. 1,000 Guaranteed pods of mixed sizes arrive one after another;
when the next pod would not fit, the oldest running pods are removed first,
so the node stays busy and fragmented. At the end every pod is removed.

Prints pods admitted per second, the median and 99th percentile admission
time, and the removal rate. A benchmark, not a test: it asserts nothing
about time.

    python bench/bench_admission.py [--pods N] [--topology-policy POLICY] [--memory-static]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import deque
from pathlib import Path

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod import parse_pod
from podnuma.inputs.discover import load_node
from podnuma.node import Node

SIZES = (1, 2, 4, 8, 3, 16, 2, 6, 1, 12)


def _pod(i: int, cpus: int, gates: object) -> object:
    doc = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{i}", "namespace": "bench", "uid": f"uid-{i:05d}"},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "resources": {"limits": {"cpu": str(cpus), "memory": "1Gi"}},
                }
            ]
        },
    }
    return parse_pod(doc, gates=gates)  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--topology-policy", default="none")
    ap.add_argument("--cpu-options", default="", help="e.g. full-pcpus-only=true")
    ap.add_argument(
        "--memory-static", action="store_true", help="memory manager policy Static"
    )
    args = ap.parse_args()

    machine = load_node(
        {
            "synthetic": {
                "sockets": 2,
                "numaNodesPerSocket": 4,
                "coresPerNumaNode": 16,
                "threadsPerCore": 2,
                "memoryPerNumaNode": "256Gi",
            }
        },
        base_dir=Path("."),
    )
    options = dict(kv.split("=", 1) for kv in args.cpu_options.split(",") if kv)
    config = load_kubelet_config(
        {
            "cpuManagerPolicy": "static",
            "cpuManagerPolicyOptions": options,
            "reservedSystemCPUs": "0,128",
            "topologyManagerPolicy": args.topology_policy,
            **(
                {
                    "memoryManagerPolicy": "Static",
                    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
                }
                if args.memory_static
                else {}
            ),
        }
    )
    node = Node(machine, config)
    pods = [_pod(i, SIZES[i % len(SIZES)], config.feature_gates) for i in range(args.pods)]
    free = machine.topology.num_cpus - 2
    running: deque[tuple[str, int]] = deque()

    admit_times: list[float] = []
    remove_times: list[float] = []
    admitted = rejected = 0
    step = 0
    t_all = time.perf_counter()
    for i, pod in enumerate(pods):
        size = SIZES[i % len(SIZES)]
        while free < size and running:
            ref, n = running.popleft()
            t0 = time.perf_counter()
            node.remove_pod(ref, step)
            remove_times.append(time.perf_counter() - t0)
            free += n
            step += 1
        t0 = time.perf_counter()
        result = node.add_pod(pod, step)  # type: ignore[arg-type]
        admit_times.append(time.perf_counter() - t0)
        step += 1
        if result.admitted:
            admitted += 1
            running.append((result.pod_uid, size))
            free -= size
        else:
            rejected += 1
    while running:
        ref, _ = running.popleft()
        t0 = time.perf_counter()
        node.remove_pod(ref, step)
        remove_times.append(time.perf_counter() - t0)
        step += 1
    total = time.perf_counter() - t_all

    admit_total = sum(admit_times)
    q = statistics.quantiles(admit_times, n=100)
    print(
        f"node: 256 CPUs, 2 sockets, 8 NUMA nodes; topology policy {args.topology_policy}; "
        f"memory manager {'Static' if args.memory_static else 'None'}"
    )
    print(f"pods: {len(pods)} added ({admitted} admitted, {rejected} rejected), all removed")
    print(f"admission: {len(pods) / admit_total:,.0f} pods/s, "
          f"median {statistics.median(admit_times) * 1e6:,.0f} us, "
          f"p99 {q[98] * 1e6:,.0f} us")
    print(f"removal: {len(remove_times) / sum(remove_times):,.0f} pods/s, "
          f"median {statistics.median(remove_times) * 1e6:,.0f} us")
    print(f"wall time: {total:.2f} s for {step} steps")


if __name__ == "__main__":
    main()
