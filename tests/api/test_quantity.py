"""Tables ported from apimachinery's resource/quantity_test.go."""

from __future__ import annotations

from fractions import Fraction

import pytest

from podnuma.api.quantity import (
    ERR_FORMAT_WRONG,
    ERR_SUFFIX,
    Format,
    Quantity,
    QuantityError,
    parse_quantity,
    quantity_from_manifest,
)

DSI = Format.DECIMAL_SI
BSI = Format.BINARY_SI
DEX = Format.DECIMAL_EXPONENT
MOST_POSITIVE = (1 << 63) - 1


def q(mantissa: int, exponent: int) -> Fraction:
    return Fraction(mantissa) * Fraction(10) ** exponent


def nanos_of(value: Fraction) -> int:
    scaled = value * 10**9
    assert scaled.denominator == 1
    return int(scaled)


# (input, expected exact value, expected format) -- TestQuantityParse
PARSE_TABLE: list[tuple[str, Fraction, Format]] = [
    ("0", q(0, 0), DSI),
    ("0n", q(0, 0), DSI),
    ("0u", q(0, 0), DSI),
    ("0m", q(0, 0), DSI),
    ("0Ki", q(0, 0), BSI),
    ("0k", q(0, 0), DSI),
    ("0Mi", q(0, 0), BSI),
    ("0M", q(0, 0), DSI),
    ("0Gi", q(0, 0), BSI),
    ("0G", q(0, 0), DSI),
    ("0Ti", q(0, 0), BSI),
    ("0T", q(0, 0), DSI),
    ("1", q(1, 0), DSI),
    ("1Ki", q(1024, 0), BSI),
    ("8Ki", q(8 * 1024, 0), BSI),
    ("7Mi", q(7 * 1024**2, 0), BSI),
    ("6Gi", q(6 * 1024**3, 0), BSI),
    ("5Ti", q(5 * 1024**4, 0), BSI),
    ("4Pi", q(4 * 1024**5, 0), BSI),
    ("3Ei", q(3 * 1024**6, 0), BSI),
    ("10Ti", q(10 * 1024**4, 0), BSI),
    ("100Ti", q(100 * 1024**4, 0), BSI),
    ("5n", q(5, -9), DSI),
    ("4u", q(4, -6), DSI),
    ("3m", q(3, -3), DSI),
    ("9", q(9, 0), DSI),
    ("8k", q(8, 3), DSI),
    ("50k", q(5, 4), DSI),
    ("7M", q(7, 6), DSI),
    ("6G", q(6, 9), DSI),
    ("5T", q(5, 12), DSI),
    ("40T", q(4, 13), DSI),
    ("300T", q(3, 14), DSI),
    ("2P", q(2, 15), DSI),
    ("1E", q(1, 18), DSI),
    ("1E-3", q(1, -3), DEX),
    ("1e3", q(1, 3), DEX),
    ("1E6", q(1, 6), DEX),
    ("1e9", q(1, 9), DEX),
    ("1E12", q(1, 12), DEX),
    ("1e15", q(1, 15), DEX),
    ("1E18", q(1, 18), DEX),
    ("1e14", q(1, 14), DEX),
    ("1e13", q(1, 13), DEX),
    ("100.035k", q(100035, 0), DSI),
    ("0.001", q(1, -3), DSI),
    ("0.0005k", q(5, -1), DSI),
    ("0.005", q(5, -3), DSI),
    ("0.05", q(5, -2), DSI),
    ("0.5", q(5, -1), DSI),
    ("0.00050k", q(5, -1), DSI),
    ("0.00500", q(5, -3), DSI),
    ("0.05000", q(5, -2), DSI),
    ("0.50000", q(5, -1), DSI),
    ("0.5e0", q(5, -1), DEX),
    ("0.5e-1", q(5, -2), DEX),
    ("0.5e-2", q(5, -3), DEX),
    ("10.035M", q(10035, 3), DSI),
    ("1.2e3", q(12, 2), DEX),
    ("1.3E+6", q(13, 5), DEX),
    ("1.40e9", q(14, 8), DEX),
    ("1.53E12", q(153, 10), DEX),
    ("1.6e15", q(16, 14), DEX),
    ("1.7E18", q(17, 17), DEX),
    ("9.01", q(901, -2), DSI),
    ("8.1k", q(81, 2), DSI),
    ("7.123456M", q(7123456, 0), DSI),
    ("6.987654321G", q(6987654321, 0), DSI),
    ("5.444T", q(5444, 9), DSI),
    ("40.1T", q(401, 11), DSI),
    ("300.2T", q(3002, 11), DSI),
    ("2.5P", q(25, 14), DSI),
    ("1.01E", q(101, 16), DSI),
    # saturate / round
    ("3.001n", q(4, -9), DSI),
    ("1.1E-9", q(2, -9), DEX),
    ("0.0000000001", q(1, -9), DSI),
    ("0.0000000005", q(1, -9), DSI),
    ("0.00000000050", q(1, -9), DSI),
    ("0.5e-9", q(1, -9), DEX),
    ("0.9n", q(1, -9), DSI),
    ("0.00000012345", q(124, -9), DSI),
    ("0.00000012354", q(124, -9), DSI),
    ("9Ei", q(MOST_POSITIVE, 0), BSI),
    ("9223372036854775807Ki", q(MOST_POSITIVE, 0), BSI),
    ("12E", q(12, 18), DSI),
    # fractional binary
    ("100.035Ki", q(10243584, -2), BSI),
    ("0.5Mi", q(512 * 1024, 0), BSI),
    ("0.05Gi", q(536870912, -1), BSI),
    ("0.025Ti", q(274877906944, -1), BSI),
    # written by trolls
    ("0.000000000001Ki", q(2, -9), DSI),
    (".001", q(1, -3), DSI),
    (".0001k", q(100, -3), DSI),
    ("1.", q(1, 0), DSI),
    ("1.G", q(1, 9), DSI),
]


@pytest.mark.parametrize(("text", "value", "fmt"), PARSE_TABLE)
def test_parse(text: str, value: Fraction, fmt: Format) -> None:
    got = parse_quantity(text)
    assert got.nanos == nanos_of(value)
    assert got.format is fmt


@pytest.mark.parametrize(("text", "value", "fmt"), PARSE_TABLE)
def test_parse_negative_and_plus(text: str, value: Fraction, fmt: Format) -> None:
    neg = parse_quantity("-" + text)
    assert neg.nanos == -nanos_of(value)
    assert neg.format is fmt
    plus = parse_quantity("+" + text)
    assert plus.nanos == nanos_of(value)
    assert plus.format is fmt


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ERR_FORMAT_WRONG),
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),
        ("0.1mi", ERR_SUFFIX),
        ("0.1am", ERR_FORMAT_WRONG),
        ("aoeu", ERR_FORMAT_WRONG),
        (".5i", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("-3.01i", ERR_SUFFIX),
        ("-3.01e-", ERR_SUFFIX),
        (" 1", ERR_FORMAT_WRONG),
        ("1 ", ERR_FORMAT_WRONG),
        ("1K", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        ("1Mb", ERR_FORMAT_WRONG),
        ("Non-Numeric", ERR_FORMAT_WRONG),
    ],
)
def test_parse_invalid(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as exc:
        parse_quantity(text)
    assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_format_wrong_message_text() -> None:
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


# TestQuantityString: (value, format, canonical); the canonical form parses
# back to itself (it is kept verbatim), the alternate spelling re-renders.
STRING_TABLE: list[tuple[Fraction, Format, str, str]] = [
    (q(1024**3, 0), BSI, "1Gi", "1024Mi"),
    (q(300 * 1024**2, 0), BSI, "300Mi", "307200Ki"),
    (q(6 * 1024, 0), BSI, "6Ki", ""),
    (q(1001 * 1024**3, 0), BSI, "1001Gi", "1025024Mi"),
    (q(1024**4, 0), BSI, "1Ti", "1024Gi"),
    (q(5, 0), BSI, "5", "5000m"),
    (q(500, -3), BSI, "500m", "0.5"),
    (q(1, 9), DSI, "1G", "1000M"),
    (q(1000, 6), DSI, "1G", "0.001T"),
    (q(1000000, 3), DSI, "1G", ""),
    (q(1000000000, 0), DSI, "1G", ""),
    (q(1, -3), DSI, "1m", "1000u"),
    (q(80, -3), DSI, "80m", ""),
    (q(1080, -3), DSI, "1080m", "1.08"),
    (q(108, -2), DSI, "1080m", "1080000000n"),
    (q(10800, -4), DSI, "1080m", ""),
    (q(300, 6), DSI, "300M", ""),
    (q(1, 12), DSI, "1T", ""),
    (q(1234567, 6), DSI, "1234567M", ""),
    (q(1234567, -3), BSI, "1234567m", ""),
    (q(3, 3), DSI, "3k", ""),
    (q(1025, 0), BSI, "1025", ""),
    (q(0, 0), DSI, "0", ""),
    (q(0, 0), BSI, "0", ""),
    (q(1, 9), DEX, "1e9", ".001e12"),
    (q(1, -3), DEX, "1e-3", "0.001e0"),
    (q(1, -9), DEX, "1e-9", "1000e-12"),
    (q(80, -3), DEX, "80e-3", ""),
    (q(300, 6), DEX, "300e6", ""),
    (q(1, 12), DEX, "1e12", ""),
    (q(1, 3), DEX, "1e3", ""),
    (q(3, 3), DEX, "3e3", ""),
    (q(0, 0), DEX, "0", "00"),
    (q(1, -9), DSI, "1n", ""),
    (q(80, -9), DSI, "80n", ""),
    (q(1080, -9), DSI, "1080n", ""),
    (q(108, -8), DSI, "1080n", ""),
    (q(10800, -10), DSI, "1080n", ""),
    (q(1, -6), DSI, "1u", ""),
    (q(80, -6), DSI, "80u", ""),
    (q(1080, -6), DSI, "1080u", ""),
]


@pytest.mark.parametrize(("value", "fmt", "expect", "alternate"), STRING_TABLE)
def test_string(value: Fraction, fmt: Format, expect: str, alternate: str) -> None:
    quantity = Quantity.from_nanos(nanos_of(value), fmt)
    assert str(quantity) == expect
    assert str(parse_quantity(expect)) == expect
    if alternate:
        assert str(parse_quantity(alternate)) == expect
    if value != 0:
        assert str(-quantity) == "-" + expect


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
    ],
)
def test_parse_emit(text: str, expect: str) -> None:
    assert str(parse_quantity(text)) == expect
    assert str(parse_quantity("-" + text)) == "-" + expect


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        # ParseQuantity keeps input text it considers canonical, verbatim.
        ("+1Ki", "+1Ki"),
        ("1.500", "1.500"),
        ("1.G", "1.G"),
        ("1.5", "1500m"),
        ("1000m", "1"),
        ("8Ki", "8Ki"),
        ("1.5Gi", "1536Mi"),
        ("1000E", "1"),  # no SI suffix above E: upstream prints the bare mantissa
    ],
)
def test_string_quirks(text: str, expect: str) -> None:
    assert str(parse_quantity(text)) == expect


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("9.01", 10, 9010),
        ("-9.01", -10, -9010),
        ("1500m", 2, 1500),
        ("1n", 1, 1),
        ("-1n", -1, -1),
        ("0.1m", 1, 1),
        ("1Gi", 1024**3, 1024**3 * 1000),
        ("100.035Ki", 102436, 102435840),
        ("0", 0, 0),
        ("2", 2, 2000),
    ],
)
def test_value_rounding(text: str, value: int, milli: int) -> None:
    got = parse_quantity(text)
    assert got.value() == value
    assert got.milli_value() == milli


def test_scaled_value_round_up() -> None:
    # TestQuantityRoundUp: rounding is away from zero.
    nine = parse_quantity("9.01")
    assert [nine.scaled_value(s) for s in (-3, -2, -1, 0, 1, 2)] == [9010, 901, 91, 10, 1, 1]
    neg = parse_quantity("-9.01")
    assert [neg.scaled_value(s) for s in (-1, 0, 1)] == [-91, -10, -1]


@pytest.mark.parametrize(
    ("x", "y", "expect"),
    [("0", "0", 0), ("100m", "50m", 1), ("50m", "100m", -1), ("10000T", "100Gi", 1), ("1k", "1000", 0)],
)
def test_cmp(x: str, y: str, expect: int) -> None:
    a, b = parse_quantity(x), parse_quantity(y)
    assert a.cmp(b) == expect
    assert (a < b) == (expect < 0)
    assert (a == b) == (expect == 0)
    assert (a > b) == (expect > 0)


def test_equal_values_hash_equal() -> None:
    assert hash(parse_quantity("1k")) == hash(parse_quantity("1000"))
    assert {parse_quantity("1Ki"), parse_quantity("1024")} == {parse_quantity("1.024k")}


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_add_sub_zero_preserves_suffix(text: str) -> None:
    value = parse_quantity(text)
    zero = parse_quantity("0")
    assert str(value + zero) == text
    assert str(zero + value) == text
    assert str(value - zero) == text
    assert str(zero - value) == "-" + text


def test_arithmetic() -> None:
    total = parse_quantity("1Gi") + parse_quantity("512Mi")
    assert str(total) == "1536Mi"
    assert total.value() == 1536 * 1024**2
    assert str(parse_quantity("1") - parse_quantity("250m")) == "750m"
    assert (parse_quantity("1") - parse_quantity("1")).is_zero()
    assert parse_quantity("-1m").sign() == -1
    assert parse_quantity("0").sign() == 0


@pytest.mark.parametrize(
    ("milli", "expect"), [(1, "1m"), (1000, "1"), (1234000, "1234"), (1500, "1500m")]
)
def test_from_milli(milli: int, expect: str) -> None:
    got = Quantity.from_milli(milli)
    assert str(got) == expect
    assert got.milli_value() == milli


@pytest.mark.parametrize(
    ("value", "binary", "expect"),
    [(1, False, "1"), (1000, False, "1k"), (1234000, False, "1234k"), (1024, True, "1Ki"),
     (1024 * 1024, True, "1Mi"), (1000, True, "1k"), (0, True, "0")],
)
def test_from_int(value: int, binary: bool, expect: str) -> None:
    got = Quantity.from_int(value, binary=binary)
    assert str(got) == expect
    assert got.value() == value


@pytest.mark.parametrize(
    ("raw", "expect"),
    [(1, "1"), (10, "10"), (-1, "-1"), (1.5, "1500m"), (0.1, "100m"), (2.0, "2"),
     (1e-07, "100e-9"), (1e16, "10e15"), (" 1", "1"), ("1 ", "1"), (None, "0")],
)
def test_manifest_values(raw: object, expect: str) -> None:
    assert str(quantity_from_manifest(raw)) == expect


@pytest.mark.parametrize("raw", [True, float("inf"), float("nan"), [1], {"a": 1}])
def test_manifest_values_invalid(raw: object) -> None:
    with pytest.raises(QuantityError):
        quantity_from_manifest(raw)
