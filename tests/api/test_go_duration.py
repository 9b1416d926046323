"""Go's time.ParseDuration / Duration.String and fmt's %v of a float64, as
the kubelet reads ``cpuCFSQuotaPeriod`` and prints its messages (values
checked against Go 1.26)."""

from __future__ import annotations

import pytest

from podnuma.golang.duration import format_duration, parse_duration
from podnuma.golang.strconv import go_format_float_v


@pytest.mark.parametrize(
    ("text", "ns", "printed"),
    [
        ("100ms", 100_000_000, "100ms"),
        ("50ms", 50_000_000, "50ms"),
        ("1.5h", 5_400_000_000_000, "1h30m0s"),
        ("1m30s", 90_000_000_000, "1m30s"),
        ("0", 0, "0s"),
        ("1000ms", 1_000_000_000, "1s"),
        ("2us", 2000, "2µs"),
        ("2µs", 2000, "2µs"),
        ("1.5ms", 1_500_000, "1.5ms"),
        ("-3s", -3_000_000_000, "-3s"),
        ("7ns", 7, "7ns"),
    ],
)
def test_parse_and_format(text: str, ns: int, printed: str) -> None:
    assert parse_duration(text) == ns
    assert format_duration(ns) == printed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("ms", 'time: invalid duration "ms"'),
        ("5", 'time: missing unit in duration "5"'),
        ("1x", 'time: unknown unit "x" in duration "1x"'),
        (".s", 'time: invalid duration ".s"'),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.") + "$"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("-9223372036854775808ns", -(1 << 63)),
        ("-2562047h47m16.854775808s", -(1 << 63)),
        ("9223372036854775807ns", (1 << 63) - 1),
        ("2562047h47m16.854775807s", (1 << 63) - 1),
        ("9223372036854775808ns9223372036854775808ns90s", 90_000_000_000),  # Go's uint64 sum wraps
        ("0" * 5000 + "1ns", 1),
        ("0." + "0" * 400 + "1h", 0),
        ("0.9223372036854775808s", 922_337_203),
        ("0.92233720368547758089s", 922_337_203),
        ("0.1234567890123456789012345h", 444_444_440_444),
        ("1.s", 1_000_000_000),
        (".5s", 500_000_000),
        ("1\u00b5s", 1000),
        ("1\u03bcs", 1000),
        ("+0", 0),
        ("-0", 0),
    ],
)
def test_parse_edges(text: str, ns: int) -> None:
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
        ("1" + "0" * 5000 + "ns", 'time: invalid duration "1' + "0" * 5000 + 'ns"'),
        ("1..5s", 'time: missing unit in duration "1..5s"'),
        ("+", 'time: invalid duration "+"'),
        ("-", 'time: invalid duration "-"'),
        ("\u0661s", 'time: invalid duration "\\xd9\\xa1s"'),
        ("1\u00b2s", 'time: unknown unit "\\xc2\\xb2s" in duration "1\\xc2\\xb2s"'),
        ('1"s', 'time: unknown unit "\\"s" in duration "1\\"s"'),
        ("1\\s", 'time: unknown unit "\\\\s" in duration "1\\\\s"'),
        ("1\ts\x7f", 'time: unknown unit "\\x09s\x7f" in duration "1\\x09s\x7f"'),
        ("1\U0001f600", 'time: unknown unit "\\xf0\\x9f\\x98\\x80" in duration "1\\xf0\\x9f\\x98\\x80"'),
        ("1\ud800", 'time: unknown unit "\\xef\\xbf\\xbd" in duration "1\\xef\\xbf\\xbd"'),
    ],
)
def test_parse_errors_as_go_quotes_them(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("x", "printed"),
    [(0.9, "0.9"), (1.5, "1.5"), (2.0, "2"), (-1.0, "-1"), (1e-05, "1e-05"), (0.0001, "0.0001"),
     (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (100.25, "100.25")],
)  # fmt: skip
def test_float_v(x: float, printed: str) -> None:
    assert go_format_float_v(x) == printed
