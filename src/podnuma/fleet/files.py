"""Reading the files of a fleet: JSON or YAML documents, the items of
lists, and a JSON dump cut short read up to its last complete item.
Problems are :class:`~podnuma.fleet.model.Issue` records."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.fleet.model import Issue
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

__all__ = ["parse_document", "read_document", "read_document_text", "read_items"]


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
