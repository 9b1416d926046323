"""A request message's protobuf wire format read as protobuf-go reads it.

Mirrors ``google.golang.org/protobuf`` v1.36 (the module grpc-go decodes
the kubelet's PodResources requests with): ``internal/impl/decode.go``
(``unmarshalPointerEager``: each tag, a field number outside 1 to 2^29-1
or an end-group tag at the top refused), ``internal/impl/codec_gen.go``
(a proto3 ``string`` field: bytes whose UTF-8 is checked; given with
another wire type it is an unknown field) and ``encoding/protowire``
(``ConsumeFieldValue``: unknown fields skipped, groups to 10,000 levels
below the first). The errors are protobuf-go's texts:
``proto: cannot parse invalid wire-format data``, ``string field contains
invalid UTF-8``, ``proto: exceeded maximum recursion depth`` is not one of
them (an unknown group past the depth is ``cannot parse``). protobuf-go
writes its ``proto:`` prefix with a space or a no-break space, chosen per
binary to keep callers from matching the text; podnuma writes a space.

Only messages whose fields are all singular strings are read this way (the
PodResources requests: none, or a pod's name and namespace): Python's
protobuf refuses other texts (``Error parsing message ...``) and unknown
groups nested past 100 levels, which grpc-go takes.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["WireError", "read_strings"]

#: protobuf-go's ``errDecode``
CANNOT_PARSE = "proto: cannot parse invalid wire-format data"
#: protobuf-go's ``errInvalidUTF8`` (no prefix)
INVALID_UTF8 = "string field contains invalid UTF-8"
_MAX_FIELD = (1 << 29) - 1
#: ``protowire.DefaultRecursionLimit``
_GROUP_DEPTH = 10_000
_VARINT, _FIXED64, _BYTES, _START_GROUP, _END_GROUP, _FIXED32 = 0, 1, 2, 3, 4, 5


class WireError(Exception):
    """The request does not decode; ``str()`` is protobuf-go's text."""


def _varint(b: bytes, i: int) -> tuple[int, int]:
    """``ConsumeVarint``: the value and the index after it; ten bytes at
    most, the tenth at most 1."""
    value = 0
    for k in range(10):
        if i + k >= len(b):
            raise WireError(CANNOT_PARSE)
        byte = b[i + k]
        if k == 9 and byte > 1:
            raise WireError(CANNOT_PARSE)
        value |= (byte & 0x7F) << (7 * k)
        if byte < 0x80:
            return value, i + k + 1
    raise WireError(CANNOT_PARSE)


def _skip(b: bytes, i: int, number: int, wire: int) -> int:
    """``ConsumeFieldValue``: the index after an unknown field's value (a
    group to its matching end, without recursion)."""
    groups: list[int] = []  # the open groups' field numbers
    while True:
        if wire == _VARINT:
            i = _varint(b, i)[1]
        elif wire in (_FIXED64, _FIXED32):
            i += 8 if wire == _FIXED64 else 4
            if i > len(b):
                raise WireError(CANNOT_PARSE)
        elif wire == _BYTES:
            size, i = _varint(b, i)
            if size > len(b) - i:
                raise WireError(CANNOT_PARSE)
            i += size
        elif wire == _START_GROUP:
            if len(groups) > _GROUP_DEPTH:
                raise WireError(CANNOT_PARSE)
            groups.append(number)
        else:  # (an end group where none is open, or wire types 6 and 7)
            raise WireError(CANNOT_PARSE)
        while groups:  # (the next field of the innermost open group)
            tag, i = _varint(b, i)
            number, wire = tag >> 3, tag & 7
            if number < 1 or number > 0x7FFFFFFF:
                raise WireError(CANNOT_PARSE)
            if wire != _END_GROUP:
                break
            if number != groups.pop():
                raise WireError(CANNOT_PARSE)
        else:
            return i


def read_strings(raw: bytes, fields: Mapping[int, str]) -> dict[str, str]:
    """A message's string ``fields`` (number -> name) read from ``raw``: the
    last value of each that is given, every other field skipped;
    :class:`WireError` with protobuf-go's text when it does not decode."""
    out: dict[str, str] = {}
    i = 0
    while i < len(raw):
        tag, i = _varint(raw, i)
        number, wire = tag >> 3, tag & 7
        if number < 1 or number > _MAX_FIELD or wire == _END_GROUP:
            raise WireError(CANNOT_PARSE)
        name = fields.get(number)
        if name is not None and wire == _BYTES:
            size, i = _varint(raw, i)
            if size > len(raw) - i:
                raise WireError(CANNOT_PARSE)
            try:
                out[name] = raw[i:i + size].decode("utf-8")
            except UnicodeDecodeError:
                raise WireError(INVALID_UTF8) from None
            i += size
            continue
        i = _skip(raw, i, number, wire)
    return out
