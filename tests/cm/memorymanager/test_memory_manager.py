"""Tests of the memory manager (podnuma.cm.memorymanager.memory_manager).

Ports upstream's memory_manager_test.go TestValidateReservedMemory,
TestConvertPreReserved and TestGetSystemReservedMemory tables, and covers
NewManager/Start (policy names, reservedMemory consistency, zero total,
checkpoint policy and state validation), removeStaleState, AddContainer,
RemoveContainer, hints and allocation through the topology manager.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import KubeletConfig, ReservedMemory
from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.cm.admission import REASON_UNEXPECTED
from podnuma.cm.memorymanager.checkpoint import MemoryCheckpointData, encode_memory_checkpoint
from podnuma.cm.memorymanager.memory_manager import (
    MemoryManager,
    convert_reserved,
    get_system_reserved_memory,
    new_memory_manager,
    validate_reserved_memory,
)
from podnuma.cm.memorymanager.policy_none import NonePolicy
from podnuma.cm.topologymanager.manager import TopologyManager
from podnuma.cm.topologymanager.new_manager import new_topology_policy
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import CPUInfo, CPUTopology, Machine, NUMANode

from .helpers import (
    GATES,
    GB,
    GUARANTEED,
    HP1G,
    HP2M,
    MB,
    MEM,
    FakeAffinity,
    container,
    get_pod,
    hint,
    mem_hp,
    pod_with_inits,
)

NOT_EQUAL = 'the total amount "{}" of type "{}" is not equal to the value "{}" determined by Node Allocatable feature'


def q(n: int, binary: bool = False) -> Quantity:
    return Quantity.from_int(n, binary=binary)


def rm(numa: int, **limits: Quantity) -> ReservedMemory:
    names = {"memory": MEM, "hp2m": HP2M, "hp1g": HP1G}
    return ReservedMemory(numa, {names[k]: v for k, v in limits.items()})


def machine(nodes: Sequence[NUMANode]) -> Machine:
    cpus = {i: CPUInfo(numa_node=n.id, socket=n.id, core=i, uncore_cache=n.id) for i, n in enumerate(nodes)}
    topo = CPUTopology(cpus, num_cpus=len(cpus), num_sockets=len(nodes), num_cores=len(cpus))
    return Machine(topo, tuple(nodes))


TWO_NODES = machine([NUMANode(0, 10 * GB, {GB: 5 * GB}), NUMANode(1, 10 * GB, {GB: 5 * GB})])

# -- TestValidateReservedMemory -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reservation", "reserved", "error"),
    [
        ("Node Allocatable not set, reserved not set", {}, [], None),
        ("Node Allocatable set to zero, reserved set to zero", {MEM: q(0)}, [rm(0, memory=q(0))], None),
        ("Node Allocatable not set (equal zero), reserved set", {}, [rm(0, memory=q(12))],
         NOT_EQUAL.format("12", MEM, "0")),
        ("Node Allocatable set, reserved not set", {HP2M: q(5)}, [], NOT_EQUAL.format("0", HP2M, "5")),
        ("Reserved not equal to Node Allocatable", {MEM: q(5)}, [rm(0, memory=q(12))],
         NOT_EQUAL.format("12", MEM, "5")),
        ("Reserved contains the NUMA node that does not exist under the machine", {MEM: q(17)},
         [rm(0, memory=q(12)), rm(2, memory=q(5))],
         "the reserved memory configuration references a NUMA node 2 that does not exist on this machine"),
        ("Reserved total equal to Node Allocatable", {MEM: q(17), HP2M: q(77), HP1G: q(13)},
         [rm(0, memory=q(12), hp2m=q(70), hp1g=q(13)), rm(1, memory=q(5), hp2m=q(7))], None),
        ("Reserved total hugapages-2M not equal to Node Allocatable", {MEM: q(17), HP2M: q(14), HP1G: q(13)},
         [rm(0, memory=q(12), hp2m=q(70), hp1g=q(13)), rm(1, memory=q(5), hp2m=q(7))],
         NOT_EQUAL.format("77", HP2M, "14")),
    ],
)  # fmt: skip
def test_validate_reserved_memory(
    name: str, reservation: Mapping[str, Quantity], reserved: Sequence[ReservedMemory], error: str | None
) -> None:
    if error is None:
        validate_reserved_memory({0, 1}, reservation, reserved)
        return
    with pytest.raises(KubeletStartupError) as info:
        validate_reserved_memory({0, 1}, reservation, reserved)
    assert str(info.value) == error


def test_validate_reserved_memory_compares_quantities() -> None:
    # 1Gi (binary) equals 1073741824 (decimal); the message keeps the formats
    validate_reserved_memory({0}, {MEM: parse_quantity("1073741824")}, [rm(0, memory=parse_quantity("1Gi"))])
    with pytest.raises(KubeletStartupError) as info:
        validate_reserved_memory({0}, {MEM: parse_quantity("100Mi")}, [rm(0, memory=parse_quantity("1Gi"))])
    assert str(info.value) == NOT_EQUAL.format("1Gi", MEM, "100Mi")


# -- TestConvertPreReserved ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reserved", "expected"),
    [
        ("Empty", [], {0: {}, 1: {}}),
        ("Single NUMA node is reserved", [rm(0, memory=q(12), hp2m=q(70), hp1g=q(13))],
         {0: {MEM: 12, HP2M: 70, HP1G: 13}, 1: {}}),
        ("Both NUMA nodes are reserved",
         [rm(0, memory=q(12), hp2m=q(70), hp1g=q(13)), rm(1, memory=q(5), hp2m=q(7))],
         {0: {MEM: 12, HP2M: 70, HP1G: 13}, 1: {MEM: 5, HP2M: 7}}),
    ],
)  # fmt: skip
def test_convert_reserved(name: str, reserved: Sequence[ReservedMemory], expected: dict[int, dict[str, int]]) -> None:
    assert convert_reserved([0, 1], reserved) == expected


# -- TestGetSystemReservedMemory ---------------------------------------------------------------


def test_get_system_reserved_memory_empty() -> None:
    assert get_system_reserved_memory(TWO_NODES, {}, []) == {0: {}, 1: {}}


def test_get_system_reserved_memory_not_equal() -> None:
    with pytest.raises(KubeletStartupError) as info:
        get_system_reserved_memory(TWO_NODES, {}, [rm(0, memory=q(GB, True))])
    assert str(info.value) == NOT_EQUAL.format("1Gi", MEM, "0")


def test_get_system_reserved_memory_equal() -> None:
    got = get_system_reserved_memory(TWO_NODES, {MEM: q(2 * GB, True)}, [rm(0, memory=q(GB, True)), rm(1, memory=q(GB, True))])
    assert got == {0: {MEM: GB}, 1: {MEM: GB}}


# -- NewManager / Start -----------------------------------------------------------------------


def static_config(**kw: object) -> KubeletConfig:
    base: dict[str, object] = {
        "memory_manager_policy": "Static",
        "reserved_memory": (rm(0, memory=parse_quantity("50Mi")), rm(1, memory=parse_quantity("50Mi"))),
    }
    base.update(kw)
    return KubeletConfig(**base)  # type: ignore[arg-type]


def test_new_manager_none_ignores_reserved_memory() -> None:
    cfg = KubeletConfig(memory_manager_policy="None", reserved_memory=(rm(7, memory=q(1)),))
    mgr = new_memory_manager(cfg, TWO_NODES, None, GATES)
    assert isinstance(mgr.policy, NonePolicy)
    assert mgr.machine_state() == {}
    assert mgr.get_allocatable_memory() == []
    pod = get_pod("p", "c", GUARANTEED)
    assert mgr.get_topology_hints(pod, pod.containers[0]) is None
    mgr.allocate(pod, pod.containers[0])
    assert mgr.checkpoint_data() == MemoryCheckpointData("None")


def test_new_manager_static_default_eviction() -> None:
    # the default hard eviction threshold (memory.available 100Mi) must be reserved
    mgr = new_memory_manager(static_config(), TWO_NODES, None, GATES)
    ms = mgr.machine_state()
    assert ms[0].memory_map[MEM].system_reserved == 50 * MB
    assert ms[0].memory_map[MEM].allocatable == 10 * GB - 50 * MB - 5 * GB
    assert mgr.get_allocatable_memory()[0].numa_affinity == (0,)


@pytest.mark.parametrize(
    ("cfg", "error"),
    [
        (KubeletConfig(memory_manager_policy="Static"), NOT_EQUAL.format("0", MEM, "100Mi")),
        (static_config(reserved_memory=(rm(0, memory=parse_quantity("100Mi"), hp1g=q(GB, True)),)),
         NOT_EQUAL.format("1Gi", HP1G, "0")),
        (static_config(reserved_memory=(rm(3, memory=parse_quantity("100Mi")),)),
         "the reserved memory configuration references a NUMA node 3 that does not exist on this machine"),
        (static_config(reserved_memory=(rm(0, memory=q(0)),), eviction_hard={"memory.available": "0%"}),
         "[memorymanager] you should specify the system reserved memory"),
        (static_config(memory_manager_policy="static"), 'unknown policy: "static"'),
        (static_config(memory_manager_policy="BestEffort"), 'policy "BestEffort" is not available for platform "linux"'),
    ],
)  # fmt: skip
def test_new_manager_errors(cfg: KubeletConfig, error: str) -> None:
    with pytest.raises(KubeletStartupError) as info:
        new_memory_manager(cfg, TWO_NODES, None, GATES)
    assert str(info.value) == error


def test_new_manager_checkpoint_policy_mismatch() -> None:
    with pytest.raises(KubeletStartupError) as info:
        new_memory_manager(static_config(), TWO_NODES, None, GATES, checkpoint=MemoryCheckpointData("None"))
    assert str(info.value) == (
        'could not restore state from checkpoint: [memorymanager] configured policy "Static" differs from state '
        'checkpoint policy "None", please drain this node and delete the memory manager checkpoint file '
        '"/var/lib/kubelet/memory_manager_state" before restarting Kubelet'
    )


def test_new_manager_restores_and_validates_checkpoint() -> None:
    first = new_memory_manager(static_config(), TWO_NODES, FakeAffinity(hint([1], True)), GATES)
    pod = get_pod("p", "c", GUARANTEED)
    first.allocate(pod, pod.containers[0])
    data = first.checkpoint_data()
    assert data.entries == {"p": {"c": mem_hp([1], GB, GB)[::-1]}}
    second = new_memory_manager(static_config(), TWO_NODES, None, GATES, checkpoint=data)
    assert second.get_memory_blocks("p", "c") == data.entries["p"]["c"]
    assert encode_memory_checkpoint(second.checkpoint_data()) == encode_memory_checkpoint(data)
    # a different reservation no longer matches the stored machine state
    other = static_config(
        reserved_memory=(rm(0, memory=parse_quantity("100Mi")),),
    )
    with pytest.raises(KubeletStartupError) as info:
        new_memory_manager(other, TWO_NODES, None, GATES, checkpoint=data)
    assert str(info.value) == "[memorymanager] the expected machine state is different from the real one"


# -- removeStaleState / AddContainer / RemoveContainer ------------------------------------------


def _manager(active: dict[str, set[str]] | None = None, affinity: FakeAffinity | None = None) -> MemoryManager:
    return new_memory_manager(
        static_config(), TWO_NODES, affinity or FakeAffinity(hint([0], True)), GATES,
        active_pods=None if active is None else (lambda: active),
    )  # fmt: skip


def test_remove_stale_state() -> None:
    active: dict[str, set[str]] = {"p1": {"c"}, "p2": {"c"}}
    mgr = _manager(active)
    for uid in ("p1", "p2"):
        pod = get_pod(uid, "c", GUARANTEED)
        mgr.allocate(pod, pod.containers[0])
    reserved = mgr.machine_state()[0].memory_map[MEM].reserved
    assert reserved == 2 * GB
    del active["p2"]
    pod3 = get_pod("p3", "c", GUARANTEED)
    active["p3"] = {"c"}
    mgr.get_topology_hints(pod3, pod3.containers[0])  # collects p2 first
    assert mgr.get_memory_blocks("p2", "c") == []
    assert mgr.machine_state()[0].memory_map[MEM].reserved == GB
    assert mgr.machine_state()[0].number_of_assignments == 2


def test_add_container_releases_finished_init_containers() -> None:
    mgr = _manager()
    pod = pod_with_inits(
        "p",
        [container("app", GUARANTEED)],
        [container("init", GUARANTEED, kind="init"), container("side", GUARANTEED, kind="sidecar")],
    )
    for ctr in pod.all_containers():
        mgr.allocate(pod, ctr)
    mgr.add_container(pod, pod.containers[0])
    assert mgr.get_memory_blocks("p", "init") == []
    assert mgr.get_memory_blocks("p", "side") != []
    assert mgr.get_memory_numa_nodes(pod, pod.containers[0]) == {0}
    assert mgr.get_memory_numa_nodes(pod, pod.init_containers[0]) is None


def test_remove_container() -> None:
    mgr = _manager()
    pod = get_pod("p", "c", GUARANTEED)
    mgr.allocate(pod, pod.containers[0])
    mgr.remove_container("p", "c")
    mgr.remove_container("p", "c")
    mgr.remove_container("unknown", "c")
    assert mgr.checkpoint_data().entries == {}
    assert mgr.machine_state()[0].memory_map[MEM].reserved == 0


# -- through the topology manager ------------------------------------------------------------------


def _tm(policy: str) -> TopologyManager:
    gates = FeatureGates.defaults()
    tm_policy, _, _ = new_topology_policy(policy, TWO_NODES, {}, gates)
    return TopologyManager(tm_policy, "container")


def test_hint_provider_admission() -> None:
    tm = _tm("single-numa-node")
    mgr = new_memory_manager(static_config(), TWO_NODES, tm, GATES)
    tm.add_hint_provider(mgr)
    assert mgr.provider_name == "memory"
    pod = get_pod("p", "c", GUARANTEED)
    result = tm.admit(pod)
    assert result.admit
    assert mgr.get_memory_blocks("p", "c") == mem_hp([0], GB, GB)[::-1]


def test_nothing_fits_is_unexpected_admission_error() -> None:
    # no NUMA node can hold the request: the empty hint map means "don't
    # care", so single-numa-node admits and Allocate fails
    tm = _tm("single-numa-node")
    mgr = new_memory_manager(static_config(), TWO_NODES, tm, GATES)
    tm.add_hint_provider(mgr)
    pod = get_pod("p", "c", {**GUARANTEED, MEM: parse_quantity("30Gi")})
    result = tm.admit(pod)
    assert not result.admit
    assert result.reason == REASON_UNEXPECTED
    assert result.message == (
        "Allocate failed due to [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with "
        "enough memory is available, which is unexpected"
    )
