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
    ("x", "printed"),
    [(0.9, "0.9"), (1.5, "1.5"), (2.0, "2"), (-1.0, "-1"), (1e-05, "1e-05"), (0.0001, "0.0001"),
     (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (100.25, "100.25")],
)  # fmt: skip
def test_float_v(x: float, printed: str) -> None:
    assert go_format_float_v(x) == printed
