"""``Value``/``MilliValue``/``AsInt64``/``RoundUp`` beyond int64, as
apimachinery computes them (int64Amount vs inf.Dec forms, scale_int.go).

Expected figures are worked out from the Go code by hand: the int64 form
(``positiveScaleInt64``) wraps for the scale steps 1, 2, 3, 6 and 9 and gives
0 for the others; the inf.Dec form keeps the low 64 bits of the big result and
multiplies by ``int64(math.Pow10(n))``, which is math.MinInt64 for n >= 19
on amd64. The differential table in tests/oracle/test_extreme_quantities.py
checks the same behaviour against the real kubelet.
"""

from __future__ import annotations

import pytest

from podnuma.api.quantity import (
    ERR_SUFFIX,
    Quantity,
    QuantityError,
    parse_quantity,
    quantity_from_manifest,
    wrap_int64,
)

MIN64 = -(1 << 63)
MAX64 = (1 << 63) - 1


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        # ordinary quantities: the exact value
        ("1", 1, 1000),
        ("1.5", 2, 1500),
        ("1n", 1, 1),
        ("1Gi", 1 << 30, (1 << 30) * 1000),
        ("1.5Gi", 1610612736, 1610612736000),
        # int64 form, scale 18 -> 21: the *10 loop overflows -> 0
        ("9E", 9 * 10**18, 0),
        ("10E", 0, 0),
        ("1e30", 0, 0),
        ("1e400", 0, 0),
        # int64 form, scale 0 -> 3: the dedicated *1000 step wraps
        ("9223372036854776", 9223372036854776, wrap_int64(9223372036854776000)),
        # inf.Dec form (19+ digits): low 64 bits
        ("9223372036854775807", MAX64, -1000),
        ("123456789012345678901234567890", wrap_int64(123456789012345678901234567890),
         wrap_int64(123456789012345678901234567890000)),
        ("5000Pi", 5000 << 50, wrap_int64((5000 << 50) * 1000)),
        # BinarySI capped at 2^63-1 (inf.Dec at scale 0): 2^63-1 * 1000 wraps
        ("100Ei", MAX64, -1000),
        ("8Ei", MAX64, -1000),
    ],
)
def test_value_and_milli_value_as_go_returns_them(text: str, value: int, milli: int) -> None:
    qty = parse_quantity(text)
    assert qty.value() == value
    assert qty.milli_value() == milli
    assert MIN64 <= qty.milli_value() <= MAX64


def test_dec_scale_up_multiplies_by_int64_of_pow10() -> None:
    # int64Amount(900000000000000001, scale 18) added up: the 11th Add
    # overflows int64 and the sum becomes inf.Dec(u, scale 18); MilliValue
    # scales it up by 21 digits: wrapped u * int64(math.Pow10(21)), and that
    # conversion is math.MinInt64 on amd64
    part = parse_quantity("900000000000000001E")
    total = part
    for _ in range(10):
        total = total + part
    assert total.is_dec
    u = 11 * 900000000000000001
    assert total.milli_value() == wrap_int64(wrap_int64(u) * MIN64) == MIN64  # u is odd
    assert total.value() == wrap_int64(wrap_int64(u) * 10**18)  # Pow10(18) is exact
    ten = part
    for _ in range(9):
        ten = ten + part
    assert not ten.is_dec  # 9e18 + 10 still fits


def test_int64_sum_changes_scale_then_wraps() -> None:
    # 1e18 + 1 stays an int64Amount (value 10^18+1, scale 0); MilliValue's
    # *1000 step wraps
    total = parse_quantity("1e18") + parse_quantity("1")
    assert not total.is_dec
    assert total.milli_value() == wrap_int64((10**18 + 1) * 1000) == 3875820019684213736


def test_round_up_to_milli_sets_the_form_value_sees() -> None:
    # RoundUp(-3) leaves an int64 amount at scale >= -3 alone ...
    one = parse_quantity("1")
    assert one.round_up(-3) is one
    # ... rounds finer ones up (away from zero) ...
    tiny = parse_quantity("1n").round_up(-3)
    assert tiny == Quantity.from_milli(1) and str(tiny) == "1m"
    # ... and puts an inf.Dec at milli scale: 2^63 * 1000 wraps to 0
    big = parse_quantity("9223372036854775808").round_up(-3)
    assert big.is_dec
    assert big.milli_value() == 0
    assert big.value() == MIN64


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1Gi", (1 << 30, True)),
        ("1k", (1000, True)),
        ("9E", (9 * 10**18, True)),
        ("10E", (wrap_int64(10**19), False)),  # the *10 loop: 0 in Go
        ("1.5Gi", (0, False)),  # inf.Dec
        ("9223372036854775807", (0, False)),  # inf.Dec
    ],
)
def test_as_int64(text: str, expected: tuple[int, bool]) -> None:
    value, ok = parse_quantity(text).as_int64()
    assert ok == expected[1]
    if ok:
        assert value == expected[0]


def test_as_int64_fails_at_milli_scale() -> None:
    # "2" after RoundUp(-3) is still scale 0; "2000m" is scale -3: AsInt64 fails
    assert parse_quantity("2").round_up(-3).as_int64() == (2, True)
    assert parse_quantity("2000m").round_up(-3).as_int64() == (0, False)


def test_huge_exponents_are_refused_clearly_not_computed() -> None:
    # "1e99999999999": ParseInt fits, the int32 truncation leaves an
    # exponent near 1.2e9; the real code would then compute 10^exponent
    with pytest.raises(QuantityError, match="exponent .* too large"):
        parse_quantity("1e99999999999")
    with pytest.raises(QuantityError, match="exponent .* too large"):
        parse_quantity("1234567890123456789012e200000")
    # an exponent ParseInt refuses is apimachinery's suffix error
    with pytest.raises(QuantityError, match=f"^{ERR_SUFFIX}$"):
        parse_quantity("1e" + "9" * 30)
    # a zero needs no power of ten
    assert parse_quantity("0e99999999999").is_zero()
    # far below 1n: rounds up to 1n without computing 10^-exponent
    assert parse_quantity("1e-99999999").nanos == 1


def test_long_digit_strings_parse_and_print() -> None:
    # CPython limits int <-> str conversions to 4300 digits; Go does not
    text = "7" * 5000
    qty = quantity_from_manifest(text)
    assert qty.nanos == 7 * (10**5000 - 1) // 9 * 10**9
    assert str(qty) == text


def test_large_exponents_within_bounds_keep_their_canonical_form() -> None:
    assert str(parse_quantity("1e99998")) == "100e99996"
    assert str(parse_quantity("1e99999")) == "1e99999"  # canonical: the text is kept
    assert str(parse_quantity("1e100000")) == "10e99999"
    with pytest.raises(QuantityError, match="exponent 100001 too large"):
        parse_quantity("1e100001")
    assert str(parse_quantity("-1e99998") + parse_quantity("-1e99998")) == "-200e99996"
