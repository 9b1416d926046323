"""Resource quantities with apimachinery semantics.

Mirrors ``k8s.io/apimachinery/pkg/api/resource`` (quantity.go, suffix.go,
amount.go): the string grammar accepted by ``ParseQuantity``, its rounding
(non-zero values below 1n become 1n, binary values are capped at 2^63-1),
``Value``/``MilliValue`` (rounded away from zero) and the canonical
``String()`` form.

Every quantity ``ParseQuantity`` can produce is an exact multiple of one
nano-unit, and sums/differences stay so; a quantity is therefore held as an
``int`` count of nano-units plus its ``Format`` -- exact, never a float.
"""

from __future__ import annotations

import enum
import math
import re
from typing import Final

__all__ = [
    "Format",
    "Quantity",
    "QuantityError",
    "parse_quantity",
    "quantity_from_manifest",
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_SUFFIX",
]

SPLIT_RE_STRING: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG: Final = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"

_NANO: Final = 10**9
_MOST_POSITIVE: Final = (1 << 63) - 1
_MAX_BINARY_NANOS: Final = _MOST_POSITIVE * _NANO
# Decimal exponents beyond this are refused instead of materialising a huge
# integer (apimachinery keeps them symbolically); no real manifest uses them.
_MAX_EXPONENT: Final = 100_000


class QuantityError(ValueError):
    """A string that is not a valid quantity; the message is apimachinery's."""


class Format(enum.Enum):
    """How a quantity is written back (``resource.Format``)."""

    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"


_DEC_SUFFIXES: Final[dict[str, int]] = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}
_DEC_SUFFIX_BY_EXP: Final[dict[int, str]] = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_SUFFIXES: Final[dict[str, int]] = {
    "Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60,
}
_BIN_SUFFIX_BY_EXP: Final[dict[int, str]] = {e: s for s, e in _BIN_SUFFIXES.items()}
_BIN_SUFFIX_BY_EXP[0] = ""
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_DIGITS: Final = frozenset("0123456789")
_SIGNED_INT_RE: Final = re.compile(r"[+-]?[0-9]+")


def _ceil_div(a: int, b: int) -> int:
    """a / b rounded towards +inf for a >= 0, b > 0."""
    return -(-a // b)


def _away_from_zero_div(a: int, b: int) -> int:
    q = _ceil_div(abs(a), b)
    return -q if a < 0 else q


class Quantity:
    """An exact, immutable resource quantity (``resource.Quantity``).

    Equality, ordering and hashing use the numeric value only (like
    ``Quantity.Cmp``); the format only affects ``str()``.
    """

    def __deepcopy__(self, memo: dict[int, object]) -> Quantity:
        return self  # immutable


    __slots__ = ("_nanos", "_format", "_text")

    def __init__(self, nanos: int, fmt: Format = Format.DECIMAL_SI, *, _text: str | None = None) -> None:
        self._nanos = nanos
        self._format = fmt
        self._text = _text

    # ---- constructors -------------------------------------------------------

    @classmethod
    def from_int(cls, value: int, binary: bool = False) -> Quantity:
        """``resource.NewQuantity(value, DecimalSI|BinarySI)``."""
        return cls(value * _NANO, Format.BINARY_SI if binary else Format.DECIMAL_SI)

    @classmethod
    def from_milli(cls, milli: int) -> Quantity:
        """``resource.NewMilliQuantity(milli, DecimalSI)``."""
        return cls(milli * 10**6, Format.DECIMAL_SI)

    @classmethod
    def from_nanos(cls, nanos: int, fmt: Format = Format.DECIMAL_SI) -> Quantity:
        return cls(nanos, fmt)

    @classmethod
    def zero(cls) -> Quantity:
        return cls(0, Format.DECIMAL_SI)

    # ---- accessors ----------------------------------------------------------

    @property
    def format(self) -> Format:
        return self._format

    @property
    def nanos(self) -> int:
        """The exact value in nano-units (value * 10^9)."""
        return self._nanos

    def value(self) -> int:
        """``Quantity.Value()``: the integer value, rounded away from zero."""
        return _away_from_zero_div(self._nanos, _NANO)

    def milli_value(self) -> int:
        """``Quantity.MilliValue()``: value * 1000, rounded away from zero."""
        return _away_from_zero_div(self._nanos, 10**6)

    def scaled_value(self, scale: int) -> int:
        """``Quantity.ScaledValue(scale)`` (value / 10^scale, away from zero)."""
        shift = scale + 9
        if shift >= 0:
            return _away_from_zero_div(self._nanos, 10**shift)
        factor: int = 10 ** (-shift)
        return self._nanos * factor

    def is_zero(self) -> bool:
        return self._nanos == 0

    def sign(self) -> int:
        return (self._nanos > 0) - (self._nanos < 0)

    # ---- arithmetic ---------------------------------------------------------

    def __add__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        # Add keeps the receiver's format unless the receiver is zero.
        fmt = other._format if self._nanos == 0 else self._format
        return Quantity(self._nanos + other._nanos, fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other._format if self._nanos == 0 else self._format
        return Quantity(self._nanos - other._nanos, fmt)

    def __neg__(self) -> Quantity:
        return Quantity(-self._nanos, self._format)

    def cmp(self, other: Quantity) -> int:
        return (self._nanos > other._nanos) - (self._nanos < other._nanos)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos == other._nanos

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos != other._nanos

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos < other._nanos

    def __le__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos <= other._nanos

    def __gt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos > other._nanos

    def __ge__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos >= other._nanos

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __bool__(self) -> bool:
        return self._nanos != 0

    # ---- formatting ---------------------------------------------------------

    def canonical(self) -> str:
        """``CanonicalizeBytes``: the canonical form, ignoring the parsed text."""
        n = self._nanos
        if n == 0:
            return "0"
        fmt = self._format
        if fmt is Format.BINARY_SI:
            if -1024 * _NANO < n < 1024 * _NANO or n % _NANO != 0:
                fmt = Format.DECIMAL_SI
            else:
                amount = n // _NANO
                times = 0
                mag = abs(amount)
                while mag >= 1024 and mag % 1024 == 0:
                    mag //= 1024
                    times += 1
                amount = -mag if amount < 0 else mag
                # Unknown exponents (beyond Ei) get no suffix, as upstream.
                return f"{amount}{_BIN_SUFFIX_BY_EXP.get(times * 10, '')}"
        mag = abs(n)
        exponent = -9
        while mag >= 10 and mag % 10 == 0:
            mag //= 10
            exponent += 1
        while exponent % 3 != 0:
            mag *= 10
            exponent -= 1
        number = f"-{mag}" if n < 0 else str(mag)
        if fmt is Format.DECIMAL_SI:
            # Exponents beyond E (1e21, ...) have no SI suffix; upstream then
            # emits the bare mantissa (reproduced quirk).
            return number + _DEC_SUFFIX_BY_EXP.get(exponent, "")
        return number if exponent == 0 else f"{number}e{exponent}"

    def __str__(self) -> str:
        # ParseQuantity keeps the input text when it judges it canonical and
        # String() returns it verbatim (so "+1Ki" prints "+1Ki").
        if self._text is not None:
            return self._text
        return self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


_ZERO_TEXT: Final = "0"


def _split(text: str) -> tuple[bool, str, str, str]:
    """``parseQuantityString``: (positive, num, denom, suffix)."""
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return positive, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, num, denom, ""
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """``suffixHandler.interpret``: (base, exponent, format)."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        if not _SIGNED_INT_RE.fullmatch(digits):
            raise QuantityError(ERR_SUFFIX)
        parsed = int(digits)
        if not -(1 << 63) <= parsed <= _MOST_POSITIVE:
            raise QuantityError(ERR_SUFFIX)
        # Upstream truncates the int64 exponent to int32 (reproduced quirk).
        exponent = ((parsed + (1 << 31)) % (1 << 32)) - (1 << 31)
        return 10, exponent, Format.DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _parse_text(text: str) -> Quantity:
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(0, Format.DECIMAL_SI, _text=_ZERO_TEXT)
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    shifted = num + denom
    mantissa = int(shifted)

    # Is this the int64 fast path, whose input text String() reuses?
    cached = False
    if fmt is Format.BINARY_SI:
        if not denom:
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
            if precision >= 0 and (mantissa << exponent) <= _MOST_POSITIVE:
                cached = mantissa & 0x07 != 0
    else:
        precision = 18 - len(shifted)
        scale = exponent - len(denom)
        if precision >= 0 and scale >= -9:
            cached = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"

    if base == 10:
        shift = exponent - len(denom) + 9
        if shift >= 0:
            if shift > _MAX_EXPONENT:
                raise QuantityError(ERR_NUMERIC)
            nanos = mantissa * 10**shift
        elif mantissa == 0:
            nanos = 0
        elif -shift > len(shifted) + 1:
            nanos = 1  # far below 1n: rounds up to 1n
        else:
            nanos = _ceil_div(mantissa, 10 ** (-shift))
    else:
        nanos = _ceil_div((mantissa << exponent) * _NANO, 10 ** len(denom))
        if nanos > _MAX_BINARY_NANOS:
            nanos = _MAX_BINARY_NANOS
            cached = False
        if 0 < nanos < _NANO:
            fmt = Format.DECIMAL_SI
    if not positive:
        nanos = -nanos
    return Quantity(nanos, fmt, _text=text if cached else None)


def parse_quantity(value: str | int | float) -> Quantity:
    """``resource.ParseQuantity`` (strings) or a JSON/YAML number in a manifest.

    Numbers are parsed from their decimal text, as ``Quantity.UnmarshalJSON``
    parses the raw JSON number.
    """
    if isinstance(value, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(value, int):
        return _parse_text(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(ERR_FORMAT_WRONG)
        return _parse_text(repr(value))
    if isinstance(value, str):
        return _parse_text(value)
    raise QuantityError(ERR_FORMAT_WRONG)


def _go_trim_space(text: str) -> str:
    """``strings.TrimSpace`` (Go's unicode.IsSpace, which excludes U+001C-U+001F)."""

    def is_space(c: str) -> bool:
        return c.isspace() and c not in "\x1c\x1d\x1e\x1f"

    start, end = 0, len(text)
    while start < end and is_space(text[start]):
        start += 1
    while end > start and is_space(text[end - 1]):
        end -= 1
    return text[start:end]


def quantity_from_manifest(value: object) -> Quantity:
    """A quantity field of a decoded JSON/YAML manifest (``Quantity.UnmarshalJSON``).

    Strings are trimmed of surrounding white space before parsing (so ``" 1"``
    is accepted here but not by ``parse_quantity``); numbers are parsed from
    their text; ``null`` is zero.
    """
    if value is None:
        return Quantity.zero()
    if isinstance(value, str):
        return _parse_text(_go_trim_space(value))
    if isinstance(value, (int, float)):
        return parse_quantity(value)
    raise QuantityError(ERR_FORMAT_WRONG)
