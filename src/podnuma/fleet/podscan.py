"""Pod dumps read fast: item boundaries found once, pods decoded by whoever
replays their node, from byte ranges.

A ``kubectl get pods -o json`` dump is one JSON list; a large cluster's is
gigabytes. Reading it goes in two steps, both done where the replay runs
(a Dask worker, a pool process, or this process):

1. :func:`index_pod_file` reads one file (the bounded read of
   :mod:`podnuma.inputs.documents`: size limit, UTF-8), decodes it with
   msgspec -- once as the list's raw items (their lengths give each item's
   byte range) and once as the two fields it needs per item (``kind``,
   ``spec.nodeName``), skipping the rest in C -- and gives, per node, the
   byte ranges of its pods (a node's consecutive pods are one range) and the
   counts. No pod object leaves the reader.
2. :func:`read_ranges` reads those ranges back (``pread``) and decodes
   only the fields the replay reads into typed structs, then into the
   compact pod :func:`podnuma.fleet.pods.compact_pod` makes.

A file the fast path does not take as a clean list of pods (not JSON, not a
list, another kind of object in it, invalid UTF-8, a value msgspec refuses,
nesting deeper than the decoder allows, a truncated dump...) is read by the
general reader instead (:mod:`podnuma.fleet.files`), with its limits and
wording: the fast path decides nothing about a hostile file but "not
mine". Values nested inside fields the replay does not read are skipped,
never built, so they are not counted against the depth limit.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.fleet.model import Issue
from podnuma.fleet.pods import compact_pod, is_pod, read_node_pods, with_ranged_pods
from podnuma.inputs.documents import check_tree, read_bytes
from podnuma.inputs.limits import FLEET_LIMITS

__all__ = ["PodFileIndex", "Range", "index_pod_file", "read_ranges", "pods_of_ranges", "node_pods"]

#: ``(file, start, end)``: the bytes ``[start, end)`` of ``file`` hold one or
#: more complete list items, separated by commas and white space.
Range = tuple[str, int, int]

_ITEMS = re.compile(rb'"items"\s*:\s*\[')
_SEP = re.compile(rb"[ \t\r\n]*,?[ \t\r\n]*")
_POD_HEAD = re.compile(rb'"kind"\s*:\s*"Pod"')
_HEAD = 65536

Unset = msgspec.UnsetType
UNSET = msgspec.UNSET


class _Top(msgspec.Struct):
    kind: Any = None
    items: list[msgspec.Raw] | None = None


class _PeekSpec(msgspec.Struct):
    nodeName: Any = None


class _Peek(msgspec.Struct):
    kind: Any = None
    spec: _PeekSpec | None = None


class _TopPeek(msgspec.Struct):
    items: list[_Peek] = []


# the fields :func:`podnuma.fleet.pods.compact_pod` keeps, and no other


class _Ctr(msgspec.Struct):
    name: Any | Unset = UNSET
    resources: Any | Unset = UNSET
    restartPolicy: Any | Unset = UNSET


_TOP = msgspec.json.Decoder(_Top)
_TOP_PEEK = msgspec.json.Decoder(_TopPeek)
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError)
_META_KEYS = ("name", "namespace", "uid", "labels", "annotations", "ownerReferences",
              "creationTimestamp", "generateName")
_CTR_KEYS = ("name", "resources", "restartPolicy")


@dataclass
class PodFileIndex:
    """What one pods file holds: per node, its pods' byte ranges and count."""

    file: str
    ranges: dict[str, list[Range]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    pods: int = 0
    unbound: int = 0


def index_pod_file(path: Path) -> PodFileIndex | None:
    """The index of a JSON list of pods, or ``None`` when the file is not a
    clean one (the general reader then reads it and words its problems)."""
    if path.suffix.lower() != ".json":
        return None
    name = str(path)
    try:
        data = read_bytes(path, what="input", name=name, limits=FLEET_LIMITS)
    except InputError:
        return None
    if _POD_HEAD.search(data, 0, _HEAD) is None:
        return None
    try:
        data.decode("utf-8")  # the general reader refuses a file that is not UTF-8
        top = _TOP.decode(data)
        peek = _TOP_PEEK.decode(data).items
    except _DECODE_ERRORS:
        return None
    items = top.items
    if items is None or not items or len(peek) != len(items) or not (
        isinstance(top.kind, str) and top.kind.endswith("List") or top.kind is None
    ):
        return None
    m = _ITEMS.search(data)
    if m is None:
        return None
    out = PodFileIndex(file=name)
    starts = _item_starts(data, m.end(), items)
    if starts is None:
        return None
    prev: str | None = None
    for start, raw, p in zip(starts, items, peek, strict=True):
        if p.kind != "Pod":
            return None
        out.pods += 1
        node = p.spec.nodeName if p.spec is not None else None
        if type(node) is not str or not node:
            out.unbound += 1
            prev = None
            continue
        end = start + len(raw)
        out.counts[node] = out.counts.get(node, 0) + 1
        if prev == node:
            runs = out.ranges[node]
            runs[-1] = (name, runs[-1][1], end)
        else:
            out.ranges.setdefault(node, []).append((name, start, end))
        prev = node
    return out


def _item_starts(data: bytes, pos: int, items: list[msgspec.Raw]) -> list[int] | None:
    """Where each item of the list starting at ``pos`` begins, or ``None``
    when the items are not where the decoder found them. The separators of
    a dump written by one program are all alike (``kubectl`` and ``json``
    write ``,`` and the same indent): the items joined by the first
    separator are compared with the file's bytes in one go; else each item
    is looked for in turn."""
    first = _SEP.match(data, pos)
    assert first is not None  # matches the empty text
    start = first.end()
    lengths = [len(r) for r in items]
    if len(items) > 1:
        end0 = start + lengths[0]
        sep_m = _SEP.match(data, end0)
        assert sep_m is not None
        sep = data[end0: sep_m.end()]
        last = start + sum(lengths) + len(sep) * (len(items) - 1)
        if last <= len(data) and data.startswith(sep.join(items), start):
            out = [start]
            step = len(sep)
            for n in lengths[:-1]:
                start += n + step
                out.append(start)
            return out
    out = []
    for raw, n in zip(items, lengths, strict=True):
        if not data.startswith(raw, start):
            return None  # "items" matched elsewhere: not a layout this reader knows
        out.append(start)
        m = _SEP.match(data, start + n)
        assert m is not None
        start = m.end()
    return out


class _SpecRaw(msgspec.Struct):
    nodeName: Any | Unset = UNSET
    resources: msgspec.Raw | Unset = UNSET
    overhead: msgspec.Raw | Unset = UNSET
    restartPolicy: msgspec.Raw | Unset = UNSET
    initContainers: msgspec.Raw | Unset = UNSET
    containers: msgspec.Raw | Unset = UNSET


class _MetaRaw(msgspec.Struct):
    name: Any | Unset = UNSET
    namespace: Any | Unset = UNSET
    uid: Any | Unset = UNSET
    labels: Any | Unset = UNSET
    annotations: msgspec.Raw | Unset = UNSET
    ownerReferences: Any | Unset = UNSET
    creationTimestamp: Any | Unset = UNSET
    generateName: Any | Unset = UNSET


class _Status(msgspec.Struct):
    phase: Any | Unset = UNSET
    startTime: Any | Unset = UNSET
    qosClass: Any | Unset = UNSET


class _PodRaw(msgspec.Struct):
    kind: Any = None
    metadata: _MetaRaw | None = None
    spec: _SpecRaw | None = None
    status: _Status | None = None


_PODS_RAW = msgspec.json.Decoder(list[_PodRaw])
_ANY = msgspec.json.Decoder()
_CTRS = msgspec.json.Decoder(list[_Ctr])
_SPEC_FIELDS = ("resources", "overhead", "restartPolicy")


class KeyedSpec(dict[str, Any]):
    """A compact pod's ``spec`` that knows the bytes it was decoded from:
    ``key`` is the same for two pods exactly when the fields the replay
    reads of their spec (all but ``nodeName``), their namespace and their
    annotations are the same bytes. The parse of a pod is memoised on it
    (:func:`podnuma.fleet.replay._parse`)."""

    __slots__ = ("key",)
    key: tuple[Any, ...]


#: the decoded spec (without ``nodeName``) and annotations of each distinct
#: key, shared by the pods that have it: decoded once per process
_SPECS: dict[tuple[Any, ...], tuple[dict[str, Any], Any]] = {}
_SPECS_LIMIT = 4096


def _part(raw: msgspec.Raw | Unset) -> bytes | None:
    return None if raw is UNSET else bytes(raw)


def _spec_of(key: tuple[Any, ...], s: _SpecRaw, ann: msgspec.Raw | Unset) -> tuple[dict[str, Any], Any]:
    got = _SPECS.get(key)
    if got is not None:
        return got
    rest: dict[str, Any] = {}
    for k in _SPEC_FIELDS:
        v = getattr(s, k)
        if v is not UNSET:
            rest[k] = _ANY.decode(v)
    for k in ("initContainers", "containers"):
        v = getattr(s, k)
        if v is not UNSET:
            rest[k] = [_ctr(c) for c in _CTRS.decode(v)]
    got = (rest, UNSET if ann is UNSET else _ANY.decode(ann))
    if len(_SPECS) >= _SPECS_LIMIT:
        _SPECS.clear()
    _SPECS[key] = got
    return got


def _ctr(c: _Ctr) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if c.name is not UNSET:
        d["name"] = c.name
    if c.resources is not UNSET:
        d["resources"] = c.resources
    if c.restartPolicy is not UNSET:
        d["restartPolicy"] = c.restartPolicy
    return d


def _keyed(p: _PodRaw) -> dict[str, Any]:
    """The compact pod of ``p``, its spec a :class:`KeyedSpec`."""
    m = p.metadata
    s = p.spec
    ns = None if m is None else m.namespace
    if ns is not UNSET and ns is not None and not isinstance(ns, str):
        raise ValueError("namespace is not a string")  # the general decoding words it
    ann = UNSET if m is None else m.annotations
    if s is None:
        s = _SpecRaw()
    key = (ns, _part(ann), _part(s.resources), _part(s.overhead), _part(s.restartPolicy),
           _part(s.initContainers), _part(s.containers))
    rest, annotations = _spec_of(key, s, ann)
    meta: dict[str, Any] = {}
    if m is not None:
        for k in _META_KEYS:
            v = annotations if k == "annotations" else getattr(m, k)
            if v is not UNSET:
                meta[k] = dict(v) if k == "annotations" and type(v) is dict else v
    spec = KeyedSpec()
    if s.nodeName is not UNSET:
        spec["nodeName"] = s.nodeName
    spec.update(rest)
    spec.key = key
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    st = p.status
    if st is not None:
        status = {k: v for k, v in (("phase", st.phase), ("startTime", st.startTime),
                                    ("qosClass", st.qosClass)) if v is not UNSET}
        if status:
            doc["status"] = status
    return doc


def _decode_range(chunk: bytes, name: str) -> list[Any]:
    """The items of ``chunk`` (complete items and separators): compact pods,
    or, when the typed decoder refuses them (a field of another type, an
    escape it does not take), plain values as the general reader gives."""
    text = b"[" + chunk + b"]"
    try:
        return [_keyed(p) for p in _PODS_RAW.decode(text)]
    except _DECODE_ERRORS:
        pass
    items = json.loads(text, object_pairs_hook=json_object_pairs)
    check_tree(items, name=name, limits=FLEET_LIMITS)
    return [compact_pod(d) if is_pod(d) else d for d in items]


def read_ranges(
    ranges: Iterable[Range],
) -> Iterable[tuple[Range, list[Any] | InputError]]:
    """The items of each range (in the order given), or the error that
    stopped reading it (a file changed since it was indexed)."""
    by_file: dict[str, list[Range]] = {}
    for r in ranges:
        by_file.setdefault(r[0], []).append(r)
    for f in sorted(by_file):
        try:
            fd = os.open(f, os.O_RDONLY)
        except OSError as e:
            err = InputError(f"cannot read: {e.strerror or e}", file=f)
            for r in by_file[f]:
                yield r, err
            continue
        try:
            for r in by_file[f]:
                chunk = os.pread(fd, r[2] - r[1], r[1])
                try:
                    if len(chunk) != r[2] - r[1]:
                        raise ValueError("the file is shorter than when it was indexed")
                    yield r, _decode_range(chunk, f)
                except (ValueError, RecursionError) as e:
                    yield r, InputError(f"changed since it was indexed, or unreadable: {e}", file=f)
                except InputError as e:
                    yield r, e
        finally:
            os.close(fd)


def pods_of_ranges(
    node_ranges: Mapping[str, Sequence[Range]],
) -> tuple[dict[str, list[Any]], list[tuple[str, InputError]]]:
    """Each node's items, in the order of its ranges; the errors by node."""
    owner: dict[Range, list[str]] = {}
    for node, rs in node_ranges.items():
        for r in rs:
            owner.setdefault(r, []).append(node)
    out: dict[str, list[Any]] = {n: [] for n in node_ranges}
    got: dict[Range, list[Any]] = {}
    errors: list[tuple[str, InputError]] = []
    for r, items in read_ranges(owner):
        if isinstance(items, InputError):
            errors.extend((n, items) for n in owner[r])
            continue
        got[r] = items
    for node, rs in node_ranges.items():
        for r in rs:
            out[node].extend(got.get(r, ()))
    return out, errors


def node_pods(
    node: str, files: Iterable[str], ranges: Sequence[tuple[str, int, int]]
) -> tuple[list[dict[str, Any]], list[Issue]]:
    """The active pods of ``node`` in ``files`` and byte ``ranges``,
    compacted, in start order; with the problems met reading them."""
    by_node, issues = read_node_pods(files, [node]) if files else ({node: []}, [])
    if not ranges:
        return by_node[node], issues
    got, errors = pods_of_ranges({node: ranges})
    issues.extend(Issue("warning", e.message, node=node, file=e.file) for _, e in errors)
    return with_ranged_pods(node, by_node[node], got[node]), issues
