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
replays the node (:func:`read_node_pods`). A truncated JSON list (a dump
cut short) is read up to its last complete item and reported.

Everything here reports problems as :class:`~podnuma.fleet.model.Issue`
records and goes on; only unreadable command-line arguments raise
:class:`~podnuma.errors.InputError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeGuard

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.fleet.model import Issue, NodeSpec
from podnuma.inputs.documents import (
    DuplicateJSONKey,
    MalformedJSON,
    check_tree,
    load_json,
    parse_documents,
    read_text,
)
from podnuma.inputs.limits import FLEET_LIMITS

__all__ = [
    "FLEET_API_VERSION",
    "FLEET_KIND",
    "FleetInputs",
    "NodeGroup",
    "Scan",
    "assemble",
    "walk_inputs",
    "with_inline_pods",
    "compact_pod",
    "load_fleet",
    "nrt_node_form",
    "parse_selector",
    "read_items",
    "read_node_pods",
    "selector_matches",
    "start_key",
]

FLEET_API_VERSION = "podnuma.io/v1"
FLEET_KIND = "FleetConfig"
_DATA_SUFFIXES = (".json", ".yaml", ".yml")
#: Pod phases of pods that hold resources on their node.
ACTIVE_PHASES = ("Running", "Pending", "Unknown")


def _is_map(x: object) -> TypeGuard[Mapping[Any, Any]]:
    """``isinstance(x, Mapping)``, quick for the plain dicts JSON gives."""
    return type(x) is dict or isinstance(x, Mapping)


# --------------------------------------------------------------------------
# reading files


def _load_text(path: Path) -> str:
    return read_text(path, what="input", name=str(path), limits=FLEET_LIMITS)


def _salvage_items(text: str) -> list[Any]:
    """The complete objects of a JSON ``items`` array cut short."""
    m = re.search(r'"items"\s*:\s*\[', text)
    if m is None:
        return []
    decoder = json.JSONDecoder()
    pos = m.end()
    out: list[Any] = []
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n or text[pos] == "]":
            return out
        try:
            obj, pos = decoder.raw_decode(text, pos)
            check_tree(obj, name="", limits=FLEET_LIMITS)
        except (json.JSONDecodeError, RecursionError, InputError):
            return out
        out.append(obj)


def read_document(path: Path) -> tuple[Any, Issue | None]:
    """The parsed file (JSON, or YAML for .yaml/.yml; several YAML documents
    become a list), and an issue when it had to be salvaged. An unreadable
    or malformed file gives ``(None, issue)``."""
    try:
        text = _load_text(path)
    except InputError as e:
        return None, Issue("error", e.message, file=str(path))
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            found = parse_documents(text, name=str(path), limits=FLEET_LIMITS)
        except InputError as e:
            return None, Issue("error", _where(e), file=str(path))
        docs = [d.data for d in found if d.data is not None]
        return (docs[0] if len(docs) == 1 else docs), None
    try:
        return load_json(text, name=str(path), limits=FLEET_LIMITS), None
    except DuplicateJSONKey:
        # Go's decoder keeps the last duplicate (the kubelet's lenient
        # configz decoding reports them as a warning): the pairs are kept
        try:
            return json.loads(text, object_pairs_hook=json_object_pairs), None
        except (ValueError, RecursionError) as e:
            return None, Issue("error", f"invalid JSON: {e}", file=str(path))
    except MalformedJSON as e:
        items = _salvage_items(text)
        msg = e.message
        if items:
            return (
                {"kind": "List", "items": items, "_truncated": True},
                Issue(
                    "warning",
                    f"{msg}: a truncated dump; read its first {len(items)} complete item(s)",
                    file=str(path),
                ),
            )
        return None, Issue("error", msg, file=str(path))
    except InputError as e:
        return None, Issue("error", _where(e), file=str(path))


def _where(e: InputError) -> str:
    """An input error's field path and message (the issue names the file)."""
    return f"{e.path}: {e.message}" if e.path else e.message


def read_items(path: Path) -> tuple[list[Any], Issue | None]:
    """The objects of a file: the items of a list, or the object itself."""
    doc, issue = read_document(path)
    if doc is None:
        return [], issue
    if isinstance(doc, list):
        out: list[Any] = []
        for d in doc:
            out.extend(_items_of(d))
        return out, issue
    return _items_of(doc), issue


def _items_of(doc: Any) -> list[Any]:
    if _is_map(doc) and isinstance(doc.get("items"), list) and (
        str(doc.get("kind", "List")).endswith("List")
    ):
        return list(doc["items"])
    return [doc]


# --------------------------------------------------------------------------
# pods


def _meta(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    m = doc.get("metadata")
    return m if _is_map(m) else {}


def _container_compact(c: Any) -> Any:
    if not _is_map(c):
        return c
    out = {k: c[k] for k in ("name", "resources", "restartPolicy") if k in c}
    return out


def compact_pod(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a pod the replay reads (metadata that identifies it and
    its workload, the containers' names and resources, pod-level resources,
    overhead, the node and the start time); the rest is dropped."""
    meta = _meta(doc)
    spec = doc.get("spec") if _is_map(doc.get("spec")) else {}
    status = doc.get("status") if _is_map(doc.get("status")) else {}
    assert _is_map(spec) and _is_map(status)
    out_meta = {
        k: meta[k]
        for k in ("name", "namespace", "uid", "labels", "annotations", "ownerReferences",
                  "creationTimestamp", "generateName")
        if k in meta
    }
    out_spec: dict[str, Any] = {}
    for k in ("nodeName", "resources", "overhead", "restartPolicy"):
        if k in spec:
            out_spec[k] = spec[k]
    for k in ("initContainers", "containers"):
        if k in spec:
            v = spec[k]
            out_spec[k] = [_container_compact(c) for c in v] if isinstance(v, list) else v
    out_status = {k: status[k] for k in ("phase", "startTime", "qosClass") if k in status}
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": out_meta, "spec": out_spec}
    if out_status:
        out["status"] = out_status
    return out


def _node_name(doc: Any) -> str | None:
    if not _is_map(doc):
        return None
    spec = doc.get("spec")
    if not _is_map(spec):
        return None
    n = spec.get("nodeName")
    return n if isinstance(n, str) and n else None


def _phase(doc: Mapping[str, Any]) -> str:
    st = doc.get("status")
    if _is_map(st) and isinstance(st.get("phase"), str):
        return str(st["phase"])
    return "Running"  # a manifest without status: taken as running


def is_pod(doc: Any) -> bool:
    return _is_map(doc) and doc.get("kind") == "Pod"


def start_key(pod: Mapping[str, Any]) -> tuple[str, str, str]:
    """Sort key of the kubelet's admission order: the pod's start time
    (``status.startTime``, else ``metadata.creationTimestamp``), then
    namespace/name. RFC 3339 UTC timestamps sort as text."""
    meta = _meta(pod)
    st = pod.get("status")
    start = st.get("startTime") if _is_map(st) else None
    if not isinstance(start, str):
        start = meta.get("creationTimestamp")
    return (
        start if isinstance(start, str) else "",
        str(meta.get("namespace") or "default"),
        str(meta.get("name") or ""),
    )


def read_node_pods(
    files: Iterable[str], nodes: Iterable[str]
) -> tuple[dict[str, list[dict[str, Any]]], list[Issue]]:
    """The active pods of ``nodes`` found in ``files``, compacted, by node,
    in start order; with the issues of those files (once per file)."""
    want = set(nodes)
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in want}
    issues: list[Issue] = []
    seen: set[tuple[str, str, str]] = set()
    for f in sorted(set(files)):
        items, issue = read_items(Path(f))
        if issue is not None:
            issues.append(issue)
        for doc in items:
            if not is_pod(doc):
                continue
            node = _node_name(doc)
            if node in want and _phase(doc) in ACTIVE_PHASES:
                assert node is not None
                meta = _meta(doc)
                key = (str(meta.get("namespace") or "default"), str(meta.get("name")),
                       str(meta.get("uid") or ""))
                if key in seen:  # the same pod in two dumps
                    continue
                seen.add(key)
                out[node].append(compact_pod(doc))
    for pods in out.values():
        pods.sort(key=start_key)
    return out, issues


# --------------------------------------------------------------------------
# node groups (podnuma's FleetConfig)


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "exists", "!exists", "in", "notin"
    values: tuple[str, ...] = ()


def parse_selector(value: Any, *, path: str, file: str) -> tuple[Requirement, ...]:
    """A label selector: ``"k=v,k2!=v2,k3,!k4"`` (kubectl's ``-l`` syntax,
    set-based ``in``/``notin`` included) or ``{matchLabels: {...},
    matchExpressions: [...]}``."""
    if isinstance(value, str):
        reqs: list[Requirement] = []
        for part in _split_selector(value):
            part = part.strip()
            if not part:
                continue
            m = re.fullmatch(r"([^\s=!]+)\s+(in|notin)\s+\(([^)]*)\)", part)
            if m:
                vals = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
                reqs.append(Requirement(m.group(1), m.group(2), vals))
            elif "!=" in part:
                k, v = part.split("!=", 1)
                reqs.append(Requirement(k.strip(), "!=", (v.strip(),)))
            elif "=" in part:
                k, v = part.split("=", 1)
                reqs.append(Requirement(k.strip(), "=", (v.strip().lstrip("="),)))
            elif part.startswith("!"):
                reqs.append(Requirement(part[1:].strip(), "!exists"))
            else:
                reqs.append(Requirement(part, "exists"))
        return tuple(reqs)
    if _is_map(value):
        reqs = []
        ml = value.get("matchLabels") or {}
        if not _is_map(ml):
            raise wrong_type(f"{path}.matchLabels", "a mapping", ml).in_file(file)
        for k, v in ml.items():
            reqs.append(Requirement(str(k), "=", (str(v),)))
        exprs = value.get("matchExpressions") or []
        if not isinstance(exprs, list):
            raise wrong_type(f"{path}.matchExpressions", "a list", exprs).in_file(file)
        ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
        for i, e in enumerate(exprs):
            if not _is_map(e) or e.get("operator") not in ops:
                raise InputError(
                    "must be {key, operator: In|NotIn|Exists|DoesNotExist, values}",
                    path=f"{path}.matchExpressions[{i}]", file=file,
                )
            reqs.append(Requirement(str(e.get("key")), ops[str(e["operator"])],
                                    tuple(str(v) for v in e.get("values") or ())))
        return tuple(reqs)
    raise wrong_type(path, "a label selector (a string or a mapping)", value).in_file(file)


def _split_selector(text: str) -> Iterator[str]:
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            yield text[start:i]
            start = i + 1
    yield text[start:]


def selector_matches(reqs: Sequence[Requirement], labels: Mapping[str, str]) -> bool:
    for r in reqs:
        v = labels.get(r.key)
        if r.op == "=" and v != r.values[0]:
            return False
        if r.op == "!=" and v == r.values[0]:
            return False
        if r.op == "exists" and v is None:
            return False
        if r.op == "!exists" and v is not None:
            return False
        if r.op == "in" and v not in r.values:
            return False
        if r.op == "notin" and v in r.values:
            return False
    return True


@dataclass(frozen=True)
class NodeGroup:
    name: str
    selector: tuple[Requirement, ...]
    selector_text: str
    config: Mapping[str, Any] | None
    config_source: str
    node: Mapping[str, Any] | None
    file: str


_GROUP_KEYS = ("name", "selector", "kubeletConfig", "kubeletConfigFile", "node", "nodeFile")


def _abs_paths(form: Mapping[str, Any], base: Path) -> dict[str, Any]:
    out = dict(form)
    for key in ("machineInfoFile", "sysfs"):
        v = out.get(key)
        if isinstance(v, str) and v and not Path(v).is_absolute():
            out[key] = str(base / v)
    return out


def _load_groups(doc: Mapping[str, Any], file: Path) -> list[NodeGroup]:
    name = str(file)
    if doc.get("apiVersion") != FLEET_API_VERSION:
        raise InputError(f"must be {FLEET_API_VERSION!r}", path="apiVersion", file=name)
    for k in doc:
        if k not in ("apiVersion", "kind", "nodeGroups"):
            raise InputError(f"unknown field {k!r} (expected nodeGroups)", path=k, file=name)
    raw = doc.get("nodeGroups") or []
    if not isinstance(raw, list):
        raise wrong_type("nodeGroups", "a list", raw).in_file(name)
    out: list[NodeGroup] = []
    base = file.parent
    for i, g in enumerate(raw):
        at = f"nodeGroups[{i}]"
        if not _is_map(g):
            raise wrong_type(at, "a mapping", g).in_file(name)
        for k in g:
            if k not in _GROUP_KEYS:
                raise InputError(
                    f"unknown field {k!r} (expected one of: {', '.join(_GROUP_KEYS)})",
                    path=f"{at}.{k}", file=name,
                )
        sel_raw = g.get("selector", "")
        selector = parse_selector(sel_raw, path=f"{at}.selector", file=name)
        config: Mapping[str, Any] | None = None
        source = ""
        if "kubeletConfig" in g and "kubeletConfigFile" in g:
            raise InputError("give kubeletConfig or kubeletConfigFile, not both",
                             path=f"{at}.kubeletConfigFile", file=name)
        if "kubeletConfigFile" in g:
            p = Path(str(g["kubeletConfigFile"]))
            p = p if p.is_absolute() else base / p
            cdoc, issue = read_document(p)
            if issue is not None and cdoc is None:
                raise InputError(issue.message, path=f"{at}.kubeletConfigFile", file=str(p))
            if not _is_map(cdoc):
                raise wrong_type(f"{at}.kubeletConfigFile", "a mapping (a KubeletConfiguration)",
                                 cdoc).in_file(str(p))
            config, source = cdoc, str(p)
        elif "kubeletConfig" in g:
            if not _is_map(g["kubeletConfig"]):
                raise wrong_type(f"{at}.kubeletConfig", "a mapping", g["kubeletConfig"]).in_file(name)
            config, source = g["kubeletConfig"], f"{name}#{at}.kubeletConfig"
        node: Mapping[str, Any] | None = None
        if "node" in g and "nodeFile" in g:
            raise InputError("give node or nodeFile, not both", path=f"{at}.nodeFile", file=name)
        if "nodeFile" in g:
            p = Path(str(g["nodeFile"]))
            p = p if p.is_absolute() else base / p
            ndoc, issue = read_document(p)
            if not _is_map(ndoc):
                if issue:
                    raise InputError(issue.message, path=f"{at}.nodeFile", file=str(p))
                raise wrong_type(f"{at}.nodeFile", "a mapping (a node form)", ndoc).in_file(str(p))
            node = _abs_paths(ndoc, p.parent)
        elif "node" in g:
            if not _is_map(g["node"]):
                raise wrong_type(f"{at}.node", "a mapping (a node form)", g["node"]).in_file(name)
            node = _abs_paths(g["node"], base)
        sel_text = sel_raw if isinstance(sel_raw, str) else json.dumps(sel_raw, sort_keys=True)
        out.append(NodeGroup(
            name=str(g.get("name") or sel_text or at), selector=selector, selector_text=sel_text,
            config=config, config_source=source, node=node, file=name,
        ))
    return out


# --------------------------------------------------------------------------
# NodeResourceTopology v1alpha2 -> node form


_QTY = re.compile(r"^([0-9]+)([KMGTPE]i?)?$")
_UNITS = {None: 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _int_qty(v: Any) -> int | None:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str):
        m = _QTY.match(v.strip())
        if m:
            return int(m.group(1)) * _UNITS[m.group(2)]
    return None


def nrt_node_form(nrt: Mapping[str, Any], *, threads_per_core: int) -> tuple[dict[str, Any], list[str]]:
    """A ``cpus``-table node form from a NodeResourceTopology (v1alpha2).

    The NRT gives, per NUMA zone (type ``Node``, name ``node-N``), the CPU
    count, memory, huge pages and devices, and the distances (``costs``),
    but no CPU ids nor core layout. The CPUs are laid out as Linux numbers
    them on x86 (first threads of every core, then the second threads), one
    socket per NUMA zone, ``threads_per_core`` threads per core; devices get
    ids ``node-N-RESOURCE-i``. Returns the form and notes on what was
    assumed. Raises ``ValueError`` when the object has no usable NUMA zone.
    """
    zones = nrt.get("zones")
    if not isinstance(zones, list):
        raise ValueError("zones: required list is missing")
    numa: dict[int, Mapping[str, Any]] = {}
    for i, z in enumerate(zones):
        if not _is_map(z) or z.get("type") != "Node":
            continue
        m = re.fullmatch(r"node-(\d+)", str(z.get("name", "")))
        if not m:
            raise ValueError(f"zones[{i}].name: a NUMA zone is named node-<id>, found {z.get('name')!r}")
        numa[int(m.group(1))] = z
    if not numa:
        raise ValueError("zones: no NUMA zone (type Node)")
    notes: list[str] = []
    ids = sorted(numa)
    cpus_per: dict[int, int] = {}
    memory: dict[str, dict[str, str]] = {}
    devices: dict[str, list[dict[str, Any]]] = {}
    for nid in ids:
        res = numa[nid].get("resources") or []
        ncpu = 0
        mem: dict[str, str] = {}
        for r in res if isinstance(res, list) else []:
            if not _is_map(r):
                continue
            rname = str(r.get("name", ""))
            cap = _int_qty(r.get("capacity"))
            if cap is None:
                continue
            if rname == "cpu":
                ncpu = cap
            elif rname == "memory" or rname.startswith("hugepages-"):
                mem[rname] = str(cap)
            elif "/" in rname:
                devices.setdefault(rname, []).extend(
                    {"id": f"node-{nid}-{rname.rsplit('/', 1)[-1]}-{k}", "numaNodes": [nid]}
                    for k in range(cap)
                )
        if ncpu <= 0:
            raise ValueError(f"zone node-{nid}: no cpu capacity")
        cpus_per[nid] = ncpu
        memory[str(nid)] = mem
    t = threads_per_core if all(c % threads_per_core == 0 for c in cpus_per.values()) else 1
    if t != threads_per_core:
        notes.append(f"CPU counts are not multiples of {threads_per_core}: one thread per core assumed")
    notes.append(f"CPU ids laid out as on x86 Linux, {t} thread(s) per core, one socket per NUMA zone "
                 "(NodeResourceTopology gives counts, not ids)")
    total_cores = sum(c // t for c in cpus_per.values())
    rows: list[dict[str, int]] = []
    core_index = 0
    for nid in ids:
        for _ in range(cpus_per[nid] // t):
            for th in range(t):
                rows.append({"id": core_index + th * total_cores, "core": core_index,
                             "socket": nid, "numaNode": nid})
            core_index += 1
    rows.sort(key=lambda r: r["id"])
    form: dict[str, Any] = {"name": str(_meta(nrt).get("name") or "node"), "cpus": rows,
                            "memory": memory}
    dist: dict[str, list[int]] = {}
    for nid in ids:
        costs = numa[nid].get("costs") or []
        by = {str(c.get("name")): c.get("value") for c in costs if _is_map(c)}
        row = [by.get(f"node-{o}") for o in ids]
        if all(isinstance(v, int) for v in row):
            dist[str(nid)] = [int(v) for v in row if isinstance(v, int)]
    if len(dist) == len(ids) and len(ids) > 1:
        form["distances"] = dist
    if devices:
        form["devices"] = devices
    return form, notes


# --------------------------------------------------------------------------
# the fleet


@dataclass
class FleetInputs:
    """The nodes to replay (sorted by name) and the fleet-level issues."""

    nodes: list[NodeSpec]
    issues: list[Issue] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    pods_without_node: int = 0
    pods_total: int = 0


@dataclass
class Scan:
    """What the inputs hold, before it is assembled per node."""

    nodes: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    node_files: dict[str, str] = field(default_factory=dict)
    pod_index: dict[str, set[str]] = field(default_factory=dict)  # node -> files
    pod_counts: dict[str, int] = field(default_factory=dict)
    truncated_pod_files: list[str] = field(default_factory=list)
    nrt: dict[str, tuple[Mapping[str, Any], str]] = field(default_factory=dict)
    configz: dict[str, tuple[Mapping[str, Any], str]] = field(default_factory=dict)
    machineinfo: dict[str, str] = field(default_factory=dict)
    sysfs: dict[str, str] = field(default_factory=dict)
    groups: list[NodeGroup] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    unbound: int = 0
    pods_total: int = 0


def _is_machine_info(doc: Any) -> bool:
    return _is_map(doc) and "num_cores" in doc and "topology" in doc


def _classify(path: Path, scan: Scan) -> None:
    name = str(path)
    scan.files.append(name)
    doc, issue = read_document(path)
    if issue is not None:
        scan.issues.append(issue)
    if doc is None:
        return
    if _is_map(doc) and "kubeletconfig" in doc and len(doc) == 1:
        cfg = doc["kubeletconfig"]
        if not _is_map(cfg):
            scan.issues.append(Issue("error", wrong_type("kubeletconfig", "a mapping", cfg).message,
                                     node=path.stem, file=name, path="kubeletconfig"))
            return
        if path.suffix.lower() not in (".yaml", ".yml"):
            # again with every key as written: the kubelet's strict decoding
            # reports duplicate fields, which a mapping no longer holds
            try:
                again = json.loads(_load_text(path), object_pairs_hook=json_object_pairs)
                cfg = again["kubeletconfig"]
            except (InputError, ValueError, KeyError, TypeError):
                pass
        scan.configz[path.stem] = (cfg, name)
        return
    if _is_map(doc) and doc.get("kind") == FLEET_KIND:
        scan.groups.extend(_load_groups(doc, path))
        return
    if _is_machine_info(doc):
        scan.machineinfo[path.stem] = name
        return
    items = _items_of(doc) if not isinstance(doc, list) else [i for d in doc for i in _items_of(d)]
    pods_here = False
    for i, item in enumerate(items):
        if not _is_map(item):
            continue
        kind = item.get("kind")
        if kind == "Pod":
            pods_here = True
            scan.pods_total += 1
            node = _node_name(item)
            if node is None:
                scan.unbound += 1
                continue
            scan.pod_index.setdefault(node, set()).add(name)
            scan.pod_counts[node] = scan.pod_counts.get(node, 0) + 1
        elif kind == "Node":
            n = _meta(item).get("name")
            if isinstance(n, str) and n:
                if n in scan.nodes:
                    scan.issues.append(Issue("warning", f"node {n} listed twice; the last one is used",
                                             node=n, file=name, path=f"items[{i}]"))
                scan.nodes[n] = item
                scan.node_files[n] = name
        elif kind == "NodeResourceTopology":
            n = _meta(item).get("name")
            if isinstance(n, str) and n:
                scan.nrt[n] = (item, name)
    if pods_here and _is_map(doc) and doc.get("_truncated"):
        scan.truncated_pod_files.append(name)


def walk_inputs(path: Path, scan: Scan) -> None:
    if path.is_dir():
        for child in sorted(path.iterdir()):
            if child.is_dir() and child.name == "sysfs":
                for node_dir in sorted(child.iterdir()):
                    if node_dir.is_dir():
                        scan.sysfs[node_dir.name] = str(node_dir)
                continue
            if child.name.startswith("."):
                continue
            if child.is_dir() or child.suffix.lower() in _DATA_SUFFIXES:
                walk_inputs(child, scan)
        return
    _classify(path, scan)


def _labels(node: Mapping[str, Any]) -> dict[str, str]:
    raw = _meta(node).get("labels")
    return {str(k): str(v) for k, v in raw.items()} if _is_map(raw) else {}


def _allocatable(node: Mapping[str, Any]) -> dict[str, str]:
    st = node.get("status")
    alloc = st.get("allocatable") if _is_map(st) else None
    return {str(k): str(v) for k, v in alloc.items()} if _is_map(alloc) else {}


#: Node Feature Discovery's label for SMT (hardware multithreading).
NFD_SMT_LABEL = "feature.node.kubernetes.io/cpu-hardware_multithreading"


def load_fleet(paths: Sequence[Path]) -> FleetInputs:
    """Read every input and assemble the nodes.

    Raises :class:`InputError` only for a path that does not exist or a
    FleetConfig that is invalid; every other problem is an issue.
    """
    scan = Scan()
    for p in paths:
        p = Path(p)
        if not p.exists():
            raise InputError("no such file or directory", file=str(p))
        walk_inputs(p, scan)
    return assemble(scan)


def assemble(scan: Scan) -> FleetInputs:
    """The nodes (sorted by name) with their configuration, topology and pod
    files, and the fleet-level issues."""
    issues = list(scan.issues)
    nodes: list[NodeSpec] = []
    if not scan.nodes and scan.pod_index:
        issues.append(Issue("error", "no Node objects found (a `kubectl get nodes -o json` dump is needed)"))
    for name in sorted(scan.nodes):
        obj = scan.nodes[name]
        labels = _labels(obj)
        node_issues: list[Issue] = []
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
                                     "the kubelet's defaults assumed", node=name))
        # topology
        topology: Mapping[str, Any] | None = None
        topo_source = ""
        if name in scan.nrt:
            nrt, f = scan.nrt[name]
            smt = labels.get(NFD_SMT_LABEL)
            threads = 1 if smt == "false" else 2
            try:
                form, notes = nrt_node_form(nrt, threads_per_core=threads)
                topology, topo_source = form, f"NodeResourceTopology {f}"
                if smt is None:
                    notes.append(f"no {NFD_SMT_LABEL} label: 2 threads per core assumed")
                node_issues.extend(Issue("info", n, node=name, file=f) for n in notes)
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
        for f in scan.truncated_pod_files:
            node_issues.append(Issue(
                "warning", "a pods dump was truncated: this node's pod list may be incomplete",
                node=name, file=f,
            ))
        nodes.append(NodeSpec(
            name=name, labels=labels, allocatable=_allocatable(obj), config=config,
            config_source=config_source, topology=topology, topology_source=topo_source,
            pod_files=files, issues=tuple(node_issues),
        ))
    for node, count in sorted(scan.pod_counts.items()):
        if node not in scan.nodes:
            issues.append(Issue(
                "error", f"{count} pod(s) bound to node {node}, which is not in the nodes dump: "
                "not replayed", node=node, file=", ".join(sorted(scan.pod_index[node])),
            ))
    return FleetInputs(nodes=nodes, issues=issues, files=scan.files,
                       pods_without_node=scan.unbound, pods_total=scan.pods_total)


def with_inline_pods(spec: NodeSpec, pods: Sequence[Mapping[str, Any]]) -> NodeSpec:
    """``spec`` carrying its pods inline (compacted, in start order)."""
    compact = sorted((compact_pod(p) for p in pods if _phase(p) in ACTIVE_PHASES), key=start_key)
    return replace(spec, pods=tuple(compact), pod_files=())
