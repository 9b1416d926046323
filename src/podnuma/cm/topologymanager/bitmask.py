"""NUMA-node bit masks.

Mirrors ``pkg/kubelet/cm/topologymanager/bitmask/bitmask.go``: an immutable
set of NUMA ids kept as an integer, with the ordering the topology manager
uses to pick the "narrowest" hint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import combinations
from operator import attrgetter

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.machine.cpuset import mask_ids

__all__ = [
    "BitMask",
    "iterate_bit_masks",
    "and_masks",
    "or_masks",
    "mask_value",
    "BIT_RANGE_ERROR",
]

_MAX_BITS = 64
_ALL_BITS = (1 << _MAX_BITS) - 1

# ``Add``/``Remove``/``NewBitMask`` error text (no bit number in it).
BIT_RANGE_ERROR = "bit number must be in range 0-63"


# How ``from_int`` makes a mask without running ``__init__``. The one
# build-dependent line left here: only code that names the class makes a
# native instance directly (a helper elsewhere taking the class would call
# it generically, measured 2x slower compiled); see native_twins.py.
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
        return mask_ids(self._mask)

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
