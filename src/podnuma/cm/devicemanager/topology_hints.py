"""Device-plugin topology hints.

Mirrors ``pkg/kubelet/cm/devicemanager/topology_hints.go`` (v1.37):
``GetTopologyHints``, ``GetPodTopologyHints``, ``deviceHasTopologyAlignment``,
``generateDeviceTopologyHints``, ``getNUMANodeIds``,
``getContainerDeviceRequest`` and ``getPodDeviceRequest``.

The functions here read the device manager's state through
:class:`DeviceStateView` (``podnuma.cm.devicemanager.manager.DeviceManager``
implements it); they never change it, except for the stale-state collection
the manager runs before computing hints.

A device whose ``numa_nodes`` is empty has no topology: it never makes a
resource "aligned", and it never lies inside a NUMA mask. Upstream tells a
nil ``TopologyInfo`` from one with an empty node list; podnuma's empty tuple
is the nil one (the two differ only for a *reusable* device, which nil
skips while an empty list would drop every mask).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

from podnuma.api.pod import Container, Pod
from podnuma.api.resources import aggregate_container_limits
from podnuma.cm.topologymanager.bitmask import iterate_bit_masks
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.mask_tables import check_mask_bits, check_mask_nodes
from podnuma.machine.topology import Device

__all__ = [
    "DeviceHints",
    "DeviceStateView",
    "device_numa_mask",
    "device_has_topology_alignment",
    "generate_device_topology_hints",
    "container_device_request",
    "pod_device_request",
    "container_topology_hints",
    "pod_topology_hints",
]

# resource name -> hints; ``None`` (nil: no topology preference) differs from ``[]``.
DeviceHints = dict[str, list[TopologyHint] | None]


class DeviceStateView(Protocol):
    """What the hint functions read from the device manager."""

    @property
    def numa_ids(self) -> Sequence[int]: ...

    def registered_devices(self, resource: str) -> Mapping[str, Device]: ...

    def is_device_plugin_resource(self, resource: str) -> bool: ...

    def available_devices(self, resource: str) -> frozenset[str]: ...

    def reusable_devices(self, pod_uid: str, resource: str) -> frozenset[str]: ...

    def container_devices(self, pod_uid: str, container_name: str, resource: str) -> tuple[str, ...] | None: ...

    def pod_devices(self, pod_uid: str, resource: str) -> frozenset[str]: ...


#: the width of the kubelet's hint masks (``bitmask.BitMask`` is a uint64)
_MASK_BITS = 64


def device_numa_mask(device: Device) -> int:
    """The NUMA nodes a device is local to, as an int mask (0: no topology, or
    only ids that no hint mask holds). Upstream tests a device against a mask
    with ``IsSet``/``AnySet``, false for a bit below 0 or at 64 and above; so
    such an id (a plugin may report any int64) gets no bit here, and the mask
    stays within 64 bits."""
    mask = 0
    for node in device.numa_nodes:
        if 0 <= node < _MASK_BITS:
            mask |= 1 << node
    return mask


def device_has_topology_alignment(devices: Iterable[Device]) -> bool:
    """``deviceHasTopologyAlignment``: some registered device of the resource
    names at least one NUMA node."""
    return any(d.numa_nodes for d in devices)


def generate_device_topology_hints(
    numa_ids: Sequence[int],
    all_devices: Mapping[str, Device],
    available: Collection[str],
    reusable: Collection[str],
    request: int,
) -> list[TopologyHint]:
    """``generateDeviceTopologyHints``.

    Every mask over the NUMA nodes that host devices of the resource (all
    of size 1 first, then 2, …) that holds at least
    ``request`` devices among ``available`` and ``reusable`` becomes a hint;
    a mask that misses one of the reusable devices (with topology) is
    dropped. A hint is preferred when its width equals the narrowest width
    that *all registered* devices of the resource (allocated ones included)
    could serve -- not the narrowest among the hints.
    """
    # v1.37.2 (deviceNUMANodes): only the NUMA nodes hosting a device of the
    # resource (and known to the machine) are combined; all nodes when no
    # device has topology. Masks naming device-less nodes never become hints.
    known = set(numa_ids)
    hosting = sorted({n for d in all_devices.values() for n in d.numa_nodes if n in known})
    nodes = hosting or list(numa_ids)
    check_mask_nodes(len(nodes))
    check_mask_bits("[devicemanager] generateDeviceTopologyHints", nodes)

    all_masks = [device_numa_mask(d) for d in all_devices.values()]
    avail_masks = [device_numa_mask(all_devices[d]) for d in available if d in all_devices]
    # Reproduced: a reusable device without topology is skipped, not counted
    # (one whose ids are all off the machine counts, and fits no mask).
    reuse_masks = [
        device_numa_mask(all_devices[d]) for d in reusable if d in all_devices and all_devices[d].numa_nodes
    ]
    min_affinity_size = len(nodes)
    hints: list[TopologyHint] = []
    for mask in iterate_bit_masks(nodes):
        bits = mask.value
        in_mask = sum(1 for m in all_masks if m & bits)
        if in_mask >= request and mask.count() < min_affinity_size:
            min_affinity_size = mask.count()

        if any(not (m & bits) for m in reuse_masks):
            continue
        matching = len(reuse_masks) + sum(1 for m in avail_masks if m & bits)
        if matching < request:
            continue
        hints.append(TopologyHint(mask, False))

    return [TopologyHint(h.numa_node_affinity, True)
            if h.numa_node_affinity is not None and h.numa_node_affinity.count() == min_affinity_size
            else h for h in hints]


def container_device_request(container: Container, view: DeviceStateView) -> dict[str, int]:
    """``getContainerDeviceRequest``: the container's limits of device-plugin
    resources (requests equal limits for extended resources)."""
    return {
        name: qty.value()
        for name, qty in container.limits.items()
        if view.is_device_plugin_resource(name)
    }


def pod_device_request(pod: Pod, view: DeviceStateView) -> dict[str, int]:
    """``getPodDeviceRequest``: ``PodLimits`` without overhead, restricted to
    device-plugin resources: max(largest init container + the sidecars
    started before it, app containers + all sidecars). Pod-level resources
    never name device resources, so the container aggregate is the answer."""
    return {
        name: qty.value()
        for name, qty in sorted(aggregate_container_limits(pod).items())
        if view.is_device_plugin_resource(name)
    }


def container_topology_hints(view: DeviceStateView, pod: Pod, container: Container) -> DeviceHints:
    """``GetTopologyHints`` (after the caller collected stale state)."""
    hints: DeviceHints = {}
    for resource, requested in sorted(container_device_request(container, view).items()):
        devices = view.registered_devices(resource)
        if not device_has_topology_alignment(devices.values()):
            hints[resource] = None
            continue
        allocated = view.container_devices(pod.uid, container.name, resource)
        if allocated:
            if len(allocated) != requested:
                hints[resource] = []
                continue
            # Re-admission (e.g. after a kubelet restart): hints over what the
            # container already holds.
            hints[resource] = generate_device_topology_hints(
                view.numa_ids, devices, frozenset(allocated), (), requested
            )
            continue
        available = view.available_devices(resource)
        reusable = view.reusable_devices(pod.uid, resource)
        if len(available | reusable) < requested:
            hints[resource] = []
            continue
        hints[resource] = generate_device_topology_hints(
            view.numa_ids, devices, available, reusable, requested
        )
    return hints


def pod_topology_hints(view: DeviceStateView, pod: Pod) -> DeviceHints:
    """``GetPodTopologyHints`` (after the caller collected stale state).
    Unlike the container variant, devices reusable from init containers do
    not count."""
    hints: DeviceHints = {}
    for resource, requested in pod_device_request(pod, view).items():
        devices = view.registered_devices(resource)
        if not device_has_topology_alignment(devices.values()):
            hints[resource] = None
            continue
        allocated = view.pod_devices(pod.uid, resource)
        if allocated:
            if len(allocated) != requested:
                hints[resource] = []
                continue
            hints[resource] = generate_device_topology_hints(
                view.numa_ids, devices, allocated, (), requested
            )
            continue
        available = view.available_devices(resource)
        if len(available) < requested:
            hints[resource] = []
            continue
        hints[resource] = generate_device_topology_hints(
            view.numa_ids, devices, available, (), requested
        )
    return hints
