"""Reading a fleet: cluster dumps, per-node configuration and topology.

The inputs are the files a platform engineer can get read-only from a
cluster, given as files or directories (scanned recursively), each
recognised by its content:

* ``kubectl get nodes -o json`` (a ``List``/``NodeList`` of ``Node``);
* ``kubectl get pods -A -o json`` (a ``List``/``PodList`` of ``Pod``), in
  one file or several (e.g. one per ``--field-selector spec.nodeName=``);
* ``kubectl get noderesourcetopologies -o json`` (``NodeResourceTopology``
  ``topology.node.k8s.io/v1alpha2`` objects, one per node, named like it);
* configz: ``kubectl get --raw /api/v1/nodes/NODE/proxy/configz`` saved as
  ``NODE.json`` (``{"kubeletconfig": {...}}``);
* cadvisor ``MachineInfo`` JSON saved as ``NODE.json`` (a standalone
  cAdvisor's ``/api/v2.0/machine``), and copies of ``/sys`` in a directory
  ``sysfs/NODE/``;
* a ``podnuma.io/v1`` ``FleetConfig`` file: node groups by label selector,
  each with a ``KubeletConfiguration`` and/or a node form (the scenario
  contract's ``node`` mapping: ``synthetic``, ``machineInfoFile``...), e.g.
  a form per instance type.

A node's kubelet configuration is its configz, else the first group that
selects it and gives one, else the kubelet's defaults (with a warning). Its
topology is its NodeResourceTopology, else its MachineInfo, else its sysfs
copy, else the first group that selects it and gives a node form; without
any, the node is reported and not replayed.

Pods are not all held in memory: the files are indexed (which nodes each
file holds pods of) and the pods are read again, per node, by whoever
replays the node (:func:`read_node_pods`); in one process, the pods the
index decoded are kept for the replay when the dumps are small enough
(:data:`~podnuma.fleet.podscan.HOLD_BYTES` of JSON files in all). A truncated JSON
list (a dump cut short) is read up to its last complete item and
reported.

Where the fleet is read on a cluster or a pool, a large dump is cut into
pieces of a few MiB (:func:`~podnuma.fleet.podscan.cut_pieces`: this
process reads its first 64 KiB, nothing more, and its last 64 KiB when a
``PodList`` says its ``kind`` after its items), each indexed where it is
read; the pieces' indexes are taken together once all of the dump's are
in (:class:`_InOrder`), or, when one could not be read by itself or a pod
is in two of them, the dump is read whole here instead, as in one process.

A dump written again while the fleet is read is never read as two
versions: each reading of a file keeps the file's identity as it was all
the while it was read (size, modification time, inode:
:func:`~podnuma.fleet.dumpfile.read_dump`, and a piece against the dump as
it was cut), the pods to read again for the replay name their file with
it (:class:`~podnuma.fleet.dumpfile.DumpName`), and the pieces of a dump
are taken together only when they are of one version (else it is read
whole, anew). The replay reads from that version only, and says of
another that it changed since it was indexed.

The fleet assembled from its files (this module), read by
:mod:`.files`; pods compacted and indexed by :mod:`.pods`; node groups
(:mod:`.groups`, selectors in :mod:`.selectors`); NodeResourceTopology
objects converted by :mod:`.nrt`.

Everything here reports problems as :class:`~podnuma.fleet.model.Issue`
records and goes on; only unreadable command-line arguments raise
:class:`~podnuma.errors.InputError`.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import os
import re
import stat
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.fieldkit import field_path, inert, wrong_type
from podnuma.fleet import podscan
from podnuma.fleet.batches import consecutive_batches, file_weight, guided_batches
from podnuma.fleet.files import (
    ItemProblems,
    _is_map,
    item_problem,
    left_out,
    node_damage,
    objects_of,
    parse_document,
    read_document_text,
)
from podnuma.fleet.groups import FLEET_KIND, NodeGroup, _load_groups
from podnuma.fleet.model import Issue, NodeSpec, Severity
from podnuma.fleet.nodescan import clean_node_list
from podnuma.fleet.nrt import NrtError, NrtForms
from podnuma.fleet.pods import ACTIVE_PHASES, _meta, _node_name, _phase, compact_pod, start_key
from podnuma.fleet.podscan import (
    DumpChanged,
    DumpName,
    Piece,
    PodFileIndex,
    Range,
    cut_pieces,
    index_piece,
    index_pod_file,
    pod_key,
    read_dump,
    release_held,
)
from podnuma.fleet.selectors import selector_matches
from podnuma.inputs.documents import field_path_under
from podnuma.inputs.pathcheck import unreachable

_DATA_SUFFIXES = (".json", ".yaml", ".yml")

__all__ = [
    "FleetInputs",
    "Scan",
    "assemble",
    "walk_inputs",
    "scan_files",
    "merge_scan",
    "file_batches",
    "with_inline_pods",
    "load_fleet",
    "read_once",
]


@dataclass
class FleetInputs:
    """The nodes to replay (sorted by name) and the fleet-level issues."""

    nodes: list[NodeSpec]
    issues: list[Issue] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    pods_without_node: int = 0
    pods_total: int = 0
    pods_duplicated: int = 0


@dataclass
class Scan:
    """What the inputs hold, before it is assembled per node."""

    nodes: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    node_files: dict[str, str] = field(default_factory=dict)
    pod_index: dict[str, set[str]] = field(default_factory=dict)  # node -> files
    pod_ranges: dict[str, list[Range]] = field(default_factory=dict)  # node -> indexed byte ranges
    node_paths: dict[str, str] = field(default_factory=dict)  # node -> where in its file
    pod_counts: dict[str, int] = field(default_factory=dict)
    truncated_pod_files: list[str] = field(default_factory=list)
    nrt: dict[str, tuple[Mapping[str, Any], str]] = field(default_factory=dict)
    nrt_paths: dict[str, str] = field(default_factory=dict)  # node -> where its NRT is in its file
    configz: dict[str, tuple[Mapping[str, Any], str]] = field(default_factory=dict)
    machineinfo: dict[str, str] = field(default_factory=dict)
    sysfs: dict[str, str] = field(default_factory=dict)
    groups: list[NodeGroup] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    unbound: int = 0
    pods_total: int = 0
    #: :func:`~podnuma.fleet.podscan.pod_key` of each pod counted -> the
    #: node it is bound to ("" when none): a pod in two dumps
    #: (``pods.json`` and a per-node dump) is counted once, as the replay
    #: reads it once (:func:`~podnuma.fleet.pods.read_node_pods`); scans
    #: made in other processes are matched by :func:`merge_scan`.
    pod_keys: dict[bytes, str] = field(default_factory=dict)
    pods_duplicated: int = 0
    #: of those, per dump: the pods it lists more than once itself (a
    #: damaged dump: ``kubectl get`` lists each pod once), and the pods it
    #: holds that an earlier dump (in the order read) holds too
    pods_repeated: dict[str, int] = field(default_factory=dict)
    dumped_again: dict[str, int] = field(default_factory=dict)
    #: per node, the pods bound to it found again in a later dump (their
    #: copies are compared when the node is replayed)
    node_copies: dict[str, int] = field(default_factory=dict)
    #: per node, the pods bound to it a dump lists again itself, and the
    #: byte ranges of those copies where the dump is indexed (the copies
    #: are compared when the node is replayed)
    node_repeats: dict[str, int] = field(default_factory=dict)
    pod_repeats: dict[str, list[Range]] = field(default_factory=dict)
    #: the pod keys of scans made elsewhere, per file in the order merged
    #: (:func:`pack_keys`): matched all at once by :func:`settle_keys`;
    #: and the dump each entry is of
    packed_keys: list[PackedKeys] = field(default_factory=list)
    packed_files: list[str] = field(default_factory=list)
    #: the scan of a piece of a dump (:class:`~podnuma.fleet.podscan.Piece`):
    #: its file, its index and the number of pieces; whether it was read
    #: (else the file is read whole)
    piece: tuple[str, int, int] | None = None
    piece_read: bool = True
    #: the identity of the dump the piece was read from
    #: (:func:`~podnuma.fleet.dumpfile.file_ident`): the pieces of a dump
    #: are taken together only when they are of one version of it
    piece_ident: int | None = None


#: One scan's pod keys as a process sends them back: the keys end to end
#: (``KEY_SIZE`` bytes each, in the scan's order), the names of the nodes
#: they are bound to, and per key the index of its node in that list
#: (``uint32``, native order). A million pods are 12 MB of keys and 4 MB of
#: indices instead of a million-entry mapping to build, send and merge.
PackedKeys = tuple[bytes, tuple[str, ...], bytes]
KEY_SIZE = 12
#: the type code of a packed key's node index (unsigned int: 4 bytes on the
#: platforms CPython runs on; native order)
_INDEX_CODE = "I"


class Based(str):
    """A file to read (its path, as ``str``) whose relative references (a
    FleetConfig's ``kubeletConfigFile``, ``nodeFile``, ``machineInfoFile``,
    ``sysfs``) resolve against ``base`` rather than the file's directory:
    standard input's copy, whose references are the working directory's,
    as a scenario's read from standard input are. A ``str`` so that it
    goes wherever a batch's file names go (and is pickled with its base)."""

    base: str

    def __new__(cls, path: str, base: str) -> Based:
        self = super().__new__(cls, path)
        self.base = base
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return Based, (str(self), self.base)


def _is_machine_info(doc: Any) -> bool:
    return _is_map(doc) and "num_cores" in doc and "topology" in doc


#: what a file with nothing in it is, whatever its suffix (an error naming
#: it: alone, the command's one line and exit 2, as for a file that cannot
#: be parsed; beside other dumps, one of the report's issues)
EMPTY_FILE = "empty file: no Kubernetes objects"
#: a YAML file of comments and document markers (`---`, `...`) only
NO_DOCUMENT = "no YAML document (only comments and markers): no Kubernetes objects"
#: YAML that holds no value: lines that are blank, a comment or a document
#: marker (possessive: read in one pass, never gone over again)
_NOTHING_LINE = r"(?:[ \t]*+(?:#[^\r\n]*+)?|(?:---|\.\.\.)(?:[ \t]++(?:#[^\r\n]*+)?)?)"
_NOTHING = re.compile(rf"(?>{_NOTHING_LINE}(?:\r\n|\r|\n))*+{_NOTHING_LINE}")


def _emptiness(text: str, yaml: bool) -> str | None:
    """Why ``text`` (a file's) holds no object at all: nothing but white
    space (zero bytes among it, and a byte order mark), or for YAML
    (``yaml``) nothing but comments and document markers; ``None`` when it
    holds something (an empty list, ``{"kind": "List", "items": []}``, is
    something: no object of that kind)."""
    body = text.lstrip("\ufeff")
    if not body.strip():
        return EMPTY_FILE
    if yaml and _NOTHING.fullmatch(body):
        return NO_DOCUMENT
    return None


def _no_objects(doc: Any, yaml: bool = False) -> str | None:
    """Why a parsed file (not a kubelet configuration, FleetConfig or
    MachineInfo) holds no Kubernetes object at all, what it is instead
    (``None``: it holds an object with a ``kind``, or a list, even an empty
    one: ``items: []`` or ``items: null`` is 0 objects of that kind)."""
    docs = doc if isinstance(doc, list) else [doc]
    for d in docs:
        if _is_map(d):
            kind = d.get("kind")
            if "items" in d and str(kind if kind is not None else "List").endswith("List"):
                return None
            if isinstance(kind, str) and kind and not kind.endswith("List"):
                return None
    if isinstance(doc, list):
        what = "null" if not doc and yaml else "an empty array" if not doc else (
            "values none of which is a Kubernetes object")
    elif doc is None:
        what = "null"
    elif isinstance(doc, bool):
        what = "a boolean"
    elif isinstance(doc, (int, float)):
        what = "a number"
    elif isinstance(doc, str):
        what = "a string"
    elif not _is_map(doc):
        what = "a value"
    elif isinstance(doc.get("kind"), str) and doc["kind"]:
        what = f"a {doc['kind']} without items"
    else:
        what = "a mapping without kind"
    return f"not a Kubernetes object or list ({what}): no Kubernetes objects"


def _classify(path: Path, scan: Scan, hold: bool = False, base: Path | None = None) -> None:
    """The file at ``path`` read into ``scan``: read once (the index, else
    the general reader), with its identity while it was read
    (:func:`~podnuma.fleet.dumpfile.read_dump`), which the pods it gives to
    read again (byte ranges, or the file itself for the general reader's)
    carry; a file written again every time it was read is an error naming
    it, nothing of it read."""
    name = str(path)
    scan.files.append(name)
    data: bytes | None = None
    ident: int | None = None
    try:
        data, ident = read_dump(path, name)
    except DumpChanged as e:
        scan.issues.append(Issue("error", e.message, file=name))
        return
    except InputError:
        data = None  # the general reader reads it again and words the problem
    index = index_pod_file(path, scan.pod_keys, data, hold, ident) if data is not None else None
    if index is not None:  # a clean JSON list of pods: indexed, not held
        _add_index(scan, index)
        return
    nodes = clean_node_list(data) if data is not None and path.suffix.lower() == ".json" else None
    if nodes is not None:  # a clean JSON list of Nodes: the fields the fleet reads, read as any list
        read_objects(nodes, name, scan)
        return
    text, issue = read_document_text(path, data)
    if text is not None:
        empty = _emptiness(text, path.suffix.lower() != ".json")
        if empty is not None:
            scan.issues.append(Issue("error", empty, file=name))
            return
    doc = None
    if text is not None:
        doc, issue = parse_document(path, text)
    if issue is not None:
        if _says_fleet(text, data):
            # the user's FleetConfig: all or nothing (never left out with an issue)
            raise InputError(issue.message, path=issue.path, file=issue.file or name)
        scan.issues.append(issue)
    if doc is None:
        if text is not None and issue is None:  # JSON null
            scan.issues.append(Issue("error", _no_objects(None) or "", file=name))
        return
    if is_configz(doc):
        read_configz(doc, None if path.suffix.lower() in (".yaml", ".yml") else text,
                     path.stem, name, scan)
        return
    if _is_map(doc) and doc.get("kind") == FLEET_KIND:
        scan.groups.extend(_load_groups(doc, path, base))
        return
    if _is_map(doc) and doc.get("kind") == KUBELET_KIND and path.parent.name == "configz":
        # a configz's ``kubeletconfig`` saved alone (``jq .kubeletconfig``)
        # as configz/NODE.json: the node's configuration, read as a configz
        read_configz({"kubeletconfig": doc}, None, path.stem, name, scan)
        if text is not None and path.suffix.lower() not in (".yaml", ".yml") and path.stem in scan.configz:
            with contextlib.suppress(InputError, ValueError, TypeError, RecursionError):
                again = json.loads(text, object_pairs_hook=json_object_pairs)
                if _is_map(again):
                    scan.configz[path.stem] = (again, name)
        return
    if _claims_fleet(doc, path):
        _not_fleet(doc, name)
    if _is_machine_info(doc):
        scan.machineinfo[path.stem] = name
        return
    nothing = _no_objects(doc, path.suffix.lower() != ".json")
    if nothing is not None:  # as an empty file: an error naming it
        scan.issues.append(Issue("error", nothing, file=name))
        return
    read_objects(doc, name, scan, pod_file=name if ident is None else DumpName(name, ident))


#: the kind of a kubelet configuration file (read as a configz when saved
#: as ``configz/NODE.json``)
KUBELET_KIND = "KubeletConfiguration"
#: a line that says a file is a FleetConfig (``kind: FleetConfig...``, in
#: YAML or JSON; looked for only in a file that could not be read, which
#: then fails the command)
_FLEET_LINE = re.compile(r"""(?:^|[{,\s])["']?kind["']?[ \t]*:[ \t]*["']?FleetConfig""", re.MULTILINE | re.IGNORECASE)
#: how far into a file that could not be read that line is looked for
#: (a FleetConfig is a few lines; a broken dump is not read through again)
_FLEET_LOOK = 1 << 20


def _says_fleet(text: str | None, data: bytes | None) -> bool:
    """Whether a file that could not be read says it is a FleetConfig (a
    ``kind: FleetConfig...`` in its first MiB)."""
    if text is None:
        if data is None:
            return False
        text = data[:_FLEET_LOOK].decode("utf-8", "replace")
    return _FLEET_LINE.search(text, 0, _FLEET_LOOK) is not None


def _fleetish(d: Any) -> bool:
    """Whether a parsed document claims to be a FleetConfig: its ``kind``
    begins with ``FleetConfig`` (any case: a typo of it). Nothing else
    does: a file's name (``fleet.yaml`` may be another tool's, or the
    scenario ``--as-scenario`` writes for a node named ``fleet``), nor a
    ``nodeGroups`` key (a Helm chart's values), which are left to be read
    by content as any other file."""
    if not _is_map(d):
        return False
    kind = d.get("kind")
    return isinstance(kind, str) and kind.lower().startswith(FLEET_KIND.lower())


def _claims_fleet(doc: Any, path: Path) -> bool:
    """Whether a parsed file (not one FleetConfig) holds a document that
    claims to be one (:func:`_fleetish`): a YAML file's documents, or a
    mapping."""
    if isinstance(doc, list):
        return path.suffix.lower() in (".yaml", ".yml") and any(_fleetish(d) for d in doc)
    return _fleetish(doc)


def _not_fleet(doc: Any, name: str) -> None:
    """Raise the one line that says why a file claiming to be the
    FleetConfig is not one: the user's FleetConfig is read all or nothing."""
    if isinstance(doc, list):
        if not doc:
            raise InputError("a FleetConfig file holds one YAML document, not null", file=name)
        raise InputError(f"a FleetConfig file holds one YAML document, not {len(doc)}", file=name)
    if not _is_map(doc):
        raise wrong_type("", "a mapping (a FleetConfig)", doc).in_file(name)
    kind = doc.get("kind")
    if kind is None:
        raise InputError(f"Required value: must be {FLEET_KIND!r}", path="kind", file=name)
    raise InputError(f"Unsupported value: {kind!r}: must be {FLEET_KIND!r}", path="kind", file=name)


def is_configz(doc: Any) -> bool:
    """Whether a parsed document is a kubelet's configz
    (``{"kubeletconfig": ...}``, that key alone)."""
    return _is_map(doc) and "kubeletconfig" in doc and len(doc) == 1


def read_configz(doc: Any, text: str | None, node: str, name: str, scan: Scan) -> None:
    """The configz ``doc`` (:func:`is_configz`) of node ``node``, read from
    ``name`` (a file, or a live answer's API path), into ``scan``, or its
    problem as an issue. ``text``: the JSON it was parsed from (``None``
    for YAML), read again with every key as written: the kubelet's strict
    decoding reports duplicate fields, which a mapping no longer holds."""
    cfg = doc["kubeletconfig"]
    bad = configz_problem(cfg, node, name)
    if bad is not None:
        scan.issues.append(bad)
        return
    if text is not None:
        try:
            again = json.loads(text, object_pairs_hook=json_object_pairs)
            cfg = again["kubeletconfig"]
        except (InputError, ValueError, KeyError, TypeError, RecursionError):
            pass
    if node in scan.configz and scan.configz[node][1] != name:
        scan.issues.append(_given_twice("the kubelet configuration", node, scan.configz[node][1], name))
    scan.configz[node] = (cfg, name)


def configz_problem(cfg: Any, node: str, name: str) -> Issue | None:
    """What is wrong with the ``kubeletconfig`` of node ``node``'s configz
    read from ``name`` (``None``: a mapping, the configuration)."""
    if _is_map(cfg):
        return None
    return Issue("error", wrong_type("kubeletconfig", "a mapping", cfg).message,
                 node=node, file=name, path="kubeletconfig")


def read_objects(doc: Any, name: str, scan: Scan,
                 pods: dict[str, list[Mapping[str, Any]]] | None = None, pod_file: str | None = None) -> None:
    """The Kubernetes objects of a parsed document that holds some
    (:func:`_no_objects` said ``None``) read into ``scan``: nodes,
    NodeResourceTopology objects, pods counted and indexed as in ``name``;
    the problems of its items as issues naming ``name`` and the field path
    (:class:`~podnuma.fleet.files.ItemProblems`). ``pods``: where the pods
    counted and bound to a node are kept, by node (a live list answer's,
    which is not read again). ``pod_file``: the name its pods are read
    again from, for the replay (default ``name``; a
    :class:`~podnuma.fleet.dumpfile.DumpName`: that version of the file
    only, :func:`~podnuma.fleet.pods.read_node_pods`)."""
    pods_here = False
    problems = ItemProblems(name)
    here: set[bytes] = set()  # the pods of this document
    others: dict[str, int] = {}  # objects of kinds the fleet does not read, by kind
    other_at = ""  # where the first of them is
    for item, at, i in objects_of(doc, problems):
        bad = item_problem(item, at, i)
        out = bad is not None and left_out(item)  # (a damaged object: said, and not read)
        if bad is not None:
            # a Node left out is a node lost to the fleet: an error
            problems.add(bad, "error" if out and item.get("kind") == "Node" else "warning")
        if not _is_map(item):
            continue
        kind = item.get("kind")
        if kind == "Pod":
            pods_here = True
            if out:
                continue
            meta = _meta(item)
            key = pod_key(meta.get("namespace"), meta.get("name"), meta.get("uid"))
            node = _node_name(item)
            if key in scan.pod_keys:
                scan.pods_duplicated += 1
                if key in here:  # listed twice in this document
                    scan.pods_repeated[name] = scan.pods_repeated.get(name, 0) + 1
                    if node is not None:
                        scan.node_repeats[node] = scan.node_repeats.get(node, 0) + 1
                else:  # (a live answer read after dumps: in one of them too)
                    scan.dumped_again[name] = scan.dumped_again.get(name, 0) + 1
                    if node is not None:  # (as merge_scan counts the later copy)
                        scan.node_copies[node] = scan.node_copies.get(node, 0) + 1
                continue
            here.add(key)
            scan.pod_keys[key] = node or ""
            scan.pods_total += 1
            if node is None:
                scan.unbound += 1
                continue
            scan.pod_index.setdefault(node, set()).add(pod_file or name)
            scan.pod_counts[node] = scan.pod_counts.get(node, 0) + 1
            if pods is not None:
                pods.setdefault(node, []).append(item)
        elif out:
            continue
        elif kind == "Node":
            n = _meta(item).get("name")
            if isinstance(n, str) and n:
                where = field_path(at, i) if i >= 0 else at
                if n in scan.nodes:
                    scan.issues.append(Issue("warning", f"node {n} listed twice; the last one is used",
                                             node=n, file=name, path=where))
                scan.nodes[n] = item
                scan.node_files[n] = name
                scan.node_paths[n] = where
        elif kind == "NodeResourceTopology":
            n = _meta(item).get("name")
            if isinstance(n, str) and n:
                where = field_path(at, i) if i >= 0 else at
                if n in scan.nrt:
                    scan.issues.append(_given_twice("NodeResourceTopology", n, scan.nrt[n][1], name, where))
                scan.nrt[n] = (item, name)
                scan.nrt_paths[n] = where
        elif i >= 0 and isinstance(kind, str) and kind.endswith("List") and "items" in item:
            # a list in a list: kubectl writes none (its items are never
            # read: said, not taken for nothing)
            held = item["items"]
            count = f"its {len(held)} item(s)" if isinstance(held, list) else "its items"
            problems.add(InputError(f"a {kind} inside a list (kubectl writes none): {count} not read",
                                    path=field_path(at, i)))
        elif isinstance(kind, str) and kind:  # (a Deployment, `kubectl get events -o json`...)
            if not others:
                other_at = field_path(at, i) if i >= 0 else at
            others[kind] = others.get(kind, 0) + 1
    scan.issues.extend(problems.issues())
    if others:
        # (a KubeletConfiguration outside configz/ is most likely a node
        # group's ``kubeletConfigFile``, read through its FleetConfig)
        severity: Severity = "info" if set(others) == {KUBELET_KIND} else "warning"
        scan.issues.append(Issue(severity, _other_kinds(others), file=name, path=other_at))
    if pods_here and _is_map(doc) and doc.get("_truncated"):
        scan.truncated_pod_files.append(name)


#: the kinds of object the fleet reads from a dump
READ_KINDS = ("Pod", "Node", "NodeResourceTopology")


def _other_kinds(kinds: Mapping[str, int]) -> str:
    """What is said of a file's objects of kinds the fleet does not read
    (``kinds``: how many of each): no dump of the fleet's, so not read."""
    counted = ", ".join(f"{n} {inert(k)}" for k, n in sorted(kinds.items()))
    said = (f"{sum(kinds.values())} object(s) of a kind the fleet does not read ({counted}): not read "
            f"(the dumps it reads hold {', '.join(READ_KINDS)} objects)")
    if KUBELET_KIND in kinds:
        said += (f"; a {KUBELET_KIND} is a node's as configz/NODE.json, or a node group's through "
                 "its FleetConfig's kubeletConfigFile")
    return said


def _given_twice(what: str, node: str, first: str, then: str, where: str = "") -> Issue:
    """The warning of a node's ``what`` (its NodeResourceTopology, its
    kubelet configuration) given twice, in ``first`` and then in ``then``
    (the same file: twice in it): the last one is used, as of a Node
    listed twice."""
    files = f"in {then}" if first == then else f"in {first}, then in {then}"
    return Issue("warning", f"{what} of node {node} given twice ({files}); the last one is used",
                 node=node, file=then, path=where)


def _scan_file(scan: Scan) -> str:
    """The dump a one-file scan (:func:`scan_files`) is of."""
    if scan.piece is not None:
        return scan.piece[0]
    return scan.files[0] if scan.files else ""


def _add_index(scan: Scan, index: PodFileIndex) -> None:
    scan.issues.extend(index.issues)
    scan.pods_duplicated += index.duplicated
    if index.duplicated:  # (the pods a scan's index sees are its file's: listed twice in it)
        f = str(index.file)
        scan.pods_repeated[f] = scan.pods_repeated.get(f, 0) + index.duplicated
    for node, repeats in index.repeats.items():
        scan.pod_repeats.setdefault(node, []).extend(repeats)
        scan.node_repeats[node] = scan.node_repeats.get(node, 0) + len(repeats)
    scan.pods_total += index.pods
    scan.unbound += index.unbound
    for bound, count in index.counts.items():
        scan.pod_counts[bound] = scan.pod_counts.get(bound, 0) + count
    for bound, ranges in index.ranges.items():
        scan.pod_ranges.setdefault(bound, []).extend(ranges)


def _classify_piece(piece: Piece, scan: Scan, hold: bool = False) -> None:
    """A piece of a dump indexed into ``scan`` (the file named by its
    first piece's scan only), or marked not read."""
    scan.piece = (piece.path, piece.index, piece.count)
    if piece.index == 0:
        scan.files.append(piece.path)
    index = index_piece(piece, scan.pod_keys, hold)
    if index is None:
        scan.piece_read = False
        scan.pod_keys = {}
        return
    scan.piece_ident = getattr(index.file, "ident", None)
    _add_index(scan, index)


def _listed(directory: Path) -> list[Path]:
    """The entries of an input directory, sorted; ``INPUT: cannot read``
    (naming it) when it cannot be listed (``/proc/1/fdinfo``)."""
    try:
        return sorted(directory.iterdir())
    except OSError as e:
        raise InputError(f"INPUT: cannot read: {e.strerror or e}", file=str(directory)) from None


def _entry(child: Path) -> tuple[str, os.stat_result | None]:
    """What an entry of an input directory is, followed if it is a link:
    ``"dir"``, ``"file"``, ``"other"`` (a pipe, a socket, a device),
    ``"nothing"`` (a link to nothing), ``"loop"`` (a link that leads round),
    ``"gone"`` (removed since it was listed), or ``"unreachable: WHY"``;
    with its ``stat``."""
    try:
        st = child.stat()
    except FileNotFoundError:
        return ("nothing" if child.is_symlink() else "gone"), None
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "loop", None
        if e.errno == errno.EACCES and child.is_symlink():
            return f"unreachable: {e.strerror or e} (a symbolic link that cannot be followed)", None
        return f"unreachable: {unreachable(e)}", None
    except ValueError as e:  # (an embedded NUL byte)
        return f"unreachable: {e}", None
    if stat.S_ISDIR(st.st_mode):
        return "dir", st
    if stat.S_ISREG(st.st_mode):
        return "file", st
    return "other", st


def _inside(child: Path, root: Path) -> bool:
    """Whether the link ``child`` leads to a directory inside ``root``
    (the directory given as input, resolved)."""
    try:
        target = child.resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return target == root or root in target.parents


def walk_inputs(path: Path, scan: Scan, files: list[Path] | None = None,
                _seen: set[tuple[int, int]] | None = None, _root: Path | None = None) -> None:
    """Every input under ``path`` read into ``scan``; or, with ``files``,
    the data files listed there (to be read by :func:`scan_files`, where
    the fleet is replayed) and only the sysfs copies noted. A directory is
    read once however many links lead to it (a link to a directory above
    it would lead round for ever); a link to a directory outside the
    directory given as input (``/``, ``/proc/self``, another dumps tree) is
    not followed: it is left out with a warning, as what is not a regular
    file in a directory (a pipe, a socket, a device, a link to nothing, a
    link that leads round) or an entry that cannot be reached (``Permission
    denied``) is."""
    if path.is_dir():
        seen = set() if _seen is None else _seen
        if _root is None:
            try:
                _root = path.resolve()
            except (OSError, RuntimeError):
                _root = path
        try:
            st = path.stat()
        except OSError:
            st = None
        if st is not None:
            if (st.st_dev, st.st_ino) in seen:
                scan.issues.append(Issue("warning", "a directory already read (through another link): skipped",
                                         file=str(path)))
                return
            seen.add((st.st_dev, st.st_ino))
        try:
            entries = _listed(path)
        except InputError as e:
            if _seen is None:  # (the directory given: its one line)
                raise
            scan.issues.append(Issue("warning", f"{e.message.removeprefix('INPUT: ')}: skipped", file=str(path)))
            return
        for child in entries:
            if child.name.startswith("."):
                continue
            what, _ = _entry(child)
            if what == "dir" and child.name == "sysfs":
                try:
                    node_dirs = _listed(child)
                except InputError as e:
                    scan.issues.append(Issue("warning", f"{e.message.removeprefix('INPUT: ')}: skipped",
                                             file=str(child)))
                    continue
                for node_dir in node_dirs:
                    if _entry(node_dir)[0] == "dir":
                        scan.sysfs[node_dir.name] = str(node_dir)
                continue
            if what == "dir":
                if child.is_symlink() and not _inside(child, _root):
                    scan.issues.append(Issue(
                        "warning", "a link to a directory outside the input directory: skipped "
                        "(not followed; give that directory as an input to read it)", file=str(child)))
                    continue
                walk_inputs(child, scan, files, seen, _root)
            elif what.startswith("unreachable: "):
                scan.issues.append(Issue("warning", f"cannot reach it: {what[13:]}: skipped", file=str(child)))
            elif what == "loop":
                scan.issues.append(Issue("warning", "a link that leads round (to itself, through other "
                                         "links): skipped", file=str(child)))
            elif child.suffix.lower() not in _DATA_SUFFIXES:
                continue
            elif what == "file":
                walk_inputs(child, scan, files, seen, _root)
            elif what == "other":  # a pipe, a socket, a device: not a dump (as the kubelet skips
                # one in its manifest directory); a named pipe is read when named itself
                scan.issues.append(Issue("warning", "not a regular file: skipped", file=str(child)))
            elif what == "nothing":
                scan.issues.append(Issue("warning", "a link to nothing: skipped", file=str(child)))
        return
    if files is not None:
        files.append(path)
        return
    _classify(path, scan)


def scan_files(paths: Sequence[str | Piece], pack: bool = True, hold: bool = False) -> list[Scan]:
    """What each file holds (one :class:`Scan` per file, no pod in it: a
    pods dump is indexed); run where the fleet is replayed, so the files
    are read there and not by the process that assembles the fleet.
    ``pack``: the pod keys packed for sending (:func:`pack_keys`); not
    when the scans are merged in this process. ``hold``: the replay runs
    in this process too: the dumps' pods are decoded once, kept for it
    (:func:`~podnuma.fleet.podscan.index_pod_file`). A
    :class:`~podnuma.fleet.podscan.Piece` of a dump is indexed by itself."""
    out: list[Scan] = []
    for p in paths:
        part = Scan()
        if isinstance(p, Piece):
            _classify_piece(p, part, hold)
        else:
            _classify(Path(p), part, hold, Path(p.base) if isinstance(p, Based) else None)
        if pack:
            pack_keys(part)
        out.append(part)
    return out


def pack_keys(scan: Scan) -> None:
    """``scan.pod_keys`` moved into ``scan.packed_keys`` (one entry)."""
    if not scan.pod_keys:
        return
    names: dict[str, int] = {}
    index = array(_INDEX_CODE, [names.setdefault(n, len(names)) for n in scan.pod_keys.values()])
    blob = b"".join(scan.pod_keys)
    assert len(blob) == KEY_SIZE * len(scan.pod_keys)
    scan.packed_keys.append((blob, tuple(names), index.tobytes()))
    scan.packed_files.append(_scan_file(scan))
    scan.pod_keys = {}


def settle_keys(scan: Scan) -> None:
    """The pods of ``scan.packed_keys`` that are also in an earlier file
    (``scan.pod_keys``, then the packed keys in order) counted once, as
    :func:`merge_scan` counts the keys it merges one by one. (Plain sets:
    the command that assembles a fleet read on a cluster does not import
    numpy for it; a dump with no key seen before is matched at once.)"""
    if not scan.packed_keys:
        return
    matcher = KeyMatcher(scan.pod_keys)
    matcher.feed(scan.packed_keys, files=scan.packed_files)
    matcher.settle(scan)


class KeyMatcher:
    """:func:`settle_keys` a file at a time: :meth:`feed` matches the packed
    keys merged since it was last given them (while the other files are
    still being read), :meth:`settle` counts what it found. ``seen``: the
    keys of the files before the first packed one (``scan.pod_keys``)."""

    def __init__(self, seen: Iterable[bytes] = ()) -> None:
        self.seen: set[bytes] = set(seen)
        self.names: list[str] = []
        self.found: dict[int, int] = {}  # a node's place in ``names`` -> its pods seen before
        self.again: dict[str, int] = {}  # a dump -> its pods seen before
        self.fed = 0  # the entries of the packed keys matched so far

    def feed(self, packed_keys: Sequence[PackedKeys], sets: dict[int, set[bytes]] | None = None,
             files: Sequence[str] = ()) -> None:
        """``sets``: the keys of some of the blobs as sets, by the blob's
        ``id`` (made as they came: taken from there, not made again).
        ``files``: the dump each entry of ``packed_keys`` is of."""
        seen, names, found = self.seen, self.names, self.found
        for entry, (blob, table, packed) in enumerate(packed_keys[self.fed:], self.fed):
            base = len(names)
            names.extend(table)
            fresh = sets.pop(id(blob), None) if sets else None
            if fresh is None:
                fresh = key_set(blob)
            if len(fresh) * KEY_SIZE == len(blob) and seen.isdisjoint(fresh):
                seen |= fresh
                continue
            keys = [blob[i:i + KEY_SIZE] for i in range(0, len(blob), KEY_SIZE)]
            index = array(_INDEX_CODE)
            index.frombytes(packed)
            dump = files[entry] if entry < len(files) else ""
            for key, place in zip(keys, index, strict=True):
                if key in seen:
                    found[base + place] = found.get(base + place, 0) + 1
                    self.again[dump] = self.again.get(dump, 0) + 1
                else:
                    seen.add(key)
        self.fed = len(packed_keys)

    def settle(self, scan: Scan) -> None:
        """The pods found twice taken off ``scan``'s counts (every entry of
        its packed keys fed); its packed keys dropped."""
        for i in sorted(self.found):
            name, k = self.names[i], self.found[i]
            scan.pods_duplicated += k
            scan.pods_total -= k
            if not name:
                scan.unbound -= k
            else:
                scan.node_copies[name] = scan.node_copies.get(name, 0) + k
                if scan.pod_counts.get(name, 0) > 0:
                    scan.pod_counts[name] = max(0, scan.pod_counts[name] - k)
        for dump, k in self.again.items():
            scan.dumped_again[dump] = scan.dumped_again.get(dump, 0) + k
        scan.packed_keys = []
        scan.packed_files = []


def key_set(blob: bytes) -> set[bytes]:
    """The pod keys of a packed blob (see :data:`PackedKeys`)."""
    return {blob[i:i + KEY_SIZE] for i in range(0, len(blob), KEY_SIZE)}


def merge_scan(into: Scan, part: Scan) -> None:
    """``part`` (the scan of later files) added to ``into``."""
    into.files.extend(part.files)
    for n, item in part.nodes.items():
        if n in into.nodes:
            into.issues.append(Issue("warning", f"node {n} listed twice; the last one is used",
                                     node=n, file=part.node_files[n], path=part.node_paths.get(n, "")))
        into.nodes[n] = item
        into.node_files[n] = part.node_files[n]
        into.node_paths[n] = part.node_paths.get(n, "")
    into.issues.extend(part.issues)
    for node, files in part.pod_index.items():
        into.pod_index.setdefault(node, set()).update(files)
    for node, ranges in part.pod_ranges.items():
        into.pod_ranges.setdefault(node, []).extend(ranges)
    for node, count in part.pod_counts.items():
        into.pod_counts[node] = into.pod_counts.get(node, 0) + count
    into.truncated_pod_files.extend(part.truncated_pod_files)
    for n, (_, f) in part.nrt.items():
        if n in into.nrt:
            into.issues.append(_given_twice("NodeResourceTopology", n, into.nrt[n][1], f,
                                            part.nrt_paths.get(n, "")))
    for n, (_, f) in part.configz.items():
        if n in into.configz and into.configz[n][1] != f:
            into.issues.append(_given_twice("the kubelet configuration", n, into.configz[n][1], f))
    into.nrt.update(part.nrt)
    for n in part.nrt:  # (where in its file: known for the ones read from files)
        if n in part.nrt_paths:
            into.nrt_paths[n] = part.nrt_paths[n]
        else:
            into.nrt_paths.pop(n, None)
    into.configz.update(part.configz)
    into.machineinfo.update(part.machineinfo)
    into.sysfs.update(part.sysfs)
    into.groups.extend(part.groups)
    into.unbound += part.unbound
    into.pods_total += part.pods_total
    into.pods_duplicated += part.pods_duplicated
    for counts, more in ((into.pods_repeated, part.pods_repeated), (into.dumped_again, part.dumped_again),
                         (into.node_copies, part.node_copies), (into.node_repeats, part.node_repeats)):
        for what, count in more.items():
            counts[what] = counts.get(what, 0) + count
    for node, repeats in part.pod_repeats.items():
        into.pod_repeats.setdefault(node, []).extend(repeats)
    if into.packed_keys or part.packed_keys:  # matched by settle_keys, in this order
        pack_keys(part)
        into.packed_keys.extend(part.packed_keys)
        into.packed_files.extend(part.packed_files)
        part.packed_files = []
    again = _scan_file(part)
    for key, node in part.pod_keys.items():  # a pod also in an earlier file: counted once
        if key not in into.pod_keys:
            into.pod_keys[key] = node
            continue
        into.dumped_again[again] = into.dumped_again.get(again, 0) + 1
        if node:
            into.node_copies[node] = into.node_copies.get(node, 0) + 1
        into.pods_duplicated += 1
        into.pods_total -= 1
        if not node:
            into.unbound -= 1
        elif into.pod_counts.get(node, 0) > 0:
            into.pod_counts[node] -= 1


class FileMapper(Protocol):
    """A way to run :func:`scan_files` on batches of files (an executor's
    map): the results in the order of the batches; ``arrived`` given each
    batch's as it comes."""

    def __call__(self, fn: Callable[[Sequence[str | Piece]], list[Scan]], args: Sequence[Sequence[str | Piece]], *,
                 arrived: Callable[[int, list[Scan]], None] | None = None) -> list[list[Scan]]: ...


class _InOrder:
    """The scans of the batches merged into ``scan`` in the order of the
    batches, each as soon as those before it are (results come in the order
    the tasks end), and their pod keys matched as they are merged: the
    process that assembles the fleet does that while the last files are
    still being read, not after."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.next = 0  # the first batch not merged
        self.waiting: dict[int, list[Scan]] = {}
        self.pieces: list[Scan] = []  # the scans of a dump's pieces, until its last
        self.piece_keys: set[bytes] = set()  # their pods' keys
        self.pieces_apart = True  # no pod in two of them
        # the keys of each scan's packed blob as a set, by the blob's id:
        # made as the scan comes (while the other files are still being
        # read), for the pieces' check and the key matching
        self.sets: dict[int, set[bytes]] = {}
        # (keys kept unpacked, ``scan.pod_keys``, count before every packed
        # one: with any, all are matched at the end)
        self.keys = KeyMatcher()

    def arrived(self, i: int, scans: list[Scan]) -> None:
        for part in scans:
            for blob, _, _ in part.packed_keys:
                self.sets[id(blob)] = key_set(blob)
        self.waiting[i] = scans
        while self.next in self.waiting:
            self._merge(self.waiting.pop(self.next))
            self.next += 1

    def _merge(self, scans: list[Scan]) -> None:
        for part in scans:
            if part.piece is not None:
                if self.pieces and (part.piece[1] == 0 or self.pieces[0].piece != (part.piece[0], 0, part.piece[2])):
                    self._merge_pieces()  # (the last piece of the dump before never came)
                self.pieces.append(part)
                self._piece_keys(part)
                if part.piece[1] == part.piece[2] - 1:
                    self._merge_pieces()
                continue
            if self.pieces:  # (the last piece of the dump before never came)
                self._merge_pieces()
            merge_scan(self.scan, part)
        if not self.scan.pod_keys:
            self.keys.feed(self.scan.packed_keys, self.sets, self.scan.packed_files)

    def _merge_pieces(self) -> None:
        """The scans of a dump's pieces merged, in order; or, when they are
        not all there and read, were read from different versions of the
        dump (written again meanwhile: each piece refuses one that is not
        the dump as it was cut, so this is a second guard), or a pod is in
        two of them (the dump read whole keeps its first and leaves the
        other out of the ranges: one piece cannot know the other's pods),
        the dump read whole here, as it is now (a dump that keeps changing
        while it is read whole: an error naming it,
        :func:`~podnuma.fleet.dumpfile.read_dump`)."""
        pieces, self.pieces = self.pieces, []
        apart, self.pieces_apart, self.piece_keys = self.pieces_apart, True, set()
        path, _, count = pieces[0].piece  # type: ignore[misc]
        ident = pieces[0].piece_ident
        whole = apart and len(pieces) == count and all(
            p.piece == (path, i, count) and p.piece_read and p.piece_ident == ident
            for i, p in enumerate(pieces))
        if not whole:
            for p in pieces:
                for blob, _, _ in p.packed_keys:
                    self.sets.pop(id(blob), None)
            merge_scan(self.scan, scan_files([path])[0])
            return
        for part in pieces:
            merge_scan(self.scan, part)

    def _piece_keys(self, part: Scan) -> None:
        """A piece's pod keys checked against its dump's pieces before it."""
        if not self.pieces_apart:
            return
        for blob, _, _ in part.packed_keys:
            fresh = self.sets.get(id(blob))
            if fresh is None:
                fresh = self.sets[id(blob)] = key_set(blob)
            if not self.piece_keys.isdisjoint(fresh):
                self.pieces_apart = False
                return
            self.piece_keys |= fresh

    def finish(self, results: Sequence[list[Scan]]) -> None:
        """The batches not merged yet (``results``: all of them, in order)
        merged, the keys of all settled."""
        for i in range(self.next, len(results)):
            self._merge(results[i])
        self.next = len(results)
        if self.pieces:
            self._merge_pieces()
            if not self.scan.pod_keys:
                self.keys.feed(self.scan.packed_keys, self.sets, self.scan.packed_files)
        if self.scan.pod_keys:
            settle_keys(self.scan)
        else:  # (every merge fed it)
            self.keys.settle(self.scan)


def file_batches(files: Sequence[Path], parts: int, runners: int | None = None,
                 bases: Mapping[str, str] | None = None) -> list[list[str | Piece]]:
    """``files`` in order, cut into about ``parts`` batches of similar work
    (a pods dump's bytes are its pods; each file costs a little besides).
    ``runners``: the batches are read by that many workers, each taking the
    next when free: large dumps are cut into pieces
    (:func:`~podnuma.fleet.podscan.cut_pieces`) and the batches shrink
    towards the end (down to a piece), so that the workers end together.
    ``bases``: files whose relative references resolve against another
    directory (:class:`Based`), by path."""
    work: list[str | Piece] = []
    sizes: list[int] = []
    split = False
    for f in files:
        pieces = cut_pieces(str(f)) if runners is not None else None
        if pieces:
            split = True
            work.extend(pieces)
            sizes.extend(file_weight(p.hi - p.lo) for p in pieces)
            continue
        work.append(Based(str(f), bases[str(f)]) if bases and str(f) in bases else str(f))
        try:
            sizes.append(file_weight(f.stat().st_size))
        except OSError:
            sizes.append(file_weight(0))
    target = max(1, sum(sizes) // max(1, parts))
    if not split:
        return consecutive_batches(work, sizes, target)
    # (down to one piece: a dump is cut into pieces of at most PIECE_BYTES,
    # the smallest of them the least a batch weighs)
    smallest = min(w for w, x in zip(sizes, work, strict=True) if isinstance(x, Piece))
    return guided_batches(work, sizes, runners=max(1, runners or 1), largest=target, smallest=smallest)


def _labels(node: Mapping[str, Any]) -> dict[str, str]:
    """The node's labels (a value that is not a string, which makes the
    node damaged, :func:`~podnuma.fleet.files.node_damage`, is left out:
    never written as Python writes it)."""
    raw = _meta(node).get("labels")
    return {str(k): v for k, v in raw.items() if isinstance(v, str)} if _is_map(raw) else {}


def _allocatable(node: Mapping[str, Any], key: str = "allocatable") -> dict[str, str]:
    st = node.get("status")
    alloc = st.get(key) if _is_map(st) else None
    return {str(k): v for k, v in alloc.items() if isinstance(v, str)} if _is_map(alloc) else {}


def _nrt_attributes(nrt: Mapping[str, Any]) -> dict[str, str]:
    """A NodeResourceTopology's ``attributes`` list as name -> value."""
    attrs = nrt.get("attributes")
    out: dict[str, str] = {}
    for a in attrs if isinstance(attrs, list) else []:
        if _is_map(a) and isinstance(a.get("name"), str) and isinstance(a.get("value"), str):
            out[a["name"]] = a["value"]
    return out


#: Node Feature Discovery's label for SMT (hardware multithreading).
NFD_SMT_LABEL = "feature.node.kubernetes.io/cpu-hardware_multithreading"


def load_fleet(
    paths: Sequence[Path], *, map_files: FileMapper | None = None, parts: int = 1,
    runners: int | None = None, bases: Mapping[str, str] | None = None,
) -> FleetInputs:
    """Read every input and assemble the nodes. ``map_files`` runs the
    reading of the files (in ``parts`` batches, by ``runners`` workers that
    each take the next batch when free, large dumps in pieces) where the
    fleet is replayed (default: here); this process only assembles what
    they hold. ``bases``: the directory the relative references of some
    files resolve against, by path (standard input's copy: the working
    directory), instead of the file's own.

    Raises :class:`InputError` only for a path that does not exist or a
    FleetConfig that is invalid; every other problem is an issue.
    """
    scan = Scan()
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise InputError("no such file or directory", file=str(p))
        walk_inputs(p, scan, files)
    files = read_once(files, scan)
    in_process = getattr(getattr(map_files, "__self__", None), "in_process", False)
    if map_files is None or in_process:
        batches = file_batches(files, parts, bases=bases)
        # read here (an executor that runs in this process): nothing to
        # send, each file's scan merged as soon as it is made; with an
        # executor here, and dumps that are not too large to keep, the
        # pods decoded are kept for its replay
        release_held()  # (what an earlier reading left)
        hold = in_process and _json_bytes(files) <= podscan.HOLD_BYTES
        # The cyclic garbage collector off meanwhile (as for a replayed
        # partition): the pods kept are many small objects, none in a cycle,
        # that its passes would go over again and again for nothing.
        paused = hold and gc.isenabled()
        if paused:
            gc.disable()
        try:
            for b in batches:
                for f in b:
                    merge_scan(scan, scan_files([f], pack=False, hold=hold)[0])
            if paused:  # (kept out of the collector's passes until replayed)
                podscan.freeze_held()
        finally:
            if paused:
                gc.enable()
        return assemble(scan)
    merged = _InOrder(scan)
    batches = file_batches(files, parts, runners=runners or 1, bases=bases)
    merged.finish(map_files(scan_files, batches, arrived=merged.arrived))
    return assemble(scan)


def read_once(files: Sequence[Path], scan: Scan) -> list[Path]:
    """``files`` each read once: a file named again (``fleet analyze DIR
    DIR/pods.json``, a link to a file of the tree) is the same dump, not a
    second one whose pods would all be "in two dumps"; said with a warning
    naming both names. (A file is its device and inode, links followed.)"""
    out: list[Path] = []
    first: dict[tuple[int, int], Path] = {}
    for f in files:
        try:
            st = f.stat()
        except (OSError, ValueError):
            out.append(f)  # (its reading words the problem)
            continue
        if not stat.S_ISREG(st.st_mode):  # (a pipe given twice is copied once before this)
            out.append(f)
            continue
        had = first.setdefault((st.st_dev, st.st_ino), f)
        if had is f:
            out.append(f)
        else:
            scan.issues.append(Issue("warning", f"the file {had} again (named twice, or through a link): "
                                     "read once", file=str(f)))
    return out


def _json_bytes(files: Sequence[Path]) -> int:
    """The bytes of the JSON files among ``files`` (the pods dumps among
    them): a fleet whose pods are kept for the replay has at most
    :data:`~podnuma.fleet.podscan.HOLD_BYTES` of them (a larger one keeps
    none: it reads its ranges back, as from another process)."""
    total = 0
    for f in files:
        if f.suffix.lower() == ".json":
            with contextlib.suppress(OSError):
                total += f.stat().st_size
    return total


def assemble(scan: Scan) -> FleetInputs:
    """The nodes (sorted by name) with their configuration, topology and pod
    files, and the fleet-level issues."""
    settle_keys(scan)
    issues = list(scan.issues)
    nodes: list[NodeSpec] = []
    nrt_forms = NrtForms()
    if not scan.nodes and scan.pod_counts:
        issues.append(Issue("error", "no Node objects found (a `kubectl get nodes -o json` dump is needed)"))
    unnamed: set[str] = set()  # the nodes whose name no Node can have
    for name in sorted(scan.nodes):
        obj = scan.nodes[name]
        labels = _labels(obj)
        node_issues: list[Issue] = []
        damage = node_damage(obj)
        if damage is not None and damage.path == "metadata.name":  # (no Node has that name: left out)
            issues.append(Issue("error", damage.message, file=scan.node_files.get(name),
                                path=field_path_under(scan.node_paths.get(name, ""), damage.path)))
            unnamed.add(name)
            continue
        if damage is not None:  # (as without topology: listed, not replayed)
            node_issues.append(Issue("error", damage.message, node=name, file=scan.node_files.get(name),
                                     path=field_path_under(scan.node_paths.get(name, ""), damage.path)))
        groups = [g for g in scan.groups if selector_matches(g.selector, labels)]
        # configuration
        config: Mapping[str, Any] | None = None
        config_source = "kubelet defaults"
        if name in scan.configz:
            config, f = scan.configz[name]
            config_source = f"configz {f}"
        else:
            for g in groups:
                if g.config is not None:
                    config, config_source = g.config, f"group {g.name} ({g.config_source})"
                    break
        if config is None:
            node_issues.append(Issue("warning", "no kubelet configuration (no configz, no node group): "
                                     "the kubelet's defaults assumed; the node is shown apart, "
                                     "outside the fleet's totals", node=name))
        # topology
        topology: Mapping[str, Any] | None = None
        topo_source = ""
        if name in scan.nrt:
            nrt, f = scan.nrt[name]
            smt = labels.get(NFD_SMT_LABEL)
            threads = 1 if smt == "false" else 2
            try:
                form, notes = nrt_forms.form(nrt, threads_per_core=threads)
                topology, topo_source = form, f"NodeResourceTopology {f}"
                if smt is None:
                    notes.append(f"no {NFD_SMT_LABEL} label: 2 threads per core assumed")
                node_issues.extend(Issue("info", n, node=name, file=f) for n in notes)
            except NrtError as e:
                node_issues.append(Issue("error", f"NodeResourceTopology not usable: {e.message}", node=name,
                                         file=f, path=field_path_under(scan.nrt_paths.get(name, ""), e.path)))
            except ValueError as e:
                node_issues.append(Issue("error", f"NodeResourceTopology not usable: {e}", node=name, file=f))
        if topology is None and name in scan.machineinfo:
            topology = {"name": name, "machineInfoFile": scan.machineinfo[name]}
            topo_source = f"MachineInfo {scan.machineinfo[name]}"
        if topology is None and name in scan.sysfs:
            topology = {"name": name, "sysfs": scan.sysfs[name]}
            topo_source = f"sysfs {scan.sysfs[name]}"
        if topology is None:
            for g in groups:
                if g.node is not None:
                    topology = {**g.node, "name": name}
                    topo_source = f"group {g.name} ({g.file})"
                    break
        if topology is None and not any(i.severity == "error" for i in node_issues):
            node_issues.append(Issue(
                "error", "no topology data (no NodeResourceTopology, MachineInfo, sysfs copy or "
                "node group with a node form): not replayed", node=name,
            ))
        files = tuple(sorted(scan.pod_index.get(name, ())))
        ranges = tuple(sorted(scan.pod_ranges.get(name, ())))
        for f in scan.truncated_pod_files:
            node_issues.append(Issue(
                "warning", "a pods dump was truncated: this node's pod list may be incomplete",
                node=name, file=f,
            ))
        nodes.append(NodeSpec(
            name=name, labels=labels, allocatable=_allocatable(obj), config=config,
            config_source=config_source, topology=topology, topology_source=topo_source,
            pod_files=files, issues=tuple(node_issues), pod_ranges=ranges,
            pods_bound=scan.pod_counts.get(name, 0), capacity=_allocatable(obj, "capacity"),
            pods_dumped_again=scan.node_copies.get(name, 0),
            pods_listed_again=scan.node_repeats.get(name, 0),
            pod_repeats=tuple(sorted(scan.pod_repeats.get(name, ()))),
            nrt_attributes=_nrt_attributes(scan.nrt[name][0]) if name in scan.nrt else {},
        ))
    for node, count in sorted(scan.pod_counts.items()):
        if node not in scan.nodes or node in unnamed:
            issues.append(Issue(
                "error", f"{count} pod(s) bound to node {node}, which is not in the nodes dump"
                f"{' (its Node is damaged: not read)' if node in unnamed else ''}: not replayed", node=node, file=", ".join(sorted(
                    set(scan.pod_index.get(node, ())) | {r[0] for r in scan.pod_ranges.get(node, ())})),
            ))
    for node in sorted(scan.configz):
        if node not in scan.nodes or node in unnamed:
            issues.append(Issue("warning", _unused_configz(node, damaged=node in unnamed), node=node,
                                file=scan.configz[node][1]))
    for f, count in sorted(scan.pods_repeated.items()):
        issues.append(Issue(
            "warning", f"{count} pod(s) listed twice in this dump (same namespace, name and uid; "
            "`kubectl get` lists each pod once: a damaged dump): each counted and replayed once, "
            "as first listed", file=f))
    again = sum(scan.dumped_again.values())
    if again:
        issues.append(Issue(
            "info", f"{again} pod(s) appear in more than one dump (same namespace, name and uid): "
            "each counted and replayed once (found again in "
            + ", ".join(f"{f}: {n}" for f, n in sorted(scan.dumped_again.items())) + ")",
            file=", ".join(sorted(scan.dumped_again)),
        ))
    return FleetInputs(nodes=nodes, issues=issues, files=scan.files,
                       pods_without_node=scan.unbound, pods_total=scan.pods_total,
                       pods_duplicated=scan.pods_duplicated)


def _unused_configz(node: str, *, damaged: bool = False) -> str:
    """What is said of a node's kubelet configuration in ``configz/`` (a
    configz answer, or a bare ``KubeletConfiguration``, named after its
    node: ``NODE.json``) whose node is not in the nodes dump, or is there
    but damaged (``damaged``: not read): it configures no node. A file
    named ``fleet.*`` is read by its content as any other (docs/fleet.md):
    a configuration there is that of a node named ``fleet``, most likely
    meant as the FleetConfig, which says so."""
    where = ("whose Node in the nodes dump is damaged (not read)" if damaged
             else "which is not in the nodes dump")
    said = f"a kubelet configuration for node {node} (the file's name), {where}: not used"
    if node.lower().startswith("fleet"):
        said += (" (a FleetConfig is `apiVersion: podnuma.io/v1`, `kind: FleetConfig` with `nodeGroups`, "
                 "each group's configuration under `kubeletConfig` or `kubeletConfigFile`)")
    return said


def with_inline_pods(spec: NodeSpec, pods: Sequence[Mapping[str, Any]]) -> NodeSpec:
    """``spec`` carrying its pods inline (compacted, in start order)."""
    compact = sorted((compact_pod(p) for p in pods if _phase(p) in ACTIVE_PHASES), key=start_key)
    return replace(spec, pods=tuple(compact), pod_files=())
