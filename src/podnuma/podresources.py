"""The kubelet's PodResources API view (``List``), as data.

Mirrors ``pkg/kubelet/apis/podresources/server_v1.go`` and the providers the
container manager gives it (``GetCPUs``/``GetPodCPUs``, ``GetMemory``/
``GetPodMemory``, ``GetDevices``):

* only active pods are listed;
* a container's ``cpu_ids`` and ``memory`` are its *exclusive* resources: a
  container on its pod's shared pool or on the node's shared pool reports
  empty lists (consumers derive the pod shared pool as pod ``cpu_ids`` minus
  the containers' ones);
* the pod-level ``cpu_ids`` and ``memory`` (KEP-5526) are filled only with
  the ``PodLevelResourceManagers`` gate on, for pods with pod-level
  resources: the pod's reservation (empty in container scope, which makes
  none);
* only sidecars (restartable init containers) and app containers are
  listed, in spec order; regular init containers are not;
* devices are listed one entry per device and NUMA node, as the kubelet's
  ``containerDevicesFromResourceDeviceInstances`` does.

Field names follow the protobuf JSON mapping (``cpuIds``, ``memoryType``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from podnuma.machine.cpuset import CPUSet

__all__ = [
    "AllocatableResources",
    "ContainerDevices",
    "ContainerMemory",
    "ContainerResources",
    "PodResources",
]


@dataclass(frozen=True, slots=True)
class ContainerMemory:
    memory_type: str
    size: int
    numa_nodes: tuple[int, ...]

    def __deepcopy__(self, memo: dict[int, object]) -> ContainerMemory:
        return self  # immutable

    def to_json(self) -> dict[str, Any]:
        return {
            "memoryType": self.memory_type,
            "size": self.size,
            "topology": {"nodes": [{"ID": n} for n in self.numa_nodes]},
        }


@dataclass(frozen=True, slots=True)
class ContainerDevices:
    resource_name: str
    device_ids: tuple[str, ...]
    numa_nodes: tuple[int, ...]

    def __deepcopy__(self, memo: dict[int, object]) -> ContainerDevices:
        return self  # immutable

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"resourceName": self.resource_name, "deviceIds": list(self.device_ids)}
        if self.numa_nodes:
            out["topology"] = {"nodes": [{"ID": n} for n in self.numa_nodes]}
        return out


@dataclass(frozen=True, slots=True)
class ContainerResources:
    name: str
    cpu_ids: CPUSet
    memory: tuple[ContainerMemory, ...] = ()
    devices: tuple[ContainerDevices, ...] = ()

    def __deepcopy__(self, memo: dict[int, object]) -> ContainerResources:
        return self  # immutable

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "devices": [d.to_json() for d in self.devices],
            "cpuIds": self.cpu_ids.list(),
            "memory": [m.to_json() for m in self.memory],
        }


@dataclass(frozen=True, slots=True)
class PodResources:
    name: str
    namespace: str
    uid: str
    containers: tuple[ContainerResources, ...] = ()
    cpu_ids: CPUSet = field(default_factory=CPUSet)
    memory: tuple[ContainerMemory, ...] = ()

    def __deepcopy__(self, memo: dict[int, object]) -> PodResources:
        return self  # immutable

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "containers": [c.to_json() for c in self.containers],
            "cpuIds": self.cpu_ids.list(),
            "memory": [m.to_json() for m in self.memory],
        }


@dataclass(frozen=True, slots=True)
class AllocatableResources:
    """``GetAllocatableResources``: what the node could give to pods."""

    cpu_ids: CPUSet
    memory: tuple[ContainerMemory, ...] = ()
    devices: tuple[ContainerDevices, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "devices": [d.to_json() for d in self.devices],
            "cpuIds": self.cpu_ids.list(),
            "memory": [m.to_json() for m in self.memory],
        }
