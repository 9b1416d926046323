"""Every file and stream podnuma reads, and the one wording of input errors.

Reading: :func:`read_text` (a path, or ``-`` for standard input) returns
UTF-8 text or raises :class:`~podnuma.errors.InputError` naming the file.
Parsing: :func:`parse_document` reads YAML (or JSON) keeping the node tree,
so an error at a field path can name that field's line
(``error: FILE: FIELD.PATH: MESSAGE (line L, column C)``).

YAML is read with PyYAML's safe loader, with three changes that make it
behave like the Kubernetes tooling users know: duplicate keys are an error
(a typo must not silently win), timestamps stay strings (the API's JSON has
no date type), and the composed node tree is kept. JSON is read with
:mod:`json` (duplicate keys refused as well).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from podnuma.errors import InputError

__all__ = [
    "STDIN",
    "STDIN_NAME",
    "Document",
    "StrictLoader",
    "describe_type",
    "input_name",
    "is_stdin",
    "json_input_error",
    "parse_document",
    "read_text",
    "yaml_input_error",
]

#: the file argument that means standard input (kubectl's habit)
STDIN = "-"
#: how standard input is named in messages
STDIN_NAME = "<stdin>"


def is_stdin(path: str | Path) -> bool:
    """Whether a file argument means standard input."""
    return str(path) == STDIN


def input_name(path: str | Path) -> str:
    """The name messages use for a file argument."""
    return STDIN_NAME if is_stdin(path) else str(path)


def _read_stdin(what: str) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    try:
        data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    except OSError as e:
        raise InputError(f"cannot read {what} from standard input: {e.strerror or e}",
                         file=STDIN_NAME) from None
    except (ValueError, AttributeError):  # closed or missing stdin
        raise InputError(f"cannot read {what} from standard input: it is closed",
                         file=STDIN_NAME) from None
    return bytes(data)


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

_CStrictLoader: Any = None
if getattr(yaml, "__with_libyaml__", False):

    class _CStrict(yaml.CSafeLoader):
        """:class:`StrictLoader` on libyaml's parser (same resolvers and
        constructors, much faster on large scenarios)."""

    _CStrict.yaml_implicit_resolvers = StrictLoader.yaml_implicit_resolvers
    _CStrict.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
    _CStrictLoader = _CStrict


def describe_type(value: object) -> str:
    """A user-facing name for a loaded value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


_SEGMENT = re.compile(r"\[(\d+)\]")


@dataclass
class Document:
    """A loaded document: its data, its name (for messages) and, when
    available, its YAML node tree (for line numbers)."""

    name: str
    data: Any
    root: yaml.Node | None
    # JSON text whose node tree is composed only when a position is needed
    # (composing a large file costs far more than parsing it)
    source: str | None = None

    def locate(self, path: str) -> tuple[int, int] | None:
        """1-based (line, column) of the field at ``path``, or of the
        deepest enclosing field found; ``None`` when unknown."""
        if self.root is None and self.source is not None:
            self.root, self.source = _json_root(self.source), None
        node = self.root
        if node is None:
            return None
        best: yaml.Mark | None = None  # the document itself is not a position
        rest = path
        while rest:
            if rest.startswith("."):
                rest = rest[1:]
                continue
            m = _SEGMENT.match(rest)
            if m:
                if not isinstance(node, yaml.SequenceNode):
                    break
                i = int(m.group(1))
                if i >= len(node.value):
                    break
                node = node.value[i]
                best = node.start_mark
                rest = rest[m.end():]
                continue
            if not isinstance(node, yaml.MappingNode):
                break
            # Keys may contain dots (example.com/gpu): take the longest key
            # that is followed by a separator or the end of the path.
            found: tuple[yaml.Node, yaml.Node] | None = None
            found_len = -1
            for key_node, value_node in node.value:
                key = str(getattr(key_node, "value", ""))
                if rest.startswith(key) and len(key) > found_len and (
                    len(rest) == len(key) or rest[len(key)] in ".["
                ):
                    found, found_len = (key_node, value_node), len(key)
            if found is None:
                break
            key_node, node = found
            # A scalar field points at its value; a block points at its key.
            best = (
                node.start_mark if isinstance(node, yaml.ScalarNode) else key_node.start_mark
            )
            rest = rest[found_len:]
        return None if best is None else (best.line + 1, best.column + 1)

    def enrich(self, err: InputError) -> InputError:
        """``err`` with this document's name and the field's line appended,
        when the error is about this document."""
        if err.file not in (None, self.name):
            return err
        message = err.message
        pos = self.locate(err.path) if err.path else None
        if pos is not None and "(line " not in message:
            message = f"{message} (line {pos[0]}, column {pos[1]})"
        return InputError(message, path=err.path, file=self.name)


def _json_root(text: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=StrictLoader)
    except yaml.YAMLError:
        return None


def _load_yaml(loader_class: Any, text: str, name: str) -> Document:
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()
    return Document(name, data, root)


def parse_document(text: str, *, name: str, json_only: bool = False) -> Document:
    """Parse YAML (or JSON when ``json_only`` / the name ends in .json).

    Malformed input raises :class:`InputError` naming ``name`` with the
    line and column of the problem.
    """
    if json_only or name.lower().endswith(".json"):
        try:
            data = json.loads(text, object_pairs_hook=_json_pairs)
        except json.JSONDecodeError as e:
            raise json_input_error(e, name) from None
        except _JSONDuplicate as e:
            raise InputError(f"invalid JSON: duplicate key {e.key!r}", file=name) from None
        return Document(name, data, None, source=text)
    if _CStrictLoader is not None:
        # libyaml when present; on malformed input the Python loader below
        # reports the problem, so the messages do not depend on libyaml
        try:
            return _load_yaml(_CStrictLoader, text, name)
        except yaml.YAMLError:
            pass
    try:
        loader = StrictLoader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise yaml_input_error(e, name) from None
    return Document(name, data, root)


def json_input_error(e: json.JSONDecodeError, name: str) -> InputError:
    """The ``InputError`` for malformed JSON in file ``name``."""
    return InputError(f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", file=name)


def yaml_input_error(e: yaml.YAMLError, name: str) -> InputError:
    """The ``InputError`` for malformed YAML in file ``name``, with the line
    and column of the problem when PyYAML knows them."""
    if isinstance(e, yaml.MarkedYAMLError):
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "malformed YAML"
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return InputError(f"invalid YAML: {problem}{where}", file=name)
    return InputError(f"invalid YAML: {' '.join(str(e).split())}", file=name)  # one line


class _JSONDuplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _JSONDuplicate(k)
        out[k] = v
    return out


def read_text(path: str | Path, *, what: str, name: str | None = None) -> str:
    """A UTF-8 file, or standard input when ``path`` is ``-``; ``InputError``
    naming it (``name``, default the path) when it cannot be read."""
    name = input_name(path) if name is None else name
    data = _read_stdin(what) if is_stdin(path) else _read_path(Path(path), what=what, name=name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{what} file is not UTF-8 text (byte {e.start})", file=name) from None


def _read_path(path: Path, *, what: str, name: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} file not found", file=name) from None
    except IsADirectoryError:
        raise InputError(f"{what} file is a directory", file=name) from None
    except OSError as e:
        raise InputError(f"cannot read {what} file: {e.strerror or e}", file=name) from None
