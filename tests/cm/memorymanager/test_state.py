"""Tests of the memory manager state (upstream state_mem / TestCheckpointStateHelpers
and TestCheckpointStateClear behaviour: copies in and out, delete, clear)."""

from __future__ import annotations

import pytest

from podnuma.cm.memorymanager.state import Block, MemoryManagerState, MemoryTable, NUMANodeState

from .helpers import MB

_MS = {0: NUMANodeState(0, {"memory": MemoryTable(2048, 512, 1536, 1024, 512)}, [])}


@pytest.mark.parametrize(
    "assignments",
    [
        {"pod": {"container1": [Block([0], "memory", 1024)]}},
        {"pod": {"container1": [Block([0], "memory", 512)], "container2": [Block([0], "memory", 512)]}},
        {"pod": {"container1": []}},
    ],
    ids=["One container", "Two containers", "Container without assigned memory"],
)
def test_state_helpers(assignments: dict[str, dict[str, list[Block]]]) -> None:
    s = MemoryManagerState()
    s.set_machine_state(_MS)
    assert s.get_machine_state() == _MS
    for pod, containers in assignments.items():
        for name, blocks in containers.items():
            s.set_memory_blocks(pod, name, blocks)
            assert s.get_memory_blocks(pod, name) == blocks
            s.delete(pod, name)
            assert s.get_memory_blocks(pod, name) is None
    assert s.get_memory_assignments() == {}


def test_state_clear() -> None:
    s = MemoryManagerState(_MS, {"pod": {"container1": [Block([0], "memory", 1024)]}}, {"pod": []})
    s.clear_state()
    assert s.get_machine_state() == {}
    assert s.get_memory_assignments() == {}
    assert s.get_pod_memory_assignments() == {}


def test_getters_return_copies() -> None:
    s = MemoryManagerState(_MS, {})
    ms = s.get_machine_state()
    ms[0].memory_map["memory"].free = 0
    ms[0].cells.append(7)
    assert s.get_machine_state() == _MS
    blocks = [Block([0], "memory", MB)]
    s.set_memory_blocks("p", "c", blocks)
    blocks.append(Block([1], "memory", MB))
    got = s.get_memory_blocks("p", "c")
    assert got == [Block([0], "memory", MB)]
    assert got is not None
    got.clear()
    assert s.get_memory_blocks("p", "c") == [Block([0], "memory", MB)]


def test_empty_block_list_is_not_missing() -> None:
    s = MemoryManagerState()
    s.set_memory_blocks("p", "c", [])
    assert s.get_memory_blocks("p", "c") == []
    assert s.get_memory_blocks("p", "other") is None


def test_pod_entries() -> None:
    s = MemoryManagerState()
    s.set_pod_memory_blocks("p", [Block((0, 1), "memory", 2 * MB)])
    assert s.get_pod_memory_blocks("p") == [Block([0, 1], "memory", 2 * MB)]
    assert s.get_pod_memory_assignments() == {"p": [Block([0, 1], "memory", 2 * MB)]}
    s.delete_pod("p")
    assert s.get_pod_memory_blocks("p") is None


def test_block_json() -> None:
    assert Block([0, 1], "hugepages-2Mi", 4).to_json() == {"numaAffinity": [0, 1], "type": "hugepages-2Mi", "size": 4}
