"""Go's ``time.Duration``: ``time.ParseDuration`` (how ``metav1.Duration``
fields of a KubeletConfiguration are read) and ``Duration.String`` (how the
kubelet prints one in its messages). Mirrors Go's ``src/time/format.go``;
durations are integer nanoseconds."""

from __future__ import annotations

from typing import Final

__all__ = ["parse_duration", "format_duration", "NANOSECOND", "MICROSECOND", "MILLISECOND", "SECOND"]

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


def parse_duration(text: str) -> int:
    """``time.ParseDuration``: ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+``, or ``0``.
    Raises ``ValueError`` with Go's message."""
    quoted = '"' + text + '"'
    s = text
    neg = False
    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f"time: invalid duration {quoted}")
    total = 0
    while s:
        if not (s[0] == "." or s[0].isdigit()):
            raise ValueError(f"time: invalid duration {quoted}")
        i = 0
        while i < len(s) and s[i].isdigit():
            i += 1
        pre = i > 0
        v = int(s[:i]) if pre else 0
        if v > _MAX:
            raise ValueError(f"time: invalid duration {quoted}")
        s = s[i:]
        f, scale, post = 0, 1.0, False
        if s.startswith("."):
            s = s[1:]
            i = 0
            overflow = False
            while i < len(s) and s[i].isdigit():
                if not overflow:
                    if f > (_MAX - 9) // 10:
                        overflow = True  # Go drops the digits that do not fit
                    else:
                        f = f * 10 + int(s[i])
                        scale *= 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:
            raise ValueError(f"time: invalid duration {quoted}")
        i = 0
        while i < len(s) and s[i] != "." and not s[i].isdigit():
            i += 1
        if i == 0:
            raise ValueError(f"time: missing unit in duration {quoted}")
        unit_text = s[:i]
        s = s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise ValueError(f'time: unknown unit "{unit_text}" in duration {quoted}')
        if v > _MAX // unit:
            raise ValueError(f"time: invalid duration {quoted}")
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _MAX:
                raise ValueError(f"time: invalid duration {quoted}")
        total += v
        if total > _MAX:
            raise ValueError(f"time: invalid duration {quoted}")
    return -total if neg else total


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
