"""The JSON types of an API-server pod's known fields, checked.

The API server decodes a pod into the Go types of k8s.io/api v0.37.2
``core/v1`` before anything else: a value of the wrong JSON type at a
field it knows (``image: {a: 1}``, ``ports: 5``, ``hostNetwork: "yes"``,
a string in an ``int32``) is refused (``json: cannot unmarshal object into
Go struct field Container.spec.containers.image of type string``), so such
a pod never reached a node. :func:`check_pod_types` refuses it, in
podnuma's field-path wording (``podnuma.fieldkit.wrong_type``)::

    spec.containers[0].image: must be a string, got a mapping

The types are :mod:`podnuma.api.pod_schema` (the static-pod decoder's).
What is checked: every field of the schema, the first wrong one in the
document's order; a ``null`` is its type's zero value anywhere (Go's
decoder); a field the schema does not know is left to the readers (which
refuse unknown fields where they are strict). An integer field takes a
whole number in its Go type's range; a number written ``2.0`` is taken
(YAML: the conversion to JSON, ``sigs.k8s.io/yaml``, writes it ``2``, as
``kubectl`` sends it; JSON text ``2.0`` is read as the same float, so it
is taken too, where Go's ``encoding/json`` refuses it), JSON text with an
exponent (``1e3``, read as a :class:`~podnuma.golang.jsonnumbers.JSONFloat`)
is refused, as Go refuses it. A JSON number past the float range
(``1e400``, read as its text, a
:class:`~podnuma.golang.jsonnumbers.JSONNumberText`) is a number here, as
it is to Go's decoder: refused in a field of any type but a quantity
(``image: 1e400``: ``must be a string, got a number``). A quantity must be
a string or a number (its text is parsed by the readers).

A time (``metav1.Time``: ``creationTimestamp``, ``deletionTimestamp``, a
managed field's ``time``, ``status.startTime``, a condition's
``lastTransitionTime``, a container state's ``startedAt``...) decodes
itself: ``null`` is no time, anything else must be a string that Go's
``time.Parse`` takes with the ``time.RFC3339`` layout (``""`` is refused,
as Go refuses it)::

    metadata.creationTimestamp: not an RFC 3339 time: parsing time "2024-01-01t00:00:00z" as \
"2006-01-02T15:04:05Z07:00": cannot parse "t00:00:00z" as "T"

(the reason in Go's words: ``podnuma.golang.rfc3339.parse_error``,
which the static-pod decoder and its UIDs use too).

Which error is the answer is Go's decoder's: it goes through the document
in order, saves the first plain type mismatch (a string, boolean or
integer field, a struct, list or map of the wrong JSON type) and goes on
past it; the first ``UnmarshalJSON`` that fails -- a time, an
int-or-string (``httpGet.port: 1.5``, ``true``, ``{}``: anything but an
int32 or a string), a quantity (parsed by the caller's check, wherever
the pod has one: ``status.containerStatuses[0].allocatedResources``,
an ``emptyDir.sizeLimit``...) -- ends it at once, and wins over a
mismatch saved before it. "In order" is the document's for a pod decoded
as written (a JSON dump); a pod that reached the API server from a map
written again by ``json.Marshal`` (``kubectl``; the kubelet oracle's
scenarios; ``sigs.k8s.io/yaml``'s conversion of YAML) has its keys sorted
(``sort_keys``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from podnuma.api.pod_schema import POD_TYPE, GoType
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.golang import rfc3339
from podnuma.golang.jsonnumbers import JSONFloat, JSONNumberText, as_go_number

__all__ = ["QuantityCheck", "check_pod_types", "check_value_types"]

_WANT = {
    "string": "a string", "time": "a string (a time)", "bool": "a boolean", "int": "an integer",
    "intstr": "an integer or a string", "slice": "a list", "map": "a mapping", "struct": "a mapping",
    "quantity": "a quantity (a string or a number)",
}


def _int_error(value: Any, t: GoType, path: str) -> InputError | None:
    """``None`` when ``value`` (an int or a float) is a whole number in the
    range of ``t``'s Go type."""
    if isinstance(value, float):
        if isinstance(value, JSONFloat):  # (JSON text with an exponent, ``1e3``: Go's decoder refuses it)
            return wrong_type(path, "an integer", value)
        if value != value or value in (float("inf"), float("-inf")) or value != int(value):
            return wrong_type(path, "an integer", value)
        value = int(value)
    limit = 1 << (t.bits - 1)
    if -limit <= value < limit:
        return None
    return InputError(f"must be an integer of type {t.name} (from {-limit} to {limit - 1}), got {value}",
                      path=path)


def _time_error(text: str) -> str:
    """Why Go's ``time.Parse(time.RFC3339, text)`` refuses ``text`` (Go's
    message), or "" when it takes it."""
    return rfc3339.parse_error(text)


def _time(value: Any, path: str) -> None:
    """A ``metav1.Time``'s value (not null) checked: a string Go's RFC 3339
    parse takes."""
    if type(value) is JSONNumberText:
        value = as_go_number(value)
    if not isinstance(value, str):
        raise wrong_type(path, _WANT["time"], value)
    why = _time_error(value)
    if why:
        raise InputError(f"not an RFC 3339 time: {why}", path=path)


#: ``(value, path)`` -> ``None``: a quantity's value (a string or a
#: number, not null) parsed, its error raised (``Quantity.UnmarshalJSON``)
QuantityCheck = Callable[[Any, str], None]


def _first(item: tuple[str, Any]) -> str:
    return item[0]


class _Walk:
    """One decoding of a value into its Go type, as ``encoding/json`` goes:
    in the document's order (``sort``: in the order of the keys, as Go's
    ``json.Marshal`` writes a map: a pod read into a map and written again,
    as ``kubectl`` and a scenario's pods are), a plain type mismatch
    (string, bool, integer, a struct, list or map of the wrong JSON type)
    saved, the first one only, and the decoding going on past it (not
    into it); an ``UnmarshalJSON`` that fails (a time, an int-or-string, a
    quantity) ends it at once: its error is the answer, whatever was saved
    before it. Once nothing failed at once, the saved error is the answer."""

    __slots__ = ("quantity", "saved", "sort")

    def __init__(self, quantity: QuantityCheck | None, sort: bool) -> None:
        self.quantity = quantity
        self.sort = sort
        self.saved: InputError | None = None

    def mismatch(self, err: InputError) -> None:
        if self.saved is None:
            self.saved = err

    def items(self, value: Mapping[str, Any]) -> Any:
        return sorted(value.items(), key=_first) if self.sort else value.items()

    def go(self, value: Any, t: GoType, path: str) -> None:
        if value is None:
            return
        kind = t.kind
        if type(value) is JSONNumberText:  # (a number past the float range: a number to Go)
            if kind == "any":
                return
            if kind == "quantity":
                if self.quantity is not None:
                    self.quantity(value, path)
                return
            value = as_go_number(value)
        if kind == "struct":
            if not isinstance(value, Mapping):
                self.mismatch(wrong_type(path, "a mapping", value))
                return
            fields = t.fields
            for k, v in self.items(value):
                if v is None:
                    continue
                field = fields.get(k)
                if field is not None:
                    self.go(v, field[0], f"{path}.{k}" if path else k)
            return
        if kind == "slice":
            if not isinstance(value, list | tuple):
                self.mismatch(wrong_type(path, "a list", value))
                return
            elem = t.elem
            assert elem is not None
            if elem.kind == "string":
                if self.saved is None:
                    for i, v in enumerate(value):
                        if v is not None and (not isinstance(v, str) or type(v) is JSONNumberText):
                            self.mismatch(wrong_type(f"{path}[{i}]", "a string",
                                                     as_go_number(v) if type(v) is JSONNumberText else v))
                            break
                return
            for i, v in enumerate(value):
                self.go(v, elem, f"{path}[{i}]")
            return
        if kind == "map":
            if not isinstance(value, Mapping):
                self.mismatch(wrong_type(path, "a mapping", value))
                return
            elem = t.elem
            assert elem is not None
            for k, v in self.items(value):
                self.go(v, elem, f"{path}[{k}]")
            return
        if kind == "string":
            if not isinstance(value, str):
                self.mismatch(wrong_type(path, _WANT[kind], value))
            return
        if kind == "time":
            _time(value, path)
            return
        if kind == "bool":
            if not isinstance(value, bool):
                self.mismatch(wrong_type(path, "a boolean", value))
            return
        if kind == "int" or kind == "intstr":
            if isinstance(value, int | float) and not isinstance(value, bool):
                err = _int_error(value, t, path)
            elif kind == "intstr" and isinstance(value, str):
                err = None
            else:
                err = wrong_type(path, _WANT[kind], value)
            if err is not None:
                if kind == "intstr":
                    raise err  # (IntOrString.UnmarshalJSON's error)
                self.mismatch(err)
            return
        if kind == "quantity":
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise wrong_type(path, _WANT[kind], value)  # (Quantity.UnmarshalJSON's error)
            if self.quantity is not None:
                self.quantity(value, path)
            return
        # ("any": not checked)


def check_value_types(
    value: Any, t: GoType, path: str, *, quantity: QuantityCheck | None = None, sort_keys: bool = False
) -> None:
    """``value`` at ``path`` checked against the Go type ``t``
    (:func:`check_pod_types` for a part of a pod)."""
    walk = _Walk(quantity, sort_keys)
    walk.go(value, t, path)
    if walk.saved is not None:
        raise walk.saved


def check_pod_types(
    doc: Mapping[str, Any], *, quantity: QuantityCheck | None = None, sort_keys: bool = False
) -> None:
    """Refuse the pod ``doc`` (a mapping) as Go's decoding into the v1 Pod
    refuses it: the first time, int-or-string or quantity (parsed by
    ``quantity``, when given) that fails, in the document's order (the
    keys' order with ``sort_keys``), else the first known field whose
    value is of the wrong JSON type: ``InputError`` with its path
    (``spec.containers[0].ports: must be a list, got an integer``,
    ``metadata.creationTimestamp: not an RFC 3339 time: ...``)."""
    check_value_types(doc, POD_TYPE, "", quantity=quantity, sort_keys=sort_keys)

