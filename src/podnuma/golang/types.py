"""A tiny model of Go types as ``reflect`` sees them.

Values are plain Python: ``str``/``int``/``bool`` for basic kinds, a
``Mapping`` (or ``None`` for a nil map) for maps, a ``Sequence`` (or ``None``
for nil) for slices, the pointee (or ``None``) for pointers and a ``Mapping``
of field name to value for structs (a missing field is the zero value).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

__all__ = [
    "GoBasic", "GoField", "GoMap", "GoPtr", "GoSlice", "GoStruct", "GoType",
    "GO_BOOL", "GO_INT", "GO_STRING", "GO_UINT64", "INT_BITS", "INT_KINDS",
    "UINT_KINDS", "zero",
]

INT_KINDS: Final = frozenset({"int", "int8", "int16", "int32", "int64"})
UINT_KINDS: Final = frozenset({"uint", "uint8", "uint16", "uint32", "uint64"})
INT_BITS: Final = {
    "int": 64, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
    "uint": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64,
}


class GoType:
    """A Go type as ``reflect`` sees it: a kind plus its ``Type.String()``."""

    @property
    def type_string(self) -> str:
        raise NotImplementedError


class GoBasic(GoType):
    """bool, string or an integer kind; ``name`` is the (possibly named) type."""

    kind: str
    name: str

    def __init__(self, kind: str, name: str = "") -> None:
        self.kind = kind
        self.name = name
        self.__post_init__()

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(kind={self.kind!r}, name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GoBasic) or other.__class__ is not self.__class__:
            return False
        return (self.kind, self.name) == (other.kind, other.name)

    def __hash__(self) -> int:
        return hash((self.kind, self.name))

    def __post_init__(self) -> None:
        if self.kind not in INT_KINDS | UINT_KINDS | {"bool", "string"}:
            raise ValueError(f"unsupported basic kind {self.kind!r}")

    @property
    def type_string(self) -> str:
        return self.name or self.kind

    def named(self, name: str) -> GoBasic:
        """A defined type with this underlying kind (``type Checksum uint64``)."""
        return GoBasic(self.kind, name)


class GoMap(GoType):
    key: GoType
    elem: GoType
    name: str

    def __init__(self, key: GoType, elem: GoType, name: str = "") -> None:
        self.key = key
        self.elem = elem
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r}, elem={self.elem!r}, name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GoMap) or other.__class__ is not self.__class__:
            return False
        return (self.key, self.elem, self.name) == (other.key, other.elem, other.name)

    def __hash__(self) -> int:
        return hash((self.key, self.elem, self.name))

    @property
    def type_string(self) -> str:
        return self.name or f"map[{self.key.type_string}]{self.elem.type_string}"


class GoSlice(GoType):
    elem: GoType
    name: str

    def __init__(self, elem: GoType, name: str = "") -> None:
        self.elem = elem
        self.name = name

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(elem={self.elem!r}, name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GoSlice) or other.__class__ is not self.__class__:
            return False
        return (self.elem, self.name) == (other.elem, other.name)

    def __hash__(self) -> int:
        return hash((self.elem, self.name))

    @property
    def type_string(self) -> str:
        return self.name or f"[]{self.elem.type_string}"


class GoPtr(GoType):
    elem: GoType

    def __init__(self, elem: GoType) -> None:
        self.elem = elem

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(elem={self.elem!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GoPtr) or other.__class__ is not self.__class__:
            return False
        return (self.elem,) == (other.elem,)

    def __hash__(self) -> int:
        return hash((self.elem,))

    @property
    def type_string(self) -> str:
        return f"*{self.elem.type_string}"


class GoField:
    """A struct field: Go name, type, and its ``json`` tag.

    ``json`` is the key (defaults to the Go name; ``"-"`` skips the field).
    """

    name: str
    type: GoType
    json: str | None
    omitempty: bool

    def __init__(
        self,
        name: str,
        type: GoType,
        json: str | None = None,
        omitempty: bool = False,
    ) -> None:
        self.name = name
        self.type = type
        self.json = json
        self.omitempty = omitempty

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(name={self.name!r}, type={self.type!r}, json={self.json!r}, omitempty={self.omitempty!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GoField) or other.__class__ is not self.__class__:
            return False
        return (self.name, self.type, self.json, self.omitempty) == (other.name, other.type, other.json, other.omitempty)

    def __hash__(self) -> int:
        return hash((self.name, self.type, self.json, self.omitempty))

    @property
    def json_name(self) -> str:
        return self.name if self.json is None else self.json


class GoStruct(GoType):
    """A struct type.  ``name`` is ``pkg.Name`` (``"struct {}"`` when empty and
    unnamed).  ``unmarshal_json``, when set, plays the type's ``UnmarshalJSON``
    method: it gets the raw JSON value and returns the Go value or raises
    :class:`GoJSONError` (which aborts the whole decode, as in Go)."""

    name: str
    fields: tuple[GoField, ...]
    unmarshal_json: Callable[[Any], Any] | None

    def __init__(
        self,
        name: str,
        fields: tuple[GoField, ...] = (),
        unmarshal_json: Callable[[Any], Any] | None = None,
    ) -> None:
        self.name = name
        self.fields = fields
        self.unmarshal_json = unmarshal_json

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(name={self.name!r}, fields={self.fields!r}, unmarshal_json={self.unmarshal_json!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GoStruct) or other.__class__ is not self.__class__:
            return False
        return (self.name, self.fields) == (other.name, other.fields)

    def __hash__(self) -> int:
        return hash((self.name, self.fields))

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


def zero(typ: GoType) -> Any:
    if isinstance(typ, GoBasic):
        if typ.kind == "string":
            return ""
        if typ.kind == "bool":
            return False
        return 0
    if isinstance(typ, GoStruct):
        return {}
    return None  # map, slice, pointer: nil


def go_json_kind(value: Any) -> str:
    """How ``encoding/json`` names a JSON value in its ``cannot unmarshal X
    into ...`` error (``bool``, ``number``, ``string``, ``object``,
    ``array``); ``""`` for ``None`` or a value JSON has no kind for."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return ""
