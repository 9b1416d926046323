"""The device manager's checkpoint *writes* against the real kubelet code:
``podnuma simulate --checkpoint-dir`` and ``kubelet-oracle simulate
--checkpoint-dir`` must leave the same ``device-plugins/kubelet_internal_checkpoint``,
byte for byte.

The real device manager lists entries and ids in Go map order (another
order on every run); the oracle puts the file it wrote in podnuma's order
with upstream's own checkpoint types (its checksum verified first), so
the bytes compared are the kubelet's content in one fixed order. Each
case also asserts what the file holds, so that a file neither engine
wrote could not pass."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from podnuma.cm.devicemanager.checkpoint import (
    DeviceEntry,
    encode_device_checkpoint,
    read_device_checkpoint,
)
from tests.oracle import generate
from tests.oracle.harness import (
    Outcome,
    compare,
    run_oracle_checkpoints,
    run_podnuma,
    write_scenario,
)

DEVICE_FILE = "device-plugins/kubelet_internal_checkpoint"
GPU = "example.com/gpu"
NIC = "example.com/nic"
MACHINE = {
    "synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                  "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"},
    "devices": {
        GPU: [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1", "numaNodes": [0]},
              {"id": "gpu2", "numaNodes": [1]}, {"id": "gpu3", "numaNodes": [1]}],
        NIC: [{"id": "nic-b"}, {"id": "nic-a"}, {"id": "nic-x", "numaNodes": [0, 1]}],
    },
}
CONFIG = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "best-effort"}
# an allocation response with two env vars written in reverse key order and
# a device node: rewritten with the map entries by key
ALLOC_RESP = b"\n\x06\n\x01Z\x12\x01z\n\x06\n\x01A\x12\x01a\x1a\x14\n\x06/dev/x\x12\x06/dev/y\x1a\x02rw"


def _pod(name: str, limits: dict[str, str], *, init: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi", **limits}}}]}
    if init is not None:
        spec["initContainers"] = [{"name": "init", "resources": {"limits": {"cpu": "1", "memory": "1Gi", **init}}}]
    return {"metadata": {"name": name, "namespace": "d", "uid": f"uid-{name}"}, "spec": spec}


def _run(tmp_path: Path, oracle: str, steps: list[dict[str, Any]], *, machine: dict[str, Any] | None = None,
         state: dict[str, Any] | None = None) -> tuple[Outcome, Outcome]:
    doc: dict[str, Any] = {"apiVersion": "podnuma.io/v1", "kind": "Scenario",
                           "node": copy.deepcopy(MACHINE if machine is None else machine),
                           "kubeletConfig": copy.deepcopy(CONFIG), "steps": steps}
    if state is not None:
        doc["state"] = state
    path = write_scenario(doc, tmp_path / "s.json")
    mine, theirs = run_podnuma(path), run_oracle_checkpoints(oracle, path)
    assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
    diffs = compare(mine, theirs, doc, check_bytes=True)
    assert not diffs, diffs
    assert mine.files.get(DEVICE_FILE) == theirs.files.get(DEVICE_FILE)
    return mine, theirs


def _held(outcome: Outcome) -> dict[tuple[str, str, str], tuple[str, ...]]:
    data = read_device_checkpoint(outcome.files[DEVICE_FILE])
    assert data.error is None
    return {(e.pod_uid, e.container, e.resource): e.device_ids() for e in data.entries}


def test_plugins_registering_write_the_checkpoint(oracle_binary: str, tmp_path: Path) -> None:
    mine, _ = _run(tmp_path, oracle_binary, [])
    data = read_device_checkpoint(mine.files[DEVICE_FILE])
    assert data.entries == ()
    assert data.registered == {GPU: ("gpu0", "gpu1", "gpu2", "gpu3"), NIC: ("nic-a", "nic-b", "nic-x")}


def test_no_devices_no_file(oracle_binary: str, tmp_path: Path) -> None:
    machine = {k: v for k, v in MACHINE.items() if k != "devices"}
    mine, theirs = _run(tmp_path, oracle_binary, [{"addPod": _pod("a", {})}], machine=machine)
    assert DEVICE_FILE not in mine.files and DEVICE_FILE not in theirs.files


def test_removed_pod_stays_until_the_next_write(oracle_binary: str, tmp_path: Path) -> None:
    # UpdateAllocatedDevices frees a removed pod's devices without writing
    steps = [{"addPod": _pod("a", {GPU: "2"})}, {"addPod": _pod("b", {GPU: "1", NIC: "2"})}, {"removePod": "d/a"}]
    (tmp_path / "1").mkdir()
    mine, _ = _run(tmp_path / "1", oracle_binary, steps)
    held = _held(mine)
    assert set(held) == {("uid-a", "app", GPU), ("uid-b", "app", GPU), ("uid-b", "app", NIC)}
    # the next allocation writes it without pod a
    (tmp_path / "2").mkdir()
    mine, _ = _run(tmp_path / "2", oracle_binary, [*steps, {"addPod": _pod("c", {GPU: "1"})}])
    assert ("uid-a", "app", GPU) not in _held(mine) and ("uid-c", "app", GPU) in _held(mine)


def test_multi_numa_device_and_init_reuse(oracle_binary: str, tmp_path: Path) -> None:
    steps = [{"addPod": _pod("a", {NIC: "3"}, init={NIC: "1"})}]
    mine, _ = _run(tmp_path, oracle_binary, steps)
    raw = json.loads(mine.files[DEVICE_FILE])
    per_numa = {e["ContainerName"]: e["DeviceIDs"] for e in raw["Data"]["PodDeviceEntries"]}
    assert len(per_numa) == 2 and all(per_numa.values())


def test_failed_allocation_is_not_written(oracle_binary: str, tmp_path: Path) -> None:
    # the GPUs are taken, then the NICs run out: no write after the failure
    steps = [{"addPod": _pod("a", {NIC: "3"})}, {"addPod": _pod("b", {GPU: "2", NIC: "1"})}]
    mine, theirs = _run(tmp_path, oracle_binary, steps)
    assert mine.doc is not None and mine.doc["steps"][1]["admitted"] is False
    assert set(_held(mine)) == {("uid-a", "app", NIC)}


def test_restored_file_kept_as_found_without_plugins(oracle_binary: str, tmp_path: Path) -> None:
    machine = {k: v for k, v in MACHINE.items() if k != "devices"}
    raw = encode_device_checkpoint([DeviceEntry("uid-a", "app", GPU, {1: ("gpu3", "gpu2")}, ALLOC_RESP)],
                                   {GPU: ["gpu3", "gpu2"]})
    (tmp_path / "devices").write_bytes(raw)
    mine, theirs = _run(tmp_path, oracle_binary, [{"addPod": _pod("b", {})}], machine=machine,
                        state={"deviceManagerFile": "devices"})
    assert mine.files[DEVICE_FILE] == theirs.files[DEVICE_FILE] == raw


def test_restored_entries_written_again(oracle_binary: str, tmp_path: Path) -> None:
    raw = encode_device_checkpoint([DeviceEntry("uid-a", "app", GPU, {1: ("gpu3", "gpu2")}, ALLOC_RESP)],
                                   {GPU: ["gpu3", "gpu2"], "example.com/gone": ["g0"]})
    (tmp_path / "devices").write_bytes(raw)
    pod_a = _pod("a", {GPU: "2"})
    mine, _ = _run(tmp_path, oracle_binary, [{"addPod": _pod("b", {GPU: "1"})}],
                   state={"deviceManagerFile": "devices", "pods": [pod_a]})
    data = read_device_checkpoint(mine.files[DEVICE_FILE])
    (a,) = [e for e in data.entries if e.pod_uid == "uid-a"]
    assert a.devices == {1: ("gpu2", "gpu3")}
    assert a.alloc_resp != ALLOC_RESP and sorted(a.alloc_resp) == sorted(ALLOC_RESP)  # env entries by key
    assert data.registered["example.com/gone"] == ()


# -- random scenarios -----------------------------------------------------------------------

RANDOM_SEED = int(os.environ.get("PODNUMA_DEVICE_CKPT_SEED", "21"))
RANDOM_COUNT = int(os.environ.get("PODNUMA_DEVICE_CKPT_COUNT", "40"))


def test_random_scenarios_with_devices(oracle_binary: str, tmp_path: Path) -> None:
    """Seeded random scenarios of the differential generator that have
    devices or a starting device checkpoint, until ``RANDOM_COUNT`` ran."""
    compared = written = 0
    failures: list[str] = []
    index = 0
    while compared < RANDOM_COUNT and index < RANDOM_COUNT * 20:
        work = tmp_path / str(index)
        work.mkdir()
        doc = generate.scenario(RANDOM_SEED, index, work, oracle_binary)
        index += 1
        state = doc.get("state") or {}
        if not doc["node"].get("devices") and "deviceManager" not in state and "deviceManagerFile" not in state:
            continue
        path = write_scenario(doc, work / "s.json")
        mine, theirs = run_podnuma(path), run_oracle_checkpoints(oracle_binary, path)
        compared += 1
        if mine.kind != "ok" or theirs.kind != "ok":
            continue
        notes: list[str] = []
        diffs = compare(mine, theirs, doc, check_bytes=True, notes=notes)
        if notes:
            continue  # a random device pick: later steps (and the file) not comparable
        if DEVICE_FILE in theirs.files:
            written += 1
        if diffs or mine.files.get(DEVICE_FILE) != theirs.files.get(DEVICE_FILE):
            failures.append(f"{RANDOM_SEED}:{index - 1}: {diffs or 'device checkpoint bytes differ'}")
    assert compared == RANDOM_COUNT
    assert not failures, "\n".join(failures[:5])
    assert written >= RANDOM_COUNT // 2, f"only {written} of {compared} runs wrote a device checkpoint"
