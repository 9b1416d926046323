"""The CPU manager: policy + state, without I/O or the reconcile loop.

Mirrors ``pkg/kubelet/cm/cpumanager/cpu_manager.go`` (v1.37): ``NewManager``
(policy choice, reserved CPU count, error texts), ``Start`` (policy start,
allocatable CPUs), ``Allocate`` / ``GetTopologyHints`` /
``GetPodTopologyHints`` (each garbage-collects stale state first),
``AllocatePod``, ``RemoveContainer`` and ``removeStaleState``, plus the
readers other kubelet parts use: ``GetResourceIsolationLevel``,
``ContainerHasExclusiveCPUs`` / ``PodHasExclusiveCPUs`` (``pkg/kubelet/cm``,
CFS quota) and the PodResources API view (``GetCPUs`` / ``GetPodCPUs``).
The checkpoint file, the container map and the cgroup reconcile loop live at
the edges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Final, Protocol

from podnuma.api.featuregates import GATE_POD_LEVEL_RESOURCE_MANAGERS, FeatureGateReader
from podnuma.api.pod import Container, Pod
from podnuma.api.qos import is_container_equivalent_qos_guaranteed
from podnuma.api.quantity import wrap_int64
from podnuma.api.resources import is_pod_level_resources_set
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.active import ActiveContainers, StaleWatch, stale_containers
from podnuma.cm.cpumanager.policy import Policy, TopologyHints
from podnuma.cm.cpumanager.policy_none import POLICY_NONE, new_none_policy
from podnuma.cm.cpumanager.policy_static import POLICY_STATIC, StaticPolicy, new_static_policy
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.results import Isolation
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.cm.topologymanager.store import Store
from podnuma.errors import KubeletStartupError
from podnuma.machine.cpuset import EMPTY, CPUSet
from podnuma.machine.topology import CPUTopology

__all__ = [
    "ActiveContainers",
    "CPUManager",
    "active_containers_of",
    "new_cpu_manager",
    "resources_qualify_for_exclusive_cpus",
]

# pod UID -> names of the pod's containers (init, sidecar and app)

_ERR_NO_RESERVATION: Final = "[cpumanager] unable to determine reserved CPU resources for static policy"
_ERR_ZERO_RESERVATION: Final = (
    "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to be greater than zero"
)


_NO_ENTRIES: Final[Mapping[str, CPUSet]] = MappingProxyType({})


def resources_qualify_for_exclusive_cpus(container: Container) -> bool:
    """``resourcesQualifyForExclusiveCPUs``: requests equal limits for cpu and
    memory, and the cpu limit is a whole number of CPUs."""
    if not is_container_equivalent_qos_guaranteed(container):
        return False
    limit = container.limits.get("cpu")
    # an int64 product, which wraps for extreme quantities (reproduced)
    return limit is not None and wrap_int64(limit.value() * 1000) == limit.milli_value()


def active_containers_of(pods: Iterable[Pod]) -> dict[str, set[str]]:
    """The (pod UID, container name) pairs ``removeStaleState`` keeps."""
    return {p.uid: {c.name for c in (*p.init_containers, *p.containers)} for p in pods}


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class CPUManager:
    """``cpumanager.manager`` without the I/O.

    ``active_pods`` plays ``ActivePodsFunc`` (with sources ready): when
    given, stale state is collected before every allocation and hint
    request; when ``None``, never (sources not ready). ``gates`` are the
    feature gates (default: the policy's, else all off).
    """

    def __init__(
        self,
        policy: Policy,
        state: CPUManagerState,
        topology: CPUTopology,
        *,
        active_pods: Callable[[], ActiveContainers] | None = None,
        gates: FeatureGateReader | None = None,
    ) -> None:
        if gates is None:
            gates = getattr(policy, "gates", None)
        self.gates: FeatureGateReader | None = gates
        self.policy = policy
        self.state = state
        self.topology = topology
        self.active_pods = active_pods
        self.allocatable_cpus: CPUSet = EMPTY
        self._stale_watch = StaleWatch()
        self._plrm: bool | None = None  # the PodLevelResourceManagers gate, once read

    def start(self) -> None:
        """``Start``: the policy validates/initialises the state
        (``KubeletStartupError`` if invalid)."""
        self.policy.start(self.state)
        self.allocatable_cpus = self.policy.get_allocatable_cpus(self.state)

    def remove_stale_state(self, active: ActiveContainers | None = None) -> None:
        """``removeStaleState``: forget every assignment whose container is
        not active. The result does not depend on the visiting order."""
        if active is None:
            if self.active_pods is None:
                return
            active = self.active_pods()
        state = self.state
        watch = self._stale_watch
        if watch.quiet(active, state, state.version):
            return  # nothing changed since the last walk left the state clean
        suspects = watch.suspects(active, state, state.version)
        for pod_uid, name in stale_containers(state.assignments, active, suspects):
            self.policy.remove_container(state, pod_uid, name)
        watch.clean(active, state, state.version)

    def _allocated(self, pod: Pod, before: int, active: ActiveContainers | None) -> None:
        """After the policy allocated for ``pod`` (state version ``before``):
        the state is still free of stale entries if the pod's are active."""
        state = self.state
        if state.version == before:
            return
        if active is None and self.active_pods is not None:
            active = self.active_pods()
        entries = state.assignments.get(pod.uid)
        alive = None if active is None else active.get(pod.uid)
        if entries is None or (alive is not None and entries.keys() <= alive):
            self._stale_watch.still_clean(before, state.version)
        else:
            self._stale_watch.forget()

    def allocate(self, pod: Pod, container: Container, *, active: ActiveContainers | None = None) -> None:
        """``Allocate``: raises ``CPUManagerAdmissionError`` on failure."""
        self.remove_stale_state(active)
        before = self.state.version
        try:
            self.policy.allocate(self.state, pod, container)
        finally:
            self._allocated(pod, before, active)

    def allocate_pod(self, pod: Pod, *, active: ActiveContainers | None = None) -> None:
        """``AllocatePod`` (pod-level resource managers)."""
        self.remove_stale_state(active)
        before = self.state.version
        try:
            self.policy.allocate_pod(self.state, pod)
        finally:
            self._allocated(pod, before, active)

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """``RemoveContainer`` by (pod, container) reference."""
        self.policy.remove_container(self.state, pod_uid, container_name)

    def get_topology_hints(
        self, pod: Pod, container: Container, *, active: ActiveContainers | None = None
    ) -> TopologyHints | None:
        self.remove_stale_state(active)
        return self.policy.get_topology_hints(self.state, pod, container)

    def get_pod_topology_hints(
        self, pod: Pod, *, active: ActiveContainers | None = None
    ) -> TopologyHints | None:
        self.remove_stale_state(active)
        return self.policy.get_pod_topology_hints(self.state, pod)

    # -- readers -----------------------------------------------------------
    def get_allocatable_cpus(self) -> CPUSet:
        """CPUs available for exclusive allocation, as computed at start."""
        return self.allocatable_cpus

    def get_all_cpus(self) -> CPUSet:
        return self.topology.cpus()

    @property
    def policy_name(self) -> str:
        return self.policy.name()

    def get_reserved_cpus(self) -> CPUSet:
        """The static policy's reserved CPUs (empty under ``none``)."""
        if isinstance(self.policy, StaticPolicy):
            return self.policy.reserved_cpus
        return EMPTY

    def get_cpu_set_or_default(self, pod_uid: str, container_name: str) -> CPUSet:
        return self.state.get_cpu_set_or_default(pod_uid, container_name)

    def get_cpu_affinity(self, pod_uid: str, container_name: str) -> CPUSet:
        # the same as get_cpu_set_or_default (mypyc compiles no method aliases)
        return self.state.get_cpu_set_or_default(pod_uid, container_name)

    def get_exclusive_cpus(self, pod_uid: str, container_name: str) -> CPUSet:
        """``GetExclusiveCPUs``: the container's entry -- for a pod-level pod
        that may be its pod's shared pool (see the isolation level)."""
        cset = self.state.get_cpu_set(pod_uid, container_name)
        return EMPTY if cset is None else cset

    def get_pod_cpus(self, pod_uid: str) -> CPUSet | None:
        """The pod-level CPU set (``None`` when the pod has none)."""
        return self.state.get_pod_cpu_set(pod_uid)

    # -- pod-level views ---------------------------------------------------
    def _pod_level_gate(self) -> bool:
        gate = self._plrm
        if gate is None:
            gate = self._plrm = self.gates is not None and self.gates.enabled(
                GATE_POD_LEVEL_RESOURCE_MANAGERS
            )
        return gate

    def exclusive_view(self, pod: Pod, container: Container) -> tuple[CPUSet | None, Isolation, bool]:
        """In one look-up: the container's CPU entry (``None``: none), its
        isolation level (:meth:`get_resource_isolation_level`) and whether
        its CFS quota is lifted (:meth:`container_has_exclusive_cpus`)."""
        entry = self.state.assignments.get(pod.uid, _NO_ENTRIES).get(container.name)
        if entry is None:
            return None, "host", False
        if (
            self._pod_level_gate()
            and is_pod_level_resources_set(pod)
            and not resources_qualify_for_exclusive_cpus(container)
        ):
            return entry, "pod", False
        return entry, "container", not entry.is_empty()

    def get_resource_isolation_level(self, pod: Pod, container: Container) -> Isolation:
        """``GetResourceIsolationLevel``: ``host`` without a CPU entry (node
        shared pool), ``pod`` for a pod-level pod's container that does not
        qualify for exclusive CPUs (it runs in the pod's shared pool),
        ``container`` otherwise (exclusive CPUs)."""
        if self.state.get_cpu_set(pod.uid, container.name) is None:
            return "host"
        if (
            self._pod_level_gate()
            and is_pod_level_resources_set(pod)
            and not resources_qualify_for_exclusive_cpus(container)
        ):
            return "pod"
        return "container"

    def container_has_exclusive_cpus(self, pod: Pod, container: Container) -> bool:
        """``ContainerHasExclusiveCPUs`` (the container's CFS quota is lifted):
        a non-empty entry that is the container's own (a pod-level pod's
        shared pool does not count)."""
        if self.get_exclusive_cpus(pod.uid, container.name).is_empty():
            return False
        if self._pod_level_gate() and is_pod_level_resources_set(pod):
            return self.get_resource_isolation_level(pod, container) == "container"
        return True

    def pod_has_exclusive_cpus(self, pod: Pod) -> bool:
        """``PodHasExclusiveCPUs`` (the pod cgroup's CFS quota is lifted).

        Classic pods: some container has exclusive CPUs. Pod-level pods: some
        container is container-isolated and none runs in the pod's shared
        pool (the rule for pod-level pods is inferred from upstream's tests).
        """
        containers = (*pod.init_containers, *pod.containers)
        if self._pod_level_gate() and is_pod_level_resources_set(pod):
            levels = [
                self.get_resource_isolation_level(pod, c)
                for c in containers
                if not self.get_exclusive_cpus(pod.uid, c.name).is_empty()
            ]
            return "container" in levels and "pod" not in levels
        return any(not self.get_exclusive_cpus(pod.uid, c.name).is_empty() for c in containers)

    def podresources_container_cpus(self, pod: Pod, container: Container) -> CPUSet:
        """PodResources ``GetCPUs``: only the container's exclusive CPUs; a
        container in its pod's or the node's shared pool reports none."""
        if self.get_resource_isolation_level(pod, container) != "container":
            return EMPTY
        return self.get_exclusive_cpus(pod.uid, container.name)

    def podresources_pod_cpus(self, pod: Pod) -> CPUSet:
        """PodResources ``GetPodCPUs``: the pod-level reservation, reported
        only for pod-level pods with ``PodLevelResourceManagers`` on."""
        if not (self._pod_level_gate() and is_pod_level_resources_set(pod)):
            return EMPTY
        cset = self.state.get_pod_cpu_set(pod.uid)
        return EMPTY if cset is None else cset


class _CheckpointData(Protocol):
    """What :func:`new_cpu_manager` reads from a restored checkpoint
    (``podnuma.cm.cpumanager.checkpoint.CPUCheckpointData``)."""

    @property
    def default_cpuset(self) -> CPUSet: ...

    @property
    def entries(self) -> Mapping[str, Mapping[str, CPUSet]]: ...

    @property
    def pod_entries(self) -> Mapping[str, CPUSet]: ...


def new_cpu_manager(
    policy_name: str,
    options: Mapping[str, str] | None,
    topology: CPUTopology,
    reserved_system_cpus: CPUSet | None,
    reserved_cpu_quantity_millis: int | None = None,
    affinity: Store | None = None,
    gates: FeatureGateReader | None = None,
    state: CPUManagerState | None = None,
    *,
    reserved_cpu_millis: int | None = None,
    checkpoint: _CheckpointData | None = None,
    topology_manager_policy: str | None = None,
    active_pods: Callable[[], ActiveContainers] | None = None,
    start: bool = True,
) -> CPUManager:
    """``NewManager`` followed (by default) by ``Start``.

    ``reserved_cpu_quantity_millis`` (alias ``reserved_cpu_millis``) is the
    CPU entry of the node allocatable reservation (kube-reserved +
    system-reserved). The kubelet leaves a zero sum out of that map, so
    ``None`` and ``0`` both mean "no reservation". A non-empty
    ``reserved_system_cpus`` replaces it by its size, as the kubelet's
    start-up does (``--reserved-cpus`` overrides the cpu of kube/system
    reserved).

    The state is ``state``, else the one restored from ``checkpoint``, else
    a fresh one. ``topology_manager_policy`` defaults to the store's
    ``policy_name`` (``none`` if it has none): align-by-socket needs it.
    With ``start`` the manager is started (the policy validates and
    initialises the state). Raises ``KubeletStartupError``.
    """
    if gates is None:
        raise TypeError("new_cpu_manager() needs the feature gates")
    if affinity is None:
        affinity = _NoAffinity()
    if reserved_cpu_quantity_millis is None:
        reserved_cpu_quantity_millis = reserved_cpu_millis
    if topology_manager_policy is None:
        topology_manager_policy = str(getattr(affinity, "policy_name", POLICY_NONE))
    if state is None:
        state = (
            CPUManagerState()
            if checkpoint is None
            else CPUManagerState(
                checkpoint.default_cpuset,
                {uid: dict(c) for uid, c in checkpoint.entries.items()},
                dict(checkpoint.pod_entries),
            )
        )

    reserved = reserved_system_cpus if reserved_system_cpus is not None else EMPTY
    policy: Policy
    if policy_name == POLICY_NONE:
        try:
            policy = new_none_policy(options)
        except KubeletStartupError as exc:
            raise KubeletStartupError(f"new none policy error: {exc}") from None
    elif policy_name == POLICY_STATIC:
        millis = reserved_cpu_quantity_millis
        if reserved.size() > 0:
            millis = reserved.size() * 1000
        if millis is None or millis == 0:
            raise KubeletStartupError(_ERR_NO_RESERVATION)
        if millis < 0:  # not reachable from a valid configuration
            raise KubeletStartupError(_ERR_ZERO_RESERVATION)
        num_reserved = -(-millis // 1000)  # ceiling: fractions cannot be exclusive
        try:
            policy = new_static_policy(
                topology,
                num_reserved,
                reserved,
                affinity,
                options,
                gates,
                topology_manager_policy=topology_manager_policy,
            )
        except KubeletStartupError as exc:
            raise KubeletStartupError(f"new static policy error: {exc}") from None
    else:
        raise KubeletStartupError(f'unknown policy: "{policy_name}"')
    manager = CPUManager(policy, state, topology, active_pods=active_pods, gates=gates)
    if start:
        manager.start()
    return manager


class _NoAffinity:
    """``topologymanager.NewFakeManager``: no hint for anyone."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return EMPTY_HINT
