"""The ``machineInfo`` node form: cadvisor's MachineInfo and the kubelet's ``Discover``.

Mirrors two upstream pieces:

- github.com/google/cadvisor ``info/v1/machine.go``: the MachineInfo JSON
  (``num_cores``, ``num_sockets``, ``topology: [{node_id, memory, hugepages,
  distances, cores: [{core_id, thread_ids, socket_id, uncore_caches, ...}],
  caches}]``). Decoding follows Go's ``encoding/json``: unknown keys are
  ignored, key matching falls back to case-insensitive, ``null`` is the zero
  value; wrong types are errors.
- k8s.io/kubernetes ``pkg/kubelet/cm/cpumanager/topology/topology.go``
  (v1.37) ``Discover``: NumCPUs is ``NumCores`` ("could not detect number of
  cpus" when 0), NumSockets is ``NumSockets``, NumCores counts the cores of
  every node, a core's id is its lowest thread id (``getUniqueCoreID``), the
  uncore-cache id is the first uncore cache's id or else the socket id
  (``getUncoreCacheID``).

The sysfs, synthetic and table forms build the same ``MachineInfo``
intermediate and go through ``discover`` too, so all forms agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from podnuma.errors import InputError
from podnuma.fieldkit import expect_mapping, wrong_type
from podnuma.inputs.discover._fields import MAX_CPUS, MAX_NUMA_NODES, MAX_UINT64, join
from podnuma.machine.topology import CPUInfo, CPUTopology, Device, Machine, NUMANode

__all__ = [
    "Cache",
    "Core",
    "HugePagesInfo",
    "MachineInfoNode",
    "MachineInfo",
    "parse_machine_info",
    "discover",
    "build_machine",
    "load_machine_info",
    "machine_hugepages",
]

T = TypeVar("T")

#: Go's ``int`` on 64-bit platforms: cadvisor's ids (``Core.Id``,
#: ``Core.SocketID``, ``Cache.Id``) are ``int`` and may be negative (an
#: arm64 kernel that cannot tell the package writes ``physical_package_id``
#: -1, and cadvisor reports ``socket_id: -1``).
_MIN_INT64 = -(1 << 63)
_MAX_INT64 = (1 << 63) - 1


class Cache:
    """cadvisor ``info.Cache`` (size in bytes)."""

    id: int
    size: int
    type: str
    level: int
    __slots__ = ('id', 'size', 'type', 'level')

    def __init__(self, id: int = 0, size: int = 0, type: str = "", level: int = 0) -> None:
        self.id = id
        self.size = size
        self.type = type
        self.level = level

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(id={self.id!r}, size={self.size!r}, type={self.type!r}, level={self.level!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Cache) or other.__class__ is not self.__class__:
            return False
        return (self.id, self.size, self.type, self.level) == (other.id, other.size, other.type, other.level)

    def __hash__(self) -> int:
        return hash((self.id, self.size, self.type, self.level))


class Core:
    """cadvisor ``info.Core``: ``id`` is the platform's core id (not unique)."""

    id: int
    threads: tuple[int, ...]
    socket_id: int
    caches: tuple[Cache, ...]
    uncore_caches: tuple[Cache, ...]
    book_id: str
    drawer_id: str
    __slots__ = ('id', 'threads', 'socket_id', 'caches', 'uncore_caches', 'book_id', 'drawer_id')

    def __init__(
        self,
        id: int,
        threads: tuple[int, ...],
        socket_id: int = 0,
        caches: tuple[Cache, ...] = (),
        uncore_caches: tuple[Cache, ...] = (),
        book_id: str = "",
        drawer_id: str = "",
    ) -> None:
        self.id = id
        self.threads = threads
        self.socket_id = socket_id
        self.caches = caches
        self.uncore_caches = uncore_caches
        self.book_id = book_id
        self.drawer_id = drawer_id

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(id={self.id!r}, threads={self.threads!r}, socket_id={self.socket_id!r}, caches={self.caches!r}, uncore_caches={self.uncore_caches!r}, book_id={self.book_id!r}, drawer_id={self.drawer_id!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Core) or other.__class__ is not self.__class__:
            return False
        return (self.id, self.threads, self.socket_id, self.caches, self.uncore_caches, self.book_id, self.drawer_id) == (other.id, other.threads, other.socket_id, other.caches, other.uncore_caches, other.book_id, other.drawer_id)

    def __hash__(self) -> int:
        return hash((self.id, self.threads, self.socket_id, self.caches, self.uncore_caches, self.book_id, self.drawer_id))


class HugePagesInfo:
    """cadvisor ``info.HugePagesInfo``: page size in KiB and the page count."""

    page_size: int
    num_pages: int
    __slots__ = ('page_size', 'num_pages')

    def __init__(self, page_size: int, num_pages: int) -> None:
        self.page_size = page_size
        self.num_pages = num_pages

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(page_size={self.page_size!r}, num_pages={self.num_pages!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HugePagesInfo) or other.__class__ is not self.__class__:
            return False
        return (self.page_size, self.num_pages) == (other.page_size, other.num_pages)

    def __hash__(self) -> int:
        return hash((self.page_size, self.num_pages))


class MachineInfoNode:
    """cadvisor ``info.Node``: one NUMA node (memory in bytes)."""

    id: int
    memory: int
    hugepages: tuple[HugePagesInfo, ...]
    cores: tuple[Core, ...]
    caches: tuple[Cache, ...]
    distances: tuple[int, ...] | None
    __slots__ = ('id', 'memory', 'hugepages', 'cores', 'caches', 'distances')

    def __init__(
        self,
        id: int,
        memory: int = 0,
        hugepages: tuple[HugePagesInfo, ...] = (),
        cores: tuple[Core, ...] = (),
        caches: tuple[Cache, ...] = (),
        distances: tuple[int, ...] | None = None,
    ) -> None:
        self.id = id
        self.memory = memory
        self.hugepages = hugepages
        self.cores = cores
        self.caches = caches
        self.distances = distances

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(id={self.id!r}, memory={self.memory!r}, hugepages={self.hugepages!r}, cores={self.cores!r}, caches={self.caches!r}, distances={self.distances!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MachineInfoNode) or other.__class__ is not self.__class__:
            return False
        return (self.id, self.memory, self.hugepages, self.cores, self.caches, self.distances) == (other.id, other.memory, other.hugepages, other.cores, other.caches, other.distances)

    def __hash__(self) -> int:
        return hash((self.id, self.memory, self.hugepages, self.cores, self.caches, self.distances))


class MachineInfo:
    """The fields of cadvisor ``info.MachineInfo`` the kubelet's managers read."""

    num_cores: int
    num_sockets: int
    topology: tuple[MachineInfoNode, ...]
    num_physical_cores: int
    memory_capacity: int
    hugepages: tuple[HugePagesInfo, ...]
    __slots__ = ('num_cores', 'num_sockets', 'topology', 'num_physical_cores', 'memory_capacity', 'hugepages')

    def __init__(
        self,
        num_cores: int,
        num_sockets: int,
        topology: tuple[MachineInfoNode, ...] = (),
        num_physical_cores: int = 0,
        memory_capacity: int = 0,
        hugepages: tuple[HugePagesInfo, ...] | None = None,
    ) -> None:
        self.num_cores = num_cores
        self.num_sockets = num_sockets
        self.topology = topology
        self.num_physical_cores = num_physical_cores
        self.memory_capacity = memory_capacity
        self.hugepages = tuple() if hugepages is None else hugepages

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(num_cores={self.num_cores!r}, num_sockets={self.num_sockets!r}, topology={self.topology!r}, num_physical_cores={self.num_physical_cores!r}, memory_capacity={self.memory_capacity!r}, hugepages={self.hugepages!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MachineInfo) or other.__class__ is not self.__class__:
            return False
        return (self.num_cores, self.num_sockets, self.topology, self.num_physical_cores, self.memory_capacity, self.hugepages) == (other.num_cores, other.num_sockets, other.topology, other.num_physical_cores, other.memory_capacity, other.hugepages)

    def __hash__(self) -> int:
        return hash((self.num_cores, self.num_sockets, self.topology, self.num_physical_cores, self.memory_capacity, self.hugepages))


# --------------------------------------------------------------------------- JSON


def machine_hugepages(nodes: Iterable[MachineInfoNode]) -> tuple[HugePagesInfo, ...]:
    """The machine-wide huge page pools of a MachineInfo: every node's pools
    summed by page size, smallest page first, as cadvisor reports them (the
    page counts are uint64s: their sum wraps at 2^64)."""
    pages: dict[int, int] = {}
    for n in nodes:
        for hp in n.hugepages:
            pages[hp.page_size] = (pages.get(hp.page_size, 0) + hp.num_pages) & MAX_UINT64
    return tuple(HugePagesInfo(size, count) for size, count in sorted(pages.items()))


def _lookup(doc: Mapping[str, Any], name: str) -> Any:
    """Go encoding/json key matching: exact first, then case-insensitive."""
    if name in doc:
        return doc[name]
    low = name.lower()
    for key, value in doc.items():
        if isinstance(key, str) and key.lower() == low:
            return value
    return None


def _mapping(value: object, path: str) -> Mapping[str, Any]:
    return expect_mapping(value, path)


def _int(doc: Mapping[str, Any], name: str, path: str, *, default: int = 0, signed: bool = False) -> int:
    """A count or size (``signed``: an id that cadvisor may report negative,
    within Go's ``int``)."""
    value = _lookup(doc, name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(join(path, name), "an integer", value)
    if signed:
        if not _MIN_INT64 <= value <= _MAX_INT64:
            raise InputError(f"out of range: {value} does not fit in 64 bits", path=join(path, name))
        return value
    if value < 0:
        raise InputError(f"must not be negative, got {value}", path=join(path, name))
    if value > MAX_UINT64:
        raise InputError(f"too large: {value} does not fit in 64 bits", path=join(path, name))
    return value


def _str(doc: Mapping[str, Any], name: str, path: str) -> str:
    value = _lookup(doc, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise wrong_type(join(path, name), "a string", value)
    return value


def _list(
    doc: Mapping[str, Any], name: str, path: str, item: Callable[[Any, str], T]
) -> tuple[T, ...]:
    value = _lookup(doc, name)
    if value is None:
        return ()
    lpath = join(path, name)
    if not isinstance(value, list | tuple):
        raise wrong_type(lpath, "a list", value)
    return tuple(item(v, join(lpath, i)) for i, v in enumerate(value))


def _int_item(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(path, "an integer", value)
    if value < 0:
        raise InputError(f"must not be negative, got {value}", path=path)
    if value > MAX_UINT64:
        raise InputError(f"too large: {value} does not fit in 64 bits", path=path)
    return value


def _cache(value: Any, path: str) -> Cache:
    doc = _mapping(value, path)
    return Cache(
        id=_int(doc, "id", path, signed=True),
        size=_int(doc, "size", path),
        type=_str(doc, "type", path),
        level=_int(doc, "level", path),
    )


def _core(value: Any, path: str) -> Core:
    doc = _mapping(value, path)
    return Core(
        id=_int(doc, "core_id", path, signed=True),
        threads=_list(doc, "thread_ids", path, _int_item),
        socket_id=_int(doc, "socket_id", path, signed=True),
        caches=_list(doc, "caches", path, _cache),
        uncore_caches=_list(doc, "uncore_caches", path, _cache),
        book_id=_str(doc, "book_id", path),
        drawer_id=_str(doc, "drawer_id", path),
    )


def _hugepages(value: Any, path: str) -> HugePagesInfo:
    doc = _mapping(value, path)
    return HugePagesInfo(
        page_size=_int(doc, "page_size", path), num_pages=_int(doc, "num_pages", path)
    )


def _node(value: Any, path: str) -> MachineInfoNode:
    doc = _mapping(value, path)
    hugepages = _list(doc, "hugepages", path, _hugepages)
    seen: set[int] = set()
    for i, hp in enumerate(hugepages):
        if hp.page_size == 0:
            raise InputError("page_size must be positive", path=f"{path}.hugepages[{i}].page_size")
        if hp.page_size in seen:
            raise InputError(
                f"page size {hp.page_size} KiB listed twice", path=f"{path}.hugepages[{i}]"
            )
        seen.add(hp.page_size)
    return MachineInfoNode(
        id=_int(doc, "node_id", path),
        memory=_int(doc, "memory", path),
        hugepages=hugepages,
        cores=_list(doc, "cores", path, _core),
        caches=_list(doc, "caches", path, _cache),
        # (absent or null: no row, Go's nil slice; ``[]``: an empty, non-nil row)
        distances=None if _lookup(doc, "distances") is None else _list(doc, "distances", path, _int_item),
    )


def parse_machine_info(doc: object) -> MachineInfo:
    """Decode cadvisor MachineInfo JSON (already parsed into Python values).

    Error paths are relative to ``doc``.
    """
    root = _mapping(doc, "")
    topology = _list(root, "topology", "", _node)
    ids: set[int] = set()
    for i, node in enumerate(topology):
        if node.id in ids:
            raise InputError(f"NUMA node {node.id} listed twice", path=f"topology[{i}].node_id")
        ids.add(node.id)
    return MachineInfo(
        num_cores=_int(root, "num_cores", ""),
        num_sockets=_int(root, "num_sockets", ""),
        topology=topology,
        num_physical_cores=_int(root, "num_physical_cores", ""),
        memory_capacity=_int(root, "memory_capacity", ""),
        hugepages=_list(root, "hugepages", "", _hugepages),
    )


# ----------------------------------------------------------------------- Discover


def _unique_core_id(threads: Sequence[int]) -> int:
    """``getUniqueCoreID``: the lowest thread id; the threads must be unique."""
    if not threads:
        raise ValueError("no cpus provided")
    if len(set(threads)) != len(threads):
        raise ValueError("cpus provided are not unique")
    return min(threads)


def _uncore_cache_id(core: Core) -> int:
    """``getUncoreCacheID``: first uncore cache's id (whatever its level), else the socket."""
    if not core.uncore_caches:
        return core.socket_id
    return core.uncore_caches[0].id


def _check_limits(info: MachineInfo) -> None:
    """Input validation (not the kubelet's): ids and counts within Linux's
    limits, so that no CPU or NUMA bitmask grows astronomically wide."""
    if info.num_cores > MAX_CPUS:
        raise InputError(
            f"{info.num_cores} CPUs: more than Linux supports ({MAX_CPUS})", path="num_cores"
        )
    for ni, node in enumerate(info.topology):
        if node.id >= MAX_NUMA_NODES:
            raise InputError(
                f"NUMA node id {node.id} out of range (Linux supports ids below {MAX_NUMA_NODES})",
                path=f"topology[{ni}].node_id",
            )
        for ci, core in enumerate(node.cores):
            for ti, cpu in enumerate(core.threads):
                if cpu >= MAX_CPUS:
                    raise InputError(
                        f"CPU id {cpu} out of range (Linux supports ids below {MAX_CPUS})",
                        path=f"topology[{ni}].cores[{ci}].thread_ids[{ti}]",
                    )


def discover(info: MachineInfo) -> CPUTopology:
    """``topology.Discover``: the CPU manager's view of the machine.

    Raises ``InputError`` with the kubelet's message (paths are MachineInfo
    JSON paths).
    """
    if info.num_cores == 0:
        raise InputError("could not detect number of cpus", path="num_cores")
    _check_limits(info)
    details: dict[int, CPUInfo] = {}
    num_physical_cores = 0
    for ni, node in enumerate(info.topology):
        num_physical_cores += len(node.cores)
        for ci, core in enumerate(node.cores):
            try:
                core_id = _unique_core_id(core.threads)
            except ValueError as err:
                raise InputError(
                    str(err), path=f"topology[{ni}].cores[{ci}].thread_ids"
                ) from None
            uncore = _uncore_cache_id(core)
            for cpu in core.threads:
                # Like the kubelet's map assignment: a CPU listed twice keeps its last entry.
                details[cpu] = CPUInfo(
                    numa_node=node.id, socket=core.socket_id, core=core_id, uncore_cache=uncore
                )
    return CPUTopology(
        details,
        num_cpus=info.num_cores,
        num_sockets=info.num_sockets,
        num_cores=num_physical_cores,
    )


# ------------------------------------------------------------------------ Machine


def numa_nodes_of(info: MachineInfo) -> tuple[NUMANode, ...]:
    """NUMA nodes (memory, hugepage pools in bytes, distances), sorted by id.
    A pool's bytes are the memory manager's ``NumPages * PageSize * 1024``
    (pkg/kubelet/cm/memorymanager/policy_static.go,
    ``getDefaultMachineState``): a uint64 product, which wraps at 2^64."""
    out = []
    for node in sorted(info.topology, key=lambda n: n.id):
        pools = {hp.page_size * 1024: hp.page_size * 1024 * hp.num_pages & MAX_UINT64 for hp in node.hugepages}
        out.append(
            NUMANode(id=node.id, memory=node.memory, hugepages=pools, distances=node.distances)
        )
    return tuple(out)


def build_machine(
    info: MachineInfo,
    *,
    name: str = "node",
    devices: Mapping[str, tuple[Device, ...]] | None = None,
) -> Machine:
    """``Discover`` plus the NUMA nodes: the ``Machine`` the managers use."""
    # hugepage capacity comes from the machine-wide field, not the NUMA
    # nodes (cadvisor CapacityFromMachineInfo): a MachineInfo without
    # top-level hugepages has no hugepage capacity. Memory capacity likewise
    # is MemoryCapacity (/proc/meminfo's MemTotal), which can exceed the
    # nodes' sum; a MachineInfo without it falls back to that sum.
    return Machine(
        topology=discover(info),
        numa_nodes=numa_nodes_of(info),
        devices=dict(devices or {}),
        name=name,
        # (the capacity's int64(PageSize*1024) * int64(NumPages) is this
        # product modulo 2^64, which go_int64 then reads as an int64)
        total_hugepages={
            hp.page_size * 1024: hp.page_size * 1024 * hp.num_pages & MAX_UINT64 for hp in info.hugepages
        },
        total_memory=info.memory_capacity or None,
    )


def load_machine_info(doc: object, *, name: str = "node") -> Machine:
    """The ``machineInfo`` form: decode, then ``build_machine``."""
    return build_machine(parse_machine_info(doc), name=name)
