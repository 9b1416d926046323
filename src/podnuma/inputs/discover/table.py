"""The ``cpus`` node form: an explicit table of logical CPUs.

``cpus: [{id, core, socket, numaNode, uncoreCache?, online?}]`` with optional
``memory: {NUMA_ID: {memory: QTY, hugepages-2Mi: QTY, ...}}`` and
``distances: {NUMA_ID: [d0, d1, ...]}`` (or a list of rows; each row as the
node's sysfs ``distance`` file reads, one or more numbers: a short row is
kept, as cadvisor hands it to the kubelet), optional
``memoryCapacity: QTY``: the machine's memory (``/proc/meminfo``'s MemTotal,
cadvisor's ``MemoryCapacity``, the node's memory capacity) when it is not the
sum of the NUMA nodes' memory (the default), and optional ``cpuCapacity: N``:
the machine's CPU count (cadvisor's ``NumCores``: the node's ``cpu``
capacity and the kubelet's ``CPUTopology.NumCPUs``) when it is not the
number of online rows (the default). cadvisor counts more on a machine
without NUMA node directories in sysfs: there ``getCPUTopology`` counts
every ``cpuN`` directory, offline CPUs and CPUs without topology files
included (``utils/sysinfo/sysinfo.go``), and ``node discover`` writes that
count here. It cannot be below the number of online rows.

The rows describe hardware the way cadvisor does, and go through the
kubelet's ``Discover`` (``machineinfo.discover``) like every other form:

- ``core`` is the core's label as the hardware reports it (sysfs
  ``core_id``; it may repeat across sockets). ``core``, ``socket`` and
  ``uncoreCache`` are any integers, as cadvisor's and the kubelet's ``int``
  fields: an arm64 kernel that cannot tell the package writes ``-1`` to
  ``physical_package_id``, cadvisor reports socket ``-1`` and the kubelet
  uses it as a socket id like any other (and as the uncore-cache id of a
  core without an L3 of its own). ``numaNode`` is from 0 (NUMA ids are bit
  positions in the kubelet's topology hints). CPUs with the same
  (``numaNode``, ``socket``, ``core``) are the threads of one core — the
  grouping cadvisor's ``getCoresInfo`` does per NUMA node — and the kubelet
  identifies that core by its lowest CPU id (``getUniqueCoreID``). A table
  written with kubelet core ids (core = lowest sibling id) therefore maps to
  itself.
- ``uncoreCache`` is the core's L3 id as the kubelet's ``CPUDetails`` holds
  it; every thread of a core must give the same value. Absent, the kubelet
  falls back to the socket id.
- ``online: false`` marks a CPU the kernel has offline: the row is checked
  (its id counts as listed) but the CPU is left out of the machine, as the
  sysfs form leaves out CPUs missing from ``devices/system/cpu/online``. Such
  a row needs only ``id`` (an offline CPU has no ``topology`` directory);
  ``core``, ``socket`` and ``numaNode`` are optional there.
- NUMA nodes are those named by the rows of online CPUs plus those of
  ``memory`` (memory-only nodes). A node without a ``memory`` entry has 0 bytes, as cadvisor reports
  a node without ``meminfo``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.errors import InputError
from podnuma.fieldkit import expect_list, expect_mapping
from podnuma.inputs.discover._fields import (
    MAX_CPUS,
    MAX_NUMA_NODES,
    check_keys,
    expect_int,
    int_key,
    join,
    parse_bytes,
)
from podnuma.inputs.discover.machineinfo import (
    Cache,
    Core,
    HugePagesInfo,
    MachineInfo,
    MachineInfoNode,
    build_machine,
    machine_hugepages,
)
from podnuma.inputs.discover.synthetic import parse_distances, parse_hugepage_pools
from podnuma.machine.topology import Machine

__all__ = ["parse_table", "load_table"]

_ROW_KEYS = ("id", "core", "socket", "numaNode", "uncoreCache", "online")
_REQUIRED = ("id", "core", "socket", "numaNode")


class _CoreRows:
    __slots__ = ("label", "socket", "threads", "uncore", "first_path")

    def __init__(self, label: int, socket: int, uncore: int | None, first_path: str) -> None:
        self.label = label
        self.socket = socket
        self.threads: list[int] = []
        self.uncore = uncore
        self.first_path = first_path


def _memory(value: object, path: str) -> dict[int, tuple[int, dict[int, int]]]:
    doc = expect_mapping(value, path)
    out: dict[int, tuple[int, dict[int, int]]] = {}
    for key, entry in doc.items():
        kpath = join(path, str(key))
        nid = int_key(key, kpath)
        if nid in out:
            raise InputError(f"NUMA node {nid} listed twice", path=kpath)
        spec = expect_mapping(entry, kpath)
        if "memory" not in spec:
            raise InputError("required field is missing", path=join(kpath, "memory"))
        memory = parse_bytes(spec["memory"], join(kpath, "memory"))
        # (pools larger than the memory are taken as they come, as the
        # sysfs form takes them from cadvisor and the kubelet runs such a
        # node: its allocatable memory floored at 0)
        pools = parse_hugepage_pools({k: v for k, v in spec.items() if k != "memory"}, kpath)
        out[nid] = (memory, pools)
    return out


def parse_table(doc: Mapping[str, Any]) -> MachineInfo:
    """The machine as cadvisor's MachineInfo; ``doc`` is the node mapping."""
    rows = expect_list(doc.get("cpus"), "cpus")
    if not rows:
        raise InputError("needs at least one CPU", path="cpus")
    seen_ids: dict[int, str] = {}
    offline: dict[int, str] = {}
    by_node: dict[int, dict[tuple[int, int], _CoreRows]] = {}
    sockets: set[int] = set()
    for i, raw in enumerate(rows):
        rpath = join("cpus", i)
        row = expect_mapping(raw, rpath)
        check_keys(row, _ROW_KEYS, rpath)
        online = True
        if row.get("online") is not None:
            if not isinstance(row["online"], bool):
                raise InputError("must be true or false", path=join(rpath, "online"))
            online = row["online"]
        for key in _REQUIRED if online else _REQUIRED[:1]:
            if key not in row:
                raise InputError("required field is missing", path=join(rpath, key))
        cpu = expect_int(row["id"], join(rpath, "id"), maximum=MAX_CPUS - 1)
        if cpu in seen_ids or cpu in offline:
            first = seen_ids.get(cpu) or offline[cpu]
            raise InputError(f"CPU {cpu} is already listed at {first}", path=join(rpath, "id"))
        if not online:
            offline[cpu] = rpath
            for key in ("core", "socket"):
                if row.get(key) is not None:
                    expect_int(row[key], join(rpath, key), minimum=None)
            if row.get("numaNode") is not None:
                expect_int(row["numaNode"], join(rpath, "numaNode"), maximum=MAX_NUMA_NODES - 1)
            continue
        seen_ids[cpu] = rpath
        core = expect_int(row["core"], join(rpath, "core"), minimum=None)
        socket = expect_int(row["socket"], join(rpath, "socket"), minimum=None)
        numa = expect_int(row["numaNode"], join(rpath, "numaNode"), maximum=MAX_NUMA_NODES - 1)
        uncore = None
        if row.get("uncoreCache") is not None:
            uncore = expect_int(row["uncoreCache"], join(rpath, "uncoreCache"), minimum=None)
        sockets.add(socket)
        cores = by_node.setdefault(numa, {})
        group = cores.get((socket, core))
        if group is None:
            group = cores[(socket, core)] = _CoreRows(core, socket, uncore, rpath)
        elif group.uncore != uncore:
            raise InputError(
                f"core {core} of socket {socket} already has uncoreCache "
                f"{group.uncore} (at {group.first_path}); its threads must agree",
                path=join(rpath, "uncoreCache"),
            )
        group.threads.append(cpu)

    memory: dict[int, tuple[int, dict[int, int]]] = {}
    if doc.get("memory") is not None:
        memory = _memory(doc["memory"], "memory")
    node_ids = sorted(set(by_node) | set(memory))
    distances: dict[int, tuple[int, ...]] = {}
    if doc.get("distances") is not None:
        distances = parse_distances(doc["distances"], "distances", node_ids, as_read=True)

    nodes = []
    for nid in node_ids:
        mem, pools = memory.get(nid, (0, {}))
        cores_out = tuple(
            Core(
                id=g.label,
                threads=tuple(g.threads),
                socket_id=g.socket,
                uncore_caches=() if g.uncore is None else (Cache(id=g.uncore, level=3),),
            )
            for g in by_node.get(nid, {}).values()
        )
        nodes.append(
            MachineInfoNode(
                id=nid,
                memory=mem,
                hugepages=tuple(
                    HugePagesInfo(size // 1024, total // size) for size, total in sorted(pools.items())
                ),
                cores=cores_out,
                distances=distances.get(nid),
            )
        )
    num_cpus = len(seen_ids)
    if doc.get("cpuCapacity") is not None:
        num_cpus = expect_int(doc["cpuCapacity"], "cpuCapacity", minimum=1, maximum=MAX_CPUS)
        if num_cpus < len(seen_ids):
            raise InputError(
                f"{num_cpus} is fewer than the {len(seen_ids)} online CPUs the rows list",
                path="cpuCapacity",
            )
    return MachineInfo(
        num_cores=num_cpus,
        num_sockets=len(sockets),
        topology=tuple(nodes),
        num_physical_cores=sum(len(n.cores) for n in nodes),
        memory_capacity=(parse_bytes(doc["memoryCapacity"], "memoryCapacity")
                         if doc.get("memoryCapacity") is not None else sum(n.memory for n in nodes)),
        hugepages=machine_hugepages(nodes),
    )


def load_table(doc: Mapping[str, Any], *, name: str = "node") -> Machine:
    """The ``cpus`` form as a ``Machine``."""
    return build_machine(parse_table(doc), name=name)
