"""The memory manager's ``Static`` policy.

Mirrors ``pkg/kubelet/cm/memorymanager/policy_static.go`` (kubelet v1.37)
for classic (container-level) pods: ``NewPolicyStatic``, ``Start`` /
``validateState`` / ``areMachineStatesEqual``, ``getDefaultMachineState``,
``Allocate`` with the default and extended hints, ``updateMachineState`` /
``releaseMemory``, ``GetTopologyHints`` / ``GetPodTopologyHints`` /
``calculateHints`` / ``regenerateHints``, the init-container memory reuse
(``getPodReusableMemory``, ``updatePodReusableMemory``,
``updateInitContainersMemoryBlocks``) and ``getPodRequestedResources``.

The pod-level resource managers (KEP-5526): ``getContainerRequestedResources``
eligibility, the pod-level branch of ``getPodRequestedResources``,
``validatePodScopeResources``, ``AllocatePod`` (one NUMA-aligned reservation
of the pod budget, then exclusive blocks for the qualifying containers and
the pod shared pool for the others), the pod-level path of
``GetPodTopologyHints``, pod entries in ``validateState`` and
``RemoveContainer``. As in v1.37.2, ``AllocatePod`` does not look at what
the state already holds for the pod (a re-admitted pod-level pod reserves its
budget again), and ``GetPodTopologyHints`` regenerates a restored pod's hint
from the first container holding blocks, compared with the pod's totals.

Go iterates maps in random order where upstream ranges over a request map;
podnuma uses the container's resource order (sorted by name), so blocks come
out as ``hugepages-*`` before ``memory``.

Upstream quirk, reproduced: the sizes are ``uint64`` and so are their sums,
which wrap modulo 2^64 -- the nodes' allocatable and free amounts of a mask
in ``calculateHints`` (plus the init containers' reusable memory) and
``isAffinitySatisfyRequest``, and the request totals of
``getPodRequestedResources`` and ``validatePodScopeResources``. A node whose
reservations pass its memory has an allocatable amount near 2^64 (the
machine state shows it wrapped), and a mask holding it can add up to *less*
than another node alone: the mask does not fit, and with no mask left the
memory manager gives no hints, ``Allocate`` then failing to extend the
topology manager's hint (or to find a default one). The sums are masked
only where the nodes' total can pass 2^64 (a sum over the nodes' amounts,
per request), so the common path pays one ``sum`` per resource.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Final

from podnuma.api.featuregates import (
    GATE_POD_LEVEL_RESOURCE_MANAGERS,
    GATE_POD_LEVEL_RESOURCES,
    GATE_POD_LEVEL_RESOURCES_FIX_KUBELET_QOS_CLASS,
    FeatureGateReader,
)
from podnuma.api.pod import Container, Pod
from podnuma.api.qos import (
    GUARANTEED,
    QOSClass,
    compute_pod_qos,
    is_container_equivalent_qos_guaranteed,
)
from podnuma.api.quantity import Quantity
from podnuma.api.resources import (
    hugepage_resource_name,
    is_hugepage_resource,
    is_pod_level_resources_set,
)
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.admission import EmptyPodSharedPoolError, KubeletPanic
from podnuma.cm.memo import SharedMemo
from podnuma.cm.memorymanager.native_twins import MaskRow, free_reaches, hint_list
from podnuma.cm.memorymanager.policy import MemoryManagerError, Policy, TopologyHints
from podnuma.cm.memorymanager.state import (
    RESOURCE_MEMORY,
    Block,
    MemoryManagerState,
    MemoryTable,
    NUMANodeMap,
    NUMANodeState,
)
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.mask_tables import (
    built_without_collector,
    check_mask_bits,
    mask_combinations,
    mask_hint_pairs,
    subset_sums,
)
from podnuma.cm.topologymanager.store import Store
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import NUMANode

__all__ = [
    "POLICY_STATIC",
    "StaticPolicy",
    "SystemReservedMemory",
    "find_best_hint",
    "get_container_requested_resources",
    "get_pod_requested_resources",
    "hugepage_resource_name",
    "is_affinity_violating_numa_allocations",
    "is_hint_in_group",
    "new_static_policy",
]

POLICY_STATIC: Final = "Static"

_U64: Final = (1 << 64) - 1
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1

# NUMA id -> resource name -> reserved bytes (``systemReservedMemory``)
SystemReservedMemory = Mapping[int, Mapping[str, int]]
# pod UID -> NUMA mask -> resource -> bytes (``reusableMemory``; upstream keys
# the mask by its String(), which is one-to-one with the mask)
ReusableMemory = dict[str, dict[BitMask, dict[str, int]]]

ERR_NO_SYSTEM_RESERVED: Final = "[memorymanager] you should specify the system reserved memory"
ERR_EMPTY_STATE_WITH_ASSIGNMENTS: Final = (
    "[memorymanager] machine state can not be empty when it has memory assignments"
)
ERR_STATE_DIFFERS: Final = "[memorymanager] the expected machine state is different from the real one"
ERR_QUANTITY_INT64: Final = "[memorymanager] failed to represent quantity as int64"
ERR_NO_DEFAULT_AFFINITY: Final = (
    "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available"
)
ERR_DEFAULT_NOT_PREFERRED: Final = "[memorymanager] failed to find the default preferred hint"
ERR_EXTENDED_NOT_PREFERRED: Final = "[memorymanager] failed to find the extended preferred hint"
ERR_NO_EXTENSION: Final = "[memorymanager] failed to find NUMA nodes to extend the current topology hint"
ERR_VIOLATES_ALLOCATIONS: Final = "[memorymanager] preferred hint violates NUMA node allocation"



def _as_int64(q: Quantity) -> int:
    """``Quantity.AsInt64``, failing as upstream does (an inf.Dec, a
    fractional scale, an int64 overflow)."""
    value, ok = q.as_int64()
    if not ok:
        raise MemoryManagerError(ERR_QUANTITY_INT64)
    return value


def _pod_level(pod: Pod, gates: FeatureGateReader) -> bool:
    return gates.enabled(GATE_POD_LEVEL_RESOURCE_MANAGERS) and is_pod_level_resources_set(pod)


def get_container_requested_resources(pod: Pod, container: Container, gates: FeatureGateReader) -> dict[str, int]:
    """``getContainerRequestedResources``: memory and hugepage requests in
    bytes (a pod-level pod's container that is not Guaranteed-equivalent
    gets none). Raises ``MemoryManagerError`` for a fractional quantity."""
    if _pod_level(pod, gates) and not is_container_equivalent_qos_guaranteed(container):
        return {}
    out: dict[str, int] = {}
    for name, qty in container.requests.items():
        if name != RESOURCE_MEMORY and not is_hugepage_resource(name):
            continue
        # uint64(int64) conversion, as upstream
        out[name] = _as_int64(qty) & _U64
    return out


def get_pod_requested_resources(pod: Pod, gates: FeatureGateReader) -> dict[str, int]:
    """``getPodRequestedResources``: the pod-level requests when the pod sets
    them (gate on), else per resource max(app containers + sidecars, every
    regular init container + the sidecars declared before it). Only the
    resources the app containers request are reported (upstream quirk)."""
    if _pod_level(pod, gates):
        assert pod.resources is not None
        pod_out: dict[str, int] = {}
        for name, qty in pod.resources.requests.items():
            if name != RESOURCE_MEMORY and not is_hugepage_resource(name):
                continue
            size = _as_int64(qty)
            if size <= 0:
                continue
            pod_out[name] = size
        return pod_out

    by_init: dict[str, int] = {}
    by_sidecars: dict[str, int] = {}
    for ctr in pod.init_containers:
        for name, req in get_container_requested_resources(pod, ctr, gates).items():
            by_init.setdefault(name, 0)
            # (uint64 sums, as upstream)
            if ctr.is_sidecar:
                by_sidecars[name] = (by_sidecars.get(name, 0) + req) & _U64
            elif (by_sidecars.get(name, 0) + req) & _U64 > by_init[name]:
                by_init[name] = (by_sidecars.get(name, 0) + req) & _U64
    by_apps: dict[str, int] = {}
    for ctr in pod.containers:
        for name, req in get_container_requested_resources(pod, ctr, gates).items():
            by_apps[name] = (by_apps.get(name, 0) + req) & _U64
    out: dict[str, int] = {}
    for name, apps in by_apps.items():
        long_running = (apps + by_sidecars.get(name, 0)) & _U64
        out[name] = max(long_running, by_init.get(name, 0))
    return out


def is_hint_in_group(hint: Sequence[int], group: Sequence[int]) -> bool:
    """``isHintInGroup``: every id of ``hint`` is in ``group``."""
    return set(hint) <= set(group)


def find_best_hint(hints: Iterable[TopologyHint]) -> TopologyHint:
    """``findBestHint``: preferred first, then the narrowest (lowest mask on
    a tie); Go's zero hint when the list is empty."""
    best = TopologyHint(None, False)
    for hint in hints:
        best_mask = best.numa_node_affinity
        if best_mask is None:
            best = hint
            continue
        if hint.preferred and not best.preferred:
            best = hint
            continue
        mask = hint.numa_node_affinity
        if hint.preferred == best.preferred and mask is not None and mask.is_narrower_than(best_mask):
            best = hint
    return best


def _groups_equal(group1: Sequence[int], group2: Sequence[int]) -> bool:
    return sorted(group1) == sorted(group2)


def is_affinity_violating_numa_allocations(machine_state: Mapping[int, NUMANodeState], mask: BitMask) -> bool:
    """``isAffinityViolatingNUMAAllocations``: a multi-NUMA mask may not use a
    node holding a single-NUMA allocation or one grouped differently."""
    bits = mask.bits()
    if len(bits) == 1:
        return False
    for nid in bits:
        node = machine_state.get(nid)
        if node is None or node.number_of_assignments == 0:
            continue
        if len(node.cells) == 1:
            return True
        if not _groups_equal(node.cells, bits):
            return True
    return False


def _is_affinity_satisfy_request(
    machine_state: Mapping[int, NUMANodeState], mask: BitMask, requested: Mapping[str, int]
) -> bool:
    for name, size in requested.items():
        free = 0
        for nid in mask.bits():
            table = _table(machine_state, nid, name)
            free += 0 if table is None else table.free
        if free & _U64 < size:  # a uint64 sum
            return False
    return True


# below this many masks, sums are taken mask by mask rather than by subset
_FEW = 32


@lru_cache(maxsize=2)
def _masks_over(numa_ids: tuple[int, ...]) -> list[MaskRow]:
    """``IterateBitMasks`` over the NUMA ids, with each mask's bits,
    compact index (for subset sums), width, its two hints and the positions
    of its bits. The last few are kept, shared by every policy (a list never
    changed: 2^20 - 1 rows, hundreds of MB, on a 20-NUMA machine)."""
    ids = list(numa_ids)
    position = {nid: i for i, nid in enumerate(numa_ids)}
    # ids 0..n-1 (the usual machine): a bit's position is the bit itself
    dense = ids == list(range(len(ids)))
    return [
        (
            mask,
            bits,
            mask.value,
            compact,
            len(bits),
            preferred,
            not_preferred,
            bits if dense else tuple(map(position.__getitem__, bits)),
        )
        for (mask, bits, compact), (preferred, not_preferred) in zip(
            mask_combinations(ids), mask_hint_pairs(ids), strict=True
        )
    ]


_WIDTH = itemgetter(4)


def _without(rows: list[MaskRow], nodes: int) -> list[MaskRow]:
    """The rows whose masks hold none of ``nodes`` (a NUMA bit mask)."""
    # (comprehensions here and below: on CPython 3.11 the slot wrappers
    # and itemgetters a ``map`` pipeline calls cost more than item reads)
    return [row for row in rows if not row[2] & nodes]


def _at_least(rows: list[MaskRow], sums: Sequence[int], size: int) -> list[MaskRow]:
    """The rows whose subset sum reaches ``size``."""
    return [row for row in rows if sums[row[3]] >= size]


_FIT_CACHE_SIZE = 4096
_GROUP_CACHE_SIZE = 1024
#: the most mask rows the fit and group memos hold together: a 20-NUMA
#: machine's fitting masks are up to 2^20 - 1 rows (8 MiB of references)
#: per entry, so a count of entries alone let them keep gigabytes
_CACHE_ROWS = 1 << 22


def _wrapped(sums: Sequence[int], per_node: Sequence[int]) -> Sequence[int]:
    """``sums`` (subset sums of ``per_node``, each amount a uint64) as Go's
    uint64 additions give them: modulo 2^64, which only changes anything when
    all nodes together pass 2^64."""
    if sum(per_node) <= _U64:
        return sums
    return [total & _U64 for total in sums]


def _fitting_masks(
    masks: list[MaskRow],
    numa_ids: tuple[int, ...],
    reqs: tuple[tuple[str, int], ...],
    allocs: Sequence[int],
) -> tuple[int, list[MaskRow]]:
    """The masks whose nodes' allocatable memory covers every requested
    resource (``allocs``: per node, per resource, in ``reqs`` order), and the
    narrowest width among them (``len(numa_ids)`` when none fits)."""
    n = len(reqs)
    fitting = masks
    for r, (_, size) in enumerate(reqs):
        per_node = allocs[r::n]
        sums = _wrapped(subset_sums(per_node), per_node)
        fitting = _at_least(fitting, sums, size)
    # quirk: the minimum counts masks that the group rules then drop (masks
    # come narrowest first)
    return (fitting[0][4] if fitting else len(numa_ids)), fitting


def _table(machine_state: Mapping[int, NUMANodeState], nid: int, name: str) -> MemoryTable | None:
    node = machine_state.get(nid)
    return None if node is None else node.memory_map.get(name)


def _no_table(nid: int, name: str) -> KubeletPanic:
    """Upstream quirk: ``calculateHints`` reads every requested resource's
    table on every NUMA node of every mask without checking that the node
    has one (``getDefaultMachineState`` makes a table only for memory and
    the hugepage sizes the machine reports). A Guaranteed pod asking for a
    hugepage size the node does not have (a pod bound to the node by name,
    past the scheduler) makes the kubelet dereference a nil table and
    panic, under every topology manager policy (``none`` reaches it through
    ``Allocate``'s default hint)."""
    return KubeletPanic(
        "[memorymanager] calculateHints",
        f"NUMA node {nid} has no {name} memory table",
    )


def _update_machine_state(machine_state: NUMANodeMap, affinity: Sequence[int], name: str, size: int) -> None:
    """``updateMachineState``: count the assignment on every node of the
    group, then take the memory from the lowest NUMA id first."""
    for nid in affinity:
        node = machine_state.get(nid)
        if node is None:
            continue
        node.number_of_assignments += 1
        node.cells = list(affinity)
        if size == 0:
            continue
        table = node.memory_map.get(name)
        if table is None or table.free <= 0:
            continue
        if table.free >= size:
            table.reserved += size
            table.free -= size
            size = 0
            continue
        size -= table.free
        table.reserved += table.free
        table.free = 0


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class StaticPolicy(Policy):
    """``staticPolicy``."""

    def __init__(
        self,
        numa_nodes: Sequence[NUMANode],
        system_reserved: SystemReservedMemory,
        affinity: Store,
        gates: FeatureGateReader,
    ) -> None:
        self.numa_nodes = tuple(numa_nodes)
        self.system_reserved = {nid: dict(res) for nid, res in system_reserved.items()}
        self.affinity = affinity
        self.gates = gates
        # the gates this policy reads (a gate set does not change)
        self._plr = gates.enabled(GATE_POD_LEVEL_RESOURCES)
        self._plrm = gates.enabled(GATE_POD_LEVEL_RESOURCE_MANAGERS)
        self._fix_qos = gates.enabled(GATE_POD_LEVEL_RESOURCES_FIX_KUBELET_QOS_CLASS)
        self.init_containers_reusable_memory: ReusableMemory = {}
        # NUMA ids -> every mask over them with its bits (the machine is fixed)
        # (memos of pure functions of their keys: copies of the policy share them)
        self._mask_cache: SharedMemo[tuple[int, ...], list[MaskRow]] = SharedMemo()
        self._fit_cache: SharedMemo[
            tuple[tuple[int, ...], tuple[tuple[str, int], ...], tuple[int, ...]],
            tuple[int, list[MaskRow]],
        ] = SharedMemo()
        # per fit key: (NUMA nodes in groups, nodes blocked) -> masks left
        self._group_cache: SharedMemo[
            tuple[tuple[int, ...], tuple[tuple[str, int], ...], tuple[int, ...]],
            dict[tuple[int, int], list[MaskRow]],
        ] = SharedMemo()
        # "rows": the rows both memos above hold (_CACHE_ROWS), shared as they are
        self._cache_rows: SharedMemo[str, int] = SharedMemo()

    def name(self) -> str:
        return POLICY_STATIC

    # -- start ------------------------------------------------------------------
    def start(self, state: MemoryManagerState) -> None:
        """``Start``: ``validateState`` (``KubeletStartupError``)."""
        try:
            self.validate_state(state)
        except MemoryManagerError as err:
            raise KubeletStartupError(str(err)) from None

    def validate_state(self, state: MemoryManagerState) -> None:
        machine_state = state.get_machine_state()
        assignments = state.get_memory_assignments()
        if not machine_state:
            if assignments:
                raise MemoryManagerError(ERR_EMPTY_STATE_WITH_ASSIGNMENTS)
            state.set_machine_state(self.get_default_machine_state())
            return
        expected = self.get_default_machine_state()
        # upstream walks Go maps; podnuma walks them sorted so the first error is stable
        for pod_uid in sorted(assignments):
            if self._plrm:
                pod_blocks = state.get_pod_memory_blocks(pod_uid)
                if pod_blocks:
                    self._update_expected_machine_state(expected, pod_blocks, pod_uid, "")
                    continue
            containers = assignments[pod_uid]
            for name in sorted(containers):
                self._update_expected_machine_state(expected, containers[name], pod_uid, name)
        if not are_machine_states_equal(machine_state, expected):
            raise MemoryManagerError(ERR_STATE_DIFFERS)

    @staticmethod
    def _update_expected_machine_state(
        expected: NUMANodeMap, blocks: Sequence[Block], pod_uid: str, container_name: str
    ) -> None:
        for block in blocks:
            size = block.size
            for nid in block.numa_affinity:
                node = expected.get(nid)
                if node is None:
                    raise MemoryManagerError(
                        f"[memorymanager] (pod: {pod_uid}, container: {container_name}) "
                        "the memory assignment uses the NUMA that does not exist"
                    )
                node.number_of_assignments += 1
                node.cells = list(block.numa_affinity)
                table = node.memory_map.get(block.type)
                if table is None:
                    raise MemoryManagerError(
                        f"[memorymanager] (pod: {pod_uid}, container: {container_name}) "
                        "the memory assignment uses memory resource that does not exist"
                    )
                if size == 0 or table.free <= 0:
                    continue
                if table.free >= size:
                    table.reserved += size
                    table.free -= size
                    size = 0
                    continue
                size -= table.free
                table.reserved += table.free
                table.free = 0

    def get_default_machine_state(self) -> NUMANodeMap:
        """``getDefaultMachineState``: per NUMA node, a table per hugepage size
        and one for memory (node memory - reserved - hugepage pools)."""
        out: NUMANodeMap = {}
        for node in self.numa_nodes:
            tables: dict[str, MemoryTable] = {}
            hugepages_total = 0
            for page_size, total in node.hugepages.items():
                name = hugepage_resource_name(page_size)
                reserved = self._system_reserved(node.id, name)
                # uint64 arithmetic: reserving more than the pool wraps (upstream quirk)
                allocatable = (total - reserved) & _U64
                tables[name] = MemoryTable(total, reserved, allocatable, 0, allocatable)
                hugepages_total += total
            reserved = self._system_reserved(node.id, RESOURCE_MEMORY)
            allocatable = (node.memory - reserved - hugepages_total) & _U64
            tables[RESOURCE_MEMORY] = MemoryTable(node.memory, reserved, allocatable, 0, allocatable)
            out[node.id] = NUMANodeState(0, tables, [node.id])
        return out

    def _system_reserved(self, nid: int, name: str) -> int:
        return self.system_reserved.get(nid, {}).get(name, 0)

    # -- helpers ------------------------------------------------------------------
    def _qos(self, pod: Pod) -> QOSClass:
        return compute_pod_qos(
            pod,
            pod_level_resources=self._plr,
            fix_kubelet_qos_class=self._fix_qos,
        )

    def _skips_pod_level(self, pod: Pod) -> bool:
        """A pod-level pod while either pod-level gate is off: no hints, no pinning."""
        return (
            not self._plrm
            or not self._plr
        ) and is_pod_level_resources_set(pod)

    def get_pod_reusable_memory(self, pod: Pod, mask: BitMask, name: str) -> int:
        """``getPodReusableMemory``: keyed by the exact NUMA mask."""
        return self.init_containers_reusable_memory.get(pod.uid, {}).get(mask, {}).get(name, 0)

    def _update_pod_reusable_memory(self, pod: Pod, container: Container, blocks: Sequence[Block]) -> None:
        for uid in [u for u in self.init_containers_reusable_memory if u != pod.uid]:
            del self.init_containers_reusable_memory[uid]
        if _is_regular_init_container(pod, container):
            per_mask = self.init_containers_reusable_memory.setdefault(pod.uid, {})
            for block in blocks:
                table = per_mask.setdefault(BitMask(block.numa_affinity), {})
                if block.size > table.get(block.type, 0):
                    table[block.type] = block.size
            return
        if pod.uid not in self.init_containers_reusable_memory:
            return  # nothing reusable to take from
        for block in blocks:
            mask = BitMask(block.numa_affinity)
            reusable = self.get_pod_reusable_memory(pod, mask, block.type)
            if reusable != 0:
                table = self.init_containers_reusable_memory[pod.uid][mask]
                table[block.type] = 0 if block.size >= reusable else reusable - block.size

    def _update_init_containers_memory_blocks(
        self, state: MemoryManagerState, pod: Pod, container: Container, blocks: Sequence[Block]
    ) -> None:
        """``updateInitContainersMemoryBlocks``: shrink the blocks of earlier
        regular init containers by what this container reused (down to 0)."""
        for block in blocks:
            size = block.size
            for init in pod.init_containers:
                if init.name == container.name or size == 0:
                    break
                if init.is_sidecar:
                    continue
                init_blocks = state.get_memory_blocks(pod.uid, init.name)
                if not init_blocks:
                    continue
                for i, init_block in enumerate(init_blocks):
                    if init_block.size == 0 or init_block.type != block.type:
                        continue
                    if not _affinities_equal(init_block.numa_affinity, block.numa_affinity):
                        continue
                    if init_block.size > size:
                        init_blocks[i] = init_block.with_size(init_block.size - size)
                        size = 0
                    else:
                        size -= init_block.size
                        init_blocks[i] = init_block.with_size(0)
                state.set_memory_blocks(pod.uid, init.name, init_blocks)

    # -- hints --------------------------------------------------------------------
    def _keep_rows(self, rows: int) -> bool:
        """Count ``rows`` more rows into the fit and group memos, first
        emptying both when they would pass their bounds (_FIT_CACHE_SIZE
        entries, _CACHE_ROWS rows); whether they were emptied."""
        kept = self._cache_rows.get("rows", 0)
        cleared = len(self._fit_cache) >= _FIT_CACHE_SIZE or kept + rows > _CACHE_ROWS
        if cleared:
            self._fit_cache.clear()
            self._group_cache.clear()
            kept = 0
        self._cache_rows["rows"] = kept + rows
        return cleared

    def calculate_hints(
        self, machine_state: Mapping[int, NUMANodeState], pod: Pod, requested: Mapping[str, int]
    ) -> dict[str, list[TopologyHint]]:
        """``calculateHints``; an empty map when no mask fits.

        Masks go in ``IterateBitMasks`` order. Which masks fit by allocatable
        memory (and so the narrowest such width, which decides the preferred
        flag) depends only on the request and the nodes' allocatable
        amounts, and is kept per such combination; per call only the group
        rules and the free memory are checked, for those masks. A NUMA id
        outside 0-63 panics the kubelet here (``check_mask_bits``)."""
        numa_ids = tuple(sorted(machine_state))
        masks = self._mask_cache.get(numa_ids)
        if masks is None:
            check_mask_bits("[memorymanager] calculateHints", numa_ids)  # (before any mask is kept)
            masks = self._mask_cache[numa_ids] = built_without_collector(
                lambda: _masks_over(numa_ids)
            )
        reqs = tuple(requested.items())
        free: list[int] = []
        allocs: list[int] = []
        for nid in numa_ids:
            tables = machine_state[nid].memory_map
            for name, _ in reqs:
                table = tables.get(name)
                if table is None:
                    raise _no_table(nid, name)
                free.append(table.free)
                allocs.append(table.allocatable)
        fit_key = (numa_ids, reqs, tuple(allocs))
        fit = self._fit_cache.get(fit_key)
        if fit is None:
            fit = _fitting_masks(masks, numa_ids, reqs, allocs)
            self._keep_rows(len(fit[1]))
            self._fit_cache[fit_key] = fit
        min_affinity_size, fitting = fit

        # The group rules: a multi-NUMA mask may not use a node that holds
        # assignments, unless that node's group is exactly the mask; a
        # single-NUMA mask may not use a node that belongs to a group.
        blocked = 0
        grouped: dict[int, list[int]] = {}
        in_group = 0
        for nid in numa_ids:
            node = machine_state[nid]
            if len(node.cells) > 1:
                in_group |= 1 << nid
            if node.number_of_assignments > 0:
                if len(node.cells) == 1:
                    blocked |= 1 << nid
                else:
                    grouped[nid] = sorted(node.cells)
        if in_group or blocked:
            # kept with the fitting masks: few (in_group, blocked) pairs occur
            by_groups = self._group_cache.get(fit_key)
            if by_groups is None or len(by_groups) >= _GROUP_CACHE_SIZE:
                by_groups = self._group_cache[fit_key] = {}
            found = by_groups.get((in_group, blocked))
            if found is None:
                # masks come by width: the single-NUMA ones first
                singles = bisect_right(list(map(_WIDTH, fitting)), 1)
                found = _without(fitting[:singles], in_group) + _without(
                    fitting[singles:], blocked
                )
                if self._keep_rows(len(found)):
                    by_groups = self._group_cache[fit_key] = {}
                by_groups[(in_group, blocked)] = found
            candidates = found
        else:
            candidates = fitting
        if grouped:
            candidates = [
                row
                for row in candidates
                if row[4] == 1
                or not any(nid in grouped and grouped[nid] != list(row[1]) for nid in row[1])
            ]
        # Free memory (plus what earlier init containers left for reuse).
        reusable = self.init_containers_reusable_memory.get(pod.uid, {})
        n = len(reqs)
        for r, (name, size) in enumerate(reqs):
            free_r = free[r::n]
            if reusable or sum(free_r) > _U64:
                # uint64 sums, the reusable memory added to the free one
                sums = subset_sums(free_r)
                candidates = [
                    row
                    for row in candidates
                    if (sums[row[3]] + reusable.get(row[0], {}).get(name, 0)) & _U64 >= size
                ]
            elif len(candidates) <= _FEW:
                # few masks left: their free memory summed directly
                candidates = free_reaches(candidates, free_r, size)
            else:
                candidates = _at_least(candidates, subset_sums(free_r), size)
        hints: dict[str, list[TopologyHint]] = {}
        if candidates:
            # preferred: the masks of the narrowest width (masks come by width)
            lst = hint_list(candidates, min_affinity_size)
            for name, _ in reqs:
                hints[name] = list(lst)
        return hints

    def get_topology_hints(
        self, state: MemoryManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None:
        """``GetTopologyHints``."""
        if self._qos(pod) != GUARANTEED:
            return None
        try:
            requested = get_container_requested_resources(pod, container, self.gates)
        except MemoryManagerError:
            return None
        if self._skips_pod_level(pod):
            return None
        blocks = state.get_memory_blocks(pod.uid, container.name)
        if blocks is not None:
            return _regenerate_hints(blocks, requested)
        # calculateHints only reads the machine state: no copy
        return _as_provider_hints(self.calculate_hints(state.machine_state_view(), pod, requested))

    def get_pod_topology_hints(self, state: MemoryManagerState, pod: Pod) -> TopologyHints | None:
        """``GetPodTopologyHints``."""
        if self._qos(pod) != GUARANTEED:
            return None
        try:
            requested = get_pod_requested_resources(pod, self.gates)
        except MemoryManagerError:
            return None
        if self._skips_pod_level(pod):
            return None
        if _pod_level(pod, self.gates):
            try:
                self.validate_pod_scope_resources(pod)
            except MemoryManagerError:
                return {name: [] for name in requested}
        if not requested:
            return None
        for ctr in pod.all_containers():
            blocks = state.get_memory_blocks(pod.uid, ctr.name)
            if blocks is not None:
                # the first container holding blocks decides, compared with
                # the pod's totals (upstream behaviour)
                return _regenerate_hints(blocks, requested)
        # calculateHints only reads the machine state: no copy
        return _as_provider_hints(self.calculate_hints(state.machine_state_view(), pod, requested))

    def validate_pod_scope_resources(self, pod: Pod) -> None:
        """``validatePodScopeResources`` (pod-level resources): the pod's
        budget must leave memory for its shared containers."""
        totals = get_pod_requested_resources(pod, self.gates)
        has_shared = False
        long_running: dict[str, int] = {}
        for ctr in pod.init_containers:
            reqs = get_container_requested_resources(pod, ctr, self.gates)
            if not ctr.is_sidecar:
                # an exclusive regular init container is not checked against
                # what the earlier sidecars leave
                if not reqs:
                    for name, total in totals.items():
                        if long_running.get(name, 0) >= total:
                            raise MemoryManagerError(
                                f"pod rejected, pod has shared init containers but no {name} available for them"
                            )
                continue
            if not reqs:
                has_shared = True
                continue
            for name, size in reqs.items():
                long_running[name] = (long_running.get(name, 0) + size) & _U64  # uint64
        for ctr in pod.containers:
            reqs = get_container_requested_resources(pod, ctr, self.gates)
            if not reqs:
                has_shared = True
                continue
            for name, size in reqs.items():
                long_running[name] = (long_running.get(name, 0) + size) & _U64  # uint64
        if has_shared:
            for name, total in totals.items():
                if long_running.get(name, 0) >= total:
                    raise MemoryManagerError(
                        f"pod rejected, sum of exclusive container {name} requests equals pod budget, "
                        "leaving no memory for shared containers"
                    )

    def _get_default_hint(
        self, machine_state: Mapping[int, NUMANodeState], pod: Pod, requested: Mapping[str, int]
    ) -> TopologyHint:
        hints = self.calculate_hints(machine_state, pod, requested)
        if not hints:
            raise MemoryManagerError(ERR_NO_DEFAULT_AFFINITY)
        return find_best_hint(hints.get(RESOURCE_MEMORY, []))

    def _extend_topology_manager_hint(
        self, machine_state: Mapping[int, NUMANodeState], pod: Pod, requested: Mapping[str, int], mask: BitMask
    ) -> TopologyHint:
        hints = self.calculate_hints(machine_state, pod, requested)
        wanted = mask.bits()
        filtered = [
            h
            for h in hints.get(RESOURCE_MEMORY, [])
            if h.numa_node_affinity is not None and is_hint_in_group(wanted, h.numa_node_affinity.bits())
        ]
        if not filtered:
            raise MemoryManagerError(ERR_NO_EXTENSION)
        return find_best_hint(filtered)

    # -- allocation --------------------------------------------------------------
    def _affinity_for(
        self,
        machine_state: Mapping[int, NUMANodeState],
        pod: Pod,
        requested: Mapping[str, int],
        hint: TopologyHint,
    ) -> BitMask:
        """The NUMA mask ``Allocate`` and ``AllocatePod`` pin to: the stored
        hint, the default hint when it has no affinity, extended until the
        request fits, refused when it mixes single- and multi-NUMA
        allocations. Raises ``MemoryManagerError``."""
        best = hint
        if best.numa_node_affinity is None:
            default = self._get_default_hint(machine_state, pod, requested)
            if not default.preferred and best.preferred:
                raise MemoryManagerError(ERR_DEFAULT_NOT_PREFERRED)
            best = default
        mask = best.numa_node_affinity
        if mask is None:  # no memory request at all (Go would dereference nil)
            raise MemoryManagerError(ERR_NO_DEFAULT_AFFINITY)
        if not _is_affinity_satisfy_request(machine_state, mask, requested):
            extended = self._extend_topology_manager_hint(machine_state, pod, requested, mask)
            if not extended.preferred and best.preferred:
                raise MemoryManagerError(ERR_EXTENDED_NOT_PREFERRED)
            best = extended
            assert best.numa_node_affinity is not None
            mask = best.numa_node_affinity
        if is_affinity_violating_numa_allocations(machine_state, mask):
            raise MemoryManagerError(ERR_VIOLATES_ALLOCATIONS)
        return mask

    def allocate(self, state: MemoryManagerState, pod: Pod, container: Container) -> None:
        """``Allocate`` (idempotent). Raises ``MemoryManagerError``."""
        if self._qos(pod) != GUARANTEED:
            return
        if self._skips_pod_level(pod):
            return
        requested = get_container_requested_resources(pod, container, self.gates)
        if not requested:
            return  # e.g. a shared container of a pod-level pod
        existing = state.get_memory_blocks(pod.uid, container.name)
        if existing is not None:
            # re-admission: kept as is, even if the request changed
            self._update_pod_reusable_memory(pod, container, existing)
            return

        hint = self.affinity.get_affinity(pod.uid, container.name)
        # the choice only reads the machine state; only the chosen nodes change
        mask = self._affinity_for(state.machine_state_view(), pod, requested, hint)

        bits = mask.bits()
        machine_state = state.machine_state_for_update(bits, requested)
        blocks: list[Block] = []
        for name, size in requested.items():
            blocks.append(Block(bits, name, size))
            reusable = self.get_pod_reusable_memory(pod, mask, name)
            size = 0 if reusable >= size else size - reusable
            _update_machine_state(machine_state, bits, name, size)
        self._update_pod_reusable_memory(pod, container, blocks)
        state.commit_machine_state(machine_state)
        state.set_memory_blocks(pod.uid, container.name, blocks)
        self._update_init_containers_memory_blocks(state, pod, container, blocks)

    def allocate_pod(self, state: MemoryManagerState, pod: Pod) -> None:
        """``AllocatePod`` (pod-level resource managers, pod scope).

        One reservation of the pod's ``spec.resources`` memory and hugepages
        on the NUMA node(s) of the pod's hint (extended when too small), the
        pod entry, then a block list for every container: a qualifying
        container (Guaranteed-equivalent) gets blocks of its own requests; a
        shared regular init container gets the budget minus the exclusive
        sidecars declared before it; every other container gets the pod
        shared pool (budget minus the exclusive sidecars and app
        containers). Only the pod blocks count in the machine state.

        Raises ``EmptyPodSharedPoolError`` (validation) or
        ``MemoryManagerError`` (no NUMA affinity fits: admission reports
        ``UnexpectedAdmissionError``); a failure leaves the state unchanged.
        """
        if self._qos(pod) != GUARANTEED:
            return
        if not _pod_level(pod, self.gates) or self._skips_pod_level(pod):
            # the topology manager only calls AllocatePod for these pods
            return
        try:
            totals = get_pod_requested_resources(pod, self.gates)
        except MemoryManagerError:
            return  # upstream logs the error and pins nothing
        try:
            self.validate_pod_scope_resources(pod)
        except MemoryManagerError as err:
            raise EmptyPodSharedPoolError(str(err)) from None

        containers = pod.all_containers()
        if not containers:
            return
        machine_state = state.get_machine_state()
        # pod scope stores the same hint for every container: read the first one's
        hint = self.affinity.get_affinity(pod.uid, containers[0].name)
        mask = self._affinity_for(machine_state, pod, totals, hint)
        bits = mask.bits()

        exclusive: dict[str, list[Block]] = {}
        sidecars: dict[str, int] = {}
        for ctr in pod.init_containers:
            reqs = get_container_requested_resources(pod, ctr, self.gates)
            if not reqs:
                if ctr.is_sidecar:
                    continue  # gets the pod shared pool below
                # a shared regular init container: the budget minus the
                # exclusive sidecars declared so far (uint64, as upstream)
                exclusive[ctr.name] = [
                    Block(bits, name, size)
                    for name, total in totals.items()
                    if (size := (total - sidecars.get(name, 0)) & _U64) > 0
                ]
                continue
            exclusive[ctr.name] = [Block(bits, name, size) for name, size in reqs.items() if size > 0]
            if ctr.is_sidecar:
                for name, size in reqs.items():
                    sidecars[name] = sidecars.get(name, 0) + size
        # exclusive regular init containers are not subtracted: their memory
        # is reused by the app containers
        pool = {name: (total - sidecars.get(name, 0)) & _U64 for name, total in totals.items()}
        for ctr in pod.containers:
            reqs = get_container_requested_resources(pod, ctr, self.gates)
            if not reqs:
                continue  # gets the pod shared pool below
            blocks: list[Block] = []
            for name, size in reqs.items():
                if size > 0:
                    blocks.append(Block(bits, name, size))
                    # a type missing from the budget wraps below zero (upstream quirk)
                    pool[name] = (pool.get(name, 0) - size) & _U64
            exclusive[ctr.name] = blocks
        shared = [Block(bits, name, pool[name]) for name in sorted(pool) if pool[name] > 0]

        state.set_pod_memory_blocks(pod.uid, [Block(bits, name, size) for name, size in totals.items()])
        for name, size in totals.items():
            _update_machine_state(machine_state, bits, name, size)
        for ctr in containers:
            state.set_memory_blocks(pod.uid, ctr.name, exclusive.get(ctr.name, shared))
        state.commit_machine_state(machine_state)

    def remove_container(self, state: MemoryManagerState, pod_uid: str, container_name: str) -> None:
        """``RemoveContainer`` (idempotent): free the container's blocks; a
        pod-level pod frees its reservation with its last container."""
        if self._plrm:
            pod_blocks = state.get_pod_memory_blocks(pod_uid)
            if pod_blocks is not None:
                state.delete(pod_uid, container_name)
                if not state.get_memory_assignments().get(pod_uid):
                    self._release_memory(state, pod_blocks)
                    state.delete_pod(pod_uid)
                return
        blocks = state.get_memory_blocks(pod_uid, container_name)
        if blocks is None:
            return
        state.delete(pod_uid, container_name)
        self._release_memory(state, blocks)

    @staticmethod
    def _release_memory(state: MemoryManagerState, blocks: Sequence[Block]) -> None:
        """``releaseMemory``: frees from the lowest NUMA id of each block's
        group first, whichever node the memory came from (upstream quirk)."""
        machine_state = state.machine_state_for_update(
            {nid for block in blocks for nid in block.numa_affinity},
            {block.type for block in blocks},
        )
        for block in blocks:
            released = block.size
            for nid in block.numa_affinity:
                node = machine_state.get(nid)
                if node is None:
                    continue
                node.number_of_assignments -= 1
                if node.number_of_assignments == 0:
                    node.cells = [nid]
                if released == 0:
                    continue
                table = node.memory_map.get(block.type)
                if table is None or table.reserved == 0:
                    continue
                if table.reserved < released:
                    released -= table.reserved
                    table.free += table.reserved
                    table.reserved = 0
                    continue
                table.free += released
                table.reserved -= released
                released = 0
        state.commit_machine_state(machine_state)

    def get_allocatable_memory(self, state: MemoryManagerState) -> list[Block]:
        """``GetAllocatableMemory`` (by NUMA id, then resource name)."""
        out: list[Block] = []
        machine_state = state.get_machine_state()
        for nid in sorted(machine_state):
            for name in sorted(machine_state[nid].memory_map):
                table = machine_state[nid].memory_map[name]
                if table.allocatable != 0:
                    out.append(Block((nid,), name, table.allocatable))
        return out


def are_machine_states_equal(ms1: Mapping[int, NUMANodeState], ms2: Mapping[int, NUMANodeState]) -> bool:
    """``areMachineStatesEqual``: totals, system reserved, allocatable,
    assignment counts and groups per node; free and reserved only as sums
    over the node's group."""
    if len(ms1) != len(ms2):
        return False
    for nid, node1 in ms1.items():
        node2 = ms2.get(nid)
        if node2 is None:
            return False
        if node1.number_of_assignments != node2.number_of_assignments:
            return False
        if not _groups_equal(node1.cells, node2.cells):
            return False
        if len(node1.memory_map) != len(node2.memory_map):
            return False
        for name, t1 in node1.memory_map.items():
            t2 = node2.memory_map.get(name)
            if t2 is None:
                return False
            if (t1.total, t1.system_reserved, t1.allocatable) != (t2.total, t2.system_reserved, t2.allocatable):
                return False
            free1 = reserved1 = free2 = reserved2 = 0
            for cid in node1.cells:
                c1 = _table(ms1, cid, name)
                c2 = _table(ms2, cid, name)
                if c1 is None or c2 is None:  # Go would dereference nil here
                    return False
                free1 += c1.free
                reserved1 += c1.reserved
                free2 += c2.free
                reserved2 += c2.reserved
            if free1 != free2 or reserved1 != reserved2:
                return False
    return True


def _regenerate_hints(blocks: Sequence[Block], requested: Mapping[str, int]) -> TopologyHints | None:
    """``regenerateHints``: the existing blocks as preferred hints when their
    types and sizes match the request exactly, else ``None``."""
    hints: TopologyHints = {name: [] for name in requested}
    if len(blocks) != len(requested):
        return None
    for block in blocks:
        if block.type not in requested or block.size != requested[block.type]:
            return None
        try:
            mask = BitMask(block.numa_affinity)
        except ValueError:
            return None
        existing = hints.get(block.type)
        hints[block.type] = [*(existing or []), TopologyHint(mask, True)]
    return hints


def _as_provider_hints(hints: Mapping[str, list[TopologyHint]]) -> TopologyHints:
    out: TopologyHints = {}
    for name, items in hints.items():
        out[name] = items
    return out


def _is_regular_init_container(pod: Pod, container: Container) -> bool:
    for init in pod.init_containers:
        if init.name == container.name:
            return not init.is_sidecar
    return False


def _affinities_equal(a: Sequence[int], b: Sequence[int]) -> bool:
    try:
        return BitMask(a) == BitMask(b)
    except ValueError:
        return False


def new_static_policy(
    numa_nodes: Sequence[NUMANode],
    system_reserved: SystemReservedMemory,
    affinity: Store,
    gates: FeatureGateReader,
) -> StaticPolicy:
    """``NewPolicyStatic``: the reserved memory (type ``memory``) summed over
    the NUMA nodes must be positive (``KubeletStartupError``)."""
    total = sum(res.get(RESOURCE_MEMORY, 0) for res in system_reserved.values())
    if total <= 0:
        raise KubeletStartupError(ERR_NO_SYSTEM_RESERVED)
    return StaticPolicy(numa_nodes, system_reserved, affinity, gates)

