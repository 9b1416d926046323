"""The safe YAML loader podnuma composes node trees with where it uses
PyYAML's own loader (the line and column of a JSON input's field): no
timestamps, duplicate keys rejected. A module of its own so that reading
JSON does not import PyYAML."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml

__all__ = ["StrictLoader"]


class StrictLoader(yaml.SafeLoader):
    """Safe loader for every file podnuma reads: no timestamps ("2024-01-01"
    stays a string), duplicate keys rejected."""


# Drop the implicit timestamp resolver (keep "2024-01-01" a string).
StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _DuplicateKey(yaml.MarkedYAMLError):
    pass


def _construct_mapping(loader: StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, Hashable):
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                "found an unhashable key", key_node.start_mark,
            )
        if key in out:
            raise _DuplicateKey(
                "while constructing a mapping", node.start_mark,
                f"found duplicate key {key!r}", key_node.start_mark,
            )
        out[key] = loader.construct_object(value_node, deep=True)
    return out


StrictLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)  # type: ignore[arg-type]
