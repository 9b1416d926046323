"""Checkpoints whose maps are keyed by NUMA node ids (integers in Go).

``encoding/json`` decodes an integer map key with ``strconv.ParseInt`` (or
``ParseUint``) over 64 bits and then checks it against the key type's own
size (``reflect.Value.OverflowInt``): a key outside the type is a type
error (``json: cannot unmarshal number K into Go struct field
S.field of type int``), the element it names is decoded but dropped, and
decoding goes on. The memory manager's checkpoint keys its machine state
by ``int`` NUMA ids, the device manager's keeps device ids by ``int64``
NUMA ids; a key past either makes the checkpoint unreadable to the
kubelet. The memory manager reads its legacy V1 format last, as
``MemoryManagerCheckpointV1`` (pkg/kubelet/cm/memorymanager/state/
checkpoint.go), and that is the struct its type errors name.

Compared with the kubelet through the Go oracle.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.cm.devicemanager.checkpoint import DeviceEntry
from podnuma.golang.json import go_json_parse, go_json_unmarshal
from podnuma.golang.types import GoBasic, GoField, GoMap, GoStruct
from tests.oracle.harness import (
    compare,
    run_oracle,
    run_oracle_checkpoints,
    run_podnuma,
    write_scenario,
)
from tests.oracle.test_device_restore_differential import (
    ALLOC_RESP,
    CONFIG,
    GPU,
    MACHINE,
    _checkpoint,
    _pod,
)

HEADER = {"apiVersion": "podnuma.io/v1", "kind": "Scenario"}

#: one NUMA node's machine state: 8 GiB, 1 GiB reserved
_NODE_STATE = (
    '{"numberOfAssignments":0,"memoryMap":{"memory":{"total":8589934592,"systemReserved":1073741824,'
    '"allocatable":7516192768,"reserved":0,"free":7516192768}},"cells":[0]}'
)


def _memory_scenario(tmp_path: Path, checkpoint: str) -> tuple[Path, dict[str, Any]]:
    (tmp_path / "memory_manager_state").write_text(checkpoint)
    doc = {
        **HEADER,
        "node": {"name": "worker", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                                   "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}},
        "kubeletConfig": {"memoryManagerPolicy": "Static", "kubeReserved": {"memory": "924Mi"},
                          "evictionHard": {"memory.available": "100Mi"},
                          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]},
        "state": {"memoryManagerFile": str(tmp_path / "memory_manager_state")},
        "steps": [],
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path, doc


@pytest.mark.parametrize("key", ["9223372036854775808", "99999999999999999999", "-9223372036854775809"])
def test_memory_checkpoint_numa_key_outside_go_int_is_refused(oracle_binary: str, tmp_path: Path,
                                                             key: str) -> None:
    """A ``machineState`` key past Go's ``int`` makes the checkpoint
    unreadable: the kubelet does not start, with the JSON type error."""
    path, doc = _memory_scenario(
        tmp_path, f'{{"policyName":"Static","machineState":{{"0":{_NODE_STATE},"{key}":{_NODE_STATE}}},"checksum":0}}')
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert f"cannot unmarshal number {key}" in theirs.message
    assert f"cannot unmarshal number {key}" in mine.message
    assert compare(mine, theirs, doc) == []


@pytest.mark.parametrize("key", ["1e2", "9223372036854775808"])
def test_memory_checkpoint_type_error_names_the_v1_struct(oracle_binary: str, tmp_path: Path, key: str) -> None:
    """The error of the V1 read, the last format tried, names
    ``MemoryManagerCheckpointV1.machineState``."""
    path, doc = _memory_scenario(
        tmp_path, f'{{"policyName":"Static","machineState":{{"{key}":{_NODE_STATE}}},"checksum":0}}')
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert "MemoryManagerCheckpointV1.machineState of type int" in theirs.message
    assert "MemoryManagerCheckpointV1.machineState of type int" in mine.message
    assert compare(mine, theirs, doc) == []


@pytest.mark.parametrize("key", [1 << 63, -(1 << 63) - 1, 1 << 64])
def test_device_checkpoint_numa_key_outside_int64_drops_the_checkpoint(oracle_binary: str, tmp_path: Path,
                                                                       key: int) -> None:
    """A device checkpoint whose entry keys its device ids by a NUMA id past
    int64 cannot be read: the kubelet starts with no device allocated, so
    pod ``a``'s GPUs go to the next pod."""
    (tmp_path / "devices").write_bytes(_checkpoint([DeviceEntry("uid-a", "app", GPU, {key: ("gpu0", "gpu1")},
                                                                ALLOC_RESP)]))
    doc = {**HEADER, "node": copy.deepcopy(MACHINE), "kubeletConfig": copy.deepcopy(CONFIG),
           "state": {"deviceManagerFile": "devices", "pods": [_pod("a", 2)]}, "steps": [{"addPod": _pod("b", 2)}]}
    path = write_scenario(doc, tmp_path / "s.json")
    mine, theirs = run_podnuma(path), run_oracle_checkpoints(oracle_binary, path)
    assert theirs.doc is not None
    assert sorted(theirs.doc["steps"][0]["containers"][0]["devices"][GPU]) == ["gpu0", "gpu1"]
    assert compare(mine, theirs, doc) == []


def test_map_key_is_checked_against_its_type_size_after_the_element() -> None:
    """The key range is the key type's: 127 fits an ``int8`` key, 128 does
    not (a type error naming the number and the key type, the element
    dropped, decoding going on); the element is decoded first, so its own
    type error is the one reported."""
    int8 = GoBasic("int8")
    typ = GoStruct("p.S", (GoField("M", GoMap(int8, GoBasic("string")), "m"),))
    value, err = go_json_unmarshal(go_json_parse('{"m":{"127":"a","128":"b","-128":"c"}}'), typ)
    assert value["M"] == {127: "a", -128: "c"}
    assert err == "json: cannot unmarshal number 128 into Go struct field S.m of type int8"
    uint8 = GoBasic("uint8")
    typ = GoStruct("p.S", (GoField("M", GoMap(uint8, GoBasic("string")), "m"),))
    value, err = go_json_unmarshal(go_json_parse('{"m":{"256":1,"255":"x"}}'), typ)
    assert value["M"] == {255: "x"}
    assert err == "json: cannot unmarshal number into Go struct field S.m of type string"
