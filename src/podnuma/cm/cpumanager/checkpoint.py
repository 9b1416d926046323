"""The CPU manager's checkpoint file (``/var/lib/kubelet/cpu_manager_state``).

Mirrors ``pkg/kubelet/cm/cpumanager/state/checkpoint.go`` and the loading,
migration and restore parts of ``state_checkpoint.go`` (kubelet v1.37), plus
``PodEntry``'s JSON methods from ``state.go``:

- v1.37 writes format V4: the embedded V2 checkpoint at the top level
  (``policyName``, ``defaultCpuSet``, ``entries`` and the V2 ``checksum``,
  computed under the legacy type name, so older kubelets can still read the
  file; no ``podEntries`` there) plus ``data``, the JSON of the real payload
  (pod entries included), and ``dataChecksum`` = FNV-32a of spew's ``%#v``
  of that string, i.e. of ``"(string)" + data``.
- It reads V4, then V3, then V2 (never V1).  A V4 file whose ``data`` or
  ``dataChecksum`` is set never falls back.  V3 and V2 checksums are
  FNV-32a over spew's dump of the struct, accepted under the current type
  name or under the legacy name ``CPUManagerCheckpoint``; V2 also accepts a
  checksum of 0.
- Restoring then checks the policy name and parses the CPU sets, with the
  kubelet's error texts.
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
    dump_checksum,
    found_bytes,
    string_checksum,
    unmarshal_checkpoint,
)
from podnuma.errors import KubeletStartupError
from podnuma.golang.json import GoJSONError, go_json_marshal, go_json_parse, go_json_unmarshal
from podnuma.golang.spew import spew_sdump
from podnuma.golang.strconv import go_quote
from podnuma.golang.types import GO_INT, GO_STRING, GoField, GoMap, GoPtr, GoStruct
from podnuma.machine.cpuset import CPUSet, parse_go_cpuset

__all__ = [
    "CPU_MANAGER_STATE_FILE",
    "CPUCheckpointData",
    "check_policy",
    "cpu_checkpoint_object",
    "debug_dump",
    "decode_cpu_checkpoint",
    "encode_cpu_checkpoint",
    "load_cpu_checkpoint",
    "parse_go_cpuset",
    "restore_cpu_state",
    "restore_error_message",
]

#: the checkpoint's file name in the kubelet's root directory
CPU_MANAGER_STATE_FILE: Final = "cpu_manager_state"



class CPUCheckpointData:
    """What a CPU manager checkpoint holds once restored.

    ``entries``: pod UID -> container name -> exclusive CPUs;
    ``pod_entries``: pod UID -> the pod-level CPU set (``podEntries``).
    ``found``: the bytes of the file it was read from, in whatever format
    version (the kubelet leaves the file as found until it stores its
    state), or ``None``.
    """

    policy_name: str
    default_cpuset: CPUSet
    entries: dict[str, dict[str, CPUSet]]
    pod_entries: dict[str, CPUSet]
    found: bytes | None

    def __init__(
        self,
        policy_name: str,
        default_cpuset: CPUSet,
        entries: dict[str, dict[str, CPUSet]] | None = None,
        pod_entries: dict[str, CPUSet] | None = None,
        found: bytes | None = None,
    ) -> None:
        self.policy_name = policy_name
        self.default_cpuset = default_cpuset
        self.entries = dict() if entries is None else entries
        self.pod_entries = dict() if pod_entries is None else pod_entries
        self.found = found

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(policy_name={self.policy_name!r}, default_cpuset={self.default_cpuset!r}, entries={self.entries!r}, pod_entries={self.pod_entries!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CPUCheckpointData) or other.__class__ is not self.__class__:
            return False
        return (self.policy_name, self.default_cpuset, self.entries, self.pod_entries) == (other.policy_name, other.default_cpuset, other.entries, other.pod_entries)


# ---------------------------------------------------------------------------
# cpuset.Parse with Go's errors
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Go type descriptions of the checkpoint structs
# ---------------------------------------------------------------------------

_EMPTY_STRUCT: Final = GoStruct("struct {}")
#: k8s.io/utils/cpuset.CPUSet (spew prints its unexported map)
_CPUSET: Final = GoStruct("cpuset.CPUSet", (GoField("elems", GoMap(GO_INT, _EMPTY_STRUCT)),))
_POD_ENTRY_JSON: Final = GoStruct(
    "state.podEntryJSON", (GoField("CPUSet", GO_STRING, "cpuSet", omitempty=True),)
)


def _unmarshal_pod_entry(jv: Any) -> CPUSet:
    # PodEntry.UnmarshalJSON: decode {"cpuSet": "..."} then cpuset.Parse
    raw, err = go_json_unmarshal(jv, _POD_ENTRY_JSON)
    if err is not None:
        raise GoJSONError(err)
    text = raw.get("CPUSet", "")
    try:
        return parse_go_cpuset(text)
    except ValueError as exc:
        raise GoJSONError(f"failed to parse cpuset: {exc}") from None


_POD_ENTRY: Final = GoStruct(
    "state.PodEntry",
    (GoField("CPUSet", _CPUSET, "cpuSet", omitempty=True),),
    unmarshal_json=_unmarshal_pod_entry,
)
_ENTRIES: Final = GoMap(GO_STRING, GoMap(GO_STRING, GO_STRING))
_POD_ASSIGNMENTS: Final = GoMap(GO_STRING, _POD_ENTRY, "state.PodCPUAssignments")

_F_POLICY: Final = GoField("PolicyName", GO_STRING, "policyName")
_F_DEFAULT: Final = GoField("DefaultCPUSet", GO_STRING, "defaultCpuSet")
_F_ENTRIES: Final = GoField("Entries", _ENTRIES, "entries", omitempty=True)
_F_POD_ENTRIES: Final = GoField("PodEntries", _POD_ASSIGNMENTS, "podEntries", omitempty=True)
_F_CHECKSUM: Final = GoField("Checksum", CHECKSUM, "checksum")

_V2: Final = GoStruct("state.CPUManagerCheckpointV2", (_F_POLICY, _F_DEFAULT, _F_ENTRIES, _F_CHECKSUM))
_V3: Final = GoStruct(
    "state.CPUManagerCheckpointV3", (_F_POLICY, _F_DEFAULT, _F_ENTRIES, _F_POD_ENTRIES, _F_CHECKSUM)
)
# V4 embeds V2 (its fields are promoted into the top-level JSON object)
_V4: Final = GoStruct(
    "state.CPUManagerCheckpoint",
    (
        _F_POLICY, _F_DEFAULT, _F_ENTRIES, _F_CHECKSUM,
        GoField("Data", GO_STRING, "data"),
        GoField("DataChecksum", CHECKSUM, "dataChecksum"),
    ),
)
_DATA: Final = GoStruct(
    "state.CPUManagerCheckpointData", (_F_POLICY, _F_DEFAULT, _F_ENTRIES, _F_POD_ENTRIES)
)
# the same shapes as json.Marshal sees them (PodEntry marshals as podEntryJSON)
_POD_ASSIGNMENTS_JSON: Final = GoMap(GO_STRING, _POD_ENTRY_JSON)
_F_POD_ENTRIES_JSON: Final = GoField("PodEntries", _POD_ASSIGNMENTS_JSON, "podEntries", omitempty=True)
_DATA_JSON: Final = GoStruct(
    "state.CPUManagerCheckpointData", (_F_POLICY, _F_DEFAULT, _F_ENTRIES, _F_POD_ENTRIES_JSON)
)
_V4_JSON: Final = _V4

_LEGACY_NAME: Final = "CPUManagerCheckpoint"


def _fresh() -> dict[str, Any]:
    # newCPUManagerCheckpointV2/V3/V4 start with empty, non-nil maps
    return {"Entries": {}, "PodEntries": {}}


def _spew_view(cp: Mapping[str, Any], with_pod_entries: bool) -> dict[str, Any]:
    """The struct as spew sees it, checksum zeroed, pod CPU sets expanded."""
    view = dict(cp)
    view["Checksum"] = 0
    if with_pod_entries:
        pods = cp.get("PodEntries")
        view["PodEntries"] = None if pods is None else {
            uid: {"CPUSet": {"elems": dict.fromkeys(cpus.list(), {})}} for uid, cpus in pods.items()
        }
    return view


def _struct_checksums(cp: Mapping[str, Any], typ: GoStruct) -> tuple[int, int]:
    """(checksum under the current type name, under the legacy name)."""
    dump = spew_sdump(_spew_view(cp, typ is _V3), GoPtr(typ))
    legacy = dump.replace(typ.short_name, _LEGACY_NAME, 1)
    return dump_checksum(dump), dump_checksum(legacy)


def debug_dump(blob: bytes | str | Mapping[str, Any], version: int) -> tuple[str, str | None]:
    """The spew dump the V2 or V3 checksum is computed over (checksum field
    zeroed, current type name) after Go's ``json.Unmarshal`` of ``blob``,
    and that unmarshal's error.  For debugging checksums."""
    typ = {2: _V2, 3: _V3}[version]
    jv, syntax_error = checkpoint_json(blob)
    cp, err = _unmarshal(jv, syntax_error, typ)
    return spew_sdump(_spew_view(cp, typ is _V3), GoPtr(typ)), err


# ---------------------------------------------------------------------------
# loading (loadAndMigrateCheckpointV4 and friends)
# ---------------------------------------------------------------------------


class _Loaded:
    policy_name: str
    default_cpuset: str
    entries: Mapping[str, Mapping[str, str] | None]
    pod_entries: Mapping[str, CPUSet]
    version: int

    def __init__(
        self,
        policy_name: str,
        default_cpuset: str,
        entries: Mapping[str, Mapping[str, str] | None],
        pod_entries: Mapping[str, CPUSet],
        version: int,
    ) -> None:
        self.policy_name = policy_name
        self.default_cpuset = default_cpuset
        self.entries = entries
        self.pod_entries = pod_entries
        self.version = version

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(policy_name={self.policy_name!r}, default_cpuset={self.default_cpuset!r}, entries={self.entries!r}, pod_entries={self.pod_entries!r}, version={self.version!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Loaded) or other.__class__ is not self.__class__:
            return False
        return (self.policy_name, self.default_cpuset, self.entries, self.pod_entries, self.version) == (other.policy_name, other.default_cpuset, other.entries, other.pod_entries, other.version)

    def __hash__(self) -> int:
        return hash((self.policy_name, self.default_cpuset, self.entries, self.pod_entries, self.version))


def _unmarshal(jv: Any, syntax_error: str | None, typ: GoStruct) -> tuple[dict[str, Any], str | None]:
    return unmarshal_checkpoint(jv, syntax_error, typ, _fresh())


def _loaded(fields: Mapping[str, Any], version: int) -> _Loaded:
    return _Loaded(
        fields.get("PolicyName", ""),
        fields.get("DefaultCPUSet", ""),
        fields.get("Entries") or {},
        fields.get("PodEntries") or {},
        version,
    )


def _load_v4(jv: Any, syntax_error: str | None) -> tuple[_Loaded | None, str | None, dict[str, Any]]:
    cp, err = _unmarshal(jv, syntax_error, _V4)
    if err is not None:
        return None, f"failed to deserialize cpu manager checkpoint: {err}", cp
    data_text: str = cp.get("Data", "")
    try:
        data_jv: Any = go_json_parse(data_text)
        data, derr = go_json_unmarshal(data_jv, _DATA, _fresh())
    except GoJSONError as exc:
        data, derr = _fresh(), str(exc)
    if derr is not None:
        return None, f"failed to deserialize cpu manager checkpoint data: {derr}", cp
    if cp.get("DataChecksum", 0) != string_checksum(data_text):
        return None, CORRUPT_CHECKPOINT, cp
    return _loaded(data, 4), None, cp


def _load_v3(jv: Any, syntax_error: str | None) -> tuple[_Loaded | None, str | None]:
    cp, err = _unmarshal(jv, syntax_error, _V3)
    if err is not None:
        return None, err
    std, legacy = _struct_checksums(cp, _V3)
    if cp.get("Checksum", 0) not in (std, legacy):
        return None, CORRUPT_CHECKPOINT
    return _loaded(cp, 3), None


def _load_v2(jv: Any, syntax_error: str | None, pod_level_resource_managers: bool) -> _Loaded:
    cp, err = _unmarshal(jv, syntax_error, _V2)
    if err is not None:
        raise CheckpointError(err)
    ck = cp.get("Checksum", 0)
    if ck != 0:  # a checksum of 0 is accepted (old file backend)
        std, legacy = _struct_checksums(cp, _V2)
        # the current-name checksum only counts while PodLevelResourceManagers
        # is off (upstream quirk: with the gate on only the legacy name works)
        accepted = {legacy} if pod_level_resource_managers else {std, legacy}
        if ck not in accepted:
            raise CheckpointError(CORRUPT_CHECKPOINT)
    return _loaded({**cp, "PodEntries": None}, 2)  # V2 has no pod entries


def _load(blob: bytes | str | Mapping[str, Any], pod_level_resource_managers: bool) -> _Loaded:
    jv, syntax_error = checkpoint_json(blob)
    loaded, err, v4 = _load_v4(jv, syntax_error)
    if loaded is not None:
        return loaded
    if v4.get("Data", "") or v4.get("DataChecksum", 0) != 0:
        raise CheckpointError(f"could not load v4 checkpoint: {err}")
    loaded3, _ = _load_v3(jv, syntax_error)
    if loaded3 is not None:
        return loaded3  # migrated V3 -> V4: same fields
    # V2 -> V3 -> V4 migration keeps policy, default set and entries
    return _load_v2(jv, syntax_error, pod_level_resource_managers)


def _parse_loaded(loaded: _Loaded, pod_level_resource_managers: bool) -> CPUCheckpointData:
    try:
        default = parse_go_cpuset(loaded.default_cpuset)
    except ValueError as exc:
        raise CheckpointError(
            f"could not parse default CPU set {go_quote(loaded.default_cpuset)}: {exc}"
        ) from None
    entries: dict[str, dict[str, CPUSet]] = {}
    # upstream walks Go maps (random order): podnuma reports the first bad
    # entry in sorted order so the message is stable
    for pod in sorted(loaded.entries):
        containers = loaded.entries[pod] or {}
        parsed: dict[str, CPUSet] = {}
        for container in sorted(containers):
            text = containers[container]
            try:
                parsed[container] = parse_go_cpuset(text)
            except ValueError as exc:
                raise CheckpointError(
                    f"could not parse cpuset {go_quote(text)} for container "
                    f"{go_quote(container)} in pod {go_quote(pod)}: {exc}"
                ) from None
        entries[pod] = parsed
    pods = dict(loaded.pod_entries) if pod_level_resource_managers else {}
    return CPUCheckpointData(loaded.policy_name, default, entries, pods)


def load_cpu_checkpoint(
    blob: bytes | str | Mapping[str, Any], *, pod_level_resource_managers: bool = True
) -> tuple[str, int]:
    """Load only: (the checkpoint's policy name, the format version it was read
    as: 4, 3 or 2).  Raises :class:`CheckpointError` as the kubelet's loader
    would."""
    loaded = _load(blob, pod_level_resource_managers)
    return loaded.policy_name, loaded.version


def decode_cpu_checkpoint(
    blob: bytes | str | Mapping[str, Any], *, pod_level_resource_managers: bool = True
) -> CPUCheckpointData:
    """Read a checkpoint the way kubelet v1.37 does (V4 -> V3 -> V2, checksums,
    then the CPU set parsing of ``restoreState``).

    ``blob`` is the file's bytes (or text), or the already-decoded JSON
    object.  ``pod_level_resource_managers`` is that feature gate: with it
    off, pod entries are dropped on restore and a V2 checksum computed under
    the name ``CPUManagerCheckpointV2`` is also accepted.

    Raises :class:`CheckpointError` with the kubelet's inner error text.  The
    policy check is :func:`check_policy` (or use :func:`restore_cpu_state`,
    which does both in the kubelet's order).
    """
    data = _parse_loaded(_load(blob, pod_level_resource_managers), pod_level_resource_managers)
    data.found = found_bytes(blob)
    return data


def check_policy(data: CPUCheckpointData, configured_policy: str) -> None:
    """The kubelet refuses to start on a checkpoint of another policy."""
    if data.policy_name != configured_policy:
        raise KubeletStartupError(_policy_message(configured_policy, data.policy_name))


def _policy_message(configured: str, found: str) -> str:
    return f"configured policy {go_quote(configured)} differs from state checkpoint policy {go_quote(found)}"


def restore_error_message(reason: str, state_dir: str = DEFAULT_STATE_DIR) -> str:
    """``NewCheckpointState``'s wrapping of a restore failure."""
    path = os.path.join(state_dir, CPU_MANAGER_STATE_FILE)
    return (
        f"could not restore state from checkpoint: {reason}, please drain this node and "
        f"delete the CPU manager checkpoint file {go_quote(path)} before restarting Kubelet"
    )


def restore_cpu_state(
    blob: bytes | str | Mapping[str, Any],
    configured_policy: str,
    *,
    pod_level_resource_managers: bool = True,
    state_dir: str = DEFAULT_STATE_DIR,
) -> CPUCheckpointData:
    """``restoreState`` end to end: load, policy check, parse — in that order —
    raising :class:`KubeletStartupError` with the kubelet's full message
    (``could not restore state from checkpoint: ..., please drain ...``)."""
    try:
        loaded = _load(blob, pod_level_resource_managers)
        if loaded.policy_name != configured_policy:
            raise CheckpointError(_policy_message(configured_policy, loaded.policy_name))
        return _parse_loaded(loaded, pod_level_resource_managers)
    except CheckpointError as err:
        raise KubeletStartupError(restore_error_message(str(err), state_dir)) from err


# ---------------------------------------------------------------------------
# writing (CPUManagerCheckpoint.MarshalCheckpoint, V4)
# ---------------------------------------------------------------------------


def _payload(data: CPUCheckpointData) -> dict[str, Any]:
    return {
        "PolicyName": data.policy_name,
        "DefaultCPUSet": str(data.default_cpuset),
        "Entries": {
            pod: {name: str(cpus) for name, cpus in containers.items()}
            for pod, containers in data.entries.items()
        },
        "PodEntries": {uid: {"CPUSet": str(cpus)} for uid, cpus in data.pod_entries.items()},
    }


def encode_cpu_checkpoint(data: CPUCheckpointData) -> bytes:
    """The bytes kubelet v1.37 writes (V4, compact JSON, no trailing newline).

    Pod entries are written as given: leave them empty when the
    PodLevelResourceManagers gate is off (the kubelet does not store them).
    """
    payload = _payload(data)
    data_text = go_json_marshal(payload, _DATA_JSON)
    v2 = {
        "PolicyName": payload["PolicyName"],
        "DefaultCPUSet": payload["DefaultCPUSet"],
        "Entries": payload["Entries"],
        "Checksum": 0,
    }
    _, legacy = _struct_checksums(v2, _V2)
    top = dict(v2)
    top.update({"Checksum": legacy, "Data": data_text, "DataChecksum": string_checksum(data_text)})
    return go_json_marshal(top, _V4_JSON).encode("utf-8")


def cpu_checkpoint_object(data: CPUCheckpointData) -> dict[str, Any]:
    """The checkpoint as a JSON object (key order as written)."""
    obj = json.loads(encode_cpu_checkpoint(data))
    assert isinstance(obj, dict)
    return obj
