"""The device manager's checkpoint: reading it as kubelet v1.37 does, and
the bytes its MarshalCheckpoint writes (the expected bytes were written by
the kubelet's own checkpoint package)."""

from __future__ import annotations

import base64
import json

import pytest

from podnuma.cm.devicemanager.checkpoint import (
    DeviceEntry,
    encode_device_checkpoint,
    read_device_checkpoint,
    valid_allocate_response,
)
from podnuma.cm.devicemanager.manager import DeviceManager
from podnuma.machine.topology import Device
from tests.cm.devicemanager.helpers import FakeStore, machine

# checkpoint.New(entries, registered).MarshalCheckpoint() of kubelet v1.37.2
KUBELET_BYTES = (
    b'{"Data":{"PodDeviceEntries":[{"PodUID":"u1","ContainerName":"app","ResourceName":"example.com/gpu",'
    b'"DeviceIDs":{"0":["gpu0","gpu1"],"1":["gpu2"]},"AllocResp":"CgYKAUESAWIaFAoGL2Rldi94EgYvZGV2L3kaAnJ3"},'
    b'{"PodUID":"u1","ContainerName":"side","ResourceName":"example.com/nic","DeviceIDs":{"-1":["nic0"]},'
    b'"AllocResp":""}],"RegisteredDevices":{"example.com/gpu":["gpu0","gpu1","gpu2","gpu3"],'
    b'"example.com/nic":["nic0"]}},"Checksum":1052997933}'
)
EMPTY_BYTES = b'{"Data":{"PodDeviceEntries":null,"RegisteredDevices":null},"Checksum":1944006890}'


def test_reads_the_kubelet_bytes() -> None:
    data = read_device_checkpoint(KUBELET_BYTES)
    assert data.error is None and not data.skipped
    assert data.pods() == {
        "u1": {"app": {"example.com/gpu": ("gpu0", "gpu1", "gpu2")}, "side": {"example.com/nic": ("nic0",)}}
    }
    assert data.registered == {"example.com/gpu": ("gpu0", "gpu1", "gpu2", "gpu3"), "example.com/nic": ("nic0",)}
    assert data.entries[0].alloc_resp == base64.b64decode("CgYKAUESAWIaFAoGL2Rldi94EgYvZGV2L3kaAnJ3")


def test_writes_the_kubelet_bytes() -> None:
    data = read_device_checkpoint(KUBELET_BYTES)
    assert encode_device_checkpoint(data.entries, data.registered) == KUBELET_BYTES
    assert encode_device_checkpoint([], None) == EMPTY_BYTES
    assert read_device_checkpoint(EMPTY_BYTES).error is None


def test_inline_object_and_case_insensitive_keys() -> None:
    obj = json.loads(KUBELET_BYTES)
    assert read_device_checkpoint(obj).pods() == read_device_checkpoint(KUBELET_BYTES).pods()
    lower = KUBELET_BYTES.replace(b'"PodUID"', b'"poduid"').replace(b'"Data"', b'"data"')
    assert read_device_checkpoint(lower).pods() == read_device_checkpoint(KUBELET_BYTES).pods()


@pytest.mark.parametrize(
    "blob",
    [
        KUBELET_BYTES.replace(b"1052997933", b"1052997934"),  # checksum
        KUBELET_BYTES.replace(b'"1":["gpu2"]', b'"1":["gpu3"]'),  # data changed under the checksum
        KUBELET_BYTES[:-1],  # truncated
        b"",
        KUBELET_BYTES.replace(b'"AllocResp":""', b'"AllocResp":"!!"'),  # not base64
        KUBELET_BYTES.replace(b'{"0":', b'{"x":'),  # NUMA key not an integer
        KUBELET_BYTES.replace(b"1052997933", b"-1"),
    ],
)
def test_unreadable_checkpoint_restores_nothing(blob: bytes) -> None:
    assert blob != KUBELET_BYTES
    data = read_device_checkpoint(blob)
    assert data.error is not None
    assert data.entries == () and dict(data.registered) == {} and data.pods() == {}


def test_corrupt_checksum_message() -> None:
    assert read_device_checkpoint(KUBELET_BYTES.replace(b"1052997933", b"7")).error == "checkpoint is corrupted"


@pytest.mark.parametrize(
    ("raw", "ok"),
    [
        (b"", True),
        (base64.b64decode("CgYKAUESAWIaFAoGL2Rldi94EgYvZGV2L3kaAnJ3"), True),
        (b"\x08\x01", True),  # unknown varint field 1 of another wire type
        (b"\x78\x05", True),  # unknown field 15
        (b"\x0a\x05ab", False),  # length past the end
        (b"\x00\x01", False),  # field number 0
        (b"\x0f", False),  # wire type 7
        (b"\x2a\x03\x0a\x01\xff", False),  # CDI device name not UTF-8
        (b"\x0a\x04\x0a\x02\xc3\x28", False),  # env key not UTF-8
        (b"\x0b\x08\x01\x0c", True),  # a group, closed
        (b"\x0b\x08\x01", False),  # a group, never closed
        (b"\x80" * 11, False),  # varint too long
    ],
)
def test_allocate_response_decoding(raw: bytes, ok: bool) -> None:
    assert valid_allocate_response(raw) is ok


def test_entry_with_bad_response_is_skipped() -> None:
    bad = DeviceEntry("u1", "app", "example.com/gpu", {0: ("gpu0",)}, b"\x0f")
    good = DeviceEntry("u1", "b", "example.com/gpu", {0: ("gpu1",)}, b"")
    data = read_device_checkpoint(encode_device_checkpoint([bad, good], {"example.com/gpu": ["gpu0", "gpu1"]}))
    assert data.skipped == (bad,) and data.entries == (good,)
    assert data.pods() == {"u1": {"b": {"example.com/gpu": ("gpu1",)}}}


def test_restore_into_device_manager() -> None:
    node = machine(
        {"example.com/gpu": [Device("gpu0", (0,)), Device("gpu1", (0,)), Device("gpu2", (1,))]}
    )
    m = DeviceManager(node, FakeStore())
    data = read_device_checkpoint(KUBELET_BYTES)
    m.restore(data.entries, data.registered)
    assert m.allocated_devices("example.com/gpu") == {"gpu0", "gpu1", "gpu2"}
    assert m.available_devices("example.com/gpu") == frozenset()
    # registered before the restart, no plugin now: no healthy device, yet a
    # device-plugin resource holding an allocation
    assert m.is_device_plugin_resource("example.com/nic")
    assert m.available_devices("example.com/nic") == frozenset()
    assert m.allocatable_counts()["example.com/nic"] == 0
    assert m.container_devices("u1", "side", "example.com/nic") == ("nic0",)
    assert m.has_pod("u1")
