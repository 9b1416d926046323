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
from collections.abc import Mapping
from typing import Any

from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import (
    IDENTITY_FIELDS,
    FeatureGateView,
    parse_pod,
    with_identity_of,
)

__all__ = ["PodParses"]


class PodParses:
    """``parse_pod(doc, gates=gates)`` for the pods of one run, memoised on
    the manifest's content but for its identity (at most ``limit``
    manifests kept; past that the memo starts afresh)."""

    def __init__(self, gates: FeatureGateView, *, limit: int = 4096) -> None:
        self._gates = gates
        self._limit = limit
        self._pods: dict[bytes, Pod] = {}

    def parse(self, doc: Mapping[str, Any]) -> Pod:
        key = _key(doc)
        if key is None:
            return parse_pod(doc, gates=self._gates)
        template = self._pods.get(key)
        if template is not None:
            meta: dict[str, Any] = doc["metadata"]
            return with_identity_of(template, meta)
        pod = parse_pod(doc, gates=self._gates)
        if len(self._pods) >= self._limit:
            self._pods.clear()
        self._pods[key] = pod
        return pod


def _key(doc: Mapping[str, Any]) -> bytes | None:
    """The manifest without its metadata's identity fields, as bytes that
    are equal only for equal contents (marshal keeps every value's type;
    keys in another order only miss the memo); ``None`` when it cannot be
    keyed so (not plain dictionaries with string keys, or values marshal
    does not write): such a manifest is parsed in full."""
    if type(doc) is not dict:
        return None
    meta = doc.get("metadata")
    if type(meta) is not dict:
        return None
    rest = []
    for k, v in meta.items():
        if type(k) is not str:
            return None
        if k not in IDENTITY_FIELDS:
            rest.append((k, v))
    try:
        return marshal.dumps(
            (rest, [(k, v) for k, v in doc.items() if k != "metadata"]), 2
        )
    except ValueError:
        return None
