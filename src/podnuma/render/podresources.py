"""Tables of PodResources answers (``podnuma podresources``).

Input is plain data in the protobuf JSON shape (``cpuIds``, ``memoryType``,
``topology.nodes[].ID``) -- what :mod:`podnuma.grpc.convert` gives.
One row per pod (container ``(pod)``: the pod-level reservation, only when
there is one) and per listed container.

The values come from a server: every cell is a :class:`~rich.text.Text` of
the value made inert (control characters escaped, no rich markup read), and
a CPU list is written in time linear in its ids (no bit mask built).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from podnuma.fieldkit import inert
from podnuma.render.table import format_size, print_renderable

__all__ = ["cpu_list", "render_pods", "render_allocatable"]


def cpu_list(ids: Sequence[int]) -> str:
    """The Linux list format of ``ids`` (``0-3,8``; duplicates once), as
    :class:`~podnuma.machine.cpuset.CPUSet` writes it, in ``O(n log n)``
    whatever the ids' size; ``-`` for none."""
    if not ids:
        return "-"
    parts: list[str] = []
    run_lo = run_hi = None
    for cpu in sorted(set(ids)):
        if run_hi is not None and cpu == run_hi + 1:
            run_hi = cpu
            continue
        if run_lo is not None:
            parts.append(str(run_lo) if run_lo == run_hi else f"{run_lo}-{run_hi}")
        run_lo = run_hi = cpu
    parts.append(str(run_lo) if run_lo == run_hi else f"{run_lo}-{run_hi}")
    return ",".join(parts)


def _cell(value: object) -> Text:
    """A value as a cell: inert, never read as markup."""
    return Text(inert(str(value)))


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
        table.add_column(col, no_wrap=col in ("NAMESPACE", "POD", "CONTAINER"))
    for pod in pods:
        if pod.get("cpuIds") or pod.get("memory"):
            table.add_row(*map(_cell, (
                pod["namespace"], pod["name"], "(pod)", cpu_list(pod["cpuIds"]), _memory(pod["memory"]), "-"
            )))
        for c in pod.get("containers", []):
            table.add_row(*map(_cell, (
                pod["namespace"],
                pod["name"],
                c["name"],
                cpu_list(c["cpuIds"]),
                _memory(c["memory"]),
                _devices(c["devices"]),
            )))
        if not pod.get("containers") and not (pod.get("cpuIds") or pod.get("memory")):
            table.add_row(*map(_cell, (pod["namespace"], pod["name"], "-", "-", "-", "-")))
    print_renderable(console, table)


def render_allocatable(alloc: Mapping[str, Any], console: Console) -> None:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("RESOURCE", no_wrap=True)
    table.add_column("ALLOCATABLE")
    table.add_column("NUMA", no_wrap=True)
    table.add_row("cpu", _cell(cpu_list(alloc.get("cpuIds", []))), "-")
    for m in alloc.get("memory", []):
        table.add_row(_cell(m["memoryType"]), _cell(format_size(int(m["size"]))), _cell(_nodes(m) or "-"))
    for d in alloc.get("devices", []):
        table.add_row(_cell(d["resourceName"]), _cell(",".join(d.get("deviceIds", []))), _cell(_nodes(d) or "-"))
    print_renderable(console, table)
