"""PodResources data <-> PodResources v1 messages.

Messages are built the way the kubelet's server fills them
(``pkg/kubelet/apis/podresources/server_v1.go``): every pod and container
gets its name and its lists (empty lists are simply absent on the wire);
memory blocks always carry a topology, devices only when the device has
NUMA affinity; ``dynamic_resources`` stays empty (podnuma has no DRA).

The way back (:func:`pod_resources_doc` and friends) gives plain data with
the protobuf JSON field names (``cpuIds``, ``memoryType``, ``ID``) but
numbers as numbers, the shape of ``podResources`` in podnuma's JSON
document, so a listing from the socket compares equal to a simulation's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from podnuma.cm.podresources_view import (
    AllocatableResources,
    ContainerDevices,
    ContainerMemory,
    PodResources,
)
from podnuma.errors import InputError
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.inputs.discover._fields import MAX_NUMA_NODES
from podnuma.machine.cpuset import MAX_CPU_ID

__all__ = [
    "allocatable_message",
    "allocatable_doc",
    "pod_resources_message",
    "pod_resources_doc",
]


def _topology(nodes: tuple[int, ...]) -> pb.TopologyInfo:
    return pb.TopologyInfo(nodes=[pb.NUMANode(ID=n) for n in nodes])


def _memory(m: ContainerMemory) -> pb.ContainerMemory:
    return pb.ContainerMemory(memory_type=m.memory_type, size=m.size, topology=_topology(m.numa_nodes))


def _devices(d: ContainerDevices) -> pb.ContainerDevices:
    msg = pb.ContainerDevices(resource_name=d.resource_name, device_ids=list(d.device_ids))
    if d.numa_nodes:
        msg.topology.CopyFrom(_topology(d.numa_nodes))
    return msg


def pod_resources_message(p: PodResources) -> pb.PodResources:
    return pb.PodResources(
        name=p.name,
        namespace=p.namespace,
        containers=[
            pb.ContainerResources(
                name=c.name,
                devices=[_devices(d) for d in c.devices],
                cpu_ids=c.cpu_ids.list(),
                memory=[_memory(m) for m in c.memory],
            )
            for c in p.containers
        ],
        cpu_ids=p.cpu_ids.list(),
        memory=[_memory(m) for m in p.memory],
    )


def allocatable_message(a: AllocatableResources) -> pb.AllocatableResourcesResponse:
    return pb.AllocatableResourcesResponse(
        devices=[_devices(d) for d in a.devices],
        cpu_ids=a.cpu_ids.list(),
        memory=[_memory(m) for m in a.memory],
    )


# -- messages -> plain data -------------------------------------------------------
#
# The answer comes from a server podnuma does not control (a kubelet, any
# program on the socket): it is read as hostile input. A CPU id must be one
# podnuma's CPU sets take (0..MAX_CPU_ID), a NUMA node id one Linux has
# (0..MAX_NUMA_NODES-1); anything else is an InputError naming the field
# path in the message (``containers[0].cpu_ids[0]``), which the caller
# prefixes (``pod_resources[0]``) and gives the socket. Strings are kept as
# they came: whoever shows them makes them inert.


def _cpu_ids(ids: Sequence[int], path: str) -> list[int]:
    out = list(ids)
    for i, cpu in enumerate(out):
        if not 0 <= cpu <= MAX_CPU_ID:
            raise InputError(
                f"CPU id {cpu} out of range (podnuma supports 0-{MAX_CPU_ID})", path=f"{path}[{i}]"
            )
    return out


def _topology_doc(t: pb.TopologyInfo, path: str) -> dict[str, Any]:
    nodes = []
    for i, n in enumerate(t.nodes):
        if not 0 <= n.ID < MAX_NUMA_NODES:
            raise InputError(
                f"NUMA node id {n.ID} out of range (Linux supports 0-{MAX_NUMA_NODES - 1})",
                path=f"{path}.nodes[{i}].ID",
            )
        nodes.append({"ID": n.ID})
    return {"nodes": nodes}


def _memory_doc(m: pb.ContainerMemory, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {"memoryType": m.memory_type, "size": m.size}
    if m.HasField("topology"):
        out["topology"] = _topology_doc(m.topology, f"{path}.topology")
    return out


def _devices_doc(d: pb.ContainerDevices, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {"resourceName": d.resource_name, "deviceIds": list(d.device_ids)}
    if d.HasField("topology"):
        out["topology"] = _topology_doc(d.topology, f"{path}.topology")
    return out


def _memories(blocks: Iterable[pb.ContainerMemory], path: str) -> list[dict[str, Any]]:
    return [_memory_doc(m, f"{path}[{i}]") for i, m in enumerate(blocks)]


def _all_devices(devs: Iterable[pb.ContainerDevices], path: str) -> list[dict[str, Any]]:
    return [_devices_doc(d, f"{path}[{i}]") for i, d in enumerate(devs)]


def pod_resources_doc(p: pb.PodResources) -> dict[str, Any]:
    """One pod as plain data; ``InputError`` (path relative to the pod:
    ``containers[0].cpu_ids[3]``) for an id out of range."""
    containers = []
    for i, c in enumerate(p.containers):
        at = f"containers[{i}]"
        containers.append({
            "name": c.name,
            "devices": _all_devices(c.devices, f"{at}.devices"),
            "cpuIds": _cpu_ids(c.cpu_ids, f"{at}.cpu_ids"),
            "memory": _memories(c.memory, f"{at}.memory"),
        })
    return {
        "name": p.name,
        "namespace": p.namespace,
        "containers": containers,
        "cpuIds": _cpu_ids(p.cpu_ids, "cpu_ids"),
        "memory": _memories(p.memory, "memory"),
    }


def allocatable_doc(a: pb.AllocatableResourcesResponse) -> dict[str, Any]:
    """The allocatable resources as plain data; ``InputError`` (path:
    ``cpu_ids[0]``) for an id out of range."""
    return {
        "devices": _all_devices(a.devices, "devices"),
        "cpuIds": _cpu_ids(a.cpu_ids, "cpu_ids"),
        "memory": _memories(a.memory, "memory"),
    }
