"""Both bodies of every native twin of the topology manager
(``native_twins.py``) give the same answers: the compiled build runs the
loops, pure Python the pipelines, and each build runs only one of them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.cm.topologymanager import native_twins as twins
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint

pure_only = pytest.mark.skipif(
    ENGINE_COMPILED, reason="the pipeline body makes instances with object.__new__ (pure Python only)"
)


def _hints() -> st.SearchStrategy[list[TopologyHint]]:
    mask = st.one_of(st.none(), st.integers(min_value=0, max_value=(1 << 14) - 1))
    hint = st.builds(
        lambda m, p: TopologyHint(None if m is None else BitMask.from_int(m), p), mask, st.booleans()
    )
    return st.lists(hint, max_size=12)


@settings(max_examples=200, deadline=None)
@given(per_node=st.lists(st.integers(min_value=0, max_value=500), max_size=8))
def test_subset_sums(per_node: list[int]) -> None:
    loops = twins.subset_sums_loops(per_node)
    assert loops == twins.subset_sums_bulk(per_node)
    assert twins.subset_sums(per_node) == loops
    for index, total in enumerate(loops):
        assert total == sum(v for i, v in enumerate(per_node) if index >> i & 1)


BIT_LISTS = ((0,), (0, 1, 2, 3), (0, 2, 5), (3, 1, 7), (4, 9, 10, 11, 40), tuple(range(9)))


@pure_only
@pytest.mark.parametrize("bits", BIT_LISTS)
def test_mask_rows(bits: tuple[int, ...]) -> None:
    loops = twins.mask_rows_loops(bits)
    bulk = twins.mask_rows_bulk(bits)
    assert [(m.value, combo, compact) for m, combo, compact in loops] == [
        (m.value, combo, compact) for m, combo, compact in bulk
    ]
    assert all(type(m) is BitMask for m, _, _ in bulk)


@pure_only
@pytest.mark.parametrize("bits", BIT_LISTS)
def test_hint_pairs(bits: tuple[int, ...]) -> None:
    masks = [row[0] for row in twins.mask_rows_loops(bits)]
    assert twins.hint_pairs_bulk(masks) == twins.hint_pairs_loops(masks)


@settings(max_examples=300, deadline=None)
@given(hints=_hints())
def test_merge_helpers(hints: list[TopologyHint]) -> None:
    affs = twins.affinities_bulk(hints)
    assert affs == [h.numa_node_affinity for h in hints]
    assert twins.affinities_loops(hints) == []  # the loops read the hints
    assert twins.preferred_masks_bulk(hints) == twins.preferred_masks_loops(hints)
    assert twins.all_masks_bulk(hints, affs) == twins.all_masks_loops(hints, [])
    distinct = {h.numa_node_affinity.value for h in hints if h.numa_node_affinity is not None}
    if distinct:
        assert twins.fewest_bits_bulk(distinct) == twins.fewest_bits_loops(distinct)
        assert twins.fewest_bits(distinct) == min(m.bit_count() for m in distinct)


def test_bit_count_beyond_the_table() -> None:
    for m in (0, 1, twins.SMALL_MASKS - 1, twins.SMALL_MASKS, (1 << 63) | 5):
        assert twins.bit_count(m) == m.bit_count()
