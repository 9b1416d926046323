"""A ``NodeResourceTopology`` (``topology.node.k8s.io/v1alpha2``) as a
node form of the scenario contract."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from podnuma.errors import InputError
from podnuma.fieldkit import field_path, wrong_type
from podnuma.fleet.files import _is_map, _is_text
from podnuma.fleet.pods import _meta
from podnuma.inputs.discover._fields import MAX_CPUS, MAX_NUMA_NODES, MAX_UINT64

__all__ = ["MAX_DEVICES", "NrtError", "nrt_node_form", "NrtForms"]

_QTY = re.compile(r"^([0-9]+)([KMGTPE]i?)?$")
_UNITS = {None: 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
#: the most digits of a quantity's number read as written (more is larger
#: than any bound here; Python refuses to convert more than 4300 digits)
_MAX_DIGITS = 40
_TOO_LARGE: int = 10**_MAX_DIGITS
#: the most devices a NodeResourceTopology's extended resources may give one
#: node in all (one device record each, ids ``node-N-RESOURCE-i``)
MAX_DEVICES = 8192


class NrtError(ValueError):
    """Why a NodeResourceTopology is not usable: ``message`` about the field
    at ``path`` in the object (``zones[0].resources[1].capacity``; empty:
    the object as a whole). ``str()`` is ``path: message``."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path


def _refuse(err: InputError) -> NrtError:
    """The field kit's error as an :class:`NrtError`."""
    return NrtError(err.message, err.path)


def _shown(v: Any) -> str:
    """A capacity as the messages show it: as written, cut short."""
    if isinstance(v, int):
        return str(v) if v < _TOO_LARGE else f"a number of more than {_MAX_DIGITS} digits"
    text = str(v).strip()
    return text if len(text) <= _MAX_DIGITS + 4 else text[:_MAX_DIGITS] + "..."


def _int_qty(v: Any) -> int | None:
    """A whole quantity (``32``, ``"64Gi"``), else ``None``; a number of more
    than :data:`_MAX_DIGITS` digits is :data:`_TOO_LARGE` (larger than
    every bound: never converted)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str):
        m = _QTY.match(v.strip())
        if m:
            digits = m.group(1)
            if len(digits) > _MAX_DIGITS:
                return _TOO_LARGE
            return int(digits) * _UNITS[m.group(2)]
    return None


def _at_most(cap: int, bound: int, raw: Any, path: str) -> int:
    """``cap`` when it is at most ``bound`` (the node forms' wording else)."""
    if cap > bound:
        raise NrtError(f"must be at most {bound}, got {_shown(raw)}", path)
    return cap


def _name(nrt: Mapping[str, Any]) -> str:
    """The name of the node form of ``nrt``."""
    return str(_meta(nrt).get("name") or "node")


def _numa_id(z: Mapping[str, Any], path: str) -> int:
    """The NUMA id of a zone named ``node-<id>`` (below Linux's limit)."""
    name = z.get("name")
    m = re.fullmatch(r"node-(\d+)", name) if isinstance(name, str) else None
    if not m:
        text = repr(name)
        text = text if len(text) <= 60 else text[:60] + "..."
        raise NrtError(f"a NUMA zone is named node-<id>, found {text}", field_path(path, "name"))
    digits = m.group(1)
    nid = int(digits) if len(digits) <= 9 else MAX_NUMA_NODES
    if nid >= MAX_NUMA_NODES:
        shown = digits if len(digits) <= 20 else digits[:20] + "..."
        raise NrtError(f"NUMA node id {shown} out of range (Linux supports ids below {MAX_NUMA_NODES})",
                       field_path(path, "name"))
    return nid


def nrt_node_form(nrt: Mapping[str, Any], *, threads_per_core: int) -> tuple[dict[str, Any], list[str]]:
    """A ``cpus``-table node form from a NodeResourceTopology (v1alpha2).

    The NRT gives, per NUMA zone (type ``Node``, name ``node-N``), the CPU
    count, memory, huge pages and devices, and the distances (``costs``),
    but no CPU ids nor core layout. The CPUs are laid out as Linux numbers
    them on x86 (first threads of every core, then the second threads), one
    socket per NUMA zone, ``threads_per_core`` threads per core; devices get
    ids ``node-N-RESOURCE-i``. Returns the form and notes on what was
    assumed. Raises :class:`NrtError` (a ``ValueError``) when the object has
    no usable NUMA zone, or a field the form reads has the wrong type or is
    beyond Linux's limits (at most :data:`MAX_CPUS` CPUs, NUMA ids below
    :data:`MAX_NUMA_NODES`; at most :data:`MAX_DEVICES` devices): checked
    before anything is laid out, so that no capacity makes it unbounded.
    """
    zones = nrt.get("zones")
    if zones is None:
        raise NrtError("required list is missing", "zones")
    if not isinstance(zones, list):
        raise _refuse(wrong_type("zones", "a list", zones))
    numa: dict[int, Mapping[str, Any]] = {}
    where: dict[int, str] = {}  # a NUMA id -> its zone's path
    for i, z in enumerate(zones):
        zpath = field_path("zones", i)
        if not _is_map(z):  # (the CRD's schema: a zone is an object with a type)
            raise _refuse(wrong_type(zpath, "a mapping", z))
        kind = z.get("type")
        if kind is None:
            raise NrtError("Required value", field_path(zpath, "type"))
        if not _is_text(kind):
            raise _refuse(wrong_type(field_path(zpath, "type"), "a string", kind))
        if kind != "Node":
            continue
        nid = _numa_id(z, zpath)
        if nid in numa:  # (the later would replace the earlier without a word)
            raise NrtError(f"NUMA zone node-{nid} is listed twice (first at {where[nid]})", zpath)
        numa[nid] = z
        where[nid] = zpath
    if not numa:
        raise NrtError("no NUMA zone (type Node)", "zones")
    notes: list[str] = []
    ids = sorted(numa)
    cpus_per: dict[int, int] = {}
    memory: dict[str, dict[str, str]] = {}
    device_counts: list[tuple[str, int, int]] = []  # (resource, NUMA id, count)
    total_cpus = total_devices = 0
    for nid in ids:
        zpath = where[nid]
        res = numa[nid].get("resources")
        if res is None:
            res = []
        if not isinstance(res, list):
            raise _refuse(wrong_type(field_path(zpath, "resources"), "a list", res))
        ncpu = 0
        mem: dict[str, str] = {}
        for j, r in enumerate(res):
            if not _is_map(r):
                continue
            rname = str(r.get("name", ""))
            if not (rname in ("cpu", "memory") or rname.startswith("hugepages-") or "/" in rname):
                continue
            raw = r.get("capacity")
            cap = _int_qty(raw)
            cpath = field_path(field_path(field_path(zpath, "resources"), j), "capacity")
            if cap is None:
                if raw is None:  # (none given: the resource is not counted)
                    continue
                raise NrtError(f"not a whole quantity: {_shown(raw)!r} (a count, or bytes such as 64Gi)", cpath)
            if rname == "cpu":
                ncpu = _at_most(cap, MAX_CPUS, raw, cpath)
            elif rname == "memory" or rname.startswith("hugepages-"):
                if cap > MAX_UINT64:
                    raise NrtError(f"too large: {_shown(raw)!r} does not fit in 64 bits "
                                   "(as cadvisor reports bytes)", cpath)
                mem[rname] = str(cap)
            else:
                count = _at_most(cap, MAX_DEVICES, raw, cpath)
                total_devices += max(0, count)
                if total_devices > MAX_DEVICES:
                    raise NrtError(f"{total_devices} devices in all: more than a node form takes "
                                   f"({MAX_DEVICES})", cpath)
                device_counts.append((rname, nid, count))
        if ncpu <= 0:
            raise NrtError("no cpu capacity", zpath)
        total_cpus += ncpu
        if total_cpus > MAX_CPUS:
            raise NrtError(f"{total_cpus} CPUs: more than Linux supports ({MAX_CPUS})", "zones")
        cpus_per[nid] = ncpu
        memory[str(nid)] = mem
    devices: dict[str, list[dict[str, Any]]] = {}
    for rname, nid, count in device_counts:
        devices.setdefault(rname, []).extend(
            {"id": f"node-{nid}-{rname.rsplit('/', 1)[-1]}-{k}", "numaNodes": [nid]}
            for k in range(count)
        )
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
    form: dict[str, Any] = {"name": _name(nrt), "cpus": rows,
                            "memory": memory}
    dist: dict[str, list[int]] = {}
    for nid in ids:
        costs = numa[nid].get("costs")
        if costs is None:
            costs = []
        if not isinstance(costs, list):
            raise _refuse(wrong_type(field_path(where[nid], "costs"), "a list", costs))
        by = {str(c.get("name")): c.get("value") for c in costs if _is_map(c)}
        row = [by.get(f"node-{o}") for o in ids]
        if all(isinstance(v, int) for v in row):
            dist[str(nid)] = [int(v) for v in row if isinstance(v, int)]
    if len(dist) == len(ids) and len(ids) > 1:
        form["distances"] = dist
    if devices:
        form["devices"] = devices
    return form, notes


class NrtForms:
    """:func:`nrt_node_form` once per distinct shape: the NodeResourceTopology
    objects of a fleet's nodes of one kind differ in their names only (the
    zones, their resources and costs are the same), and so do their forms.
    A shape is the zones' ``repr`` (every value with its type: a tuple is
    not a list, ``1`` is not ``1.0`` nor ``True``) and the thread count;
    the forms of one shape share everything but the name (a form is not
    changed once made). Zones too deep to write out are laid out on their
    own."""

    def __init__(self) -> None:
        self._made: dict[tuple[int, str], tuple[dict[str, Any], list[str]]] = {}
        self._refused: dict[tuple[int, str], tuple[str, str]] = {}  # the message and path

    def form(self, nrt: Mapping[str, Any], *, threads_per_core: int) -> tuple[dict[str, Any], list[str]]:
        """As :func:`nrt_node_form` (:class:`NrtError` for an unusable object)."""
        try:
            shape = repr(nrt.get("zones"))
        except (RecursionError, ValueError):  # (too deep; an integer too long to write out)
            return nrt_node_form(nrt, threads_per_core=threads_per_core)
        key = (threads_per_core, shape)
        refused = self._refused.get(key)
        if refused is not None:
            raise NrtError(*refused)
        got = self._made.get(key)
        if got is None:
            try:
                got = nrt_node_form(nrt, threads_per_core=threads_per_core)
            except NrtError as e:
                self._refused[key] = (e.message, e.path)
                raise
            self._made[key] = got
        form, notes = got
        return {**form, "name": _name(nrt)}, list(notes)
