"""The device manager's checkpoint (``device-plugins/kubelet_internal_checkpoint``).

Mirrors ``pkg/kubelet/cm/devicemanager/checkpoint/checkpoint.go`` and the
reading side of ``manager.go`` (``getCheckpoint``, ``readCheckpoint``) and
``pod_devices.go`` (``fromCheckpointData``) of kubelet v1.37:

- One format (v2): ``{"Data": {"PodDeviceEntries": [...],
  "RegisteredDevices": {...}}, "Checksum": N}``, Go field names as JSON keys
  (matched case-insensitively on reading, as ``encoding/json`` does). An
  entry's ``DeviceIDs`` maps a NUMA node (``-1``: no topology) to device ids;
  ``AllocResp`` is the plugin's ``ContainerAllocateResponse`` in protobuf
  wire format, base64 in the JSON.
- The checksum is FNV-32a over the spew dump of the ``Data`` struct *value*
  (type ``checkpoint.checkpointData``), not of a pointer.
- Unlike the CPU and memory managers, the device manager never refuses to
  start over its checkpoint: any failure to read it (bad JSON, a type
  mismatch, a wrong checksum) is logged and the kubelet goes on with no
  device state at all. A missing file is the same, without the error.
- An entry whose ``AllocResp`` does not decode as a
  ``ContainerAllocateResponse`` is skipped (logged); the others are
  restored.
- Restoring: the entries become the pod devices (a later entry for the same
  pod, container and resource replaces an earlier one), the devices in use
  are their union, and every resource in ``RegisteredDevices`` is registered
  with no healthy device until its plugin registers again.

podnuma reads this checkpoint but does not model the device manager's own
writes of it: a run's ``checkpoints`` hold the CPU and memory managers'
files only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from podnuma.cm.checkpoint import (
    CORRUPT_CHECKPOINT,
    checkpoint_json,
    object_checksum,
    unmarshal_checkpoint,
)
from podnuma.golang.json import (
    go_json_marshal,
)
from podnuma.golang.types import GO_STRING, GoBasic, GoField, GoMap, GoSlice, GoStruct

__all__ = [
    "DEVICE_CHECKPOINT_DIR",
    "DEVICE_CHECKPOINT_FILE",
    "DeviceCheckpointData",
    "DeviceEntry",
    "decode_device_checkpoint",
    "encode_device_checkpoint",
    "read_device_checkpoint",
]

#: the checkpoint's directory under the kubelet's root directory, and its name
DEVICE_CHECKPOINT_DIR: Final = "device-plugins"
DEVICE_CHECKPOINT_FILE: Final = "kubelet_internal_checkpoint"

_DEVICES_PER_NUMA: Final = GoMap(GoBasic("int64"), GoSlice(GO_STRING), "checkpoint.DevicesPerNUMA")
_BYTES: Final = GoSlice(GoBasic("uint8"))
_ENTRY: Final = GoStruct(
    "checkpoint.PodDevicesEntry",
    (
        GoField("PodUID", GO_STRING),
        GoField("ContainerName", GO_STRING),
        GoField("ResourceName", GO_STRING),
        GoField("DeviceIDs", _DEVICES_PER_NUMA),
        GoField("AllocResp", _BYTES),
    ),
)
_DATA: Final = GoStruct(
    "checkpoint.checkpointData",
    (
        GoField("PodDeviceEntries", GoSlice(_ENTRY)),
        GoField("RegisteredDevices", GoMap(GO_STRING, GoSlice(GO_STRING))),
    ),
)
_CHECKPOINT: Final = GoStruct(
    "checkpoint.Data",
    (GoField("Data", _DATA), GoField("Checksum", GoBasic("uint64", "checksum.Checksum"))),
)


@dataclass(frozen=True)
class DeviceEntry:
    """One ``PodDevicesEntry``: ``devices`` maps a NUMA node (-1: none) to ids."""

    pod_uid: str
    container: str
    resource: str
    devices: Mapping[int, tuple[str, ...]]
    alloc_resp: bytes = b""

    def device_ids(self) -> tuple[str, ...]:
        """The ids, NUMA node by node (ascending), each node's in file order,
        without repeats."""
        out: dict[str, None] = {}
        for node in sorted(self.devices):
            out.update(dict.fromkeys(self.devices[node]))
        return tuple(out)


@dataclass
class DeviceCheckpointData:
    """What the kubelet restores from the checkpoint.

    ``error``: why the kubelet could not read it (it then restores nothing
    and goes on: ``entries`` and ``registered`` are empty). ``skipped``: the
    entries left out because their allocation response does not decode.
    """

    entries: tuple[DeviceEntry, ...] = ()
    registered: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None
    skipped: tuple[DeviceEntry, ...] = ()

    def pods(self) -> dict[str, dict[str, dict[str, tuple[str, ...]]]]:
        """pod UID -> container -> resource -> device ids, as restored."""
        out: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
        for e in self.entries:
            out.setdefault(e.pod_uid, {}).setdefault(e.container, {})[e.resource] = e.device_ids()
        return out


def _fresh() -> dict[str, Any]:
    # getCheckpoint starts from an empty (non-nil) entry list and map
    return {"Data": {"PodDeviceEntries": [], "RegisteredDevices": {}}, "Checksum": 0}


def _checksum(data: Any) -> int:
    return object_checksum(data, _DATA)


def read_device_checkpoint(blob: bytes | str | Mapping[str, Any]) -> DeviceCheckpointData:
    """``readCheckpoint``: the device state the kubelet restores from the
    file's bytes (or its decoded JSON object). Never raises: a checkpoint
    the kubelet cannot read gives empty state with ``error`` set."""
    jv, syntax_error = checkpoint_json(blob)
    cp, failure = unmarshal_checkpoint(jv, syntax_error, _CHECKPOINT, _fresh())
    if failure is not None:
        return DeviceCheckpointData(error=failure)
    data = cp.get("Data") or {}
    if cp.get("Checksum", 0) != _checksum(data):
        return DeviceCheckpointData(error=CORRUPT_CHECKPOINT)
    entries: list[DeviceEntry] = []
    skipped: list[DeviceEntry] = []
    for raw in data.get("PodDeviceEntries") or ():
        per_numa = raw.get("DeviceIDs") or {}
        entry = DeviceEntry(
            raw.get("PodUID", ""),
            raw.get("ContainerName", ""),
            raw.get("ResourceName", ""),
            {int(node): tuple(ids or ()) for node, ids in per_numa.items()},
            bytes(raw.get("AllocResp") or b""),
        )
        (entries if valid_allocate_response(entry.alloc_resp) else skipped).append(entry)
    registered = {name: tuple(ids or ()) for name, ids in (data.get("RegisteredDevices") or {}).items()}
    return DeviceCheckpointData(tuple(entries), registered, None, tuple(skipped))


def decode_device_checkpoint(blob: bytes | str | Mapping[str, Any]) -> DeviceCheckpointData:
    """Alias of :func:`read_device_checkpoint` (the other managers' naming)."""
    return read_device_checkpoint(blob)


def encode_device_checkpoint(
    entries: Sequence[DeviceEntry], registered: Mapping[str, Sequence[str]] | None
) -> bytes:
    """``MarshalCheckpoint``: the bytes the kubelet writes for this state
    (entries in the given order; ``registered`` ``None`` is Go's nil map)."""
    data: dict[str, Any] = {
        "PodDeviceEntries": [
            {
                "PodUID": e.pod_uid,
                "ContainerName": e.container,
                "ResourceName": e.resource,
                "DeviceIDs": {node: list(ids) for node, ids in e.devices.items()},
                "AllocResp": list(e.alloc_resp),
            }
            for e in entries
        ]
        if entries
        else None,
        "RegisteredDevices": None if registered is None else {k: list(v) for k, v in registered.items()},
    }
    return go_json_marshal({"Data": data, "Checksum": _checksum(data)}, _CHECKPOINT).encode("utf-8")


# ---------------------------------------------------------------------------
# proto.Unmarshal of a ContainerAllocateResponse (deviceplugin v1beta1)
# ---------------------------------------------------------------------------

# field number -> what its length-delimited payload is: a UTF-8 string, or a
# message (its own field table)
_Table = Mapping[int, Any]
_STRING: Final = "string"
_MAP_ENTRY: Final[_Table] = {1: _STRING, 2: _STRING}
_MOUNT: Final[_Table] = {1: _STRING, 2: _STRING}  # 3: read_only (varint)
_DEVICE_SPEC: Final[_Table] = {1: _STRING, 2: _STRING, 3: _STRING}
_CDI_DEVICE: Final[_Table] = {1: _STRING}
_RESPONSE: Final[_Table] = {1: _MAP_ENTRY, 2: _MOUNT, 3: _DEVICE_SPEC, 4: _MAP_ENTRY, 5: _CDI_DEVICE}
_MAX_FIELD: Final = (1 << 29) - 1


def _varint(buf: bytes, i: int) -> tuple[int, int] | None:
    value = 0
    for n in range(10):
        if i >= len(buf):
            return None
        b = buf[i]
        i += 1
        if n == 9 and b > 1:
            return None  # overflows 64 bits
        value |= (b & 0x7F) << (7 * n)
        if b < 0x80:
            return value, i
    return None


def _tag(buf: bytes, i: int) -> tuple[int, int, int] | None:
    """A field's number and wire type, and where its value starts."""
    tag = _varint(buf, i)
    if tag is None:
        return None
    key, i = tag
    num = key >> 3
    if num < 1 or num > _MAX_FIELD:
        return None
    return num, key & 7, i


def _field_ok(buf: bytes, i: int, num: int, wire: int, kind: object) -> tuple[bool, int]:
    """Walk one field's value of wire type ``wire`` starting at ``i``
    (``kind``: what the message's table says field ``num`` holds, None when
    it is unknown); (valid, where it ends)."""
    if wire == 0:
        v = _varint(buf, i)
        return (False, i) if v is None else (True, v[1])
    if wire == 1:
        return i + 8 <= len(buf), i + 8
    if wire == 5:
        return i + 4 <= len(buf), i + 4
    if wire == 2:
        n = _varint(buf, i)
        if n is None or n[1] + n[0] > len(buf):
            return False, i
        payload, end = buf[n[1] : n[1] + n[0]], n[1] + n[0]
        if kind == _STRING:
            try:
                payload.decode("utf-8")
            except UnicodeDecodeError:
                return False, end
        elif isinstance(kind, Mapping) and not _message_ok(payload, kind)[0]:
            return False, end
        return True, end
    if wire == 3:
        return _group_ok(buf, i, num)
    return False, i  # an end-group without its start, or wire types 6 and 7


def _message_ok(buf: bytes, table: _Table) -> tuple[bool, int]:
    """Walk one message (all of ``buf``); (valid, where it stopped)."""
    i = 0
    while i < len(buf):
        tag = _tag(buf, i)
        if tag is None:
            return False, i
        num, wire, i = tag
        ok, i = _field_ok(buf, i, num, wire, table.get(num))
        if not ok:
            return False, i
    return True, i


def _group_ok(buf: bytes, i: int, number: int) -> tuple[bool, int]:
    """Skip a group (an unknown field) up to its matching end tag."""
    while i < len(buf):
        tag = _tag(buf, i)
        if tag is None:
            return False, i
        num, wire, i = tag
        if wire == 4:
            return num == number, i
        ok, i = _field_ok(buf, i, num, wire, None)
        if not ok:
            return False, i
    return False, i


def valid_allocate_response(raw: bytes) -> bool:
    """Whether ``proto.Unmarshal`` takes ``raw`` as a
    ``ContainerAllocateResponse``: well-formed wire format, the known string
    fields (env and annotation keys and values, mount and device paths,
    permissions, CDI names) valid UTF-8 (proto3); unknown fields, and known
    ones of another wire type, are kept as unknown."""
    return _message_ok(raw, _RESPONSE)[0]
