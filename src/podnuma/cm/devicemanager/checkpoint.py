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

Writing (``writeCheckpoint``): the device manager writes the file when a
plugin reports its devices (``genericDeviceUpdateCallback``) and at the end
of an allocation that handed out devices; never when devices are freed
(``UpdateAllocatedDevices``), so the file keeps a removed pod's entries
until the next write. Every entry is written again with its allocation
response marshalled anew (``proto.Marshal``: known fields in field-number
order, unknown ones after them). The kubelet lists entries, device ids and
map entries in Go map order, a different order on every run; podnuma writes
the one order that does not depend on chance (:func:`canonical_entries`:
entries by pod UID, container and resource, each id list sorted, the
response's map entries by key), and the oracle puts the file the real
device manager wrote in that same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from podnuma.cm.checkpoint import (
    CORRUPT_CHECKPOINT,
    checkpoint_json,
    found_bytes,
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
    "canonical_allocate_response",
    "canonical_device_checkpoint",
    "canonical_entries",
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


class DeviceEntry:
    """One ``PodDevicesEntry``: ``devices`` maps a NUMA node (-1: none) to ids."""

    pod_uid: str
    container: str
    resource: str
    devices: Mapping[int, tuple[str, ...]]
    alloc_resp: bytes
    #: ``DeviceIDs`` was JSON ``null`` (Go's nil map), and the NUMA nodes
    #: whose id list was ``null``: written back as they were read
    ids_nil: bool
    nil_lists: frozenset[int]

    def __init__(
        self,
        pod_uid: str,
        container: str,
        resource: str,
        devices: Mapping[int, tuple[str, ...]],
        alloc_resp: bytes = b"",
        ids_nil: bool = False,
        nil_lists: frozenset[int] = frozenset(),
    ) -> None:
        self.pod_uid = pod_uid
        self.container = container
        self.resource = resource
        self.devices = devices
        self.alloc_resp = alloc_resp
        self.ids_nil = ids_nil
        self.nil_lists = nil_lists

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(pod_uid={self.pod_uid!r}, container={self.container!r}, resource={self.resource!r}, devices={self.devices!r}, alloc_resp={self.alloc_resp!r}, ids_nil={self.ids_nil!r}, nil_lists={self.nil_lists!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceEntry) or other.__class__ is not self.__class__:
            return False
        return (self.pod_uid, self.container, self.resource, self.devices, self.alloc_resp, self.ids_nil, self.nil_lists) == (other.pod_uid, other.container, other.resource, other.devices, other.alloc_resp, other.ids_nil, other.nil_lists)

    def __hash__(self) -> int:
        return hash((self.pod_uid, self.container, self.resource, self.devices, self.alloc_resp, self.ids_nil, self.nil_lists))

    def __deepcopy__(self, memo: dict[int, object]) -> DeviceEntry:
        # immutable (its mapping is never changed after construction): a copy
        # of a node shares it, and so does a node snapshot; compiled, a frozen
        # class could not be rebuilt attribute by attribute anyway
        return self

    def device_ids(self) -> tuple[str, ...]:
        """The ids, NUMA node by node (ascending), each node's in file order,
        without repeats."""
        out: dict[str, None] = {}
        for node in sorted(self.devices):
            out.update(dict.fromkeys(self.devices[node]))
        return tuple(out)


class DeviceCheckpointData:
    """What the kubelet restores from the checkpoint.

    ``error``: why the kubelet could not read it (it then restores nothing
    and goes on: ``entries`` and ``registered`` are empty). ``skipped``: the
    entries left out because their allocation response does not decode.
    """

    entries: tuple[DeviceEntry, ...]
    registered: Mapping[str, tuple[str, ...]]
    error: str | None
    skipped: tuple[DeviceEntry, ...]
    #: the file's bytes as found (what stays on disk until the kubelet
    #: writes the checkpoint again)
    found: bytes | None

    def __init__(
        self,
        entries: tuple[DeviceEntry, ...] = (),
        registered: Mapping[str, tuple[str, ...]] | None = None,
        error: str | None = None,
        skipped: tuple[DeviceEntry, ...] = (),
        found: bytes | None = None,
    ) -> None:
        self.entries = entries
        self.registered = dict() if registered is None else registered
        self.error = error
        self.skipped = skipped
        self.found = found

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(entries={self.entries!r}, registered={self.registered!r}, error={self.error!r}, skipped={self.skipped!r}, found={self.found!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceCheckpointData) or other.__class__ is not self.__class__:
            return False
        return (self.entries, self.registered, self.error, self.skipped, self.found) == (other.entries, other.registered, other.error, other.skipped, other.found)

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
    found = found_bytes(blob)
    jv, syntax_error = checkpoint_json(blob)
    cp, failure = unmarshal_checkpoint(jv, syntax_error, _CHECKPOINT, _fresh())
    if failure is not None:
        return DeviceCheckpointData(error=failure, found=found)
    data = cp.get("Data") or {}
    if cp.get("Checksum", 0) != _checksum(data):
        return DeviceCheckpointData(error=CORRUPT_CHECKPOINT, found=found)
    entries: list[DeviceEntry] = []
    skipped: list[DeviceEntry] = []
    for raw in data.get("PodDeviceEntries") or ():
        per_numa = raw.get("DeviceIDs")
        entry = DeviceEntry(
            raw.get("PodUID", ""),
            raw.get("ContainerName", ""),
            raw.get("ResourceName", ""),
            {int(node): tuple(ids or ()) for node, ids in (per_numa or {}).items()},
            bytes(raw.get("AllocResp") or b""),
            ids_nil=per_numa is None,
            nil_lists=frozenset(int(node) for node, ids in (per_numa or {}).items() if ids is None),
        )
        (entries if valid_allocate_response(entry.alloc_resp) else skipped).append(entry)
    registered = {name: tuple(ids or ()) for name, ids in (data.get("RegisteredDevices") or {}).items()}
    return DeviceCheckpointData(tuple(entries), registered, None, tuple(skipped), found)


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
                "DeviceIDs": None if e.ids_nil else {
                    node: None if node in e.nil_lists else list(ids) for node, ids in e.devices.items()
                },
                "AllocResp": list(e.alloc_resp),
            }
            for e in entries
        ]
        if entries
        else None,
        "RegisteredDevices": None if registered is None else {k: list(v) for k, v in registered.items()},
    }
    return go_json_marshal({"Data": data, "Checksum": _checksum(data)}, _CHECKPOINT).encode("utf-8")


def canonical_entries(entries: Iterable[DeviceEntry]) -> tuple[DeviceEntry, ...]:
    """The entries in the order podnuma writes them: by pod UID, container
    and resource (Go string order), each NUMA node's ids sorted, each
    allocation response marshalled as ``proto.Marshal`` does with map
    entries by key (:func:`canonical_allocate_response`)."""
    out = [
        DeviceEntry(
            e.pod_uid, e.container, e.resource,
            {node: tuple(sorted(ids, key=_go_order)) for node, ids in e.devices.items()},
            canonical_allocate_response(e.alloc_resp), e.ids_nil, e.nil_lists,
        )  # fmt: skip
        for e in entries
    ]
    out.sort(key=lambda e: (_go_order(e.pod_uid), _go_order(e.container), _go_order(e.resource)))
    return tuple(out)


def _go_order(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def canonical_device_checkpoint(
    entries: Iterable[DeviceEntry], registered: Mapping[str, Iterable[str]]
) -> bytes:
    """The checkpoint file podnuma writes for this state (see the module
    docstring): :func:`canonical_entries`, each resource's ids sorted."""
    return encode_device_checkpoint(
        canonical_entries(entries),
        {name: sorted(ids, key=_go_order) for name, ids in registered.items()},
    )


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


# ---------------------------------------------------------------------------
# proto.Marshal(proto.Unmarshal(raw)) of a ContainerAllocateResponse
# ---------------------------------------------------------------------------

# field number -> (kind, table): "map" (map<string,string>), "msg" (a repeated
# message, its string fields and its bool fields), "str", "bool"
_StrFields = frozenset[int]
_MOUNT_FIELDS: Final = (frozenset({1, 2}), frozenset({3}))  # container_path, host_path; read_only
_DEVICE_FIELDS: Final = (frozenset({1, 2, 3}), frozenset[int]())  # container_path, host_path, permissions
_CDI_FIELDS: Final = (frozenset({1}), frozenset[int]())  # name
_REPEATED: Final = {2: _MOUNT_FIELDS, 3: _DEVICE_FIELDS, 5: _CDI_FIELDS}
_MAPS: Final = (1, 4)  # envs, annotations


def _put_varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _put_bytes(out: bytearray, num: int, payload: bytes) -> None:
    _put_varint(out, num << 3 | 2)
    _put_varint(out, len(payload))
    out += payload


def _skip(buf: bytes, i: int, num: int, wire: int) -> int:
    """Where the field value starting at ``i`` ends (the input is valid)."""
    if wire == 0:
        v = _varint(buf, i)
        assert v is not None
        return v[1]
    if wire == 1:
        return i + 8
    if wire == 5:
        return i + 4
    if wire == 2:
        n = _varint(buf, i)
        assert n is not None
        return n[1] + n[0]
    ok, end = _group_ok(buf, i, num)
    assert ok
    return end


def _fields(buf: bytes) -> list[tuple[int, int, int, int, int]]:
    """(number, wire type, start of the field's tag, start of its value,
    end) for each field of a valid message."""
    out = []
    i = 0
    while i < len(buf):
        tag = _tag(buf, i)
        assert tag is not None
        num, wire, start = tag
        end = _skip(buf, start, num, wire)
        out.append((num, wire, i, start, end))
        i = end
    return out


def _payload(buf: bytes, start: int) -> bytes:
    n = _varint(buf, start)
    assert n is not None
    return buf[n[1] : n[1] + n[0]]


def _sub_message(buf: bytes, strings: _StrFields, bools: _StrFields) -> bytes:
    """A message of string and bool fields as ``proto.Marshal`` writes it
    after ``proto.Unmarshal``: known fields by number (the last occurrence;
    empty strings and false left out), unknown fields after them in the
    order read."""
    known: dict[int, bytes | bool] = {}
    unknown = bytearray()
    for num, wire, tag_at, start, end in _fields(buf):
        if num in strings and wire == 2:
            known[num] = _payload(buf, start)
        elif num in bools and wire == 0:
            v = _varint(buf, start)
            assert v is not None
            known[num] = v[0] != 0
        else:
            unknown += buf[tag_at:end]
    out = bytearray()
    for num in sorted(known):
        value = known[num]
        if isinstance(value, bool):
            if value:
                _put_varint(out, num << 3)
                out.append(1)
        elif value:
            _put_bytes(out, num, value)
    return bytes(out + unknown)


def canonical_allocate_response(raw: bytes) -> bytes:
    """What ``proto.Marshal`` writes for the ``ContainerAllocateResponse``
    that ``proto.Unmarshal`` reads from ``raw`` (a valid one), with the
    ``envs`` and ``annotations`` map entries by key (Go's marshal leaves
    them in map order: the deterministic option sorts them)."""
    if not raw:
        return b""
    maps: dict[int, dict[bytes, bytes]] = {}
    repeated: dict[int, list[bytes]] = {}
    unknown = bytearray()
    for num, wire, tag_at, start, end in _fields(raw):
        if num in _MAPS and wire == 2:
            key = value = b""
            for n2, w2, _t, s2, _e in _fields(_payload(raw, start)):
                if n2 == 1 and w2 == 2:
                    key = _payload(_payload(raw, start), s2)
                elif n2 == 2 and w2 == 2:
                    value = _payload(_payload(raw, start), s2)
            maps.setdefault(num, {})[key] = value
        elif num in _REPEATED and wire == 2:
            strings, bools = _REPEATED[num]
            repeated.setdefault(num, []).append(_sub_message(_payload(raw, start), strings, bools))
        else:
            unknown += raw[tag_at:end]
    out = bytearray()
    for num in (1, 2, 3, 4, 5):
        if num in maps:
            for key in sorted(maps[num]):
                entry = bytearray()
                _put_bytes(entry, 1, key)
                _put_bytes(entry, 2, maps[num][key])
                _put_bytes(out, num, bytes(entry))
        for item in repeated.get(num, ()):
            _put_bytes(out, num, item)
    return bytes(out + unknown)
