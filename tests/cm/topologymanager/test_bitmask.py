"""Port of upstream ``bitmask/bitmask_test.go`` against ``bitmask.py``.

The Go mask is mutable; ours is immutable, so ``Add``/``Remove``/``Clear``/
``Fill`` become ``add``/``remove``/``BitMask()``/``BitMask.filled()`` and the
out-of-range error (which leaves the Go mask untouched) is a ``ValueError``
that leaves ours untouched too.
"""

from __future__ import annotations

import pytest

from podnuma.cm.topologymanager.bitmask import (
    BIT_RANGE_ERROR,
    BitMask,
    and_masks,
    iterate_bit_masks,
    or_masks,
)


def test_new_empty_bitmask() -> None:
    assert str(BitMask()) == "00"


@pytest.mark.parametrize(
    ("bits", "expected"),
    [([0], "01"), ([1], "10"), ([0, 1], "11")],
)
def test_new_bitmask(bits: list[int], expected: str) -> None:
    assert str(BitMask(bits)) == expected


@pytest.mark.parametrize(
    ("bits", "expected"),
    [([0], "01"), ([1], "10"), ([0, 1], "11"), ([-1, 64], "00")],
)
def test_add(bits: list[int], expected: str) -> None:
    mask = BitMask()
    try:
        mask = mask.add(*bits)
    except ValueError as e:  # upstream ignores Add's error; the mask is unchanged
        assert str(e) == BIT_RANGE_ERROR
    assert str(mask) == expected


@pytest.mark.parametrize(
    ("bits_set", "bits_remove", "expected"),
    [([0], [0], "00"), ([0, 1], [1], "01"), ([0, 1], [0, 1], "00"), ([0], [-1, 64], "01")],
)
def test_remove(bits_set: list[int], bits_remove: list[int], expected: str) -> None:
    mask = BitMask(bits_set)
    try:
        mask = mask.remove(*bits_remove)
    except ValueError as e:
        assert str(e) == BIT_RANGE_ERROR
    assert str(mask) == expected


def test_out_of_range_bits_fail_whole_call() -> None:
    with pytest.raises(ValueError, match="^bit number must be in range 0-63$"):
        BitMask([0, 64])
    # Go applies nothing of a failing Add, not even the valid bits before.
    with pytest.raises(ValueError):
        BitMask([0]).add(1, -1)


@pytest.mark.parametrize(
    ("masks", "expected"),
    [
        ([[0, 1], [0, 1]], "11"),
        ([[0, 1], [1]], "10"),
        ([[0], [0, 1]], "01"),
        ([[0, 1], [0, 1], [1]], "10"),
        ([[0], [0], [1], [0, 1]], "00"),
        ([[0, 1, 2, 3], [1, 2, 3], [2, 3], [3]], "1000"),
    ],
)
def test_and(masks: list[list[int]], expected: str) -> None:
    bms = [BitMask(m) for m in masks]
    assert str(and_masks(*bms)) == expected
    assert str(bms[0].and_(*bms)) == expected


@pytest.mark.parametrize(
    ("masks", "expected"),
    [
        ([[0], []], "01"),
        ([[1], [1]], "10"),
        ([[0], [1]], "11"),
        ([[0, 1], [0, 1]], "11"),
        ([[0], [1], [0, 1]], "11"),
        ([[3], [2], [1], [0]], "1111"),
    ],
)
def test_or(masks: list[list[int]], expected: str) -> None:
    bms = [BitMask(m) for m in masks]
    assert str(or_masks(*bms)) == expected
    assert str(bms[0].or_(*bms)) == expected


@pytest.mark.parametrize("bits", [[0], [1], [0, 1]])
def test_clear(bits: list[int]) -> None:
    # Clear() is the empty mask.
    assert BitMask(bits).and_(BitMask()) == BitMask()
    assert str(BitMask()) == "00"


@pytest.mark.parametrize("bits", [[], [0], [0, 1]])
def test_fill(bits: list[int]) -> None:
    filled = BitMask(bits).or_(BitMask.filled())
    assert str(filled) == "1" * 64
    assert filled.count() == 64


@pytest.mark.parametrize(("bits", "expected"), [([], True), ([0], False), ([0, 1], False)])
def test_is_empty(bits: list[int], expected: bool) -> None:
    assert BitMask(bits).is_empty() is expected


@pytest.mark.parametrize(
    ("bits", "check", "expected"),
    [([], 0, False), ([0], 0, True), ([0, 1], 1, True), ([0, 1], 64, False), ([0, 1], -1, False)],
)
def test_is_set(bits: list[int], check: int, expected: bool) -> None:
    assert BitMask(bits).is_set(check) is expected


@pytest.mark.parametrize(
    ("bits", "check", "expected"),
    [
        ([], [0, 1], False),
        ([0], [0, 1], True),
        ([0, 1], [0, 1], True),
        ([0, 1], [64, 65], False),
        ([1, 2], [0, 3], False),
    ],
)
def test_any_set(bits: list[int], check: list[int], expected: bool) -> None:
    assert BitMask(bits).any_set(check) is expected


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [([], [], True), ([], [0], False), ([0], [0], True), ([0], [1], False), ([0, 1], [0, 1], True)],
)
def test_is_equal(first: list[int], second: list[int], expected: bool) -> None:
    assert BitMask(first).is_equal(BitMask(second)) is expected
    assert (BitMask(first) == BitMask(second)) is expected


@pytest.mark.parametrize(("bits", "expected"), [([], 0), ([0], 1), ([0, 1], 2)])
def test_count(bits: list[int], expected: int) -> None:
    assert BitMask(bits).count() == expected


@pytest.mark.parametrize(("bits", "expected"), [([], []), ([0], [0]), ([0, 1], [0, 1])])
def test_get_bits(bits: list[int], expected: list[int]) -> None:
    assert BitMask(bits).bits() == expected


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [([0], [0, 1], True), ([0, 1], [0], False), ([0], [1], True), ([1], [0], False)],
)
def test_is_narrower_than(first: list[int], second: list[int], expected: bool) -> None:
    assert BitMask(first).is_narrower_than(BitMask(second)) is expected


@pytest.mark.parametrize("numbits", [1, 2, 4, 8, 16])
def test_iterate_bit_masks(numbits: int) -> None:
    masks = list(iterate_bit_masks(list(range(numbits))))
    assert len(masks) == (1 << numbits) - 1
    assert len(set(masks)) == len(masks)


def test_iterate_bit_masks_order() -> None:
    # By size, then combinations in the order of the given bits.
    got = [m.bits() for m in iterate_bit_masks([0, 1, 2])]
    assert got == [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]


@pytest.mark.parametrize(
    ("bits", "expected"),
    [
        ([], "00"),
        ([0], "01"),
        ([1], "10"),
        ([2], "100"),  # strict '>' in String(): 4 is not > 1<<2, so width 2
        ([0, 2], "0101"),
        ([3], "1000"),
        ([4], "10000"),
        ([0, 4], "010001"),
        ([63], "1" + "0" * 63),
    ],
)
def test_string_quirk(bits: list[int], expected: str) -> None:
    assert str(BitMask(bits)) == expected


def test_less_and_greater() -> None:
    assert BitMask([0, 1]).is_less_than(BitMask([2]))
    assert BitMask([2]).is_greater_than(BitMask([0, 1]))
    assert not BitMask([1]).is_less_than(BitMask([1]))
