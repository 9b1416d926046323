"""Node dumps read without what the fleet does not read of a Node.

A ``kubectl get nodes -o json`` dump holds, per node, its images,
conditions, annotations...: a cluster whose nodes carry many annotations
gives a dump of tens of megabytes, which the general reader
(:mod:`podnuma.fleet.files`) builds whole (hundreds of megabytes of
Python values) and keeps until the fleet is assembled. The fleet reads of
a Node its ``metadata.name`` and ``metadata.labels`` and its
``status.capacity`` and ``status.allocatable`` (:func:`podnuma.fleet.files.node_damage`,
:func:`podnuma.fleet.inputs.assemble`): :func:`clean_node_list` decodes a
clean JSON list of Nodes into those fields only (msgspec: the rest is
skipped in C, never built), as mappings the general reader's
:func:`~podnuma.fleet.inputs.read_objects` then reads as it reads the
whole objects, with the same words.

A file that is not such a clean list (another top-level key, an item that
is not a Node, a field among those of another type, a label or quantity
that is not a string, a ``spec`` that is not a mapping, NaN, a lone
surrogate, invalid UTF-8, no items...) gives ``None``: the general reader
reads it, and says its problems. As for pods
(:mod:`podnuma.fleet.podscan`), values nested inside fields the fleet
does not read are skipped, not counted against the depth limit.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from podnuma.inputs.msgspec_import import msgspec  # (without typing_extensions)

__all__ = ["clean_node_list", "is_utf8"]

_UNSET = msgspec.UNSET


class _Meta(msgspec.Struct, gc=False):
    name: str | msgspec.UnsetType = _UNSET
    labels: dict[str, str] | None | msgspec.UnsetType = _UNSET


class _Status(msgspec.Struct, gc=False):
    capacity: dict[str, str] | None | msgspec.UnsetType = _UNSET
    allocatable: dict[str, str] | None | msgspec.UnsetType = _UNSET


class _Spec(msgspec.Struct, gc=False):
    pass


class _Node(msgspec.Struct, gc=False):
    kind: str
    apiVersion: str | msgspec.UnsetType = _UNSET
    metadata: _Meta | None | msgspec.UnsetType = _UNSET
    spec: _Spec | None | msgspec.UnsetType = _UNSET
    status: _Status | None | msgspec.UnsetType = _UNSET


class _ListMeta(msgspec.Struct, gc=False):
    pass


class _NodeList(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    kind: str
    items: list[_Node]
    apiVersion: str | msgspec.UnsetType = _UNSET
    metadata: _ListMeta | None | msgspec.UnsetType = _UNSET


_DECODER = msgspec.json.Decoder(_NodeList)
_HEAD = 4096
#: a Node's ``kind``, looked for in a file's first 64 KiB (the first item
#: of a ``kubectl get nodes -o json`` dump begins with it): any other file
#: is not decoded here
_NODE_HEAD = re.compile(rb'"kind"\s*:\s*"Node"')
_LOOK = 1 << 16
#: how much of a file is checked as UTF-8 at a time (a file's text is never
#: made whole for it)
_CHUNK = 1 << 20


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is UTF-8 (checked a chunk at a time)."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for k in range(0, len(data), _CHUNK):
            decoder.decode(view[k: k + _CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _fields(struct: Any, names: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a decoded struct that were in the JSON (``null``
    kept), as a mapping."""
    out: dict[str, Any] = {}
    for k in names:
        v = getattr(struct, k)
        if v is not _UNSET:
            out[k] = v
    return out


def clean_node_list(data: bytes) -> dict[str, Any] | None:
    """A JSON list of Nodes (``data``: the file's bytes) as a parsed list
    whose items hold only the fields the fleet reads of a Node (see the
    module's text), or ``None`` when it is not a clean one (the general
    reader reads it)."""
    if not data[:_HEAD].lstrip().startswith(b"{") or _NODE_HEAD.search(data, 0, _LOOK) is None:
        return None
    if not is_utf8(data):
        return None
    try:
        top = _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
        return None
    if not top.kind.endswith("List") or not top.items:
        return None
    items: list[Any] = []
    for n in top.items:
        if n.kind != "Node":
            return None
        node: dict[str, Any] = {}
        if n.apiVersion is not _UNSET:
            node["apiVersion"] = n.apiVersion
        node["kind"] = n.kind
        if n.metadata is not _UNSET:
            node["metadata"] = None if n.metadata is None else _fields(n.metadata, ("name", "labels"))
        if n.spec is not _UNSET:
            node["spec"] = None if n.spec is None else {}
        if n.status is not _UNSET:
            node["status"] = None if n.status is None else _fields(n.status, ("capacity", "allocatable"))
        items.append(node)
    out: dict[str, Any] = {"kind": top.kind, "items": items}
    if top.apiVersion is not _UNSET:
        out["apiVersion"] = top.apiVersion
    return out
