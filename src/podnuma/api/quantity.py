"""Resource quantities with apimachinery semantics.

Mirrors ``k8s.io/apimachinery/pkg/api/resource`` (quantity.go, suffix.go,
amount.go): the string grammar accepted by ``ParseQuantity``, its rounding
(non-zero values below 1n become 1n, binary values are capped at 2^63-1),
``Value``/``MilliValue`` (rounded away from zero) and the canonical
``String()`` form.

Every quantity ``ParseQuantity`` can produce is an exact multiple of one
nano-unit, and sums/differences stay so; a quantity is therefore held as an
``int`` count of nano-units plus its ``Format`` -- exact, never a float.

Beside the exact value each quantity keeps the form apimachinery holds it in
(``int64Amount`` value and scale, or an ``inf.Dec`` unscaled integer and
scale), because ``Value``/``MilliValue``/``ScaledValue`` do not return the
exact value when it leaves int64: the int64 form returns 0 on overflow (or,
when the scale difference wraps int32, the bare value), the ``inf.Dec`` form
(``scaledValue`` in scale_int.go) wraps like Go's int64 arithmetic and
multiplies by ``int64(math.Pow10(n))``, which on amd64 is ``math.MinInt64``
for n >= 19. ``Add``/``Sub`` switch forms as upstream does. The exact value is
returned directly whenever it is what the kubelet gets (the common case).
"""

from __future__ import annotations

import enum
import math
import re
from typing import Final

from podnuma.golang.jsonnumbers import JSONFloat, JSONNegativeZero

__all__ = [
    "Format",
    "Quantity",
    "QuantityError",
    "int_text",
    "parse_quantity",
    "quantity_from_manifest",
    "wrap_int64",
    "ERR_EXPONENT",
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
_MOST_NEGATIVE: Final = -(1 << 63)
# int64 amounts below _SMALL scaled by at most 10^9 and summed cannot overflow
_SMALL: Final = 1 << 31
_POW10: Final = tuple(10**i for i in range(10))
# below these, Value()/MilliValue() of a non-negative quantity is exact
_FAST_VALUE_NANOS: Final = _MOST_POSITIVE // 2 * _NANO
_FAST_MILLI_NANOS: Final = _MOST_POSITIVE // 2 * 1_000_000
_U64: Final = 1 << 64
_SHORT: Final = 4611686018427387903  # 2^62 - 1
_SHORT_NEG: Final = -4611686018427387903
# Decimal exponents beyond this are refused instead of materialising a huge
# integer. apimachinery keeps them symbolically until the first comparison
# (the pod's QoS class, validation), where inf.Dec computes 10^exponent: for
# exponents of some 10^8 and more (e.g. the int32-truncated "1e99999999999")
# the real code does not finish. No real manifest comes near either bound.
_MAX_EXPONENT: Final = 100_000
ERR_EXPONENT: Final = (
    "quantity exponent {exp} too large: the Kubernetes code would compute 10^{exp} "
    "and not finish (podnuma accepts exponents up to {limit})"
)


def wrap_int64(v: int) -> int:
    """``v`` as a Go int64 holds it (two's-complement wrap-around)."""
    if _SHORT_NEG <= v <= _SHORT:
        return v  # the common case, checked against bounds a compiled build
        # holds unboxed (it boxes integers from 2^62 on)
    if _MOST_NEGATIVE <= v <= _MOST_POSITIVE:
        return v  # the usual case: already an int64
    return ((v - _MOST_NEGATIVE) % _U64) + _MOST_NEGATIVE


def _wrap32(v: int) -> int:
    """Go int32 arithmetic (``resource.Scale``)."""
    return ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def _fits64(v: int) -> bool:
    return _MOST_NEGATIVE <= v <= _MOST_POSITIVE


def _strip_tens(mag: int) -> tuple[int, int]:
    """(m, k) with mag = m * 10^k and m not a multiple of 10 (mag > 0), in
    O(log k) big divisions rather than one per digit."""
    if mag % 10:
        return mag, 0
    powers = [10]
    while mag % (powers[-1] * powers[-1]) == 0:
        powers.append(powers[-1] * powers[-1])
    zeros = 0
    for i in range(len(powers) - 1, -1, -1):
        if mag % powers[i] == 0:
            mag //= powers[i]
            zeros += 1 << i
    return mag, zeros


def int_text(n: int) -> str:
    """``str(n)`` without CPython's 4300-digit limit (Go has none)."""
    if n.bit_length() < 14_000:
        return str(n)
    import decimal  # (here: a start-up does not need it)

    return str(decimal.Decimal(n))


def _parse_digits(digits: str) -> int:
    """``int(digits)`` without CPython's 4300-digit limit."""
    if len(digits) < 4_000:
        return int(digits)
    import decimal

    return int(decimal.Decimal(digits))


def _pow10_int64(n: int) -> int:
    """``int64(math.Pow10(n))`` for n > 0 on amd64: exact up to 10^18; beyond,
    the float is out of int64 range (or +Inf) and CVTTSD2SQ yields
    math.MinInt64 (reproduced quirk)."""
    return 10**n if n <= 18 else _MOST_NEGATIVE


def _positive_scale_int64(base: int, scale: int) -> tuple[int, bool]:
    """``positiveScaleInt64``: (base * 10^scale, fits int64). On overflow the
    scales with a dedicated multiplier (1, 2, 3, 6, 9) return the wrapped
    product, the others (a loop of *10) return 0; a negative scale (an int32
    difference that wrapped) skips the loop and returns base unchanged
    (reproduced quirks)."""
    if scale == 0 or base == 0:
        return base, True
    if scale in (1, 2, 3, 6, 9):
        exact = base * 10**scale
        if base == 1:
            return exact, True
        if base == _MOST_NEGATIVE:
            return 0, False
        return wrap_int64(exact), _fits64(exact)
    if scale < 0:
        return base, True
    if scale > 19 or not _fits64(exact := base * 10**scale):
        return 0, False
    return exact, True


def _int64_amount_add(au: int, ae: int, bu: int, be: int) -> tuple[int, int] | None:
    """``int64Amount.Add``: the sum as (value, scale), None when it would
    overflow (the caller then goes to inf.Dec)."""
    if bu == 0:
        return au, ae
    if au == 0:
        return bu, be
    if ae == be:
        c = au + bu
        return (c, ae) if _fits64(c) else None
    if ae > be:
        scaled, ok = _positive_scale_int64(au, _wrap32(ae - be))
        if not ok:
            return None
        c = scaled + bu
        return (c, be) if _fits64(c) else None
    scaled, ok = _positive_scale_int64(bu, _wrap32(be - ae))
    if not ok:
        return None
    c = au + scaled
    return (c, ae) if _fits64(c) else None


def _dec_add(au: int, ae: int, bu: int, be: int) -> tuple[int, int]:
    """``inf.Dec.Add``: both upscaled to the finer scale."""
    e = min(ae, be)
    return au * 10 ** (ae - e) + bu * 10 ** (be - e), e


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


    __slots__ = ("_nanos", "_format", "_text", "_rep")

    def __init__(
        self,
        nanos: int,
        fmt: Format = Format.DECIMAL_SI,
        *,
        _text: str | None = None,
        _rep: tuple[bool, int, int] | None = None,
    ) -> None:
        self._nanos = nanos
        self._format = fmt
        self._text = _text
        # apimachinery's form: (is inf.Dec, unscaled, exponent) with value =
        # unscaled * 10^exponent; None: derived from the value (_go_rep).
        self._rep = _rep

    # ---- constructors -------------------------------------------------------

    @classmethod
    def from_int(cls, value: int, binary: bool = False) -> Quantity:
        """``resource.NewQuantity(value, DecimalSI|BinarySI)``."""
        return cls(
            value * _NANO,
            Format.BINARY_SI if binary else Format.DECIMAL_SI,
            _rep=(False, value, 0),
        )

    @classmethod
    def from_milli(cls, milli: int) -> Quantity:
        """``resource.NewMilliQuantity(milli, DecimalSI)``."""
        return cls(milli * 10**6, Format.DECIMAL_SI, _rep=(False, milli, -3))

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

    def _go_rep(self) -> tuple[bool, int, int]:
        rep = self._rep
        if rep is not None:
            return rep
        n = self._nanos
        if n % _NANO == 0 and _fits64(n // _NANO):
            return False, n // _NANO, 0
        if _fits64(n):
            return False, n, -9
        return True, n, -9

    def go_value_text(self) -> str:
        """How Go's ``%v`` prints a ``resource.Quantity`` value (not a
        pointer: ``String`` has a pointer receiver, so fmt prints the
        struct): ``{{VALUE SCALE} {<nil>} CACHED FORMAT}``. Quantities that
        come out of arithmetic carry no cached string. (An ``inf.Dec`` one
        prints the address of its decimal, which no run can repeat: shown as
        ``{{0 0} {0x?}  FORMAT}``.)"""
        dec, u, e = self._go_rep()
        if dec:
            return f"{{{{0 0}} {{0x?}}  {self._format.value}}}"
        return f"{{{{{u} {e}}} {{<nil>}}  {self._format.value}}}"

    @property
    def is_dec(self) -> bool:
        """Held as an ``inf.Dec`` (not an ``int64Amount``) by apimachinery."""
        return self._go_rep()[0]

    def as_dec(self) -> Quantity:
        """This quantity after ``Quantity.AsDec()`` (same value and format, in
        the inf.Dec form): ``Quantity.Cmp`` does that to its receiver when
        either side already is an inf.Dec."""
        dec, u, e = self._go_rep()
        if dec:
            return self
        return Quantity(self._nanos, self._format, _text=self._text, _rep=(True, u, e))

    def round_up(self, scale: int) -> Quantity:
        """``Quantity.RoundUp(scale)``: rounded away from zero to a multiple
        of 10^scale (scale >= -9). The int64 form is left alone when already
        that coarse; otherwise both forms take the new scale, which is what
        later ``Value``/``MilliValue`` calls see."""
        dec, u, e = self._go_rep()
        if not dec and e >= scale:
            return self
        r = u * 10 ** (e - scale) if e >= scale else _away_from_zero_div(u, 10 ** (scale - e))
        nanos = r * 10 ** (scale + 9)
        if dec and nanos == self._nanos and self._rep == (True, r, scale):
            return self
        return Quantity(nanos, self._format, _rep=(dec, r, scale))

    def as_int64(self) -> tuple[int, bool]:
        """``Quantity.AsInt64()``: (value, True) only for the int64 form at a
        scale >= 0 whose value fits; an inf.Dec or a negative scale (e.g.
        ``1500m`` after the API defaults round to milli) is (0, False), as
        upstream, whatever the value."""
        dec, u, e = self._go_rep()
        if dec or e < 0:
            return 0, False
        return _positive_scale_int64(u, e)

    def value(self) -> int:
        """``Quantity.Value()``: the integer value rounded away from zero, as
        the int64 apimachinery returns (see :meth:`scaled_value`)."""
        n = self._nanos
        if 0 <= n <= _FAST_VALUE_NANOS:  # the exact value is what Go returns
            return -(-n // _NANO)
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """``Quantity.MilliValue()``: value * 1000 rounded away from zero, as
        the int64 apimachinery returns (see :meth:`scaled_value`)."""
        n = self._nanos
        if 0 <= n <= _FAST_MILLI_NANOS:
            return -(-n // 1_000_000)
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """``Quantity.ScaledValue(scale)``: ceil(value / 10^scale) away from
        zero while that fits int64; beyond, what Go computes (module doc)."""
        shift = scale + 9
        n = self._nanos
        r = _away_from_zero_div(n, 10 ** shift) if shift >= 0 else n * 10 ** (-shift)
        if _MOST_NEGATIVE <= r <= _MOST_POSITIVE and (n >= 0 or not self._go_rep()[0]):
            return r
        return self._go_scaled_value(scale)

    def _go_scaled_value(self, scale: int) -> int:
        dec, u, e = self._go_rep()
        if not dec:
            # int64Amount.AsScaledInt64
            if e < scale:
                return _away_from_zero_div(u, 10 ** (scale - e))
            # overflow wraps or gives 0 depending on the scale difference;
            # a wrapped int32 difference returns the bare value (reproduced
            # quirks, see _positive_scale_int64)
            return _positive_scale_int64(u, _wrap32(e - scale))[0]
        # scaledValue (scale_int.go) with inf scales -e and -scale
        dif = scale - e
        if dif == 0:
            return wrap_int64(u)
        if dif < 0:
            return wrap_int64(wrap_int64(u) * _pow10_int64(-dif))
        if u < _MOST_POSITIVE and dif < 19:
            # int64 division truncates toward zero; any remainder adds one,
            # whatever the sign (reproduced quirk)
            v = wrap_int64(u)
            d = 10**dif
            q = abs(v) // d
            q = -q if v < 0 else q
            return wrap_int64(q + 1) if v - q * d != 0 else q
        q, m = divmod(u, 10**dif)  # big.Int.DivMod: Euclidean
        return wrap_int64(q + 1) if m != 0 else wrap_int64(q)

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
        return Quantity(self._nanos + other._nanos, fmt, _rep=_go_add(self, other, 1))

    def __sub__(self, other: Quantity) -> Quantity:
        if not isinstance(other, Quantity):
            return NotImplemented
        fmt = other._format if self._nanos == 0 else self._format
        odec, ou, _ = other._go_rep()
        if not odec and ou == _MOST_NEGATIVE:
            # int64Amount.Sub negates the int64: -MinInt64 is MinInt64, so
            # Go adds 2^63 * 10^scale instead of subtracting it whenever that
            # sum holds in an int64 (reproduced quirk: 0 - MinInt64 is MinInt64)
            explicit = self if self._rep is not None else Quantity(self._nanos, self._format, _rep=self._go_rep())
            rep = _go_add(explicit, other, -1)
            if rep is not None and not rep[0]:
                return Quantity(_rep_nanos(rep[1], rep[2]), fmt, _rep=rep)
            return Quantity(self._nanos - other._nanos, fmt, _rep=rep)
        return Quantity(self._nanos - other._nanos, fmt, _rep=_go_add(self, other, -1))

    def __neg__(self) -> Quantity:
        dec, u, e = self._go_rep()
        return Quantity(-self._nanos, self._format, _rep=(dec, -u, e))

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
                if amount == _MOST_NEGATIVE and not self._go_rep()[0]:
                    # removeInt64Factors cannot negate math.MinInt64: no
                    # factor of 1024 is taken out (reproduced quirk)
                    return str(amount)
                times = 0
                mag = abs(amount)
                while mag >= 1024 and mag % 1024 == 0:
                    mag //= 1024
                    times += 1
                amount = -mag if amount < 0 else mag
                # Unknown exponents (beyond Ei) get no suffix, as upstream.
                return f"{amount}{_BIN_SUFFIX_BY_EXP.get(times * 10, '')}"
        rep = self._rep
        if rep is not None and not rep[0]:
            # the int64 form: a small mantissa, however large the exponent
            mag, zeros = _strip_tens(abs(rep[1]))
            exponent = rep[2] + zeros
        else:
            mag, zeros = _strip_tens(abs(n))
            exponent = -9 + zeros
        while exponent % 3 != 0:
            mag *= 10
            exponent -= 1
        number = f"-{int_text(mag)}" if n < 0 else int_text(mag)
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


def _go_add(a: Quantity, b: Quantity, sign: int) -> tuple[bool, int, int] | None:
    """apimachinery's form of ``a.Add(b)`` (sign 1) or ``a.Sub(b)`` (-1):
    int64Amount while the int64 sum holds, else inf.Dec. None (derive from
    the value) when both are plain int64 amounts of the usual shape."""
    ra, rb = a._rep, b._rep
    if ra is None:
        if rb is None:
            return None
        ra = a._go_rep()
    elif rb is None:
        rb = b._go_rep()
    da, au, ae = ra
    db, bu, be = rb
    if sign < 0 and (da or db):
        # (Sub on the inf.Dec path subtracts the other's exact value)
        u, e = _dec_add(au, ae, -bu, be)
        return True, u, e
    if sign < 0:
        # int64Amount.Sub adds the negated int64, which wraps for MinInt64
        # (the inf.Dec fallback below then uses the exact value)
        if bu == _MOST_NEGATIVE:
            summed = _int64_amount_add(au, ae, bu, be)
            if summed is not None:
                return False, summed[0], summed[1]
            u, e = _dec_add(au, ae, -bu, be)
            return True, u, e
        bu = -bu
    if not da and not db:
        if au and bu:
            # the common cases: no overflow anywhere
            if ae == be:
                c = au + bu
                if _MOST_NEGATIVE <= c <= _MOST_POSITIVE:
                    return False, c, ae
                return True, c, ae
            if -_SMALL < au < _SMALL and -_SMALL < bu < _SMALL and -9 <= ae - be <= 9:
                if ae > be:
                    return False, au * _POW10[ae - be] + bu, be
                return False, au + bu * _POW10[be - ae], ae
        summed = _int64_amount_add(au, ae, bu, be)
        if summed is not None:
            return False, summed[0], summed[1]
    u, e = _dec_add(au, ae, bu, be)
    return True, u, e


def _rep_nanos(unscaled: int, exponent: int) -> int:
    """The value in nano-units of apimachinery's (unscaled, exponent) form."""
    shift = exponent + 9
    scale: int = 10 ** abs(shift)
    return unscaled * scale if shift >= 0 else unscaled // scale


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
        # strconv.ParseInt(digits, 10, 64)
        if len(digits.lstrip("+-").lstrip("0")) > 19:
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

    # ParseQuantity's int64 fast path: an int64Amount (value, scale), whose
    # input text String() reuses when it is canonical.
    if fmt is Format.BINARY_SI:
        if not denom:
            precision = 15 - len(num) - int(exponent * 3 / 10) - 1
            if precision >= 0:
                value = int(shifted) << exponent
                if value <= _MOST_POSITIVE:
                    cached = exponent % 10 == 0 and int(shifted) & 0x07 != 0
                    if not positive:
                        value = -value
                    return Quantity(
                        value * _NANO, fmt, _text=text if cached else None, _rep=(False, value, 0)
                    )
    elif 18 - len(shifted) >= 0:
        # the int32 scale wraps for exponents near -2^31 (reproduced quirk)
        scale = _wrap32(exponent - len(denom))
        if scale >= -9:
            value = int(shifted)
            if value == 0:
                nanos = 0
            elif scale > _MAX_EXPONENT:
                raise QuantityError(ERR_EXPONENT.format(exp=scale, limit=_MAX_EXPONENT))
            else:
                nanos = value * 10 ** (scale + 9)
            cached = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
            if not positive:
                value, nanos = -value, -nanos
            return Quantity(nanos, fmt, _text=text if cached else None, _rep=(False, value, scale))

    # the inf.Dec path: rounded up to whole nano-units (scale 9), binary
    # values capped at 2^63-1 (then held at scale 0)
    mantissa = _parse_digits(shifted)
    rep_exp = -9
    if base == 10:
        shift = exponent - len(denom) + 9
        if mantissa == 0:
            nanos = 0
        elif shift >= 0:
            if shift - 9 > _MAX_EXPONENT:
                raise QuantityError(ERR_EXPONENT.format(exp=shift - 9, limit=_MAX_EXPONENT))
            nanos = mantissa * 10**shift
        elif -shift > len(shifted) + 1:
            nanos = 1  # far below 1n: rounds up to 1n
        else:
            nanos = _ceil_div(mantissa, 10 ** (-shift))
    else:
        nanos = _ceil_div((mantissa << exponent) * _NANO, 10 ** len(denom))
        if nanos > _MAX_BINARY_NANOS:
            nanos = _MAX_BINARY_NANOS
            rep_exp = 0
        if 0 < nanos < _NANO:
            fmt = Format.DECIMAL_SI
    if not positive:
        nanos = -nanos
    unscaled = nanos if rep_exp == -9 else nanos // _NANO
    return Quantity(nanos, fmt, _rep=(True, unscaled, rep_exp))


def parse_quantity(value: str | int | float) -> Quantity:
    """``resource.ParseQuantity`` (strings) or a JSON/YAML number in a manifest.

    Numbers are parsed from their decimal text, as ``Quantity.UnmarshalJSON``
    parses the raw JSON number: a JSON reader's
    :class:`~podnuma.golang.jsonnumbers.JSONFloat` by the text it was read
    from (``1e-400`` is ``1n``, not the float's 0), any other float by its
    shortest text (a YAML float: ``YAMLToJSON`` writes the float64 it made).
    """
    if type(value) is JSONNegativeZero:
        # the JSON integer -0: its text, as Quantity.UnmarshalJSON parses it
        # (asked before ``value`` is narrowed to an int, which the compiled
        # build unboxes into a plain int: the subclass would be lost)
        return _parse_text("-0")
    if isinstance(value, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(value, int):
        return _parse_text(str(value))
    if type(value) is JSONFloat:
        return _parse_text(value.text)
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
