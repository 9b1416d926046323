"""The memory manager: policy + state, without I/O.

Mirrors ``pkg/kubelet/cm/memorymanager/memory_manager.go`` (kubelet v1.37):
``NewManager`` (policy choice; for ``Static`` ``getSystemReservedMemory`` =
``validateReservedMemory`` + ``convertReserved``), ``Start`` (state restored
from the checkpoint with its policy check, then the policy's ``Start``),
``Allocate`` / ``GetTopologyHints`` / ``GetPodTopologyHints`` (each
garbage-collects stale state first), ``AddContainer``'s release of finished
init containers, ``RemoveContainer``, ``removeStaleState``,
``GetMemoryNUMANodes``, ``AllocatePod`` and the PodResources readers
``GetMemory`` / ``GetPodMemory`` (KEP-5526). The checkpoint file itself is ``checkpoint.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final

from podnuma.api.featuregates import GATE_POD_LEVEL_RESOURCE_MANAGERS, FeatureGateReader
from podnuma.api.kubeletconfig import KubeletConfig, ReservedMemory, node_allocatable_reservation
from podnuma.api.pod import Container, Pod
from podnuma.api.qos import is_container_equivalent_qos_guaranteed
from podnuma.api.quantity import Quantity
from podnuma.api.resources import (
    hugepage_resource_name,
    is_hugepage_resource,
    is_pod_level_resources_set,
)
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.active import ActiveContainers, StaleWatch
from podnuma.cm.checkpoint import DEFAULT_STATE_DIR
from podnuma.cm.memorymanager.checkpoint import (
    MemoryCheckpointData,
    check_policy,
)
from podnuma.cm.memorymanager.policy import Policy, TopologyHints
from podnuma.cm.memorymanager.policy_none import POLICY_NONE, NonePolicy
from podnuma.cm.memorymanager.policy_static import (
    POLICY_STATIC,
    new_static_policy,
)
from podnuma.cm.memorymanager.state import RESOURCE_MEMORY, Block, MemoryManagerState, NUMANodeMap
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.cm.topologymanager.manager import HintProvider
from podnuma.cm.topologymanager.store import Store
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import Machine

__all__ = [
    "ActiveContainers",
    "MemoryManager",
    "POLICY_BEST_EFFORT",
    "convert_reserved",
    "get_system_reserved_memory",
    "memory_capacity",
    "new_memory_manager",
    "validate_reserved_memory",
]

POLICY_BEST_EFFORT: Final = "BestEffort"
_U64: Final = (1 << 64) - 1


# ---------------------------------------------------------------------------
# reserved memory
# ---------------------------------------------------------------------------


def _total_reserved_by_type(numa_ids: AbstractSet[int], reserved: Sequence[ReservedMemory]) -> dict[str, Quantity]:
    """``getTotalMemoryTypeReserved``."""
    totals: dict[str, Quantity] = {}
    for reservation in reserved:
        if reservation.numa_node not in numa_ids:
            raise KubeletStartupError(
                f"the reserved memory configuration references a NUMA node {reservation.numa_node} "
                "that does not exist on this machine"
            )
        for name, qty in reservation.limits.items():
            # q.Add(total): the new reservation is the receiver
            totals[name] = qty + totals[name] if name in totals else qty
    return totals


def validate_reserved_memory(
    numa_ids: AbstractSet[int],
    node_allocatable_reservation: Mapping[str, Quantity],
    reserved: Sequence[ReservedMemory],
) -> None:
    """``validateReservedMemory``: per memory type, the ``reservedMemory``
    sum must equal the node allocatable reservation (kube + system reserved
    + hard eviction), compared as quantities. Raises ``KubeletStartupError``.
    """
    totals = _total_reserved_by_type(numa_ids, reserved)
    names = set(totals)
    names.update(n for n in node_allocatable_reservation if n == RESOURCE_MEMORY or is_hugepage_resource(n))
    # upstream walks a Go map; podnuma checks the types by name so the error is stable
    for name in sorted(names):
        allocatable = Quantity.zero()
        if name in node_allocatable_reservation:
            allocatable = allocatable + node_allocatable_reservation[name]
        total = Quantity.zero()
        if name in totals:
            total = total + totals[name]
        if allocatable != total:
            raise KubeletStartupError(
                f'the total amount "{total}" of type "{name}" is not equal to the value '
                f'"{allocatable}" determined by Node Allocatable feature'
            )


def convert_reserved(numa_ids: Sequence[int], reserved: Sequence[ReservedMemory]) -> dict[int, dict[str, int]]:
    """``convertReserved``: bytes per NUMA node and type (a later entry for
    the same node and type wins)."""
    out: dict[int, dict[str, int]] = {nid: {} for nid in numa_ids}
    for reservation in reserved:
        for name, qty in reservation.limits.items():
            # AsInt64 fails for an inf.Dec form (e.g. 1.5Gi) or a fractional
            # scale (e.g. 1000m), whatever the value
            value, ok = qty.as_int64()
            if not ok:
                raise KubeletStartupError("could not covert a variable of type Quantity to int64")
            out.setdefault(reservation.numa_node, {})[name] = value & _U64
    return out


def get_system_reserved_memory(
    machine: Machine,
    node_allocatable_reservation: Mapping[str, Quantity],
    reserved: Sequence[ReservedMemory],
) -> dict[int, dict[str, int]]:
    """``getSystemReservedMemory``."""
    ids = machine.numa_ids()
    validate_reserved_memory(set(ids), node_allocatable_reservation, reserved)
    return convert_reserved(ids, reserved)


def memory_capacity(machine: Machine) -> dict[str, Quantity]:
    """The memory part of the node capacity (memory and hugepage pools)."""
    cap: dict[str, Quantity] = {RESOURCE_MEMORY: Quantity.from_int(machine.memory_capacity(), binary=True)}
    for size, total in sorted(machine.hugepage_capacity().items()):
        cap[hugepage_resource_name(size)] = Quantity.from_int(total, binary=True)
    return cap


# ---------------------------------------------------------------------------
# the manager
# ---------------------------------------------------------------------------


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class MemoryManager(HintProvider):
    """``memorymanager.manager`` without the I/O; a topology-manager hint
    provider.

    ``active_pods`` plays ``ActivePodsFunc`` (sources ready): when given,
    stale state is collected before every allocation and hint request.
    """

    def __init__(
        self,
        policy: Policy,
        state: MemoryManagerState,
        gates: FeatureGateReader,
        *,
        active_pods: Callable[[], ActiveContainers] | None = None,
    ) -> None:
        self.policy = policy
        self.state = state
        self.gates = gates
        self.active_pods = active_pods
        self.allocatable_memory: list[Block] = []
        self._stale_watch = StaleWatch()
        self._plrm: bool | None = None  # the PodLevelResourceManagers gate, once read

    @property
    def provider_name(self) -> str:
        return "memory"

    @property
    def policy_name(self) -> str:
        return self.policy.name()

    def start(self) -> None:
        """The policy's ``Start`` (``KubeletStartupError``), then the
        allocatable memory."""
        self.policy.start(self.state)
        self.allocatable_memory = self.policy.get_allocatable_memory(self.state)

    # -- hint provider ------------------------------------------------------------
    def get_topology_hints(self, pod: Pod, container: Container) -> TopologyHints | None:
        self.remove_stale_state()
        return self.policy.get_topology_hints(self.state, pod, container)

    def get_pod_topology_hints(self, pod: Pod) -> TopologyHints | None:
        self.remove_stale_state()
        return self.policy.get_pod_topology_hints(self.state, pod)

    def allocate(self, pod: Pod, container: Container) -> None:
        """``Allocate``: raises ``MemoryManagerError`` (no admission reason:
        the pod fails with ``UnexpectedAdmissionError``)."""
        self.remove_stale_state()
        before = self.state.version
        try:
            self.policy.allocate(self.state, pod, container)
        finally:
            self._allocated(pod, before)

    def allocate_pod(self, pod: Pod) -> None:
        """``AllocatePod`` (pod-level resource managers, KEP-5526): stale
        state first, then the policy's pod-level allocation. Raises
        ``EmptyPodSharedPoolError`` or ``MemoryManagerError``."""
        self.remove_stale_state()
        before = self.state.version
        try:
            self.policy.allocate_pod(self.state, pod)
        finally:
            self._allocated(pod, before)

    # -- container lifecycle ------------------------------------------------------
    def add_container(self, pod: Pod, container: Container) -> None:
        """``AddContainer``: a starting container releases the regular init
        containers declared before it (sidecars keep their memory)."""
        for init in pod.init_containers:
            if init.name == container.name:
                break
            if init.is_sidecar:
                continue
            self.policy.remove_container(self.state, pod.uid, init.name)

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """``RemoveContainer`` by (pod, container) reference."""
        self.policy.remove_container(self.state, pod_uid, container_name)

    def remove_stale_state(self, active: ActiveContainers | None = None) -> None:
        """``removeStaleState``: forget every container that is not active."""
        state = self.state
        if not state.holds_containers():
            return  # nothing to walk (policy None, or no container assigned yet)
        if active is None:
            if self.active_pods is None:
                return
            active = self.active_pods()
        watch = self._stale_watch
        if watch.quiet(active, state, state.version):
            return  # nothing changed since the last walk left the state clean
        suspects = watch.suspects(active, state, state.version)
        stale = state.stale_containers(active, suspects)
        for pod_uid, name in sorted(stale):
            self.policy.remove_container(state, pod_uid, name)
        watch.clean(active, state, state.version)

    def _allocated(self, pod: Pod, before: int) -> None:
        """After the policy allocated for ``pod`` (state version ``before``):
        the state is still free of stale entries if the pod's are active."""
        state = self.state
        if state.version == before:
            return
        active = None if self.active_pods is None else self.active_pods()
        if active is not None and not state.stale_containers(active, (pod.uid,)):
            self._stale_watch.still_clean(before, state.version)
        else:
            self._stale_watch.forget()

    # -- readers ------------------------------------------------------------------
    def get_memory_blocks(self, pod_uid: str, container_name: str) -> list[Block]:
        """``GetMemory``: the container's blocks (empty when none)."""
        return self.state.get_memory_blocks(pod_uid, container_name) or []

    def get_pod_memory_blocks(self, pod_uid: str) -> list[Block]:
        """The pod-level reservation (empty when the pod has none)."""
        return self.state.get_pod_memory_blocks(pod_uid) or []

    def _pod_level(self, pod: Pod) -> bool:
        gate = self._plrm
        if gate is None:
            gate = self._plrm = self.gates.enabled(GATE_POD_LEVEL_RESOURCE_MANAGERS)
        return gate and is_pod_level_resources_set(pod)

    def podresources_container_memory(self, pod: Pod, container: Container) -> list[Block]:
        """PodResources ``GetMemory``: only memory the container holds alone.
        A pod-level pod's container that does not qualify for exclusive
        memory (it runs in the pod's shared pool) reports none, so the pod's
        memory is not counted twice."""
        if self._pod_level(pod) and not is_container_equivalent_qos_guaranteed(container):
            return []
        return self.get_memory_blocks(pod.uid, container.name)

    def podresources_pod_memory(self, pod: Pod) -> list[Block]:
        """PodResources ``GetPodMemory``: the pod-level reservation, reported
        only for pod-level pods with ``PodLevelResourceManagers`` on."""
        if not self._pod_level(pod):
            return []
        return self.get_pod_memory_blocks(pod.uid)

    def get_memory_numa_nodes(self, pod: Pod, container: Container) -> set[int] | None:
        """``GetMemoryNUMANodes``: the NUMA nodes of the container's blocks,
        ``None`` when it has none."""
        nodes: set[int] = set()
        for block in self.state.get_memory_blocks(pod.uid, container.name) or []:
            nodes.update(block.numa_affinity)
        return nodes or None

    def get_allocatable_memory(self) -> list[Block]:
        return list(self.allocatable_memory)

    def machine_state(self) -> NUMANodeMap:
        return self.state.get_machine_state()

    def checkpoint_data(self) -> MemoryCheckpointData:
        """What the kubelet's ``storeState`` writes (pod entries only with
        the PodLevelResourceManagers gate)."""
        pod_entries = (
            self.state.get_pod_memory_assignments()
            if self.gates.enabled(GATE_POD_LEVEL_RESOURCE_MANAGERS)
            else {}
        )
        return MemoryCheckpointData(
            self.policy.name(),
            self.state.get_machine_state(),
            self.state.get_memory_assignments(),
            pod_entries,
        )


class _NoAffinity:
    """``topologymanager.NewFakeManager``: no hint for anyone."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return EMPTY_HINT


def new_memory_manager(
    config: KubeletConfig,
    machine: Machine,
    affinity: Store | None,
    gates: FeatureGateReader,
    *,
    checkpoint: MemoryCheckpointData | None = None,
    active_pods: Callable[[], ActiveContainers] | None = None,
    reservation: Mapping[str, Quantity] | None = None,
    state_dir: str = DEFAULT_STATE_DIR,
    start: bool = True,
) -> MemoryManager:
    """``NewManager`` followed (by default) by ``Start``.

    ``reservation`` is the node allocatable reservation (kube + system
    reserved + hard eviction); by default it is computed from ``config`` and
    the machine's memory capacity. ``checkpoint`` is the restored state
    (``None``: no file, a fresh state). Raises ``KubeletStartupError`` with
    the kubelet's message.
    """
    if affinity is None:
        affinity = _NoAffinity()
    name = config.memory_manager_policy
    policy: Policy
    if name == POLICY_NONE:
        policy = NonePolicy()
    elif name == POLICY_STATIC:
        if reservation is None:
            reservation = node_allocatable_reservation(config, memory_capacity(machine))
        system_reserved = get_system_reserved_memory(machine, reservation, config.reserved_memory)
        policy = new_static_policy(machine.numa_nodes, system_reserved, affinity, gates)
    elif name == POLICY_BEST_EFFORT:
        raise KubeletStartupError(f'policy "{POLICY_BEST_EFFORT}" is not available for platform "linux"')
    else:
        raise KubeletStartupError(f'unknown policy: "{name}"')

    if checkpoint is not None:
        check_policy(checkpoint, policy.name(), state_dir)
        state = MemoryManagerState(
            checkpoint.machine_state,
            checkpoint.entries,
            checkpoint.pod_entries if gates.enabled(GATE_POD_LEVEL_RESOURCE_MANAGERS) else {},
        )
    else:
        state = MemoryManagerState()
    manager = MemoryManager(policy, state, gates, active_pods=active_pods)
    if start:
        manager.start()
    return manager

