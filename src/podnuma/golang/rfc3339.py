"""Go's ``time.Parse(time.RFC3339, text)``, how a ``metav1.Time`` is read
(``UnmarshalJSON``): mirrors ``src/time/format.go`` (``parse`` on the
RFC 3339 layout, its general path: ``getnum``, the fraction after the
seconds, the zone's ``Z`` or ``±hh:mm`` and their range checks, then
the day checked against its month). :func:`parse_error` gives the error
Go's words would give (``""`` when the text parses) and :func:`instant`
the moment a text that parses stands for.

Go's quirks kept: an hour of one digit (``T1:02:03Z``), a fraction after
``,`` as after ``.``, an offset hour up to 24 and minute up to 60
(``+24:60``), year ``0000``, and a leap second refused (``:60``)."""

from __future__ import annotations

import re

from podnuma.golang.duration import time_quote

__all__ = ["ZERO_TIME", "civil_from_days", "days_from_civil", "format_utc", "instant", "parse_error", "parses"]


_RFC3339 = "2006-01-02T15:04:05Z07:00"


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def parse_error(text: str) -> str:
    """The error of Go's ``time.Parse(time.RFC3339, text)`` (its general
    parser: the fast path only accepts a subset), or "" when it parses.
    (The common text is taken by :data:`_TIME` and its ranges; any other
    goes through the parser, which words the refusal.)"""
    m = _TIME.match(text)
    if m is not None:
        year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
        if (1 <= month <= 12 and 1 <= day <= _days_in(month, year) and hour < 24 and minute < 60
                and second < 60 and (m.group(8) is None or int(m.group(9)) <= 24 and int(m.group(10)) <= 60)):
            return ""
    return _parse_error(text)


def _parse_error(text: str) -> str:
    value = text.encode()
    whole = time_quote(value)

    def cannot(elem: bytes, layout_elem: str) -> str:
        return f"parsing time {whole} as \"{_RFC3339}\": cannot parse {time_quote(elem)} as \"{layout_elem}\""

    def out_of_range(what: str) -> str:
        return f"parsing time {whole}: {what} out of range"

    def num(v: bytes, fixed: bool) -> tuple[int, bytes] | None:
        """``getnum``: one or two digits (two when ``fixed``)."""
        if not v[:1].isdigit():
            return None
        if not v[1:2].isdigit():
            return None if fixed else (v[0] - 48, v[1:])
        return (v[0] - 48) * 10 + v[1] - 48, v[2:]

    if len(value) < 4 or not value[:4].isdigit():
        return cannot(value, "2006")
    year, value = int(value[:4]), value[4:]
    got: dict[str, int] = {}
    # (the layout's elements after the year: prefix, element, name, two
    # digits required, the exclusive bound of a range check)
    for prefix, elem, name, fixed, bound in ((b"-", "01", "month", True, 13), (b"-", "02", "day", True, 0),
                                             (b"T", "15", "hour", False, 24), (b":", "04", "minute", True, 60),
                                             (b":", "05", "second", True, 60)):
        if not value.startswith(prefix):
            return cannot(value, prefix.decode())
        value = hold = value[len(prefix):]
        parsed = num(value, fixed)
        n, value = parsed if parsed else (0, value)
        if name == "month" and parsed and not 1 <= n <= 12:
            return out_of_range("month")
        if name in ("hour", "minute") and n >= bound:
            return out_of_range(name)
        if parsed is None:
            return cannot(hold, elem)
        if name == "second":
            if n >= bound:
                return out_of_range("second")
            if len(value) >= 2 and value[:1] in (b".", b",") and value[1:2].isdigit():
                end = 2
                while value[end:end + 1].isdigit():
                    end += 1
                value = value[end:]
        got[name] = n
    hold = value
    if value[:1] == b"Z":
        value = value[1:]
    else:
        if len(value) < 6 or value[3:4] != b":":
            return cannot(hold, "Z07:00")
        sign, hour, minute, value = value[:1], value[1:3], value[4:6], value[6:]
        hr = num(hour, True)
        mn = num(minute, True) if hr else None
        if mn and mn[0] > 60:
            return out_of_range("time zone offset minute")
        if hr and hr[0] > 24:
            return out_of_range("time zone offset hour")
        if hr is None or mn is None or sign not in (b"+", b"-"):
            return cannot(hold, "Z07:00")
    if value:
        return f"parsing time {whole}: extra text: {time_quote(value)}"
    if not 1 <= got["day"] <= _days_in(got["month"], year):
        return f"parsing time {whole}: day out of range"
    return ""


#: a text :func:`parse_error` takes: date, a one- or two-digit hour,
#: minutes, seconds, a fraction after ``.`` or ``,``, ``Z`` or an offset
#: (ASCII digits only: Go's parse takes no other)
_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d?):(\d\d):(\d\d)(?:[.,](\d+))?(?:Z|([+-])(\d\d):(\d\d))\Z", re.ASCII)


#: a text Go's parse takes whatever its numbers' values (every field in
#: range, a day no month lacks): :func:`parses`' quick answer, no number read
_PLAIN = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
                    r"(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)\Z", re.ASCII)


def parses(text: str) -> bool:
    """Whether Go's ``time.Parse(time.RFC3339, text)`` takes ``text``
    (``not parse_error(text)``, quicker for the common text)."""
    return _PLAIN.match(text) is not None or not parse_error(text)


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to the proleptic Gregorian date (year 0 too)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def instant(text: str) -> tuple[int, int] | None:
    """The moment ``text`` stands for, as seconds from the Unix epoch and
    nanoseconds (the first nine digits of its fraction, as ``time.Parse``
    keeps them): ``10:00:00+02:00`` and ``08:00:00Z`` are one moment.
    ``None`` for a text :func:`parse_error` refuses."""
    if parse_error(text):
        return None
    m = _TIME.match(text)
    assert m is not None  # (every text the parser takes has this shape)
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    nanos = int((m.group(7) or "")[:9].ljust(9, "0"))
    offset = 0
    if m.group(8):
        offset = (int(m.group(9)) * 3600 + int(m.group(10)) * 60) * (-1 if m.group(8) == "-" else 1)
    return days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset, nanos


def civil_from_days(days: int) -> tuple[int, int, int]:
    """:func:`days_from_civil` undone: the (year, month, day) ``days``
    after 1970-01-01."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def format_utc(seconds: int) -> str:
    """The UTC time ``seconds`` after the Unix epoch as Go's
    ``Format(time.RFC3339)`` writes it, to the second: the year in at least
    four digits, after a ``-`` when it is before year 0 (``-0001``: a year
    0 time with a positive offset), five past 9999."""
    days, rest = divmod(seconds, 86400)
    year, month, day = civil_from_days(days)
    shown = f"-{-year:04d}" if year < 0 else f"{year:04d}"
    return f"{shown}-{month:02d}-{day:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}Z"


#: Go's zero ``time.Time`` (0001-01-01T00:00:00Z), in seconds from the epoch
ZERO_TIME = days_from_civil(1, 1, 1) * 86400
