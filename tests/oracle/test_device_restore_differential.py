"""The device manager's starting checkpoint (``state.deviceManager`` /
``state.deviceManagerFile``) against the real kubelet code: the oracle puts
the same bytes in its device-plugins directory before its device manager
starts, so upstream's readCheckpoint restores them.

Each case also asserts what the kubelet made of the checkpoint, so that a
checkpoint both engines ignored could not pass for one both restored."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, encode_cpu_checkpoint
from podnuma.cm.devicemanager.checkpoint import DeviceEntry, encode_device_checkpoint
from podnuma.machine.cpuset import CPUSet
from tests.oracle.harness import (
    Outcome,
    compare,
    run_oracle_checkpoints,
    run_podnuma,
    write_scenario,
)

GPU = "example.com/gpu"
NIC = "example.com/nic"
MACHINE = {
    "synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                  "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"},
    "devices": {GPU: [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1", "numaNodes": [0]},
                      {"id": "gpu2", "numaNodes": [1]}, {"id": "gpu3", "numaNodes": [1]}]},
}
CONFIG = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "single-numa-node"}

# a ContainerAllocateResponse (an env var and a device node) as a plugin
# would answer, in protobuf wire format
ALLOC_RESP = b"\n\x06\n\x01A\x12\x01b\x1a\x14\n\x06/dev/x\x12\x06/dev/y\x1a\x02rw"


def _pod(name: str, gpus: int, cpu: str = "1", extra: dict[str, str] | None = None) -> dict[str, Any]:
    limits: dict[str, Any] = {"cpu": cpu, "memory": "1Gi"}
    if gpus:
        limits[GPU] = str(gpus)
    limits.update(extra or {})
    return {"metadata": {"name": name, "namespace": "d", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]}}


def _checkpoint(
    entries: list[DeviceEntry], registered: dict[str, list[str]] | None = None, *, corrupt: bool = False
) -> bytes:
    reg = {GPU: ["gpu0", "gpu1", "gpu2", "gpu3"]} if registered is None else registered
    raw = encode_device_checkpoint(entries, reg)
    if corrupt:
        head, _, checksum = raw.rpartition(b'"Checksum":')
        raw = head + b'"Checksum":' + str(int(checksum.rstrip(b"}")) + 1).encode() + b"}"
    return raw


A_ON_NUMA0 = DeviceEntry("uid-a", "app", GPU, {0: ("gpu0", "gpu1")}, ALLOC_RESP)


def _run(tmp_path: Path, oracle: str, ckpt: bytes, steps: list[dict[str, Any]],
         *, running: bool = True, cpu_state: bytes | None = None) -> tuple[Outcome, Outcome]:
    (tmp_path / "devices").write_bytes(ckpt)
    state: dict[str, Any] = {"deviceManagerFile": "devices"}
    if running:
        state["pods"] = [_pod("a", 2)]
    if cpu_state is not None:
        (tmp_path / "cpu").write_bytes(cpu_state)
        state["cpuManagerFile"] = "cpu"
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": copy.deepcopy(MACHINE),
           "kubeletConfig": copy.deepcopy(CONFIG), "state": state, "steps": steps}
    path = write_scenario(doc, tmp_path / "s.json")
    mine, theirs = run_podnuma(path), run_oracle_checkpoints(oracle, path)
    assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
    diffs = compare(mine, theirs, doc, check_bytes=True)
    assert not diffs, diffs
    return mine, theirs


def _devices(outcome: Outcome, step: int) -> dict[str, list[str]]:
    assert outcome.doc is not None
    st = outcome.doc["steps"][step]
    assert st["admitted"], (st["reason"], st["message"])
    return {r: sorted(ids) for r, ids in st["containers"][0]["devices"].items()}


def _rejection(outcome: Outcome, step: int) -> tuple[str, str]:
    assert outcome.doc is not None
    st = outcome.doc["steps"][step]
    assert st["admitted"] is False
    return st["reason"], st["message"]


def test_new_pod_does_not_get_restored_devices(oracle_binary: str, tmp_path: Path) -> None:
    mine, theirs = _run(tmp_path, oracle_binary, _checkpoint([A_ON_NUMA0]), [{"addPod": _pod("b", 2)}])
    assert _devices(mine, 0) == _devices(theirs, 0) == {GPU: ["gpu2", "gpu3"]}


def test_no_room_left_by_restored_devices(oracle_binary: str, tmp_path: Path) -> None:
    steps: list[dict[str, Any]] = [{"addPod": _pod("b", 2)}, {"addPod": _pod("c", 1)}, {"removePod": "uid-a"}, {"addPod": _pod("e", 2)}]
    mine, theirs = _run(tmp_path, oracle_binary, _checkpoint([A_ON_NUMA0]), steps)
    assert _rejection(mine, 1) == _rejection(theirs, 1)
    assert "unavailable" in _rejection(mine, 1)[1] or _rejection(mine, 1)[0] == "TopologyAffinityError"
    assert _devices(mine, 3) == {GPU: ["gpu0", "gpu1"]}  # freed when a left


def test_readmitted_pod_keeps_its_devices(oracle_binary: str, tmp_path: Path) -> None:
    entry = DeviceEntry("uid-a", "app", GPU, {1: ("gpu2", "gpu3")}, ALLOC_RESP)
    steps = [{"addPod": _pod("a", 2)}, {"addPod": _pod("b", 2)}]
    mine, theirs = _run(tmp_path, oracle_binary, _checkpoint([entry]), steps)
    assert _devices(mine, 0) == {GPU: ["gpu2", "gpu3"]}
    assert _devices(mine, 1) == {GPU: ["gpu0", "gpu1"]}


def test_readmission_with_a_changed_count_fails(oracle_binary: str, tmp_path: Path) -> None:
    entry = DeviceEntry("uid-a", "app", GPU, {0: ("gpu0",)}, ALLOC_RESP)
    mine, theirs = _run(tmp_path, oracle_binary, _checkpoint([entry]), [{"addPod": _pod("a", 2)}])
    reason, message = _rejection(mine, 0)
    assert (reason, message) == _rejection(theirs, 0)
    # the hints regenerated from the held device do not cover the new count
    assert reason == "TopologyAffinityError"


def test_corrupt_checksum_restores_nothing(oracle_binary: str, tmp_path: Path) -> None:
    ckpt = _checkpoint([A_ON_NUMA0], corrupt=True)
    mine, theirs = _run(tmp_path, oracle_binary, ckpt, [{"addPod": _pod("b", 2)}])
    # the kubelet starts all the same, with a's devices free
    assert _devices(mine, 0) == _devices(theirs, 0) == {GPU: ["gpu0", "gpu1"]}


def test_devices_of_a_pod_not_running_are_freed(oracle_binary: str, tmp_path: Path) -> None:
    steps = [{"addPod": _pod("b", 2)}, {"addPod": _pod("c", 2)}]
    mine, _ = _run(tmp_path, oracle_binary, _checkpoint([A_ON_NUMA0]), steps, running=False)
    assert sorted([*_devices(mine, 0)[GPU], *_devices(mine, 1)[GPU]]) == ["gpu0", "gpu1", "gpu2", "gpu3"]


def test_stand_in_pod_keeps_its_devices(oracle_binary: str, tmp_path: Path) -> None:
    # a pod known only from its CPU entries runs (a stand-in), so its
    # restored devices are not stale
    cpu = encode_cpu_checkpoint(
        CPUCheckpointData("static", CPUSet.parse("0,2-8,10-15"), {"uid-a": {"app": CPUSet.parse("1,9")}})
    )
    steps: list[dict[str, Any]] = [{"addPod": _pod("b", 2)}, {"removePod": "uid-a"}, {"addPod": _pod("c", 2)}]
    mine, theirs = _run(tmp_path, oracle_binary, _checkpoint([A_ON_NUMA0]), steps, running=False, cpu_state=cpu)
    assert _devices(mine, 0) == _devices(theirs, 0) == {GPU: ["gpu2", "gpu3"]}
    assert _devices(mine, 2) == {GPU: ["gpu0", "gpu1"]}


def test_entry_with_a_bad_allocation_response_is_skipped(oracle_binary: str, tmp_path: Path) -> None:
    bad = DeviceEntry("uid-a", "app", GPU, {1: ("gpu2", "gpu3")}, b"\x0a\x05ab")  # a length past the end
    good = DeviceEntry("uid-a", "side", GPU, {0: ("gpu0",)}, b"")
    mine, theirs = _run(tmp_path, oracle_binary, _checkpoint([bad, good]), [{"addPod": _pod("b", 2)}])
    # gpu0 held (the good entry), gpu2 and gpu3 free (the bad one skipped)
    assert _devices(mine, 0) == _devices(theirs, 0) == {GPU: ["gpu2", "gpu3"]}


@pytest.mark.parametrize("held", [False, True], ids=["new-pod", "held"])
def test_resource_without_a_plugin(oracle_binary: str, tmp_path: Path, held: bool) -> None:
    # registered before the restart, its plugin gone: no healthy device
    entries = [DeviceEntry("uid-a", "app", NIC, {-1: ("nic0",)}, b"")] if held else []
    ckpt = _checkpoint(entries, {GPU: ["gpu0", "gpu1", "gpu2", "gpu3"], NIC: ["nic0"]})
    mine, theirs = _run(tmp_path, oracle_binary, ckpt, [{"addPod": _pod("b", 0, extra={NIC: "1"})}])
    reason, message = _rejection(mine, 0)
    assert (reason, message) == _rejection(theirs, 0)
    assert "no healthy devices present" in message or "unavailable" in message
