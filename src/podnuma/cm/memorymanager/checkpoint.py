"""The memory manager's checkpoint file (``/var/lib/kubelet/memory_manager_state``).

Mirrors ``pkg/kubelet/cm/memorymanager/state/checkpoint.go`` and the
loading, migration and restore parts of ``state/state_checkpoint.go``
(kubelet v1.37):

- v1.37 writes format V3: the V1 fields inline at the top level (policy
  name, machine state, entries) with a real V1 checksum computed under the
  legacy type name ``MemoryManagerCheckpoint`` (so older kubelets can still
  read the file), plus ``data``, the JSON of the full payload (pod entries
  included), and ``dataChecksum`` = FNV-32a of ``"(string)" + data``.
- It reads V3, then V2, then V1, whatever the feature gates. In V3 only
  ``data``/``dataChecksum`` count; once either is set a bad V3 never falls
  back. V2 verifies its checksum under the legacy name (no zero allowance);
  V1 accepts a checksum of 0. Any V2 failure falls back to V1, whose error
  is then the one reported.
- Restoring checks the policy name; pod entries are kept only with the
  ``PodLevelResourceManagers`` gate.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Final

from podnuma.cm.checkpoint import (
    CHECKSUM,
    CORRUPT_CHECKPOINT,
    DEFAULT_STATE_DIR,
    CheckpointError,
    checkpoint_json,
    found_bytes,
    object_checksum,
    string_checksum,
    unmarshal_checkpoint,
)
from podnuma.cm.memorymanager.state import (
    Block,
    ContainerMemoryAssignments,
    MemoryTable,
    NUMANodeMap,
    NUMANodeState,
    PodMemoryAssignments,
)
from podnuma.errors import KubeletStartupError
from podnuma.golang.json import GoJSONError, go_json_marshal, go_json_parse, go_json_unmarshal
from podnuma.golang.strconv import go_quote
from podnuma.golang.types import (
    GO_INT,
    GO_STRING,
    GO_UINT64,
    GoField,
    GoMap,
    GoPtr,
    GoSlice,
    GoStruct,
)

__all__ = [
    "MEMORY_MANAGER_STATE_FILE",
    "MemoryCheckpointData",
    "check_policy",
    "decode_memory_checkpoint",
    "encode_memory_checkpoint",
    "load_memory_checkpoint",
    "memory_checkpoint_object",
    "policy_mismatch_message",
    "restore_error_message",
    "restore_memory_state",
]

#: the checkpoint's file name in the kubelet's root directory
MEMORY_MANAGER_STATE_FILE: Final = "memory_manager_state"


class MemoryCheckpointData:
    """What a memory manager checkpoint holds once restored.

    ``entries``: pod UID -> container name -> blocks; ``pod_entries``: pod
    UID -> the pod-level blocks (``podEntries[uid].memoryBlocks``).
    ``found``: the bytes of the file it was read from, in whatever format
    version (the kubelet leaves the file as found until it stores its
    state), or ``None``.
    """

    policy_name: str
    machine_state: NUMANodeMap
    entries: ContainerMemoryAssignments
    pod_entries: PodMemoryAssignments
    found: bytes | None

    def __init__(
        self,
        policy_name: str,
        machine_state: NUMANodeMap | None = None,
        entries: ContainerMemoryAssignments | None = None,
        pod_entries: PodMemoryAssignments | None = None,
        found: bytes | None = None,
    ) -> None:
        self.policy_name = policy_name
        self.machine_state = dict() if machine_state is None else machine_state
        self.entries = dict() if entries is None else entries
        self.pod_entries = dict() if pod_entries is None else pod_entries
        self.found = found

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(policy_name={self.policy_name!r}, machine_state={self.machine_state!r}, entries={self.entries!r}, pod_entries={self.pod_entries!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryCheckpointData) or other.__class__ is not self.__class__:
            return False
        return (self.policy_name, self.machine_state, self.entries, self.pod_entries) == (other.policy_name, other.machine_state, other.entries, other.pod_entries)


# ---------------------------------------------------------------------------
# Go type descriptions of the checkpoint structs
# ---------------------------------------------------------------------------

_RESOURCE_NAME: Final = GO_STRING.named("v1.ResourceName")
_MEMORY_TABLE: Final = GoStruct(
    "state.MemoryTable",
    (
        GoField("TotalMemSize", GO_UINT64, "total"),
        GoField("SystemReserved", GO_UINT64, "systemReserved"),
        GoField("Allocatable", GO_UINT64, "allocatable"),
        GoField("Reserved", GO_UINT64, "reserved"),
        GoField("Free", GO_UINT64, "free"),
    ),
)
_NODE_STATE: Final = GoStruct(
    "state.NUMANodeState",
    (
        GoField("NumberOfAssignments", GO_INT, "numberOfAssignments"),
        GoField("MemoryMap", GoMap(_RESOURCE_NAME, GoPtr(_MEMORY_TABLE)), "memoryMap"),
        GoField("Cells", GoSlice(GO_INT), "cells"),
    ),
)
_NODE_MAP: Final = GoMap(GO_INT, GoPtr(_NODE_STATE), "state.NUMANodeMap")
_BLOCK: Final = GoStruct(
    "state.Block",
    (
        GoField("NUMAAffinity", GoSlice(GO_INT), "numaAffinity"),
        GoField("Type", _RESOURCE_NAME, "type"),
        GoField("Size", GO_UINT64, "size"),
    ),
)
_ENTRIES: Final = GoMap(GO_STRING, GoMap(GO_STRING, GoSlice(_BLOCK)), "state.ContainerMemoryAssignments")
_POD_ENTRY: Final = GoStruct(
    "state.PodEntry", (GoField("MemoryBlocks", GoSlice(_BLOCK), "memoryBlocks", omitempty=True),)
)
_POD_ENTRIES: Final = GoMap(GO_STRING, _POD_ENTRY, "state.PodMemoryAssignments")

_F_POLICY: Final = GoField("PolicyName", GO_STRING, "policyName")
_F_MACHINE: Final = GoField("MachineState", _NODE_MAP, "machineState")
_F_ENTRIES: Final = GoField("Entries", _ENTRIES, "entries", omitempty=True)
_F_POD_ENTRIES: Final = GoField("PodEntries", _POD_ENTRIES, "podEntries", omitempty=True)
_F_CHECKSUM: Final = GoField("Checksum", CHECKSUM, "checksum")

# V1 and V2 decode (and name their type errors) as MemoryManagerCheckpointV1/V2;
# their checksums are computed under the legacy name (the kubelet dumps
# MemoryManagerCheckpointV1/V2 and renames the first occurrence, the type name)
_V1_FIELDS: Final = (_F_POLICY, _F_MACHINE, _F_ENTRIES, _F_CHECKSUM)
_V2_FIELDS: Final = (_F_POLICY, _F_MACHINE, _F_ENTRIES, _F_POD_ENTRIES, _F_CHECKSUM)
_V1: Final = GoStruct("state.MemoryManagerCheckpointV1", _V1_FIELDS)
_V2: Final = GoStruct("state.MemoryManagerCheckpointV2", _V2_FIELDS)
_V1_HASHED: Final = GoStruct("state.MemoryManagerCheckpoint", _V1_FIELDS)
_V2_HASHED: Final = GoStruct("state.MemoryManagerCheckpoint", _V2_FIELDS)
# V3 (MemoryManagerCheckpoint) embeds V1 inline
_V3: Final = GoStruct(
    "state.MemoryManagerCheckpoint",
    (
        _F_POLICY, _F_MACHINE, _F_ENTRIES, _F_CHECKSUM,
        GoField("Data", GO_STRING, "data"),
        GoField("DataChecksum", CHECKSUM, "dataChecksum"),
    ),
)  # fmt: skip
_DATA: Final = GoStruct(
    "state.MemoryManagerCheckpointData", (_F_POLICY, _F_MACHINE, _F_ENTRIES, _F_POD_ENTRIES)
)


def _fresh(with_pod_entries: bool) -> dict[str, Any]:
    # newMemoryManagerCheckpointV1/V2/V3 start with empty, non-nil maps
    out: dict[str, Any] = {"MachineState": {}, "Entries": {}}
    if with_pod_entries:
        out["PodEntries"] = {}
    return out


def _v1_checksum(value: Mapping[str, Any], typ: GoStruct) -> int:
    view = dict(value)
    view["Checksum"] = 0
    return object_checksum(view, GoPtr(typ))


# ---------------------------------------------------------------------------
# Go values <-> state
# ---------------------------------------------------------------------------


def _blocks_from_go(items: Any) -> list[Block]:
    return [
        Block(list(b.get("NUMAAffinity") or []), b.get("Type", ""), b.get("Size", 0)) for b in (items or [])
    ]


def _machine_state_from_go(value: Any) -> NUMANodeMap:
    out: NUMANodeMap = {}
    for nid, node in (value or {}).items():
        if node is None:
            # a null node: podnuma keeps an empty node (upstream keeps nil)
            out[nid] = NUMANodeState(0, {}, [])
            continue
        tables: dict[str, MemoryTable] = {}
        for name, table in (node.get("MemoryMap") or {}).items():
            t = table or {}
            tables[name] = MemoryTable(
                t.get("TotalMemSize", 0),
                t.get("SystemReserved", 0),
                t.get("Allocatable", 0),
                t.get("Reserved", 0),
                t.get("Free", 0),
            )
        out[nid] = NUMANodeState(node.get("NumberOfAssignments", 0), tables, list(node.get("Cells") or []))
    return out


def _entries_from_go(value: Any) -> ContainerMemoryAssignments:
    return {
        pod: {name: _blocks_from_go(blocks) for name, blocks in (ctrs or {}).items()}
        for pod, ctrs in (value or {}).items()
    }


def _pod_entries_from_go(value: Any) -> PodMemoryAssignments:
    return {uid: _blocks_from_go((entry or {}).get("MemoryBlocks")) for uid, entry in (value or {}).items()}


def _blocks_to_go(blocks: list[Block]) -> list[dict[str, Any]]:
    return [{"NUMAAffinity": list(b.numa_affinity), "Type": b.type, "Size": b.size} for b in blocks]


def _machine_state_to_go(state: Mapping[int, NUMANodeState]) -> dict[int, Any]:
    return {
        nid: {
            "NumberOfAssignments": node.number_of_assignments,
            "MemoryMap": {
                name: {
                    "TotalMemSize": t.total,
                    "SystemReserved": t.system_reserved,
                    "Allocatable": t.allocatable,
                    "Reserved": t.reserved,
                    "Free": t.free,
                }
                for name, t in node.memory_map.items()
            },
            "Cells": list(node.cells),
        }
        for nid, node in state.items()
    }


def _entries_to_go(entries: ContainerMemoryAssignments) -> dict[str, Any]:
    return {pod: {name: _blocks_to_go(blocks) for name, blocks in ctrs.items()} for pod, ctrs in entries.items()}


# ---------------------------------------------------------------------------
# loading (loadAndMigrateCheckpointV3 and friends)
# ---------------------------------------------------------------------------


class _Loaded:
    policy_name: str
    machine_state: Any
    entries: Any
    pod_entries: Any
    version: int

    def __init__(
        self,
        policy_name: str,
        machine_state: Any,
        entries: Any,
        pod_entries: Any,
        version: int,
    ) -> None:
        self.policy_name = policy_name
        self.machine_state = machine_state
        self.entries = entries
        self.pod_entries = pod_entries
        self.version = version

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(policy_name={self.policy_name!r}, machine_state={self.machine_state!r}, entries={self.entries!r}, pod_entries={self.pod_entries!r}, version={self.version!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Loaded) or other.__class__ is not self.__class__:
            return False
        return (self.policy_name, self.machine_state, self.entries, self.pod_entries, self.version) == (other.policy_name, other.machine_state, other.entries, other.pod_entries, other.version)

    def __hash__(self) -> int:
        return hash((self.policy_name, self.machine_state, self.entries, self.pod_entries, self.version))


def _unmarshal(jv: Any, syntax_error: str | None, typ: GoStruct, with_pod_entries: bool) -> tuple[dict[str, Any], str | None]:
    return unmarshal_checkpoint(jv, syntax_error, typ, _fresh(with_pod_entries))


def _load_v3(jv: Any, syntax_error: str | None) -> tuple[_Loaded | None, str | None, dict[str, Any]]:
    cp, err = _unmarshal(jv, syntax_error, _V3, False)
    if err is not None:
        return None, f"failed to deserialize memory manager checkpoint: {err}", cp
    data_text: str = cp.get("Data", "")
    try:
        data_jv: Any = go_json_parse(data_text)
        data, derr = go_json_unmarshal(data_jv, _DATA, _fresh(True))
    except GoJSONError as exc:
        data, derr = _fresh(True), str(exc)
    if derr is not None:
        return None, f"failed to deserialize memory manager checkpoint data: {derr}", cp
    if cp.get("DataChecksum", 0) != string_checksum(data_text):
        return None, CORRUPT_CHECKPOINT, cp
    loaded = _Loaded(
        data.get("PolicyName", ""), data.get("MachineState"), data.get("Entries"), data.get("PodEntries"), 3
    )
    return loaded, None, cp


def _load_v2(jv: Any, syntax_error: str | None) -> _Loaded | None:
    cp, err = _unmarshal(jv, syntax_error, _V2, True)
    if err is not None:
        return None
    if cp.get("Checksum", 0) != _v1_checksum(cp, _V2_HASHED):  # no allowance for 0 in V2
        return None
    return _Loaded(cp.get("PolicyName", ""), cp.get("MachineState"), cp.get("Entries"), cp.get("PodEntries"), 2)


def _load_v1(jv: Any, syntax_error: str | None) -> _Loaded:
    cp, err = _unmarshal(jv, syntax_error, _V1, False)
    if err is not None:
        raise CheckpointError(err)
    ck = cp.get("Checksum", 0)
    if ck != 0 and ck != _v1_checksum(cp, _V1_HASHED):  # 0: accepted (old file backend)
        raise CheckpointError(CORRUPT_CHECKPOINT)
    return _Loaded(cp.get("PolicyName", ""), cp.get("MachineState"), cp.get("Entries"), {}, 1)


def _load(blob: bytes | str | Mapping[str, Any]) -> _Loaded:
    jv, syntax_error = checkpoint_json(blob)
    loaded, err, v3 = _load_v3(jv, syntax_error)
    if loaded is not None:
        return loaded
    if v3.get("Data", "") or v3.get("DataChecksum", 0) != 0:
        raise CheckpointError(f"could not load v3 checkpoint: {err}")
    loaded2 = _load_v2(jv, syntax_error)
    if loaded2 is not None:
        return loaded2
    return _load_v1(jv, syntax_error)


def _to_data(loaded: _Loaded, pod_level_resource_managers: bool) -> MemoryCheckpointData:
    return MemoryCheckpointData(
        loaded.policy_name,
        _machine_state_from_go(loaded.machine_state),
        _entries_from_go(loaded.entries),
        _pod_entries_from_go(loaded.pod_entries) if pod_level_resource_managers else {},
    )


def load_memory_checkpoint(blob: bytes | str | Mapping[str, Any]) -> tuple[str, int]:
    """Load only: (the checkpoint's policy name, the format version it was
    read as: 3, 2 or 1). Raises :class:`CheckpointError`."""
    loaded = _load(blob)
    return loaded.policy_name, loaded.version


def decode_memory_checkpoint(
    blob: bytes | str | Mapping[str, Any], *, pod_level_resource_managers: bool = False
) -> MemoryCheckpointData:
    """Read a checkpoint the way kubelet v1.37 does (V3 -> V2 -> V1 with
    their checksums). ``blob`` is the file's bytes (or text) or the decoded
    JSON object. With ``pod_level_resource_managers`` off, pod entries are
    dropped, as ``restoreState`` does.

    Raises :class:`CheckpointError` with the kubelet's inner error text; the
    policy check is :func:`check_policy` (or :func:`restore_memory_state`).
    """
    data = _to_data(_load(blob), pod_level_resource_managers)
    data.found = found_bytes(blob)
    return data


def policy_mismatch_message(configured: str, found: str) -> str:
    return (
        f"[memorymanager] configured policy {go_quote(configured)} differs from state checkpoint "
        f"policy {go_quote(found)}"
    )


def restore_error_message(reason: str, state_dir: str = DEFAULT_STATE_DIR) -> str:
    """``NewCheckpointState``'s wrapping of a restore failure."""
    path = os.path.join(state_dir, MEMORY_MANAGER_STATE_FILE)
    return (
        f"could not restore state from checkpoint: {reason}, please drain this node and delete "
        f"the memory manager checkpoint file {go_quote(path)} before restarting Kubelet"
    )


def check_policy(data: MemoryCheckpointData, configured_policy: str, state_dir: str = DEFAULT_STATE_DIR) -> None:
    """The kubelet refuses to start on a checkpoint of another policy
    (``KubeletStartupError`` with the kubelet's full message)."""
    if data.policy_name != configured_policy:
        raise KubeletStartupError(
            restore_error_message(policy_mismatch_message(configured_policy, data.policy_name), state_dir)
        )


def restore_memory_state(
    blob: bytes | str | Mapping[str, Any],
    configured_policy: str,
    *,
    pod_level_resource_managers: bool = False,
    state_dir: str = DEFAULT_STATE_DIR,
) -> MemoryCheckpointData:
    """``restoreState`` end to end (load, then policy check), raising
    :class:`KubeletStartupError` with the kubelet's full message."""
    try:
        loaded = _load(blob)
    except CheckpointError as err:
        raise KubeletStartupError(restore_error_message(str(err), state_dir)) from err
    data = _to_data(loaded, pod_level_resource_managers)
    check_policy(data, configured_policy, state_dir)
    return data


# ---------------------------------------------------------------------------
# writing (MemoryManagerCheckpointV3.MarshalCheckpoint)
# ---------------------------------------------------------------------------


def encode_memory_checkpoint(data: MemoryCheckpointData) -> bytes:
    """The bytes kubelet v1.37 writes (V3, compact JSON, no newline).

    Pod entries are written as given: leave them empty when the
    PodLevelResourceManagers gate is off (the kubelet does not store them).
    """
    payload: dict[str, Any] = {
        "PolicyName": data.policy_name,
        "MachineState": _machine_state_to_go(data.machine_state),
        "Entries": _entries_to_go(data.entries),
        "PodEntries": {uid: {"MemoryBlocks": _blocks_to_go(b)} for uid, b in data.pod_entries.items()},
    }
    data_text = go_json_marshal(payload, _DATA)
    top = {k: payload[k] for k in ("PolicyName", "MachineState", "Entries")}
    top["Checksum"] = _v1_checksum(top, _V1_HASHED)
    top["Data"] = data_text
    top["DataChecksum"] = string_checksum(data_text)
    return go_json_marshal(top, _V3).encode("utf-8")


def memory_checkpoint_object(data: MemoryCheckpointData) -> dict[str, Any]:
    """The checkpoint as a JSON object (key order as written)."""
    obj = json.loads(encode_memory_checkpoint(data))
    assert isinstance(obj, dict)
    return obj
