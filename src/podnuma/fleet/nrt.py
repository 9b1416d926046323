"""A ``NodeResourceTopology`` (``topology.node.k8s.io/v1alpha2``) as a
node form of the scenario contract."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from podnuma.fleet.files import _is_map
from podnuma.fleet.pods import _meta

__all__ = ["nrt_node_form", "NrtForms"]

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


def _name(nrt: Mapping[str, Any]) -> str:
    """The name of the node form of ``nrt``."""
    return str(_meta(nrt).get("name") or "node")


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
    form: dict[str, Any] = {"name": _name(nrt), "cpus": rows,
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
        self._made: dict[tuple[int, str], tuple[dict[str, Any], list[str]] | str] = {}

    def form(self, nrt: Mapping[str, Any], *, threads_per_core: int) -> tuple[dict[str, Any], list[str]]:
        """As :func:`nrt_node_form` (``ValueError`` for an unusable object)."""
        try:
            shape = repr(nrt.get("zones"))
        except RecursionError:
            return nrt_node_form(nrt, threads_per_core=threads_per_core)
        key = (threads_per_core, shape)
        got = self._made.get(key)
        if got is None:
            try:
                got = nrt_node_form(nrt, threads_per_core=threads_per_core)
            except ValueError as e:
                got = str(e)
            self._made[key] = got
        if isinstance(got, str):
            raise ValueError(got)
        form, notes = got
        return {**form, "name": _name(nrt)}, list(notes)
