"""Reading the files of a fleet: JSON or YAML documents, the items of
lists, and a JSON dump cut short read up to its last complete item.
Problems are :class:`~podnuma.fleet.model.Issue` records."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.fieldkit import field_path, wrong_type
from podnuma.fleet.model import Issue, Severity
from podnuma.inputs.documents import (
    DuplicateJSONKey,
    MalformedJSON,
    check_tree,
    decode_text,
    load_json,
    parse_documents,
    read_text,
)
from podnuma.inputs.limits import FLEET_LIMITS

__all__ = ["ItemProblems", "item_problem", "objects_of", "parse_document", "read_document",
           "read_document_text", "read_items"]


def _is_map(x: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(x, Mapping)``, quick for the plain dicts JSON gives."""
    return type(x) is dict or isinstance(x, Mapping)


def _where(e: InputError) -> str:
    """An input error's field path and message (the issue names the file)."""
    return f"{e.path}: {e.message}" if e.path else e.message


def _load_text(path: Path, data: bytes | None = None) -> str:
    """The file's text (``data``: its bytes, already read through the
    bounded path)."""
    if data is not None:
        return decode_text(data, what="input", name=str(path))
    return read_text(path, what="input", name=str(path), limits=FLEET_LIMITS)


def _salvage_items(text: str) -> list[Any]:
    """The complete objects of a JSON ``items`` array cut short."""
    m = re.search(r'"items"\s*:\s*\[', text)
    if m is None:
        return []
    decoder = json.JSONDecoder()
    pos = m.end()
    out: list[Any] = []
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] == "]":
            return out
        try:
            obj, pos = decoder.raw_decode(text, pos)
            check_tree(obj, name="", limits=FLEET_LIMITS)
        except (json.JSONDecodeError, RecursionError, InputError):
            return out
        out.append(obj)


def read_document(path: Path, data: bytes | None = None) -> tuple[Any, Issue | None]:
    """The parsed file (JSON, or YAML for .yaml/.yml; several YAML documents
    become a list), and an issue when it had to be salvaged. An unreadable
    or malformed file gives ``(None, issue)``. ``data``: the file's bytes
    when the caller read them already (through the same bounded read)."""
    text, issue = read_document_text(path, data)
    if text is None:
        return None, issue
    return parse_document(path, text)


def read_document_text(path: Path, data: bytes | None = None) -> tuple[str | None, Issue | None]:
    """The file's text, or ``(None, issue)`` when it cannot be read."""
    try:
        return _load_text(path, data), None
    except InputError as e:
        return None, Issue("error", e.message, file=str(path))


def parse_document(path: Path, text: str) -> tuple[Any, Issue | None]:
    """:func:`read_document` of the file's ``text``."""
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            found = parse_documents(text, name=str(path), limits=FLEET_LIMITS)
        except InputError as e:
            return None, Issue("error", _where(e), file=str(path))
        docs = [d.data for d in found if d.data is not None]
        return (docs[0] if len(docs) == 1 else docs), None
    try:
        return load_json(text, name=str(path), limits=FLEET_LIMITS), None
    except DuplicateJSONKey:
        # Go's decoder keeps the last duplicate (the kubelet's lenient
        # configz decoding reports them as a warning): the pairs are kept
        try:
            return json.loads(text, object_pairs_hook=json_object_pairs), None
        except (ValueError, RecursionError) as e:
            return None, Issue("error", f"invalid JSON: {e}", file=str(path))
    except MalformedJSON as e:
        items = _salvage_items(text)
        msg = e.message
        if items:
            return (
                {"kind": "List", "items": items, "_truncated": True},
                Issue(
                    "warning",
                    f"{msg}: a truncated dump; read its first {len(items)} complete item(s)",
                    file=str(path),
                ),
            )
        return None, Issue("error", msg, file=str(path))
    except InputError as e:
        return None, Issue("error", _where(e), file=str(path))


def read_items(path: Path) -> tuple[list[Any], Issue | None]:
    """The objects of a file: the items of a list, or the object itself."""
    doc, issue = read_document(path)
    if doc is None:
        return [], issue
    if isinstance(doc, list):
        out: list[Any] = []
        for d in doc:
            out.extend(_items_of(d))
        return out, issue
    return _items_of(doc), issue


def _items_of(doc: Any) -> list[Any]:
    if _is_map(doc) and isinstance(doc.get("items"), list) and (
        str(doc.get("kind", "List")).endswith("List")
    ):
        return list(doc["items"])
    return [doc]


def objects_of(doc: Any, problems: ItemProblems) -> Iterator[tuple[Any, str, int]]:
    """The objects of a parsed file (:func:`read_document`), with where
    they are: ``(item, path, i)``, ``i`` the item's index in the list at
    ``path`` (``items``; ``[2].items`` in the third document of a file
    that holds several), or ``-1`` for an object that is a document itself
    (at ``path``: ``""``, or ``[2]``). A list whose ``items`` is not a list
    gives nothing and is added to ``problems`` (an ``error``: the file's
    objects are not read); ``items: null`` is an empty list (as Go reads
    it)."""
    several = isinstance(doc, list)
    for k, d in enumerate(doc if several else (doc,)):
        at = f"[{k}]" if several else ""
        if _is_map(d) and "items" in d and str(d.get("kind", "List")).endswith("List"):
            items = d["items"]
            if isinstance(items, list):
                path = field_path(at, "items")
                for i, item in enumerate(items):
                    yield item, path, i
            elif items is not None:
                problems.add(wrong_type(field_path(at, "items"), "a list", items), "error")
            continue
        yield d, at, -1


#: the kinds of object a fleet reads whose shape is checked when they are
#: documents themselves (any object in a list is checked)
_CHECKED_KINDS = frozenset(("Pod", "Node", "NodeResourceTopology"))


def item_problem(item: Any, path: str, i: int) -> InputError | None:
    """What is wrong with the shape of an object :func:`objects_of` gives,
    in the field kit's wording, at its field path: an item of a list that
    is not a mapping, a ``metadata`` or ``spec`` that is not one, a pod's
    ``spec.nodeName`` that is not a string (``None``: nothing, or an object
    that is not in a list and not of a kind the fleet reads). The first
    found only (one per object)."""
    if not _is_map(item):
        return wrong_type(field_path(path, i), "a mapping", item) if i >= 0 else None
    kind = item.get("kind")
    if i < 0 and kind not in _CHECKED_KINDS:
        return None
    meta = item.get("metadata")
    spec = item.get("spec")
    if meta is not None and not _is_map(meta):
        at, want, value = "metadata", "a mapping", meta
    elif spec is not None and not _is_map(spec):
        at, want, value = "spec", "a mapping", spec
    elif kind == "Pod" and spec is not None and spec.get("nodeName") is not None and not isinstance(
        spec.get("nodeName"), str
    ):
        at, want, value = "spec.nodeName", "a string", spec.get("nodeName")
    else:
        return None
    return wrong_type(field_path(field_path(path, i) if i >= 0 else path, at), want, value)


class ItemProblems:
    """The problems found in the objects of one file, as issues naming it
    and the field path: the first :attr:`SHOWN` kept, the others counted
    (a dump of a million bad items is one more issue, not a million)."""

    SHOWN = 20

    def __init__(self, file: str) -> None:
        self.file = file
        self.kept: list[Issue] = []
        self.more = 0

    def add(self, err: InputError, severity: Severity = "warning") -> None:
        if len(self.kept) < self.SHOWN:
            self.kept.append(Issue(severity, err.message, file=self.file, path=err.path))
        else:
            self.more += 1

    def issues(self) -> list[Issue]:
        if not self.more:
            return list(self.kept)
        return [*self.kept, Issue("warning", f"{self.more} more object(s) of this file with a field "
                                  "of the wrong type, not listed", file=self.file)]
