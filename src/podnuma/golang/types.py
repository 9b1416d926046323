"""A tiny model of Go types as ``reflect`` sees them.

Values are plain Python: ``str``/``int``/``bool`` for basic kinds, a
``Mapping`` (or ``None`` for a nil map) for maps, a ``Sequence`` (or ``None``
for nil) for slices, the pointee (or ``None``) for pointers and a ``Mapping``
of field name to value for structs (a missing field is the zero value).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class GoBasic(GoType):
    """bool, string or an integer kind; ``name`` is the (possibly named) type."""

    kind: str
    name: str = ""

    def __post_init__(self) -> None:
        if self.kind not in INT_KINDS | UINT_KINDS | {"bool", "string"}:
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


