"""Tables of PodResources answers (``podnuma podresources``).

Input is plain data in the protobuf JSON shape (``cpuIds``, ``memoryType``,
``topology.nodes[].ID``) -- what :mod:`podnuma.grpc.convert` gives.
One row per pod (container ``(pod)``: the pod-level reservation, only when
there is one) and per listed container.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from podnuma.machine.cpuset import CPUSet
from podnuma.render.table import format_size, print_renderable

__all__ = ["render_pods", "render_allocatable"]


def _cpus(ids: Sequence[int]) -> str:
    return str(CPUSet.of(*ids)) if ids else "-"


def _nodes(item: Mapping[str, Any]) -> str:
    nodes = [str(n.get("ID", 0)) for n in item.get("topology", {}).get("nodes", [])]
    return ",".join(nodes)


def _placed(items: Sequence[Mapping[str, Any]], label: Callable[[Mapping[str, Any]], str]) -> str:
    """Each item's label with its NUMA nodes (`` @0,1``, when it has a
    topology), joined by commas; ``-`` when there is none."""
    if not items:
        return "-"
    parts = []
    for item in items:
        where = _nodes(item)
        parts.append(label(item) + (f" @{where}" if where else ""))
    return ", ".join(parts)


def _memory(blocks: Sequence[Mapping[str, Any]]) -> str:
    return _placed(blocks, lambda b: f"{b['memoryType']} {format_size(int(b['size']))}")


def _devices(devs: Sequence[Mapping[str, Any]]) -> str:
    return _placed(devs, lambda d: f"{d['resourceName']}={','.join(d.get('deviceIds', []))}")


def render_pods(pods: Sequence[Mapping[str, Any]], console: Console) -> None:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("NAMESPACE", "POD", "CONTAINER", "CPU IDS", "MEMORY", "DEVICES"):
        table.add_column(col, no_wrap=col in ("NAMESPACE", "POD", "CONTAINER", "CPU IDS"))
    for pod in pods:
        if pod.get("cpuIds") or pod.get("memory"):
            table.add_row(
                pod["namespace"], pod["name"], "(pod)", _cpus(pod["cpuIds"]), _memory(pod["memory"]), "-"
            )
        for c in pod.get("containers", []):
            table.add_row(
                pod["namespace"],
                pod["name"],
                c["name"],
                _cpus(c["cpuIds"]),
                _memory(c["memory"]),
                _devices(c["devices"]),
            )
        if not pod.get("containers") and not (pod.get("cpuIds") or pod.get("memory")):
            table.add_row(pod["namespace"], pod["name"], "-", "-", "-", "-")
    print_renderable(console, table)


def render_allocatable(alloc: Mapping[str, Any], console: Console) -> None:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("RESOURCE", no_wrap=True)
    table.add_column("ALLOCATABLE")
    table.add_column("NUMA", no_wrap=True)
    table.add_row("cpu", _cpus(alloc.get("cpuIds", [])), "-")
    for m in alloc.get("memory", []):
        table.add_row(m["memoryType"], format_size(int(m["size"])), _nodes(m) or "-")
    for d in alloc.get("devices", []):
        table.add_row(d["resourceName"], ",".join(d.get("deviceIds", [])), _nodes(d) or "-")
    print_renderable(console, table)
