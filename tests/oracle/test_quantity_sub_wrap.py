"""``Quantity.Sub`` of ``math.MinInt64`` (a huge page pool of exactly 2^63
bytes, as the kubelet's capacity holds it) and the canonical text of
``math.MinInt64`` bytes, as apimachinery v0.37.2 computes them.

``int64Amount.Sub`` adds the negated int64, and -MinInt64 is MinInt64: while
the sum holds in an int64 the result is 2^63 short of the exact one (0 -
MinInt64 is MinInt64); when it does not, the inf.Dec fallback subtracts
exactly. The expected rows were printed by apimachinery's own code (a Go
test calling ``a.Sub(b)`` then ``Sign``, ``Value`` and ``String``); the
kubelet paths through them are compared with the oracle in
tests/oracle/test_sysfs_wrap.py (allocatable memory of such a node is 0)."""

from __future__ import annotations

import pytest

from podnuma.api.quantity import Quantity, parse_quantity

MIN = -(1 << 63)

#: (a, b, Sign, Value, String) of a.Sub(b); "MIN" is NewQuantity(MinInt64, BinarySI)
ROWS = [
    ("0", "MIN", -1, -9223372036854775808, "-9223372036854775808"),
    ("5", "MIN", -1, -9223372036854775803, "-9223372036854775803"),
    ("-5", "MIN", 1, 9223372036854775803, "9223372036854775803"),
    ("9223372036854775807", "MIN", 1, -1, "18446744073709551615"),  # (an inf.Dec: exact)
    ("MIN", "MIN", 0, 0, "0"),
    ("1Gi", "MIN", -1, -9223372035781033984, "-8589934591Gi"),
    ("1G", "MIN", -1, -9223372035854775808, "-9223372035854775808"),
    ("100m", "MIN", 1, -9223372036854775807, "9223372036854775808100m"),
    ("1e30", "MIN", 1, -4146427766549512192, "1000000000009223372036854775808"),
    ("-8Ei", "MIN", 1, 1, "1"),
    ("1k", "MIN", -1, -9223372036854774808, "-9223372036854774808"),
    ("8Gi", "-8Ei", 1, -9223372028264841217, "9223372045444710399"),
]


def _q(text: str) -> Quantity:
    return Quantity.from_int(MIN, binary=True) if text == "MIN" else parse_quantity(text)


@pytest.mark.parametrize(("a", "b", "sign", "value", "text"), ROWS, ids=[f"{r[0]}-{r[1]}" for r in ROWS])
def test_sub_of_min_int64_is_apimachinerys(a: str, b: str, sign: int, value: int, text: str) -> None:
    got = _q(a) - _q(b)
    assert (got.sign(), got.value(), str(got)) == (sign, value, text)


def test_min_int64_bytes_print_without_a_suffix() -> None:
    # removeInt64Factors cannot negate MinInt64; the next int64 up is -8589934591Gi
    assert str(Quantity.from_int(MIN, binary=True)) == "-9223372036854775808"
    assert str(Quantity.from_int(MIN + (1 << 30), binary=True)) == "-8589934591Gi"
    assert str(Quantity.from_int(MIN + (1 << 21), binary=True)) == "-8796093022206Mi"
