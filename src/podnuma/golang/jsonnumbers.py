"""JSON numbers with a fraction or an exponent, read so their text survives.

The Kubernetes API machinery never turns a JSON number in a quantity field
into a float: ``resource.Quantity.UnmarshalJSON``
(``k8s.io/apimachinery/pkg/api/resource/quantity.go``) is handed the raw
bytes of the number and gives them, trimmed, to ``ParseQuantity``. A float
would lose what the text says: ``1e-400`` underflows to 0 where
``ParseQuantity`` rounds it up to ``1n``; ``1.0000000000000000001`` is 1.0
where the text rounds up to ``1000000001n``; ``1e3`` is ``1000.0``, whose
quantity keeps the ``DecimalSI`` format where the text's is
``DecimalExponent``.

Every JSON reader podnuma has for manifests, scenarios and dumps gives
:func:`json_float` the text of such a number (the standard library's
``parse_float``, msgspec's ``float_hook``). It returns:

* a plain ``float`` when ``repr`` of the float is the text (``0.5``,
  ``2.25``): the text parses to the same quantity, and the common value
  stays a float that marshal, MessagePack and the memos take as before;
* a :class:`JSONFloat` otherwise: a ``float`` (every other field reads it
  as before) that also carries :attr:`JSONFloat.text`, which
  :func:`podnuma.api.quantity.parse_quantity` parses in its place;
* the text itself (a ``str``) when the number is past the float range
  (``1e400``, infinity as a float), as go-yaml leaves such a YAML scalar:
  a quantity that large is then refused for what it is, with its value.

Integers need nothing: Python's ``int`` is exact, and ``str`` of it is the
text (``-0`` aside, whose quantity is the same zero).
"""

from __future__ import annotations

__all__ = ["JSONFloat", "json_float"]


class JSONFloat(float):
    """A JSON number's float that keeps the number's ``text`` (see the
    module's docstring). Its equality and hash are the float's; marshal
    and msgspec's encoders refuse it (their callers then fall back to the
    slower path that does not key on the bytes)."""

    __slots__ = ("text",)
    text: str

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return json_float, (self.text,)


def json_float(text: str) -> float | str:
    """The value a JSON number with a fraction or an exponent is read as:
    a ``float``, a :class:`JSONFloat` or (past the float range) its text."""
    value = float(text)
    if value - value != 0.0:  # infinite (inf - inf is NaN)
        return text
    if repr(value) == text:
        return value
    number = JSONFloat(value)
    number.text = text
    return number
