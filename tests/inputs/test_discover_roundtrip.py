"""``node discover`` on trees the kernel writes for arm64 and CPU hotplug:
what it prints is a ``cpus`` form that loads, into the very machine the
``sysfs`` form gives, and runs the same in ``simulate``, ``cgroups plan``
and ``state inspect``.

- ``physical_package_id`` -1 (arm64 kernels that cannot tell the package,
  google/cadvisor#2743): cadvisor reports socket -1 and the kubelet uses it
  as a socket id like any other;
- no NUMA node directories and an offline CPU: cadvisor's
  ``getCPUTopology`` counts every ``cpuN`` directory (its ``NumCores``, the
  node's ``cpu`` capacity), which the ``cpus`` form holds as ``cpuCapacity``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.errors import InputError
from podnuma.inputs.discover import load_node

HEADER = "apiVersion: podnuma.io/v1\nkind: Scenario\n"
NODE_KB = 8 * 1024 * 1024


def tree(
    root: Path,
    cpus: Mapping[int, tuple[int, int] | None],
    nodes: Mapping[int, list[int]] | None = None,
    online: str | None = None,
    meminfo_kb: int | None = None,
) -> Path:
    """A sysfs tree under ``root/sys`` (``proc/meminfo`` beside it):
    cpu -> (core_id, physical_package_id), or None for a CPU without
    topology files; NUMA node -> its CPUs (none: no node directories)."""
    sys_root = root / "sys"
    cpu_root = sys_root / "devices" / "system" / "cpu"
    cpu_root.mkdir(parents=True)
    if online is not None:
        (cpu_root / "online").write_text(online + "\n")
    for cpu, ids in cpus.items():
        (cpu_root / f"cpu{cpu}").mkdir()
        if ids is not None:
            topo = cpu_root / f"cpu{cpu}" / "topology"
            topo.mkdir()
            (topo / "core_id").write_text(f"{ids[0]}\n")
            (topo / "physical_package_id").write_text(f"{ids[1]}\n")
    node_root = sys_root / "devices" / "system" / "node"
    node_root.mkdir()
    for nid, members in (nodes or {}).items():
        nd = node_root / f"node{nid}"
        nd.mkdir()
        for cpu in members:
            (nd / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
        (nd / "meminfo").write_text(f"Node {nid} MemTotal:       {NODE_KB} kB\nNode {nid} MemFree: 1 kB\n")
        for size in (2048, 1048576):
            hp = nd / "hugepages" / f"hugepages-{size}kB"
            hp.mkdir(parents=True)
            (hp / "nr_hugepages").write_text("0\n")
        (nd / "distance").write_text(" ".join("10" if n == nid else "20" for n in nodes or {}) + "\n")
    if meminfo_kb is not None:
        (root / "proc").mkdir()
        (root / "proc" / "meminfo").write_text(f"MemTotal:       {meminfo_kb} kB\n")
    return root


def discover(root: Path, *args: str) -> dict[str, Any]:
    res = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(root), "-o", "json", *args])
    assert res.exit_code == 0, res.output
    node = json.loads(res.output)["node"]
    assert isinstance(node, dict)
    return node


def pod(name: str, uid: str, resources: dict[str, Any]) -> dict[str, Any]:
    return {"addPod": {"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": "d", "uid": uid},
                       "spec": {"containers": [{"name": "app", "resources": resources}]}}}


GUARANTEED = [
    pod("a", "11111111-0d7b-4d53-9a51-3c1f4f3a2b10", {"limits": {"cpu": "2", "memory": "256Mi"}}),
    pod("b", "22222222-0d7b-4d53-9a51-3c1f4f3a2b10", {"limits": {"cpu": "1", "memory": "256Mi"}}),
    pod("c", "33333333-0d7b-4d53-9a51-3c1f4f3a2b10", {"limits": {"cpu": "1", "memory": "256Mi"}}),
    pod("d", "44444444-0d7b-4d53-9a51-3c1f4f3a2b10", {"requests": {"cpu": "500m", "memory": "64Mi"}}),
]
STATIC = {
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "kind": "KubeletConfiguration",
    "cpuManagerPolicy": "static",
    "reservedSystemCPUs": "0",
    "memoryManagerPolicy": "Static",
    "topologyManagerPolicy": "single-numa-node",
    "kubeReserved": {"memory": "1000Mi"},
    "evictionHard": {"memory.available": "100Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}],
}


def scenarios(tmp_path: Path, root: Path, node: dict[str, Any], config: dict[str, Any] | None,
              steps: list[dict[str, Any]]) -> tuple[Path, Path]:
    """The same scenario with the ``sysfs`` form and with ``node``."""
    out = []
    for name, form in (("sysfs", {"sysfs": str(root)}), ("table", node)):
        doc: dict[str, Any] = {"node": form}
        if config is not None:
            doc["kubeletConfig"] = config
        doc["steps"] = steps
        path = tmp_path / f"{name}.yaml"
        path.write_text(HEADER + yaml.safe_dump(doc, sort_keys=False))
        out.append(path)
    return out[0], out[1]


def same_output(command: list[str], options: list[str], a: Path, b: Path) -> str:
    """``command SCENARIO options`` on both scenarios: exit 0 and the same
    output (file names aside)."""
    runs = [CliRunner().invoke(cli, [*command, str(p), *options]) for p in (a, b)]
    for run in runs:
        assert run.exit_code == 0, run.output
    texts = [r.output.replace(str(p), "S") for r, p in zip(runs, (a, b), strict=True)]
    assert texts[0] == texts[1]
    return texts[0]


# -------------------------------------------------------- physical_package_id -1


ARM64_ONE_NODE = ({c: (c, -1) for c in range(4)}, {0: [0, 1, 2, 3]})
ARM64_TWO_NODES = ({c: (c % 4, -1) for c in range(8)}, {0: [0, 1, 2, 3], 1: [4, 5, 6, 7]})


@pytest.mark.parametrize(("cpus", "nodes"), [ARM64_ONE_NODE, ARM64_TWO_NODES], ids=["one-node", "two-nodes"])
def test_package_minus_one_round_trips(tmp_path: Path, cpus: Mapping[int, tuple[int, int] | None],
                                       nodes: Mapping[int, list[int]]) -> None:
    root = tree(tmp_path / "t", cpus, nodes, meminfo_kb=NODE_KB * len(nodes))
    node = discover(root)
    assert {r["socket"] for r in node["cpus"]} == {-1}
    machine = load_node(node, base_dir=tmp_path)
    assert machine == load_node({"sysfs": str(root)}, base_dir=tmp_path)
    assert machine.topology.cpu_info[0].socket == -1
    a, b = scenarios(tmp_path, root, node, STATIC, GUARANTEED)
    out = json.loads(same_output(["simulate"], ["-o", "json"], a, b))
    admitted = [s["admitted"] for s in out["steps"]]
    assert admitted[:2] == [True, True]  # the machine ran (socket -1 did not break the CPU manager)


def test_package_minus_one_state_inspect(tmp_path: Path) -> None:
    """``state inspect --sysfs`` reads the machine through ``node discover``."""
    root = tree(tmp_path / "t", *ARM64_ONE_NODE, meminfo_kb=NODE_KB)
    a, _ = scenarios(tmp_path, root, discover(root), STATIC, GUARANTEED[:2])
    state = tmp_path / "state"
    res = CliRunner().invoke(cli, ["simulate", str(a), "--checkpoint-dir", str(state), "-o", "json"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, ["state", "inspect", str(state), "--sysfs", str(root)])
    assert res.exit_code == 0, res.output
    assert "no inconsistencies" in res.output
    res = CliRunner().invoke(cli, ["state", "inspect", str(state), "--sysfs", str(root), "--as-scenario",
                                   "-o", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # (notes on standard error)
    assert load_node(doc["node"], base_dir=tmp_path) == load_node({"sysfs": str(root)}, base_dir=tmp_path)


def test_machine_info_takes_socket_minus_one(tmp_path: Path) -> None:
    """cadvisor's MachineInfo JSON of such a machine says ``socket_id: -1``."""
    info = {
        "num_cores": 2,
        "num_sockets": 1,
        "memory_capacity": 1 << 30,
        "topology": [{"node_id": 0, "memory": 1 << 30, "cores": [
            {"core_id": 0, "thread_ids": [0], "socket_id": -1},
            {"core_id": 1, "thread_ids": [1], "socket_id": -1},
        ]}],
    }
    table = {"cpus": [{"id": c, "core": c, "socket": -1, "numaNode": 0} for c in (0, 1)],
             "memory": {0: {"memory": "1Gi"}}}
    assert load_node({"machineInfo": info}, base_dir=tmp_path) == load_node(table, base_dir=tmp_path)


def test_no_numa_directories_and_package_minus_one_is_refused(tmp_path: Path) -> None:
    """Without NUMA node directories cadvisor makes NUMA node -1 of package
    -1: not a NUMA id the ``cpus`` form (or the kubelet's hints) holds."""
    root = tree(tmp_path / "t", {c: (c, -1) for c in range(4)}, meminfo_kb=NODE_KB)
    res = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(root)])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {root}: NUMA node -1: ")
    assert f"{{sysfs: {root}}}" in lines[0]


def test_empty_name_is_refused(tmp_path: Path) -> None:
    root = tree(tmp_path / "t", *ARM64_ONE_NODE)
    res = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(root), "--name", ""])
    assert res.exit_code == 2
    assert res.output == "error: --name: must be a non-empty string, got an empty string\n"
    assert discover(root, "--name", "n1")["name"] == "n1"


# -------------------------------------------------- no NUMA directories: NumCores


@pytest.mark.parametrize(
    ("cpus", "online"),
    [
        ({c: (c, 0) for c in range(4)}, "0-2"),  # CPU 3 offline
        ({0: (0, 0), 1: (1, 0), 2: (2, 0), 3: None}, None),  # CPU 3 without topology files
    ],
    ids=["offline-cpu", "cpu-without-topology"],
)
def test_no_numa_directories_keep_cadvisors_cpu_count(tmp_path: Path, cpus: Mapping[int, tuple[int, int] | None],
                                                      online: str | None) -> None:
    root = tree(tmp_path / "t", cpus, online=online, meminfo_kb=NODE_KB)
    node = discover(root)
    assert node["cpuCapacity"] == 4
    assert [r["id"] for r in node["cpus"] if r.get("online", True)] == [0, 1, 2]
    machine = load_node(node, base_dir=tmp_path)
    assert machine == load_node({"sysfs": str(root)}, base_dir=tmp_path)
    assert machine.topology.num_cpus == 4
    steps = [pod("a", "11111111-0d7b-4d53-9a51-3c1f4f3a2b10", {"requests": {"cpu": "500m", "memory": "256Mi"}})]
    a, b = scenarios(tmp_path, root, node, None, steps)
    options = ["--driver", "systemd", "--cgroup-version", "2", "-o", "json"]
    plan = json.loads(same_output(["cgroups", "plan"], options, a, b))
    kubepods = next(c for c in plan["cgroups"] if c["path"] == "/kubepods.slice")
    assert kubepods["files"]["cpu.weight"] == "157"  # 4 CPUs of capacity (3 would be 118)
    same_output(["simulate"], ["-o", "json"], a, b)


def test_numa_directories_need_no_cpu_capacity(tmp_path: Path) -> None:
    """With NUMA node directories cadvisor counts online CPUs only: the
    offline row is enough."""
    root = tree(tmp_path / "t", {c: (c, 0) for c in range(4)}, {0: [0, 1, 2, 3]}, online="0-2")
    node = discover(root)
    assert "cpuCapacity" not in node
    assert node["cpus"][3] == {"id": 3, "numaNode": 0, "online": False}
    assert load_node(node, base_dir=tmp_path).topology.num_cpus == 3


def test_cpu_capacity_in_the_table(tmp_path: Path) -> None:
    rows = [{"id": 0, "core": 0, "socket": 0, "numaNode": 0}, {"id": 1, "online": False}]
    assert load_node({"cpus": rows}, base_dir=tmp_path).topology.num_cpus == 1
    assert load_node({"cpus": rows, "cpuCapacity": 2}, base_dir=tmp_path).topology.num_cpus == 2
    with pytest.raises(InputError) as info:
        load_node({"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 1,
                                 "threadsPerCore": 1}, "cpuCapacity": 2}, base_dir=tmp_path)
    assert info.value.path == "cpuCapacity"
    assert info.value.message == "'cpuCapacity' only goes with the 'cpus' form"


def test_advise_replay_node_of_such_a_machine_loads(tmp_path: Path) -> None:
    """The kubelet's ids as a ``cpus`` table (``advise`` writes one per
    replay): socket -1 and the uncore cache -1 it stands in for load back."""
    from podnuma.analysis.advise import machine_node_document

    root = tree(tmp_path / "t", *ARM64_TWO_NODES, meminfo_kb=2 * NODE_KB)
    machine = load_node({"sysfs": str(root)}, base_dir=tmp_path)
    doc = machine_node_document(machine)
    assert {(r["socket"], r["uncoreCache"]) for r in doc["cpus"]} == {(-1, -1)}
    again = load_node(doc, base_dir=tmp_path)
    assert again.topology == machine.topology
