"""The device manager: device-plugin resources, without plugins or I/O.

Mirrors ``pkg/kubelet/cm/devicemanager/manager.go`` (v1.37) and the parts of
``pod_devices.go`` it relies on:

* ``Allocate`` / ``allocateContainerResources`` / ``devicesToAllocate``:
  devices already held by the container are kept (a changed count is an
  error); devices of regular init containers are reused by the containers
  after them (``devicesToReuse``), sidecars keep theirs; then the devices of
  the NUMA nodes of the container's stored topology hint go first
  (``filterByAffinity``), then the other NUMA nodes, then devices without
  topology.
* ``UpdateAllocatedDevices``: devices of pods that are no longer active are
  freed (whole pods only: the device manager has no ``RemoveContainer``).
* ``GetCapacity`` / ``sanitizeNodeAllocatable`` (``UpdatePluginResources``):
  what the node reports as allocatable for each resource.

The machine's devices are the registered, healthy devices of each resource
(one device plugin per resource name, always connected, no
``GetPreferredAllocation``). Upstream draws devices out of Go sets, in
random order; podnuma makes the choice deterministic (see
:meth:`DeviceManager._filter_by_affinity`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final

from podnuma.api.pod import Container, Pod
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.active import ActiveContainers
from podnuma.cm.devicemanager.topology_hints import (
    DeviceHints,
    container_topology_hints,
    device_has_topology_alignment,
    pod_topology_hints,
)
from podnuma.cm.topologymanager.manager import HintProvider
from podnuma.cm.topologymanager.store import Store
from podnuma.errors import PodnumaError
from podnuma.golang.strconv import go_quote
from podnuma.machine.topology import Device, Machine

__all__ = [
    "ActiveContainers",
    "DeviceManager",
    "DeviceManagerError",
    "NODE_WITHOUT_TOPOLOGY",
    "PROVIDER_NAME",
]

PROVIDER_NAME: Final = "device"

# The fake NUMA node upstream files devices without topology under.
NODE_WITHOUT_TOPOLOGY: Final = -1


class DeviceManagerError(PodnumaError):
    """An allocation failure. It carries no admission reason: the topology
    manager reports it as ``UnexpectedAdmissionError`` with the message
    "Allocate failed due to <str(err)>, which is unexpected"."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class DeviceManager(HintProvider):
    """``devicemanager.ManagerImpl`` over a static set of healthy devices.

    ``active_pods`` plays ``ActivePodsFunc`` with sources ready: when given,
    devices of pods outside it are freed before hints and allocations; when
    ``None``, never (sources not ready).
    """

    def __init__(
        self,
        machine: Machine,
        affinity: Store,
        *,
        active_pods: Callable[[], ActiveContainers] | None = None,
    ) -> None:
        self.affinity = affinity
        self.active_pods = active_pods
        self._numa_ids: tuple[int, ...] = tuple(machine.numa_ids())
        # resource -> device id -> device, in registration order
        self._all: dict[str, dict[str, Device]] = {}
        # resource -> device id -> registration index (the tie-breaker of every choice)
        self._rank: dict[str, dict[str, int]] = {}
        self._healthy: dict[str, frozenset[str]] = {}
        for resource, devices in machine.devices.items():
            by_id: dict[str, Device] = {}
            for dev in devices:
                by_id.setdefault(dev.id, dev)
            self._all[resource] = by_id
            self._rank[resource] = {d: i for i, d in enumerate(by_id)}
            self._healthy[resource] = frozenset(by_id)
        # pod UID -> container -> resource -> device ids in allocation order
        self._pod_devices: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {}
        # resource -> ids in use (``allocatedDevices``)
        self._allocated: dict[str, set[str]] = {}
        # pod UID -> resource -> ids reusable by the next containers (``devicesToReuse``)
        self._reuse: dict[str, dict[str, set[str]]] = {}

    # -- HintProvider ------------------------------------------------------------
    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    def get_topology_hints(
        self, pod: Pod, container: Container, *, active: ActiveContainers | None = None
    ) -> DeviceHints:
        """``GetTopologyHints``: hints per device-plugin resource the container
        asks for (an empty map when it asks for none)."""
        self.remove_stale_state(active)
        return container_topology_hints(self, pod, container)

    def get_pod_topology_hints(
        self, pod: Pod, *, active: ActiveContainers | None = None
    ) -> DeviceHints:
        """``GetPodTopologyHints``."""
        self.remove_stale_state(active)
        return pod_topology_hints(self, pod)

    def allocate(self, pod: Pod, container: Container, *, active: ActiveContainers | None = None) -> None:
        """``Allocate``: raises :class:`DeviceManagerError` on failure."""
        if not self._healthy and not self._allocated and not self._pod_devices:
            # no device-plugin resource anywhere: nothing to allocate or
            # reuse, only the reusable-devices record moves to this pod
            self._reuse.setdefault(pod.uid, {})
            if len(self._reuse) > 1:
                for uid in [u for u in self._reuse if u != pod.uid]:
                    del self._reuse[uid]
            return
        reuse = self._reuse.setdefault(pod.uid, {})
        # Only the pod being admitted keeps reusable devices.
        for uid in [u for u in self._reuse if u != pod.uid]:
            del self._reuse[uid]
        init = next((c for c in pod.init_containers if c.name == container.name), None)
        self._allocate_container_resources(pod, container, reuse, active)
        if init is not None and not init.is_sidecar:
            self._add_container_allocated(pod.uid, container.name, reuse)
        else:
            # Sidecars and app containers keep their devices for themselves.
            self._remove_container_allocated(pod.uid, container.name, reuse)

    def allocate_pod(self, pod: Pod) -> None:
        """``AllocatePod``: nothing. For a pod admitted through the pod-level
        path (pod scope, ``PodLevelResourceManagers``), the device manager
        assigns no devices at admission; the kubelet allocates them when each
        container starts (``GetDeviceRunContainerOptions`` re-issues
        ``Allocate`` for devices it has no record of), aligned with the pod's
        stored hint."""

    # -- lifecycle -------------------------------------------------------------------
    def remove_stale_state(self, active: ActiveContainers | None = None) -> None:
        """``UpdateAllocatedDevices``: free the devices of every pod that is
        not active (containers of an active pod keep theirs)."""
        if active is None:
            if self.active_pods is None:
                return
            active = self.active_pods()
        stale = [uid for uid in self._pod_devices if uid not in active]
        if not stale:
            return
        for uid in stale:
            del self._pod_devices[uid]
        self._allocated = self._devices_in_use()

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        """Nothing: the kubelet's device manager has no ``RemoveContainer``;
        a container's devices stay allocated until its pod is no longer
        active (:meth:`remove_stale_state`)."""

    def remove_pod(self, pod_uid: str) -> None:
        """Forget a pod at once, as ``UpdateAllocatedDevices`` does once the
        pod has left the active pods."""
        self._reuse.pop(pod_uid, None)
        if self._pod_devices.pop(pod_uid, None) is not None:
            self._allocated = self._devices_in_use()

    def insert_allocation(
        self, pod_uid: str, container_name: str, resource: str, device_ids: Sequence[str]
    ) -> None:
        """Record devices as allocated to a container (checkpoint restore;
        ``podDevices.insert`` + ``allocatedDevices``)."""
        self._pod_devices.setdefault(pod_uid, {}).setdefault(container_name, {})[resource] = tuple(device_ids)
        self._allocated.setdefault(resource, set()).update(device_ids)

    def restore(
        self,
        pods: Mapping[str, Mapping[str, Mapping[str, Sequence[str]]]],
        registered: Iterable[str] = (),
    ) -> None:
        """``readCheckpoint`` (see :mod:`podnuma.cm.devicemanager.checkpoint`):
        ``pods`` (pod UID -> container -> resource -> device ids) become the
        pod devices and the devices in use; each ``registered`` resource is
        registered, with no healthy device unless its plugin registers again
        (the machine's resources: their plugins always do)."""
        for uid, containers in pods.items():
            for name, resources in containers.items():
                for resource, ids in resources.items():
                    self._pod_devices.setdefault(uid, {}).setdefault(name, {})[resource] = tuple(ids)
        self._allocated = self._devices_in_use()
        for resource in registered:
            self._healthy.setdefault(resource, frozenset())

    # -- readers -------------------------------------------------------------------------
    def devices_of(self, pod_uid: str, container_name: str) -> dict[str, tuple[str, ...]]:
        """The container's devices per resource, in allocation order."""
        by_container = self._pod_devices.get(pod_uid)
        found = by_container.get(container_name) if by_container else None
        return dict(sorted(found.items())) if found else {}

    def has_pod(self, pod_uid: str) -> bool:
        """``podDevices.hasPod``."""
        return any(self._pod_devices.get(pod_uid, {}).values())

    def allocated_devices(self, resource: str) -> frozenset[str]:
        return frozenset(self._allocated.get(resource, ()))

    def allocatable_counts(self) -> dict[str, int]:
        """``GetCapacity``'s allocatable: the number of healthy devices of each
        registered resource (capacity adds unhealthy ones; podnuma has none)."""
        return {resource: len(ids) for resource, ids in self._healthy.items()}

    def sanitize_node_allocatable(self, allocatable: Mapping[str, int]) -> dict[str, int]:
        """``sanitizeNodeAllocatable``: raise each resource's allocatable to at
        least the number of its devices in use, so that pods already holding
        devices pass the fit check even if the plugin lost some."""
        out = dict(allocatable)
        for resource, ids in self._allocated.items():
            if resource in out and out[resource] >= len(ids):
                continue
            out[resource] = len(ids)
        return out

    def update_plugin_resources(self, pod_uid: str, allocatable: Mapping[str, int]) -> dict[str, int]:
        """``UpdatePluginResources``: the node allocatable the predicate
        handler checks ``pod_uid`` against (sanitized only when the pod holds
        devices)."""
        if not self.has_pod(pod_uid):
            return dict(allocatable)
        return self.sanitize_node_allocatable(allocatable)

    # -- DeviceStateView -------------------------------------------------------------
    @property
    def numa_ids(self) -> Sequence[int]:
        return self._numa_ids

    def registered_devices(self, resource: str) -> Mapping[str, Device]:
        return self._all.get(resource, {})

    def is_device_plugin_resource(self, resource: str) -> bool:
        """``isDevicePluginResource``: registered, or holding allocations."""
        return resource in self._healthy or resource in self._allocated

    def available_devices(self, resource: str) -> frozenset[str]:
        """``getAvailableDevices``: healthy minus in use."""
        return self._healthy.get(resource, frozenset()) - self._allocated.get(resource, set())

    def reusable_devices(self, pod_uid: str, resource: str) -> frozenset[str]:
        return frozenset(self._reuse.get(pod_uid, {}).get(resource, ()))

    def container_devices(self, pod_uid: str, container_name: str, resource: str) -> tuple[str, ...] | None:
        """``podDevices.containerDevices`` (``None`` when there is no entry)."""
        containers = self._pod_devices.get(pod_uid)
        if containers is None:
            return None
        resources = containers.get(container_name)
        return None if resources is None else resources.get(resource)

    def pod_devices(self, pod_uid: str, resource: str) -> frozenset[str]:
        """``podDevices.podDevices``: the union over the pod's containers."""
        out: set[str] = set()
        for resources in self._pod_devices.get(pod_uid, {}).values():
            out.update(resources.get(resource, ()))
        return frozenset(out)

    # -- allocation ----------------------------------------------------------------------
    def _devices_in_use(self) -> dict[str, set[str]]:
        """``podDevices.devices()``."""
        out: dict[str, set[str]] = {}
        for containers in self._pod_devices.values():
            for resources in containers.values():
                for resource, ids in resources.items():
                    out.setdefault(resource, set()).update(ids)
        return out

    def _add_container_allocated(self, pod_uid: str, name: str, reuse: dict[str, set[str]]) -> None:
        for resource, ids in self._pod_devices.get(pod_uid, {}).get(name, {}).items():
            reuse.setdefault(resource, set()).update(ids)

    def _remove_container_allocated(self, pod_uid: str, name: str, reuse: dict[str, set[str]]) -> None:
        for resource, ids in self._pod_devices.get(pod_uid, {}).get(name, {}).items():
            reuse[resource] = reuse.get(resource, set()) - set(ids)

    def _allocate_container_resources(
        self,
        pod: Pod,
        container: Container,
        reuse: Mapping[str, set[str]],
        active: ActiveContainers | None,
    ) -> None:
        """``allocateContainerResources``. Upstream walks the limits in Go map
        order; podnuma goes by resource name. A failure leaves the resources
        already allocated to the container in place (as upstream)."""
        collected = False
        for resource, qty in container.limits.items():
            needed = qty.value()
            if not self.is_device_plugin_resource(resource):
                continue
            if not collected:
                self.remove_stale_state(active)
                collected = True
            devices = self._devices_to_allocate(
                pod.uid, container.name, resource, needed, reuse.get(resource, set())
            )
            if not devices:
                continue
            if resource not in self._healthy:
                # No endpoint for the resource.
                self._allocated = self._devices_in_use()
                raise DeviceManagerError(f"unknown Device Plugin {resource}")
            self._pod_devices.setdefault(pod.uid, {}).setdefault(container.name, {})[resource] = devices

    def _ordered(self, resource: str, ids: Iterable[str]) -> list[str]:
        rank = self._rank.get(resource, {})
        return sorted(ids, key=lambda d: (rank.get(d, len(rank)), d))

    def _devices_to_allocate(
        self, pod_uid: str, name: str, resource: str, required: int, reusable: AbstractSet[str]
    ) -> tuple[str, ...]:
        """``devicesToAllocate``: the devices to hand to the container, in
        the order they are taken (empty when nothing is to be allocated)."""
        needed = required
        held = self.container_devices(pod_uid, name, resource)
        if held is not None:
            needed -= len(held)
            if needed != 0:
                raise DeviceManagerError(
                    f"pod {go_quote(pod_uid)} container {go_quote(name)} changed request for "
                    f"resource {go_quote(resource)} from {len(held)} to {required}"
                )
        healthy = self._healthy.get(resource)
        if healthy is None:
            raise DeviceManagerError(f"cannot allocate unregistered device {resource}")
        if not healthy:
            raise DeviceManagerError(f"no healthy devices present; cannot allocate unhealthy devices {resource}")
        if held is not None and not healthy.issuperset(held):
            raise DeviceManagerError(
                "previously allocated devices are no longer healthy; "
                f"cannot allocate unhealthy devices {resource}"
            )
        if needed == 0:
            return ()

        in_use = self._allocated.setdefault(resource, set())
        taken: list[str] = []
        taken_set: set[str] = set()

        def take_from(candidates: Iterable[str]) -> bool:
            nonlocal needed
            for dev in candidates:
                if dev in taken_set:
                    continue
                in_use.add(dev)
                taken.append(dev)
                taken_set.add(dev)
                needed -= 1
                if needed == 0:
                    return True
            return False

        # Devices left by regular init containers first.
        if take_from(self._ordered(resource, reusable)):
            return tuple(taken)

        available = self._ordered(resource, healthy - in_use)
        if len(available) < needed:
            raise DeviceManagerError(
                f"requested number of devices unavailable for {resource}. "
                f"Requested: {needed}, Available: {len(available)}"
            )
        aligned, unaligned, no_affinity = self._filter_by_affinity(pod_uid, name, resource, available)
        # Where the device manager leaves the choice to the plugin
        # (GetPreferredAllocation over the aligned devices when they are more
        # than needed, else over every available device once the aligned ones
        # are taken), the plugin podnuma assumes prefers the devices in the
        # order the node lists them (the oracle's plugin does the same).
        if needed < len(aligned):
            if take_from(self._ordered(resource, aligned)):
                return tuple(taken)
        else:
            if take_from(aligned):
                return tuple(taken)
            if take_from(available):  # registration order, the aligned ones taken
                return tuple(taken)
        raise DeviceManagerError(
            "unexpectedly allocated less resources than required. "
            f"Requested: {required}, Got: {required - needed}"
        )

    def _filter_by_affinity(
        self, pod_uid: str, name: str, resource: str, available: Sequence[str]
    ) -> tuple[list[str], list[str], list[str]]:
        """``filterByAffinity``: split ``available`` into devices on the NUMA
        nodes of the container's hint, devices on other NUMA nodes, and
        devices without topology.

        Without a hint affinity (or when no device of the resource has
        topology) every device lands in the third group. NUMA nodes are
        ranked as upstream sorts them -- hint nodes first, then the others,
        each by ascending number of available devices (ties: lower node id,
        where Go's unstable sort leaves it open), the fake node -1 last -- and
        a device on several nodes goes with the first of them. Upstream then
        returns sets and picks from them in Go's random order; podnuma keeps
        the ranking it computed: node by node, each node's devices in
        registration order.
        """
        hint = self.affinity.get_affinity(pod_uid, name)
        devices = self._all.get(resource, {})
        affinity = hint.numa_node_affinity
        if affinity is None or not device_has_topology_alignment(devices.values()):
            return [], [], list(available)

        per_node: dict[int, list[str]] = {}
        for dev in available:
            nodes = devices[dev].numa_nodes
            if not nodes:
                per_node.setdefault(NODE_WITHOUT_TOPOLOGY, []).append(dev)
                continue
            for node in dict.fromkeys(nodes):
                per_node.setdefault(node, []).append(dev)

        def rank(node: int) -> tuple[int, int, int]:
            if node == NODE_WITHOUT_TOPOLOGY:
                return (2, 0, 0)
            group = 0 if affinity.is_set(node) else 1
            return (group, len(per_node[node]), node)

        aligned: list[str] = []
        unaligned: list[str] = []
        without: list[str] = []
        placed: set[str] = set()
        for node in sorted(per_node, key=rank):
            if node == NODE_WITHOUT_TOPOLOGY:
                target = without
            elif affinity.is_set(node):
                target = aligned
            else:
                target = unaligned
            for dev in per_node[node]:
                if dev not in placed:
                    placed.add(dev)
                    target.append(dev)
        return aligned, unaligned, without
