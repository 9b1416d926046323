"""Go's ``encoding/json``: the parts the kubelet's checkpoints touch (syntax
check, Unmarshal into typed values, Marshal), reproduced closely enough that
the bytes and the error texts come out the same."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from podnuma.golang.strconv import quote_rune
from podnuma.golang.types import (
    INT_BITS,
    INT_KINDS,
    UINT_KINDS,
    GoBasic,
    GoField,
    GoMap,
    GoPtr,
    GoSlice,
    GoStruct,
    GoType,
    zero,
)

__all__ = [
    "GoJSONError", "JSONNumber", "JSONObject", "go_json_check", "go_json_marshal",
    "go_json_parse", "go_json_quote", "go_json_unmarshal", "to_json_value",
]


def _quote_char(byte: int) -> str:
    # encoding/json's quoteChar: a byte shown as a rune in single quotes
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    return "'" + quote_rune(byte, '"') + "'"




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
        if self.empty(0x7D):
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
            if not self.more(0x7D, "after object key:value pair"):
                return

    def arr(self) -> None:
        if self.empty(0x5D):
            return
        while True:
            self.value()
            if not self.more(0x5D, "after array element"):
                return

    def empty(self, close: int) -> bool:
        """Past the opening byte of an object or array: True when the
        closing ``close`` byte follows at once (consumed)."""
        self.pos += 1
        self.skip_ws()
        if self.peek() == close:
            self.pos += 1
            return True
        return False

    def more(self, close: int, context: str) -> bool:
        """After an object member or array element: a comma (True, another
        follows) or the closing ``close`` byte (False, consumed); anything
        else fails with ``context``."""
        self.skip_ws()
        c = self.peek()
        if c == 0x2C:
            self.pos += 1
            self.skip_ws()
            return True
        if c == close:
            self.pos += 1
            return False
        raise self.fail(context)

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
    try:
        sc.skip_ws()
        sc.value()
    except RecursionError:
        raise _too_deep(data) from None
    sc.skip_ws()
    if sc.pos < len(data):
        raise sc.fail("after top-level value")


#: encoding/json's scanner refuses a value nested deeper than this
_MAX_NESTING_DEPTH: Final = 10000


def _too_deep(data: bytes) -> GoJSONError:
    """The error for a document nested deeper than this scanner's recursion
    follows: Go's ``exceeded max depth`` at the bracket that opens level
    10,001 where there is one; else (between Python's recursion limit and
    Go's 10,000 levels, which Go accepts) podnuma's own refusal."""
    depth = 0
    in_string = escaped = False
    for c in data:
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:  # backslash
                escaped = True
            elif c == 0x22:
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x5B, 0x7B):
            depth += 1
            if depth > _MAX_NESTING_DEPTH:
                return GoJSONError(f"invalid character {_quote_char(c)} exceeded max depth")
        elif c in (0x5D, 0x7D):
            depth -= 1
    return GoJSONError("nested deeper than podnuma reads (Go reads up to 10000 levels)")


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
            return self.decode(jv, typ.elem, current if current is not None else zero(typ.elem))
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
                return [self.decode(item, typ.elem, zero(typ.elem)) for item in jv]
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
            if _is_bytes(typ):
                return self.decode_bytes(jv, current)
            self.type_error("string", typ)
            return current
        raise TypeError(f"not a JSON value: {jv!r}")  # pragma: no cover

    def decode_number(self, jv: JSONNumber, typ: GoType, current: Any) -> Any:
        if not isinstance(typ, GoBasic) or typ.kind in ("string", "bool"):
            self.type_error("number", typ)
            return current
        n = _parse_go_int_of_kind(jv, typ.kind)
        if n is None:
            self.type_error(f"number {jv}", typ)
            return current
        return n

    def decode_bytes(self, text: str, current: Any) -> Any:
        """A ``[]byte`` from a JSON string: standard base64 with padding
        (line breaks ignored, as Go's decoder does); on failure the error is
        kept and decoding goes on."""
        import base64  # (here and below: a start-up does not need them)
        import binascii

        try:
            raw = text.replace("\r", "").replace("\n", "").encode("ascii")
            return list(base64.b64decode(raw, validate=True))
        except (UnicodeEncodeError, binascii.Error):
            if self.saved is None:
                self.saved = "illegal base64 data"
            return current

    def decode_map(self, jv: JSONObject, typ: GoMap, target: dict[Any, Any]) -> None:
        key_type = typ.key
        for key, item in jv:
            # Go decodes the element (into a fresh value) first, then converts
            # the key; a key that does not convert (not a base-10 integer, or
            # beyond the key type's bit size) is a type error and the element
            # is dropped
            value = self.decode(item, typ.elem, zero(typ.elem))
            if isinstance(key_type, GoBasic) and key_type.kind == "string":
                target[key] = value
            elif isinstance(key_type, GoBasic) and key_type.kind in INT_KINDS | UINT_KINDS:
                n = _parse_go_int_of_kind(key, key_type.kind)
                if n is None:
                    self.type_error(f"number {key}", key_type)
                    continue
                target[n] = value
            else:  # pragma: no cover - not used by checkpoints
                raise TypeError("unsupported map key type")

    def decode_struct(self, jv: JSONObject, typ: GoStruct, target: dict[str, Any]) -> None:
        saved_struct, saved_depth = self.struct_name, len(self.field_stack)
        for key, item in jv:
            f = _find_field(typ, key)
            if f is None:
                continue  # unknown fields are ignored
            self.field_stack.append(f.json_name)
            self.struct_name = typ.short_name
            current = target.get(f.name, zero(f.type))
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


def _is_bytes(typ: GoType) -> bool:
    """``[]byte``: encoded as a base64 string."""
    return isinstance(typ, GoSlice) and isinstance(typ.elem, GoBasic) and typ.elem.kind == "uint8"


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
    if len(text.lstrip("+-").lstrip("0")) > 20:  # beyond 64 bits (and Python's 4,300-digit int() bound)
        return None
    return int(text)


def _parse_go_int_of_kind(text: str, kind: str) -> int | None:
    """``strconv.ParseInt``/``ParseUint`` (base 10, 64 bits) followed by the
    ``OverflowInt``/``OverflowUint`` check of a Go integer kind: the value, or
    ``None`` when Go reports a type error."""
    signed = kind in INT_KINDS
    n = _parse_go_int(text, signed)
    if n is None:
        return None
    bits = INT_BITS[kind]
    if signed:
        return n if -(1 << (bits - 1)) <= n < (1 << (bits - 1)) else None
    return n if 0 <= n < (1 << bits) else None


def go_json_unmarshal(jv: Any, typ: GoType, into: Any = None) -> tuple[Any, str | None]:
    """``json.Unmarshal`` of an already parsed JSON value into ``into`` (a value
    of ``typ``, default its zero value; it is copied, not modified).

    Returns the decoded value (as far as Go would have got: fields decoded
    before an aborting error stay set) and Go's error text, or ``None``.
    """
    dec = _Decoder()
    if into is None:
        start = zero(typ)
    else:
        import copy

        start = copy.deepcopy(into)
    if isinstance(typ, GoPtr) and start is None:
        start = zero(typ.elem)
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


#: a string ``json.Marshal`` writes as it is, between quotes (no escape)
_PLAIN: Final = re.compile(r'[^"\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]*')


def go_json_quote(text: str) -> str:
    """A Go string as ``json.Marshal`` writes it (HTML-safe escaping)."""
    if _PLAIN.fullmatch(text):
        return f'"{text}"'
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
        if _is_bytes(typ):
            import base64

            out.append('"' + base64.b64encode(bytes(value)).decode("ascii") + '"')
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
            v = fields.get(f.name, zero(f.type))
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
