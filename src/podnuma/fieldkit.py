"""The field kit: checking the shape of a loaded document, with one wording.

Every reader (pod manifests, the KubeletConfiguration, node forms,
scenarios, cluster dumps, web request bodies) checks the fields it reads
through these functions, so a wrong shape is always said the same way::

    spec.containers: must be a list, got a mapping

Each failure is an :class:`~podnuma.errors.InputError` whose ``path`` is
the field path inside the document (``field_path`` builds it); the reader
that knows the file adds the file name. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from podnuma.errors import InputError
from podnuma.golang.jsonnumbers import JSONNumberText

__all__ = [
    "type_name",
    "field_path",
    "wrong_type",
    "expect_mapping",
    "expect_string_keys",
    "expect_list",
    "expect_str",
    "expect_bool",
    "expect_int",
    "optional_mapping",
    "optional_list",
    "optional_str",
    "string_map",
    "unknown_field",
    "check_known_fields",
    "inert",
    "CONTROL_CHARACTERS",
]

#: line breaks and control characters (C0 but the tab, DEL, C1, the Unicode
#: line and paragraph separators), each mapped to its Python escape
CONTROL_CHARACTERS: dict[int, str] = {
    c: repr(chr(c))[1:-1]
    for c in (*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)
}
#: what :func:`inert` escapes: :data:`CONTROL_CHARACTERS` and the
#: bidirectional controls, which reorder what a terminal shows after them
#: (the embeddings, overrides and isolates, the marks): written escaped on
#: a terminal, never refused in a name (the kubelet takes them)
_INERT: dict[int, str] = {
    **CONTROL_CHARACTERS,
    **{c: repr(chr(c))[1:-1] for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))},
}


def inert(text: str) -> str:
    """``text`` as it can be shown on a terminal: its line breaks and
    control characters (a file name with a newline or an escape sequence, a
    value a message quotes) written as Python escapes them (``\\n``,
    ``\\x1b``), never passed to the terminal nor dropped."""
    return text.translate(_INERT)


def type_name(value: object) -> str:
    """What a loaded value is, as the messages say it: ``a mapping``,
    ``a list``, ``a string`` (``an empty string``), ``an integer``,
    ``a number``, ``a boolean``, ``null`` (another Python type:
    ``a <type name>``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        if type(value) is JSONNumberText:  # (a number past the float range, read as its text)
            return "a number"
        return "a string" if value else "an empty string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def field_path(parent: str, key: str | int) -> str:
    """``parent.key``, ``parent[index]`` for an int; ``key`` at the top."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def wrong_type(path: str, want: str, value: object) -> InputError:
    """The one wording: ``PATH: must be WANT, got TYPE``."""
    return InputError(f"must be {want}, got {type_name(value)}", path=path)


def expect_mapping(value: object, path: str, want: str = "a mapping") -> Mapping[str, Any]:
    """``value`` when it is a mapping; ``want`` names it in the message
    (``a mapping (a node form)``)."""
    if not isinstance(value, Mapping):
        raise wrong_type(path, want, value)
    return value


def expect_string_keys(value: object, path: str, want: str = "a mapping") -> Mapping[str, Any]:
    """A mapping whose keys are all strings (a YAML document may use
    ``1:`` or ``true:`` as a key)."""
    mapping = expect_mapping(value, path, want)
    # keys read as Any: the compiled build would refuse a non-str key with a
    # TypeError of its own before the check below could name it
    keys: Mapping[Any, Any] = mapping
    for key in keys:
        if not isinstance(key, str):
            raise InputError(f"field names must be strings, got {type_name(key)} {key!r}", path=path)
    return mapping


def expect_list(value: object, path: str, want: str = "a list") -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise wrong_type(path, want, value)
    return value


def expect_str(value: object, path: str, want: str = "a string") -> str:
    if not isinstance(value, str):
        raise wrong_type(path, want, value)
    return value


def expect_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise wrong_type(path, "a boolean", value)
    return value


def expect_int(value: object, path: str) -> int:
    """A whole number (``true`` is not one)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(path, "an integer", value)
    return value


def optional_mapping(value: object, path: str) -> Mapping[str, Any]:
    """An absent (``null``) mapping reads as an empty one."""
    return {} if value is None else expect_string_keys(value, path)


def optional_list(value: object, path: str) -> Sequence[Any]:
    """An absent (``null``) list reads as an empty one."""
    return () if value is None else expect_list(value, path)


def optional_str(value: object, path: str) -> str | None:
    return None if value is None else expect_str(value, path)


def string_map(
    value: object, path: str, key_path: Callable[[str, str], str] = field_path
) -> dict[str, str]:
    """A ``map[string]string`` field (labels, annotations); ``null`` is
    empty, and so is an entry's ``null`` value (Go's decoder keeps the key
    with an empty string: ``labels: {a: null}`` is ``a=""``, which the API
    server and the kubelet take). ``key_path`` writes the path of one
    entry."""
    out: dict[str, str] = {}
    for key, item in optional_mapping(value, path).items():
        out[key] = "" if item is None else expect_str(item, key_path(path, key))
    return out


def unknown_field(path: str, key: object, hint: str | None = None) -> InputError:
    """``PATH.KEY: unknown field "KEY"`` (with ``did you mean "HINT"?``)."""
    more = f' (did you mean "{hint}"?)' if hint else ""
    text = str(key).replace("\\", "\\\\").replace('"', '\\"')
    return InputError(f'unknown field "{text}"{more}', path=field_path(path, str(key)))


def check_known_fields(doc: Mapping[Any, Any], known: Iterable[str], path: str) -> None:
    """Refuse a key of ``doc`` that is not in ``known``, suggesting the
    closest known name."""
    names = known if isinstance(known, frozenset | set) else frozenset(known)
    for key in doc:
        if key not in names:
            import difflib  # the suggestion: loaded only for an unknown key

            hint = difflib.get_close_matches(str(key), sorted(names), n=1, cutoff=0.75)
            raise unknown_field(path, key, hint[0] if hint else None)
