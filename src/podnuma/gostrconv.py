"""Go standard-library string behaviours that kubelet messages and parsers
depend on: ``strconv.Quote`` (what ``%q`` prints), ``strconv.ParseBool``,
``strconv.Atoi`` (64-bit), and ``k8s.io/utils/cpuset.Parse`` with Go's error
texts. One implementation for every module that reproduces a kubelet
message."""

from __future__ import annotations

import re
from typing import Final

from podnuma.machine.cpuset import CPUSet

__all__ = ["go_quote", "quote_rune", "parse_go_bool", "go_atoi", "parse_go_cpuset", "MAX_CPU_ID"]

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


_ATOI_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1


def go_atoi(value: str) -> int:
    """``strconv.Atoi`` on a 64-bit platform (optional sign, ASCII digits, no
    spaces or underscores); ``ValueError`` carries Go's error text."""
    if not _ATOI_RE.fullmatch(value):
        raise ValueError(f"strconv.Atoi: parsing {go_quote(value)}: invalid syntax")
    n = int(value, 10)
    if not _INT64_MIN <= n <= _INT64_MAX:
        raise ValueError(f"strconv.Atoi: parsing {go_quote(value)}: value out of range")
    return n


#: The largest CPU id podnuma accepts in a list (the kubelet would try to
#: build a set of that size and run out of memory).
MAX_CPU_ID: Final = (1 << 20) - 1


def parse_go_cpuset(text: str) -> CPUSet:
    """``cpuset.Parse``: ``ValueError`` with Go's messages
    (``strconv.Atoi: parsing "x": invalid syntax``, ``invalid range "3-1"
    (3 > 1)``)."""
    if text == "":
        return CPUSet()
    mask = 0
    for part in text.split(","):
        bounds = part.split("-", 1)
        if len(bounds) == 1:
            lo = hi = go_atoi(bounds[0])
        else:
            lo = go_atoi(bounds[0])
            hi = go_atoi(bounds[1])
            if lo > hi:
                raise ValueError(f"invalid range {go_quote(part)} ({lo} > {hi})")
        if lo < 0 or hi > MAX_CPU_ID:
            # lo < 0 cannot happen (a leading '-' splits the range)
            raise ValueError(f"CPU id out of the range podnuma supports in {go_quote(part)}")
        mask |= ((1 << (hi - lo + 1)) - 1) << lo
    return CPUSet.from_mask(mask)
