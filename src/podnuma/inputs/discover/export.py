"""A discovered machine written back as the scenario's ``cpus`` node form.

The inverse of ``table.parse_table``: cadvisor's ``MachineInfo`` (as the
``sysfs`` reader builds it) becomes ``{name, cpus: [...], memory: {...},
distances: {...}}``, a mapping that loads into the very same ``Machine``
(same kubelet CPU topology, NUMA memory, hugepage pools and distances):

- one row per online CPU: ``id``, ``core`` (the hardware core id), ``socket``,
  ``numaNode`` and, when the core has an uncore (L3) cache of its own,
  ``uncoreCache`` (the first one, as the kubelet takes it);
- one ``{id, numaNode?, online: false}`` row per offline CPU;
- ``cpuCapacity`` when cadvisor's CPU count (``NumCores``) is not the number
  of online rows (a tree without NUMA node directories: cadvisor counts
  every ``cpuN`` directory there, offline ones included);
- ``memory`` for every NUMA node (``MemTotal`` and each hugepage pool's total
  size, ``0`` for a size with no pages: the node form's documented value);
- ``memoryCapacity`` when the machine's memory is not the nodes' sum;
- ``distances`` when every node has a row, each as its ``distance`` file
  reads (a short row included: the kubelet gets it so); a node without one
  leaves them all out, which the kubelet takes the same way (with
  ``prefer-closest-numa-nodes`` it cannot start either way).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.inputs.discover._fields import MAX_UINT64
from podnuma.inputs.discover.machineinfo import MachineInfo
from podnuma.units import format_bytes

__all__ = ["node_document", "bytes_quantity", "hugepage_key"]

_MAX_INT64 = (1 << 63) - 1


def bytes_quantity(value: int) -> str:
    """A byte count as canonical Kubernetes quantity text: the largest binary
    unit that divides it (``32980312Ki``), else the plain number as text
    (``"1000"``, ``"0"``). Always a string: a scenario's quantities (node
    memory, ``systemReserved``, ``reservedMemory`` limits) must be strings.
    Past 2^63-1 (cadvisor's uint64 allows that much) the plain number: a
    binary-suffixed quantity that large would be capped at 2^63-1 by the
    quantity parser, where the plain number is read exactly (and the
    kubelet then wraps its capacity, as the scenario replays)."""
    if value > _MAX_INT64:
        return str(value)
    return format_bytes(value)


def _node_size(value: int) -> str | int:
    """A size of the node form: :func:`bytes_quantity`, but the plain ``0``
    the node form documents for an empty hugepage pool (docs/real-node.md),
    which it loads as it loads ``"0"``."""
    return 0 if value == 0 else bytes_quantity(value)


def hugepage_key(page_size_kib: int) -> str:
    """``hugepages-2Mi`` for a page size given in KiB, as the kubelet names it."""
    size = bytes_quantity(page_size_kib * 1024)
    return f"hugepages-{size}"


def node_document(
    info: MachineInfo,
    *,
    offline: Mapping[int, int | None] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """The ``node`` mapping of ``info`` in the ``cpus`` table form."""
    rows: list[dict[str, Any]] = []
    for node in info.topology:
        for core in node.cores:
            for cpu in core.threads:
                row: dict[str, Any] = {
                    "id": cpu,
                    "core": core.id,
                    "socket": core.socket_id,
                    "numaNode": node.id,
                }
                if core.uncore_caches:
                    row["uncoreCache"] = core.uncore_caches[0].id
                rows.append(row)
    online = len(rows)
    for cpu, numa in (offline or {}).items():
        off: dict[str, Any] = {"id": cpu}
        if numa is not None:
            off["numaNode"] = numa
        off["online"] = False
        rows.append(off)
    rows.sort(key=lambda r: int(r["id"]))

    memory: dict[int, dict[str, Any]] = {}
    for node in sorted(info.topology, key=lambda n: n.id):
        entry: dict[str, Any] = {"memory": _node_size(node.memory)}
        for hp in sorted(node.hugepages, key=lambda h: h.page_size):
            # (the bytes as the kubelet's uint64 product holds them)
            entry[hugepage_key(hp.page_size)] = _node_size(hp.page_size * 1024 * hp.num_pages & MAX_UINT64)
        memory[node.id] = entry

    doc: dict[str, Any] = {}
    if name is not None:
        doc["name"] = name
    doc["cpus"] = rows
    if info.num_cores != online:
        doc["cpuCapacity"] = info.num_cores
    doc["memory"] = memory
    if info.memory_capacity and info.memory_capacity != sum(n.memory for n in info.topology):
        doc["memoryCapacity"] = _node_size(info.memory_capacity)
    ids = sorted(n.id for n in info.topology)
    by_id = {n.id: n for n in info.topology}
    if ids and all(by_id[i].distances for i in ids):
        doc["distances"] = {i: list(by_id[i].distances or ()) for i in ids}
    return doc
