"""Go's ``strconv`` behaviours that kubelet messages and parsers depend on:
``strconv.Quote`` (what ``%q`` prints), ``strconv.ParseBool`` and
``strconv.Atoi`` (64-bit), with Go's error texts. One implementation for every
module that reproduces a kubelet message."""

from __future__ import annotations

import struct
from typing import Final

__all__ = [
    "go_quote", "quote_rune", "parse_go_bool", "go_atoi", "parse_int64", "parse_int64_error", "go_format_float_v",
    "go_format_float_g", "go_json_format_float",
]

_SHORT_ESCAPES: Final = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def quote_rune(o: int, quote: str) -> str:
    """One rune as ``strconv.Quote`` writes it inside ``quote`` marks."""
    ch = chr(o)
    if ch == quote or ch == "\\":
        return "\\" + ch
    if 0xD800 <= o <= 0xDFFF:
        return "\\ufffd"  # Go strings cannot hold surrogates; they become U+FFFD
    if ch.isprintable():
        return ch
    if o in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[o]
    if o < 0x20 or o == 0x7F:
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def go_quote(text: str) -> str:
    """``strconv.Quote`` (what ``%q`` prints for a string)."""
    return '"' + "".join(quote_rune(ord(c), '"') for c in text) + '"'


_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_go_bool(value: str) -> bool:
    """``strconv.ParseBool``; ``ValueError`` carries Go's error text."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"strconv.ParseBool: parsing {go_quote(value)}: invalid syntax")


_UINT64_MAX: Final = (1 << 64) - 1


def parse_int64(text: str) -> tuple[int, str]:
    """Go's ``strconv.ParseInt(text, 10, 64)`` (``internal/strconv/atoi.go``):
    the value and ``""``, or 0 and what is wrong: an empty text, or a lone
    sign, is ``invalid syntax``; after one sign the digits are read left
    to right as an unsigned 64-bit number, and the first thing that goes
    wrong wins: a character that is no decimal digit (``_`` too: the base
    is given) is ``invalid syntax``, the number passing 2^64-1 is ``value
    out of range`` even when a bad character follows; a number read whole
    is out of range past the int64 bounds. (Read here, not by ``int()``,
    which refuses more than 4,300 digits: Go reads any number of leading
    zeros.)"""
    negative = text[:1] == "-"
    body = text[1:] if negative or text[:1] == "+" else text
    if not body:
        return 0, "invalid syntax"
    n = 0
    for ch in body:
        if not "0" <= ch <= "9":
            return 0, "invalid syntax"
        n = n * 10 + ord(ch) - 48
        if n > _UINT64_MAX:
            return 0, "value out of range"
    if n > ((1 << 63) if negative else (1 << 63) - 1):
        return 0, "value out of range"
    return (-n if negative else n), ""


def parse_int64_error(text: str) -> str:
    """What :func:`parse_int64` finds wrong with ``text``, or ``""``."""
    return parse_int64(text)[1]


def go_atoi(value: str) -> int:
    """``strconv.Atoi`` on a 64-bit platform: ``ParseInt(value, 10, 64)``
    (:func:`parse_int64`; its fast path for under 19 bytes gives the same
    answers); ``ValueError`` carries Go's error text."""
    n, why = parse_int64(value)
    if why:
        raise ValueError(f"strconv.Atoi: parsing {go_quote(value)}: {why}")
    return n


def go_format_float_v(x: float) -> str:
    """``fmt``'s ``%v`` of a float64: :func:`go_format_float_g` of it."""
    return go_format_float_g(x)


def go_format_float_g(x: float, bits: int = 64) -> str:
    """``strconv.FormatFloat(x, 'g', -1, bits)``: the shortest digits that
    read back as the float64 (``bits`` 64) or the float32 (``bits`` 32, ``x``
    holding a float32 value), in ``%e`` form (``1e+06``, ``1e-05``) when the
    decimal exponent is below -4 or at least 6, else plain (``0.9``, ``2``,
    ``123456``); ``NaN``, ``+Inf``, ``-Inf``, ``-0``."""
    import math

    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    negative, digits, exp10 = _shortest_float32(x) if bits == 32 else _shortest_float64(x)
    sign = "-" if negative else ""
    if exp10 < -4 or exp10 >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if exp10 < 0 else '+'}{abs(exp10):02d}"
    dp = exp10 + 1  # the decimal point's place after the first digit
    if dp <= 0:
        return f"{sign}0.{'0' * -dp}{digits}"
    if dp >= len(digits):
        return f"{sign}{digits}{'0' * (dp - len(digits))}"
    return f"{sign}{digits[:dp]}.{digits[dp:]}"


def go_json_format_float(x: float) -> str:
    """A finite float64 as Go's ``encoding/json`` writes it: the shortest
    digits that read back, plain (``100``, ``0.5``,
    ``100000000000000000000``) unless its magnitude is below 1e-6 or at
    least 1e21, then in ``e`` form with a two-digit negative exponent
    shortened (``1e+21``, ``1e-7``)."""
    if x == 0:
        return "-0" if str(x).startswith("-") else "0"
    negative, digits, exp10 = _shortest_float64(x)
    sign = "-" if negative else ""
    if abs(x) < 1e-6 or abs(x) >= 1e21:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if exp10 < 0 else '+'}{abs(exp10)}"
    dp = exp10 + 1
    if dp <= 0:
        return f"{sign}0.{'0' * -dp}{digits}"
    if dp >= len(digits):
        return f"{sign}{digits}{'0' * (dp - len(digits))}"
    return f"{sign}{digits[:dp]}.{digits[dp:]}"


def _shortest_float64(x: float) -> tuple[bool, str, int]:
    """(negative, the shortest digits that read back, without trailing
    zeros, the decimal exponent of the first) of a finite non-zero float64."""
    from decimal import Decimal

    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)
    ds = "".join(str(d) for d in digits).rstrip("0") or "0"
    return bool(sign), ds, len(digits) + exponent - 1


def _shortest_float32(x: float) -> tuple[bool, str, int]:
    """The same for a finite non-zero float32 value: the fewest digits (at
    most 9) that round back to it as a float32."""
    for prec in range(1, 10):
        s = f"{x:.{prec - 1}e}"
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == x:
            break
    mant, exp_s = s.split("e")
    digits = mant.lstrip("-").replace(".", "").rstrip("0") or "0"
    return mant.startswith("-"), digits, int(exp_s)
