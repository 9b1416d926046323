"""Node-level behaviour of the kubelet's container manager and admission
chain (``podnuma.cm.container_manager.Node``):

* start-up order (``NewContainerManager`` creates the topology, device, CPU
  and memory managers; ``ContainerManager.Start`` then starts the CPU
  manager -- which restores its checkpoint -- and the memory manager), so a
  memory-manager ``NewManager`` error wins over a bad CPU checkpoint;
* hint-provider registration order: device, CPU, memory;
* admit-handler order: the topology manager's admit (hints + allocation)
  before the node-allocatable predicate;
* a pod rejected by the predicate keeps what was allocated for it only until
  the next admission's stale-state collection;
* a pod found in the checkpoint is running: re-admitting it keeps its CPUs
  and does not count its own usage twice.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from podnuma.api.kubeletconfig import KubeletConfig, load_kubelet_config
from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.cm.container_manager import Node
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData
from podnuma.errors import KubeletStartupError
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUInfo, CPUTopology, Device, Machine, NUMANode

GB = 1 << 30


def _machine() -> Machine:
    """2 NUMA nodes x 2 CPUs, 4Gi each; one GPU per NUMA node."""
    cpus = {i: CPUInfo(numa_node=i // 2, socket=i // 2, core=i, uncore_cache=i // 2) for i in range(4)}
    topo = CPUTopology(cpus, num_cpus=4, num_sockets=2, num_cores=4)
    devices = {"example.com/gpu": (Device("gpu0", (0,)), Device("gpu1", (1,)))}
    return Machine(topo, (NUMANode(0, 4 * GB, {}), NUMANode(1, 4 * GB, {})), devices)


def _config(**fields: object) -> KubeletConfig:
    doc: dict[str, object] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0",
    }
    doc.update(fields)
    return load_kubelet_config(doc)


def _res(values: Mapping[str, str]) -> dict[str, Quantity]:
    return {k: parse_quantity(v) for k, v in values.items()}


def _pod(uid: str, requests: Mapping[str, str], limits: Mapping[str, str] | None = None) -> Pod:
    lim = _res(requests if limits is None else limits)
    return Pod(uid=uid, name=uid, containers=(Container("app", "app", _res(requests), lim),))


def test_memory_manager_new_manager_error_comes_before_the_cpu_checkpoint() -> None:
    # Static memory manager without reservedMemory (the default 100Mi
    # eviction threshold needs one) and a CPU checkpoint of another policy:
    # NewContainerManager fails on the memory manager before Start ever
    # reads the CPU checkpoint.
    cfg = _config(memoryManagerPolicy="Static")
    with pytest.raises(KubeletStartupError) as exc:
        Node(_machine(), cfg, cpu_checkpoint=CPUCheckpointData("none", CPUSet()))
    assert "determined by Node Allocatable feature" in str(exc.value)


def test_cpu_checkpoint_policy_error_without_other_errors() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        Node(_machine(), _config(), cpu_checkpoint=CPUCheckpointData("none", CPUSet()))
    assert 'differs from state checkpoint policy "none"' in str(exc.value)


def test_hint_providers_in_registration_order() -> None:
    node = Node(_machine(), _config(topologyManagerPolicy="restricted"))
    assert [p.provider_name for p in node.topology.providers][:2] == ["device", "cpu"]
    assert node.topology.providers[2] is node.memory


def test_allocation_failure_before_the_fit_check() -> None:
    # best-effort: three GPUs on a two-GPU node pass the topology manager and
    # fail in the device manager's Allocate, before the predicate could say
    # OutOfexample.com/gpu.
    node = Node(_machine(), _config(topologyManagerPolicy="best-effort"))
    step = node.add_pod(_pod("u1", {"example.com/gpu": "3"}), 0)
    assert not step.admitted
    assert step.reason == "UnexpectedAdmissionError"
    assert step.message == (
        "Pod was rejected: Allocate failed due to requested number of devices unavailable "
        "for example.com/gpu. Requested: 3, Available: 2, which is unexpected"
    )


def test_restricted_rejects_more_devices_than_exist_as_topology_error() -> None:
    node = Node(_machine(), _config(topologyManagerPolicy="restricted"))
    step = node.add_pod(_pod("u1", {"example.com/gpu": "3"}), 0)
    assert (step.admitted, step.reason) == (False, "TopologyAffinityError")
    assert step.message == "Pod was rejected: Resources cannot be allocated with Topology locality"


def test_predicate_rejection_frees_devices_at_the_next_admission() -> None:
    node = Node(_machine(), _config(topologyManagerPolicy="best-effort"))
    # Both GPUs are allocated, then the memory request fails the fit check.
    hog = node.add_pod(_pod("hog", {"memory": "100Gi", "example.com/gpu": "2"}, {"example.com/gpu": "2"}), 0)
    assert (hog.admitted, hog.reason) == (False, "OutOfmemory")
    assert node.devices.allocated_devices("example.com/gpu") == {"gpu0", "gpu1"}
    # The rejected pod is not active: the next admission collects its devices.
    step = node.add_pod(_pod("next", {"example.com/gpu": "2"}), 1)
    assert step.admitted
    assert step.containers[0].devices == {"example.com/gpu": ("gpu0", "gpu1")}


def test_readmission_of_a_checkpoint_pod_keeps_its_cpus() -> None:
    checkpoint = CPUCheckpointData("static", CPUSet.parse("0"), {"u1": {"app": CPUSet.parse("1-3")}})
    node = Node(_machine(), _config(), cpu_checkpoint=checkpoint)
    # A kubelet restart re-admits the running pod: its own 3 CPUs are not
    # counted as used by another pod (allocatable cpu is 3).
    step = node.add_pod(_pod("u1", {"cpu": "3", "memory": "1Gi"}), 0)
    assert step.admitted, step.message
    assert step.containers[0].cpus == CPUSet.parse("1-3")
    other = node.add_pod(_pod("u2", {"cpu": "100m"}, {}), 1)
    assert (other.admitted, other.reason) == (False, "OutOfcpu")
    assert other.message == (
        "Pod was rejected: Node didn't have enough resource: cpu, requested: 100, used: 3000, capacity: 3000"
    )
