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
as Go refuses it), and its error ends the decoding at once, so the first
bad time in the document wins over any wrong type met before it::

    metadata.creationTimestamp: not an RFC 3339 time: parsing time "2024-01-01t00:00:00z" as \
"2006-01-02T15:04:05Z07:00": cannot parse "t00:00:00z" as "T"

(the reason in Go's words: ``podnuma.golang.rfc3339.parse_error``,
which the static-pod decoder and its UIDs use too). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.api.pod_schema import POD_TYPE, GoType
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.golang import rfc3339
from podnuma.golang.jsonnumbers import JSONFloat, JSONNumberText, as_go_number

__all__ = ["check_pod_types", "check_value_types"]

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


#: id of a type -> whether a time is somewhere below it
_HOLDS_TIME: dict[int, bool] = {}


def _holds_time(t: GoType) -> bool:
    got = _HOLDS_TIME.get(id(t))
    if got is None:
        _HOLDS_TIME[id(t)] = False  # (no type holds itself; guards a cycle all the same)
        if t.kind == "time":
            got = True
        elif t.kind == "struct":
            got = any(_holds_time(f[0]) for f in t.fields.values())
        else:
            got = t.elem is not None and _holds_time(t.elem)
        _HOLDS_TIME[id(t)] = got
    return got


def _times(value: Any, t: GoType, path: str) -> None:
    """Raise the first bad time in ``value`` (at ``path``) for ``t``, in the
    document's order, going only where the values are of their types (a
    time's error ends Go's decoding: it wins over a wrong type met first)."""
    if value is None or not _holds_time(t):
        return
    kind = t.kind
    if kind == "time":
        _time(value, path)
    elif kind == "struct":
        if isinstance(value, Mapping):
            fields = t.fields
            for k, v in value.items():
                field = fields.get(k)
                if field is not None and v is not None:
                    _times(v, field[0], f"{path}.{k}" if path else k)
    elif kind == "slice":
        if isinstance(value, list | tuple):
            assert t.elem is not None
            for i, v in enumerate(value):
                _times(v, t.elem, f"{path}[{i}]")
    elif kind == "map" and isinstance(value, Mapping):
        assert t.elem is not None
        for k, v in value.items():
            _times(v, t.elem, f"{path}[{k}]")


def _check(value: Any, t: GoType, path: str) -> None:
    """Raise the first wrong type in ``value`` (at ``path``) for ``t``."""
    if value is None:
        return
    kind = t.kind
    if type(value) is JSONNumberText:  # (a number past the float range: a number to Go)
        if kind == "quantity" or kind == "any":
            return
        value = as_go_number(value)
    if kind == "struct":
        if not isinstance(value, Mapping):
            raise wrong_type(path, "a mapping", value)
        fields = t.fields
        for k, v in value.items():
            if v is None:
                continue
            field = fields.get(k)
            if field is not None:
                _check(v, field[0], f"{path}.{k}" if path else k)
        return
    if kind == "slice":
        if not isinstance(value, list | tuple):
            raise wrong_type(path, "a list", value)
        elem = t.elem
        assert elem is not None
        if elem.kind == "string":
            for i, v in enumerate(value):
                if v is not None and (not isinstance(v, str) or type(v) is JSONNumberText):
                    raise wrong_type(f"{path}[{i}]", "a string", as_go_number(v) if type(v) is JSONNumberText else v)
            return
        for i, v in enumerate(value):
            _check(v, elem, f"{path}[{i}]")
        return
    if kind == "map":
        if not isinstance(value, Mapping):
            raise wrong_type(path, "a mapping", value)
        elem = t.elem
        assert elem is not None
        for k, v in value.items():
            _check(v, elem, f"{path}[{k}]")
        return
    if kind == "string":
        if not isinstance(value, str):
            raise wrong_type(path, _WANT[kind], value)
        return
    if kind == "time":
        _time(value, path)
        return
    if kind == "bool":
        if not isinstance(value, bool):
            raise wrong_type(path, "a boolean", value)
        return
    if kind == "int" or kind == "intstr":
        if isinstance(value, int | float) and not isinstance(value, bool):
            err = _int_error(value, t, path)
            if err is not None:
                raise err
            return
        if kind == "intstr" and isinstance(value, str):
            return
        raise wrong_type(path, _WANT[kind], value)
    if kind == "quantity":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise wrong_type(path, _WANT[kind], value)
        return
    # ("any": not checked)


def check_value_types(value: Any, t: GoType, path: str) -> None:
    """``value`` at ``path`` checked against the Go type ``t``
    (:func:`check_pod_types` for a part of a pod)."""
    try:
        _check(value, t, path)
    except InputError:
        _times(value, t, path)  # (a bad time after the first wrong type wins over it)
        raise


def check_pod_types(doc: Mapping[str, Any]) -> None:
    """Refuse the first known field of the pod ``doc`` (a mapping) whose
    value is of the wrong JSON type: ``InputError`` with its path
    (``spec.containers[0].ports: must be a list, got an integer``); a bad
    time anywhere first (``metadata.creationTimestamp: must be an RFC 3339
    time: ...``)."""
    check_value_types(doc, POD_TYPE, "")

