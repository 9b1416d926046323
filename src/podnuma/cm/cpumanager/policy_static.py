"""The ``static`` CPU manager policy (container-level behaviour).

Mirrors ``pkg/kubelet/cm/cpumanager/policy_static.go`` (v1.37): reserved CPU
selection (``NewStaticPolicy``), state validation (``validateState``),
exclusive allocation with NUMA / socket alignment from the topology
manager's hint (``Allocate``, ``allocateCPUs``), full-pcpus-only
enforcement (``enforceSMTAlignment``), init-container CPU reuse
(``updateCPUsToReuse``), release (``RemoveContainer``) and topology hints
(``GetTopologyHints``, ``GetPodTopologyHints``,
``generateCPUTopologyHints``).

Pod-level resources (KEP-5526, gate ``PodLevelResourceManagers``) hook in at
the seams marked "pod-level": the gate checks that leave such pods alone,
``pod_guaranteed_cpus``' pod budget, the pod entry in ``validateState`` and
``RemoveContainer``, the empty-shared-pool check
(``validatePodScopeResources``) and ``AllocatePod`` (``allocatePodForAdd``):
one CPU "bubble" per pod, partitioned among its containers. As in v1.37.2,
``AllocatePod`` does not look at what the state already holds for the pod: a
re-admitted pod-level pod gets a new bubble (the old CPUs stay out of the
shared pool), and a partition that fails leaves the bubble reserved with no
container entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from podnuma.api.featuregates import (
    GATE_POD_LEVEL_RESOURCE_MANAGERS,
    GATE_POD_LEVEL_RESOURCES,
    FeatureGateReader,
)
from podnuma.api.pod import Container, Pod
from podnuma.api.qos import (
    GUARANTEED,
    QOSClass,
    compute_pod_qos,
    is_container_equivalent_qos_guaranteed,
)
from podnuma.api.quantity import Quantity, wrap_int64
from podnuma.api.resources import is_pod_level_resources_set
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.admission import EmptyPodSharedPoolError
from podnuma.cm.cpumanager.cpu_assignment import (
    CPUAllocationError,
    CPUSortingStrategy,
    take_by_topology_numa_distributed,
    take_by_topology_numa_packed,
)
from podnuma.cm.cpumanager.cpu_hint_table import MaskTable, new_mask_table
from podnuma.cm.cpumanager.policy import (
    RESOURCE_CPU,
    CPUManagerAdmissionError,
    Policy,
    SMTAlignmentError,
    TopologyHints,
    UnexpectedAdmissionError,
)
from podnuma.cm.cpumanager.policy_options import (
    StaticPolicyOptions,
    go_quote,
    new_static_policy_options,
    validate_static_policy_options,
)
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.mask_tables import check_mask_bits
from podnuma.cm.topologymanager.store import Store
from podnuma.errors import KubeletStartupError
from podnuma.machine.cpuset import EMPTY, CPUSet
from podnuma.machine.topology import CPUTopology, TopologyError

__all__ = [
    "POLICY_STATIC",
    "EmptyPodSharedPoolError",
    "StaticPolicy",
    "new_static_policy",
    "CPUManagerAdmissionError",
    "SMTAlignmentError",
    "UnexpectedAdmissionError",
]

POLICY_STATIC: Final = "static"


_ZERO: Final = Quantity.from_int(0)

def _is_integral_cpu_amount(q: Quantity) -> bool:
    """``isIntegralCPUAmount``: ``Value()*1000`` is an int64 product, which
    wraps for extreme quantities (reproduced)."""
    return wrap_int64(q.value() * 1000) == q.milli_value()


def _whole_cpus_requested(container: Container) -> int:
    """The container's CPU request when it is a whole number of CPUs, else
    0 (kept with the immutable container)."""
    memo = container.memo()
    found: int | None = memo.get("whole-cpus-requested")
    if found is None:
        cpu = container.requests.get(RESOURCE_CPU, _ZERO)
        found = memo["whole-cpus-requested"] = cpu.value() if _is_integral_cpu_amount(cpu) else 0
    return found


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class StaticPolicy(Policy):
    """``staticPolicy``.

    ``options`` are already parsed (see :func:`new_static_policy` for the
    kubelet's parse-and-validate path). Raises ``KubeletStartupError`` when
    the reserved CPUs cannot be picked or built.
    """

    def __init__(
        self,
        topology: CPUTopology,
        num_reserved_cpus: int,
        reserved_cpus: CPUSet,
        affinity: Store,
        options: StaticPolicyOptions,
        gates: FeatureGateReader,
    ) -> None:
        self.topology = topology
        self.affinity = affinity
        self.options = options
        self.gates = gates
        # the gates this policy reads (a gate set does not change)
        self._plr = gates.enabled(GATE_POD_LEVEL_RESOURCES)
        self._plrm = gates.enabled(GATE_POD_LEVEL_RESOURCE_MANAGERS)
        # computed once; the CPU manager cannot handle topology changes anyway
        self.cpu_group_size = topology.cpus_per_core()
        self._mask_table: MaskTable | None = None
        # pod UID -> CPUs later containers of that pod may take over
        self.cpus_to_reuse: dict[str, CPUSet] = {}

        all_cpus = topology.cpus()
        if reserved_cpus.size() > 0:
            reserved = reserved_cpus
        else:
            # picked with the policy's own picker, so the options apply
            try:
                reserved = self.take_by_topology(all_cpus, num_reserved_cpus)
            except CPUAllocationError:
                reserved = EMPTY  # upstream ignores this error; the size check catches it
        if reserved.size() != num_reserved_cpus:
            raise KubeletStartupError(
                "[cpumanager] unable to reserve the required amount of CPUs "
                f"(size of {reserved} did not equal {num_reserved_cpus})"
            )
        physical = 0
        for cpu in reserved:
            try:
                core = topology.cpu_core_id(cpu)
            except TopologyError as exc:
                raise KubeletStartupError(
                    f"[cpumanager] unable to build the reserved physical CPUs from the reserved set: {exc}"
                ) from None
            physical |= topology.core_masks.get(core, 0)
        self.reserved_cpus = reserved
        # the reserved CPUs plus their core siblings
        self.reserved_physical_cpus = CPUSet.from_mask(physical)

    # -- Policy ------------------------------------------------------------
    def name(self) -> str:
        return POLICY_STATIC

    def start(self, state: CPUManagerState) -> None:
        """``Start``: ``validateState``; raises ``KubeletStartupError``."""
        self._validate_state(state)

    def _validate_state(self, state: CPUManagerState) -> None:
        assignments = state.assignments
        default = state.get_default_cpuset()
        all_cpus = self.topology.cpus()
        if self.options.strict_cpu_reservation:
            all_cpus = all_cpus - self.reserved_cpus

        if default.is_empty():
            if assignments:
                raise KubeletStartupError("default cpuset cannot be empty")
            state.set_default_cpuset(all_cpus)  # first start: initialise
            return

        # 1. reserved CPUs vs the shared pool
        if self.options.strict_cpu_reservation:
            overlap = self.reserved_cpus & default
            if not overlap.is_empty():
                raise KubeletStartupError(
                    f"some of strictly reserved cpus: {go_quote(str(overlap))} are present in "
                    f"defaultCpuSet: {go_quote(str(default))}"
                )
        elif (self.reserved_cpus & default) != self.reserved_cpus:
            raise KubeletStartupError(
                f"not all reserved cpus: {go_quote(str(self.reserved_cpus))} are present in "
                f"defaultCpuSet: {go_quote(str(default))}"
            )

        # 2. no exclusive CPU may be in the shared pool
        for pod_uid, containers in assignments.items():
            for name, cset in containers.items():
                if not (default & cset).is_empty():
                    raise KubeletStartupError(
                        f"pod: {pod_uid}, container: {name} cpuset: {go_quote(str(cset))} "
                        f"overlaps with default cpuset {go_quote(str(default))}"
                    )

        # 3. the state must account for exactly the CPUs of the machine
        known = default.mask
        for containers in assignments.values():
            for cset in containers.values():
                known |= cset.mask
        if self._plrm:  # pod-level
            for cset in state.pod_assignments.values():
                known |= cset.mask
        if known != all_cpus.mask:
            raise KubeletStartupError(
                f"current set of available CPUs {go_quote(str(all_cpus))} doesn't match with "
                f"CPUs in state {go_quote(str(CPUSet.from_mask(known)))}"
            )

    def get_allocatable_cpus(self, state: CPUManagerState) -> CPUSet:
        """All CPUs minus the reserved ones."""
        return self.topology.cpus() - self.reserved_cpus

    def get_available_cpus(self, state: CPUManagerState) -> CPUSet:
        """The shared pool minus the reserved CPUs."""
        return state.get_default_cpuset() - self.reserved_cpus

    def get_available_physical_cpus(self, state: CPUManagerState) -> CPUSet:
        return state.get_default_cpuset() - self.reserved_physical_cpus

    # -- sizing --------------------------------------------------------------
    def _pod_qos(self, pod: Pod) -> QOSClass:
        return compute_pod_qos(pod, pod_level_resources=self._plr)

    def _pod_level_unmanaged(self, pod: Pod) -> bool:
        """A pod-level pod the CPU manager must leave alone (gates off)."""
        return (
            not self._plrm
            or not self._plr
        ) and is_pod_level_resources_set(pod)

    def _guaranteed_cpus(self, pod: Pod, container: Container, qos: QOSClass) -> int:
        if qos != GUARANTEED:
            return 0
        if (
            self._plrm
            and is_pod_level_resources_set(pod)
            and not is_container_equivalent_qos_guaranteed(container)
        ):  # pod-level: only request==limit containers get exclusive CPUs
            return 0
        return _whole_cpus_requested(container)

    def guaranteed_cpus(self, pod: Pod, container: Container) -> int:
        """``guaranteedCPUs``: exclusive CPUs the container gets (0 = shared)."""
        return self._guaranteed_cpus(pod, container, self._pod_qos(pod))

    def pod_guaranteed_cpus(self, pod: Pod) -> int:
        """``podGuaranteedCPUs``: the pod's exclusive CPU need, with init
        containers' CPUs reused and sidecars running alongside."""
        qos = self._pod_qos(pod)
        if self._plrm and is_pod_level_resources_set(pod):
            # pod-level: the pod budget, when integral
            if qos != GUARANTEED or pod.resources is None:
                return 0
            budget = pod.resources.requests.get(RESOURCE_CPU)
            if budget is not None and _is_integral_cpu_amount(budget):
                return budget.value()
            return 0

        by_init = 0
        by_sidecars = 0
        for c in pod.init_containers:
            if RESOURCE_CPU not in c.requests:
                continue
            n = self._guaranteed_cpus(pod, c, qos)
            if c.kind == "sidecar":
                by_sidecars += n
            elif by_sidecars + n > by_init:
                by_init = by_sidecars + n
        by_apps = 0
        for c in pod.containers:
            if RESOURCE_CPU not in c.requests:
                continue
            by_apps += self._guaranteed_cpus(pod, c, qos)
        return max(by_init, by_apps + by_sidecars)

    # -- picking ---------------------------------------------------------------
    def take_by_topology(self, available: CPUSet, num_cpus: int) -> CPUSet:
        """``takeByTopology``: the picker the options select. Raises
        ``CPUAllocationError``."""
        strategy = (
            CPUSortingStrategy.SPREAD
            if self.options.distribute_cpus_across_cores
            else CPUSortingStrategy.PACKED
        )
        if self.options.distribute_cpus_across_numa:
            group = self.cpu_group_size if self.options.full_physical_cpus_only else 1
            # v1.37 (kubernetes#139778) hands align-by-socket to the distributed picker
            return take_by_topology_numa_distributed(
                self.topology, available, num_cpus, group, strategy, self.options.align_by_socket
            )
        return take_by_topology_numa_packed(
            self.topology, available, num_cpus, strategy, self.options.prefer_align_by_uncore_cache
        )

    def _aligned_cpus(self, affinity: BitMask, allocatable: CPUSet) -> CPUSet:
        """``getAlignedCPUs``: allocatable CPUs of the hint's NUMA nodes, or of
        their sockets with align-by-socket."""
        details = self.topology.details
        bits = affinity.bits()
        if self.options.align_by_socket:
            sockets = details.sockets_in_numa_nodes(*bits)
            return allocatable & details.cpus_in_sockets(*sockets.list())
        return allocatable & details.cpus_in_numa_nodes(*bits)

    def allocate_cpus(
        self,
        state: CPUManagerState,
        num_cpus: int,
        numa_affinity: BitMask | None,
        reusable: CPUSet,
    ) -> CPUSet:
        """``allocateCPUs``: aligned CPUs first, the rest from anywhere; the
        shared pool shrinks only on success. Raises ``CPUAllocationError``."""
        allocatable = self.get_available_cpus(state) | reusable
        if numa_affinity is None:
            result = self.take_by_topology(allocatable, num_cpus)
        else:
            aligned = self._aligned_cpus(numa_affinity, allocatable)
            result = self.take_by_topology(aligned, min(num_cpus, aligned.size()))
            result = result | self.take_by_topology(allocatable - result, num_cpus - result.size())
        state.set_default_cpuset(state.get_default_cpuset() - result)
        return result

    def _enforce_smt_alignment(self, state: CPUManagerState, num_cpus: int) -> None:
        if not self.options.full_physical_cpus_only:
            return
        if num_cpus % self.cpu_group_size != 0:
            raise SMTAlignmentError(num_cpus, self.cpu_group_size)
        # siblings of reserved CPUs are off limits too, so that any request
        # that is a multiple of the SMT level gets whole cores
        available_physical = self.get_available_physical_cpus(state).size()
        if num_cpus > available_physical:
            raise SMTAlignmentError(num_cpus, self.cpu_group_size, available_physical, True)

    def _update_cpus_to_reuse(self, pod: Pod, container: Container, cset: CPUSet) -> None:
        """``updateCPUsToReuse``: a regular init container's CPUs become
        reusable by the pod's later containers; any other container's CPUs
        (sidecars included) are taken out of the reusable set."""
        reuse = self.cpus_to_reuse
        uid = pod.uid
        # only this pod's entry survives (every path below writes it again)
        current = reuse.get(uid, EMPTY)
        reuse.clear()
        for init in pod.init_containers:
            if init.name == container.name:
                if init.kind == "sidecar":
                    break
                reuse[uid] = current | cset
                return
        # (nothing to take out of an empty set)
        reuse[uid] = current - cset if current else EMPTY

    def allocate(self, state: CPUManagerState, pod: Pod, container: Container) -> None:
        """``Allocate``. Raises ``SMTAlignmentError`` or
        ``UnexpectedAdmissionError`` (state unchanged on failure)."""
        num_cpus = self.guaranteed_cpus(pod, container)
        if num_cpus == 0:
            return  # shared pool
        if self._pod_level_unmanaged(pod):
            return

        existing = state.get_cpu_set(pod.uid, container.name)
        if existing is not None:
            # re-admission keeps what the container has, before (and without)
            # the SMT check (v1.37, kubernetes#129079)
            self._update_cpus_to_reuse(pod, container, existing)
            return
        self._enforce_smt_alignment(state, num_cpus)

        hint = self.affinity.get_affinity(pod.uid, container.name)
        try:
            cpus = self.allocate_cpus(
                state, num_cpus, hint.numa_node_affinity, self.cpus_to_reuse.get(pod.uid, EMPTY)
            )
        except CPUAllocationError as exc:
            raise UnexpectedAdmissionError(str(exc)) from None
        state.set_cpu_set(pod.uid, container.name, cpus)
        self._update_cpus_to_reuse(pod, container, cpus)

    # -- pod-level (KEP-5526) ----------------------------------------------------
    def _pod_level_managed(self, pod: Pod) -> bool:
        return self._plrm and is_pod_level_resources_set(pod)

    def validate_pod_scope_resources(self, pod: Pod) -> str | None:
        """``validatePodScopeResources``: the error text when the pod's
        exclusive containers leave its shared containers no CPU, else ``None``.

        Only long-running containers (sidecars, app containers) consume the
        budget; a shared regular init container needs the sidecars declared
        before it to leave some CPU. An exclusive regular init container is
        not checked against the budget, and nothing checks that exclusive
        requests fit the budget when nothing is shared.
        """
        total = self.pod_guaranteed_cpus(pod)
        qos = self._pod_qos(pod)
        has_shared_long_running = False
        long_running_exclusive = 0
        for c in pod.init_containers:
            n = self._guaranteed_cpus(pod, c, qos)
            if not c.is_sidecar:
                if n == 0 and long_running_exclusive >= total:
                    return "pod rejected, pod has shared init containers but no cpus available for them"
                continue
            if n == 0:
                has_shared_long_running = True
            else:
                long_running_exclusive += n
        for c in pod.containers:
            n = self._guaranteed_cpus(pod, c, qos)
            if n == 0:
                has_shared_long_running = True
            else:
                long_running_exclusive += n
        if has_shared_long_running and long_running_exclusive >= total:
            return (
                "pod rejected, sum of exclusive container cpu requests equals pod budget, "
                "leaving no cpus for shared containers"
            )
        return None

    def _partition_pod_cpus(self, pod: Pod, pod_cpus: CPUSet) -> dict[str, CPUSet]:
        """Split the pod's CPUs among its containers. Raises
        ``CPUAllocationError``.

        Init containers (spec order): an exclusive one takes from the pod's
        CPUs minus the exclusive sidecars so far (a sidecar's CPUs then stay
        taken; a regular init container's are reused later); a shared regular
        init container gets that same remainder; a shared sidecar waits for
        the final pool. App containers take from the pod's CPUs minus every
        exclusive sidecar and every earlier exclusive app container; every
        shared long-running container gets what is left.
        """
        qos = self._pod_qos(pod)
        out: dict[str, CPUSet] = {}
        sidecars = EMPTY
        for c in pod.init_containers:
            n = self._guaranteed_cpus(pod, c, qos)
            if n > 0:
                cset = self.take_by_topology(pod_cpus - sidecars, n)
                out[c.name] = cset
                if c.is_sidecar:
                    sidecars = sidecars | cset
            elif not c.is_sidecar:
                out[c.name] = pod_cpus - sidecars
        shared = pod_cpus - sidecars
        for c in pod.containers:
            n = self._guaranteed_cpus(pod, c, qos)
            if n > 0:
                cset = self.take_by_topology(shared, n)
                out[c.name] = cset
                shared = shared - cset
        return {c.name: out.get(c.name, shared) for c in (*pod.init_containers, *pod.containers)}

    def allocate_pod(self, state: CPUManagerState, pod: Pod) -> None:
        """``AllocatePod`` (``allocatePodForAdd``): reserve the pod's CPU
        budget and give every container an entry (exclusive CPUs, or the pod's
        shared pool).

        Raises ``EmptyPodSharedPoolError`` (validation), ``SMTAlignmentError``
        (full-pcpus-only, on the pod total) or ``UnexpectedAdmissionError``
        (any allocation error). Reproduced as upstream: entries the state
        already holds for the pod are not consulted (a re-admitted pod gets a
        new bubble and its old CPUs stay out of the shared pool), and when
        the partition fails the bubble stays reserved without container
        entries (``removeStaleState`` only walks container entries, so
        nothing gives it back while the node runs).
        """
        total = self.pod_guaranteed_cpus(pod)
        if total == 0:
            return  # shared pool: no pod entry, no container entry

        err = self.validate_pod_scope_resources(pod)
        if err is not None:
            raise EmptyPodSharedPoolError(err)
        self._enforce_smt_alignment(state, total)

        # pod scope stores the same hint for every container: read the first one's
        containers = (*pod.init_containers, *pod.containers)
        hint = self.affinity.get_affinity(pod.uid, containers[0].name) if containers else None
        try:
            bubble = self.allocate_cpus(
                state, total, None if hint is None else hint.numa_node_affinity, EMPTY
            )
        except CPUAllocationError as exc:
            raise UnexpectedAdmissionError(str(exc)) from None
        state.set_pod_cpu_set(pod.uid, bubble)
        try:
            entries = self._partition_pod_cpus(pod, bubble)
        except CPUAllocationError as exc:
            raise UnexpectedAdmissionError(str(exc)) from None
        for name, cset in entries.items():
            state.set_cpu_set(pod.uid, name, cset)

    def remove_container(self, state: CPUManagerState, pod_uid: str, container_name: str) -> None:
        """``RemoveContainer``: gives back the CPUs no sibling still uses."""
        to_release = state.get_cpu_set(pod_uid, container_name)
        if to_release is None:
            return
        state.delete(pod_uid, container_name)

        if self._plrm:  # pod-level
            pod_cpus = state.get_pod_cpu_set(pod_uid)
            if pod_cpus is not None:
                if not state.assignments.get(pod_uid):
                    state.set_default_cpuset(state.get_default_cpuset() | pod_cpus)
                    state.delete_pod(pod_uid)
                return

        in_use = 0
        entries = state.assignments.get(pod_uid)
        if entries is not None:
            for name, cset in entries.items():
                if name != container_name:
                    in_use |= cset.mask
        released = CPUSet.from_mask(to_release.mask & ~in_use)
        state.set_default_cpuset(state.get_default_cpuset() | released)

    # -- hints -------------------------------------------------------------------
    def get_topology_hints(
        self, state: CPUManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None:
        """``GetTopologyHints`` (container scope)."""
        requested = self.guaranteed_cpus(pod, container)
        if requested == 0:
            return None
        if self._pod_level_unmanaged(pod):
            return None

        allocated = state.get_cpu_set(pod.uid, container.name)
        if allocated is not None:
            # re-admission: hints from what the container already has
            if allocated.size() != requested:
                return {RESOURCE_CPU: []}
            return {RESOURCE_CPU: self.generate_cpu_topology_hints(allocated, EMPTY, requested)}

        available = self.get_available_cpus(state)
        reusable = self.cpus_to_reuse.get(pod.uid, EMPTY)
        return {RESOURCE_CPU: self.generate_cpu_topology_hints(available, reusable, requested)}

    def get_pod_topology_hints(self, state: CPUManagerState, pod: Pod) -> TopologyHints | None:
        """``GetPodTopologyHints`` (pod scope)."""
        requested = self.pod_guaranteed_cpus(pod)
        if requested == 0:
            return None
        if self._pod_level_unmanaged(pod):
            return None
        if self._pod_level_managed(pod) and self.validate_pod_scope_resources(pod) is not None:
            # pod-level: an empty pod shared pool can never be satisfied
            return {RESOURCE_CPU: []}
        qos = self._pod_qos(pod)
        assigned = 0
        assigned_count = 0
        for c in (*pod.init_containers, *pod.containers):
            allocated = state.get_cpu_set(pod.uid, c.name)
            if allocated is None:
                continue
            if allocated.size() != self._guaranteed_cpus(pod, c, qos):
                return {RESOURCE_CPU: []}
            assigned |= allocated.mask
        assigned_set = CPUSet.from_mask(assigned)
        assigned_count = assigned_set.size()
        if assigned_count == requested:
            return {RESOURCE_CPU: self.generate_cpu_topology_hints(assigned_set, EMPTY, requested)}

        available = self.get_available_cpus(state)
        reusable = self.cpus_to_reuse.get(pod.uid, EMPTY) | assigned_set
        return {RESOURCE_CPU: self.generate_cpu_topology_hints(available, reusable, requested)}

    def _numa_mask_table(self) -> MaskTable:
        """The topology's NUMA mask table (``cpu_hint_table.py``): built
        once, the topology does not change."""
        table = self._mask_table
        if table is None:
            # (a NUMA id outside 0-63 has no mask: the kubelet panics where
            # it would make one; no table is kept, so every call raises)
            check_mask_bits("[cpumanager] generateCPUTopologyHints", self.topology.numa_masks)
            table = self._mask_table = new_mask_table(self.topology)
        return table

    def generate_cpu_topology_hints(
        self, available: CPUSet, reusable: CPUSet, request: int
    ) -> list[TopologyHint]:
        """``generateCPUTopologyHints``: one hint per NUMA combination whose
        free (available + reusable) CPUs fit the request, every reusable CPU
        inside it; preferred when the combination is as narrow as the
        narrowest one whose *capacity* fits (or, with ``align-by-socket``,
        when it spans as few sockets as that one needs).

        The combinations and their counts come from the machine's mask
        table (``cpu_hint_table.py``) instead of a walk of
        ``IterateBitMasks`` per request. A NUMA id outside 0-63 panics the
        kubelet here (``check_mask_bits``, when the table is made)."""
        table = self._numa_mask_table()
        min_affinity_size = table.min_affinity_size(request)
        all_mask = self.topology.all_mask
        if not self.options.align_by_socket:
            return table.fitting_hints(all_mask, available, reusable, request, min_affinity_size)
        hints: list[TopologyHint] = []
        for row in table.fitting_rows(all_mask, available, reusable, request):
            mask = row[0]
            preferred = self._is_hint_socket_aligned(mask, min_affinity_size) or row[1] == min_affinity_size
            hints.append(row[6] if preferred else row[7])
        return hints

    def _is_hint_socket_aligned(self, mask: BitMask, min_affinity_size: int) -> bool:
        """``isHintSocketAligned``: the hint spans as few sockets as the
        narrowest fitting NUMA combination needs."""
        topo = self.topology
        if topo.num_sockets == 0:
            return False
        numa_per_socket = topo.num_numa_nodes // topo.num_sockets
        if numa_per_socket == 0:
            return False
        min_sockets = (min_affinity_size + numa_per_socket - 1) // numa_per_socket
        return topo.details.sockets_in_numa_nodes(*mask.bits()).size() == min_sockets


def new_static_policy(
    topology: CPUTopology,
    num_reserved_cpus: int,
    reserved_cpus: CPUSet,
    affinity: Store,
    options: Mapping[str, str] | None,
    gates: FeatureGateReader,
    *,
    topology_manager_policy: str = "none",
) -> StaticPolicy:
    """``NewStaticPolicy``: parse and validate the options, then pick the
    reserved CPUs. Raises ``KubeletStartupError`` with the kubelet's text."""
    opts = new_static_policy_options(options, gates)
    validate_static_policy_options(opts, topology, topology_manager_policy)
    return StaticPolicy(topology, num_reserved_cpus, reserved_cpus, affinity, opts, gates)
