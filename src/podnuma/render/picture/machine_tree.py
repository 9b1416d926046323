"""The machine as a tree (socket > NUMA node > uncore cache > core > PU),
and the labels every renderer writes on it."""

from __future__ import annotations

from collections.abc import Mapping

from podnuma.fieldkit import inert
from podnuma.machine.topology import Machine
from podnuma.render.picture.ownership import Ownership
from podnuma.units import format_bytes

_Tree = dict[int, dict[int, dict[int, dict[int, list[int]]]]]


def _tree(machine: Machine) -> _Tree:
    tree: _Tree = {}
    info = machine.topology.cpu_info
    for cpu in sorted(info):
        i = info[cpu]
        (
            tree.setdefault(i.socket, {})
            .setdefault(i.numa_node, {})
            .setdefault(i.uncore_cache, {})
            .setdefault(i.core, [])
            .append(cpu)
        )
    return {
        s: {
            n: {u: dict(sorted(cores.items())) for u, cores in sorted(caches.items())}
            for n, caches in sorted(numas.items())
        }
        for s, numas in sorted(tree.items())
    }


def _numa_sockets(tree: _Tree) -> dict[int, int]:
    """NUMA node id -> how many packages of the tree hold its CPUs."""
    numa_sockets: dict[int, int] = {}
    for numas in tree.values():
        for nid in numas:
            numa_sockets[nid] = numa_sockets.get(nid, 0) + 1
    return numa_sockets


def _size(n: int) -> str:
    return format_bytes(n, approximate=True)


def _devices(machine: Machine, nid: int) -> str:
    parts = []
    for resource, devs in sorted(machine.devices.items()):
        ids = [d.id for d in devs if nid in d.numa_nodes]
        if ids:
            parts.append(
                f"{resource} {', '.join(ids)}" if len(ids) <= 3 else f"{resource} x{len(ids)}"
            )
    return "; ".join(parts)


def _pinned_text(per: Mapping[str, int]) -> str:
    return ", ".join(
        _size(v) if k == "memory" else f"{_size(v)} of {k.removeprefix('hugepages-')} pages"
        for k, v in sorted(per.items())
    )


def _numa_lines(machine: Machine, nid: int, own: Ownership, sockets: int) -> list[str]:
    try:
        node = machine.numa_node(nid)
    except KeyError:
        return [f"NUMANode {nid}"]
    lines = [f"NUMANode {nid} ({_size(node.memory)})"]
    pools = [f"{_size(t)} of {_size(p)}" for p, t in sorted(node.hugepages.items()) if t]
    if pools:
        lines.append("hugepages: " + ", ".join(pools))
    pinned = own.pinned.get((nid,), {})
    if pinned:
        lines.append("pinned by pods: " + _pinned_text(pinned))
    devices = _devices(machine, nid)
    if devices:
        lines.append("devices: " + devices)
    if sockets > 1:
        lines.append(f"(spans {sockets} packages)")
    return lines


def _spanning_pinned(own: Ownership) -> list[str]:
    out = []
    for group, per in sorted(own.pinned.items()):
        if len(group) > 1:
            nodes = ",".join(map(str, group))
            out.append(f"pinned by pods across NUMA nodes {nodes}: {_pinned_text(per)}")
    return out


def _machine_lines(machine: Machine, own: Ownership) -> list[str]:
    n = machine.topology.cpus().size()
    head = f"Machine {inert(own.node)} ({_size(machine.memory_capacity())} total, {n} CPUs)"
    return [head, own.caption(), *_spanning_pinned(own)]
