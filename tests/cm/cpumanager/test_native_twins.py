"""Both bodies of the CPU manager's native twin (``native_twins.py``)
pick the same hints."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from podnuma.cm.cpumanager import native_twins as twins
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint


@settings(max_examples=200, deadline=None)
@given(marks=st.lists(st.sampled_from([0, 0x80]), max_size=40), data=st.data())
def test_selected_hints(marks: list[int], data: st.DataObject) -> None:
    hints = [TopologyHint(BitMask.from_int(i + 1), i % 2 == 0) for i in range(len(marks))]
    # each hint's byte somewhere in a longer byte string
    positions = data.draw(st.permutations(range(len(marks) * 2)))[: len(marks)]
    tops = bytearray(len(marks) * 2)
    for pos, mark in zip(positions, marks, strict=True):
        tops[pos] = mark
    expected = [h for h, mark in zip(hints, marks, strict=True) if mark]
    pick = twins.byte_picker(positions)
    assert list(pick(bytes(tops))) == [tops[p] for p in positions]
    assert twins.selected_hints_loops(hints, bytes(tops), positions, pick) == expected
    assert twins.selected_hints_bulk(hints, bytes(tops), positions, pick) == expected
    assert twins.selected_hints(hints, bytes(tops), positions, pick) == expected
