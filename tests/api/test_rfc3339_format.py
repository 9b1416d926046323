"""``golang.rfc3339``'s instants and their UTC text, against what Go 1.26's
``time.Parse(time.RFC3339, s)`` then ``t.Unix()`` and
``t.UTC().Format(time.RFC3339)`` give (figures taken from Go): a year 0
time with a positive offset is in year -1, written ``-0001``; the last
second of year 9999 with a negative offset of 24:60 is in year 10000."""

from __future__ import annotations

import pytest

from podnuma.golang import rfc3339

GO = [
    ("0000-01-01T00:00:00+01:00", -62167222800, "-0001-12-31T23:00:00Z"),
    ("9999-12-31T23:59:59-24:60", 253402390799, "10000-01-02T00:59:59Z"),
    ("2024-02-29T12:00:00+05:30", 1709188200, "2024-02-29T06:30:00Z"),
    ("0000-03-01T00:00:00Z", -62162035200, "0000-03-01T00:00:00Z"),
    ("1970-01-01T00:00:00Z", 0, "1970-01-01T00:00:00Z"),
]


@pytest.mark.parametrize(("text", "unix", "utc"), GO)
def test_instant_and_text_are_gos(text: str, unix: int, utc: str) -> None:
    got = rfc3339.instant(text)
    assert got is not None and got[0] == unix
    assert rfc3339.format_utc(unix) == utc


def test_days_and_dates_round_trip() -> None:
    for days in range(-800_000, 3_000_000, 997):
        assert rfc3339.days_from_civil(*rfc3339.civil_from_days(days)) == days
    assert rfc3339.format_utc(rfc3339.ZERO_TIME) == "0001-01-01T00:00:00Z"
