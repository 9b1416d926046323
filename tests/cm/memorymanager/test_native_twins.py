"""Both bodies of every native twin of the memory manager
(``native_twins.py``) give the same rows and hints."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from podnuma.cm.memorymanager import native_twins as twins
from podnuma.cm.memorymanager.native_twins import MaskRow
from podnuma.cm.topologymanager.mask_tables import mask_combinations, mask_hint_pairs


def _rows(n: int) -> list[MaskRow]:
    ids = list(range(n))
    return [
        (mask, bits, mask.value, compact, len(bits), preferred, plain, bits)
        for (mask, bits, compact), (preferred, plain) in zip(
            mask_combinations(ids), mask_hint_pairs(ids), strict=True
        )
    ]


@settings(max_examples=200, deadline=None)
@given(
    free=st.lists(st.integers(min_value=0, max_value=1 << 40), min_size=1, max_size=6),
    size=st.integers(min_value=0, max_value=1 << 42),
)
def test_free_reaches(free: list[int], size: int) -> None:
    rows = _rows(len(free))
    expected = [row for row in rows if sum(free[i] for i in row[7]) >= size]
    assert twins.free_reaches_loops(rows, free, size) == expected
    assert twins.free_reaches_bulk(rows, free, size) == expected
    assert twins.free_reaches(rows, free, size) == expected


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=1, max_value=6), width=st.integers(min_value=0, max_value=7))
def test_hint_list(n: int, width: int) -> None:
    rows = _rows(n)  # by width, as the policy keeps them
    expected = [row[5] if row[4] == width else row[6] for row in rows]
    assert twins.hint_list_loops(rows, width) == expected
    assert twins.hint_list_bulk(rows, width) == expected
    assert twins.hint_list(rows, width) == expected
