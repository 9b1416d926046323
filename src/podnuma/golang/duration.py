"""Go's ``time.Duration``: ``time.ParseDuration`` (how ``metav1.Duration``
fields of a KubeletConfiguration are read) and ``Duration.String`` (how the
kubelet prints one in its messages). Mirrors Go's ``src/time/format.go``
(``ParseDuration`` with ``leadingInt``, ``leadingFraction`` and ``quote``)
and ``src/time/time.go`` (``Duration.String``); durations are integer
nanoseconds. Go reads the text as bytes: only ASCII ``0``-``9`` are digits,
and an error quotes the text byte by byte as ``time.quote`` does."""

from __future__ import annotations

from typing import Final

__all__ = ["parse_duration", "format_duration", "time_quote", "NANOSECOND", "MICROSECOND", "MILLISECOND", "SECOND"]

NANOSECOND: Final = 1
MICROSECOND: Final = 1000
MILLISECOND: Final = 1000 * MICROSECOND
SECOND: Final = 1000 * MILLISECOND
MINUTE: Final = 60 * SECOND
HOUR: Final = 60 * MINUTE

_UNITS: Final = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # U+00B5 micro sign
    "\u03bcs": MICROSECOND,  # U+03BC Greek small letter mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_MAX: Final = (1 << 63) - 1


_TWO63: Final = 1 << 63  # the largest magnitude a duration may have before its sign
_UINT64: Final = 1 << 64
_HEX: Final = "0123456789abcdef"


def _ascii_digit(c: str) -> bool:
    """Only '0' to '9' count as digits: Go compares bytes, never Unicode."""
    return "0" <= c <= "9"


def _go_bytes(text: str) -> bytes:
    """The bytes of the Go string ``text`` stands for. A lone surrogate (a
    JSON ``\\ud800`` that Python's decoder keeps) is what Go's JSON decoder
    turns into U+FFFD."""
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text).encode("utf-8")


def _quote(text: str) -> str:
    """:func:`time_quote` of the Go string ``text`` stands for."""
    return time_quote(_go_bytes(text))


def time_quote(data: bytes) -> str:
    """``time.quote``: the bytes between double quotes, where ``"`` and
    ``\\`` get a backslash and every byte of a non-ASCII or control
    character (below a space) is written ``\\xNN``, one escape per byte;
    DEL and the other printable ASCII stay as they are (the time package's
    errors: a duration's, a time's)."""
    out = ['"']
    for b in data:
        if b >= 0x80 or b < 0x20:
            out.append("\\x" + _HEX[b >> 4] + _HEX[b & 0xF])
        else:
            if b in (0x22, 0x5C):
                out.append("\\")
            out.append(chr(b))
    out.append('"')
    return "".join(out)


def _error(message: str, text: str) -> ValueError:
    return ValueError(f"time: {message} {_quote(text)}")


def _leading_int(s: str) -> tuple[int, str] | None:
    """The leading run of ASCII digits as a number and the rest, or None once
    the number passes 2**63 (Go's leadingInt, which works in uint64)."""
    x = 0
    i = 0
    while i < len(s) and _ascii_digit(s[i]):
        x = x * 10 + ord(s[i]) - 0x30
        if x > _TWO63:
            return None
        i += 1
    return x, s[i:]


def _leading_fraction(s: str) -> tuple[int, float, str]:
    """The leading run of ASCII digits after a point: the digits as a number,
    ``10.0`` to the power of how many of them were kept, and the rest. Digits
    stop counting (but are still consumed) once the next one would take the
    number past 2**63; the scale is a float grown one multiplication at a
    time, as Go grows it."""
    x = 0
    scale = 1.0
    overflow = False
    i = 0
    while i < len(s) and _ascii_digit(s[i]):
        if not overflow:
            if x > (_TWO63 - 1) // 10:
                overflow = True
            else:
                y = x * 10 + ord(s[i]) - 0x30
                if y > _TWO63:
                    overflow = True
                else:
                    x = y
                    scale *= 10
        i += 1
    return x, scale, s[i:]


def parse_duration(text: str) -> int:
    """``time.ParseDuration``: ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+``, or ``0``,
    with a magnitude of at most 2**63 before the sign is applied (so
    ``-9223372036854775808ns`` is read, ``9223372036854775808ns`` refused).
    Raises ``ValueError`` with Go's message, the text quoted as Go quotes it.

    The sum is kept modulo 2**64 as Go's unsigned sum is: two terms of
    exactly 2**63 wrap to zero rather than being refused."""
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise _error("invalid duration", text)
    total = 0
    while s:
        if not (s[0] == "." or _ascii_digit(s[0])):
            raise _error("invalid duration", text)
        before = len(s)
        leading = _leading_int(s)
        if leading is None:
            raise _error("invalid duration", text)
        v, s = leading
        pre = len(s) != before
        f, scale, post = 0, 1.0, False
        if s.startswith("."):
            s = s[1:]
            before = len(s)
            f, scale, s = _leading_fraction(s)
            post = len(s) != before
        if not pre and not post:
            raise _error("invalid duration", text)
        i = 0
        while i < len(s) and not (s[i] == "." or _ascii_digit(s[i])):
            i += 1
        if i == 0:
            raise _error("missing unit in duration", text)
        unit_text, s = s[:i], s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise _error(f"unknown unit {_quote(unit_text)} in duration", text)
        if v > _TWO63 // unit:
            raise _error("invalid duration", text)
        v *= unit
        if f > 0:
            # float64 arithmetic, as Go does it (exact to the nanosecond for an hour)
            v += int(float(f) * (float(unit) / scale))
            if v > _TWO63:
                raise _error("invalid duration", text)
        total = (total + v) % _UINT64
        if total > _TWO63:
            raise _error("invalid duration", text)
    if neg:
        return -total
    if total > _MAX:
        raise _error("invalid duration", text)
    return total


def _frac(v: int, prec: int) -> tuple[str, int]:
    """The fraction of ``v / 10**prec`` as ``.ddd`` without trailing zeros."""
    digits = ""
    printed = False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits = str(digit) + digits
        v //= 10
    return ("." + digits if printed else ""), v


def format_duration(d: int) -> str:
    """``Duration.String``: ``1h2m3.5s``, ``50ms``, ``1.5µs``, ``0s``."""
    if d == 0:
        return "0s"
    sign = "-" if d < 0 else ""
    u = abs(d)
    if u < SECOND:
        if u < MICROSECOND:
            return f"{sign}{u}ns"
        prec, unit = (3, "\u00b5s") if u < MILLISECOND else (6, "ms")
        frac, whole = _frac(u, prec)
        return f"{sign}{whole}{frac}{unit}"
    frac, secs = _frac(u, 9)
    out = f"{secs % 60}{frac}s"
    mins = secs // 60
    if mins > 0:
        out = f"{mins % 60}m{out}"
        hours = mins // 60
        if hours > 0:
            out = f"{hours}h{out}"
    return sign + out
