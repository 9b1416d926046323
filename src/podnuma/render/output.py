"""The ``-o`` grammar in one place: each command's output formats, and the
one dispatch from a format to the text (or bytes) printed.

``json`` and ``yaml`` are always the result document through the one
serializer (:mod:`podnuma.render.serialize`); every other format is a view
for people (a table, text, a picture) that the command names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from podnuma.render.formats import DOCUMENT_FORMATS, FORMATS
from podnuma.render.serialize import dump_json, dump_yaml

__all__ = ["DOCUMENT_FORMATS", "FORMATS", "render_output", "serialize"]


def serialize(doc: Any, fmt: str, *, yaml: Callable[[Any], str] = dump_yaml,
              json: Callable[[Any], str] = dump_json) -> str:
    """``doc`` as ``json`` or ``yaml`` (``yaml``: the YAML writer, e.g.
    :func:`~podnuma.render.serialize.dump_scenario_yaml` for scenario
    fragments)."""
    if fmt == "json":
        return json(doc)
    if fmt == "yaml":
        return yaml(doc)
    raise ValueError(f"{fmt!r} is not a document format")


def render_output(
    fmt: str,
    document: Callable[[], Any],
    views: Mapping[str, Callable[[], str]] | None = None,
    *,
    yaml: Callable[[Any], str] = dump_yaml,
    json: Callable[[Any], str] = dump_json,
) -> str:
    """What ``-o fmt`` prints: a view for people from ``views``, or the
    result ``document()`` serialized (``json``, ``yaml``). Pictures as
    bytes (``topology -o png``) are written by the command itself."""
    if views and fmt in views:
        return views[fmt]()
    return serialize(document(), fmt, yaml=yaml, json=json)
