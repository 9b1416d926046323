"""Reading the files of a fleet: JSON or YAML documents, the items of
lists, and a JSON dump cut short read up to its last complete item.
Problems are :class:`~podnuma.fleet.model.Issue` records."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

import yaml

from podnuma.errors import InputError
from podnuma.fleet.model import Issue
from podnuma.inputs.documents import StrictLoader

__all__ = ["read_document", "read_items"]


def _is_map(x: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(x, Mapping)``, quick for the plain dicts JSON gives."""
    return type(x) is dict or isinstance(x, Mapping)


def _load_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("file not found", file=str(path)) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", file=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=str(path)) from None


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
        except json.JSONDecodeError:
            return out
        out.append(obj)


def read_document(path: Path) -> tuple[Any, Issue | None]:
    """The parsed file (JSON, or YAML for .yaml/.yml; several YAML documents
    become a list), and an issue when it had to be salvaged. An unreadable
    or malformed file gives ``(None, issue)``."""
    try:
        text = _load_text(path)
    except InputError as e:
        return None, Issue("error", e.message, file=str(path))
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            docs = [d for d in yaml.load_all(text, Loader=StrictLoader) if d is not None]
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
            return None, Issue("error", f"invalid YAML{where}", file=str(path))
        return (docs[0] if len(docs) == 1 else docs), None
    try:
        return json.loads(text), None
    except json.JSONDecodeError as e:
        items = _salvage_items(text)
        msg = f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})"
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
