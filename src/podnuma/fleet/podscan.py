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

Where the replay runs in the process that indexes (one process), the
second pass over each dump is the typed decoding of the whole dump, made
once by the index, whose pods are kept until their node's ranges are
asked for (``hold``: a fleet of at most :data:`HOLD_BYTES` of JSON
files, :func:`podnuma.fleet.inputs.load_fleet`; never more than that
kept at a time): each dump is decoded twice rather than three times, its
pods once.

Where the fleet is read on a cluster or a pool, a large dump is read in
pieces (:func:`cut_pieces`, :func:`index_piece`): each piece the items that
begin in its bytes, found by the layout of the dump's first item, decoded
where they were read and indexed as a whole dump's are; the pieces of a
dump are taken together, or the dump read whole, by
:mod:`podnuma.fleet.inputs`.

A dump may be written again while the fleet is read (a ``kubectl get pods
-o json > pods.json`` run again meanwhile). Its index and the bytes its
ranges are read from must be of one version: each reading of a dump takes
the status of the descriptor it reads from before and after (the whole
file, :func:`read_dump`; a piece, against the dump as it was cut) and
keeps its identity (size, modification time, inode: :func:`file_ident`)
in the name of the file its ranges give (:class:`DumpName`); reading a
range back compares it with the file's, before and after, and says
:data:`CHANGED` rather than read another version's bytes as the index's
pods. No byte is read twice for it, nothing is done per pod.

A file the fast path does not take as a clean list of pods (not JSON, not a
list, another kind of object in it, an item, ``metadata`` or ``spec`` that
is not a mapping, a ``spec.nodeName`` that is not a string, invalid UTF-8,
a value msgspec refuses, nesting deeper than the decoder allows, a
truncated dump, a pod the apiserver cannot have served: bound to a node
without a name, a ``status``, ``status.phase`` or
``metadata.ownerReferences`` of another type, as
:func:`podnuma.fleet.files.left_out` leaves out...) is read by the
general reader instead
(:mod:`podnuma.fleet.files`), with its limits and wording: the fast path
decides nothing about a hostile file but "not mine". Values nested
inside fields the replay does not read are skipped, never built, so they
are not counted against the depth limit.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import operator
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

try:  # hashlib's own blake2b, without hashlib's OpenSSL bindings (2-3 ms of start-up)
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b as _blake2b

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.fleet.dumpfile import (
    CHANGED,
    READ_TRIES,
    DumpChanged,
    DumpName,
    file_ident,
    ident_of,
    read_dump,
)
from podnuma.fleet.model import Issue
from podnuma.fleet.pods import (
    _UTC,
    ACTIVE_PHASES,
    compact_pod,
    is_pod,
    read_node_pods,
    start_order,
    with_allocation,
    with_ranged_pods,
)
from podnuma.golang.jsonnumbers import json_float
from podnuma.inputs.documents import (
    check_tree,
)
from podnuma.inputs.limits import FLEET_LIMITS
from podnuma.inputs.msgspec_import import msgspec  # (without typing_extensions)

__all__ = ["CHANGED", "HOLD_BYTES", "PIECE_BYTES", "READ_TRIES", "DumpChanged", "DumpName", "Piece",
           "PodFileIndex", "cut_pieces", "file_ident", "index_piece", "Range", "ScannedPod", "index_pod_file", "node_pods", "pod_key",
           "is_held", "pods_of_ranges", "read_dump", "read_ranges", "release_held"]

#: ``(file, start, end)``: the bytes ``[start, end)`` of ``file`` hold one or
#: more complete list items, separated by commas and white space. ``file``
#: is a :class:`DumpName` where the index knows the dump as it was read.
Range = tuple[str, int, int]


_ITEMS = re.compile(rb'"items"\s*:\s*\[')
_SEP = re.compile(rb"[ \t\r\n]*,?[ \t\r\n]*")
_WS = re.compile(rb"[ \t\r\n]*")
_POD_HEAD = re.compile(rb'"kind"\s*:\s*"Pod"')
#: a pods dump's head: kubectl's list of pods, or the API server's own
#: ``PodList`` (whose items say no kind)
_PODS_HEAD = re.compile(rb'"kind"\s*:\s*"Pod(?:List)?"')
#: the API server's own list of pods says so (its items say no kind)
_POD_LIST = re.compile(rb'"kind"\s*:\s*"PodList"')
#: a ``kind`` member
_KIND_KEY = re.compile(rb'"kind"\s*:')
_HEAD = 65536

Unset = msgspec.UnsetType
UNSET = msgspec.UNSET

# The decoded structs hold values decoded from JSON (no cycles): they are
# left out of the cyclic garbage collector (``gc=False``), which makes
# them cheaper to make and the collector's passes shorter.


class _Top(msgspec.Struct, gc=False):
    kind: Any = None
    items: list[msgspec.Raw] | None = None


class _PeekSpec(msgspec.Struct, gc=False):
    nodeName: Any = None


# What the apiserver would have made impossible in a pod is checked by the
# types below, in C, where it can be: an owner reference that is not an
# object with a non-empty ``kind`` and ``name`` (a boolean ``controller``),
# a ``status`` that is not an object, a ``status.phase`` that is not a
# string; the decoder refuses them and the file goes to the general reader,
# which says them and leaves the pod out
# (:func:`podnuma.fleet.files.left_out`). A pod bound to a node without a
# name is refused by :func:`_index_items`.

_NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class _PeekOwner(msgspec.Struct, gc=False):
    kind: _NonEmpty
    name: _NonEmpty
    controller: bool | None = None


class _PeekMeta(msgspec.Struct, gc=False):
    name: Any = None
    namespace: Any = None
    uid: Any = None
    ownerReferences: list[_PeekOwner] | None = None


class _PeekStatus(msgspec.Struct, gc=False):
    phase: str | None = None


class _Peek(msgspec.Struct, gc=False):
    kind: Any = None
    spec: _PeekSpec | None = None
    metadata: _PeekMeta | None = None
    status: _PeekStatus | None = None


def pod_key(namespace: object, name: object, uid: object) -> bytes:
    """A pod's identity across dumps and processes (namespace, name, uid):
    the same bytes in every process, unlike Python's salted ``hash``."""
    text = f"{namespace or 'default'}\0{name}\0{uid or ''}"
    return _blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()


class _TopPeek(msgspec.Struct, gc=False):
    items: list[_Peek] = []


# the fields :func:`podnuma.fleet.pods.compact_pod` keeps, and no other


class _Resources(msgspec.Struct, gc=False):
    """A container's ``resources``: the fields of v1.37.2's
    ``ResourceRequirements``; another (a newer API server's) is skipped,
    never built, as Go's decoder skips it (an integer too long to convert
    in it costs nothing)."""

    limits: Any | Unset = UNSET
    requests: Any | Unset = UNSET
    claims: Any | Unset = UNSET


class _Ctr(msgspec.Struct, gc=False):
    name: Any | Unset = UNSET
    resources: _Resources | None | Unset = UNSET
    restartPolicy: Any | Unset = UNSET


_TOP = msgspec.json.Decoder(_Top)
_TOP_PEEK = msgspec.json.Decoder(_TopPeek)
_DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError)
_META_KEYS = ("name", "namespace", "uid", "labels", "annotations", "ownerReferences",
              "creationTimestamp", "generateName")
_CTR_KEYS = ("name", "resources", "restartPolicy")
_RAW_META = ("labels",)  # decoded from their bytes


@dataclass
class PodFileIndex:
    """What one pods file holds: per node, its pods' byte ranges and count."""

    file: str
    ranges: dict[str, list[Range]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    pods: int = 0
    unbound: int = 0
    duplicated: int = 0
    #: per node, the byte range of each pod the file lists again (same
    #: namespace, name and uid as one before it in the file): left out of
    #: ``ranges``, read only to compare the copies (:mod:`podnuma.fleet.copies`)
    repeats: dict[str, list[Range]] = field(default_factory=dict)
    #: the pods of the file left out, said as the general reader says them
    #: (:func:`_index_by_item`)
    issues: list[Issue] = field(default_factory=list)


def index_pod_file(
    path: Path, seen: dict[bytes, str] | None = None, data: bytes | None = None, hold: bool = False,
    ident: int | None = None,
) -> PodFileIndex | None:
    """The index of a JSON list of pods, or ``None`` when the file is not a
    clean one (the general reader then reads it and words its problems).
    ``data``: the file's bytes when the caller read them (:func:`read_dump`),
    ``ident`` the identity it gave with them (else read here). ``hold``:
    the ranges are read back in this process (see :func:`release_held`):
    the pods are decoded whole once, here, and kept for that (up to
    :data:`HOLD_BYTES` of dumps at a time). The ranges name the file as a
    :class:`DumpName` when its identity is known: they are read back from
    that file only."""
    if path.suffix.lower() != ".json":
        return None
    name = str(path)
    if data is None:
        try:
            data, ident = read_dump(path, name)
        except InputError:
            return None
    if _PODS_HEAD.search(data, 0, _HEAD) is None and _POD_LIST.search(data, max(0, len(data) - _HEAD)) is None:
        return None  # (a PodList whose items come before its kind says it at its end)
    top: Any = None
    deep = False

    def raw_items(d: Any) -> Any:
        nonlocal top, deep
        try:
            top = _TOP.decode(d)
        except RecursionError:
            deep = True
            raise
        return top.items

    got = _decoded(data, data.isascii(), raw_items, lambda d: _TOP_PODS.decode(d).items,
                   lambda d: _TOP_PEEK.decode(d).items, hold)
    if got is None and deep:
        flat = shallow(data)
        if flat is not data:  # (the same length: the ranges are the file's)
            return index_pod_file(path, seen, flat, hold, ident)
    file = name if ident is None else DumpName(name, ident)
    if got is None:
        return _index_by_item(file, data, seen)
    if not (isinstance(top.kind, str) and top.kind.endswith("List") or top.kind is None):
        return None
    items, full, peek, weight = got
    m = _ITEMS.search(data)
    if m is None:
        return None
    lengths = list(map(len, items))
    starts = _item_starts(data, m.end(), items, lengths)
    if starts is None:
        return None
    got_index = _index_items(PodFileIndex(file=file), peek, full, starts, lengths, seen, weight, piece=False,
                             typed=top.kind == "PodList")
    if got_index is None:
        full, peek = None, []  # (let go before the items are read again)
        return _index_by_item(file, data, seen)
    return got_index


_PEEK_ONE = msgspec.json.Decoder(_Peek)

#: how deep (containers, from the text's own) :func:`shallow` keeps a
#: JSON text's values: no Kubernetes object nests deeper than about 15
#: levels, and the fleet's depth limit is 100
SHALLOW_DEPTH = 64
#: a JSON string (its escapes whole) or a bracket: what :func:`shallow` reads
_SHALLOW_TOKENS = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[\]{}]', re.DOTALL)


def shallow(data: bytes) -> bytes:
    """``data`` (JSON text) with every container nested deeper than
    :data:`SHALLOW_DEPTH` emptied: its contents made spaces, its brackets
    kept (so the text keeps its length, and its items their byte ranges,
    and the emptied value its type). For a text msgspec cannot decode for
    its nesting (past about 1,000 levels, within Go's 10,000): the values
    that deep are in fields the fleet does not read, which Go's decoder
    skips (and a field it reads that deep is of the wrong type either
    way). ``data`` itself when nothing is that deep. One pass, no
    recursion; strings are skipped whole (a bracket in one is text)."""
    depth = 0
    cut = -1
    spans: list[tuple[int, int]] = []
    limit = SHALLOW_DEPTH
    for m in _SHALLOW_TOKENS.finditer(data):
        c = data[m.start()]
        if c == 0x22:  # '"'
            continue
        if c in (0x5B, 0x7B):  # '[', '{'
            depth += 1
            if depth == limit + 1 and cut < 0:
                cut = m.end()
        else:
            if depth == limit + 1 and cut >= 0:
                if m.start() > cut:
                    spans.append((cut, m.start()))
                cut = -1
            depth -= 1
    if not spans:
        return data
    out = bytearray(data)
    for a, b in spans:
        out[a:b] = b" " * (b - a)
    return bytes(out)


def _index_by_item(file: str, data: bytes, seen: dict[bytes, str] | None) -> PodFileIndex | None:
    """The index of a dump that the whole dump's decoding did not take,
    when its only problems are pods the general reader leaves out
    (:func:`podnuma.fleet.files.item_left_out`: a lone surrogate in a pod,
    a field the apiserver validates of another type...): its items found
    by their layout, one a line or all on one line (as a piece's,
    :func:`_layout`, :func:`_split_items`; its frame checked as the last
    piece's, :func:`_list_end`), each decoded by itself, each one
    that is not a clean pod read by the general reader's rules, alone; the
    pods it leaves out are left out of the ranges, with its issues, in its
    words (:attr:`PodFileIndex.issues`). The dump is never built whole (a
    damaged pod of a large dump costs what the pod costs), and what comes
    out is what the general reader gives of the whole dump, but for a
    problem inside a field the fleet does not read (nesting past the depth
    limit, an integer too long to convert), which leaves out its item
    alone, as the clean fast path does (docs/limits.md). ``None`` (the
    whole dump to the general reader) for anything else: another layout,
    an item the general reader would read (or refuse the file for), not
    UTF-8."""
    from podnuma.fleet.files import ItemProblems, item_left_out
    from podnuma.fleet.nodescan import is_utf8

    got = _layout(data[:_HEAD])
    if got is None or not is_utf8(data):  # (checked a MiB at a time: the dump's text never made whole)
        return None
    items_at, marker = got
    ws = _WS.match(data, items_at)
    assert ws is not None  # matches the empty text
    first = ws.end()
    close = _list_end(data[:items_at], data, 1, first)  # (``data`` as a buffer of base 1: its own offsets)
    if close < 0:
        return None
    got_items = _split_items(data, first, close, marker)
    if got_items is None:
        return None
    starts, lengths, peek = got_items
    view = memoryview(data)
    problems = ItemProblems(str(file))

    def general(i: int) -> bool:
        text = str(view[starts[i]: starts[i] + lengths[i]], "utf-8")
        bad = item_left_out(text, str(file), "items", i)
        if bad is None:
            return False
        problems.add(bad)
        return True

    out = _index_items(PodFileIndex(file=file), peek, None, starts, lengths, seen, len(data), piece=False,
                       general=general)
    if out is not None:
        out.issues = problems.issues()
    return out


def _index_items(
    out: PodFileIndex, peek: list[Any], full: list[_PodRaw] | None, starts: list[int],
    lengths: list[int], seen: dict[bytes, str] | None, weight: int, *, piece: bool,
    general: Callable[[int], bool] | None = None, typed: bool = False,
) -> PodFileIndex | None:
    """``out`` filled with the items ``peek`` (their starts in ``out.file``
    and lengths; ``full``: the same items decoded whole, to hold), or
    ``None`` when one is not a clean pod. ``piece``: the items are a piece
    of the file (:func:`index_piece`), held beside the file's other pieces
    held here. The pods held are of the file's identity ``out.file``
    carries (a :class:`DumpName`), if any. ``general``: asked of an item
    that is not a clean pod (``None`` in ``peek``: not decoded), whether
    the general reader leaves it out (it then says so): the item is then
    left out of the ranges, else the file is not taken. ``typed``: the
    items of an API server's ``PodList``, each a pod whether it says its
    kind or not (a range holds pods only: its readers take an item without
    a kind for one)."""
    mine: dict[bytes, str] = {}  # this file's pods, told to ``seen`` once the file is taken
    blake2b = _blake2b
    unbound = duplicated = dropped = 0
    # the current run of consecutive pods of one node: its node, first and
    # last item and pods (each run is one range)
    run: Any = None
    first = last = size = 0
    spans: dict[int, tuple[int, int, int]] | None = None if full is None else {}
    for i, p in enumerate(peek):
        if p is None or (p.kind != "Pod" and not (typed and p.kind in (None, ""))) or (
                general is not None and not _clean_alone(p)):
            if general is None or not general(i):
                return None
            dropped += 1
            if run is not None:  # (a range never holds it)
                _end_run(out, spans, run, first, last, size, starts, lengths)
                run = None
            continue
        spec = p.spec
        node = None if spec is None else spec.nodeName
        if node is UNSET:  # (decoded whole: an absent field is UNSET)
            node = None
        if type(node) is str and node:
            # a pod bound to a node has a name (the general reader says so,
            # and leaves it out); with ``full``, the owner references too
            meta = p.metadata
            if meta is None or type(meta.name) is not str or not meta.name:
                return None
            if full is not None and not _owners_clean(meta.ownerReferences):
                return None
        elif full is not None and p.metadata is not None and not _owners_clean(p.metadata.ownerReferences):
            return None
        if seen is not None:  # a pod already counted (another dump) is counted once (see pod_key)
            meta = p.metadata
            if meta is None:
                text = "default\0None\0"
            else:
                ns, pname, uid = meta.namespace, meta.name, meta.uid
                if full is not None:
                    ns = None if ns is UNSET else ns
                    pname = None if pname is UNSET else pname
                    uid = None if uid is UNSET else uid
                text = f"{ns or 'default'}\0{pname}\0{uid or ''}"
            key = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()
            if key in seen or key in mine:
                if node is not None and type(node) is not str:
                    return None  # not a clean pod: the general reader words it
                duplicated += 1
                if node and key in mine:  # listed again in this file: its copy compared
                    out.repeats.setdefault(node, []).append((out.file, starts[i], starts[i] + lengths[i]))
                if run is not None:
                    _end_run(out, spans, run, first, last, size, starts, lengths)
                    run = None
                continue
            mine[key] = node if type(node) is str else ""
        if run is not None and node == run:
            last = i
            size += 1
            continue
        if run is not None:
            _end_run(out, spans, run, first, last, size, starts, lengths)
            run = None
        if type(node) is not str or not node:
            if node is not None and type(node) is not str:
                return None  # not a clean pod: the general reader words it
            unbound += 1
            continue
        run, first, last, size = node, i, i, 1
    if run is not None:
        _end_run(out, spans, run, first, last, size, starts, lengths)
    out.pods, out.unbound, out.duplicated = len(peek) - duplicated - dropped, unbound, duplicated
    if seen is not None:
        seen.update(mine)
    if full is not None and spans:
        _hold(out.file, full, spans, weight, add=piece, ident=getattr(out.file, "ident", None))
    return out


def _clean_alone(p: _Peek) -> bool:
    """Whether the pod ``p`` (a :class:`_Peek`) is one :func:`_index_items`
    takes whatever the file's other items: its ``spec.nodeName`` absent,
    ``null`` or a string, and, bound to a node (a non-empty name), a
    ``metadata.name`` that is a non-empty string."""
    spec = p.spec
    node = None if spec is None else spec.nodeName
    if node is None:
        return True
    if type(node) is not str:
        return False
    if not node:
        return True
    meta = p.metadata
    return meta is not None and type(meta.name) is str and bool(meta.name)


def _owners_clean(owners: Any) -> bool:
    """Whether a pod's ``metadata.ownerReferences`` decoded whole (absent:
    ``UNSET``) is what :class:`_PeekOwner` takes (and
    :func:`podnuma.fleet.files.left_out` does not leave out)."""
    if owners is UNSET or owners is None:
        return True
    if type(owners) is not list:
        return False
    for o in owners:
        if type(o) is not dict:
            return False
        kind, name, ctl = o.get("kind"), o.get("name"), o.get("controller")
        if type(kind) is not str or not kind or type(name) is not str or not name or (
                ctl is not None and type(ctl) is not bool):
            return False
    return True


def _hold(name: str, pods: list[_PodRaw], spans: dict[int, tuple[int, int, int]], weight: int,
          *, add: bool, ident: int | None = None) -> None:
    """``pods`` held for the ranges of ``name`` that ``spans`` gives;
    ``add``: beside what is held of the file already (its other pieces,
    when they were read as the same file), else instead of it. ``ident``:
    the file as it was read (:func:`file_ident`)."""
    held = _HELD.get(name) if add else None
    if held is not None and held.ident != ident:
        held = None  # (pieces of another version of the file: let go)
    if held is None:
        release_held(name)
        _HELD[str(name)] = _Held(pods, spans, weight, ident)
    else:
        base = len(held.pods)
        held.pods.extend(pods)
        for start, (first, last, end) in spans.items():
            held.spans[start] = (first + base, last + base, end)
        held.size += weight
    _held_bytes[0] += weight


#: a pods dump of at least twice this many bytes, read where the fleet is
#: read on a cluster or a pool, is cut into pieces of about this many
#: bytes, each read by itself (:func:`cut_pieces`): one dump, however
#: large, is read by all the workers, and the last pieces to be read are
#: small, so that the workers end their reading together
PIECE_BYTES = 4 * 2**20


@dataclass(frozen=True)
class Piece:
    """A piece of a large pods dump, the ``index``-th of ``count``: the
    items from the first one laid out as the dump's first item that begins
    in its bytes ``[lo, hi)`` (the first piece: from the list's start) up
    to the first such item at or past ``hi`` (in a dump laid out alike
    throughout, the items that begin in ``[lo, hi)``; an item laid out
    otherwise goes with the one before it); the file as it was when it was
    cut (its size, modification time and inode, :func:`file_ident`: a
    piece of a file changed since, before its bytes are read or while they
    are, is not read)."""

    path: str
    lo: int
    hi: int
    index: int
    count: int
    size: int
    mtime_ns: int
    ino: int


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
#: the decoders of a piece's items (``[`` + the piece + ``]``)
_RAW_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
_PEEK_ITEMS = msgspec.json.Decoder(list[_Peek])
#: how much past its end a piece's reader reads at first to find the item
#: after its last (it reads more while it does not)
_PAST = 65536
#: the most places the end of a dump's list is looked for, from its end back
_TAIL_TRIES = 16
#: in place of a dump's items, to check that what is around them is the rest
#: of the dump, with its items where the pieces say they are: one item whose
#: ``kind`` is random (no file can hold it by design)
_STAND_IN_KIND = os.urandom(12).hex()
_STAND_IN = b'{"kind": "' + _STAND_IN_KIND.encode() + b'"}'


class _TopCheck(msgspec.Struct, gc=False):
    """What the whole dump's decoders check of its top level (``kind``;
    every ``items`` in it a list of what :class:`_Peek` takes, as
    :data:`_TOP_PEEK` checks, also of an ``items`` before the last)."""

    kind: Any = None
    items: list[_Peek] = []


_TOP_CHECK = msgspec.json.Decoder(_TopCheck)


def _layout(head: bytes, typed: bool = False) -> tuple[int, re.Pattern[bytes]] | None:
    """From a dump's first bytes: where its list of items begins (just past
    its ``[``) and what marks the start of an item after the first one
    (group 1 of the pattern: the item's first bytes); ``None`` when they do
    not tell (no pod in them, the list not begun, no layout of the first
    item to go by). ``typed``: the dump says it is a ``PodList``
    (:func:`_says_pod_list`), whose items need not say they are pods.

    A dump laid out one item a line (``kubectl get pods -o json``,
    ``json.dumps`` with an indent): a comma, a line break and the first
    item's indentation before its ``{`` (a line break is never inside a
    JSON string, and an object nested in an item is indented further).
    A dump of one line (``jq -c``, ``json.dumps`` without an indent,
    :func:`_compact_layout`): a comma, white space and the first item's
    opening bytes up to its first member that is an object or a list
    (``{"apiVersion":"v1","kind":"Pod","metadata":``). The second can
    also mark an object nested in an item; what the marks give is only
    taken where each item they bound decodes as one whole value
    (:func:`_split_items`, and the pieces of a dump, :func:`index_piece`):
    a mark that is no item's start costs time, never a wrong item."""
    if not typed and _POD_HEAD.search(head) is None:
        return None
    m = _ITEMS.search(head)
    if m is None:
        return None
    ws = _WS.match(head, m.end())
    assert ws is not None  # matches the empty text
    first = ws.end()
    if head[first: first + 1] != b"{":
        return None
    nl = head.rfind(b"\n", m.end(), first)
    if nl < 0:
        return _compact_layout(head, m.end(), first)
    indent = head[nl + 1: first]
    if indent.strip(b" \t"):
        return None
    return m.end(), re.compile(rb",\r?\n" + re.escape(indent) + rb"(\{)")


#: a member's name and colon, and a value that is neither an object nor a
#: list (a string, a number, ``true``, ``false``, ``null``)
_MEMBER = re.compile(rb'[ \t\r\n]*"[^"\\]*(?:\\.[^"\\]*)*"[ \t\r\n]*:[ \t\r\n]*')
_SCALAR = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[-+.0-9a-zA-Z]+')
#: the longest opening of a dump's first item a one-line layout goes by
_PREFIX_MAX = 256
#: the most white space between a comma and the next item's opening that
#: a one-line layout's mark takes (with :data:`_PREFIX_MAX`, far under
#: :data:`_HEAD`)
_MARK_SPACE = 1024


def _compact_layout(head: bytes, items_at: int, first: int) -> tuple[int, re.Pattern[bytes]] | None:
    """:func:`_layout` of a dump whose first item is not on a line of its
    own: its items' mark is a comma, white space (at most
    :data:`_MARK_SPACE` bytes) and the first item's
    bytes from its ``{`` to the value of its first member that is an object
    or a list (``None`` when there is none within :data:`_PREFIX_MAX`
    bytes). The opening holds no comma before a ``{``, so that two marks
    never overlap: the marks found from any place on are the same."""
    pos = first + 1
    while True:
        m = _MEMBER.match(head, pos)
        if m is None:
            return None
        if m.end() - first > _PREFIX_MAX:
            return None
        if head[m.end(): m.end() + 1] in (b"{", b"["):
            prefix = head[first: m.end()]
            break
        v = _SCALAR.match(head, m.end())
        if v is None:
            return None
        after = _WS.match(head, v.end())
        assert after is not None  # matches the empty text
        if head[after.end(): after.end() + 1] != b",":
            return None  # (an item of scalars only, or the head's end)
        pos = after.end() + 1
    if re.search(rb",[ \t\r\n]*\{", prefix) is not None:
        return None
    # (the white space is bounded, so that no mark is longer than the
    # bytes a piece reads again before where it looks: a longer run is no
    # mark for every piece alike, and the items on either side stay one
    # read, never a pod in no piece)
    return items_at, re.compile(rb",[ \t\r\n]{0,%d}(" % _MARK_SPACE + re.escape(prefix) + rb")")


#: what the structure of a JSON text is made of, for :func:`_value_end`: a
#: string (or a lone ``"``: one not closed), a bracket
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|["{}\[\]]', re.DOTALL)
_AFTER_ITEM = re.compile(rb"[ \t\r\n]*(,?)[ \t\r\n]*")


def _value_end(data: bytes, pos: int, stop: int) -> int:
    """Where the object or list that begins at ``pos`` ends (past its
    closing bracket), by its strings and brackets alone, before ``stop``;
    -1 when it does not end there (a string not closed, a bracket too
    few). What is between the brackets is not checked: the item's reader
    does."""
    depth = 0
    for m in _TOKENS.finditer(data, pos, stop):
        c = data[m.start()]
        if c == 0x22:  # "
            if m.end() - m.start() == 1:
                return -1
        elif c in (0x7B, 0x5B):  # { [
            depth += 1
        else:
            depth -= 1
            if depth <= 0:
                return m.end()
    return -1


def _split_items(
    data: bytes, first: int, close: int, marker: re.Pattern[bytes],
) -> tuple[list[int], list[int], list[Any]] | None:
    """The items of the list whose items run from ``first`` to ``close``
    (the ``]``), as their starts, their lengths and each decoded as
    :class:`_Peek` (``None``: not decoded), whatever the damage in them;
    ``None`` when they are not a comma-separated run of objects. The marks
    of ``marker`` give where an item may end: the bytes from an item's
    start to the next mark are taken as the item when they decode as one
    value (a value decoded from an item's start ends where the item does,
    so the next item starts after the comma). Else (a damaged item, a mark
    inside an item, an item laid out otherwise) the item's end is found
    by its strings and brackets (:func:`_value_end`) and the item decoded
    alone there (clean, when what cut it short was a mark inside it)."""
    if first >= close:
        return None
    view = memoryview(data)
    cuts = [m.start() for m in marker.finditer(data, first, close)]
    starts: list[int] = []
    lengths: list[int] = []
    peek: list[Any] = []
    k = 0
    pos = first
    while True:
        if data[pos] != 0x7B:  # {
            return None
        while k < len(cuts) and cuts[k] < pos:
            k += 1
        end = cuts[k] if k < len(cuts) else close
        while end > pos and data[end - 1] in b" \t\r\n":
            end -= 1
        try:
            p = _PEEK_ONE.decode(view[pos:end])
        except _DECODE_ERRORS:
            end = _value_end(data, pos, close)
            if end < 0:
                return None
            try:  # (a mark inside the item: the item itself may be clean)
                p = _PEEK_ONE.decode(view[pos:end])
            except _DECODE_ERRORS:
                p = None
        starts.append(pos)
        lengths.append(end - pos)
        peek.append(p)
        sep = _AFTER_ITEM.match(data, end, close)
        assert sep is not None  # matches the empty text
        if sep.end() >= close:
            return (starts, lengths, peek) if not sep.group(1) else None
        if not sep.group(1):
            return None
        pos = sep.end()


def _says_pod_list(fd: int, size: int, head: bytes) -> bool:
    """Whether the dump open at ``fd`` (``size`` bytes, ``head`` its first
    ones) says it is the API server's own ``PodList`` (``kubectl get --raw
    /api/v1/pods``), whose items say no kind: the first ``kind`` member
    before its items says ``PodList``, or, with none before them (the
    items written first), one in its last :data:`_HEAD` bytes does. What
    this says is only taken as the dump's kind where the piece that holds
    the list's end finds it so (:func:`_list_end`, which decodes the top
    level): every piece of one version of a dump says the same."""
    m = _ITEMS.search(head)
    if m is None:
        return False
    k = _KIND_KEY.search(head, 0, m.start())
    if k is not None:
        return _POD_LIST.match(head, k.start()) is not None
    tail = os.pread(fd, min(size, _HEAD), max(0, size - _HEAD))
    return _POD_LIST.search(tail) is not None


def cut_pieces(path: str) -> list[Piece] | None:
    """``path`` cut into pieces of about :data:`PIECE_BYTES`, or ``None``
    when it is not to be read in pieces: not a JSON file, not a regular
    file, smaller than two pieces, larger than the fleet's size limit (the
    whole file's reader words that), or a first 64 KiB that do not show
    a list of pods and how its items are laid out (one a line, or all on
    one line: :func:`_layout`; its items saying they are pods, or the
    dump that it is a ``PodList``: :func:`_says_pod_list`)."""
    if Path(path).suffix.lower() != ".json":  # (as the whole dump's reader asks: ".json" alone is no suffix)
        return None
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if not stat.S_ISREG(st.st_mode) or size < 2 * PIECE_BYTES or size > FLEET_LIMITS.max_bytes:
            return None
        head = os.pread(fd, _HEAD, 0)
        typed = _says_pod_list(fd, size, head)
    except OSError:
        return None
    finally:
        os.close(fd)
    if _layout(head, typed) is None:
        return None
    n = -(-size // PIECE_BYTES)
    cuts = [size * k // n for k in range(n + 1)]
    return [Piece(path, cuts[k], cuts[k + 1], k, n, size, st.st_mtime_ns, st.st_ino) for k in range(n)]


def index_piece(piece: Piece, seen: dict[bytes, str] | None = None, hold: bool = False) -> PodFileIndex | None:
    """The index of the items that begin in ``piece`` (see
    :func:`index_pod_file`; ``seen``, ``hold`` as there: the pods held
    beside the file's other pieces held here), or ``None`` when the piece
    cannot be read by itself as a part of a clean list of pods (the file
    is then read whole). Its items run from the first item start in it
    (:func:`_layout`) to the first one at or past its end, or to the end of
    the list; the piece that holds the list's end also checks what is
    around the items (the dump with :data:`_STAND_IN` for its items is a
    list whose items are that one value). Each piece decodes its items as
    a JSON list: the pieces are the whole list's items exactly when all do
    (each piece's bytes a comma-separated run of whole values: the next
    one starts where the last ended)."""
    name = piece.path
    try:
        fd = os.open(name, os.O_RDONLY | _NONBLOCK)
    except OSError:
        return None
    try:
        return _index_piece(fd, piece, seen, hold)
    except OSError:
        return None
    finally:
        os.close(fd)


def _index_piece(fd: int, piece: Piece, seen: dict[bytes, str] | None, hold: bool) -> PodFileIndex | None:
    # the file as it was cut, before the piece's bytes are read and after
    # (the same descriptor): a piece is of the version the dump was cut
    # from, or not read at all
    ident = ident_of(piece.size, piece.mtime_ns, piece.ino)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or file_ident(st) != ident:
        return None
    head = os.pread(fd, _HEAD, 0)
    typed = _says_pod_list(fd, piece.size, head)
    got = _layout(head, typed)
    if got is None:
        return None
    items_at, marker = got
    size = piece.size
    # The bytes read, from a little before the piece (a marker whose item
    # starts in it) to a little past it, into a buffer one byte longer:
    # its byte ``x - base + 1`` is the file's byte ``x``. The items are
    # decoded where they are read: the byte before the first one (the
    # list's ``[``, or white space) becomes ``[`` and the comma after the
    # last one ``]`` (no copy of the piece's megabytes).
    base = items_at if piece.index == 0 else max(items_at, piece.lo - _HEAD)
    buf = _pread_into(fd, min(size, piece.hi + _PAST) - base, base)
    if buf is None:
        return None
    if piece.index == 0:
        start = items_at
    else:
        start = -1
        for m in marker.finditer(buf, max(1, piece.lo - base + 1 - _HEAD)):
            if m.start(1) - 1 + base >= piece.lo:
                start = m.start(1) - 1 + base
                break
        if start < 0 or start >= piece.hi:
            if file_ident(os.fstat(fd)) != ident:
                return None
            return PodFileIndex(file=DumpName(piece.path, ident))  # no item begins in it
    # its end: the comma before the first item that begins at or past ``hi``
    end = -1
    looked = max(1, start - base + 1)
    while True:
        for m in marker.finditer(buf, max(looked, piece.hi - base + 1 - _HEAD)):
            if m.start(1) - 1 + base >= piece.hi:
                end = m.start() - 1 + base
                break
        if end >= 0 or base + len(buf) - 1 >= size:
            break
        looked = max(1, len(buf) - _HEAD)
        more = os.pread(fd, min(len(buf), size - base - len(buf) + 1), base + len(buf) - 1)
        if not more:
            return None  # (shorter than it was)
        buf += more
    if file_ident(os.fstat(fd)) != ident:
        return None  # (written again while it was read)
    if end < 0:  # the list's end is in this piece
        end = _list_end(head[:items_at], buf, base, start, typed)
        if end < 0:
            return None
    buf[start - base] = 0x5B  # [
    buf[end - base + 1] = 0x5D  # ]
    return _index_buffer(DumpName(piece.path, ident), buf, start - base, end - base + 2, base - 1, seen, hold,
                         typed)


def _pread_into(fd: int, n: int, offset: int) -> bytearray | None:
    """``n`` bytes of the file from ``offset`` read into a new buffer after
    one spare byte (``None`` when the file has fewer)."""
    buf = bytearray(n + 1)
    got = os.preadv(fd, [memoryview(buf)[1:]], offset)
    return buf if got == n else None


def _list_end(before: bytes, buf: bytes | bytearray, base: int, start: int, typed: bool = False) -> int:
    """Where the ``]`` that closes a dump's list of items is (``buf``: the
    file's bytes from ``base`` to its end, after a spare byte; ``before``:
    its bytes up to the list's ``[``), or -1: the last ``]`` from the end
    back for which the dump with :data:`_STAND_IN` for its items is a list
    of that value (``typed``: a ``PodList``, as the whole dump's decoder
    reads its kind; its pieces took its items without a kind for pods)."""
    stop = max(start - base + 1, len(buf) - _HEAD)
    pos = len(buf)
    for _ in range(_TAIL_TRIES):
        pos = buf.rfind(b"]", stop, pos)
        if pos < 0:
            return -1
        around = before + _STAND_IN + buf[pos:]
        try:
            if not around.isascii():
                around.decode("utf-8")
            top = _TOP_CHECK.decode(around)
        except _DECODE_ERRORS:
            continue
        if len(top.items) == 1 and top.items[0].kind == _STAND_IN_KIND and (
                isinstance(top.kind, str) and top.kind.endswith("List") or top.kind is None) and (
                not typed or top.kind == "PodList"):
            return pos - 1 + base
        return -1
    return -1


def _decoded(
    data: bytes | memoryview, ascii: bool, raw: Callable[[Any], Any], pods: Callable[[Any], Any],
    peeks: Callable[[Any], Any], hold: bool,
) -> tuple[list[msgspec.Raw], list[_PodRaw] | None, list[Any], int] | None:
    """A dump's (or a piece's) items decoded: as raw bytes (``raw``), whole
    to hold (``pods``, when ``hold`` and the bound allows; ``None`` when
    that decoding refuses them: read back from the file instead) and the
    fields the index reads (``peeks``, or the whole ones); with what holding
    them weighs. ``None`` when the data is not UTF-8 (the general reader
    refuses it; ``ascii``: known to be ASCII, so UTF-8), a decoder refuses
    it, or the items are none."""
    try:
        if not ascii:
            str(data, "utf-8")
        items = raw(data)
        full: list[_PodRaw] | None = None
        weight = _hold_weight(data, items)
        if hold and _held_bytes[0] + weight <= HOLD_BYTES:
            try:
                full = pods(data)
            except _DECODE_ERRORS:
                full = None  # read back from the file, range by range
        peek: list[Any] = full if full is not None else peeks(data)
    except _DECODE_ERRORS:
        return None
    if not items or len(peek) != len(items):
        return None
    return items, full, peek, weight


def _index_buffer(name: DumpName, buf: bytearray, a: int, b: int, shift: int,
                  seen: dict[bytes, str] | None, hold: bool, typed: bool = False) -> PodFileIndex | None:
    """The index of the items of ``buf[a:b]`` (``[`` + a piece's items +
    ``]``, decoded in place; byte ``i`` of ``buf`` the file's byte
    ``i + shift``) of the file ``name`` (``typed``: a ``PodList``'s, see
    :func:`_index_items`)."""
    view = memoryview(buf)[a:b]
    got = _decoded(view, buf.isascii(), _RAW_ITEMS.decode, _PODS_RAW.decode, _PEEK_ITEMS.decode, hold)
    if got is None:
        return None
    items, full, peek, weight = got
    lengths = list(map(len, items))
    starts = _item_starts(buf, a + 1, items, lengths)
    if starts is None:
        return None
    starts = [s + shift for s in starts]
    return _index_items(PodFileIndex(file=name), peek, full, starts, lengths, seen, weight, piece=True,
                        typed=typed)


def _end_run(
    out: PodFileIndex, spans: dict[int, tuple[int, int, int]] | None, node: str, first: int,
    last: int, size: int, starts: list[int], lengths: list[int],
) -> None:
    """Record a run of ``size`` consecutive pods of ``node`` (items
    ``first`` to ``last``) as one byte range of ``out``'s file, and its span
    when the file's pods are held."""
    end = starts[last] + lengths[last]
    out.ranges.setdefault(node, []).append((out.file, starts[first], end))
    out.counts[node] = out.counts.get(node, 0) + size
    if spans is not None:
        spans[starts[first]] = (first, last, end)


class _Held:
    """A dump's pods decoded whole by :func:`index_pod_file`, kept until
    the ranges it gave are read back in this process: ``pods`` in file
    order, ``spans`` the first and last item and the end of each range by
    its start.
    Its pods hold on to the file's bytes (their fields not decoded are
    views of them), ``size`` bytes. ``ident``: for the pieces of a dump,
    the file as it was read (:func:`file_ident`; ``None``: not known):
    they are given for a range of that reading of the file only, and only
    while the file is still that one (:func:`_take_held`)."""

    __slots__ = ("pods", "spans", "size", "ident")

    def __init__(self, pods: list[_PodRaw], spans: dict[int, tuple[int, int, int]], size: int,
                 ident: int | None = None) -> None:
        self.pods = pods
        self.spans = spans
        self.size = size
        self.ident = ident


#: The dumps indexed with ``hold`` whose ranges are not all read back yet,
#: by file name (this process only; nothing of it is sent elsewhere). A
#: range given from here is the same items as its bytes decoded again; a
#: dump changed since is not given from here, but read back, and refused
#: there (:func:`read_ranges`), as it is where nothing was held: the report
#: does not depend on where the pods were kept.
_HELD: dict[str, _Held] = {}
#: the most bytes of dumps whose pods are held at a time (a larger fleet's
#: further dumps are read back range by range, as from another process)
HOLD_BYTES = 256 * 2**20
#: what a held pod counts for at least: a dump of many small pods holds more
#: memory per byte of JSON than one of whole pods (about 640 bytes a pod
#: however small), so each counts as this many bytes of the bound
HOLD_POD_BYTES = 2048
_held_bytes = [0]


def _hold_weight(data: bytes | bytearray | memoryview, items: Any) -> int:
    """What holding a dump's pods counts for against :data:`HOLD_BYTES`:
    its bytes, or :data:`HOLD_POD_BYTES` a pod when that is more."""
    return max(len(data), len(items or ()) * HOLD_POD_BYTES)


def is_held(file: str) -> bool:
    """Whether pods of ``file`` are held here (see :func:`index_pod_file`)."""
    return file in _HELD


def release_held(file: str | None = None) -> None:
    """Let go of the pods held for ``file`` (default: every file)."""
    for f in ([file] if file is not None else list(_HELD)):
        got = _HELD.pop(f, None)
        if got is not None:
            _held_bytes[0] -= got.size


#: whether this process lives for one run (:func:`freeze_kept_pods`)
_FREEZE = [False]


def freeze_kept_pods() -> None:
    """This process lives for one run (the ``podnuma`` command's own
    process, the Dask client process and the workers it forks): the pods
    it keeps are left out of the cyclic garbage collector's passes once
    kept (:func:`freeze_held`), for the rest of its life."""
    _FREEZE[0] = True


def freeze_held() -> None:
    """The pods held here, and everything else alive now, left out of the
    cyclic garbage collector's passes (:func:`gc.freeze`), in a process that
    lives for one run (:func:`freeze_kept_pods`). They are decoded with the
    collector off (many small objects, in no cycle); once it runs again,
    its next passes would walk all of them, each young generation in turn,
    then the oldest (about 70 ms of a 100,000-pod run in one process).
    Nowhere else: what is frozen is never collected, which a process that
    goes on (a test, a server, a ``dask worker`` serving several runs)
    cannot have. Called again as more dumps are held, it freezes those
    too."""
    if _FREEZE[0] and _HELD:
        gc.freeze()


def _file_ident(path: str) -> int | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return file_ident(st) if stat.S_ISREG(st.st_mode) else None


def _take_held(r: Range, idents: dict[str, int | None] | None = None) -> list[_PodRaw] | None:
    """The held pods of range ``r`` (given once: a range's pods are
    dropped once read), or ``None``: none held, or held of another reading
    of the file than the range's (its :class:`DumpName`'s identity), or of
    a file changed since (then read back, and refused there). ``idents``:
    the files' identities looked at so far in this call (one ``stat`` a
    file)."""
    held = _HELD.get(r[0])
    if held is None:
        return None
    if held.ident != getattr(r[0], "ident", held.ident):
        return None
    if held.ident is not None:
        if idents is None:
            idents = {}
        if r[0] not in idents:
            idents[r[0]] = _file_ident(r[0])
        if idents[r[0]] != held.ident:
            return None
    span = held.spans.pop(r[1], None)
    if not held.spans:
        release_held(r[0])
    if span is None or span[2] != r[2]:
        return None
    return held.pods[span[0]: span[1] + 1]


def _item_starts(data: bytes | bytearray, pos: int, items: list[msgspec.Raw], lengths: list[int]) -> list[int] | None:
    """Where each item of the list starting at ``pos`` begins, or ``None``
    when the items are not where the decoder found them (``lengths``: the
    items' lengths). The separators of a dump written by one program are
    all alike (``kubectl`` and ``json`` write ``,`` and the same indent):
    with the first separator, each item and each separator after it is
    compared with the file's bytes where it would be, in place (joining
    the items for one comparison would copy the whole dump: 22 MB and
    their page faults for a dump of 10,000 pods); else each item is looked
    for in turn."""
    first = _SEP.match(data, pos)
    assert first is not None  # matches the empty text
    start = first.end()
    if len(items) > 1:
        end0 = start + lengths[0]
        sep_m = _SEP.match(data, end0)
        assert sep_m is not None
        sep = data[end0: sep_m.end()]
        step = len(sep)
        last = start + sum(lengths) + step * (len(items) - 1)
        if last <= len(data):
            starts = list(itertools.accumulate(map(step.__add__, lengths[:-1]), initial=start))
            # (item i ends where separator i begins: ``step`` before item i + 1)
            if all(map(data.startswith, items, starts)) and all(map(
                    data.startswith, itertools.repeat(sep), map(step.__rsub__, starts[1:]))):
                return starts
    out = []
    for raw, n in zip(items, lengths, strict=True):
        if not data.startswith(raw, start):
            return None  # "items" matched elsewhere: not a layout this reader knows
        out.append(start)
        m = _SEP.match(data, start + n)
        assert m is not None
        start = m.end()
    return out


#: an absent field of the typed structs below that are kept as their bytes:
#: one object, told apart by identity (``\x01`` is not JSON text, so no
#: decoded value has these bytes). Joined as it is into the key of a spec.
_NO = msgspec.Raw(b"\1")


class _SpecRaw(msgspec.Struct, gc=False):
    nodeName: Any | Unset = UNSET
    resources: msgspec.Raw = _NO
    overhead: msgspec.Raw = _NO
    restartPolicy: msgspec.Raw = _NO
    initContainers: msgspec.Raw = _NO
    containers: msgspec.Raw = _NO


class _MetaRaw(msgspec.Struct, gc=False):
    name: Any | Unset = UNSET
    namespace: Any | Unset = UNSET
    uid: Any | Unset = UNSET
    labels: msgspec.Raw = _NO
    annotations: msgspec.Raw = _NO
    ownerReferences: Any | Unset = UNSET
    creationTimestamp: Any | Unset = UNSET
    generateName: Any | Unset = UNSET


class _Status(msgspec.Struct, gc=False):
    phase: str | None | Unset = UNSET  # (another type: refused, as :class:`_PeekStatus` refuses it)
    startTime: Any | Unset = UNSET
    qosClass: Any | Unset = UNSET
    # (read for the resources the kubelet allocated: :func:`_allocated_key`)
    initContainerStatuses: msgspec.Raw = _NO
    containerStatuses: msgspec.Raw = _NO
    # (the pod-level allocation: :func:`podnuma.fleet.pods._pod_level_allocation`)
    allocatedResources: msgspec.Raw = _NO
    resources: msgspec.Raw = _NO


class _CStatus(msgspec.Struct, gc=False):
    """What :func:`podnuma.fleet.pods.with_allocation` reads of a
    container's status."""

    name: Any = None
    allocatedResources: Any = None
    resources: Any = None


class _PodRaw(msgspec.Struct, gc=False):
    kind: Any = None
    metadata: _MetaRaw | None = None
    spec: _SpecRaw | None = None
    status: _Status | None = None


class _TopPods(msgspec.Struct, gc=False):
    items: list[_PodRaw] = []


_PODS_RAW = msgspec.json.Decoder(list[_PodRaw])
_TOP_PODS = msgspec.json.Decoder(_TopPods)
# a number with a fraction or an exponent keeps its text where a float would
# lose it (a quantity is parsed from the text, as Quantity.UnmarshalJSON
# does: podnuma.golang.jsonnumbers); called for such numbers only
_ANY = msgspec.json.Decoder(float_hook=json_float)
_CTRS = msgspec.json.Decoder(list[_Ctr], float_hook=json_float)
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


def _spec_of(key: tuple[Any, ...], s: _SpecRaw, ann: msgspec.Raw) -> tuple[dict[str, Any], Any]:
    got = _SPECS.get(key)
    if got is not None:
        return got
    rest: dict[str, Any] = {}
    for k in _SPEC_FIELDS:
        v = getattr(s, k)
        if v is not _NO:
            rest[k] = _ANY.decode(v)
    for k in ("initContainers", "containers"):
        v = getattr(s, k)
        if v is not _NO:
            rest[k] = [_ctr(c) for c in _CTRS.decode(v)]
    got = (rest, UNSET if ann is _NO else _ANY.decode(ann))
    if len(_SPECS) >= _SPECS_LIMIT:
        _SPECS.clear()
    _SPECS[key] = got
    return got


_CSTATUSES = msgspec.json.Decoder(list[_CStatus], float_hook=json_float)


class _CStatusRaw(msgspec.Struct, gc=False):
    """What :func:`_allocated_key` memoises a container's status by: its
    name and the bytes of its ``allocatedResources`` and ``resources``."""

    name: Any = None
    allocatedResources: msgspec.Raw = _NO
    resources: msgspec.Raw = _NO


_CSTATUSES_RAW = msgspec.json.Decoder(list[_CStatusRaw])
#: :func:`_allocated_key`'s answers, by the spec's key and the bytes of
#: what it reads of the statuses (the pods of one workload share them)
_ALLOCATED: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def _status_sig(raw: msgspec.Raw) -> Any:
    """The bytes :func:`_allocated_key` reads of a pod's container statuses
    (``raw``), hashable: per status its name and the bytes of its
    ``allocatedResources`` and ``resources``; the whole bytes when they are
    of another shape."""
    if raw is _NO:
        return None
    try:
        got = _CSTATUSES_RAW.decode(raw)
    except _DECODE_ERRORS:
        return bytes(raw)
    out = []
    for c in got:
        if type(c.name) is not str:
            return bytes(raw)
        out.append((c.name, bytes(c.allocatedResources), bytes(c.resources)))
    return tuple(out)


def _statuses(raw: msgspec.Raw) -> Any:
    """A pod's ``containerStatuses`` (or ``initContainerStatuses``): each
    status's ``name``, ``allocatedResources`` and ``resources``, the rest
    skipped; a value of another shape decoded whole (read as the general
    decoding reads it)."""
    if raw is _NO:
        return None
    try:
        return [{"name": c.name, "allocatedResources": c.allocatedResources, "resources": c.resources}
                for c in _CSTATUSES.decode(raw)]
    except _DECODE_ERRORS:
        return _ANY.decode(raw)


def _allocated_key(key: tuple[Any, ...], p: _PodRaw) -> tuple[Any, ...]:
    """``key`` (of ``p``'s spec, :func:`_spec_of`'s) with the resources the
    kubelet allocated to its containers where its status shows others than
    the spec's (:func:`podnuma.fleet.pods.with_allocation`): a third part,
    their JSON, and that spec kept for the key; ``key`` itself otherwise."""
    st = p.status
    # (the pod-level allocation is read only of a pod with pod-level
    # resources: the kubelet writes ``status.allocatedResources`` for every pod)
    pod_level = st is not None and st.allocatedResources is not _NO and (
        p.spec is not None and p.spec.resources is not _NO)
    if st is None or (st.containerStatuses is _NO and st.initContainerStatuses is _NO and not pod_level):
        return key
    memo = (key, _status_sig(st.initContainerStatuses), _status_sig(st.containerStatuses),
            bytes(st.allocatedResources) if pod_level else None, bytes(st.resources) if pod_level else None)
    got = _ALLOCATED.get(memo)
    if got is not None and (got == key or got in _SPECS):
        return got
    rest, annotations = _SPECS.get(key) or _spec_of(key, p.spec or _SpecRaw(), _annotations(p))
    status = {"initContainerStatuses": _statuses(st.initContainerStatuses),
              "containerStatuses": _statuses(st.containerStatuses)}
    if pod_level:
        status["allocatedResources"] = _ANY.decode(st.allocatedResources)
        if st.resources is not _NO:
            status["resources"] = _ANY.decode(st.resources)
    new = with_allocation(rest, status)
    got = key
    if new is not None:
        got = (key[0], key[1], json.dumps([new.get("initContainers"), new.get("containers"),
                                           new.get("resources")], default=str))
        if got not in _SPECS:
            if len(_SPECS) >= _SPECS_LIMIT:
                _SPECS.clear()
            _SPECS[got] = (new, annotations)
    if len(_ALLOCATED) >= _SPECS_LIMIT:
        _ALLOCATED.clear()
    _ALLOCATED[memo] = got
    return got


def _annotations(p: _PodRaw) -> msgspec.Raw:
    return _NO if p.metadata is None else p.metadata.annotations


def _spec_for(key: tuple[Any, ...], p: _PodRaw) -> tuple[dict[str, Any], Any]:
    """The decoded spec and annotations of ``key`` (of ``p``: its spec's,
    :func:`_allocated_key`'s when it has three parts), decoded again when
    the memo let them go."""
    got = _SPECS.get(key)
    if got is not None:
        return got
    got = _spec_of(key[:2], p.spec or _SpecRaw(), _annotations(p))
    if len(key) > 2:  # (the same statuses give the same key again)
        got = _SPECS.get(_allocated_key(key[:2], p)) or got
    return got


def _ctr(c: _Ctr) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if c.name is not UNSET:
        d["name"] = c.name
    r = c.resources
    if r is not UNSET:
        if r is None:
            d["resources"] = None
        else:
            d["resources"] = {k: v for k, v in (("limits", r.limits), ("requests", r.requests),
                                                 ("claims", r.claims)) if v is not UNSET}
    if c.restartPolicy is not UNSET:
        d["restartPolicy"] = c.restartPolicy
    return d


def _spec_key(p: _PodRaw) -> tuple[tuple[Any, ...], dict[str, Any], Any]:
    """The key of ``p``'s spec (see :class:`KeyedSpec`), its decoded spec
    (without ``nodeName``) and annotations. ``ValueError`` for a namespace
    that is not a string (the general decoding words it)."""
    m = p.metadata
    s = p.spec
    ns = None if m is None else m.namespace
    if ns is not UNSET and ns is not None and not isinstance(ns, str):
        raise ValueError("namespace is not a string")
    ann = _NO if m is None else m.annotations
    if s is None:
        s = _SpecRaw()
    # the parts' bytes joined by a NUL, an absent part a 0x01: neither byte
    # can be in JSON text unescaped, so the joined bytes are equal exactly
    # when the parts are
    key = (ns, b"\0".join((ann, s.resources, s.overhead, s.restartPolicy, s.initContainers, s.containers)))
    _spec_of(key, s, ann)
    key = _allocated_key(key, p)
    rest, annotations = _spec_for(key, p)
    return key, rest, annotations


def _compact(p: _PodRaw, key: tuple[Any, ...], rest: dict[str, Any], annotations: Any) -> dict[str, Any]:
    """The compact pod of ``p``, its spec a :class:`KeyedSpec`."""
    m = p.metadata
    s = p.spec if p.spec is not None else _SpecRaw()
    meta: dict[str, Any] = {}
    if m is not None:
        for k in _META_KEYS:
            v = annotations if k == "annotations" else getattr(m, k)
            if v is not UNSET and v is not _NO:
                if k == "annotations":
                    v = dict(v) if type(v) is dict else v
                elif k in _RAW_META:
                    v = _ANY.decode(v)
                meta[k] = v
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


def _keyed(p: _PodRaw) -> dict[str, Any]:
    """The compact pod of ``p``, its spec a :class:`KeyedSpec`."""
    return _compact(p, *_spec_key(p))


class _SomeItems(Exception):
    """Some items of a range read, some refused: ``items`` those read,
    ``errors`` one per item refused."""

    def __init__(self, items: list[Any], errors: list[InputError]) -> None:
        super().__init__(errors[0].message)
        self.items = items
        self.errors = errors


class _TooLong(str):
    """An integer's digits, more than Python converts (kept as text so that
    only its item is refused, not the range it is read in)."""


def _int_or_mark(digits: str, seen: list[str]) -> int | _TooLong:
    try:
        return int(digits)
    except ValueError:
        seen.append(digits)
        return _TooLong(digits)


def _holds(value: Any, kind: type) -> str | None:
    """The field path in ``value`` (decoded JSON) of a value of ``kind``
    it holds at any depth (``""``: ``value`` itself); ``None``: none."""
    from podnuma.fieldkit import field_path

    todo: list[tuple[Any, str]] = [(value, "")]
    while todo:
        v, at = todo.pop()
        if isinstance(v, kind):
            return at
        if isinstance(v, dict):
            todo.extend((x, field_path(at, str(k))) for k, x in reversed(v.items()))
        elif isinstance(v, list):
            todo.extend((x, field_path(at, i)) for i, x in reversed(list(enumerate(v))))
    return None


def _general_items(text: bytes, name: str) -> list[Any]:
    """The items of a range as the general reader reads them, each checked
    against the limits by itself (as nested in its list): an item refused
    is left out, not the range (a range is a run of one node's pods, cut
    at a piece's end on a cluster: what is read must not depend on it;
    :class:`_SomeItems`)."""
    too_long: list[str] = []
    items = json.loads(text, object_pairs_hook=json_object_pairs, parse_float=json_float,
                       parse_int=lambda digits: _int_or_mark(digits, too_long))
    out: list[Any] = []
    errors: list[InputError] = []
    for d in items:
        # (a range holds pods only: a PodList's item says no kind)
        pod = is_pod(d) or (type(d) is dict and d.get("kind") in (None, ""))
        compact = compact_pod(d) if pod else d
        try:
            # (in a field the fleet does not read, such a number is skipped,
            # as Go's decoder skips the field: only the compact pod counts)
            where = _holds(compact, _TooLong) if too_long else None
            if where is not None:
                # (the general reader refuses such a number: this item alone)
                raise InputError(f"invalid JSON: a number of more than {sys.get_int_max_str_digits()} digits",
                                 file=name, path=where)
            check_tree([d], name=name, limits=FLEET_LIMITS)
        except InputError as e:
            # (a lone surrogate's path: the item's field, not its place in this range)
            path = e.path[3:].lstrip(".") if e.path.startswith("[0]") else e.path
            errors.append(InputError(e.message, path=path, file=e.file))
            continue
        out.append(compact)
    if errors:
        raise _SomeItems(out, errors)
    return out


def _decode_range(chunk: bytes, name: str) -> list[Any]:
    """The items of ``chunk`` (complete items and separators): compact pods,
    or, when the typed decoder refuses them (a field of another type, an
    escape it does not take), plain values as the general reader gives."""
    text = b"[" + chunk + b"]"
    try:
        return [_keyed(p) for p in _PODS_RAW.decode(text)]
    except RecursionError:  # (nested past msgspec's limit: as the index read it)
        text = shallow(text)
        with contextlib.suppress(*_DECODE_ERRORS):
            return [_keyed(p) for p in _PODS_RAW.decode(text)]
    except _DECODE_ERRORS:
        pass
    return _general_items(text, name)


_ACTIVE = frozenset(ACTIVE_PHASES)


class PodLabels:
    """The labels of the pods whose bytes of them (and namespace) are the
    same, decoded once and shared: never changed. ``plain``: absent or a
    mapping of strings. ``workloads``: kept here by the replay, the
    workload of a pod with these labels by its one owner reference's kind
    and name (see :func:`podnuma.fleet.replay.workload_of`)."""

    __slots__ = ("labels", "plain", "workloads")

    def __init__(self, labels: Any) -> None:
        self.labels = labels
        self.plain = labels is None or (type(labels) is dict and all(type(v) is str for v in labels.values()))
        self.workloads: dict[tuple[str, str], tuple[str, str]] = {}


_LABELS: dict[tuple[str, bytes | None], PodLabels] = {}
def _labels_of(ns: str, lab: msgspec.Raw) -> PodLabels:
    key = (ns, None if lab is _NO else bytes(lab))
    got = _LABELS.get(key)
    if got is None:
        got = PodLabels(None if lab is _NO else _ANY.decode(lab))
        if len(_LABELS) >= _SPECS_LIMIT:
            _LABELS.clear()
        _LABELS[key] = got
    return got


class ScannedPod(Mapping[str, Any]):
    """A pod read from a byte range, for the replay: what the replay reads
    of every pod (its node, identity, start order, the key of its spec) at
    hand, and the compact pod document (:func:`podnuma.fleet.pods.compact_pod`,
    its spec a :class:`KeyedSpec`) built only when something asks for it
    (a what-if that rewrites the pod, a scenario). As a mapping it is that
    document. Made by :func:`_decode_scanned`."""

    __slots__ = ("_raw", "key", "node", "namespace", "name", "uid", "shared", "owners", "ident", "start",
                 "_doc")

    _raw: _PodRaw
    #: the spec's key (see :class:`KeyedSpec`)
    key: tuple[Any, ...]
    node: Any
    namespace: str
    #: as in the dump (``None`` when absent)
    name: Any
    uid: Any
    #: the labels, shared by the pods with the same
    shared: PodLabels
    #: as in the dump (``None`` when absent)
    owners: Any
    #: the identity a pod in two dumps is counted once by, and
    #: :func:`podnuma.fleet.pods.start_key`
    ident: tuple[str, str, str]
    start: tuple[str, str, str]
    _doc: dict[str, Any] | None

    @property
    def labels(self) -> Any:
        return self.shared.labels

    def rest(self) -> tuple[Any, Any, Any, Any]:
        """What the parse reads of the pod besides its key, identity, node
        and owners, as decoded (``None`` when absent): ``generateName``,
        ``creationTimestamp``, ``status.startTime`` and ``status.qosClass``
        (``status.phase`` is a string or null: the decoder's type)."""
        raw = self._raw
        m = raw.metadata
        gname = created = started = qos = None
        if m is not None:
            gname, created = m.generateName, m.creationTimestamp
            gname = None if gname is UNSET else gname
            created = None if created is UNSET else created
        st = raw.status
        if st is not None:
            started, qos = st.startTime, st.qosClass
            started = None if started is UNSET else started
            qos = None if qos is UNSET else qos
        return gname, created, started, qos

    @property
    def doc(self) -> dict[str, Any]:
        d = self._doc
        if d is None:
            raw = self._raw
            rest, annotations = _spec_for(self.key, raw)
            d = self._doc = _compact(raw, self.key, rest, annotations)
        return d

    def __getitem__(self, k: str) -> Any:
        return self.doc[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self.doc)

    def __len__(self) -> int:
        return len(self.doc)


_EMPTY_META = _MetaRaw()
_EMPTY_SPEC = _SpecRaw()


def _decode_scanned(chunk: bytes, name: str) -> list[Any]:
    """The active pods of ``chunk`` as :class:`ScannedPod` (other items and
    pods that are not active dropped), in file order; or, when the typed
    decoder refuses the chunk, what :func:`_decode_range` gives then.
    (:func:`_spec_key` and the fields of a :class:`ScannedPod` worked out
    in one loop: this is the replay's per-pod reading.)"""
    text = b"[" + chunk + b"]"
    try:
        return _scanned(_PODS_RAW.decode(text))
    except RecursionError:  # (nested past msgspec's limit: as the index read it)
        text = shallow(text)
        with contextlib.suppress(*_DECODE_ERRORS):
            return _scanned(_PODS_RAW.decode(text))
    except _DECODE_ERRORS:
        pass
    return _general_items(text, name)


def _scanned(pods: list[_PodRaw]) -> list[Any]:
    """:func:`_decode_scanned` of the decoded items; ``ValueError`` where
    the general decoding is to read them."""
    out: list[Any] = []
    specs = _SPECS
    new = ScannedPod.__new__
    utc_match = _UTC.match  # (the API server's times: start_order's quick case, inline)
    for p in pods:
        # every item's spec decoded, as _decode_range does: the same refusals
        m = p.metadata
        s = p.spec
        if s is None:
            s = _EMPTY_SPEC
        if m is None:
            m = _EMPTY_META
            ns = None
        else:
            ns = m.namespace
            if ns is not UNSET and ns is not None and type(ns) is not str:
                raise ValueError("namespace is not a string")
        ann = m.annotations
        key = (ns, b"\0".join((ann, s.resources, s.overhead, s.restartPolicy, s.initContainers,
                                s.containers)))
        if key not in specs:
            _spec_of(key, s, ann)
        if p.kind != "Pod" and p.kind not in (None, ""):  # (a PodList's item says none)
            continue
        st = p.status
        if st is not None:
            phase = st.phase
            if type(phase) is str and phase not in _ACTIVE:
                continue
            start = st.startTime
            if (st.containerStatuses is not _NO or st.initContainerStatuses is not _NO
                    or (st.allocatedResources is not _NO and s.resources is not _NO)):
                key = _allocated_key(key, p)
        else:
            start = UNSET
        pod = new(ScannedPod)
        pod._raw = p
        pod.key = key
        node = s.nodeName
        pod.node = None if node is UNSET else node
        if ns is UNSET or not ns:
            ns = "default"
        pod.namespace = ns
        pname = m.name
        pod.name = pname = None if pname is UNSET else pname
        uid = m.uid
        pod.uid = uid = None if uid is UNSET else uid
        pod.shared = _labels_of(ns, m.labels)
        owners = m.ownerReferences
        pod.owners = None if owners is UNSET else owners
        pod.ident = (ns, str(pname), str(uid or ""))
        if type(start) is not str:
            start = m.creationTimestamp
            if type(start) is not str:
                start = ""
        if start:
            start = (start[:19] if len(start) == 20 and utc_match(start) is not None
                     else start_order(start))
        pod.start = (start, ns, str(pname or ""))
        pod._doc = None
        out.append(pod)
    return out


_START = operator.attrgetter("start")


def in_start_order(node: str, pods: list[Any], items: list[Any]) -> list[Any]:
    """:func:`podnuma.fleet.pods.with_ranged_pods`, quicker in the common
    case: no pods from other dumps, and every item a :class:`ScannedPod`
    of ``node`` (which carries its identity and start key)."""
    if pods or not all(type(p) is ScannedPod and p.node == node for p in items):
        return with_ranged_pods(node, pods, items)
    seen: set[tuple[str, str, str]] = set()
    out = []
    for p in items:
        if p.ident not in seen:  # the same pod in two dumps
            seen.add(p.ident)
            out.append(p)
    out.sort(key=_START)
    return out


def read_ranges(
    ranges: Iterable[Range], decode: Callable[[bytes, str], list[Any]] = _decode_range,
) -> Iterable[tuple[Range, list[Any] | InputError]]:
    """The items of each range (a file's ranges together, in the order
    given), or the error that stopped reading it (a file gone, changed
    since it was indexed); a range some of whose items are refused (too
    deep): the others, then an error for each refused.

    A range whose file is a :class:`DumpName` is read from the file the
    index read only: the status of the descriptor its bytes are read from
    is taken once before the file's ranges are read and once after (not
    per range), and a file whose identity (:func:`file_ident`) is not the
    name's, before or after (written again since it was indexed, or while
    its ranges were read), gives each of those ranges one error,
    :data:`CHANGED` (the same error for all), and none of its items: never
    the bytes of another version of the dump read as its index said."""
    by_file: dict[str, list[Range]] = {}
    for r in ranges:
        by_file.setdefault(r[0], []).append(r)
    for f in sorted(by_file):
        name = str(f)
        try:
            # (never waiting: a dump replaced by a named pipe since it was
            # indexed is refused, not waited on for a writer)
            fd = os.open(f, os.O_RDONLY | _NONBLOCK)
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                os.close(fd)
                raise OSError(0, "not a regular file any more")
        except OSError as e:
            err = InputError(f"cannot read: {e.strerror or e}", file=name)
            for r in by_file[f]:
                yield r, err
            continue
        try:
            got = _read_file_ranges(fd, file_ident(st), by_file[f], decode, name)
        finally:
            os.close(fd)
        yield from got


def _read_file_ranges(
    fd: int, now: int, ranges: list[Range], decode: Callable[[bytes, str], list[Any]], name: str,
) -> list[tuple[Range, list[Any] | InputError]]:
    """:func:`read_ranges` of one file's ``ranges``, open as ``fd``, whose
    identity was ``now`` when it was opened."""
    out: list[tuple[Range, list[Any] | InputError]] = []
    changed = InputError(CHANGED, file=name)
    checked = False
    for r in ranges:
        want = getattr(r[0], "ident", None)
        if want is not None:
            checked = True
            if want != now:
                out.append((r, changed))
                continue
        chunk = os.pread(fd, r[2] - r[1], r[1])
        try:
            if len(chunk) != r[2] - r[1]:
                raise ValueError("the file is shorter than when it was indexed")
            out.append((r, decode(chunk, name)))
        except _SomeItems as e:
            out.append((r, e.items))
            out.extend((r, err) for err in e.errors)
        except (ValueError, RecursionError) as e:
            out.append((r, InputError(f"changed since it was indexed, or unreadable: {e}", file=name)))
        except InputError as e:
            out.append((r, e))
    if checked and file_ident(os.fstat(fd)) != now:  # written again while its ranges were read
        told: set[Range] = set()
        again: list[tuple[Range, list[Any] | InputError]] = []
        for r, items in out:
            if getattr(r[0], "ident", None) is None:
                again.append((r, items))
            elif r not in told:
                told.add(r)
                again.append((r, changed))
        out = again
    return out


def pods_of_ranges(
    node_ranges: Mapping[str, Sequence[Range]], *, scanned: bool = False,
) -> tuple[dict[str, list[Any]], list[tuple[str, InputError]]]:
    """Each node's items, in the order of its ranges; the errors by node
    (an error met in several of a node's ranges, a dump changed since it
    was indexed, told once for it). ``scanned``: the active pods as
    :class:`ScannedPod` (for the replay) rather than every item as a
    compact pod."""
    owner: dict[Range, list[str]] = {}
    for node, rs in node_ranges.items():
        for r in rs:
            owner.setdefault(r, []).append(node)
    out: dict[str, list[Any]] = {n: [] for n in node_ranges}
    got: dict[Range, list[Any]] = {}
    errors: list[tuple[str, InputError]] = []
    told: set[tuple[str, int]] = set()
    if scanned and _HELD:  # pods decoded when their dump was indexed (the rest read back)
        idents: dict[str, int | None] = {}
        for r in owner:
            held = _take_held(r, idents)
            if held is not None:
                with contextlib.suppress(*_DECODE_ERRORS):  # else read back: the general decoding words it
                    got[r] = _scanned(held)
    for r, items in read_ranges([r for r in owner if r not in got] if got else owner,
                                _decode_scanned if scanned else _decode_range):
        if isinstance(items, InputError):
            for n in owner[r]:
                if (n, id(items)) not in told:
                    told.add((n, id(items)))
                    errors.append((n, items))
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
    issues.extend(Issue("warning", e.message, node=node, file=e.file, path=e.path) for _, e in errors)
    return with_ranged_pods(node, by_node[node], got[node]), issues
