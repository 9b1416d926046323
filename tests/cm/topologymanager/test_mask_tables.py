"""The shared per-machine mask tables: every NUMA mask in
``IterateBitMasks`` order with its bits and compact index, the two hints
of each mask, and the collector pause the tables are built under."""

from __future__ import annotations

import gc

import pytest

from podnuma.cm.topologymanager.bitmask import BitMask, iterate_bit_masks
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.mask_tables import (
    built_without_collector,
    mask_combinations,
    mask_hint_pairs,
)

BIT_LISTS = ([0], [0, 1, 2, 3], [0, 2, 5], [3, 1, 7], [4, 9, 10, 11, 40], list(range(10)))


@pytest.mark.parametrize("bits", BIT_LISTS)
def test_mask_combinations_follow_iterate_bit_masks(bits: list[int]) -> None:
    table = mask_combinations(bits)
    walked = list(iterate_bit_masks(bits))
    assert [row[0] for row in table] == walked
    for mask, combo, compact in table:
        assert isinstance(mask, BitMask)
        assert BitMask(combo) == mask
        assert list(combo) == [b for b in bits if b in set(mask.bits())]
        assert compact == sum(1 << i for i, b in enumerate(bits) if b in combo)
        assert mask.count() == len(combo)


@pytest.mark.parametrize("bits", BIT_LISTS)
def test_hint_pairs_are_each_masks_preferred_and_plain_hint(bits: list[int]) -> None:
    pairs = mask_hint_pairs(bits)
    table = mask_combinations(bits)
    assert len(pairs) == len(table)
    for (preferred, plain), (mask, _, _) in zip(pairs, table, strict=True):
        assert preferred == TopologyHint(mask, True)
        assert plain == TopologyHint(mask, False)
        assert hash(preferred) == hash(TopologyHint(mask, True))
        assert preferred.is_equal(TopologyHint(BitMask(mask.bits()), True))


def test_the_collector_is_paused_for_the_build_and_resumed() -> None:
    was = gc.isenabled()
    try:
        gc.enable()
        assert built_without_collector(gc.isenabled) is False
        assert gc.isenabled()

        def fails() -> None:
            raise RuntimeError("build failed")

        with pytest.raises(RuntimeError):
            built_without_collector(fails)
        assert gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        assert built_without_collector(lambda: 7) == 7
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
