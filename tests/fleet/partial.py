"""A small cluster dump with the partial inputs the fleet report must be
honest about: a node whose configz is known and which turns a pod away at
memory allocation (after its CPUs were chosen), a node with configz and
the CPU manager's ``none`` policy (a ``cpu-option`` what-if fails there),
a node with no configuration at all whose Node and NodeResourceTopology
contradict the kubelet's defaults, and a pod dumped twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

KNOWN, NONE, ASSUMED = "n-known", "n-none", "n-assumed"

#: 2 NUMA nodes x 4 cores x 2 threads, 8Gi each
MACHINE = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                         "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}}

KNOWN_CONFIG = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
    "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static",
    "kubeReserved": {"cpu": "1", "memory": "924Mi"}, "evictionHard": {"memory.available": "100Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
    "topologyManagerPolicy": "best-effort",
}
NONE_CONFIG = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
               "cpuManagerPolicy": "none"}


def pod(name: str, node: str, cpu: str, memory: str, second: int, uid: str | None = None) -> dict[str, Any]:
    res = {"cpu": cpu, "memory": memory}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "t", "uid": uid or f"uid-{name}",
                     "creationTimestamp": f"2026-01-01T00:00:{second:02d}Z"},
        "spec": {"nodeName": node, "containers": [
            {"name": "app", "resources": {"requests": res, "limits": dict(res)}}]},
        "status": {"phase": "Running", "startTime": f"2026-01-01T00:00:{second:02d}Z"},
    }


def _node(name: str, allocatable_cpu: str, allocatable_memory: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"pool": "p"}},
            "status": {"capacity": {"cpu": "16", "memory": "16Gi"},
                       "allocatable": {"cpu": allocatable_cpu, "memory": allocatable_memory}}}


def _nrt(name: str, policy: str) -> dict[str, Any]:
    zones = [{"name": f"node-{i}", "type": "Node",
              "costs": [{"name": "node-0", "value": 10 if i == 0 else 21},
                        {"name": "node-1", "value": 21 if i == 0 else 10}],
              "resources": [{"name": "cpu", "capacity": "8", "allocatable": "8", "available": "8"},
                            {"name": "memory", "capacity": str(8 << 30), "allocatable": str(8 << 30),
                             "available": str(8 << 30)}]} for i in (0, 1)]
    return {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
            "metadata": {"name": name},
            "attributes": [{"name": "topologyManagerPolicy", "value": policy},
                           {"name": "topologyManagerScope", "value": "container"}],
            "zones": zones}


def write_partial_fleet(d: Path) -> Path:
    """The dump, in ``d`` (created)."""
    (d / "configz").mkdir(parents=True)
    nodes = [_node(KNOWN, "15", "15360Mi"), _node(NONE, "16", "16284Mi"),
             _node(ASSUMED, "14", "14236Mi")]
    (d / "nodes.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    pods = [
        pod("a", KNOWN, "2", "1Gi", 1),
        pod("wide", KNOWN, "10", "1Gi", 2),  # spans both NUMA nodes (best-effort admits it)
        pod("big", KNOWN, "2", "20Gi", 3),  # no NUMA node has 20Gi: rejected by the memory manager
        pod("b", NONE, "2", "1Gi", 1),
        pod("c", ASSUMED, "2", "1Gi", 1),
    ]
    (d / "pods.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}))
    # a second dump (one node's pods) holding pod a again
    (d / "pods-n-known.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                                     "items": [pod("a", KNOWN, "2", "1Gi", 1)]}))
    (d / "noderesourcetopologies.json").write_text(json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [_nrt(ASSUMED, "single-numa-node")]}))
    (d / "configz" / f"{KNOWN}.json").write_text(json.dumps({"kubeletconfig": KNOWN_CONFIG}))
    (d / "configz" / f"{NONE}.json").write_text(json.dumps({"kubeletconfig": NONE_CONFIG}))
    (d / "fleet.yaml").write_text(yaml.safe_dump({
        "apiVersion": "podnuma.io/v1", "kind": "FleetConfig",
        "nodeGroups": [{"name": "machines", "selector": "pool=p", "node": MACHINE}],
    }))
    return d
