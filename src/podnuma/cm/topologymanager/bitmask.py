"""NUMA-node bit masks.

Mirrors ``pkg/kubelet/cm/topologymanager/bitmask/bitmask.go``: an immutable
set of NUMA ids kept as an integer, with the ordering the topology manager
uses to pick the "narrowest" hint.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import chain, combinations, repeat
from operator import attrgetter
from typing import TypeVar

from podnuma.buildinfo import ENGINE_COMPILED

__all__ = [
    "BitMask",
    "iterate_bit_masks",
    "and_masks",
    "or_masks",
    "mask_value",
    "mask_combinations",
    "subset_sums",
    "built_without_collector",
    "BIT_RANGE_ERROR",
]

_T = TypeVar("_T")

_MAX_BITS = 64
_ALL_BITS = (1 << _MAX_BITS) - 1

# ``Add``/``Remove``/``NewBitMask`` error text (no bit number in it).
BIT_RANGE_ERROR = "bit number must be in range 0-63"


if ENGINE_COMPILED:
    # mypyc's native classes refuse object.__new__; their constructor with
    # no argument is as cheap there (the result's mask is set right after)
    def _new(cls: type[BitMask]) -> BitMask:
        return BitMask()

else:
    _new = object.__new__  # builds without running __init__


class BitMask:
    """``bitmask.BitMask`` (a 64-bit mask of NUMA node ids).

    Deliberately without ``__bool__``/``__len__``: every mask, even an
    empty one, is true, which bulk code relies on to drop nil affinities
    (``filter(None, ...)``)."""

    __slots__ = ("_mask",)

    def __deepcopy__(self, memo: dict[int, object]) -> BitMask:
        return self  # immutable


    def __init__(self, bits: Iterable[int] = ()) -> None:
        mask = 0
        for b in bits:
            if b < 0 or b >= _MAX_BITS:
                raise ValueError(BIT_RANGE_ERROR)
            mask |= 1 << b
        self._mask = mask

    @classmethod
    def of(cls, *bits: int) -> BitMask:
        return cls(bits)

    @classmethod
    def from_int(cls, mask: int) -> BitMask:
        m = _new(cls)
        m._mask = mask
        return m

    @classmethod
    def filled(cls) -> BitMask:
        """All 64 bits set (``Fill``)."""
        return cls.from_int(_ALL_BITS)

    def add(self, *bits: int) -> BitMask:
        """``Add`` on a copy: any bit outside 0-63 raises ``ValueError`` and,
        as upstream, no bit of the call is applied (self is immutable)."""
        return BitMask.from_int(self._mask | BitMask(bits)._mask)

    def remove(self, *bits: int) -> BitMask:
        """``Remove`` on a copy; same range rule as :meth:`add`."""
        return BitMask.from_int(self._mask & ~BitMask(bits)._mask)

    @property
    def value(self) -> int:
        return self._mask

    def bits(self) -> list[int]:
        """Set bits, ascending (``GetBits``)."""
        out: list[int] = []
        mask = self._mask
        while mask:
            low = mask & -mask
            out.append(low.bit_length() - 1)
            mask ^= low
        return out

    def count(self) -> int:
        return self._mask.bit_count()

    def is_empty(self) -> bool:
        return self._mask == 0

    def is_set(self, bit: int) -> bool:
        """Bits outside 0-63 are never set (``IsSet``)."""
        if bit < 0 or bit >= _MAX_BITS:
            return False
        return (self._mask >> bit) & 1 == 1

    def any_set(self, bits: Iterable[int]) -> bool:
        return any(self.is_set(b) for b in bits)

    def is_equal(self, other: BitMask) -> bool:
        return self._mask == other._mask

    def is_subset_of(self, other: BitMask) -> bool:
        return self._mask & ~other._mask == 0

    def is_superset_of(self, other: BitMask) -> bool:
        return other._mask & ~self._mask == 0

    def is_less_than(self, other: BitMask) -> bool:
        """Numeric comparison of the masks (``IsLessThan``)."""
        return self._mask < other._mask

    def is_greater_than(self, other: BitMask) -> bool:
        return self._mask > other._mask

    def is_narrower_than(self, other: BitMask) -> bool:
        """Fewer bits set; with equal counts, the numerically smaller mask
        is narrower (upstream's tie-break, reproduced)."""
        c1, c2 = self.count(), other.count()
        if c1 == c2:
            return self._mask < other._mask
        return c1 < c2

    def and_(self, *others: BitMask) -> BitMask:
        mask = self._mask
        for o in others:
            mask &= o._mask
        return BitMask.from_int(mask)

    def or_(self, *others: BitMask) -> BitMask:
        mask = self._mask
        for o in others:
            mask |= o._mask
        return BitMask.from_int(mask)

    def __iter__(self) -> Iterator[int]:
        return iter(self.bits())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BitMask) and other._mask == self._mask

    def __hash__(self) -> int:
        return hash(self._mask)

    def __str__(self) -> str:
        """``String()``: binary, zero-padded to an even width picked by the
        first ``shift`` (62, 60, …, 2) with ``mask > 1 << shift``; the strict
        ``>`` is upstream's quirk: {2} prints "100", {4} prints "10000"."""
        mask = self._mask
        for shift in range(_MAX_BITS - 2, 0, -2):
            if mask > (1 << shift):
                return format(mask, f"0{shift + 2}b")
        return format(mask, "02b")

    def __repr__(self) -> str:
        return f"BitMask({self.bits()})"


# ``BitMask.value`` as a C-level getter, for bulk work (``map`` over many
# masks) where a property call per mask would dominate.
mask_value: Callable[[BitMask], int] = attrgetter("_mask")


def and_masks(*masks: BitMask) -> BitMask:
    """``bitmask.And``: intersection of all masks (empty input -> empty)."""
    if not masks:
        return BitMask()
    return masks[0].and_(*masks[1:])


def or_masks(*masks: BitMask) -> BitMask:
    if not masks:
        return BitMask()
    return masks[0].or_(*masks[1:])


def iterate_bit_masks(bits: list[int]) -> Iterator[BitMask]:
    """Every non-empty mask over ``bits``: all masks of size 1 first, then 2, …;
    within a size, combinations in the order of ``bits`` (``IterateBitMasks``)."""
    for size in range(1, len(bits) + 1):
        for combo in combinations(bits, size):
            yield BitMask(combo)


def mask_combinations(bits: list[int]) -> tuple[tuple[BitMask, tuple[int, ...], int], ...]:
    """:func:`iterate_bit_masks` in bulk: every mask with its bits (in
    ``bits`` order) and its *compact* index, the mask over positions in
    ``bits`` (bit i set when ``bits[i]`` is), for tables indexed by subset.

    The result is immutable and depends only on ``bits``: the last few are
    kept (a 16-NUMA machine has 65,535 masks, which the CPU and memory
    managers both walk)."""
    for b in bits:
        if b < 0 or b >= _MAX_BITS:
            raise ValueError(BIT_RANGE_ERROR)
    return _mask_combinations(tuple(bits))


@lru_cache(maxsize=8)
def _mask_combinations(bits: tuple[int, ...]) -> tuple[tuple[BitMask, tuple[int, ...], int], ...]:
    if not ENGINE_COMPILED:
        return _mask_combinations_bulk(bits)
    value = {b: 1 << b for b in bits}
    position = {b: 1 << i for i, b in enumerate(bits)}
    out: list[tuple[BitMask, tuple[int, ...], int]] = []
    new = BitMask.from_int
    # bits 0..n-1 (the usual machine): a mask's value is its compact index
    dense = bits == tuple(range(len(bits)))
    # (compiled: native loops; pure Python builds by pipelines instead)
    for size in range(1, len(bits) + 1):
        for combo in combinations(bits, size):
            compact = 0
            for b in combo:
                compact |= position[b]
            v = compact if dense else sum(map(value.__getitem__, combo))
            out.append((new(v), combo, compact))
    return tuple(out)


def _mask_combinations_bulk(
    bits: tuple[int, ...],
) -> tuple[tuple[BitMask, tuple[int, ...], int], ...]:
    """:func:`_mask_combinations` by builtin pipelines (pure Python: no
    per-mask Python frame; 65,535 masks on a 16-NUMA machine). A mask's
    value and compact index are sums of distinct powers of two, and the
    masks are made without ``__init__`` and given their value through the
    slot's descriptor."""
    value = {b: 1 << b for b in bits}
    position = {b: 1 << i for i, b in enumerate(bits)}
    combos = list(chain.from_iterable(combinations(bits, k) for k in range(1, len(bits) + 1)))
    compacts = list(map(sum, map(map, repeat(position.__getitem__), combos)))
    dense = bits == tuple(range(len(bits)))
    values = compacts if dense else list(map(sum, map(map, repeat(value.__getitem__), combos)))
    # the slot's descriptor (through getattr: the type checker, and mypyc,
    # see only the instance attribute)
    set_mask: Callable[[BitMask, int], None] = getattr(BitMask, "_mask").__set__  # noqa: B009
    masks = list(map(_new, repeat(BitMask, len(combos))))
    deque(map(set_mask, masks, values), maxlen=0)
    return tuple(zip(masks, combos, compacts, strict=True))


if ENGINE_COMPILED:
    # compiled, a plain loop on native ints beats the C-level map below

    def subset_sums(per_node: Sequence[int]) -> list[int]:
        sums = [0] * (1 << len(per_node))
        size = 1
        for v in per_node:
            for i in range(size):
                sums[size + i] = sums[i] + v
            size *= 2
        return sums

else:

    def subset_sums(per_node: Sequence[int]) -> list[int]:
        """Sum of ``per_node`` over every subset of the nodes, by compact
        index (bit i of the index stands for node i, as in
        :func:`mask_combinations`): the table doubles with each node, the
        new half adding that node to every subset before it."""
        sums = [0]
        for v in per_node:
            sums += list(map(v.__add__, sums))
        return sums


def built_without_collector(build: Callable[[], _T]) -> _T:
    """``build()`` with Python's cyclic garbage collector paused (if it was
    running), then resumed.

    The per-machine mask tables are built once and hold one tuple and a few
    objects per NUMA mask: hundreds of thousands on a 16-NUMA machine, none
    of them in a reference cycle. Allocating them set off hundreds of
    collections, each walking every object built so far, for nothing: that
    was about half the cost of a 16-NUMA machine's first admission. Only
    the collector's automatic runs wait; memory is freed by reference
    counting as usual, and the collector runs again once the build ends.
    The switch is the process's: another thread's cyclic garbage waits while
    a build runs, and a thread that turns the collector off during a build
    finds it on again afterwards."""
    if not gc.isenabled():
        return build()
    gc.disable()
    try:
        return build()
    finally:
        gc.enable()
