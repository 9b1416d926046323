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
decoder); a field the schema does not know is refused (``strict``, below)
or left to the readers. An
integer field takes a whole number in its Go type's range, written as Go
reads it (``numbers``, below). A JSON number past the float range
(``1e400``, read as its text, a
:class:`~podnuma.golang.jsonnumbers.JSONNumberText`) is a number here, as
it is to Go's decoder, unless it went through YAML: refused in a field of
any type but a quantity (``image: 1e400``: ``must be a string, got a
number``). A quantity must be a string or a number (its text is parsed by
the readers); an object, a list or a boolean is ``ParseQuantity``'s
refusal (``quantities must match the regular expression ...``), which ends
the decoding.

A time (``metav1.Time``: ``creationTimestamp``, ``deletionTimestamp``, a
managed field's ``time``, ``status.startTime``, a condition's
``lastTransitionTime``, a container state's ``startedAt``...) decodes
itself: ``null`` is no time, anything else must be a string (an object,
a list, a boolean or a number is Go's type error for a string field:
``json: cannot unmarshal object into Go struct field
ObjectMeta.metadata.creationTimestamp of type string``) that Go's
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

How a number reached Go's decoder (``numbers``) decides what an integer
field takes, and how it is refused:

* ``"text"``: the number's JSON text, as written (the API server's
  decoding of a JSON body; a JSON scenario's pods, which the kubelet
  oracle decodes from the file's own bytes). ``strconv.ParseInt`` of the
  text: a fraction or an exponent (``80.0``, ``1e2``) is refused, whatever
  the value.
* ``"float"``: the number went through a float64 and ``json.Marshal``
  wrote it again (``sigs.k8s.io/yaml``'s ``YAMLToJSON``, which
  ``kubectl`` and the scenario's YAML go through, JSON text included):
  a whole number below 1e21 is written as an integer (``8080.0``, ``1e2``
  are taken), anything else keeps a fraction or an exponent (``1.5``,
  ``1e+21``) and is refused; a number past the float range (``1e400``) is
  left a string by go-yaml, so it is a string here.
* ``"as-read"`` (the default): what the reader kept -- a
  :class:`~podnuma.golang.jsonnumbers.JSONFloat` (a JSON text the float
  does not give back: ``1e3``, ``80.00``) is read as its text, a plain
  float (YAML's, JSON's ``2.5``) as a float64.

A number an integer or int-or-string field refuses, and a string, a
boolean, an object or a list in an integer field (or anything but a
string or a number in an int-or-string), is refused in Go's words, at
its field path (the API server's decoder and ``encoding/json`` word it
alike)::

    spec.containers[0].ports[0].containerPort: json: cannot unmarshal number 80.0 into Go \
struct field ContainerPort.spec.containers.ports.containerPort of type int32
    spec.priority: json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32

Unknown fields (``strict``: a key that is no field of its struct, at any
depth, the status included; the pod's ``apiVersion`` and ``kind`` are
known) and, in an object read with its repeated keys (a
:class:`~podnuma.api.kubeletconfig.JSONObject`), a field or map key given
twice (``metadata.name: duplicate field "name"``: ``sigs.k8s.io/json``'s
strict decoding, not ``strict_in_order``'s) are refused as the decoder
met them: after every other error
(``strict_in_order`` false: the API server's strict decoding, which
reports them only when the decoding itself succeeded), or saved in the
walk's order like a type mismatch (``strict_in_order``:
``encoding/json``'s ``DisallowUnknownFields``, as the kubelet oracle
decodes a scenario's pods). ``fold``: ``encoding/json``'s match of a key
to a field whatever its case (its exact name first, else the name folded:
:func:`~podnuma.api.pod_schema.fold_name`); the API server's
``sigs.k8s.io/json`` takes the exact name only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from podnuma.api.pod_schema import POD_TYPE, POINTER_FIELDS, GoType, fold_name
from podnuma.api.quantity import ERR_FORMAT_WRONG
from podnuma.errors import InputError
from podnuma.fieldkit import check_known_fields, wrong_type
from podnuma.golang import rfc3339
from podnuma.golang.jsonnumbers import JSONFloat, JSONNumberText, as_go_number
from podnuma.golang.strconv import go_json_format_float
from podnuma.golang.types import go_json_kind

__all__ = ["TYPE_META", "Numbers", "QuantityCheck", "check_pod_types", "check_value_types", "without_unknown_fields"]

#: how a number reached Go's decoder (see the module's docstring)
Numbers = Literal["text", "float", "as-read"]
#: the pod's ``TypeMeta`` fields (not in the schema: the caller reads them),
#: and folded (:func:`~podnuma.api.pod_schema.fold_name`) -> each
_TYPE_META: Final = frozenset({"apiVersion", "kind"})
TYPE_META = _TYPE_META
_TYPE_META_FOLDED: Final = {"APIVERSION": "apiVersion", "KIND": "kind"}

_WANT = {
    "string": "a string", "time": "a string (a time)", "bool": "a boolean", "int": "an integer",
    "intstr": "an integer or a string", "slice": "a list", "map": "a mapping", "struct": "a mapping",
    "quantity": "a quantity (a string or a number)",
}

#: what ``metav1.Time.UnmarshalJSON`` decodes a value into first: a
#: value of another JSON kind is refused as for a string field
_G_TIME_AS_STRING: Final = GoType("string", "string")

_INTEGER_TEXT: Final = re.compile(r"-?[0-9]+")
#: a field path's parts: ``.name`` (or a name at the start), ``[index]``
_PATH_PART: Final = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


def _time_error(text: str) -> str:
    """Why Go's ``time.Parse(time.RFC3339, text)`` refuses ``text`` (Go's
    message), or "" when it takes it."""
    return rfc3339.parse_error(text)


def _time_text(value: Any, path: str, numbers: str) -> str | None:
    """A ``metav1.Time``'s value (not null) checked: a string Go's RFC 3339
    parse takes; ``None`` for a value that is no JSON string (the caller
    words its refusal)."""
    if type(value) is JSONNumberText:
        if numbers != "float":
            return None  # (a number to Go's decoder)
        value = str(value)
    if not isinstance(value, str):
        return None
    why = _time_error(value)
    if why:
        raise InputError(f"not an RFC 3339 time: {why}", path=path)
    return value


def _go_field(root: GoType, root_path: str, path: str) -> tuple[str, str]:
    """The struct and the field ``encoding/json``'s error names for the
    value at ``path`` (below ``root``, the type at ``root_path``): the
    innermost struct's name and the JSON names from the pod down to the
    field, an embedded struct's Go name among them
    (``HTTPGetAction``, ``spec.containers.livenessProbe.ProbeHandler.httpGet.port``)."""
    names = [m.group(1) for m in _PATH_PART.finditer(root_path) if m.group(1)]
    struct = ""
    t: GoType | None = root
    for m in _PATH_PART.finditer(path[len(root_path):] if path.startswith(root_path) else path):
        if t is None:
            break
        key = m.group(1)
        if key is not None and t.kind == "struct":
            field = t.fields.get(key)
            if field is None and key not in t.fields:
                name = t.folded.get(fold_name(key))  # (a key in another case: Go names the field)
                field = t.fields.get(name) if name is not None else None
            struct = t.name.removeprefix("v1.")
            names.append(field[1] if field is not None else key)
            t = field[0] if field is not None else None
        else:
            t = t.elem
    return struct, ".".join(names)


#: ``(value, path)`` -> ``None``: a quantity's value (a string or a
#: number, not null) parsed, its error raised (``Quantity.UnmarshalJSON``)
QuantityCheck = Callable[[Any, str], None]


def _first(item: tuple[str, Any]) -> str:
    return item[0]


def _pairs(value: Mapping[str, Any]) -> list[tuple[str, Any]] | None:
    """The key-value pairs of an object read with its repeated keys (a
    :class:`~podnuma.api.kubeletconfig.JSONObject`'s ``pairs``) when it
    has any, else ``None``."""
    pairs = getattr(value, "pairs", None)
    if isinstance(pairs, list) and len(pairs) != len(value):
        return pairs
    return None


def _seen(value: Mapping[str, Any]) -> set[str] | None:
    """An empty set of keys met for an object with repeated keys, else ``None``."""
    return set() if _pairs(value) is not None else None


class _Walk:
    """One decoding of a value into its Go type, as ``encoding/json`` goes:
    in the document's order (``sort``: in the order of the keys, as Go's
    ``json.Marshal`` writes a map: a pod read into a map and written again,
    as ``kubectl`` and a scenario's pods are), a plain type mismatch
    (string, bool, integer, a struct, list or map of the wrong JSON type)
    saved, the first one only, and the decoding going on past it (not
    into it); an ``UnmarshalJSON`` that fails (a time, an int-or-string, a
    quantity) ends it at once: its error is the answer, whatever was saved
    before it. Once nothing failed at once, the saved error is the answer;
    then the first unknown field of a ``strict`` struct (unless
    ``strict_in_order``: saved like a mismatch, where it is met)."""

    __slots__ = ("fold", "met_unknown", "numbers", "quantity", "refold", "root", "root_path", "saved", "sort",
                 "strict", "strict_in_order", "unknown")

    def __init__(self, quantity: QuantityCheck | None, sort: bool, numbers: str, root: GoType,
                 root_path: str, strict: bool, strict_in_order: bool, fold: bool) -> None:
        self.quantity = quantity
        self.sort = sort
        self.numbers = numbers
        self.root = root
        self.root_path = root_path
        self.strict = strict
        self.strict_in_order = strict_in_order
        self.fold = fold
        #: a key matched a field in another case (``fold``)
        self.refold = False
        #: a key that is no field of its struct was met (strict or not)
        self.met_unknown = False
        self.saved: InputError | None = None
        self.unknown: InputError | None = None

    def mismatch(self, err: InputError) -> None:
        if self.saved is None:
            self.saved = err

    def unknown_field(self, key: str, t: GoType, path: str) -> None:
        """``key`` of the struct ``t`` at ``path`` is none of its fields."""
        if (self.saved if self.strict_in_order else self.unknown) is not None:
            return
        known = [*t.fields, *_TYPE_META] if t is POD_TYPE else list(t.fields)
        try:
            check_known_fields({key: None}, known, path)  # (its error, with its suggestion)
        except InputError as e:
            if self.strict_in_order:
                self.mismatch(e)
            else:
                self.unknown = e

    def items(self, value: Mapping[str, Any]) -> Any:
        got = _pairs(value)
        items = value.items() if got is None else got
        return sorted(items, key=_first) if self.sort else items

    def duplicate(self, seen: set[str] | None, key: str, path: str) -> None:
        """``key``, of an object read with its repeated keys (``seen``: the
        keys met so far; ``None``: none repeated), met again: the API
        server's strict decoding refuses it (``sigs.k8s.io/json``'s
        ``duplicate field``), after every other error, like an unknown
        field, the first of them in the walk's order."""
        if seen is None:
            return
        if key not in seen:
            seen.add(key)
        elif self.unknown is None and self.strict and not self.strict_in_order:
            text = key.replace("\\", "\\\\").replace('"', '\\"')
            self.unknown = InputError(f'duplicate field "{text}"', path=path)

    def number_text(self, value: Any) -> str | None:
        """The text Go's decoder reads for the number ``value``, a float
        (see :data:`Numbers`); ``None`` for a float that is no JSON number
        (infinite, not a number: YAML's ``.inf``). (``Any``: compiled, a
        ``float`` parameter would be a plain double, its text lost.)"""
        if type(value) is JSONFloat and self.numbers != "float":
            return value.text
        if value - value != 0.0:  # (infinite or NaN)
            return None
        if self.numbers == "text":
            return repr(value)  # (a plain float from JSON text: its repr is the text)
        return go_json_format_float(value)

    def go_number_error(self, text: str, t: GoType, path: str) -> InputError:
        """``encoding/json``'s refusal of the number ``text`` for the
        integer (or int-or-string) field at ``path``."""
        return self.go_type_error(f"number {text}", t, path)

    def go_type_error(self, what: str, t: GoType, path: str) -> InputError:
        """``encoding/json``'s refusal of a JSON value (``what``: ``string``,
        ``bool``, ``object``, ``array``, ``number TEXT``) for the integer
        (or int-or-string) field at ``path``: ``json: cannot unmarshal
        string into Go struct field ContainerPort.spec.containers.ports.containerPort
        of type int32`` (the API server's decoding and the scenario's alike)."""
        struct, names = _go_field(self.root, self.root_path, path)
        return InputError(f"json: cannot unmarshal {what} into Go struct field {struct}.{names} "
                          f"of type {t.name}", path=path)

    def int_error(self, value: Any, t: GoType, path: str) -> InputError | None:
        """``None`` when Go's decoder takes the number ``value`` (an int or
        a float) for the integer type ``t``."""
        if isinstance(value, int):
            n = int(value)
            text = str(n)
        else:
            # a float; not narrowed to one (compiled, a ``float`` is a plain
            # double: a JSONFloat's text would be lost on the way)
            number = self.number_text(value)
            if number is None:
                return wrong_type(path, "an integer", value)
            if not _INTEGER_TEXT.fullmatch(number) or len(number) > 40:
                return self.go_number_error(number, t, path)
            n = int(number)
            text = number
        limit = 1 << (t.bits - 1)
        if -limit <= n < limit:
            return None
        return self.go_number_error(text, t, path)

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
            # (through YAML, go-yaml left it a string)
            value = str(value) if self.numbers == "float" else as_go_number(value)
        if kind == "struct":
            if not isinstance(value, Mapping):
                self.mismatch(wrong_type(path, "a mapping", value))
                return
            fields = t.fields
            seen = _seen(value)
            for k, v in self.items(value):
                field = fields.get(k)
                if field is not None or (t is POD_TYPE and k in _TYPE_META):
                    self.duplicate(seen, k, f"{path}.{k}" if path else k)
                if field is None:
                    if t is POD_TYPE and k in _TYPE_META:
                        continue  # (TypeMeta's: the caller reads them)
                    if self.fold:  # (encoding/json: a field in another case)
                        folded = fold_name(k)
                        name = t.folded.get(folded)
                        if name is not None:
                            field = fields[name]
                            self.refold = True
                        elif t is POD_TYPE and folded in _TYPE_META_FOLDED:
                            self.refold = True
                            continue
                    if field is None:
                        self.met_unknown = True
                        if self.strict:
                            self.unknown_field(k, t, path)
                        continue
                if v is None:
                    continue
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
                        if v is None or (type(v) is JSONNumberText and self.numbers == "float"):
                            continue
                        if not isinstance(v, str) or type(v) is JSONNumberText:
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
            seen = _seen(value)
            for k, v in self.items(value):
                self.duplicate(seen, k, f"{path}[{k}]")
                self.go(v, elem, f"{path}[{k}]")
            return
        if kind == "string":
            if not isinstance(value, str):
                self.mismatch(wrong_type(path, _WANT[kind], value))
            return
        if kind == "time":
            if _time_text(value, path, self.numbers) is None:
                # (Time.UnmarshalJSON decodes the value into a string: Go's
                # type error, its field named by the outer decoding, ends it)
                what = go_json_kind(value)
                if not what:
                    raise wrong_type(path, _WANT["time"], value)
                raise self.go_type_error(what, _G_TIME_AS_STRING, path)
            return
        if kind == "bool":
            if not isinstance(value, bool):
                self.mismatch(wrong_type(path, "a boolean", value))
            return
        if kind == "int" or kind == "intstr":
            if isinstance(value, int | float) and not isinstance(value, bool):
                err = self.int_error(value, t, path)
            elif kind == "intstr" and isinstance(value, str):
                err = None
            else:
                what = go_json_kind(value)  # (not a number here)
                err = (self.go_type_error(what, t, path) if what
                       else wrong_type(path, _WANT[kind], value))
            if err is not None:
                if kind == "intstr":
                    raise err  # (IntOrString.UnmarshalJSON's error)
                self.mismatch(err)
            return
        if kind == "quantity":
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                if go_json_kind(value):
                    # (Quantity.UnmarshalJSON parses the value's JSON text,
                    # which no object, array or boolean parses as)
                    raise InputError(ERR_FORMAT_WRONG, path=path)
                raise wrong_type(path, _WANT[kind], value)
            if self.quantity is not None:
                self.quantity(value, path)
            return
        # ("any": not checked)


def check_value_types(
    value: Any, t: GoType, path: str, *, quantity: QuantityCheck | None = None, sort_keys: bool = False,
    numbers: Numbers = "as-read", strict: bool = False, strict_in_order: bool = False, fold: bool = False,
    drop_unknown: bool = False,
) -> Any:
    """``value`` at ``path`` checked against the Go type ``t``
    (:func:`check_pod_types` for a part of a pod); ``value`` as decoded
    (``drop_unknown``, not ``strict``: without the keys that are no field
    of their struct, :func:`without_unknown_fields`)."""
    walk = _Walk(quantity, sort_keys, numbers, t, path, strict, strict_in_order, fold)
    walk.go(value, t, path)
    if walk.saved is not None:
        raise walk.saved
    if walk.unknown is not None:
        raise walk.unknown
    if walk.refold:
        value = _decoded(None, value, t, sort_keys)
    if drop_unknown and walk.met_unknown:
        value = without_unknown_fields(value, t)
    return value


def without_unknown_fields(value: Any, t: GoType = POD_TYPE) -> Any:
    """``value`` (of the Go type ``t``; by default a pod, whose
    ``apiVersion`` and ``kind`` are kept) without the keys that are no
    field of their struct, at any depth, as client-go's lenient decoding
    drops them (a pod a newer API server served, with fields v1.37.2 lacks).
    A key is matched by its exact name. Copied only along the paths where
    a key is dropped: ``value`` itself when there is none."""
    if value is None:
        return value
    kind = t.kind
    if kind == "struct":
        if not isinstance(value, Mapping):
            return value
        out: dict[str, Any] | None = None
        for k, v in value.items():
            field = t.fields.get(k)
            if field is None:
                if t is POD_TYPE and k in _TYPE_META:
                    continue
                if out is None:
                    out = {key: val for key, val in value.items()}
                del out[k]
                continue
            new = without_unknown_fields(v, field[0])
            if new is not v:
                if out is None:
                    out = {key: val for key, val in value.items()}
                out[k] = new
        return value if out is None else out
    if kind == "slice" or kind == "map":
        elem = t.elem
        assert elem is not None
        if elem.kind not in ("struct", "slice", "map"):
            return value
        if kind == "slice":
            if not isinstance(value, list | tuple):
                return value
            items: list[Any] | None = None
            for i, v in enumerate(value):
                new = without_unknown_fields(v, elem)
                if new is not v:
                    if items is None:
                        items = list(value)
                    items[i] = new
            return value if items is None else items
        if not isinstance(value, Mapping):
            return value
        entries: dict[str, Any] | None = None
        for k, v in value.items():
            new = without_unknown_fields(v, elem)
            if new is not v:
                if entries is None:
                    entries = {key: val for key, val in value.items()}
                entries[k] = new
        return value if entries is None else entries
    return value


def check_pod_types(
    doc: Mapping[str, Any], *, quantity: QuantityCheck | None = None, sort_keys: bool = False,
    numbers: Numbers = "as-read", strict: bool = False, strict_in_order: bool = False, fold: bool = False,
    drop_unknown: bool = False,
) -> Any:
    """Refuse the pod ``doc`` (a mapping) as Go's decoding into the v1 Pod
    refuses it: the first time, int-or-string or quantity (parsed by
    ``quantity``, when given) that fails, in the document's order (the
    keys' order with ``sort_keys``), else the first known field whose
    value is of the wrong JSON type (or, ``strict_in_order``, an unknown
    field, whichever comes first), else (``strict``) the first unknown
    field, at any depth: ``InputError`` with its path
    (``spec.containers[0].ports: must be a list, got an integer``,
    ``metadata.creationTimestamp: not an RFC 3339 time: ...``). How the
    numbers reached the decoder: ``numbers`` (the module's docstring).
    ``fold``: a key matches a field in any case (``encoding/json``; the
    API server's decoder, ``sigs.k8s.io/json``, matches the exact name
    only). Returns the pod as decoded: ``doc`` itself, or (``fold``, a key
    in another case met) a copy with each such key under its field's name,
    a field given more than once decoded in turn into what the earlier
    one left (:func:`_decoded`); ``drop_unknown`` (not ``strict``): a copy
    without its unknown fields, at any depth (:func:`without_unknown_fields`)."""
    return check_value_types(doc, POD_TYPE, "", quantity=quantity, sort_keys=sort_keys, numbers=numbers,
                             strict=strict, strict_in_order=strict_in_order, fold=fold,
                             drop_unknown=drop_unknown)


#: the kinds a ``null`` sets back to their zero value (nil; a time's and a
#: quantity's ``UnmarshalJSON`` reset them; an int-or-string's is apart:
#: :meth:`_Decoding.null_field`)
_NULL_RESETS: Final = frozenset({"slice", "map", "time", "quantity", "any"})


def _pointer(t: GoType, name: str, go_name: str) -> bool:
    """The field ``name`` of the struct ``t`` is a pointer (``go_name``:
    its name in the decoder's error, an embedded struct's first)."""
    return (go_name if "." in go_name else f"{t.name.removeprefix('v1.')}.{name}") in POINTER_FIELDS


def _decoded(old: Any, value: Any, t: GoType, sort: bool) -> Any:
    """``value`` (not null; of its type: checked) decoded by ``encoding/json``
    into what ``old`` holds (``None``: nothing), each key under its field's
    name (:class:`_Decoding`)."""
    return _Decoding(sort).decode(old, value, t)


class _Decoding:
    """One document decoded by ``encoding/json`` with keys matched in any
    case, so a field given in several spellings is decoded in turn into
    what the earlier ones left: a struct's fields into the earlier ones (a
    ``null`` sets a pointer, slice, map, time or quantity to nil, sets an
    int-or-string to the integer it last held, 0 if none --
    ``IntOrString.UnmarshalJSON`` takes ``null`` as an integer it does not
    set -- and leaves any other field as it was); a map's entries added to
    the earlier map's; a list's elements into the earlier list's backing
    array, which keeps its capacity: a list shorter than the earlier one
    truncates it, and a later longer one decodes its element ``i`` into
    what was left at ``i`` (a struct's fields merged), past that into a
    zero value; an empty list or ``null`` drops the array; anything else
    replaced. What this makes (dicts and lists) it changes in place: each
    spelling costs its own size, whatever came before.

    Besides the decoded value, Go keeps what it does not show: a list's
    backing array past its length and an int-or-string's integer while it
    holds a string. They are kept here, by the identity of the decoded
    list or struct (each kept alive with them, so an identity is never
    reused)."""

    __slots__ = ("backing", "ints", "owned", "sort")

    def __init__(self, sort: bool) -> None:
        self.sort = sort
        #: id -> a dict this decoding made (its own to change)
        self.owned: dict[int, Any] = {}
        #: id of a decoded list -> (the list, its backing array)
        self.backing: dict[int, tuple[list[Any], list[Any]]] = {}
        #: id of a decoded struct -> (the struct, its int-or-string fields' integers)
        self.ints: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}

    def own(self, d: dict[str, Any]) -> dict[str, Any]:
        self.owned[id(d)] = d
        return d

    def null_field(self, out: dict[str, Any], name: str, ft: GoType, pointer: bool) -> None:
        """A ``null`` decoded into the field ``name`` of the struct ``out``."""
        kind = ft.kind
        if pointer or kind in _NULL_RESETS:
            out[name] = None
            if kind == "intstr":
                self.forget_int(out, name)
        elif kind == "intstr" and out.get(name) is not None:
            held = self.ints.get(id(out))
            number = held[1].get(name) if held is not None else None
            out[name] = 0 if number is None else number
        elif name not in out:
            out[name] = None

    def forget_int(self, out: dict[str, Any], name: str) -> None:
        held = self.ints.get(id(out))
        if held is not None:
            held[1].pop(name, None)

    def keep_int(self, out: dict[str, Any], name: str, number: Any) -> None:
        held = self.ints.get(id(out))
        if held is None:
            held = (out, {})
            self.ints[id(out)] = held
        held[1][name] = number

    def decode(self, old: Any, value: Any, t: GoType) -> Any:
        kind = t.kind
        if kind == "struct" and isinstance(value, Mapping):
            return self.struct(old, value, t)
        if kind == "slice" and isinstance(value, list | tuple):
            return self.slice(old, value, t)
        if kind == "map" and isinstance(value, Mapping):
            if isinstance(old, dict) and id(old) in self.owned:
                old.update(value)
                return old
            entries = self.own(dict(old) if isinstance(old, Mapping) else {})
            entries.update(value)
            return entries
        return value

    def struct(self, old: Any, value: Mapping[str, Any], t: GoType) -> dict[str, Any]:
        if isinstance(old, dict) and id(old) in self.owned:
            out: dict[str, Any] = old
        else:
            out = self.own(dict(old) if isinstance(old, Mapping) else {})
        for k, v in (sorted(value.items(), key=_first) if self.sort else value.items()):
            field = t.fields.get(k)
            name = k
            if field is None:
                folded = fold_name(k)
                meta = _TYPE_META_FOLDED.get(folded) if t is POD_TYPE else None
                if meta is not None:  # (apiVersion, kind: strings)
                    if v is not None or meta not in out:
                        out[meta] = v
                    continue
                known = t.folded.get(folded)
                if known is None:  # (unknown: not strict)
                    out[k] = v
                    continue
                name, field = known, t.fields[known]
            ft = field[0]
            if v is None:
                self.null_field(out, name, ft, _pointer(t, name, field[1]))
                continue
            if ft.kind == "intstr" and not isinstance(v, str | bool):
                self.keep_int(out, name, v)  # (a string leaves the integer as it was)
            out[name] = self.decode(out.get(name), v, ft)
        return out

    def slice(self, old: Any, value: list[Any] | tuple[Any, ...], t: GoType) -> list[Any]:
        elem = t.elem
        assert elem is not None
        if not value:
            return []  # (a new empty slice: no backing array)
        kept = self.backing.get(id(old)) if isinstance(old, list) else None
        if kept is not None and kept[0] is old:
            back = kept[1]
        else:
            back = list(old) if isinstance(old, list | tuple) else []
        resets = elem.kind in _NULL_RESETS
        for i, v in enumerate(value):
            was = back[i] if i < len(back) else None
            now = (None if resets else was) if v is None else self.decode(was, v, elem)
            if i < len(back):
                back[i] = now
            else:
                back.append(now)
        items = back[:len(value)]
        self.backing[id(items)] = (items, back)
        return items
