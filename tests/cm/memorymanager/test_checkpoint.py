"""Tests of the memory manager checkpoint (podnuma.cm.memorymanager.checkpoint).

The restore table follows upstream's TestCheckpointStateRestore
(pkg/kubelet/cm/memorymanager/state/state_checkpoint_test.go) with its
fixture checksums; TestMemoryManagerCheckpoint_MarshalCheckpoint_HashCompatibility
and _RoundTrip are covered by the legacy-checksum and round-trip tests.
memory_checkpoint_vectors.json holds bytes produced by Go's encoding/json
and go-spew for the kubelet's checkpoint structs (V3 as v1.37 writes it, and
V2/V1 as older kubelets wrote them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.checkpoint import CheckpointError, string_checksum
from podnuma.cm.memorymanager.checkpoint import (
    MemoryCheckpointData,
    check_policy,
    decode_memory_checkpoint,
    encode_memory_checkpoint,
    load_memory_checkpoint,
    memory_checkpoint_object,
    restore_memory_state,
)
from podnuma.cm.memorymanager.state import Block, MemoryTable, NUMANodeState
from podnuma.errors import KubeletStartupError
from podnuma.fileio import read_memory_checkpoint_file, write_memory_checkpoint_file

_VECTORS: dict[str, dict[str, str]] = json.loads(
    (Path(__file__).parent / "memory_checkpoint_vectors.json").read_text()
)

# -- upstream restore table ------------------------------------------------------

_MS_2048 = '"machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}}'
_MS_OTHER = '"machineState":{"0":{"numberOfAssignments":5,"memoryMap":{"memory":{"total":1024,"systemReserved":256,"allocatable":768,"reserved":256,"free":512}},"cells":[]}}'
_ENTRIES = '"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
_ENTRIES_X = '"entries":{"pod":{"containerX":[{"numaAffinity":[0],"type":"memory","size":128}]}}'
_POD_ENTRIES = '"podEntries":{"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
_POD_ENTRIES_Y = '"podEntries":{"podY":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":64}]}}'
_DATA = "{" + f'"policyName":"static",{_MS_2048},{_ENTRIES}' + "}"
_DATA_UNKNOWN = "{" + f'"unknownField":"value","policyName":"static",{_MS_2048},{_ENTRIES}' + "}"
_DATA_PODS = "{" + f'"policyName":"static",{_MS_2048},{_ENTRIES},{_POD_ENTRIES}' + "}"


def _q(text: str) -> str:
    return json.dumps(text)


def _blob(*parts: str) -> str:
    return "{" + ",".join(parts) + "}"


_EXPECTED_MS = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 512, 1024)}, [])}
_EXPECTED_ENTRIES = {"pod": {"container1": [Block([0], "memory", 512)]}}
_EXPECTED_POD_ENTRIES = {"pod": [Block([0], "memory", 512)]}

# (description, gate requirement (None = both), content, policy, error, expected pod entries?)
_RESTORE_CASES: list[tuple[str, bool | None, str, str, str, bool]] = [
    (
        "Fail to restore checkpoint without data section", None,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 4215593881', '"dataChecksum": 1234'),
        "none",
        "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: unexpected end of JSON input",
        False,
    ),
    (
        "Fail to restore checkpoint without dataChecksum section", None,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 4215593881', f'"data": {_q(_DATA)}'),
        "none", "could not load v3 checkpoint: checkpoint is corrupted", False,
    ),
    (
        "Restore valid checkpoint", None,
        _blob('"policyName":"other"', _MS_OTHER, _ENTRIES_X, '"checksum": 1234', f'"data": {_q(_DATA)}',
              '"dataChecksum": 1849615440'),
        "static", "", False,
    ),
    (
        "Fail to restore checkpoint with invalid dataChecksum", None,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 4215593881', f'"data": {_q(_DATA)}',
              '"dataChecksum": 1234'),
        "none", "could not load v3 checkpoint: checkpoint is corrupted", False,
    ),
    (
        "Fail to restore checkpoint with invalid data JSON", None,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 4215593881', '"data": "{"',
              '"dataChecksum": 1234'),
        "none",
        "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: unexpected end of JSON input",
        False,
    ),
    ("Fail to restore checkpoint with invalid JSON", None, "{", "none", "unexpected end of JSON input", False),
    (
        "Fail to restore checkpoint with invalid policy name", None,
        _blob('"policyName":"other"', _MS_OTHER, _ENTRIES_X, '"checksum": 1234', f'"data": {_q(_DATA)}',
              '"dataChecksum": 1849615440'),
        "none", '[memorymanager] configured policy "none" differs from state checkpoint policy "static"', False,
    ),
    (
        "Restore checkpoint ignoring unknown fields in data section", None,
        _blob('"policyName":"other"', _MS_OTHER, _ENTRIES_X, '"checksum": 1234', f'"data": {_q(_DATA_UNKNOWN)}',
              '"dataChecksum": 2100279793'),
        "static", "", False,
    ),
    (
        "Restore checkpoint from v1 (migration)", None,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 4215593881'),
        "static", "", False,
    ),
    (
        "Restore checkpoint from v1 (migration) with checksum zeroed", None,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 0'),
        "static", "", False,
    ),
    (
        "Fail to restore checkpoint from v1 with invalid checksum", None,
        _blob('"policyName":"static"', _MS_2048,
              '"entries":{"pod":{"container1":[{"affinity":[0],"type":"memory","size":512}]}}',
              '"checksum": 101010'),
        "static", "checkpoint is corrupted", False,
    ),
    (
        "Restore checkpoint from v2 with PodLevelResourceManagers enabled", True,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, _POD_ENTRIES, '"checksum": 1278640530'),
        "static", "", True,
    ),
    (
        "Restore checkpoint from v2 with PodLevelResourceManagers disabled", False,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, _POD_ENTRIES, '"checksum": 1278640530'),
        "static", "", False,
    ),
    (
        "Restore checkpoint from v2 with zeroed checksum and with PodLevelResourceManagers disabled", False,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, _POD_ENTRIES, '"checksum": 0'),
        "static", "", False,
    ),
    (
        "Fail to restore checkpoint from v2 with invalid checksum", None,
        _blob('"policyName":"static"', _MS_2048, _ENTRIES, _POD_ENTRIES, '"checksum": 101010'),
        "static", "checkpoint is corrupted", False,
    ),
    (
        "Restore checkpoint from v3 with PodLevelResourceManagers enabled", True,
        _blob('"policyName":"other"', _MS_OTHER, _ENTRIES_X, _POD_ENTRIES_Y, '"checksum": 1234',
              f'"data": {_q(_DATA_PODS)}', '"dataChecksum": 637296054'),
        "static", "", True,
    ),
    (
        "Restore checkpoint from v3 with PodLevelResourceManagers disabled", False,
        _blob('"policyName":"other"', _MS_OTHER, _ENTRIES_X, _POD_ENTRIES_Y, '"checksum": 1234',
              f'"data": {_q(_DATA_PODS)}', '"dataChecksum": 637296054'),
        "static", "", False,
    ),
]  # fmt: skip


@pytest.mark.parametrize("gate", [False, True], ids=["PLRM=false", "PLRM=true"])
@pytest.mark.parametrize(
    ("description", "requirement", "content", "policy", "error", "pods"),
    _RESTORE_CASES,
    ids=[c[0] for c in _RESTORE_CASES],
)
def test_checkpoint_state_restore(
    gate: bool, description: str, requirement: bool | None, content: str, policy: str, error: str, pods: bool
) -> None:
    if requirement is not None and requirement != gate:
        pytest.skip("feature gate requirement not met")
    if error:
        with pytest.raises(KubeletStartupError) as info:
            restore_memory_state(content, policy, pod_level_resource_managers=gate)
        assert str(info.value).startswith("could not restore state from checkpoint: " + error + ", please drain")
        assert str(info.value).endswith(
            'delete the memory manager checkpoint file "/var/lib/kubelet/memory_manager_state" before restarting Kubelet'
        )
        return
    data = restore_memory_state(content, policy, pod_level_resource_managers=gate)
    assert data.machine_state == _EXPECTED_MS
    assert data.entries == _EXPECTED_ENTRIES
    assert data.pod_entries == (_EXPECTED_POD_ENTRIES if pods else {})


def test_restore_accepts_a_decoded_object() -> None:
    obj = json.loads(_blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 4215593881'))
    data = decode_memory_checkpoint(obj)
    assert data.policy_name == "static"
    assert data.entries == _EXPECTED_ENTRIES


@pytest.mark.parametrize(
    ("content", "version"),
    [
        (_blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 4215593881'), 1),
        (_blob('"policyName":"static"', _MS_2048, _ENTRIES, '"checksum": 0'), 1),
        (_blob('"policyName":"static"', _MS_2048, _ENTRIES, _POD_ENTRIES, '"checksum": 1278640530'), 2),
        # a V2 file with a zero checksum only loads as V1 (pod entries lost)
        (_blob('"policyName":"static"', _MS_2048, _ENTRIES, _POD_ENTRIES, '"checksum": 0'), 1),
        (
            _blob('"policyName":"x"', _MS_OTHER, '"checksum": 1', f'"data": {_q(_DATA)}', '"dataChecksum": 1849615440'),
            3,
        ),
    ],
)
def test_load_version(content: str, version: int) -> None:
    assert load_memory_checkpoint(content)[1] == version


def test_v2_pod_entries_dropped_when_loaded_as_v1() -> None:
    content = _blob('"policyName":"static"', _MS_2048, _ENTRIES, _POD_ENTRIES, '"checksum": 0')
    assert decode_memory_checkpoint(content, pod_level_resource_managers=True).pod_entries == {}


def test_v3_type_error_in_inline_part_does_not_fall_back() -> None:
    content = _blob('"policyName":"static"', '"checksum": "x"', f'"data": {_q(_DATA)}', '"dataChecksum": 1849615440')
    with pytest.raises(CheckpointError, match="^could not load v3 checkpoint: failed to deserialize memory manager checkpoint: json: cannot unmarshal string"):
        decode_memory_checkpoint(content)


def test_empty_file() -> None:
    with pytest.raises(CheckpointError, match="^unexpected end of JSON input$"):
        decode_memory_checkpoint(b"")


def test_check_policy() -> None:
    data = MemoryCheckpointData("None")
    check_policy(data, "None")
    with pytest.raises(KubeletStartupError, match='configured policy \\\\?"Static\\\\?" differs'):
        check_policy(data, "Static")


# -- data checksum (upstream fixtures) ---------------------------------------------


@pytest.mark.parametrize(
    ("data", "checksum"),
    [(_DATA, 1849615440), (_DATA_UNKNOWN, 2100279793), (_DATA_PODS, 637296054)],
)
def test_data_checksum_fixtures(data: str, checksum: int) -> None:
    assert string_checksum(data) == checksum


# -- writing: Go-generated vectors -----------------------------------------------------


def _from_v3(text: str) -> MemoryCheckpointData:
    return decode_memory_checkpoint(text, pod_level_resource_managers=True)


@pytest.mark.parametrize("name", sorted(_VECTORS))
def test_encode_matches_go(name: str) -> None:
    vec = _VECTORS[name]
    data = _from_v3(vec["v3"])
    assert encode_memory_checkpoint(data) == vec["v3"].encode()


@pytest.mark.parametrize("name", sorted(_VECTORS))
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_older_formats_written_by_go_load(name: str, version: str) -> None:
    vec = _VECTORS[name]
    expected = _from_v3(vec["v3"])
    loaded = decode_memory_checkpoint(vec[version], pod_level_resource_managers=True)
    assert load_memory_checkpoint(vec[version])[1] == int(version[1])
    assert loaded.policy_name == expected.policy_name
    assert loaded.machine_state == expected.machine_state
    assert loaded.entries == expected.entries
    assert loaded.pod_entries == (expected.pod_entries if version == "v2" else {})


def test_inline_v1_part_is_what_an_old_kubelet_reads() -> None:
    # MarshalCheckpoint_HashCompatibility: the top-level checksum of a V3
    # file verifies as a V1 checkpoint under the legacy name
    vec = _VECTORS["static-podentries"]
    obj: dict[str, Any] = json.loads(vec["v3"])
    v1_only = {k: obj[k] for k in ("policyName", "machineState", "entries", "checksum")}
    assert load_memory_checkpoint(json.dumps(v1_only))[1] == 1
    assert obj["checksum"] == json.loads(vec["v1"])["checksum"]


def test_round_trip_and_object() -> None:
    data = MemoryCheckpointData(
        "Static",
        {0: NUMANodeState(1, {"memory": MemoryTable(2048, 512, 1536, 1024, 512)}, [0])},
        {"pod": {"container1": [Block([0], "memory", 1024)]}},
        {"pod": [Block([0], "memory", 512)]},
    )
    blob = encode_memory_checkpoint(data)
    assert decode_memory_checkpoint(blob, pod_level_resource_managers=True) == data
    obj = memory_checkpoint_object(data)
    assert list(obj) == ["policyName", "machineState", "entries", "checksum", "data", "dataChecksum"]
    assert obj["dataChecksum"] == string_checksum(obj["data"])


def test_files(tmp_path: Path) -> None:
    path = tmp_path / "memory_manager_state"
    assert read_memory_checkpoint_file(path) is None
    data = _from_v3(_VECTORS["static-group"]["v3"])
    write_memory_checkpoint_file(path, data)
    assert path.read_bytes() == _VECTORS["static-group"]["v3"].encode()
    assert read_memory_checkpoint_file(path) == data
