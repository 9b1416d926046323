"""Go's ``fmt.Sscanf`` with a single integer verb, and ``strings.TrimSpace``:
how cadvisor reads the one-number files of sysfs.

Mirrors the Go standard library's ``fmt/scan.go`` (``doScanf``,
``SkipSpace``, ``scanInt``/``scanUint``, ``scanNumber``, ``advance``) for the
formats cadvisor uses: ``"%d"`` (and ``"%dK"`` for a cache's size) into an
``int`` or a ``uint64``. What Go does, and so what this does:

- before the number, white space is skipped (fmt's own table: ``\\t``-``\\r``,
  space, U+0085, U+00A0 and the Unicode spaces), but a newline is not white
  space for ``Sscanf``: one before the number is the error "unexpected
  newline" (``\\r\\n`` too, ``\\r`` alone is skipped);
- into a signed integer one ``+`` or ``-`` may lead; into an unsigned one a
  sign is "expected integer", like any text without a decimal digit;
- the number is every decimal digit that follows, then ``strconv.ParseInt``
  / ``ParseUint`` (64 bits): past the range, Go's "value out of range";
- what follows the number is ignored (``"5\\n"``, ``"5 kB"``, ``"5x"`` give 5),
  except that a literal of the format (``K``) must come next.

``go_trim_space`` is ``strings.TrimSpace`` (``unicode.IsSpace``, the same
set of characters, newlines included), which cadvisor applies to
``nr_hugepages`` before scanning it.
"""

from __future__ import annotations

from typing import Final

from podnuma.golang.strconv import go_quote

__all__ = ["ScanError", "go_trim_space", "is_go_space", "sscanf_int"]

_SPACES: Final = frozenset(
    [chr(c) for c in range(0x09, 0x0E)]
    + [" ", "\u0085", "\u00a0", "\u1680", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]
    + [chr(c) for c in range(0x2000, 0x200B)]
)
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
_UINT64_MAX: Final = (1 << 64) - 1


class ScanError(ValueError):
    """``fmt.Sscanf`` failed; the message is Go's error text."""


def is_go_space(ch: str) -> bool:
    """``unicode.IsSpace`` (equally fmt's ``isSpace`` with ``\\n``)."""
    return ch in _SPACES


def go_trim_space(text: str) -> str:
    """``strings.TrimSpace``: leading and trailing ``unicode.IsSpace`` removed."""
    start, end = 0, len(text)
    while start < end and text[start] in _SPACES:
        start += 1
    while end > start and text[end - 1] in _SPACES:
        end -= 1
    return text[start:end]


def sscanf_int(text: str, *, unsigned: bool, literal: str = "") -> int:
    """``fmt.Sscanf(text, "%d" + literal, &v)`` with ``v`` an ``int``
    (``unsigned`` false) or a ``uint64``: the value, or ``ScanError`` with
    Go's error (cadvisor also refuses a count other than 1, which only an
    error gives here)."""
    n = len(text)
    i = 0
    while i < n:  # SkipSpace, with newlines not white space (Sscanf)
        ch = text[i]
        if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 1
            continue
        if ch == "\n":
            raise ScanError("unexpected newline")
        if ch not in _SPACES:
            break
        i += 1
    if i >= n:
        raise ScanError("EOF")
    start = i
    if not unsigned and text[i] in "+-":
        i += 1
        if i >= n:
            raise ScanError("EOF")
    digits = i
    while i < n and "0" <= text[i] <= "9":
        i += 1
    if i == digits:
        raise ScanError("expected integer")
    token = text[start:i]
    func = "ParseUint" if unsigned else "ParseInt"
    # (not converted when its length alone shows it out of range: Python
    # refuses to convert more than 4300 digits)
    value = int(token) if len(token[digits - start:].lstrip("0")) <= 20 else None
    low, high = (0, _UINT64_MAX) if unsigned else (_INT64_MIN, _INT64_MAX)
    if value is None or not low <= value <= high:
        raise ScanError(f"strconv.{func}: parsing {go_quote(token)}: value out of range")
    for want in literal:
        if i >= n:
            raise ScanError("unexpected EOF")
        if text[i] != want:
            raise ScanError("input does not match format")
        i += 1
    return value
