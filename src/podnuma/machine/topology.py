"""The machine model: CPU topology, NUMA nodes, memory, hugepages, devices.

``CPUTopology`` / ``CPUDetails`` mirror
``pkg/kubelet/cm/cpumanager/topology/topology.go``: every logical CPU maps to
a core, a socket, a NUMA node and an uncore (L3) cache. A core is identified
as the kubelet identifies it in ``Discover`` (``getUniqueCoreID``): by the
lowest logical CPU id among its threads, so core ids are CPU ids.

``CPUDetails`` is the kubelet's map ``cpu -> CPUInfo`` restricted to a set of
CPUs (``KeepOnly``). Here it is the topology plus a bitmask: every query is
an intersection of precomputed per-group masks, so the allocation hot path
never scans the whole CPU table.

Socket ids may be negative: an arm64 kernel that cannot tell the package
writes ``-1`` to ``physical_package_id``; cadvisor passes it on as
``Core.SocketID`` (an ``int``) and the kubelet uses it as a socket id like
any other, and as the uncore-cache id of a core without an L3 of its own
(``getUncoreCacheID``). The kubelet's ``cpuset.CPUSet`` holds any ``int``
and sorts ids numerically, so ``-1`` comes before ``0``. Here group ids are
bit positions, so the socket and uncore-cache tables are keyed by the id
plus an offset that makes the smallest id 0 when there are negative ids
(``socket_offset``, ``uncore_offset``; 0 otherwise, the usual case): the
same groups in the same order, so every choice of the CPU manager is the
kubelet's. ``CPUInfo`` keeps the ids as reported; the ``CPUDetails``
queries on sockets and uncore caches take and give keys.

Socket and uncore-cache ids are any Go ``int`` (cadvisor reads them from
``physical_package_id`` and ``cache/index*/id``), and the kubelet keeps them
in maps and ``cpuset.CPUSet``s, where only their order and equality matter.
A bit position as wide as such an id (``1 << 2**31``) would make every
set of sockets a huge integer, so when the shifted ids do not all fit
below :data:`DIRECT_KEY_LIMIT` the keys are the ids' ranks instead (0 for
the smallest id, 1 for the next, ...; ``socket_offset`` / ``uncore_offset``
are then ``None``): the same groups in the same order again.
``socket_key`` / ``uncore_key`` give an id's key either way, and
``socket_id`` / ``uncore_id`` the id back. Core ids are CPU ids and NUMA
ids are bounded when the machine is read, so their tables are keyed by the
ids themselves.

``Machine`` adds what the kubelet reads from cadvisor's ``MachineInfo.Topology``
beyond CPUs: NUMA nodes (including memory-only ones), their memory and
hugepage pools, the distance table, and device-plugin devices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from podnuma.buildinfo import mypyc_attr
from podnuma.machine.cpuset import CPUSet

__all__ = [
    "DIRECT_KEY_LIMIT",
    "CPUInfo",
    "CPUTopology",
    "CPUDetails",
    "NUMANode",
    "Device",
    "Machine",
    "TopologyError",
]


class TopologyError(ValueError):
    """The machine description is inconsistent (the kubelet would refuse it)."""


class CPUInfo:
    """Where one logical CPU sits (``topology.CPUInfo``)."""

    numa_node: int
    socket: int
    core: int
    uncore_cache: int
    __slots__ = ('numa_node', 'socket', 'core', 'uncore_cache')

    def __init__(self, numa_node: int, socket: int, core: int, uncore_cache: int) -> None:
        self.numa_node = numa_node
        self.socket = socket
        self.core = core
        self.uncore_cache = uncore_cache

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(numa_node={self.numa_node!r}, socket={self.socket!r}, core={self.core!r}, uncore_cache={self.uncore_cache!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CPUInfo) or other.__class__ is not self.__class__:
            return False
        return (self.numa_node, self.socket, self.core, self.uncore_cache) == (other.numa_node, other.socket, other.core, other.uncore_cache)

    def __hash__(self) -> int:
        return hash((self.numa_node, self.socket, self.core, self.uncore_cache))


#: Socket and uncore-cache keys are the ids themselves (shifted past negative
#: ids) while they all fit below this, the widest CPU mask of a machine
#: Linux can run (8192 CPU ids); past it they are the ids' ranks.
DIRECT_KEY_LIMIT = 8192


def _group_keys(ids: Iterable[int]) -> tuple[dict[int, int], int | None]:
    """The key of every distinct id in ``ids`` (order-preserving), and the
    offset keys have from ids (``None`` when the keys are ranks)."""
    distinct = sorted(set(ids))
    if not distinct:
        return {}, 0
    offset = -min(0, distinct[0])
    if distinct[-1] + offset < DIRECT_KEY_LIMIT:
        return {i: i + offset for i in distinct}, offset
    return {i: k for k, i in enumerate(distinct)}, None


def _or_masks(groups: Mapping[int, int], ids: Iterable[int]) -> int:
    mask = 0
    for i in ids:
        mask |= groups.get(i, 0)
    return mask


def _ids_of(groups: Mapping[int, int], mask: int) -> CPUSet:
    """Ids of the groups that have at least one CPU in ``mask``."""
    out = 0
    for gid, gmask in groups.items():
        if gmask & mask:
            out |= 1 << gid
    return CPUSet.from_mask(out)


def _key(keys: dict[int, int], offset: int | None, gid: int) -> int:
    found = keys.get(gid)
    if found is not None:
        return found
    return -1 if offset is None else gid + offset


def _id_of_key(keys: dict[int, int], key: int) -> int:
    for gid, k in keys.items():
        if k == key:
            return gid
    raise TopologyError(f"no group has key {key}")


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class CPUTopology:
    """``topology.CPUTopology``: counts plus the per-CPU table.

    ``num_cpus`` and ``num_sockets`` are what the machine reports (cadvisor's
    ``NumCores`` and ``NumSockets``); ``num_cores`` counts physical cores,
    ``num_numa_nodes`` and ``num_uncore_caches`` count the distinct ids in
    the CPU table, as ``Discover`` does.
    """

    __slots__ = (
        "cpu_info",
        "num_cpus",
        "num_cores",
        "num_sockets",
        "num_numa_nodes",
        "num_uncore_caches",
        "core_masks",
        "socket_masks",
        "numa_masks",
        "uncore_masks",
        "all_mask",
        "socket_offset",
        "uncore_offset",
        "socket_keys",
        "uncore_keys",
        "_within",
        "picker_tables",
    )

    def __init__(
        self,
        cpu_info: Mapping[int, CPUInfo],
        *,
        num_cpus: int | None = None,
        num_sockets: int | None = None,
        num_cores: int | None = None,
        num_numa_nodes: int | None = None,
        num_uncore_caches: int | None = None,
    ) -> None:
        self.cpu_info: dict[int, CPUInfo] = dict(sorted(cpu_info.items()))
        # negative socket (and so uncore-cache) ids: keys shifted to start at 0;
        # huge ones: keys are ranks (see the module's docstring)
        socket_keys, socket_offset = _group_keys(i.socket for i in self.cpu_info.values())
        uncore_keys, uncore_offset = _group_keys(i.uncore_cache for i in self.cpu_info.values())
        core_masks: dict[int, int] = {}
        socket_masks: dict[int, int] = {}
        numa_masks: dict[int, int] = {}
        uncore_masks: dict[int, int] = {}
        all_mask = 0
        for cpu, info in self.cpu_info.items():
            bit = 1 << cpu
            all_mask |= bit
            socket = socket_keys[info.socket]
            uncore = uncore_keys[info.uncore_cache]
            core_masks[info.core] = core_masks.get(info.core, 0) | bit
            socket_masks[socket] = socket_masks.get(socket, 0) | bit
            numa_masks[info.numa_node] = numa_masks.get(info.numa_node, 0) | bit
            uncore_masks[uncore] = uncore_masks.get(uncore, 0) | bit
        self.socket_offset: int | None = socket_offset
        self.uncore_offset: int | None = uncore_offset
        self.socket_keys = socket_keys
        self.uncore_keys = uncore_keys
        self.core_masks = core_masks
        self.socket_masks = socket_masks
        self.numa_masks = numa_masks
        self.uncore_masks = uncore_masks
        self.all_mask = all_mask
        self.num_cpus = len(self.cpu_info) if num_cpus is None else num_cpus
        self.num_sockets = len(socket_masks) if num_sockets is None else num_sockets
        self.num_cores = len(core_masks) if num_cores is None else num_cores
        # Explicit counts exist for fixtures that declare them as upstream's
        # test topologies do (an undeclared Go count is 0).
        self.num_numa_nodes = len(numa_masks) if num_numa_nodes is None else num_numa_nodes
        self.num_uncore_caches = (
            len(uncore_masks) if num_uncore_caches is None else num_uncore_caches
        )
        self._within: dict[tuple[int, int, int], dict[int, int]] = {}
        # what the CPU pickers precompute for this topology (theirs to fill)
        self.picker_tables: object | None = None

    def groups_within(self, groups: dict[int, int], parents: dict[int, int], parent: int) -> dict[int, int]:
        """The groups of ``groups`` (one of the ``*_masks`` tables) that
        share a CPU with group ``parent`` of ``parents``, in table order;
        computed once per (table, parent)."""
        key = (id(groups), id(parents), parent)
        found = self._within.get(key)
        if found is None:
            pmask = parents[parent]
            found = self._within[key] = {g: m for g, m in groups.items() if m & pmask}
        return found

    # -- topology.CPUTopology methods -------------------------------------
    def cpus_per_core(self) -> int:
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def cpus_per_uncore(self) -> int:
        return self.num_cpus // self.num_uncore_caches if self.num_uncore_caches else 0

    def cpu_core_id(self, cpu: int) -> int:
        return self._info(cpu).core

    def cpu_socket_id(self, cpu: int) -> int:
        """The socket id as reported (``-1`` stays ``-1``); ``socket_key``
        makes it the key of ``socket_masks`` and of the ``CPUDetails``
        socket queries."""
        return self._info(cpu).socket

    def socket_key(self, socket_id: int) -> int:
        """The key of socket ``socket_id`` in ``socket_masks`` (-1, no
        group's key, for an id the machine does not have when keys are ranks)."""
        return _key(self.socket_keys, self.socket_offset, socket_id)

    def uncore_key(self, uncore_cache_id: int) -> int:
        """The key of uncore cache ``uncore_cache_id`` in ``uncore_masks``."""
        return _key(self.uncore_keys, self.uncore_offset, uncore_cache_id)

    def socket_id(self, key: int) -> int:
        """The socket id (as reported) whose key is ``key``."""
        return _id_of_key(self.socket_keys, key)

    def uncore_id(self, key: int) -> int:
        """The uncore-cache id (as reported) whose key is ``key``."""
        return _id_of_key(self.uncore_keys, key)

    def cpu_numa_node_id(self, cpu: int) -> int:
        return self._info(cpu).numa_node

    def _info(self, cpu: int) -> CPUInfo:
        try:
            return self.cpu_info[cpu]
        except KeyError:
            raise TopologyError(f"unknown CPU ID: {cpu}") from None

    @property
    def details(self) -> CPUDetails:
        """The whole CPU table as a ``CPUDetails``."""
        return CPUDetails(self, self.all_mask)

    def cpus(self) -> CPUSet:
        return CPUSet.from_mask(self.all_mask)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CPUTopology)
            and self.cpu_info == other.cpu_info
            and self.num_cpus == other.num_cpus
            and self.num_sockets == other.num_sockets
            and self.num_cores == other.num_cores
        )

    def __hash__(self) -> int:
        return hash((tuple(self.cpu_info.items()), self.num_cpus, self.num_sockets))

    def __repr__(self) -> str:
        return (
            f"CPUTopology(cpus={self.num_cpus}, cores={self.num_cores}, "
            f"sockets={self.num_sockets}, numa={self.num_numa_nodes}, "
            f"uncore={self.num_uncore_caches})"
        )


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class CPUDetails:
    """``topology.CPUDetails`` restricted to ``mask`` (an immutable view)."""

    __slots__ = ("topo", "mask")

    def __init__(self, topo: CPUTopology, mask: int) -> None:
        self.topo = topo
        self.mask = mask & topo.all_mask

    def keep_only(self, cpus: CPUSet) -> CPUDetails:
        return CPUDetails(self.topo, self.mask & cpus.mask)

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, cpu: object) -> bool:
        return isinstance(cpu, int) and cpu >= 0 and (self.mask >> cpu) & 1 == 1

    def info(self, cpu: int) -> CPUInfo:
        if cpu not in self:
            raise KeyError(cpu)
        return self.topo.cpu_info[cpu]

    # -- ids of groups present ----------------------------------------------
    def cpus(self) -> CPUSet:
        return CPUSet.from_mask(self.mask)

    def numa_nodes(self) -> CPUSet:
        return _ids_of(self.topo.numa_masks, self.mask)

    def sockets(self) -> CPUSet:
        return _ids_of(self.topo.socket_masks, self.mask)

    def cores(self) -> CPUSet:
        return _ids_of(self.topo.core_masks, self.mask)

    def uncore_caches(self) -> CPUSet:
        return _ids_of(self.topo.uncore_masks, self.mask)

    # -- groups within groups ---------------------------------------------------
    def numa_nodes_in_sockets(self, *ids: int) -> CPUSet:
        return _ids_of(self.topo.numa_masks, self.mask & _or_masks(self.topo.socket_masks, ids))

    def sockets_in_numa_nodes(self, *ids: int) -> CPUSet:
        return _ids_of(self.topo.socket_masks, self.mask & _or_masks(self.topo.numa_masks, ids))

    def cores_in_numa_nodes(self, *ids: int) -> CPUSet:
        return _ids_of(self.topo.core_masks, self.mask & _or_masks(self.topo.numa_masks, ids))

    def cores_in_sockets(self, *ids: int) -> CPUSet:
        return _ids_of(self.topo.core_masks, self.mask & _or_masks(self.topo.socket_masks, ids))

    def uncore_in_numa_nodes(self, *ids: int) -> CPUSet:
        return _ids_of(self.topo.uncore_masks, self.mask & _or_masks(self.topo.numa_masks, ids))

    def cores_in_uncore_caches(self, *ids: int) -> CPUSet:
        return _ids_of(self.topo.core_masks, self.mask & _or_masks(self.topo.uncore_masks, ids))

    def cores_needed_in_uncore_cache(self, num_cores_needed: int, *ids: int) -> CPUSet:
        """The lowest ``num_cores_needed`` core ids in the given caches
        (all of them when there are not more than that)."""
        return self.cores_in_uncore_caches(*ids).take_first(num_cores_needed)

    # -- CPUs of groups ---------------------------------------------------------
    def cpus_in_numa_nodes(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(self.mask & _or_masks(self.topo.numa_masks, ids))

    def cpus_in_sockets(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(self.mask & _or_masks(self.topo.socket_masks, ids))

    def cpus_in_cores(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(self.mask & _or_masks(self.topo.core_masks, ids))

    def cpus_in_uncore_caches(self, *ids: int) -> CPUSet:
        return CPUSet.from_mask(self.mask & _or_masks(self.topo.uncore_masks, ids))

    def __repr__(self) -> str:
        return f"CPUDetails({CPUSet.from_mask(self.mask)!s})"


class NUMANode:
    """One NUMA node as cadvisor's ``MachineInfo.Topology`` reports it.

    ``memory`` is the node's total memory in bytes (hugepage pools
    included); ``hugepages`` maps a page size in bytes to the total size in
    bytes of that pool on this node; ``distances`` is this node's row of the
    distance table (index = NUMA id): ``None`` when unknown (cadvisor's nil
    slice), which differs from an empty row (a ``[]`` in machineInfo JSON).
    """

    id: int
    memory: int
    hugepages: Mapping[int, int]
    distances: Sequence[int] | None
    __slots__ = ('id', 'memory', 'hugepages', 'distances')

    def __init__(
        self,
        id: int,
        memory: int,
        hugepages: Mapping[int, int] | None = None,
        distances: Sequence[int] | None = None,
    ) -> None:
        self.id = id
        self.memory = memory
        self.hugepages = dict() if hugepages is None else hugepages
        self.distances = distances

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(id={self.id!r}, memory={self.memory!r}, hugepages={self.hugepages!r}, distances={self.distances!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NUMANode) or other.__class__ is not self.__class__:
            return False
        return (self.id, self.memory, self.hugepages, self.distances) == (other.id, other.memory, other.hugepages, other.distances)

    def __hash__(self) -> int:
        return hash((self.id, self.memory, self.hugepages, self.distances))


class Device:
    """A device-plugin device: id and the NUMA nodes it is local to
    (empty = no topology information)."""

    id: str
    numa_nodes: tuple[int, ...]
    __slots__ = ('id', 'numa_nodes')

    def __init__(self, id: str, numa_nodes: tuple[int, ...] = ()) -> None:
        self.id = id
        self.numa_nodes = numa_nodes

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(id={self.id!r}, numa_nodes={self.numa_nodes!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Device) or other.__class__ is not self.__class__:
            return False
        return (self.id, self.numa_nodes) == (other.id, other.numa_nodes)

    def __hash__(self) -> int:
        return hash((self.id, self.numa_nodes))


#: the fields of :class:`Machine`, in order
_MACHINE_FIELDS = ("topology", "numa_nodes", "devices", "name", "total_memory", "total_hugepages")


class Machine:
    """Everything the kubelet's managers know about the node's hardware."""

    topology: CPUTopology
    numa_nodes: tuple[NUMANode, ...]
    devices: Mapping[str, tuple[Device, ...]]
    name: str
    # cadvisor's machine-wide MemoryCapacity and HugePages (page size ->
    # bytes), which node capacity comes from; None: the sums over the nodes
    total_memory: int | None
    total_hugepages: Mapping[int, int] | None

    def __init__(
        self,
        topology: CPUTopology,
        numa_nodes: tuple[NUMANode, ...],
        devices: Mapping[str, tuple[Device, ...]] | None = None,
        name: str = "node",
        total_memory: int | None = None,
        total_hugepages: Mapping[int, int] | None = None,
    ) -> None:
        # written out, with the comparison, the hash, the repr and replace()
        # (a ``dataclass`` would make them when the module is imported, on
        # every command's start)
        self.topology = topology
        self.numa_nodes = numa_nodes
        self.devices = {} if devices is None else devices
        self.name = name
        self.total_memory = total_memory
        self.total_hugepages = total_hugepages

    def _fields(self) -> tuple[Any, ...]:
        return (self.topology, self.numa_nodes, self.devices, self.name, self.total_memory,
                self.total_hugepages)

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(topology={self.topology!r}, "
                f"numa_nodes={self.numa_nodes!r}, devices={self.devices!r}, name={self.name!r}, "
                f"total_memory={self.total_memory!r}, total_hugepages={self.total_hugepages!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Machine) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def replace(self, **changes: Any) -> Machine:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = dict(zip(_MACHINE_FIELDS, self._fields(), strict=True))
        values.update(changes)
        return Machine(**values)

    def numa_ids(self) -> list[int]:
        return [n.id for n in self.numa_nodes]

    def numa_node(self, nid: int) -> NUMANode:
        for n in self.numa_nodes:
            if n.id == nid:
                return n
        raise KeyError(nid)

    def has_distances(self) -> bool:
        return bool(self.numa_nodes) and all(n.distances for n in self.numa_nodes)

    def memory_capacity(self) -> int:
        """cadvisor ``MemoryCapacity`` (the node's memory capacity), by
        default the sum of the nodes' memory."""
        if self.total_memory is not None:
            return self.total_memory
        return sum(n.memory for n in self.numa_nodes)

    def hugepage_capacity(self) -> dict[int, int]:
        """Page size -> total bytes: cadvisor's machine-wide ``HugePages``
        (the node's hugepage capacity), by default the sums over the nodes."""
        if self.total_hugepages is not None:
            return dict(self.total_hugepages)
        out: dict[int, int] = {}
        for n in self.numa_nodes:
            for size, total in n.hugepages.items():
                out[size] = out.get(size, 0) + total
        return out
