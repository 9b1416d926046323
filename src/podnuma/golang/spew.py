"""go-spew's ``%#v`` rendering (``spew.Sprintf``) with the printer
configuration ``k8s.io/apimachinery/pkg/util/dump.ForHash`` uses: Indent " ",
SortKeys, DisableMethods, SpewKeys, DisablePointerAddresses,
DisableCapacities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.golang.types import GoBasic, GoMap, GoPtr, GoSlice, GoStruct, GoType, zero

__all__ = ["spew_sdump"]


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
            _spew(fields.get(f.name, zero(f.type)), f.type, False, out)
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

