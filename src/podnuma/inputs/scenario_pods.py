"""The pods of one scenario, each distinct manifest parsed once.

A long scenario adds the same few pod templates over and over, pod after
pod differing only in name, UID and labels (a Deployment's replicas).
:class:`PodParses` keeps, for one run, the parsed and validated pod of
each manifest it has seen, keyed on the manifest without those fields;
a later manifest with the same key gets a copy of that pod under its own
name, UID and labels, which are checked exactly as
:func:`~podnuma.api.pod_manifest.parse_pod` checks them (the same
refusals, messages and field paths: every other check is one the first
pod passed on the same content). A manifest that fails is parsed in
full each time (its error is the answer; nothing is kept for it).

A speed module: the parse is the most expensive part of reading a step.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Mapping
from typing import Any

from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import (
    IDENTITY_FIELDS,
    FeatureGateView,
    parse_pod,
    with_identity_of,
)
from podnuma.api.pod_schema import fold_name
from podnuma.api.pod_types import Numbers

__all__ = ["PodParses"]


class PodParses:
    """``parse_pod(doc, gates=gates)`` for the pods of one run, memoised on
    the manifest's content but for its identity (at most ``limit``
    manifests kept; past that the memo starts afresh), decoded as the
    kubelet oracle decodes a scenario's pods (keys sorted, an unknown field
    where it is met; ``json_text``: a JSON file's, whose numbers reach the
    decoder as their text; false: a YAML file's, through float64; by
    default as read, :data:`~podnuma.api.pod_types.Numbers`). ``plain``: the
    manifests hold JSON's types only (dict, list, str, int, float, bool,
    ``None``: a JSON decoder's output), which MessagePack writes apart from
    each other faster than marshal does (msgspec is imported then: give it
    only for a run long enough to pay for that import)."""

    def __init__(self, gates: FeatureGateView, *, limit: int = 4096, plain: bool = False,
                 json_text: bool | None = None) -> None:
        self._gates = gates
        self._limit = limit
        self._pods: dict[bytes, Pod] = {}
        self._dumps: Callable[[Any], bytes] = _msgpack_dumps() if plain else _marshal
        self._numbers: Numbers = "as-read" if json_text is None else "text" if json_text else "float"

    def parse(self, doc: Mapping[str, Any]) -> Pod:
        key = _key(doc, self._dumps)
        if key is None:
            return self._parse(doc)
        template = self._pods.get(key)
        if template is not None:
            meta: dict[str, Any] = doc["metadata"]
            return with_identity_of(template, meta, sort_keys=True, numbers=self._numbers)
        pod = self._parse(doc)
        if len(self._pods) >= self._limit:
            self._pods.clear()
        self._pods[key] = pod
        return pod


    def _parse(self, doc: Mapping[str, Any]) -> Pod:
        return parse_pod(doc, gates=self._gates, sort_keys=True, numbers=self._numbers, unknown_in_order=True)


#: msgspec's MessagePack encoder and what it raises, once msgspec is imported
_msgpack_encode: Any = None
_msgpack_errors: tuple[type[BaseException], ...] = ()


def _msgpack_dumps() -> Callable[[Any], bytes]:
    """:func:`_msgpack`, msgspec imported."""
    global _msgpack_encode, _msgpack_errors
    if _msgpack_encode is None:
        import podnuma.inputs.msgspec_import  # noqa: F401 (msgspec without typing_extensions)

        # isort: split
        import msgspec

        _msgpack_encode = msgspec.msgpack.Encoder().encode
        _msgpack_errors = (TypeError, OverflowError, msgspec.EncodeError)
    return _msgpack


def _marshal(value: Any) -> bytes:
    return marshal.dumps(value, 2)


def _msgpack(value: Any) -> bytes:
    """``value`` (JSON's types only) as MessagePack: each type has its own
    codes (a float's eight bytes, NaN included, apart from an int's), lists
    and maps carry their lengths; too large an int is refused."""
    try:
        encoded: bytes = _msgpack_encode(value)
    except _msgpack_errors:
        raise ValueError from None
    return encoded


#: the identity fields, folded as ``encoding/json`` matches a key to a field
_IDENTITY_FOLDED = frozenset(fold_name(k) for k in IDENTITY_FIELDS)


def _key(doc: Mapping[str, Any], dumps: Callable[[Any], bytes] = _marshal) -> bytes | None:
    """The manifest without its metadata's identity fields, as bytes that
    are equal only for equal contents (``dumps``, marshal or MessagePack,
    keeps every value's type; keys in another order only miss the memo);
    ``None`` when it cannot be keyed so (not plain dictionaries with string
    keys, or values ``dumps`` does not write, or the metadata or an identity
    field also given in another case, which Go's decoder matches to it): such
    a manifest is parsed in full."""
    if type(doc) is not dict:
        return None
    meta = doc.get("metadata")
    if type(meta) is not dict:
        return None
    for k in doc:
        if k != "metadata" and type(k) is str and fold_name(k) == "METADATA":
            return None  # (another spelling of it: decoded into the same metadata)
    rest = []
    for k, v in meta.items():
        if type(k) is not str:
            return None
        if k not in IDENTITY_FIELDS:
            if fold_name(k) in _IDENTITY_FOLDED:
                return None  # (another spelling of an identity field: Go decodes it into that field)
            rest.append((k, v))
    try:
        return dumps((rest, [(k, v) for k, v in doc.items() if k != "metadata"]))
    except ValueError:
        return None
