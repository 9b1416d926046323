"""``podnuma state inspect``: checkpoints of every format version, written by
podnuma and by the kubelet's code (the recorded vectors), names from a pods
dump, inconsistencies, corrupt files, and the replayable scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podnuma.analysis.state import inspect_state
from podnuma.cli import cli
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, encode_cpu_checkpoint
from podnuma.cm.memorymanager.checkpoint import MemoryCheckpointData, encode_memory_checkpoint
from podnuma.cm.memorymanager.state import Block, MemoryTable, NUMANodeState
from podnuma.inputs.scenario import load_scenario
from podnuma.inputs.state import read_state_dir
from podnuma.machine.cpuset import CPUSet
from podnuma.scenario.run import run_scenario

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (REPO / "examples").rglob("*.yaml") if "kind: Scenario" in p.read_text())
CPU_VECTORS = REPO / "tests" / "cm" / "cpumanager" / "cpu_checkpoint_vectors.json"
MEM_VECTORS = REPO / "tests" / "cm" / "memorymanager" / "memory_checkpoint_vectors.json"
GI = 1 << 30
#: a kubelet configuration file's first lines (the kubelet's loader wants them)
KIND = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def _inspect(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["state", "inspect", *args])
    return res.exit_code, res.output


def _write(directory: Path, cpu: bytes | None = None, mem: bytes | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if cpu is not None:
        (directory / "cpu_manager_state").write_bytes(cpu)
    if mem is not None:
        (directory / "memory_manager_state").write_bytes(mem)
    return directory


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.relative_to(REPO / "examples").as_posix())
def test_checkpoints_podnuma_writes_are_consistent(example: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["simulate", str(example), "--checkpoint-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    files = read_state_dir(tmp_path)
    assert (files.cpu_version, files.memory_version) == (4, 3)
    report = inspect_state(files)
    assert report.issues == ()
    result = run_scenario(load_scenario(example))
    held = {uid for uid in json.loads(result.checkpoint_files["cpu_manager_state"]).get("entries", {})}
    assert held <= {p.uid for p in report.pods}


def test_table_names_from_the_dump_and_pods_missing_from_it(tmp_path: Path) -> None:
    d = tmp_path / "state"
    assert CliRunner().invoke(
        cli, ["simulate", str(REPO / "examples/pod-level/pod-scope-2-mixed.yaml"), "--checkpoint-dir", str(d)]
    ).exit_code == 0
    uid = next(iter(read_state_dir(d).cpu.entries))  # type: ignore[union-attr]
    dump = tmp_path / "pods.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"metadata": {"name": "mixed", "namespace": "kep", "uid": uid}, "spec": {"nodeName": "n1"}},
    ]}))  # fmt: skip
    code, out = _inspect(str(d), "--pods", str(dump))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[1] == "  cpu_manager_state     format v4, policy 'static', default CPU set 0,5-15"
    assert any(line.startswith("kep/mixed") and "(pod budget)" in line and "1-4" in line for line in lines)
    assert any("container-1" in line and " 1-2 " in line and "memory 2Gi @0" in line for line in lines)
    assert lines[-1] == "no inconsistencies"

    dump.write_text(json.dumps({"items": []}))
    code, out = _inspect(str(d), "--pods", str(dump), "-o", "json")
    doc = json.loads(out)
    assert doc["inconsistencies"] == [{
        "kind": "pod-not-in-dump",
        "message": f"pod {uid} has entries but is not in the pods dump (gone, or another node's)",
        "podUID": uid,
    }]  # fmt: skip


def test_every_format_version_the_kubelet_reads(tmp_path: Path) -> None:
    loads = {v["name"]: v["blob"] for v in json.loads(CPU_VECTORS.read_text())["loads"]}
    mem = json.loads(MEM_VECTORS.read_text())["static-group"]
    for cpu_name, cpu_version, mem_name, mem_version in (
        ("base2_v2legacy", 2, "v1", 1),
        ("base2_v3std", 3, "v2", 2),
        ("base2_v4", 4, "v3", 3),
    ):
        d = _write(tmp_path / cpu_name, loads[cpu_name].encode(), mem[mem_name].encode())
        code, out = _inspect(str(d), "-o", "json")
        assert code == 0, out
        doc = json.loads(out)
        assert doc["cpuManager"]["version"] == cpu_version
        assert doc["memoryManager"]["version"] == mem_version
        assert doc["memoryManager"]["policyName"] == "Static"


def test_corrupt_checkpoint_is_the_kubelets_error(tmp_path: Path) -> None:
    loads = {v["name"]: v["blob"] for v in json.loads(CPU_VECTORS.read_text())["loads"]}
    d = _write(tmp_path / "s", loads["base2_v3bad"].encode())
    code, out = _inspect(str(d))
    assert code == 2
    path = d / "cpu_manager_state"
    assert out.strip() == (
        f"error: {path}: could not restore state from checkpoint: checkpoint is corrupted, "
        f'please drain this node and delete the CPU manager checkpoint file "{path}" before '
        "restarting Kubelet"
    )


def test_tampered_v4_data_is_refused(tmp_path: Path) -> None:
    blob = encode_cpu_checkpoint(CPUCheckpointData("static", CPUSet.parse("0,3"), {"u": {"c": CPUSet.parse("1-2")}}))
    d = _write(tmp_path / "s", blob.replace(b"1-2", b"1-3"))
    code, out = _inspect(str(d))
    assert code == 2 and "checkpoint is corrupted" in out and out.count("\n") == 1


def test_empty_directory(tmp_path: Path) -> None:
    code, out = _inspect(str(tmp_path))
    assert code == 2
    assert out.strip() == f"error: {tmp_path}: neither cpu_manager_state nor memory_manager_state is there"


def test_cpu_inconsistencies(tmp_path: Path) -> None:
    data = CPUCheckpointData(
        "static",
        CPUSet.parse("0,3-7"),
        {"a": {"x": CPUSet.parse("1-2"), "init": CPUSet.parse("1-2")}, "b": {"y": CPUSet.parse("2-3")}},
        {"b": CPUSet.parse("3")},
    )
    report = inspect_state(read_state_dir(_write(tmp_path / "s", encode_cpu_checkpoint(data))))
    assert [(i.kind, i.message) for i in report.issues] == [
        ("cpu-overlap", "CPUs 2 are exclusive to pod a and to container 'y' of pod b"),
        ("cpu-in-default-set", "CPUs 3 of container 'y' of pod b are also in the default set"),
        ("cpu-in-default-set", "CPUs 3 of the pod-level set of pod b are also in the default set"),
        ("cpu-outside-pod-budget", "container 'y' of pod b holds CPUs 2 outside its pod's set 3"),
    ]


def test_memory_inconsistencies(tmp_path: Path) -> None:
    state = {
        0: NUMANodeState(1, {"memory": MemoryTable(16 * GI, GI, 15 * GI, 2 * GI, 12 * GI)}, [0]),
        1: NUMANodeState(0, {"memory": MemoryTable(16 * GI, 0, 15 * GI, 0, 15 * GI)}, [1]),
    }
    entries = {"a": {"c": [Block([0], "memory", GI)]}, "b": {"c": [Block([3], "memory", 2 * GI)]}}
    blob = encode_memory_checkpoint(MemoryCheckpointData("Static", state, entries))
    report = inspect_state(read_state_dir(_write(tmp_path / "s", mem=blob)))
    assert [(i.kind, i.message) for i in report.issues] == [
        ("memory-table", "NUMA node 0 memory: allocatable 16106127360 != reserved 2147483648 + free 12884901888"),
        ("memory-table", "NUMA node 1 memory: total 17179869184 != systemReserved 0 + allocatable 16106127360"),
        ("memory-unknown-node", "pod b holds memory on NUMA node(s) [3] the machine state lacks"),
        ("memory-reserved", "memory: the NUMA nodes reserve 2Gi but the assignments hold 3Gi"),
    ]


def test_as_scenario_replays_the_state(tmp_path: Path) -> None:
    example = REPO / "examples/pod-level/pod-scope-2-mixed.yaml"
    d = tmp_path / "state"
    assert CliRunner().invoke(cli, ["simulate", str(example), "--checkpoint-dir", str(d)]).exit_code == 0
    source = yaml.safe_load(example.read_text())
    config = tmp_path / "kubelet.yaml"
    config.write_text(yaml.safe_dump(source["kubeletConfig"]))
    got = CliRunner().invoke(cli, ["state", "inspect", str(d), "--as-scenario", "--kubelet-config", str(config)])
    assert got.exit_code == 0, got.output
    doc = yaml.safe_load(got.stdout)  # standard error says the node is this machine's
    assert doc["node"] == {"sysfs": "/sys"} and doc["steps"] == []
    assert "give --node FILE (or --sysfs DIR)" in got.stderr
    doc["node"] = source["node"]  # replay on the machine the checkpoints came from
    replay = tmp_path / "replay.yaml"
    replay.write_text(yaml.safe_dump(doc))
    res = CliRunner().invoke(cli, ["simulate", str(replay), "--checkpoint-dir", str(tmp_path / "again")])
    assert res.exit_code == 0, res.output
    # No step changes the state, so the kubelet leaves each file as found:
    # the scenario's inline object (JSON with sorted keys), holding the
    # same checkpoint, checksum included, as the files inspected.
    for name in ("cpu_manager_state", "memory_manager_state"):
        again = json.loads((tmp_path / "again" / name).read_bytes())
        assert again == json.loads((d / name).read_bytes())


def test_as_scenario_infers_what_it_can(tmp_path: Path) -> None:
    d = tmp_path / "state"
    example = REPO / "examples/pod-level/pod-scope-2-mixed.yaml"
    assert CliRunner().invoke(cli, ["simulate", str(example), "--checkpoint-dir", str(d)]).exit_code == 0
    res = CliRunner().invoke(cli, ["state", "inspect", str(d), "--as-scenario", "-o", "json"])
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["kubeletConfig"] == {
        "cpuManagerPolicy": "static",
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
        "systemReserved": {"memory": "924Mi"},
        # (its pod budgets: only pod scope with the pod-level gates writes them)
        "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
        "topologyManagerScope": "pod",
        # (never none, which writes no pod budget; not replayed without the
        # machine: the first that writes them, said so)
        "topologyManagerPolicy": "best-effort",
    }
    assert "reservedSystemCPUs" in res.stderr
    assert "warning: the checkpoints hold pod-level sets" in res.stderr
    assert "none assumed" not in res.stderr
    assert "without the node's machine (--node, --sysfs) they are not replayed: best-effort is written" in res.stderr


def _two_node_sysfs(tmp_path: Path) -> Path:
    """A two-node machine written as a sysfs tree of our own."""
    sysfs = tmp_path / "sys"
    for cpu, node in ((0, 0), (1, 0), (2, 1), (3, 1)):
        topo = sysfs / "devices/system/cpu" / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu}\n")
        (topo / "physical_package_id").write_text(f"{node}\n")
        nd = sysfs / "devices/system/node" / f"node{node}"
        nd.mkdir(parents=True, exist_ok=True)
        (nd / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")  # (as sysfs links them)
        (nd / "meminfo").write_text(f"Node {node} MemTotal:       8388608 kB\n")
    return sysfs


def test_sysfs_maps_cpus_to_numa_nodes_and_pods_from_stdin(tmp_path: Path) -> None:
    sysfs = _two_node_sysfs(tmp_path)
    data = CPUCheckpointData("static", CPUSet.parse("0-1"), {"u1": {"app": CPUSet.parse("2-3")}})
    d = _write(tmp_path / "state", encode_cpu_checkpoint(data))
    dump = json.dumps({"items": [{"metadata": {"uid": "u1", "name": "web", "namespace": "shop"}}]})
    res = CliRunner().invoke(
        cli, ["state", "inspect", str(d), "--sysfs", str(sysfs), "--pods", "-", "-o", "json"], input=dump
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["pods"] == [{
        "uid": "u1", "namespace": "shop", "name": "web",
        "containers": [{"name": "app", "cpus": "2-3", "numaNodes": [1], "memory": []}],
    }]  # fmt: skip
    assert doc["inconsistencies"] == []


def test_bad_pods_dump(tmp_path: Path) -> None:
    data = CPUCheckpointData("none", CPUSet())
    d = _write(tmp_path / "state", encode_cpu_checkpoint(data))
    dump = tmp_path / "pods.json"
    dump.write_text('{"items": [{"metadata": {"name": "x"}}]}')
    code, out = _inspect(str(d), "--pods", str(dump))
    assert code == 2
    assert out.strip() == f"error: {dump}: items[0].metadata.uid: required field is missing (line 1, column 13)"


def test_empty_pods_dump_is_said_so(tmp_path: Path) -> None:
    """An empty (or blank) pods dump: "file is empty", as every reader says
    it (it was JSON's "Expecting value")."""
    data = CPUCheckpointData("none", CPUSet())
    d = _write(tmp_path / "state", encode_cpu_checkpoint(data))
    for text in ("", " \n"):
        dump = tmp_path / "pods.json"
        dump.write_text(text)
        code, out = _inspect(str(d), "--pods", str(dump))
        assert (code, out.strip()) == (2, f"error: {dump}: the pods dump file is empty")


def test_bad_kubelet_config_for_as_scenario(tmp_path: Path) -> None:
    d = _write(tmp_path / "state", encode_cpu_checkpoint(CPUCheckpointData("none", CPUSet())))
    config = tmp_path / "kubelet.yaml"
    config.write_text(f"{KIND}cpuManagerPolicy: 7\n")
    code, out = _inspect(str(d), "--as-scenario", "--kubelet-config", str(config))
    assert code == 2
    assert out.startswith(f"error: {config}: cpuManagerPolicy: ") and out.count("\n") == 1


def test_as_scenario_with_sysfs_embeds_the_node(tmp_path: Path) -> None:
    sysfs = _two_node_sysfs(tmp_path)
    data = CPUCheckpointData("static", CPUSet.parse("0-1"), {"u1": {"app": CPUSet.parse("2-3")}})
    d = _write(tmp_path / "state", encode_cpu_checkpoint(data))
    config = tmp_path / "kubelet.yaml"
    config.write_text(f'{KIND}cpuManagerPolicy: static\nreservedSystemCPUs: "0"\n')
    code, out = _inspect(str(d), "--sysfs", str(sysfs), "--as-scenario", "--kubelet-config", str(config))
    assert code == 0, out
    doc = yaml.safe_load(out)
    assert [row["numaNode"] for row in doc["node"]["cpus"]] == [0, 0, 1, 1]
    replay = tmp_path / "replay.yaml"
    replay.write_text(out)
    res = CliRunner().invoke(cli, ["simulate", str(replay), "-o", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["checkpoints"]["cpuManager"]["entries"] == {"u1": {"app": "2-3"}}


# the device manager's checkpoint as kubelet v1.37.2 writes it (its own
# checkpoint package made these bytes)
DEVICE_CHECKPOINT = (
    b'{"Data":{"PodDeviceEntries":[{"PodUID":"u1","ContainerName":"app","ResourceName":"example.com/gpu",'
    b'"DeviceIDs":{"0":["gpu0","gpu1"],"1":["gpu2"]},"AllocResp":"CgYKAUESAWIaFAoGL2Rldi94EgYvZGV2L3kaAnJ3"},'
    b'{"PodUID":"u1","ContainerName":"side","ResourceName":"example.com/nic","DeviceIDs":{"-1":["nic0"]},'
    b'"AllocResp":""}],"RegisteredDevices":{"example.com/gpu":["gpu0","gpu1","gpu2","gpu3"],'
    b'"example.com/nic":["nic0"]}},"Checksum":1052997933}'
)


def _with_devices(directory: Path, blob: bytes) -> Path:
    (directory / "device-plugins").mkdir(parents=True, exist_ok=True)
    (directory / "device-plugins" / "kubelet_internal_checkpoint").write_bytes(blob)
    return directory


def test_devices_from_the_device_checkpoint(tmp_path: Path) -> None:
    cpu = encode_cpu_checkpoint(CPUCheckpointData("static", CPUSet.parse("0,3-7"), {"u1": {"app": CPUSet.parse("1-2")}}))
    d = _with_devices(_write(tmp_path / "s", cpu), DEVICE_CHECKPOINT)
    code, out = _inspect(str(d), "-o", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["deviceManager"] == {
        "file": "device-plugins/kubelet_internal_checkpoint",
        "readable": True,
        "registeredDevices": {"example.com/gpu": ["gpu0", "gpu1", "gpu2", "gpu3"], "example.com/nic": ["nic0"]},
    }
    (pod,) = doc["pods"]
    assert [(c["name"], c["cpus"], c["devices"]) for c in pod["containers"]] == [
        ("app", "1-2", {"example.com/gpu": ["gpu0", "gpu1", "gpu2"]}),
        ("side", None, {"example.com/nic": ["nic0"]}),
    ]
    assert doc["inconsistencies"] == []
    code, text = _inspect(str(d))
    assert code == 0
    assert "kubelet_internal_checkpoint  registered example.com/gpu (4), example.com/nic (1)" in text
    assert "example.com/gpu gpu0,gpu1,gpu2" in text and "example.com/nic nic0" in text


def test_device_checkpoint_alone(tmp_path: Path) -> None:
    d = _with_devices(tmp_path / "s", DEVICE_CHECKPOINT)
    report = inspect_state(read_state_dir(d))
    assert [p.uid for p in report.pods] == ["u1"]
    assert report.pods[0].containers[0].devices == {"example.com/gpu": ("gpu0", "gpu1", "gpu2")}


def test_unreadable_device_checkpoint_is_reported_not_refused(tmp_path: Path) -> None:
    d = _with_devices(_write(tmp_path / "s"), DEVICE_CHECKPOINT.replace(b"1052997933", b"1052997934"))
    report = inspect_state(read_state_dir(d))
    assert report.pods == ()
    assert [(i.kind, i.message) for i in report.issues] == [
        ("device-checkpoint-unreadable",
         "the kubelet cannot read the device checkpoint (checkpoint is corrupted): it starts with no device allocated"),
    ]  # fmt: skip


def test_device_overlap_and_skipped_entry(tmp_path: Path) -> None:
    from podnuma.cm.devicemanager.checkpoint import DeviceEntry, encode_device_checkpoint

    blob = encode_device_checkpoint(
        [
            DeviceEntry("a", "x", "example.com/gpu", {0: ("gpu0",)}),
            DeviceEntry("b", "y", "example.com/gpu", {0: ("gpu0",)}),
            DeviceEntry("c", "z", "example.com/gpu", {1: ("gpu1",)}, b"\x0f"),
        ],
        {"example.com/gpu": ["gpu0", "gpu1"]},
    )
    report = inspect_state(read_state_dir(_with_devices(tmp_path / "s", blob)))
    assert [(i.kind, i.pod_uid) for i in report.issues] == [("device-entry-skipped", "c"), ("device-overlap", "b")]
    assert [p.uid for p in report.pods] == ["a", "b"]


def test_as_scenario_carries_the_device_state(tmp_path: Path) -> None:
    node = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 2, "threadsPerCore": 1,
                          "memoryPerNumaNode": "4Gi"},
            "devices": {"example.com/gpu": [{"id": f"gpu{i}", "numaNodes": [i // 2]} for i in range(4)]}}
    cpu = encode_cpu_checkpoint(CPUCheckpointData("static", CPUSet.parse("0,2-3"), {"u1": {"app": CPUSet.parse("1")}}))
    d = _with_devices(_write(tmp_path / "s", cpu), DEVICE_CHECKPOINT)
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(node))
    config = tmp_path / "kubelet.yaml"
    config.write_text(KIND + yaml.safe_dump({"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}))
    got = CliRunner().invoke(
        cli, ["state", "inspect", str(d), "--as-scenario", "--kubelet-config", str(config),
              "--node", str(tmp_path / "node.yaml")])  # fmt: skip
    assert got.exit_code == 0, got.output
    doc = yaml.safe_load(got.stdout)
    assert doc["state"]["deviceManager"] == json.loads(DEVICE_CHECKPOINT)
    # the replay restores the devices: a new pod asking for a GPU gets the only one left
    doc["steps"] = [{"addPod": {
        "metadata": {"name": "b", "namespace": "d", "uid": "ub"},
        "spec": {"containers": [{"name": "app", "resources": {"limits": {"example.com/gpu": "1"}}}]},
    }}]  # fmt: skip
    replay = tmp_path / "replay.yaml"
    replay.write_text(yaml.safe_dump(doc))
    res = CliRunner().invoke(cli, ["simulate", str(replay), "-o", "json"])
    assert res.exit_code == 0, res.output
    (step,) = json.loads(res.stdout)["steps"]
    assert step["admitted"] and step["containers"][0]["devices"] == {"example.com/gpu": ["gpu3"]}
