"""``--set PATH=VALUE``: kubelet configuration overrides, written once for
every door.

An override names a field of the ``KubeletConfiguration``
(kubelet.config.k8s.io/v1beta1) by its JSON path and gives it a value:

* ``cpuManagerPolicy=static``, ``topologyManagerScope=pod``,
  ``reservedSystemCPUs=0-1``, ``maxPods=64``;
* a key of a map field: ``cpuManagerPolicyOptions.full-pcpus-only=true``,
  ``evictionHard.memory.available=100Mi`` (after a map field, the rest of
  the path is the key, dots included);
* a feature gate: ``featureGates.PodLevelResourceManagers=true``;
* an item of a list field by index: ``reservedMemory[0].limits.memory=1Gi``
  (an index one past the end appends).

The value is read as a YAML scalar, as the configuration file reads it
(``true`` a boolean, ``64`` an integer, ``"0"`` a string); a field whose
type is a string (``cpuManagerPolicyOptions`` values, ``reservedSystemCPUs``)
takes the text as written, so ``full-pcpus-only=true`` is the string
``"true"`` the option map holds. A YAML flow collection sets a whole map or
list (``featureGates={PodLevelResources: true}``). An empty value or
``null`` removes the field (the kubelet's default then applies).

The overrides are applied in order on top of the configuration document
the command was given (a scenario's ``kubeletConfig``, a configuration
file, a node's configz, or none: the kubelet's defaults), and the result is
decoded and validated exactly as a configuration file is. A path the
v1beta1 types do not have, an unknown feature gate, or a value of the wrong
type is invalid input: one line naming ``--set`` and the field path, in the
field kit's words. The list of schema fields is
:mod:`podnuma.api._kubeletconfig_v137`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from podnuma.api._kubeletconfig_v137 import SCHEMA
from podnuma.api.featuregates import KNOWN_FEATURES, OTHER_KNOWN_GATES
from podnuma.api.kubeletconfig import (
    CPU_MANAGER_POLICIES,
    MEMORY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_SCOPES,
    JSONObject,
    YAMLObject,
    strict_decoding_error,
    yaml_object,
)
from podnuma.errors import InputError
from podnuma.fieldkit import field_path, type_name, unknown_field
from podnuma.inputs.documents import parse_document

__all__ = [
    "OPTION",
    "Override",
    "apply_overrides",
    "blame",
    "effective_config",
    "parse_override",
    "parse_overrides",
    "request_overrides",
    "set_by",
]

#: how messages name the option
OPTION = "--set"

#: the largest list index a path may give (the configuration's lists, such
#: as ``reservedMemory``, hold a few items; an index past the end is refused
#: when the override is applied, this bound before anything is built)
MAX_INDEX = 1024

# (patterns, compiled by ``re`` when first used: only --set needs them)
_SEGMENT = r"^([^.\[\]]+)((?:\[\d+\])*)$"
_INDEX = r"\[(\d+)\]"

#: fields whose values the kubelet checks against a fixed list at start-up:
#: refused here already, naming ``--set`` (the same lists the loader uses)
_CHOICES: dict[str, tuple[str, ...]] = {
    "cpuManagerPolicy": tuple(CPU_MANAGER_POLICIES),
    "memoryManagerPolicy": tuple(MEMORY_MANAGER_POLICIES),
    "topologyManagerPolicy": tuple(TOPOLOGY_MANAGER_POLICIES),
    "topologyManagerScope": tuple(TOPOLOGY_MANAGER_SCOPES),
}

Key = str | int


class Override:
    """One ``--set PATH=VALUE``: ``path`` as given, ``keys`` the field names
    and list indexes it walks, ``value`` the value read (``None``: remove
    the field), ``text`` the value as given."""

    path: str
    keys: tuple[Key, ...]
    value: Any
    text: str

    def __init__(self, path: str, keys: tuple[Key, ...], value: Any, text: str) -> None:
        self.path = path
        self.keys = keys
        self.value = value
        self.text = text

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(path={self.path!r}, keys={self.keys!r}, value={self.value!r}, text={self.text!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Override) or other.__class__ is not self.__class__:
            return False
        return (self.path, self.keys, self.value, self.text) == (other.path, other.keys, other.value, other.text)

    def __hash__(self) -> int:
        return hash((self.path, self.keys, self.value, self.text))

    def __str__(self) -> str:
        return f"{self.path}={self.text}"


#: the most characters of a value or a path a message quotes whole
_SHOWN = 60


def _shown(value: object) -> str:
    """``value`` quoted in a message (``repr``), a long one cut to its first
    characters and its length: a 20,000-character value, or one nested
    5,000 deep, makes one readable line, not the value again."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= _SHOWN:
        return repr(value) if not isinstance(value, str) else repr(text)
    return f"{text[:_SHOWN]!r}... ({len(text)} characters)"


def _short_path(path: str) -> str:
    """A field path (or a ``PATH=VALUE``) in a message, unquoted: a long
    one cut (a map key, a value may be long)."""
    return path if len(path) <= 80 else f"{path[:77]}... ({len(path)} characters)"


def _error(message: str, path: str) -> InputError:
    return InputError(message, path=_short_path(path), file=OPTION)


def _split(path: str) -> list[Key]:
    """``a.b[1].c`` -> ``["a", "b", 1, "c"]`` (no schema yet: map keys with
    dots are joined back by :func:`_resolve`)."""
    keys: list[Key] = []
    for part in path.split("."):
        m = re.match(_SEGMENT, part)
        if m is None:
            raise _error("not a field path (NAME, NAME.KEY or NAME[INDEX], joined by dots)", path)
        keys.append(m.group(1))
        for i in re.findall(_INDEX, m.group(2)):
            # (checked on the digits: a 5,000-digit index is not read as a number)
            if len(i.lstrip("0")) > len(str(MAX_INDEX)) or int(i) > MAX_INDEX:
                raise _error(f"index {i[:20]}{'...' if len(i) > 20 else ''} is larger than {MAX_INDEX} "
                             "(a configuration's lists are short; one past the end appends)", path)
            keys.append(int(i))
    return keys


def _resolve(path: str, raw: list[Key]) -> tuple[tuple[Key, ...], Any]:
    """Walk the schema along ``raw``: the keys (a map key that held dots
    joined again) and the schema of the field they reach."""
    schema: Any = SCHEMA
    keys: list[Key] = []
    where = ""
    i = 0
    while i < len(raw):
        key = raw[i]
        if isinstance(schema, str):
            raise _error(f"is {_kind(schema)}: it has no field {_shown(key)}", where)
        kind, inner = schema
        if kind == "list":
            if not isinstance(key, int):
                raise _error(f"is a list: give an index ({where}[N])", where)
            keys.append(key)
            where = f"{where}[{key}]"
            schema = inner
            i += 1
            continue
        if isinstance(key, int):
            raise _error(f"is {'a map' if kind == 'map' else 'an object'}, not a list", where)
        if kind == "struct":
            if key not in inner:
                import difflib  # the suggestion: loaded only for an unknown key

                hint = difflib.get_close_matches(key, sorted(inner), n=1, cutoff=0.75)
                shown = key if len(key) <= _SHOWN else f"{key[:_SHOWN]}... ({len(key)} characters)"
                err = unknown_field(where, shown, hint[0] if hint else None)
                raise _error(err.message, field_path(where, key))
            keys.append(key)
            where = f"{where}.{key}" if where else key
            schema = inner[key]
            i += 1
            continue
        # a map: a map of scalars takes the rest of the path as its key
        # (evictionHard.memory.available), dots included
        if isinstance(inner, str):
            rest = raw[i:]
            if not all(isinstance(k, str) for k in rest):
                raise _error("is a map: its key holds no index", where)
            name = ".".join(str(k) for k in rest)
            i = len(raw)
        else:
            name = key
            i += 1
        keys.append(name)
        where = f"{where}.{name}"
        schema = inner
    return tuple(keys), schema


def _kind(schema: Any) -> str:
    if isinstance(schema, str):
        return {"string": "a string", "bool": "a boolean", "float": "a number", "any": "a value"}.get(
            schema, "an integer"
        )
    return {"list": "a list", "map": "a map", "struct": "an object"}[schema[0]]


def _read_value(text: str, path: str) -> Any:
    """``text`` as the configuration file reads a YAML value."""
    try:
        return parse_document(text, name=OPTION).data
    except InputError as e:
        raise _error(f"the value {_shown(text)} is not YAML: {e.message}", path) from None


def parse_override(item: str) -> Override:
    """One ``PATH=VALUE``, checked against the v1beta1 fields."""
    path, sep, text = item.partition("=")
    path = path.strip()
    if not sep or not path:
        raise InputError(f"{_shown(item)}: expected PATH=VALUE (e.g. cpuManagerPolicy=static)", file=OPTION)
    keys, schema = _resolve(path, _split(path))
    value = _read_value(text, path)
    if schema == "string" and value is not None and not isinstance(value, Mapping | list):
        # a string field takes the text as written (a quoted text unquoted)
        value = value if isinstance(value, str) else text.strip()
    if value is not None:
        _check_type(keys, value, path)
    if keys and keys[0] == "featureGates":
        _check_gates(keys, value, path)
    if len(keys) == 1 and keys[0] in _CHOICES and value is not None:
        allowed = _CHOICES[str(keys[0])]
        if value not in allowed:
            raise _error(f"must be one of {', '.join(allowed)}, got {_shown(value)}", path)
    return Override(path, keys, value, text)


def _check_type(keys: tuple[Key, ...], value: Any, path: str) -> None:
    """The value decodes into the field (as the kubelet's decoder would):
    the field kit's wording, at the field's path; unknown fields inside a
    mapping value are refused too."""
    doc: Any = value
    for key in reversed(keys):
        doc = [None] * key + [doc] if isinstance(key, int) else {key: doc}
    try:
        problem = strict_decoding_error(doc)
    except InputError as e:
        raise _error(e.message, e.path or path) from None
    if problem:
        raise _error(problem.removeprefix("strict decoding error: "), path)


def _check_gates(keys: tuple[Key, ...], value: Any, path: str) -> None:
    gates: Mapping[str, Any]
    if len(keys) == 1:
        gates = value if isinstance(value, Mapping) else {}
    else:
        gates = {str(keys[1]): value}
    for name in gates:
        if name not in KNOWN_FEATURES and name not in OTHER_KNOWN_GATES:
            import difflib  # the suggestion: loaded only for an unknown gate

            hint = difflib.get_close_matches(name, sorted(KNOWN_FEATURES), n=1, cutoff=0.8)
            more = f' (did you mean "{hint[0]}"?)' if hint else ""
            raise _error(f"unknown feature gate {_shown(name)} (kubelet v1.37){more}", f"featureGates.{name}")


def parse_overrides(items: Sequence[str]) -> tuple[Override, ...]:
    """Every ``--set`` value, in order; the first bad one raises."""
    return tuple(parse_override(item) for item in items)


def request_overrides(value: object) -> tuple[Override, ...]:
    """The overrides of a web request's ``set`` field: ``PATH=VALUE`` lines
    in one text (blank lines and ``#`` comments ignored) or a list of
    ``PATH=VALUE`` strings; ``None``: none."""
    if value is None:
        return ()
    if isinstance(value, str):
        lines = [ln.strip() for ln in value.splitlines()]
        return parse_overrides([ln for ln in lines if ln and not ln.startswith("#")])
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return parse_overrides(value)
    raise InputError(f"must be PATH=VALUE lines (a string) or a list of strings, got {type_name(value)}",
                     path="set")


def _copy(holder: Any) -> Any:
    """A shallow copy of a mapping (keeping the key/value pairs of a
    :class:`JSONObject`, duplicates included, and the kind of a
    :class:`YAMLObject`) or a list."""
    if isinstance(holder, JSONObject):
        out = JSONObject(holder)
        out.pairs = list(holder.pairs)
        return out
    if isinstance(holder, YAMLObject):  # (a YAML file's: its numbers read as the codec reads them)
        return yaml_object(holder, holder.duplicates)
    if isinstance(holder, Mapping):
        return dict(holder)
    if isinstance(holder, list):
        return list(holder)
    return None


def _put(holder: Any, key: Key, value: Any, *, delete: bool) -> None:
    if isinstance(key, int):
        if key < len(holder):
            holder[key] = value
        elif not delete:
            holder.extend([None] * (key - len(holder)))
            holder.append(value)
        return
    if delete:
        holder.pop(key, None)
    else:
        holder[key] = value
    if isinstance(holder, JSONObject):
        pairs = [(k, v) for k, v in holder.pairs if k != key]
        if not delete:
            pairs.append((key, value))
        holder.pairs = pairs


def _apply_one(doc: Any, o: Override) -> Any:
    root = _copy(doc) if doc is not None else {}
    holder = root
    where = ""
    for i, key in enumerate(o.keys):
        last = i == len(o.keys) - 1
        where = f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else key)
        if isinstance(key, int) and key > len(holder) and o.value is not None:
            # (one past the end appends; further would leave empty items)
            raise InputError(f"{_short_path(str(o))}: {_short_path(where)}: past the end of the list "
                             f"({len(holder)} item(s); "
                             f"index {len(holder)} appends one)", file=OPTION)
        if last:
            _put(holder, key, o.value, delete=o.value is None)
            break
        nxt_is_index = isinstance(o.keys[i + 1], int)
        if isinstance(key, int):
            child = holder[key] if key < len(holder) else None
        else:
            child = holder.get(key)
        if child is None:
            if o.value is None:
                break  # removing under an absent field: nothing to remove
            child = [] if nxt_is_index else {}
        else:
            want = list if nxt_is_index else Mapping
            if not isinstance(child, want):
                raise InputError(
                    f"{_short_path(str(o))}: the configuration holds {type_name(child)} at {_short_path(where)}",
                    file=OPTION,
                )
            child = _copy(child)
        _put(holder, key, child, delete=False)
        holder = child
    return root


def set_by(path: str, overrides: Sequence[Override]) -> Override | None:
    """The last override that set the configuration field at ``path`` (from
    the configuration's top: ``kubeReserved.cpu``, ``reservedMemory[0]``) or
    a field holding it, else ``None``."""
    for o in reversed(overrides):
        p = functools.reduce(field_path, o.keys, "")  # (a.b, a[0].b)
        if path == p or path.startswith((p + ".", p + "[")):
            return o
    return None


def blame(err: InputError, overrides: Sequence[Override]) -> InputError:
    """``err``, an error of a configuration with ``overrides`` applied (its
    path from the configuration's top), on ``--set`` when an override set
    that field: the value came from the command line, not from the file."""
    if overrides and err.path and set_by(err.path, overrides) is not None:
        return InputError(err.message, path=err.path, file=OPTION)
    return err


def apply_overrides(doc: Mapping[str, Any] | None, overrides: Sequence[Override]) -> dict[str, Any]:
    """``doc`` (a KubeletConfiguration document; ``None``: empty) with
    ``overrides`` applied in order; ``doc`` itself is not changed."""
    out: Any = _copy(doc) if doc is not None else {}
    for o in overrides:
        out = _apply_one(out, o)
    result: dict[str, Any] = out
    return result


def effective_config(doc: Mapping[str, Any] | None, overrides: Sequence[Override]) -> dict[str, Any]:
    """What a result document records as the configuration it ran with:
    ``doc`` with the overrides applied, as plain JSON-ready data."""
    plain: dict[str, Any] = _plain(apply_overrides(doc, overrides))
    return plain


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
