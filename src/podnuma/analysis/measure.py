"""Measuring one form of a pod on an empty node with the engine.

Pure: builds a :class:`~podnuma.cm.container_manager.Node` from a machine and a kubelet
configuration, admits the pod, reads what its containers got, then keeps
adding copies (distinct names and UIDs) until the first rejection to count
how many fit (the density). Configuration variants (topology scope, the
pod-level resource managers gates) are made here and reported as notes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import Pod, derive_pod_uid
from podnuma.api.pod_manifest import parse_pod
from podnuma.cm.container_manager import Node
from podnuma.cm.results import ContainerResult, MemoryBlock, PodAllocation
from podnuma.errors import KubeletStartupError
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine

__all__ = [
    "DENSITY_CAP",
    "POD_LEVEL_GATES",
    "copy_name",
    "Measurement",
    "variant_config",
    "measure",
    "measure_manifest",
]

#: the memory manager's resource name of memory (the others: huge pages)
MEMORY = "memory"

#: Copies tried at most when counting density (the kubelet's default
#: maxPods, 110, normally stops it first with OutOfpods).
DENSITY_CAP = 512
POD_LEVEL_GATES = ("PodLevelResources", "PodLevelResourceManagers")


#: the fields of :class:`Measurement`, in order
_MEASUREMENT_FIELDS = (
    "label",
    "scope",
    "gates_forced",
    "startup_error",
    "qos_class",
    "admitted",
    "reason",
    "message",
    "exclusive_cpus",
    "pod_shared_cpus",
    "node_shared_containers",
    "sidecar_only_cpus",
    "held_cpus",
    "memory_bytes",
    "hugepages_bytes",
    "numa_nodes",
    "density",
    "density_stop",
    "density_stop_message",
    "density_capped",
    "containers",
    "pod_allocation",
)


class Measurement:
    """One form of a pod under one configuration, on an empty node."""

    label: str
    scope: str
    gates_forced: tuple[str, ...]
    startup_error: str | None
    qos_class: str | None
    admitted: bool
    reason: str | None
    message: str | None
    # isolation "container", long-running containers (app containers, sidecars)
    exclusive_cpus: CPUSet
    pod_shared_cpus: CPUSet  # isolation "pod", long-running
    node_shared_containers: tuple[str, ...]  # isolation "host", long-running
    sidecar_only_cpus: CPUSet  # exclusive CPUs of sidecars
    held_cpus: CPUSet  # taken out of the node's shared pool
    memory_bytes: int  # memory pinned for the pod (the resource memory: huge pages apart)
    hugepages_bytes: tuple[tuple[str, int], ...]  # (hugepages-SIZE, bytes) pinned, by resource
    numa_nodes: tuple[int, ...]
    density: int
    density_stop: str | None  # reason of the first rejected copy
    density_stop_message: str | None
    density_capped: bool
    containers: tuple[ContainerResult, ...]
    pod_allocation: PodAllocation | None

    def __init__(
        self,
        label: str,
        scope: str,
        gates_forced: tuple[str, ...] = (),
        startup_error: str | None = None,
        qos_class: str | None = None,
        admitted: bool = False,
        reason: str | None = None,
        message: str | None = None,
        exclusive_cpus: CPUSet | None = None,
        pod_shared_cpus: CPUSet | None = None,
        node_shared_containers: tuple[str, ...] = (),
        sidecar_only_cpus: CPUSet | None = None,
        held_cpus: CPUSet | None = None,
        memory_bytes: int = 0,
        hugepages_bytes: tuple[tuple[str, int], ...] = (),
        numa_nodes: tuple[int, ...] = (),
        density: int = 0,
        density_stop: str | None = None,
        density_stop_message: str | None = None,
        density_capped: bool = False,
        containers: tuple[ContainerResult, ...] = (),
        pod_allocation: PodAllocation | None = None,
    ) -> None:
        # written out, with the comparison, the hash, the repr and replace() (a
        # ``dataclass`` would make them when the module is imported, on every
        # command's start)
        self.label = label
        self.scope = scope
        self.gates_forced = gates_forced
        self.startup_error = startup_error
        self.qos_class = qos_class
        self.admitted = admitted
        self.reason = reason
        self.message = message
        self.exclusive_cpus = CPUSet() if exclusive_cpus is None else exclusive_cpus
        self.pod_shared_cpus = CPUSet() if pod_shared_cpus is None else pod_shared_cpus
        self.node_shared_containers = node_shared_containers
        self.sidecar_only_cpus = CPUSet() if sidecar_only_cpus is None else sidecar_only_cpus
        self.held_cpus = CPUSet() if held_cpus is None else held_cpus
        self.memory_bytes = memory_bytes
        self.hugepages_bytes = hugepages_bytes
        self.numa_nodes = numa_nodes
        self.density = density
        self.density_stop = density_stop
        self.density_stop_message = density_stop_message
        self.density_capped = density_capped
        self.containers = containers
        self.pod_allocation = pod_allocation

    def _fields(self) -> tuple[Any, ...]:
        return (self.label, self.scope, self.gates_forced, self.startup_error,
                self.qos_class, self.admitted, self.reason, self.message,
                self.exclusive_cpus, self.pod_shared_cpus, self.node_shared_containers,
                self.sidecar_only_cpus, self.held_cpus, self.memory_bytes,
                self.hugepages_bytes, self.numa_nodes, self.density, self.density_stop,
                self.density_stop_message, self.density_capped, self.containers,
                self.pod_allocation)

    def __repr__(self) -> str:
        values = ", ".join(f"{n}={v!r}" for n, v in zip(_MEASUREMENT_FIELDS, self._fields(), strict=True))
        return f"{type(self).__qualname__}({values})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Measurement) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def replace(self, **changes: Any) -> Measurement:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values: dict[str, Any] = dict(zip(_MEASUREMENT_FIELDS, self._fields(), strict=True))
        values.update(changes)
        return Measurement(**values)

    def exclusive_by_container(self) -> dict[str, CPUSet]:
        return {c.name: c.cpus for c in self.containers if c.isolation == "container"}

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "form": self.label,
            "scope": self.scope,
            "gatesForced": list(self.gates_forced),
            "startupError": self.startup_error,
            "qosClass": self.qos_class,
            "admitted": self.admitted,
            "reason": self.reason,
            "message": self.message,
            "exclusiveCpus": {"count": self.exclusive_cpus.size(), "cpus": str(self.exclusive_cpus)},
            "podSharedCpus": {"count": self.pod_shared_cpus.size(), "cpus": str(self.pod_shared_cpus)},
            "nodeSharedContainers": list(self.node_shared_containers),
            "sidecarOnlyCpus": {
                "count": self.sidecar_only_cpus.size(),
                "cpus": str(self.sidecar_only_cpus),
            },
            "heldCpus": {"count": self.held_cpus.size(), "cpus": str(self.held_cpus)},
            "memoryBytes": self.memory_bytes,
            "hugepagesBytes": dict(self.hugepages_bytes),
            "numaNodes": list(self.numa_nodes),
            "density": self.density,
            "densityStop": self.density_stop,
            "densityStopMessage": self.density_stop_message,
            "densityCapped": self.density_capped,
            "podAllocation": None if self.pod_allocation is None else str(self.pod_allocation.cpus),
            "containers": [
                {
                    "name": c.name,
                    "type": c.type,
                    "cpus": str(c.cpus),
                    "isolation": c.isolation,
                    "memory": sum(b.size for b in c.memory if b.type == MEMORY),
                    "hugepages": _by_resource(b for b in c.memory if b.type != MEMORY),
                    "mems": list(c.mems),
                }
                for c in self.containers
            ],
        }


def _by_resource(blocks: Iterable[MemoryBlock]) -> dict[str, int]:
    """The bytes of ``blocks`` by resource (``hugepages-2Mi``), sorted."""
    out: dict[str, int] = {}
    for b in blocks:
        out[b.type] = out.get(b.type, 0) + b.size
    return dict(sorted(out.items()))


def variant_config(
    config: KubeletConfig, *, scope: str, pod_level: bool
) -> tuple[KubeletConfig, tuple[str, ...]]:
    """``config`` with ``topologyManagerScope: scope`` and, when
    ``pod_level``, the gates PodLevelResources and PodLevelResourceManagers
    turned on. Returns the config and the gates it had to turn on.

    Raises ``KubeletStartupError`` when the gates cannot be set so.
    """
    forced: list[str] = []
    gates = config.feature_gates
    if pod_level:
        settings: dict[str, bool] = dict(gates.explicit())
        for g in POD_LEVEL_GATES:
            if not gates.enabled(g):
                forced.append(g)
            settings[g] = True
        if forced:
            gates = FeatureGates.from_mapping(settings)
    return config.replace(feature_gates=gates, topology_manager_scope=scope), tuple(forced)


def copy_name(name: str, i: int) -> str:
    """The name of the ``i``-th copy (from 1) of a pod named ``name`` as
    :func:`measure` adds it: ``NAME-i``, the name cut to keep it within 253
    characters (a valid name, unique all the same)."""
    out = f"{name}-{i}"
    return out if len(out) <= 253 else f"{name[: 253 - len(str(i)) - 1]}-{i}"


def _copy(pod: Pod, i: int) -> Pod:
    if i == 0:
        return pod
    name = copy_name(pod.name, i)
    return pod.replace(name=name, uid=derive_pod_uid(pod.namespace, name))


def measure(
    machine: Machine,
    config: KubeletConfig,
    pod: Pod,
    *,
    label: str,
    sidecars: Collection[str] = (),
    gates_forced: tuple[str, ...] = (),
    cap: int = DENSITY_CAP,
) -> Measurement:
    """Admit ``pod`` on an empty node, then copies of it until one is
    rejected (at most ``cap`` in all)."""
    scope = config.topology_manager_scope
    try:
        node = Node(machine, config)
    except KubeletStartupError as e:
        return Measurement(label=label, scope=scope, gates_forced=gates_forced, startup_error=str(e))
    before = node.cpu.state.get_default_cpuset()
    first = node.add_pod(pod, 0)
    side = set(sidecars) | {c.name for c in pod.init_containers if c.is_sidecar}
    exclusive = CPUSet()
    pod_shared = CPUSet()
    sidecar_only = CPUSet()
    host: list[str] = []
    for c in first.containers:
        if c.type == "init":
            continue  # runs to completion before the others; its CPUs are reused
        if c.isolation == "container":
            exclusive = exclusive | c.cpus
            if c.name in side:
                sidecar_only = sidecar_only | c.cpus
        elif c.isolation == "pod":
            pod_shared = pod_shared | c.cpus
        else:
            host.append(c.name)
    # CPUs of an exclusive sidecar also used by a non-sidecar are not sidecar-only.
    for c in first.containers:
        if c.name not in side and c.type != "init" and c.isolation == "container":
            sidecar_only = sidecar_only - c.cpus
    held = before - first.default_cpuset if first.admitted else CPUSet()
    numa = {machine.topology.cpu_info[cpu].numa_node for cpu in held.list()}
    blocks = list(first.pod_allocation.memory) if first.pod_allocation is not None else []
    pinned: list[MemoryBlock] = []
    if first.pod_allocation is not None and first.pod_allocation.memory:
        pinned = list(first.pod_allocation.memory)
    else:
        # Classic pods: one block list per container; init containers' blocks
        # are reused by later containers, so count the long-running ones.
        for c in first.containers:
            blocks.extend(c.memory)
            if c.type != "init":
                pinned.extend(c.memory)
    for b in blocks:
        numa.update(b.numa_nodes)
    # memory and each huge page size apart: different resources, different
    # pools on the node (and different rejections: OutOfhugepages-2Mi)
    memory = sum(b.size for b in pinned if b.type == MEMORY)
    hugepages = tuple(_by_resource(b for b in pinned if b.type != MEMORY).items())

    density = 0
    stop: str | None = None
    stop_message: str | None = None
    capped = False
    if first.admitted:
        density = 1
        while True:
            if density >= cap:
                capped = True
                break
            r = node.add_pod(_copy(pod, density), density)
            if not r.admitted:
                stop, stop_message = r.reason, r.message
                break
            density += 1
    else:
        stop, stop_message = first.reason, first.message
    return Measurement(
        label=label,
        scope=scope,
        gates_forced=gates_forced,
        qos_class=first.qos_class,
        admitted=bool(first.admitted),
        reason=first.reason,
        message=first.message,
        exclusive_cpus=exclusive,
        pod_shared_cpus=pod_shared,
        node_shared_containers=tuple(host),
        sidecar_only_cpus=sidecar_only,
        held_cpus=held,
        memory_bytes=memory,
        hugepages_bytes=hugepages,
        numa_nodes=tuple(sorted(numa)),
        density=density,
        density_stop=stop,
        density_stop_message=stop_message,
        density_capped=capped,
        containers=first.containers,
        pod_allocation=first.pod_allocation,
    )


def measure_manifest(
    machine: Machine,
    config: KubeletConfig,
    manifest: Mapping[str, Any],
    *,
    label: str,
    scope: str,
    pod_level: bool,
    sidecars: Collection[str] = (),
    cap: int = DENSITY_CAP,
) -> Measurement:
    """Parse ``manifest`` under the variant configuration and measure it.

    Raises ``KubeletStartupError`` (gates) or ``InputError`` (the manifest
    is not a valid pod under those gates).
    """
    cfg, forced = variant_config(config, scope=scope, pod_level=pod_level)
    pod = parse_pod(manifest, gates=cfg.feature_gates, sort_keys=True)
    return measure(machine, cfg, pod, label=label, sidecars=sidecars, gates_forced=forced, cap=cap)
