"""A node: the kubelet's container manager, in memory.

Assembles what ``pkg/kubelet/cm/container_manager_linux.go`` assembles -- the
topology manager with its hint providers (CPU manager; memory and device
managers join them) -- and runs the kubelet's pod admission in the order
``pkg/kubelet/kubelet.go`` registers its admit handlers:

1. the resource-allocation handler (``GetAllocateResourcesPodAdmitHandler``:
   the topology manager's ``Admit``, which merges hints and has every
   provider allocate each container), then
2. the predicate handler (``lifecycle/predicate.go``): the pod's requests
   against node allocatable (capacity - kubeReserved - systemReserved -
   hard eviction thresholds).

A pod rejected by a later handler keeps what an earlier one allocated until
the next ``removeStaleState`` (at the start of the next allocation), as in
the kubelet. Pods that own entries in the starting checkpoints are running
pods, as after a kubelet restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from podnuma.api.kubeletconfig import (
    KubeletConfig,
    check_node_allocatable,
    max_pods,
    node_allocatable_reservation,
    validate_kubelet_config,
)
from podnuma.api.pod import Container, Pod
from podnuma.api.qos import compute_pod_qos
from podnuma.api.quantity import Quantity
from podnuma.api.resources import pod_requests
from podnuma.buildinfo import ENGINE_COMPILED, mypyc_attr
from podnuma.cm.active import ActivePods
from podnuma.cm.admission import (
    allocatable_amounts,
    fits_node_allocatable_amounts,
    pod_status_message,
    request_amounts,
)
from podnuma.cm.cpumanager.checkpoint import (
    CPUCheckpointData,
    check_policy,
    cpu_checkpoint_object,
    encode_cpu_checkpoint,
)
from podnuma.cm.cpumanager.cpu_manager import CPUManager, new_cpu_manager
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.devicemanager.manager import DeviceManager
from podnuma.cm.memorymanager.checkpoint import (
    MemoryCheckpointData,
    encode_memory_checkpoint,
    memory_checkpoint_object,
)
from podnuma.cm.memorymanager.memory_manager import new_memory_manager
from podnuma.cm.memorymanager.state import Block
from podnuma.cm.topologymanager.manager import HintTrail, ProviderHints, TopologyManager
from podnuma.cm.topologymanager.new_manager import new_topology_policy
from podnuma.errors import InputError, KubeletStartupError
from podnuma.machine.cpuset import EMPTY as EMPTY_CPUSET
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.podresources import (
    AllocatableResources,
    ContainerDevices,
    ContainerMemory,
    ContainerResources,
    PodResources,
)
from podnuma.results import (
    ContainerResult,
    HintRecord,
    Isolation,
    MemoryBlock,
    MergedHint,
    NodeSummary,
    PodAllocation,
    StepResult,
)

__all__ = ["Node"]

CPU_CHECKPOINT_FILE = "cpu_manager_state"
MEMORY_CHECKPOINT_FILE = "memory_manager_state"


@dataclass
class _RunningPod:
    """A pod the node runs: admitted by a step, or found in a checkpoint
    (``pod`` is then ``None`` until an ``addPod`` re-admits it)."""

    uid: str
    ref: str
    pod: Pod | None
    requests: dict[str, Quantity]
    containers: list[str]
    removed: set[str] = field(default_factory=set)
    amounts: dict[str, int] = field(default_factory=dict)  # requests as integer amounts
    # the step that admitted it; None for a pod restored from a checkpoint
    # (not admitted by any step yet: an addPod re-admits it, once)
    admitted_at: int | None = None

    def live_containers(self) -> list[str]:
        return [c for c in self.containers if c not in self.removed]


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class _ActiveContainersOf:
    """``node.active_containers`` as an object, for the compiled engine: a
    compiled bound method is a builtin one, which ``copy.deepcopy`` keeps
    bound to the original node (a Python bound method is copied with it)."""

    def __init__(self, node: Node) -> None:
        self._node = node

    def __call__(self) -> ActivePods:
        return self._node.active_containers()


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class _CPUProvider:
    """The CPU manager as a topology-manager hint provider (the manager
    garbage-collects stale state before hints and allocation, as upstream)."""

    provider_name = "cpu"

    def __init__(self, manager: CPUManager) -> None:
        self._manager = manager

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        return self._manager.get_topology_hints(pod, container)

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        return self._manager.get_pod_topology_hints(pod)

    def allocate(self, pod: Pod, container: Container) -> None:
        self._manager.allocate(pod, container)

    def allocate_pod(self, pod: Pod) -> None:
        self._manager.allocate_pod(pod)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Node:
    """The kubelet's resource managers and admission on one machine."""

    def __init__(
        self,
        machine: Machine,
        config: KubeletConfig,
        *,
        cpu_checkpoint: CPUCheckpointData | None = None,
        memory_checkpoint: MemoryCheckpointData | None = None,
        step_pod_resources: bool = True,
    ) -> None:
        """``step_pod_resources``: whether each step's result carries the
        PodResources ``List`` after it (callers that never read it, such as
        the fleet replay, save building it)."""
        validate_kubelet_config(config, online_cpus=machine.topology.cpus())
        self._step_pod_resources = step_pod_resources
        self._admitting: Pod | None = None  # the pod whose admission is under way
        self.machine = machine
        self.config = config
        self.gates = config.feature_gates
        self._pod_level = self.gates.enabled("PodLevelResources")

        # Topology manager (NewManager: policy none short-circuits before
        # options and the NUMA-count check, and always uses the none scope).
        tm_policy, _, _ = new_topology_policy(
            config.topology_manager_policy,
            machine,
            config.topology_manager_policy_options,
            self.gates,
        )
        self.topology = TopologyManager(
            None if config.topology_manager_policy == "none" else tm_policy,
            config.topology_manager_scope,
            pod_level_resource_managers=self.gates.enabled("PodLevelResourceManagers"),
        )

        # Capacity and allocatable, as the kubelet's node status reports them.
        self._max_pods = max_pods(config, machine.topology.num_cpus)
        self.capacity = _capacity(machine, self._max_pods)
        self.reservation = node_allocatable_reservation(config, self.capacity)
        self.allocatable = _allocatable(self.capacity, self.reservation)
        self._allocatable_amounts = allocatable_amounts(self.allocatable)
        self._all_numa = tuple(machine.numa_ids())

        # Device manager: the first hint provider, as container_manager_linux.go
        # registers them (devices, CPUs, memory).
        active_pods = _ActiveContainersOf(self) if ENGINE_COMPILED else self.active_containers
        self.devices = DeviceManager(machine, self.topology, active_pods=active_pods)
        self.topology.add_hint_provider(self.devices)

        # CPU manager (NewManager), with the state restored from the checkpoint.
        if cpu_checkpoint is not None:
            cpu_state = CPUManagerState(
                cpu_checkpoint.default_cpuset,
                cpu_checkpoint.entries,
                cpu_checkpoint.pod_entries,
            )
        else:
            cpu_state = CPUManagerState()
        reserved_cpu = self.reservation.get("cpu")
        self.cpu = new_cpu_manager(
            config.cpu_manager_policy,
            config.cpu_manager_policy_options,
            machine.topology,
            config.reserved_system_cpus,
            None if reserved_cpu is None else reserved_cpu.milli_value(),
            self.topology,
            self.gates,
            cpu_state,
            topology_manager_policy=config.topology_manager_policy,
            active_pods=active_pods,
            start=False,
        )
        self.topology.add_hint_provider(_CPUProvider(self.cpu))

        # Memory manager (NewManager validates reservedMemory for Static).
        self.memory = new_memory_manager(
            config,
            machine,
            self.topology,
            self.gates,
            checkpoint=memory_checkpoint,
            active_pods=active_pods,
            reservation=self.reservation,
            start=False,
        )
        self.topology.add_hint_provider(self.memory)

        # ContainerManager.Start: every NewManager error above comes first;
        # then the CPU manager starts (restoring and validating its
        # checkpoint), then the memory manager.
        # ContainerManager.Start wraps each manager's Start error.
        try:
            if cpu_checkpoint is not None:
                check_policy(cpu_checkpoint, config.cpu_manager_policy)
            self.cpu.start()
        except KubeletStartupError as exc:
            raise KubeletStartupError(f"start cpu manager error: {exc}") from None
        try:
            self.memory.start()
        except KubeletStartupError as exc:
            raise KubeletStartupError(f"start memory manager error: {exc}") from None
        # ... and then the node allocatable configuration is validated.
        check_node_allocatable(self.capacity, self.reservation)

        self._running: dict[str, _RunningPod] = {}
        # Kept with _running (see _run/_stop): the running pods' summed
        # requests, their refs, and the active containers view.
        self._used: dict[str, int] = {}
        self._uid_by_ref: dict[str, str] = {}
        self._active = ActivePods()
        # PodResources entries per running pod, recomputed only for the pods
        # whose own steps touched them (_pod_resources_stale).
        self._pod_resources_cache: dict[str, PodResources] = {}
        self._pod_resources_stale: set[str] = set()
        self._adopt_checkpoint_pods(cpu_checkpoint, memory_checkpoint)

    # -- running pods ------------------------------------------------------
    def _adopt_checkpoint_pods(
        self, cpu: CPUCheckpointData | None, memory: MemoryCheckpointData | None
    ) -> None:
        """Pods owning checkpoint entries run on the node; they count toward
        node allocatable with the CPUs and memory their entries hold."""
        cpu_entries = cpu.entries if cpu is not None else {}
        cpu_pods = cpu.pod_entries if cpu is not None else {}
        mem_entries = memory.entries if memory is not None else {}
        mem_pods = memory.pod_entries if memory is not None else {}
        uids = set(cpu_entries) | set(cpu_pods) | set(mem_entries) | set(mem_pods)
        for uid in sorted(uids):
            containers = sorted(set(cpu_entries.get(uid, {})) | set(mem_entries.get(uid, {})))
            cpus = CPUSet()
            for cset in cpu_entries.get(uid, {}).values():
                cpus = cpus | cset
            pod_cpus = cpu_pods.get(uid)
            if pod_cpus is not None and pod_cpus.size() > cpus.size():
                cpus = pod_cpus
            requests: dict[str, Quantity] = {}
            if cpus:
                requests["cpu"] = Quantity.from_int(cpus.size())
            amounts: dict[str, int] = {}
            blocks = [b for bl in mem_entries.get(uid, {}).values() for b in bl]
            pod_blocks = mem_pods.get(uid) or []
            for block in pod_blocks if pod_blocks else blocks:
                amounts[block.type] = amounts.get(block.type, 0) + block.size
            for name, amount in amounts.items():
                requests[name] = Quantity.from_int(amount, binary=True)
            self._run(
                _RunningPod(uid=uid, ref=uid, pod=None, requests=requests, containers=containers)
            )

    def _run(self, rp: _RunningPod) -> None:
        """``rp`` runs on the node (replacing an entry with its UID, which
        keeps its place among the running pods)."""
        old = self._running.get(rp.uid)
        if old is not None:
            for name, v in old.amounts.items():
                self._used[name] -= v
            if self._uid_by_ref.get(old.ref) == old.uid:
                del self._uid_by_ref[old.ref]
        if not rp.amounts:
            rp.amounts = request_amounts(rp.requests)
        self._running[rp.uid] = rp
        if self._step_pod_resources:
            self._pod_resources_stale.add(rp.uid)
        for name, v in rp.amounts.items():
            self._used[name] = self._used.get(name, 0) + v
        self._uid_by_ref.setdefault(rp.ref, rp.uid)
        self._active[rp.uid] = frozenset(rp.containers)

    def _stop(self, uid: str) -> None:
        rp = self._running.pop(uid, None)
        if rp is None:
            return
        if self._step_pod_resources:
            self._pod_resources_stale.add(uid)
        for name, v in rp.amounts.items():
            self._used[name] -= v
        if self._uid_by_ref.get(rp.ref) == uid:
            del self._uid_by_ref[rp.ref]
        self._active.pop(uid, None)

    def active_containers(self) -> ActivePods:
        """Pod UID -> container names of every active pod (the kubelet's
        ``activePods``), the pod being admitted included. Read-only: it is
        the node's own mapping, kept up to date as pods come and go."""
        return self._active

    def _find(self, ref: str) -> _RunningPod:
        rp = self._running.get(ref)
        if rp is not None:
            return rp
        uid = self._uid_by_ref.get(ref)
        if uid is not None:
            return self._running[uid]
        raise InputError(f"pod {ref!r} is not running on the node")

    # -- steps ---------------------------------------------------------------
    def add_pod(self, pod: Pod, index: int) -> StepResult:
        uid = pod.uid
        ref = pod.ref
        existing = self._running.get(uid)
        if existing is not None and existing.admitted_at is not None:
            raise InputError(
                f"pod {ref} (UID {uid}) is already running: admitted at "
                f"steps[{existing.admitted_at}]; remove it before adding it again"
            )
        other = self._uid_by_ref.get(ref)
        if other is not None and other != uid:
            rp_other = self._running[other]
            where = (
                f"admitted at steps[{rp_other.admitted_at}]"
                if rp_other.admitted_at is not None
                else "restored from the checkpoint"
            )
            raise InputError(
                f"pod {pod.ref} is already running on the node with UID {other} ({where})"
            )
        qos = compute_pod_qos(pod, pod_level_resources=self._pod_level)
        self._touch(pod.uid)
        trail = HintTrail()
        self._admitting = pod
        running_entry = self._active.get(pod.uid)
        self._active[pod.uid] = _container_names(pod)
        try:
            result = self.topology.admit(pod, trail)
        finally:
            self._admitting = None
            if running_entry is None:
                del self._active[pod.uid]
            else:
                self._active[pod.uid] = running_entry
        requests, amounts = _requests_of(pod, self._pod_level)
        failed = trail.failed
        if result.admit:
            # the other running pods' requests (this pod's own entry, on a
            # re-admission, does not count)
            used = self._used
            others = len(self._running)
            if existing is not None:
                used = {name: v - existing.amounts.get(name, 0) for name, v in used.items()}
                others -= 1
            result = fits_node_allocatable_amounts(
                amounts,
                used,
                others,
                self._allocatable_amounts,
                max_pods=self._max_pods,
            )
            if not result.admit:
                failed = ("nodeAllocatable", None)
        if result.admit:
            # (requests and amounts are the pod's memo, never changed: shared)
            rp = _RunningPod(
                uid=uid,
                ref=ref,
                pod=pod,
                requests=requests,
                containers=list(_container_order(pod)),
                removed=set(existing.removed) if existing is not None else set(),
                amounts=amounts,
                admitted_at=index,
            )
            self._run(rp)
            containers = self._container_results(rp)
        else:
            # A rejected pod is terminal: it is no longer active, and what was
            # allocated for it waits for the next removeStaleState.
            if existing is not None:
                self._stop(uid)
            containers = ()
        return StepResult(
            index=index,
            op="addPod",
            pod=ref,
            pod_uid=uid,
            admitted=result.admit,
            reason=result.reason,
            message=None if result.message is None else pod_status_message(result.message),
            qos_class=qos,
            pod_allocation=self._pod_allocation(uid) if result.admit else None,
            containers=containers,
            default_cpuset=self.cpu.state.get_default_cpuset(),
            hints=_hint_records(trail) if trail.provider_hints else (),
            pod_resources=self.pod_resources() if self._step_pod_resources else (),
            merged=tuple(
                MergedHint(c, h, a, tr)
                for (c, h, a), tr in zip(trail.merged, trail.traces, strict=True)
            ) if trail.merged else (),
            failed_stage=None if result.admit or failed is None else failed[0],
            failed_container=None if result.admit or failed is None else failed[1],
        )

    def remove_container(self, ref: str, container: str, index: int) -> StepResult:
        rp = self._find(ref)
        if container not in rp.live_containers():
            raise InputError(f"container {container!r} of pod {rp.ref} is not running")
        self._remove(rp, container)
        return self._removal_result(index, "removeContainer", rp, container)

    def remove_pod(self, ref: str, index: int) -> StepResult:
        rp = self._find(ref)
        for name in rp.live_containers():
            self._remove(rp, name)
        self._stop(rp.uid)
        self._touch(rp.uid)
        self.topology.remove_pod(rp.uid)
        # Devices stay with a pod until it is no longer active.
        self.devices.remove_pod(rp.uid)
        return self._removal_result(index, "removePod", rp, None)

    def _touch(self, uid: str) -> None:
        """The pod's PodResources entry must be computed again."""
        if self._step_pod_resources:
            self._pod_resources_stale.add(uid)

    def _remove(self, rp: _RunningPod, container: str) -> None:
        self._touch(rp.uid)
        self.devices.remove_container(rp.uid, container)
        self.cpu.remove_container(rp.uid, container)
        self.memory.remove_container(rp.uid, container)
        self.topology.remove_container(rp.uid, container)
        rp.removed.add(container)

    def _removal_result(
        self, index: int, op: str, rp: _RunningPod, container: str | None
    ) -> StepResult:
        still = self._running.get(rp.uid)
        qos = (
            compute_pod_qos(rp.pod, pod_level_resources=self._pod_level)
            if rp.pod is not None
            else None
        )
        return StepResult(
            index=index,
            op=op,  # type: ignore[arg-type]
            pod=rp.ref,
            pod_uid=rp.uid,
            admitted=None,
            reason=None,
            message=None,
            qos_class=qos,
            pod_allocation=self._pod_allocation(rp.uid) if still is not None else None,
            containers=self._container_results(still) if still is not None else (),
            default_cpuset=self.cpu.state.get_default_cpuset(),
            container=container,
            pod_resources=self.pod_resources() if self._step_pod_resources else (),
        )

    # -- what the containers get ----------------------------------------------
    def container_results(self, uid: str) -> tuple[ContainerResult, ...]:
        """What each live container of the running pod ``uid`` runs on now
        (its exclusive CPUs, or the shared pool as it is now)."""
        rp = self._running.get(uid)
        return () if rp is None else self._container_results(rp)

    def _container_results(self, rp: _RunningPod) -> tuple[ContainerResult, ...]:
        all_numa = self._all_numa
        pod = rp.pod
        uid = rp.uid
        spec = _containers_by_name(pod) if pod is not None else {}
        out: list[ContainerResult] = []
        removed = rp.removed
        cpu = self.cpu
        memory_blocks = self.memory.get_memory_blocks
        hints = self.topology.get_affinity
        devices_of = self.devices.devices_of
        shared: CPUSet | None = None
        for name in rp.containers:
            if name in removed:
                continue
            container = spec.get(name)
            isolation: Isolation
            if pod is not None and container is not None:
                entry, isolation, quota_off = cpu.exclusive_view(pod, container)
            else:  # a pod known only from a checkpoint
                entry = cpu.state.get_cpu_set(uid, name)
                isolation = "container" if entry is not None else "host"
                quota_off = entry is not None
            if entry is not None:
                cpus = entry
            else:
                if shared is None:
                    shared = self._shared_cpus()
                cpus = shared
            if not cpus:
                # an empty exclusive set (a negative CPU count from an
                # extreme quantity): no cpuset is written, every CPU is used
                cpus = self.machine.topology.cpus()
            raw = memory_blocks(uid, name)
            if raw:
                blocks = tuple(
                    MemoryBlock(b.type, tuple(sorted(b.numa_affinity)), b.size) for b in raw
                )
                mems = tuple(sorted({n for b in blocks for n in b.numa_nodes})) or all_numa
            else:
                blocks = ()
                mems = all_numa
            out.append(
                ContainerResult(
                    name=name,
                    type=container.kind if container is not None else "app",
                    cpus=cpus,
                    mems=mems,
                    memory=blocks,
                    isolation=isolation,
                    devices=devices_of(uid, name),
                    topology_hint=hints(uid, name),
                    cpu_quota_disabled=quota_off,
                )
            )
        return tuple(out)

    def pod_resources(self) -> tuple[PodResources, ...]:
        """What the PodResources API ``List`` reports now: every active pod,
        each container's exclusive CPUs, memory and devices, and the pod-level
        reservation of pod-level pods (``podresources`` module docstring)."""
        if not self._step_pod_resources:
            # no cache is kept: every entry is built now
            return tuple(
                self.pod_resources_of(rp.pod) for rp in self._running.values() if rp.pod is not None
            )
        cache = self._pod_resources_cache
        stale = self._pod_resources_stale
        if stale:
            running = self._running
            in_order = True
            for uid in stale:
                rp = running.get(uid)
                if rp is None or rp.pod is None:  # gone, or known only from a checkpoint
                    cache.pop(uid, None)
                    continue
                if uid not in cache and next(reversed(running)) != uid:
                    # a new entry for a pod that is not the latest to run (a
                    # restored pod admitted again keeps its place)
                    in_order = False
                # an existing entry is replaced in place, keeping its order
                cache[uid] = self.pod_resources_of(rp.pod)
            stale.clear()
            if not in_order:
                self._pod_resources_cache = cache = {
                    uid: cache[uid] for uid in running if uid in cache
                }
        # A running pod's exclusive resources change only through its own
        # steps (admission, removals), which mark its entry stale; the cache
        # holds the entries in the running pods' order.
        return tuple(cache.values())

    def pod_resources_of(self, pod: Pod) -> PodResources:
        """The PodResources entry of ``pod`` as the kubelet's server builds it
        (``Get`` answers for any pod it knows, admitted or not): restartable
        init containers (sidecars) in spec order, then the app containers;
        regular init containers are not listed. The list comes from the
        pod's spec: a container that has exited is still listed, with what
        the managers still hold for it (devices stay until the pod goes)."""
        containers: list[ContainerResources] = []
        exclusive_view = self.cpu.exclusive_view
        memory_of = self.memory.podresources_container_memory
        for c in (*pod.init_containers, *pod.containers):
            if c.kind == "init":
                continue
            entry, isolation, _ = exclusive_view(pod, c)
            containers.append(
                ContainerResources(
                    name=c.name,
                    # GetCPUs: only a container's own exclusive CPUs
                    cpu_ids=entry if entry is not None and isolation == "container" else EMPTY_CPUSET,
                    memory=tuple(map(_container_memory, memory_of(pod, c))),
                    devices=_container_devices(
                        self.machine, self.devices.devices_of(pod.uid, c.name)
                    ),
                )
            )
        return PodResources(
            name=pod.name,
            namespace=pod.namespace,
            uid=pod.uid,
            containers=tuple(containers),
            cpu_ids=self.cpu.podresources_pod_cpus(pod),
            memory=tuple(map(_container_memory, self.memory.podresources_pod_memory(pod))),
        )

    def container_devices(self, pod_uid: str, container: str) -> tuple[ContainerDevices, ...]:
        """``GetDevices``: the devices the container holds, one entry per
        device and NUMA node."""
        return _container_devices(self.machine, self.devices.devices_of(pod_uid, container))

    def allocatable_resources(self) -> AllocatableResources:
        """``GetAllocatableResources``: the CPUs the CPU manager computed at
        start (all minus reserved under static, none under ``none``), the
        memory manager's allocatable blocks, every known device."""
        all_devices = {
            name: tuple(d.id for d in devs) for name, devs in self.machine.devices.items()
        }
        return AllocatableResources(
            cpu_ids=self.cpu.get_allocatable_cpus(),
            memory=tuple(_container_memory(b) for b in self.memory.get_allocatable_memory()),
            devices=_container_devices(self.machine, all_devices),
        )

    def _pod_allocation(self, uid: str) -> PodAllocation | None:
        """The pod-level reservation: the pod's CPU set and memory blocks
        (pod scope with pod-level resources), else ``None``."""
        cpus = self.cpu.get_pod_cpus(uid)
        blocks = tuple(
            MemoryBlock(b.type, tuple(sorted(b.numa_affinity)), b.size)
            for b in self.memory.get_pod_memory_blocks(uid)
        )
        if cpus is None and not blocks:
            return None
        return PodAllocation(cpus=cpus if cpus is not None else CPUSet(), memory=blocks)

    def _shared_cpus(self) -> CPUSet:
        """What a container without exclusive CPUs runs on: the default set,
        or every CPU when the default set is empty (policy ``none`` writes no
        cpuset at all)."""
        default = self.cpu.state.get_default_cpuset()
        return default if default else self.machine.topology.cpus()

    # -- node-level views ----------------------------------------------------------
    def summary(self) -> NodeSummary:
        return NodeSummary(
            name=self.machine.name,
            cpus=self.machine.topology.cpus(),
            numa_nodes=tuple(self.machine.numa_ids()),
            reserved_cpus=self.cpu.get_reserved_cpus(),
        )

    def _cpu_checkpoint_data(self) -> CPUCheckpointData:
        st = self.cpu.state
        return CPUCheckpointData(
            policy_name=self.config.cpu_manager_policy,
            default_cpuset=st.get_default_cpuset(),
            entries=st.get_cpu_assignments(),
            pod_entries=dict(st.pod_assignments),
        )

    def checkpoint_objects(self) -> dict[str, object]:
        return {
            "cpuManager": cpu_checkpoint_object(self._cpu_checkpoint_data()),
            "memoryManager": memory_checkpoint_object(self.memory.checkpoint_data()),
        }

    def checkpoint_files(self) -> dict[str, bytes]:
        return {
            CPU_CHECKPOINT_FILE: encode_cpu_checkpoint(self._cpu_checkpoint_data()),
            MEMORY_CHECKPOINT_FILE: encode_memory_checkpoint(self.memory.checkpoint_data()),
        }


def _capacity(machine: Machine, max_pod_count: int) -> dict[str, Quantity]:
    """Node capacity as the kubelet reports it from cadvisor: logical CPUs,
    memory capacity, hugepage pools, and the maximum pod count."""
    cap: dict[str, Quantity] = {
        "cpu": Quantity.from_int(machine.topology.num_cpus),
        "memory": Quantity.from_int(machine.memory_capacity(), binary=True),
        "pods": Quantity.from_int(max_pod_count),
    }
    for size, total in sorted(machine.hugepage_capacity().items()):
        cap[_hugepage_resource(size)] = Quantity.from_int(total, binary=True)
    for name, devices in machine.devices.items():
        cap[name] = Quantity.from_int(len(devices))
    return cap


def _hugepage_resource(page_size: int) -> str:
    for unit, suffix in ((1 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki")):
        if page_size % unit == 0:
            return f"hugepages-{page_size // unit}{suffix}"
    return f"hugepages-{page_size}"


def _allocatable(
    capacity: Mapping[str, Quantity], reservation: Mapping[str, Quantity]
) -> dict[str, Quantity]:
    """Capacity minus the reservation, floored at zero; memory also loses
    the hugepage pools (``nodestatus.MachineInfo``)."""
    zero = Quantity.from_int(0)
    out: dict[str, Quantity] = {}
    for name, cap in capacity.items():
        value = cap - reservation[name] if name in reservation else cap
        out[name] = value if value >= zero else zero
    mem = out.get("memory")
    if mem is not None:
        for name, cap in capacity.items():
            if name.startswith("hugepages-"):
                mem = mem - cap
        out["memory"] = mem if mem >= zero else zero
    return out


def _container_memory(block: Block) -> ContainerMemory:
    return ContainerMemory(block.type, block.size, tuple(sorted(block.numa_affinity)))


def _container_devices(
    machine: Machine, by_resource: Mapping[str, tuple[str, ...]]
) -> tuple[ContainerDevices, ...]:
    if not by_resource:
        return ()
    return _container_devices_of(machine, by_resource)


def _container_devices_of(
    machine: Machine, by_resource: Mapping[str, tuple[str, ...]]
) -> tuple[ContainerDevices, ...]:
    """One entry per device and NUMA node, as the kubelet's
    ``containerDevicesFromResourceDeviceInstances`` builds them (a device
    without topology gets one entry with none). Upstream walks Go maps, so
    its order is random; podnuma sorts by resource, then device id."""
    numa_of = {
        (name, dev.id): tuple(sorted(dev.numa_nodes))
        for name, devs in machine.devices.items()
        for dev in devs
    }
    out: list[ContainerDevices] = []
    for resource in sorted(by_resource):
        for dev_id in sorted(by_resource[resource]):
            nodes = numa_of.get((resource, dev_id), ())
            if not nodes:
                out.append(ContainerDevices(resource, (dev_id,), ()))
            for node in nodes:
                out.append(ContainerDevices(resource, (dev_id,), (node,)))
    return tuple(out)


def _requests_of(pod: Pod, pod_level: bool) -> tuple[dict[str, Quantity], dict[str, int]]:
    """The pod's requests (``PodRequests``) and their integer amounts, kept
    with the (immutable) pod. Read-only: callers copy what they keep."""
    memo = pod.memo()
    key = ("node-requests", pod_level)
    found: tuple[dict[str, Quantity], dict[str, int]] | None = memo.get(key)
    if found is None:
        requests = pod_requests(pod, pod_level_resources=pod_level)
        found = memo[key] = (requests, request_amounts(requests))
    return found


def _containers_by_name(pod: Pod) -> dict[str, Container]:
    memo = pod.memo()
    found: dict[str, Container] | None = memo.get("containers-by-name")
    if found is None:
        found = {}
        for c in (*pod.init_containers, *pod.containers):
            found[c.name] = c
        memo["containers-by-name"] = found
    return found


def _container_order(pod: Pod) -> tuple[str, ...]:
    """The names of the pod's containers in spec order (init, then app)."""
    memo = pod.memo()
    found: tuple[str, ...] | None = memo.get("container-order")
    if found is None:
        found = memo["container-order"] = tuple(
            c.name for c in (*pod.init_containers, *pod.containers)
        )
    return found


def _container_names(pod: Pod) -> frozenset[str]:
    """The names of the pod's containers (init, sidecar and app)."""
    memo = pod.memo()
    found: frozenset[str] | None = memo.get("container-names")
    if found is None:
        found = memo["container-names"] = frozenset(
            c.name for c in (*pod.init_containers, *pod.containers)
        )
    return found


def _hint_records(trail: HintTrail) -> tuple[HintRecord, ...]:
    records: list[HintRecord] = []
    for container, provider, hints in trail.provider_hints:
        if hints is None:
            records.append(HintRecord(container, provider, "", None))
            continue
        for resource, lst in hints.items():
            records.append(
                HintRecord(container, provider, resource, None if lst is None else tuple(lst))
            )
    return tuple(records)

