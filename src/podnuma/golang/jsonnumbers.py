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
* the text itself when the number is past the float range (``1e400``,
  infinity as a float), as go-yaml leaves such a YAML scalar: a quantity
  that large is then refused for what it is, with its value. The text is
  a :class:`JSONNumberText`, a ``str`` (every reader takes it as the
  string it reads from YAML) that says it was a number: the type check of
  an API-server pod (``podnuma.api.pod_types``) refuses it in a field of
  any type but a quantity, as Go's ``encoding/json`` refuses a number for
  a string (``image: 1e400``). marshal and msgspec's encoders refuse it,
  as they refuse a :class:`JSONFloat`; :func:`dumps` writes it back as
  the bare number.

Integers need nothing: Python's ``int`` is exact, and ``str`` of it is the
text (``-0`` aside, whose quantity is the same zero).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

__all__ = [
    "JSONFloat", "JSONNegativeZero", "JSONNumberText", "as_go_number", "dumps", "go_json_integer", "go_json_number", "go_json_number_text",
    "json_float", "with_texts",
]


class JSONFloat(float):
    """A JSON number's float that keeps the number's ``text`` (see the
    module's docstring). Its equality and hash are the float's; marshal
    and msgspec's encoders refuse it (their callers then fall back to the
    slower path that does not key on the bytes)."""

    __slots__ = ("text",)
    text: str

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return json_float, (self.text,)


class JSONNumberText(str):
    """The text of a JSON number past the float range (``1e400``), a
    ``str`` that remembers it was a number (see the module's docstring)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return json_float, (str(self),)


def json_float(text: str) -> float | str:
    """The value a JSON number with a fraction or an exponent is read as:
    a ``float``, a :class:`JSONFloat` or (past the float range) its text,
    a :class:`JSONNumberText`."""
    value = float(text)
    if value - value != 0.0:  # infinite (inf - inf is NaN)
        return JSONNumberText(text)
    if repr(value) == text:
        return value
    number = JSONFloat(value)
    number.text = text
    return number


def go_json_number(text: str) -> float:
    """A JSON number with a fraction or an exponent as Go's decoder sees
    it: always a number, even past the float range (``1e400`` is a
    :class:`JSONFloat` of infinity that keeps its text: a string field
    refuses it as a number, an int field quotes its text, a quantity parses
    the text), where :func:`json_float` keeps such a number as a string,
    as go-yaml does."""
    value = json_float(text)
    if isinstance(value, str):
        number = JSONFloat(float(text))
        number.text = text
        return number
    return value


def go_json_number_text(text: str) -> JSONFloat:
    """A JSON number with a fraction or an exponent as a :class:`JSONFloat`
    that always keeps its text (``1.0`` too, which a Go int field refuses
    where the integer ``1`` is taken; past the float range, infinity)."""
    number = JSONFloat(float(text))
    number.text = text
    return number


class JSONNegativeZero(int):
    """The JSON integer ``-0``: zero, whose text an unsigned Go field
    refuses (``strconv.ParseUint`` takes no sign)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[object, tuple[str, int]]:
        return go_json_integer, ("-0", 0)


def go_json_integer(text: str, max_digits: int) -> int | JSONFloat:
    """A JSON integer: an ``int``, or, when it has more digits than Python
    converts (``max_digits``: ``sys.get_int_max_str_digits()``, 0 for no
    limit), the :class:`JSONFloat` of :func:`go_json_number_text` (Go's
    decoder reads any number text; no field of a Go int type takes one that
    long, a float field refuses it as past its range, an unknown field
    skips it)."""
    if max_digits and len(text.lstrip("-")) > max_digits:
        return go_json_number_text(text)
    if text == "-0":
        return JSONNegativeZero(0)
    return int(text)


def as_go_number(value: JSONNumberText) -> JSONFloat:
    """A :class:`JSONNumberText` as :func:`go_json_number` reads its text:
    a :class:`JSONFloat` of infinity that keeps the text."""
    number = JSONFloat(float(value))
    number.text = str(value)
    return number


def dumps(obj: Any, **options: Any) -> str:
    """``json.dumps(obj, **options)`` that writes each :class:`JSONFloat`
    as the text it was read from (``json.dumps`` writes any float by
    ``float.__repr__``: ``2.0000000000000000001`` would come back as
    ``2.0``). For a document written to be read again (a scenario built
    from the pods read, a cache key): read back through :func:`json_float`,
    it holds the same numbers. A :class:`JSONNumberText` is written as the
    bare number it was read from, too. A document without either is
    written as ``json.dumps`` writes it."""
    found: list[str] = []
    mark = os.urandom(8).hex()  # (not secrets: it imports random and hashlib at start-up)

    def swap(number: JSONFloat | JSONNumberText) -> str:
        found.append(number.text if type(number) is JSONFloat else str(number))
        return f"\0{mark}:{len(found) - 1}\0"

    text = json.dumps(_each_number(obj, swap), **options)
    if not found:
        return text
    for i, number in enumerate(found):
        text = text.replace(f'"\\u0000{mark}:{i}\\u0000"', number, 1)
    return text


def with_texts(obj: Any) -> Any:
    """``obj`` with each :class:`JSONFloat` replaced by its text, a string
    (and each :class:`JSONNumberText` by a plain ``str``):
    for a document written as YAML, where the number's text unquoted is a
    float again (go-yaml reads ``2.0000000000000000001`` as 2) while the
    string parses to the same quantity as the JSON number did
    (``ParseQuantity`` of the same text). Only quantities hold such
    numbers in a pod the API server takes."""
    return _each_number(obj, lambda number: number.text if type(number) is JSONFloat else str(number))


def _each_number(obj: Any, replace: Callable[[Any], Any]) -> Any:
    """``obj`` (JSON values) with each :class:`JSONFloat` (and, for
    :func:`dumps`, each :class:`JSONNumberText`) replaced by
    ``replace(it)``, mappings and lists copied, tuples as lists."""
    if type(obj) is JSONFloat:
        return replace(obj)
    if type(obj) is JSONNumberText:
        return replace(obj)
    if isinstance(obj, dict):
        return {k: _each_number(v, replace) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_each_number(v, replace) for v in obj]
    return obj
