"""The topology manager's native twins: one job, two bodies.

Each function here exists twice, with the same results: a ``_loops`` body
of plain loops, which the compiled (mypyc) build turns into native code,
and a ``_bulk`` body for pure Python, where every Python frame counts:
builtin pipelines (``map``, ``compress``, slot descriptors) where they
win, comprehensions where they do not (on CPython 3.11 a ``map`` over an
``attrgetter``, an ``itemgetter`` or a bound slot wrapper such as
``n.__add__`` pays a generic call per item, which a comprehension's
attribute or item read does not). The public name is the compiled build's body when compiled
(``ENGINE_COMPILED``; the build leaves the other branch out of the C
code), else the bulk one. ``tests/cm/topologymanager/test_native_twins.py``
runs both bodies and compares them.

Not upstream code: the mirrors (``bitmask.py``, ``hint.py``, ``policy.py``)
stay free of it; the mask tables (``mask_tables.py``) and the fast merge
(``policy_fastmerge.py``) call these.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from itertools import chain, combinations, repeat

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint

__all__ = [
    "MaskRows",
    "subset_sums",
    "mask_rows",
    "hint_pairs",
    "affinities",
    "preferred_masks",
    "all_masks",
    "fewest_bits",
    "bit_count",
]

#: every mask over some bits with its bits and compact index
MaskRows = tuple[tuple[BitMask, tuple[int, ...], int], ...]


# -- subset sums ------------------------------------------------------------


def subset_sums_loops(per_node: Sequence[int]) -> list[int]:
    sums = [0] * (1 << len(per_node))
    size = 1
    for v in per_node:
        for i in range(size):
            sums[size + i] = sums[i] + v
        size *= 2
    return sums


def subset_sums_bulk(per_node: Sequence[int]) -> list[int]:
    sums = [0]
    for v in per_node:
        # (a comprehension: ``map(v.__add__, ...)`` pays a slot wrapper call per item)
        sums += [s + v for s in sums]
    return sums


# subset_sums: Sum of `per_node` over every subset of the nodes, by
# compact index (bit i of the index stands for node i, as in
# `mask_tables.mask_combinations`): the table doubles with each node, the new
# half adding that node to every subset before it.
if ENGINE_COMPILED:

    def subset_sums(per_node: Sequence[int]) -> list[int]:
        return subset_sums_loops(per_node)

else:
    subset_sums = subset_sums_bulk


# -- the masks over some bits -------------------------------------------------


def mask_rows_loops(bits: tuple[int, ...]) -> MaskRows:
    value = {b: 1 << b for b in bits}
    position = {b: 1 << i for i, b in enumerate(bits)}
    out: list[tuple[BitMask, tuple[int, ...], int]] = []
    new = BitMask.from_int
    # bits 0..n-1 (the usual machine): a mask's value is its compact index
    dense = bits == tuple(range(len(bits)))
    for size in range(1, len(bits) + 1):
        for combo in combinations(bits, size):
            compact = 0
            for b in combo:
                compact |= position[b]
            v = compact if dense else sum(map(value.__getitem__, combo))
            out.append((new(v), combo, compact))
    return tuple(out)


def mask_rows_bulk(bits: tuple[int, ...]) -> MaskRows:
    """No per-mask Python frame (65,535 masks on a 16-NUMA machine): a
    mask's value and compact index are sums of distinct powers of two, and
    the masks are made without ``__init__`` and given their value through
    the slot's descriptor (pure Python only: a compiled class refuses
    ``object.__new__``)."""
    value = {b: 1 << b for b in bits}
    position = {b: 1 << i for i, b in enumerate(bits)}
    combos = list(chain.from_iterable(combinations(bits, k) for k in range(1, len(bits) + 1)))
    compacts = list(map(sum, map(map, repeat(position.__getitem__), combos)))
    dense = bits == tuple(range(len(bits)))
    values = compacts if dense else list(map(sum, map(map, repeat(value.__getitem__), combos)))
    # the slot's descriptor (through getattr: the type checker, and mypyc,
    # see only the instance attribute)
    set_mask: Callable[[BitMask, int], None] = getattr(BitMask, "_mask").__set__  # noqa: B009
    masks: list[BitMask] = list(map(object.__new__, repeat(BitMask, len(combos))))
    deque(map(set_mask, masks, values), maxlen=0)
    return tuple(zip(masks, combos, compacts, strict=True))


# mask_rows: Every non-empty mask over `bits` in `IterateBitMasks`
# order, with its bits (in `bits` order) and its compact index (bit i set
# when `bits[i]` is).
if ENGINE_COMPILED:

    def mask_rows(bits: tuple[int, ...]) -> MaskRows:
        return mask_rows_loops(bits)

else:
    mask_rows = mask_rows_bulk


# -- the two hints of each mask -------------------------------------------------


def hint_pairs_loops(masks: list[BitMask]) -> tuple[tuple[TopologyHint, TopologyHint], ...]:
    return tuple([(TopologyHint(mask, True), TopologyHint(mask, False)) for mask in masks])


def hint_pairs_bulk(masks: list[BitMask]) -> tuple[tuple[TopologyHint, TopologyHint], ...]:
    """Made without ``__init__`` and filled through the slots' descriptors,
    by builtin pipelines (pure Python only, as :func:`mask_rows_bulk`)."""
    set_affinity: Callable[[TopologyHint, BitMask | None], None] = getattr(  # noqa: B009
        TopologyHint, "numa_node_affinity"
    ).__set__
    set_preferred: Callable[[TopologyHint, bool], None] = getattr(  # noqa: B009
        TopologyHint, "preferred"
    ).__set__
    n = len(masks)
    preferred: list[TopologyHint] = list(map(object.__new__, repeat(TopologyHint, n)))
    not_preferred: list[TopologyHint] = list(map(object.__new__, repeat(TopologyHint, n)))
    for hints, flag in ((preferred, True), (not_preferred, False)):
        deque(map(set_affinity, hints, masks), maxlen=0)
        deque(map(set_preferred, hints, repeat(flag, n)), maxlen=0)
    return tuple(zip(preferred, not_preferred, strict=True))


# hint_pairs: Per mask, its preferred and its non-preferred hint.
if ENGINE_COMPILED:

    def hint_pairs(masks: list[BitMask]) -> tuple[tuple[TopologyHint, TopologyHint], ...]:
        return hint_pairs_loops(masks)

else:
    hint_pairs = hint_pairs_bulk


# -- the masks of one provider's hints (the fast merge) ---------------------------
#
# compiled, plain loops over the hints beat the pipelines; the affinity list
# is not needed there (the loops read the hints)


def affinities_loops(hints: Sequence[TopologyHint]) -> list[BitMask | None]:
    return []


def affinities_bulk(hints: Sequence[TopologyHint]) -> list[BitMask | None]:
    # (a comprehension: on CPython 3.11 an attrgetter call through ``map``
    # costs more than the comprehension's attribute read)
    return [h.numa_node_affinity for h in hints]


def preferred_masks_loops(hints: Sequence[TopologyHint]) -> set[int | None]:
    out: set[int | None] = set()
    for h in hints:
        if h.preferred:
            a = h.numa_node_affinity
            out.add(None if a is None else a.value)
    return out


def preferred_masks_bulk(hints: Sequence[TopologyHint]) -> set[int | None]:
    # (few hints are preferred: their masks read where the flag is set)
    return {
        None if (a := h.numa_node_affinity) is None else a._mask for h in hints if h.preferred
    }


def all_masks_loops(hints: Sequence[TopologyHint], affs: list[BitMask | None]) -> set[int | None]:
    out: set[int | None] = set()
    for h in hints:
        a = h.numa_node_affinity
        out.add(None if a is None else a.value)
    return out


def all_masks_bulk(hints: Sequence[TopologyHint], affs: list[BitMask | None]) -> set[int | None]:
    return {None if a is None else a._mask for a in affs}


# Bit counts of the masks of up to 12 NUMA nodes, by value: compiled,
# ``int.bit_count`` is a generic method call, a list lookup is native.
SMALL_MASKS = 1 << 12
_BIT_COUNTS: list[int] = [m.bit_count() for m in range(SMALL_MASKS)]


def bit_count(m: int) -> int:
    """``m.bit_count()``, looked up for small masks."""
    return _BIT_COUNTS[m] if 0 <= m < SMALL_MASKS else m.bit_count()


def fewest_bits_loops(masks: set[int]) -> int:
    fewest = -1
    for m in masks:
        c = bit_count(m)
        if fewest < 0 or c < fewest:
            fewest = c
    return fewest


def fewest_bits_bulk(masks: set[int]) -> int:
    return min(map(int.bit_count, masks))


# affinities: The hints' masks, read once per list when a merge needs
# more than the preferred masks (the compiled body reads the hints
# instead: an empty list).
# preferred_masks: The distinct masks of the preferred hints (`None` for
# nil).
# all_masks: The distinct masks of all hints (`None` for nil); `affs`: the
# hints' masks (:func:`affinities`).
# fewest_bits: The fewest bits of a mask in `masks` (not empty).
if ENGINE_COMPILED:

    def affinities(hints: Sequence[TopologyHint]) -> list[BitMask | None]:
        return affinities_loops(hints)

    def preferred_masks(hints: Sequence[TopologyHint]) -> set[int | None]:
        return preferred_masks_loops(hints)

    def all_masks(hints: Sequence[TopologyHint], affs: list[BitMask | None]) -> set[int | None]:
        return all_masks_loops(hints, affs)

    def fewest_bits(masks: set[int]) -> int:
        return fewest_bits_loops(masks)

else:
    affinities = affinities_bulk
    preferred_masks = preferred_masks_bulk
    all_masks = all_masks_bulk
    fewest_bits = fewest_bits_bulk
