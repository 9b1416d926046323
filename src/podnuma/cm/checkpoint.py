"""Shared checkpoint machinery of the kubelet's resource managers.

Mirrors the pieces of upstream the CPU and memory manager checkpoints rest on:

- ``pkg/kubelet/checkpointmanager/checksum/checksum.go`` and
  ``k8s.io/apiserver/pkg/util/hash`` / ``k8s.io/utils/dump`` (``ForHash``):
  a checksum is FNV-32a over go-spew's ``%#v`` rendering of the checkpoint
  struct, with the printer config Indent " ", SortKeys, DisableMethods,
  SpewKeys, DisablePointerAddresses, DisableCapacities.
- ``pkg/kubelet/checkpointmanager/errors/errors.go``: the error texts.
- ``encoding/json`` (Marshal / Unmarshal) and ``strconv.Quote``: the parts the
  checkpoints touch, reproduced closely enough that the kubelet's bytes and
  error texts come out the same.

A checkpoint struct is described with a tiny Go type model (``GoStruct``,
``GoMap``, ``GoSlice``, ``GoPtr``, ``GoBasic``).  Values are plain Python:
``str``/``int``/``bool`` for basic kinds, a ``Mapping`` (or ``None`` for a nil
map) for maps, a ``Sequence`` (or ``None`` for nil) for slices, the pointee
(or ``None``) for pointers and a ``Mapping`` of field name to value for
structs (a missing field is the zero value).

Everything here is pure; reading and writing the files is
:mod:`podnuma.fileio` (the edge).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from podnuma.errors import KubeletStartupError
from podnuma.gostrconv import go_quote, quote_rune

__all__ = [
    "CORRUPT_CHECKPOINT",
    "CheckpointError",
    "GoBasic",
    "GoField",
    "GoJSONError",
    "GoMap",
    "GoPtr",
    "GoSlice",
    "GoStruct",
    "GoType",
    "JSONObject",
    "JSONNumber",
    "GO_BOOL",
    "GO_INT",
    "GO_STRING",
    "GO_UINT64",
    "CHECKSUM",
    "dump_checksum",
    "fnv32a",
    "go_json_check",
    "go_json_marshal",
    "go_json_parse",
    "go_json_quote",
    "go_json_unmarshal",
    "go_quote",
    "object_checksum",
    "spew_sdump",
    "string_checksum",
    "to_json_value",
]

CORRUPT_CHECKPOINT: Final = "checkpoint is corrupted"


class CheckpointError(KubeletStartupError):
    """A checkpoint the kubelet would refuse to restore.

    The message is the kubelet's own error text (``checkpoint is corrupted``,
    ``could not load v4 checkpoint: ...``, ``unexpected end of JSON input``,
    ``could not parse default CPU set ...``).
    """


# ---------------------------------------------------------------------------
# FNV-32a
# ---------------------------------------------------------------------------

_FNV32_OFFSET: Final = 0x811C9DC5
_FNV32_PRIME: Final = 0x01000193


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go's ``hash/fnv.New32a``)."""
    h = _FNV32_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV32_PRIME) & 0xFFFFFFFF
    return h


# ---------------------------------------------------------------------------
# Go type model
# ---------------------------------------------------------------------------

_INT_KINDS: Final = frozenset({"int", "int8", "int16", "int32", "int64"})
_UINT_KINDS: Final = frozenset({"uint", "uint8", "uint16", "uint32", "uint64"})
_INT_BITS: Final = {
    "int": 64, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
}


class GoType:
    """A Go type as ``reflect`` sees it: a kind plus its ``Type.String()``."""

    @property
    def type_string(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class GoBasic(GoType):
    """bool, string or an integer kind; ``name`` is the (possibly named) type."""

    kind: str
    name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in _INT_KINDS | _UINT_KINDS | {"bool", "string"}:
            raise ValueError(f"unsupported basic kind {self.kind!r}")

    @property
    def type_string(self) -> str:
        return self.name or self.kind

    def named(self, name: str) -> GoBasic:
        """A defined type with this underlying kind (``type Checksum uint64``)."""
        return GoBasic(self.kind, name)


@dataclass(frozen=True)
class GoMap(GoType):
    key: GoType
    elem: GoType
    name: str = ""

    @property
    def type_string(self) -> str:
        return self.name or f"map[{self.key.type_string}]{self.elem.type_string}"


@dataclass(frozen=True)
class GoSlice(GoType):
    elem: GoType
    name: str = ""

    @property
    def type_string(self) -> str:
        return self.name or f"[]{self.elem.type_string}"


@dataclass(frozen=True)
class GoPtr(GoType):
    elem: GoType

    @property
    def type_string(self) -> str:
        return f"*{self.elem.type_string}"


@dataclass(frozen=True)
class GoField:
    """A struct field: Go name, type, and its ``json`` tag.

    ``json`` is the key (defaults to the Go name; ``"-"`` skips the field).
    """

    name: str
    type: GoType
    json: str | None = None
    omitempty: bool = False

    @property
    def json_name(self) -> str:
        return self.name if self.json is None else self.json


@dataclass(frozen=True)
class GoStruct(GoType):
    """A struct type.  ``name`` is ``pkg.Name`` (``"struct {}"`` when empty and
    unnamed).  ``unmarshal_json``, when set, plays the type's ``UnmarshalJSON``
    method: it gets the raw JSON value and returns the Go value or raises
    :class:`GoJSONError` (which aborts the whole decode, as in Go)."""

    name: str
    fields: tuple[GoField, ...] = ()
    unmarshal_json: Callable[[Any], Any] | None = field(default=None, compare=False)

    @property
    def type_string(self) -> str:
        return self.name

    @property
    def short_name(self) -> str:
        """``reflect.Type.Name()``: the name without its package."""
        return self.name.rsplit(".", 1)[-1]


GO_BOOL: Final = GoBasic("bool")
GO_INT: Final = GoBasic("int")
GO_UINT64: Final = GoBasic("uint64")
GO_STRING: Final = GoBasic("string")
#: ``checksum.Checksum`` (``type Checksum uint64``)
CHECKSUM: Final = GO_UINT64.named("checksum.Checksum")


def _zero(typ: GoType) -> Any:
    if isinstance(typ, GoBasic):
        if typ.kind == "string":
            return ""
        if typ.kind == "bool":
            return False
        return 0
    if isinstance(typ, GoStruct):
        return {}
    return None  # map, slice, pointer: nil


# ---------------------------------------------------------------------------
# go-spew %#v
# ---------------------------------------------------------------------------


def spew_sdump(value: Any, typ: GoType) -> str:
    """go-spew's ``Sprintf("%#v", v)`` with the kubelet's hash printer config.

    Pass the value as Go would see it: checkpoints hash a *pointer* to the
    struct, so ``typ`` is normally ``GoPtr(GoStruct(...))``.
    """
    out: list[str] = []
    _spew(value, typ, False, out)
    return "".join(out)


def _spew(value: Any, typ: GoType, ignore_type: bool, out: list[str]) -> None:
    # Types are printed as "(T)" unless the caller (map key/value, slice
    # element, pointee) asked to skip them, as spew's formatter does.
    if isinstance(typ, GoPtr):
        _spew_ptr(value, typ, ignore_type, out)
        return
    if not ignore_type:
        out.append(f"({typ.type_string})")
    if isinstance(typ, GoBasic):
        if typ.kind == "string":
            out.append(str(value))
        elif typ.kind == "bool":
            out.append("true" if value else "false")
        else:
            out.append(str(int(value)))
    elif isinstance(typ, GoSlice):
        if value is None:
            out.append("<nil>")
            return
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(" ")
            _spew(item, typ.elem, True, out)
        out.append("]")
    elif isinstance(typ, GoMap):
        if value is None:
            out.append("<nil>")
            return
        out.append("map[")
        for i, key in enumerate(_sorted_keys(value, typ.key)):
            if i:
                out.append(" ")
            _spew(key, typ.key, True, out)
            out.append(":")
            _spew(value[key], typ.elem, True, out)
        out.append("]")
    elif isinstance(typ, GoStruct):
        fields = value or {}
        out.append("{")
        for i, f in enumerate(typ.fields):
            if i:
                out.append(" ")
            out.append(f.name)
            out.append(":")
            _spew(fields.get(f.name, _zero(f.type)), f.type, False, out)
        out.append("}")
    else:  # pragma: no cover - exhaustive over the model
        raise TypeError(f"unsupported Go type {typ!r}")


def _spew_ptr(value: Any, typ: GoPtr, ignore_type: bool, out: list[str]) -> None:
    if value is None and ignore_type:
        out.append("<nil>")
        return
    # follow the pointer chain, counting indirections
    indirects = 0
    target: GoType = typ
    nil_found = False
    while isinstance(target, GoPtr):
        if value is None:
            nil_found = True
            break
        # a pointer to a pointer is modelled by the same Python value
        indirects += 1
        target = target.elem
    if not ignore_type:
        out.append("(" + "*" * indirects + target.type_string + ")")
    else:
        out.append("<" + "*" * indirects + ">")
    if nil_found:
        out.append("<nil>")
        return
    _spew(value, target, True, out)


def _sorted_keys(mapping: Mapping[Any, Any], key_type: GoType) -> list[Any]:
    if not isinstance(key_type, GoBasic):
        raise TypeError("only basic map key kinds are supported")
    if key_type.kind == "string":
        # Go compares strings bytewise; UTF-8 order equals code point order,
        # except that Python strings may hold surrogates: encode to be safe.
        return sorted(mapping, key=lambda k: str(k).encode("utf-8", "surrogatepass"))
    return sorted(mapping)


def dump_checksum(dump: str) -> int:
    """FNV-32a over a dump (``fmt.Fprintf(hash, "%v", dump)``)."""
    return fnv32a(dump.encode("utf-8", "surrogatepass"))


def object_checksum(value: Any, typ: GoType) -> int:
    """``checksum.New(v)``: FNV-32a over the spew dump of ``v``."""
    return dump_checksum(spew_sdump(value, typ))


def string_checksum(text: str) -> int:
    """``checksum.New(s)`` for a Go string: FNV-32a of ``"(string)" + s``."""
    return dump_checksum("(string)" + text)


def _quote_char(byte: int) -> str:
    # encoding/json's quoteChar: a byte shown as a rune in single quotes
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    return "'" + quote_rune(byte, '"') + "'"


# ---------------------------------------------------------------------------
# encoding/json: syntax check with Go's messages
# ---------------------------------------------------------------------------


class GoJSONError(Exception):
    """An ``encoding/json`` error, with Go's message."""


_EOF_MESSAGE: Final = "unexpected end of JSON input"
_WS: Final = b" \t\r\n"
_SPACE_REJECTING: Final = (
    "in \\u hexadecimal",
    "in string escape code",
    "in literal",
    "in numeric literal",
    "after decimal point",
    "in exponent",
)


class _Scanner:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def fail(self, context: str) -> GoJSONError:
        if self.pos >= len(self.data):
            # at the end Go's scanner steps a virtual space: states that
            # reject a space report it, the others report the end
            if context.startswith(_SPACE_REJECTING):
                return GoJSONError(f"invalid character ' ' {context}")
            return GoJSONError(_EOF_MESSAGE)
        return GoJSONError(f"invalid character {_quote_char(self.data[self.pos])} {context}")

    def peek(self) -> int:
        return self.data[self.pos] if self.pos < len(self.data) else -1

    def skip_ws(self) -> None:
        data, n = self.data, len(self.data)
        while self.pos < n and data[self.pos] in _WS:
            self.pos += 1

    def value(self) -> None:
        c = self.peek()
        if c == 0x7B:  # {
            self.obj()
        elif c == 0x5B:  # [
            self.arr()
        elif c == 0x22:  # "
            self.string()
        elif c == 0x2D or 0x30 <= c <= 0x39:
            self.number()
        elif c == 0x74:
            self.literal(b"true")
        elif c == 0x66:
            self.literal(b"false")
        elif c == 0x6E:
            self.literal(b"null")
        else:
            raise self.fail("looking for beginning of value")

    def obj(self) -> None:
        self.pos += 1
        self.skip_ws()
        if self.peek() == 0x7D:
            self.pos += 1
            return
        while True:
            if self.peek() != 0x22:
                raise self.fail("looking for beginning of object key string")
            self.string()
            self.skip_ws()
            if self.peek() != 0x3A:
                raise self.fail("after object key")
            self.pos += 1
            self.skip_ws()
            self.value()
            self.skip_ws()
            c = self.peek()
            if c == 0x2C:
                self.pos += 1
                self.skip_ws()
                continue
            if c == 0x7D:
                self.pos += 1
                return
            raise self.fail("after object key:value pair")

    def arr(self) -> None:
        self.pos += 1
        self.skip_ws()
        if self.peek() == 0x5D:
            self.pos += 1
            return
        while True:
            self.value()
            self.skip_ws()
            c = self.peek()
            if c == 0x2C:
                self.pos += 1
                self.skip_ws()
                continue
            if c == 0x5D:
                self.pos += 1
                return
            raise self.fail("after array element")

    def string(self) -> None:
        self.pos += 1
        data, n = self.data, len(self.data)
        while True:
            if self.pos >= n:
                raise GoJSONError(_EOF_MESSAGE)
            c = data[self.pos]
            if c == 0x22:
                self.pos += 1
                return
            if c == 0x5C:
                self.pos += 1
                e = self.peek()
                if e == 0x75:  # u
                    self.pos += 1
                    for _ in range(4):
                        h = self.peek()
                        if not (0x30 <= h <= 0x39 or 0x41 <= h <= 0x46 or 0x61 <= h <= 0x66):
                            raise self.fail("in \\u hexadecimal character escape")
                        self.pos += 1
                    continue
                if e != -1 and e in b'"\\/bfnrt':
                    self.pos += 1
                    continue
                raise self.fail("in string escape code")
            if c < 0x20:
                raise self.fail("in string literal")
            self.pos += 1

    def digits(self) -> None:
        while 0x30 <= self.peek() <= 0x39:
            self.pos += 1

    def number(self) -> None:
        if self.peek() == 0x2D:
            self.pos += 1
        c = self.peek()
        if c == 0x30:
            self.pos += 1
        elif 0x31 <= c <= 0x39:
            self.digits()
        else:
            raise self.fail("in numeric literal")
        if self.peek() == 0x2E:
            self.pos += 1
            if not 0x30 <= self.peek() <= 0x39:
                raise self.fail("after decimal point in numeric literal")
            self.digits()
        if self.peek() in (0x65, 0x45):
            self.pos += 1
            if self.peek() in (0x2B, 0x2D):
                self.pos += 1
            if not 0x30 <= self.peek() <= 0x39:
                raise self.fail("in exponent of numeric literal")
            self.digits()

    def literal(self, word: bytes) -> None:
        self.pos += 1
        for expected in word[1:]:
            if self.peek() != expected:
                raise self.fail(f"in literal {word.decode()} (expecting {_quote_char(expected)})")
            self.pos += 1


def go_json_check(data: bytes) -> None:
    """``encoding/json``'s validity check: raises :class:`GoJSONError` with
    Go's message (``unexpected end of JSON input``, ``invalid character 'x'
    looking for beginning of value``, ...)."""
    sc = _Scanner(data)
    sc.skip_ws()
    sc.value()
    sc.skip_ws()
    if sc.pos < len(data):
        raise sc.fail("after top-level value")


class JSONObject(list[tuple[str, Any]]):
    """A JSON object as its (key, value) pairs in document order, duplicates
    kept (Go decodes them in order, the last one winning per field)."""


class JSONNumber(str):
    """A JSON number, kept as its literal text (Go parses it per target type)."""


_SURROGATES: Final = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    # a lone \uD800-style escape decodes to U+FFFD in Go
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def _pairs(pairs: list[tuple[str, Any]]) -> JSONObject:
    return JSONObject((_clean(k), v) for k, v in pairs)


def _decode_strings(value: Any) -> Any:
    if isinstance(value, str) and not isinstance(value, JSONNumber):
        return _clean(value)
    if isinstance(value, list) and not isinstance(value, JSONObject):
        return [_decode_strings(v) for v in value]
    if isinstance(value, JSONObject):
        return JSONObject((k, _decode_strings(v)) for k, v in value)
    return value


def go_json_parse(blob: bytes | str) -> Any:
    """Check ``blob`` as Go does, then parse it into JSON values
    (:class:`JSONObject`, ``list``, ``str``, :class:`JSONNumber`, ``bool``,
    ``None``).  Invalid UTF-8 inside strings becomes U+FFFD, as in Go."""
    data = blob.encode("utf-8", "surrogatepass") if isinstance(blob, str) else bytes(blob)
    go_json_check(data)
    text = data.decode("utf-8", "replace")
    parsed = json.loads(
        text,
        object_pairs_hook=_pairs,
        parse_int=JSONNumber,
        parse_float=JSONNumber,
    )
    return _decode_strings(parsed)


def to_json_value(value: Any) -> Any:
    """Turn an already-decoded document (a ``dict`` from YAML or JSON) into the
    JSON values :func:`go_json_unmarshal` reads."""
    if isinstance(value, JSONObject | JSONNumber):
        return value
    if isinstance(value, Mapping):
        return JSONObject((str(k), to_json_value(v)) for k, v in value.items())
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return JSONNumber(str(value))
    if isinstance(value, float):
        return JSONNumber(repr(value) if value != int(value) else str(int(value)))
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, Sequence):
        return [to_json_value(v) for v in value]
    raise GoJSONError(f"json: unsupported value of type {type(value).__name__}")


# ---------------------------------------------------------------------------
# encoding/json: Unmarshal into a described Go type
# ---------------------------------------------------------------------------


class _Decoder:
    """Go's decodeState, for the kinds the model knows.

    Type mismatches are remembered (the first one is returned at the end) and
    decoding goes on; an error from a custom ``UnmarshalJSON`` aborts at once.
    """

    def __init__(self) -> None:
        self.saved: str | None = None
        self.struct_name: str | None = None
        self.field_stack: list[str] = []

    def type_error(self, what: str, typ: GoType) -> None:
        if self.saved is not None:
            return
        if self.struct_name is not None or self.field_stack:
            where = f"Go struct field {self.struct_name or ''}.{'.'.join(self.field_stack)}"
        else:
            where = "Go value"
        self.saved = f"json: cannot unmarshal {what} into {where} of type {typ.type_string}"

    def decode(self, jv: Any, typ: GoType, current: Any) -> Any:
        """Decode ``jv`` into ``current`` (a value of ``typ``) and return the
        result.  Struct dicts and maps are filled in place, as Go does, so an
        abort leaves what was decoded so far visible to the caller."""
        if isinstance(typ, GoStruct) and typ.unmarshal_json is not None:
            try:
                return typ.unmarshal_json(jv)
            except GoJSONError as err:
                raise _Abort(self._with_context(str(err))) from None
        if jv is None:
            # null: nil for maps, slices and pointers, no-op otherwise
            return None if isinstance(typ, GoMap | GoSlice | GoPtr) else current
        if isinstance(typ, GoPtr):
            return self.decode(jv, typ.elem, current if current is not None else _zero(typ.elem))
        if isinstance(jv, JSONObject):
            if isinstance(typ, GoMap):
                target = current if current is not None else {}
                self.decode_map(jv, typ, target)
                return target
            if isinstance(typ, GoStruct):
                target = current if current is not None else {}
                self.decode_struct(jv, typ, target)
                return target
            self.type_error("object", typ)
            return current
        if isinstance(jv, list):
            if isinstance(typ, GoSlice):
                return [self.decode(item, typ.elem, _zero(typ.elem)) for item in jv]
            self.type_error("array", typ)
            return current
        if isinstance(jv, bool):
            if isinstance(typ, GoBasic) and typ.kind == "bool":
                return jv
            self.type_error("bool", typ)
            return current
        if isinstance(jv, JSONNumber):
            return self.decode_number(jv, typ, current)
        if isinstance(jv, str):
            if isinstance(typ, GoBasic) and typ.kind == "string":
                return jv
            self.type_error("string", typ)
            return current
        raise TypeError(f"not a JSON value: {jv!r}")  # pragma: no cover

    def decode_number(self, jv: JSONNumber, typ: GoType, current: Any) -> Any:
        if not isinstance(typ, GoBasic) or typ.kind in ("string", "bool"):
            self.type_error("number", typ)
            return current
        bits = _INT_BITS[typ.kind]
        signed = typ.kind in _INT_KINDS
        n = _parse_go_int(jv, signed)
        if n is None or not (
            (-(1 << (bits - 1)) <= n < (1 << (bits - 1))) if signed else (0 <= n < (1 << bits))
        ):
            self.type_error(f"number {jv}", typ)
            return current
        return n

    def decode_map(self, jv: JSONObject, typ: GoMap, target: dict[Any, Any]) -> None:
        key_type = typ.key
        for key, item in jv:
            k: Any
            if isinstance(key_type, GoBasic) and key_type.kind == "string":
                k = key
            elif isinstance(key_type, GoBasic) and key_type.kind in _INT_KINDS | _UINT_KINDS:
                n = _parse_go_int(JSONNumber(key), key_type.kind in _INT_KINDS)
                if n is None:
                    self.type_error(f"number {key}", key_type)
                    continue
                k = n
            else:  # pragma: no cover - not used by checkpoints
                raise TypeError("unsupported map key type")
            # a map element is decoded into a fresh value, stored on success
            target[k] = self.decode(item, typ.elem, _zero(typ.elem))

    def decode_struct(self, jv: JSONObject, typ: GoStruct, target: dict[str, Any]) -> None:
        saved_struct, saved_depth = self.struct_name, len(self.field_stack)
        for key, item in jv:
            f = _find_field(typ, key)
            if f is None:
                continue  # unknown fields are ignored
            self.field_stack.append(f.json_name)
            self.struct_name = typ.short_name
            current = target.get(f.name, _zero(f.type))
            if isinstance(item, JSONObject) and isinstance(f.type, GoMap | GoStruct) and (
                not isinstance(f.type, GoStruct) or f.type.unmarshal_json is None
            ):
                # Go allocates the map (or uses the struct) in place first
                if current is None:
                    current = {}
                target[f.name] = current
            target[f.name] = self.decode(item, f.type, current)
            del self.field_stack[saved_depth:]
            self.struct_name = saved_struct

    def _with_context(self, message: str) -> str:
        # Go rewrites the struct/field of a *UnmarshalTypeError coming out of
        # a custom UnmarshalJSON with the context it was called in.
        m = re.match(r"json: cannot unmarshal (.*) into Go (?:struct field \S+|value) of type (.*)$", message)
        if m is None or (self.struct_name is None and not self.field_stack):
            return message
        return (
            f"json: cannot unmarshal {m.group(1)} into Go struct field "
            f"{self.struct_name or ''}.{'.'.join(self.field_stack)} of type {m.group(2)}"
        )


class _Abort(Exception):
    pass


def _find_field(typ: GoStruct, key: str) -> GoField | None:
    candidates = [f for f in typ.fields if f.json_name != "-"]
    for f in candidates:
        if f.json_name == key:
            return f
    folded = key.lower()
    for f in candidates:
        if f.json_name.lower() == folded:
            return f
    return None


_GO_INT_RE: Final = re.compile(r"[+-]?[0-9]+")


def _parse_go_int(text: str, signed: bool) -> int | None:
    # strconv.ParseInt / ParseUint, base 10 (no fractions, no exponents)
    if not signed and text.startswith(("-", "+")):
        return None
    if not _GO_INT_RE.fullmatch(text):
        return None
    return int(text)


def go_json_unmarshal(jv: Any, typ: GoType, into: Any = None) -> tuple[Any, str | None]:
    """``json.Unmarshal`` of an already parsed JSON value into ``into`` (a value
    of ``typ``, default its zero value; it is copied, not modified).

    Returns the decoded value (as far as Go would have got: fields decoded
    before an aborting error stay set) and Go's error text, or ``None``.
    """
    dec = _Decoder()
    start = _zero(typ) if into is None else copy.deepcopy(into)
    if isinstance(typ, GoPtr) and start is None:
        start = _zero(typ.elem)
        typ = typ.elem
    try:
        value = dec.decode(jv, typ, start)
    except _Abort as abort:
        return start, str(abort)
    return value, dec.saved


# ---------------------------------------------------------------------------
# encoding/json: Marshal of a described Go value
# ---------------------------------------------------------------------------

_JSON_SHORT: Final = {0x22: '\\"', 0x5C: "\\\\", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t",
                      0x08: "\\b", 0x0C: "\\f"}


def go_json_quote(text: str) -> str:
    """A Go string as ``json.Marshal`` writes it (HTML-safe escaping)."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if o in _JSON_SHORT:
            out.append(_JSON_SHORT[o])  # \b and \f as short escapes: Go >= 1.22
        elif o < 0x20 or ch in "<>&" or o in (0x2028, 0x2029):
            out.append(f"\\u{o:04x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _is_empty(value: Any, typ: GoType) -> bool:
    if isinstance(typ, GoBasic):
        return not value
    if isinstance(typ, GoMap | GoSlice):
        return value is None or len(value) == 0
    if isinstance(typ, GoPtr):
        return value is None
    return False  # structs are never empty for omitempty


def go_json_marshal(value: Any, typ: GoType) -> str:
    """``json.Marshal`` of a value described by ``typ`` (compact, no newline)."""
    out: list[str] = []
    _marshal(value, typ, out)
    return "".join(out)


def _marshal(value: Any, typ: GoType, out: list[str]) -> None:
    if isinstance(typ, GoBasic):
        if typ.kind == "string":
            out.append(go_json_quote(str(value)))
        elif typ.kind == "bool":
            out.append("true" if value else "false")
        else:
            out.append(str(int(value)))
    elif isinstance(typ, GoPtr):
        if value is None:
            out.append("null")
        else:
            _marshal(value, typ.elem, out)
    elif isinstance(typ, GoSlice):
        if value is None:
            out.append("null")
            return
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _marshal(item, typ.elem, out)
        out.append("]")
    elif isinstance(typ, GoMap):
        if value is None:
            out.append("null")
            return
        # map keys are written as strings and sorted as strings (so "10" < "2")
        keyed = sorted(((str(k), k) for k in value), key=lambda p: p[0].encode("utf-8", "surrogatepass"))
        out.append("{")
        for i, (ks, k) in enumerate(keyed):
            if i:
                out.append(",")
            out.append(go_json_quote(ks))
            out.append(":")
            _marshal(value[k], typ.elem, out)
        out.append("}")
    elif isinstance(typ, GoStruct):
        fields = value or {}
        out.append("{")
        first = True
        for f in typ.fields:
            if f.json == "-":
                continue
            v = fields.get(f.name, _zero(f.type))
            if f.omitempty and _is_empty(v, f.type):
                continue
            if not first:
                out.append(",")
            first = False
            out.append(go_json_quote(f.json_name))
            out.append(":")
            _marshal(v, f.type, out)
        out.append("}")
    else:  # pragma: no cover
        raise TypeError(f"unsupported Go type {typ!r}")
