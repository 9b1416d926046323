"""Node topology from a MachineInfo file and from a sysfs copy, in a dump directory."""

from __future__ import annotations

import json
from pathlib import Path

from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.replay import replay_node

from ..inputs.test_discover_sysfs import two_socket_ht


def _node(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
            "status": {"allocatable": {"cpu": "4"}}}


def _pod(name: str, node: str, cpu: str) -> dict[str, object]:
    res = {"cpu": cpu, "memory": "256Mi"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "t", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": res, "limits": res}}]},
            "status": {"phase": "Running"}}


MACHINE_INFO = {
    "num_cores": 4, "num_physical_cores": 2, "num_sockets": 1, "memory_capacity": 8 * 1024**3,
    "topology": [{"node_id": 0, "memory": 8 * 1024**3, "hugepages": [], "caches": [], "distances": [10],
                  "cores": [{"core_id": 0, "thread_ids": [0, 2], "socket_id": 0, "caches": []},
                            {"core_id": 1, "thread_ids": [1, 3], "socket_id": 0, "caches": []}]}],
}

CONFIG = {"kubeletconfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}}


def test_machine_info_and_sysfs_per_node(tmp_path: Path) -> None:
    d = tmp_path / "dump"
    (d / "configz").mkdir(parents=True)
    (d / "machineinfo").mkdir()
    (d / "nodes.json").write_text(json.dumps({"kind": "List", "items": [_node("mi"), _node("fs")]}))
    (d / "pods.json").write_text(json.dumps({"kind": "List", "items": [
        _pod("a", "mi", "2"), _pod("b", "fs", "2"), _pod("c", "fs", "1")]}))
    (d / "machineinfo" / "mi.json").write_text(json.dumps(MACHINE_INFO))
    for n in ("mi", "fs"):
        (d / "configz" / f"{n}.json").write_text(json.dumps(CONFIG))
    two_socket_ht().write(d / "sysfs" / "fs")
    fleet = load_fleet([d])
    specs = {s.name: s for s in fleet.nodes}
    assert specs["mi"].topology_source.startswith("MachineInfo ")
    assert specs["fs"].topology_source.startswith("sysfs ")
    mi = replay_node(specs["mi"])
    fs = replay_node(specs["fs"])
    assert mi["machine"] == {"cpus": 4, "numaNodes": 1, "sockets": 1, "threadsPerCore": 2}
    assert mi["baseline"]["exclusiveCpus"] == 2 and mi["baseline"]["freeCpus"] == 1
    assert fs["machine"]["cpus"] == 8 and fs["machine"]["numaNodes"] == 2
    assert fs["baseline"]["exclusiveCpus"] == 3 and fs["baseline"]["admitted"] == 2
