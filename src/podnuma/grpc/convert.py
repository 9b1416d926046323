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

from typing import Any

from podnuma.cm.podresources_view import (
    AllocatableResources,
    ContainerDevices,
    ContainerMemory,
    PodResources,
)
from podnuma.grpc.podresources.v1 import api_pb2 as pb

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


def _topology_doc(t: pb.TopologyInfo) -> dict[str, Any]:
    return {"nodes": [{"ID": n.ID} for n in t.nodes]}


def _memory_doc(m: pb.ContainerMemory) -> dict[str, Any]:
    out: dict[str, Any] = {"memoryType": m.memory_type, "size": m.size}
    if m.HasField("topology"):
        out["topology"] = _topology_doc(m.topology)
    return out


def _devices_doc(d: pb.ContainerDevices) -> dict[str, Any]:
    out: dict[str, Any] = {"resourceName": d.resource_name, "deviceIds": list(d.device_ids)}
    if d.HasField("topology"):
        out["topology"] = _topology_doc(d.topology)
    return out


def pod_resources_doc(p: pb.PodResources) -> dict[str, Any]:
    return {
        "name": p.name,
        "namespace": p.namespace,
        "containers": [
            {
                "name": c.name,
                "devices": [_devices_doc(d) for d in c.devices],
                "cpuIds": list(c.cpu_ids),
                "memory": [_memory_doc(m) for m in c.memory],
            }
            for c in p.containers
        ],
        "cpuIds": list(p.cpu_ids),
        "memory": [_memory_doc(m) for m in p.memory],
    }


def allocatable_doc(a: pb.AllocatableResourcesResponse) -> dict[str, Any]:
    return {
        "devices": [_devices_doc(d) for d in a.devices],
        "cpuIds": list(a.cpu_ids),
        "memory": [_memory_doc(m) for m in a.memory],
    }
