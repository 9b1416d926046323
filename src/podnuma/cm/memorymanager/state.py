"""The memory manager's in-memory state.

Mirrors ``pkg/kubelet/cm/memorymanager/state/state.go`` (``MemoryTable``,
``NUMANodeState``, ``NUMANodeMap``, ``Block``, ``ContainerMemoryAssignments``,
``PodMemoryAssignments``, their ``Clone``) and ``state/state_mem.go``
(``stateMemory``): every getter hands out a copy and every setter stores a
copy, so a policy works on a private machine state and commits it with
:meth:`MemoryManagerState.set_machine_state`, as upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set

from podnuma.cm.active import stale_containers

__all__ = [
    "Block",
    "MemoryTable",
    "NUMANodeState",
    "NUMANodeMap",
    "ContainerMemoryAssignments",
    "PodMemoryAssignments",
    "MemoryManagerState",
    "clone_machine_state",
    "clone_assignments",
    "RESOURCE_MEMORY",
]

RESOURCE_MEMORY = "memory"


class Block:
    """``state.Block``: ``size`` bytes of one memory type pinned to the NUMA
    nodes ``numa_affinity`` (kept in the order the policy wrote them)."""

    numa_affinity: tuple[int, ...]
    type: str
    size: int
    __slots__ = ("numa_affinity", "type", "size")

    # (the records of this module write their methods out: ``dataclass``
    # would make them when the module is imported, on every command's start)
    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(numa_affinity={self.numa_affinity!r}, "
                f"type={self.type!r}, size={self.size!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Block) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.numa_affinity, self.type, self.size) == (other.numa_affinity, other.type, other.size)

    def __hash__(self) -> int:
        return hash((self.numa_affinity, self.type, self.size))

    def __init__(self, numa_affinity: Iterable[int], type: str, size: int) -> None:  # noqa: A002
        object.__setattr__(self, "numa_affinity", tuple(numa_affinity))
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "size", size)

    def __deepcopy__(self, memo: dict[int, object]) -> Block:
        return self  # immutable

    def with_size(self, size: int) -> Block:
        return Block(self.numa_affinity, self.type, size)

    def to_json(self) -> dict[str, object]:
        """The block as the checkpoint and the simulate output write it."""
        return {"numaAffinity": list(self.numa_affinity), "type": self.type, "size": self.size}


class MemoryTable:
    """``state.MemoryTable`` (bytes)."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int
    free: int
    __slots__ = ("total", "system_reserved", "allocatable", "reserved", "free")

    def __init__(
        self, total: int = 0, system_reserved: int = 0, allocatable: int = 0, reserved: int = 0,
        free: int = 0,
    ) -> None:
        self.total = total
        self.system_reserved = system_reserved
        self.allocatable = allocatable
        self.reserved = reserved
        self.free = free

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(total={self.total!r}, "
                f"system_reserved={self.system_reserved!r}, allocatable={self.allocatable!r}, "
                f"reserved={self.reserved!r}, free={self.free!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryTable) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.total, self.system_reserved, self.allocatable, self.reserved, self.free) == (
            other.total, other.system_reserved, other.allocatable, other.reserved, other.free)

    # (no __hash__: defining __eq__ alone leaves it unhashable, as the
    # dataclass it was)

    def copy(self) -> MemoryTable:
        return MemoryTable(self.total, self.system_reserved, self.allocatable, self.reserved, self.free)


class NUMANodeState:
    """``state.NUMANodeState``: assignments counted per block and node
    (a container with memory and hugepages counts two), the memory tables,
    and ``cells``, the NUMA group the node belongs to."""

    number_of_assignments: int
    memory_map: dict[str, MemoryTable]
    cells: list[int]
    __slots__ = ("number_of_assignments", "memory_map", "cells")

    def __init__(
        self, number_of_assignments: int = 0, memory_map: dict[str, MemoryTable] | None = None,
        cells: list[int] | None = None,
    ) -> None:
        self.number_of_assignments = number_of_assignments
        self.memory_map = {} if memory_map is None else memory_map
        self.cells = [] if cells is None else cells

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(number_of_assignments={self.number_of_assignments!r}, "
                f"memory_map={self.memory_map!r}, cells={self.cells!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NUMANodeState) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.number_of_assignments, self.memory_map, self.cells) == (
            other.number_of_assignments, other.memory_map, other.cells)

    # (no __hash__: defining __eq__ alone leaves it unhashable, as the
    # dataclass it was)

    def copy(self, names: set[str] | None = None) -> NUMANodeState:
        """A copy; with ``names``, only those tables are private and the
        others are this node's own (the caller changes only ``names``)."""
        return NUMANodeState(
            self.number_of_assignments,
            {
                name: table.copy() if names is None or name in names else table
                for name, table in self.memory_map.items()
            },
            list(self.cells),
        )


NUMANodeMap = dict[int, NUMANodeState]
ContainerMemoryAssignments = dict[str, dict[str, list[Block]]]
PodMemoryAssignments = dict[str, list[Block]]


def clone_machine_state(state: Mapping[int, NUMANodeState]) -> NUMANodeMap:
    """``NUMANodeMap.Clone``."""
    return {nid: node.copy() for nid, node in state.items()}


def clone_assignments(
    assignments: Mapping[str, Mapping[str, Sequence[Block]]],
) -> ContainerMemoryAssignments:
    """``ContainerMemoryAssignments.Clone`` (blocks are immutable)."""
    return {pod: {name: list(blocks) for name, blocks in ctrs.items()} for pod, ctrs in assignments.items()}


class MemoryManagerState:
    """``state.stateMemory``: machine state, container assignments and the
    pod-level assignments (KEP-5526)."""

    __slots__ = ("_machine_state", "_assignments", "_pod_assignments", "version", "stores")

    def __init__(
        self,
        machine_state: Mapping[int, NUMANodeState] | None = None,
        assignments: Mapping[str, Mapping[str, Sequence[Block]]] | None = None,
        pod_assignments: Mapping[str, Sequence[Block]] | None = None,
    ) -> None:
        self._machine_state: NUMANodeMap = clone_machine_state(machine_state or {})
        self._assignments: ContainerMemoryAssignments = clone_assignments(assignments or {})
        self._pod_assignments: PodMemoryAssignments = {
            uid: list(blocks) for uid, blocks in (pod_assignments or {}).items()
        }
        # bumped by every writer that adds or replaces container entries
        # (garbage collection relies on it; see podnuma.cm.active)
        self.version = 0
        # bumped by every writer: the kubelet's checkpoint-backed state
        # stores the checkpoint file on each of them (``storeState``), so a
        # state never written since it was restored leaves the file as found
        self.stores = 0

    # -- machine state ---------------------------------------------------------
    def get_machine_state(self) -> NUMANodeMap:
        return clone_machine_state(self._machine_state)

    def machine_state_view(self) -> Mapping[int, NUMANodeState]:
        """The machine state itself, not a copy: for readers only."""
        return self._machine_state

    def machine_state_for_update(
        self, nids: Iterable[int], names: Iterable[str] | None = None
    ) -> NUMANodeMap:
        """A machine state to change and then :meth:`commit_machine_state`:
        the nodes ``nids`` are private copies, the others are shared with
        the current state and must not be changed (copy on write). With
        ``names``, only those memory tables of the copied nodes are private;
        the other tables are shared and must not be changed either."""
        out = dict(self._machine_state)
        only = None if names is None else set(names)
        for nid in nids:
            node = out.get(nid)
            if node is not None:
                out[nid] = node.copy(only)
        return out

    def set_machine_state(self, machine_state: Mapping[int, NUMANodeState]) -> None:
        self.stores += 1
        self._machine_state = clone_machine_state(machine_state)

    def commit_machine_state(self, machine_state: NUMANodeMap) -> None:
        """:meth:`set_machine_state` for a map the caller got from
        :meth:`get_machine_state` and no longer uses: stored as is (the copy
        ``get_machine_state`` made is already private)."""
        self.stores += 1
        self._machine_state = machine_state

    # -- container assignments -----------------------------------------------
    def get_memory_blocks(self, pod_uid: str, container_name: str) -> list[Block] | None:
        """The container's blocks (a copy), ``None`` when it has no entry
        (an entry may hold an empty list: upstream tells nil from empty)."""
        entries = self._assignments.get(pod_uid)  # (no empty dict built per miss)
        blocks = None if entries is None else entries.get(container_name)
        return None if blocks is None else list(blocks)

    def set_memory_blocks(self, pod_uid: str, container_name: str, blocks: Sequence[Block]) -> None:
        self.stores += 1
        self._assignments.setdefault(pod_uid, {})[container_name] = list(blocks)
        self.version += 1

    def get_memory_assignments(self) -> ContainerMemoryAssignments:
        return clone_assignments(self._assignments)

    def holds_containers(self) -> bool:
        """Whether any container has an assignment."""
        return bool(self._assignments)

    def stale_containers(
        self, active: Mapping[str, Set[str]], pods: Iterable[str] | None = None
    ) -> list[tuple[str, str]]:
        """(pod UID, container name) of every assignment whose container is
        not in ``active`` (pod UID -> container names), among the pods
        ``pods`` (default: all)."""
        return stale_containers(self._assignments, active, pods)

    def set_memory_assignments(self, assignments: Mapping[str, Mapping[str, Sequence[Block]]]) -> None:
        self.stores += 1
        self._assignments = clone_assignments(assignments)
        self.version += 1

    def delete(self, pod_uid: str, container_name: str) -> None:
        """Forget a container; the pod goes with its last container."""
        self.stores += 1
        containers = self._assignments.get(pod_uid)
        if containers is None:
            return
        containers.pop(container_name, None)
        if not containers:
            del self._assignments[pod_uid]

    # -- pod-level assignments -------------------------------------------------
    def get_pod_memory_blocks(self, pod_uid: str) -> list[Block] | None:
        blocks = self._pod_assignments.get(pod_uid)
        return None if blocks is None else list(blocks)

    def set_pod_memory_blocks(self, pod_uid: str, blocks: Sequence[Block]) -> None:
        self.stores += 1
        self._pod_assignments[pod_uid] = list(blocks)

    def get_pod_memory_assignments(self) -> PodMemoryAssignments:
        return {uid: list(blocks) for uid, blocks in self._pod_assignments.items()}

    def set_pod_memory_assignments(self, assignments: Mapping[str, Sequence[Block]]) -> None:
        self.stores += 1
        self._pod_assignments = {uid: list(blocks) for uid, blocks in assignments.items()}

    def delete_pod(self, pod_uid: str) -> None:
        self.stores += 1
        self._pod_assignments.pop(pod_uid, None)

    def clear_state(self) -> None:
        self.stores += 1
        self._machine_state = {}
        self._assignments = {}
        self._pod_assignments = {}
