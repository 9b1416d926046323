"""Machines read from a copy of ``/sys``, replayed by podnuma and by the
kubelet's own code (cadvisor's ``GetNodesInfo`` under the oracle):

- the machine's memory is ``MemTotal`` of the ``proc/meminfo`` beside the
  tree, not the sum of the NUMA nodes' memory, and it sizes node
  allocatable (a pod that fits the nodes' sum but not the machine's memory
  is refused by the kubelet);
- a tree without NUMA node directories whose CPUs give ``-1`` as their
  package (an arm64 kernel that cannot tell it) has one NUMA node, ``-1``.
  The kubelet runs on it under the ``none`` topology policy, and panics
  admitting pods wherever it makes a hint mask of the machine's NUMA ids:
  podnuma reports the same panic, in the same upstream function, as a
  rejection (``KubeletPanic``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.oracle.harness import compare, run_oracle, run_podnuma

HEADER = {"apiVersion": "podnuma.io/v1", "kind": "Scenario"}


def _tree(root: Path, packages: dict[int, int], nodes: dict[int, list[int]] | None, memtotal_kb: int | None) -> Path:
    """A root holding ``sys/`` (CPUs with core id cpu % 4 and the given
    packages; NUMA directories when ``nodes`` is given, 8 GiB each) and,
    with ``memtotal_kb``, ``proc/meminfo``. Returns the ``sys`` directory."""
    sys_root = root / "sys"
    cpu_root = sys_root / "devices" / "system" / "cpu"
    for cpu, package in packages.items():
        topo = cpu_root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu % 4}\n")
        (topo / "physical_package_id").write_text(f"{package}\n")
    (cpu_root / "online").write_text(f"0-{max(packages)}\n")
    for nid, cpus in (nodes or {}).items():
        node_dir = sys_root / "devices" / "system" / "node" / f"node{nid}"
        node_dir.mkdir(parents=True)
        for cpu in cpus:
            (node_dir / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
        (node_dir / "meminfo").write_text(f"Node {nid} MemTotal:       8388608 kB\n")
        (node_dir / "distance").write_text(" ".join("10" if n == nid else "20" for n in nodes or {}) + "\n")
    if memtotal_kb is not None:
        (root / "proc").mkdir()
        (root / "proc" / "meminfo").write_text(f"MemTotal:       {memtotal_kb} kB\nMemFree:        1024 kB\n")
    return sys_root


def _pod(name: str, limits: dict[str, str], requests: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"limits": limits}
    if requests is not None:
        resources["requests"] = requests
    return {"addPod": {"metadata": {"name": name, "namespace": "shop"},
                       "spec": {"containers": [{"name": "app", "resources": resources}]}}}


def _run(binary: str, tmp_path: Path, node: dict[str, Any], config: dict[str, Any],
         steps: list[dict[str, Any]]) -> tuple[Any, Any]:
    doc = {**HEADER, "node": node, "kubeletConfig": config, "steps": steps}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    mine, theirs = run_podnuma(path), run_oracle(binary, [path])[0]
    assert compare(mine, theirs, doc) == []
    return mine, theirs


def test_machine_memory_is_memtotal_beside_the_tree(oracle_binary: str, tmp_path: Path) -> None:
    """Two NUMA nodes of 8 GiB, a machine of 10 GiB: a 12 GiB pod fits the
    nodes' sum but not the machine, a 6 GiB one fits both."""
    sys_root = _tree(tmp_path / "root", {c: 0 for c in range(8)}, {0: [0, 1, 2, 3], 1: [4, 5, 6, 7]},
                     10 * 1024 * 1024)
    mine, theirs = _run(oracle_binary, tmp_path, {"name": "worker", "sysfs": str(sys_root)}, {},
                        [_pod("big", {"cpu": "1", "memory": "12Gi"}), _pod("small", {"cpu": "1", "memory": "6Gi"})])
    assert mine.kind == theirs.kind == "ok"
    admitted = [(st["pod"], st["admitted"], st["reason"]) for st in theirs.doc["steps"]]
    assert admitted == [("shop/big", False, "OutOfmemory"), ("shop/small", True, None)]


def test_meminfo_without_memtotal_is_refused(oracle_binary: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    sys_root = _tree(root, {c: 0 for c in range(4)}, {0: [0, 1, 2, 3]}, None)
    (root / "proc").mkdir()
    (root / "proc" / "meminfo").write_text("MemFree: 1024 kB\n")
    doc = {**HEADER, "node": {"name": "worker", "sysfs": str(sys_root)}, "steps": []}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc))
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert mine.kind != "ok" and theirs.kind != "ok"
    assert "MemTotal" in mine.message and "MemTotal" in theirs.message


#: (CPU manager policy, topology manager policy, scope, memory manager
#: policy, the pod's limits, its requests): where the kubelet panics, and
#: the set-ups where it admits the pod (no hint policy, no Static memory manager)
CASES = [
    ("static", "single-numa-node", "container", "None", {"cpu": "2", "memory": "1Gi"}, None),
    ("static", "best-effort", "pod", "None", {"cpu": "2", "memory": "1Gi"}, None),
    ("none", "single-numa-node", "container", "None", {"cpu": "2", "memory": "1Gi"}, None),
    ("static", "restricted", "container", "None", {"cpu": "1500m", "memory": "1Gi"}, None),
    ("static", "best-effort", "container", "None", {"cpu": "2", "memory": "1Gi"}, {"cpu": "1", "memory": "512Mi"}),
    ("none", "best-effort", "container", "Static", {"cpu": "2", "memory": "1Gi"}, None),
    ("static", "none", "container", "Static", {"cpu": "2", "memory": "1Gi"}, None),
    ("none", "best-effort", "container", "None", {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"}, None),
    ("none", "restricted", "container", "None", {"cpu": "1", "memory": "1Gi", "example.com/nic": "1"}, None),
    ("none", "none", "container", "None", {"cpu": "1", "memory": "1Gi", "example.com/nic": "1"}, None),
    ("static", "none", "container", "None", {"cpu": "2", "memory": "1Gi"}, None),
]


@pytest.mark.parametrize(("cpu", "topology", "scope", "memory", "limits", "requests"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{i}" for i, c in enumerate(CASES)])
def test_numa_node_minus_one(oracle_binary: str, tmp_path: Path, cpu: str, topology: str, scope: str,
                             memory: str, limits: dict[str, str], requests: dict[str, str] | None) -> None:
    sys_root = _tree(tmp_path / "root", {c: -1 for c in range(4)}, None, 8 * 1024 * 1024)
    config: dict[str, Any] = {"cpuManagerPolicy": cpu, "topologyManagerPolicy": topology,
                              "topologyManagerScope": scope, "memoryManagerPolicy": memory,
                              "reservedSystemCPUs": "0"}
    if memory == "Static":
        config["reservedMemory"] = [{"numaNode": -1, "limits": {"memory": "100Mi"}}]
    node: dict[str, Any] = {"name": "worker", "sysfs": str(sys_root)}
    if "example.com/gpu" in limits:
        # a device without topology: no hints of its own, the merge panics
        node["devices"] = {"example.com/gpu": [{"id": "gpu0", "numaNodes": []}]}
    if "example.com/nic" in limits:
        # a device on NUMA node -1 (a plugin reporting the machine's node):
        # the device manager's hint generation panics first
        node["devices"] = {"example.com/nic": [{"id": "nic0", "numaNodes": [-1]}]}
    mine, theirs = _run(oracle_binary, tmp_path, node, config, [_pod("db", limits, requests)])
    assert mine.doc is not None and mine.doc["node"]["numaNodes"] == [-1]
    step = mine.doc["steps"][0]
    if topology == "none" and memory == "None":  # no hint is asked for: the kubelet runs
        assert theirs.kind == "ok" and step["admitted"] is True
    else:
        # the kubelet died admitting the pod; podnuma names where
        assert theirs.kind == "crash", theirs.message
        assert step["admitted"] is False and "(kubelet v1.37 panics here)" in step["message"]
