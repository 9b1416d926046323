"""Upstream memory_manager_test.go tables for the manager itself.

Ports, as data, the rows of TestRemoveStaleState, TestAddContainer,
TestRemoveContainer, TestNewManager, TestGetTopologyHints and
TestAllocateAndAddPodWithInitContainers (pkg/kubelet/cm/memorymanager).
The machine is upstream's returnMachineInfo (two NUMA nodes of 10Gi with
five 1Gi hugepages each); the policy is built on upstream's fake topology
manager (no hint: nil affinity, not preferred). Upstream addresses a
container by its runtime id through the container map; podnuma addresses it
by (pod UID, container name), so "a container id not in the container map"
becomes "a container that has no entry". A last podnuma check pins the
calculateHints minAffinitySize quirk through the manager.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from podnuma.api.kubeletconfig import KubeletConfig, ReservedMemory
from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity
from podnuma.cm.memorymanager.memory_manager import MemoryManager, new_memory_manager
from podnuma.cm.memorymanager.policy import MemoryManagerError, Policy, TopologyHints
from podnuma.cm.memorymanager.policy_none import NonePolicy
from podnuma.cm.memorymanager.policy_static import new_static_policy
from podnuma.cm.memorymanager.state import Block, MemoryManagerState, NUMANodeState
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import CPUInfo, CPUTopology, Machine

from .helpers import (
    GATES,
    GB,
    GUARANTEED,
    HP1G,
    MB,
    MEM,
    FakeAffinity,
    container,
    get_pod,
    hint,
    mem_hp,
    mt,
    ns,
    numa,
    pod_with_inits,
    res,
    sorted_blocks,
)

NODES = (numa(0, 10 * GB, 5), numa(1, 10 * GB, 5))
RESERVED = {0: {MEM: GB}, 1: {MEM: GB}}
FAKE_ERROR = "fake reg error"


class MockPolicy(Policy):
    """upstream mockPolicy: every call that can fail fails with "fake reg
    error"; RemoveContainer does nothing."""

    def name(self) -> str:
        return "mock"

    def start(self, state: MemoryManagerState) -> None:
        raise KubeletStartupError(FAKE_ERROR)

    def allocate(self, state: MemoryManagerState, pod: Pod, container: Container) -> None:
        raise MemoryManagerError(FAKE_ERROR)

    def allocate_pod(self, state: MemoryManagerState, pod: Pod) -> None:
        raise MemoryManagerError(FAKE_ERROR)

    def remove_container(self, state: MemoryManagerState, pod_uid: str, container_name: str) -> None:
        return None

    def get_topology_hints(self, state: MemoryManagerState, pod: Pod, container: Container) -> TopologyHints | None:
        return None

    def get_pod_topology_hints(self, state: MemoryManagerState, pod: Pod) -> TopologyHints | None:
        return None

    def get_allocatable_memory(self, state: MemoryManagerState) -> list[Block]:
        return []


def _policy(name: str, reserved: Mapping[int, Mapping[str, int]] = RESERVED) -> Policy:
    """upstream returnPolicyByName."""
    if name == "mock":
        return MockPolicy()
    if name == "None":
        return NonePolicy()
    return new_static_policy(NODES, reserved, FakeAffinity(), GATES)


def _mgr(
    policy: str,
    machine_state: Mapping[int, NUMANodeState],
    assignments: Mapping[str, Mapping[str, Sequence[Block]]],
    active: Mapping[str, set[str]],
    reserved: Mapping[int, Mapping[str, int]] = RESERVED,
) -> MemoryManager:
    state = MemoryManagerState(machine_state, assignments)
    return MemoryManager(_policy(policy, reserved), state, GATES, active_pods=lambda: active)


def _fresh(nid: int) -> NUMANodeState:
    """A NUMA node of returnMachineInfo with 1Gi reserved, nothing assigned."""
    return ns(mt(9 * GB, 9 * GB, 0, GB, 10 * GB), mt(5 * GB, 5 * GB, 0, 0, 5 * GB), cells=[nid])


FRESH = {0: _fresh(0), 1: _fresh(1)}

# two single-NUMA containers of 1Gi memory + 1Gi hugepages on NUMA 0
TWO_ON_NODE0 = {"fakePod1": {"fakeContainer1": mem_hp([0], GB, GB), "fakeContainer2": mem_hp([0], GB, GB)}}
TWO_ON_NODE0_STATE = {
    0: ns(mt(9 * GB, 7 * GB, 2 * GB, GB, 10 * GB), mt(5 * GB, 3 * GB, 2 * GB, 0, 5 * GB), cells=[0], n=4),
    1: _fresh(1),
}
ONE_ON_NODE0_STATE = {
    0: ns(mt(9 * GB, 8 * GB, GB, GB, 10 * GB), mt(5 * GB, 4 * GB, GB, 0, 5 * GB), cells=[0], n=2),
    1: _fresh(1),
}


# -- TestRemoveStaleState -------------------------------------------------------------------------


@dataclass(frozen=True)
class StaleCase:
    name: str
    policy: str
    assignments: Mapping[str, Mapping[str, Sequence[Block]]]
    machine_state: Mapping[int, NUMANodeState]
    expected_assignments: Mapping[str, Mapping[str, Sequence[Block]]]
    expected_state: Mapping[int, NUMANodeState]


_STALE_CASES = [
    StaleCase("Should fail - policy returns an error", "mock",
              TWO_ON_NODE0, TWO_ON_NODE0_STATE, TWO_ON_NODE0, TWO_ON_NODE0_STATE),
    StaleCase("Stale state successfully removed, without multi NUMA assignments", "Static",
              TWO_ON_NODE0, TWO_ON_NODE0_STATE, {}, FRESH),
    StaleCase("Stale state successfully removed, with multi NUMA assignments", "Static",
              {"fakePod1": {"fakeContainer1": mem_hp([0, 1], 12 * GB, GB),
                            "fakeContainer2": mem_hp([0, 1], GB, GB)}},
              {0: ns(mt(9 * GB, 0, 9 * GB, GB, 10 * GB), mt(5 * GB, 4 * GB, GB, 0, 5 * GB), cells=[0, 1], n=4),
               1: ns(mt(9 * GB, 5 * GB, 4 * GB, GB, 10 * GB), mt(5 * GB, 4 * GB, GB, 0, 5 * GB), cells=[0, 1], n=4)},
              {}, FRESH),
]  # fmt: skip


@pytest.mark.parametrize("case", _STALE_CASES, ids=[c.name for c in _STALE_CASES])
def test_remove_stale_state(case: StaleCase) -> None:
    mgr = _mgr(case.policy, case.machine_state, case.assignments, {})
    mgr.remove_stale_state()
    assert sorted_blocks(mgr.state.get_memory_assignments()) == sorted_blocks(case.expected_assignments)
    assert mgr.machine_state() == case.expected_state


# -- TestAddContainer -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AddCase:
    name: str
    policy: str
    machine_state: Mapping[int, NUMANodeState]
    pod: Pod
    expected_state: Mapping[int, NUMANodeState]
    expected_error: str | None = None
    assignments: Mapping[str, Mapping[str, Sequence[Block]]] = field(default_factory=dict)
    active: Mapping[str, set[str]] = field(default_factory=dict)


_POD1 = get_pod("fakePod1", "fakeContainer1", GUARANTEED)
_BIG = res(cpu="1000Mi", memory="12Gi", hp1g="4Gi")

_ADD_CASES = [
    AddCase("Correct allocation and adding container on NUMA 0", "Static", FRESH, _POD1, ONE_ON_NODE0_STATE),
    AddCase("Shouldn't return any error when policy is set as None", "None", {}, _POD1, {}),
    AddCase("Allocation should fail if policy returns an error", "mock", FRESH, _POD1, FRESH, FAKE_ERROR),
    AddCase("Correct allocation of container requiring amount of memory higher than capacity of one NUMA node",
            "Static", FRESH, get_pod("fakePod1", "fakeContainer1", _BIG),
            {0: ns(mt(9 * GB, 0, 9 * GB, GB, 10 * GB), mt(5 * GB, GB, 4 * GB, 0, 5 * GB), cells=[0, 1], n=2),
             1: ns(mt(9 * GB, 6 * GB, 3 * GB, GB, 10 * GB), mt(5 * GB, 5 * GB, 0, 0, 5 * GB), cells=[0, 1], n=2)}),
    AddCase("Should fail if try to allocate container requiring amount of memory higher than capacity of one NUMA "
            "node but a small pod is already allocated",
            "Static", ONE_ON_NODE0_STATE, get_pod("fakePod2", "fakeContainer2", _BIG), ONE_ON_NODE0_STATE,
            "[memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available",
            assignments={"fakePod1": {"fakeContainer1": mem_hp([0], GB, GB)}},
            active={"fakePod1": {"fakeContainer1"}}),
]  # fmt: skip


@pytest.mark.parametrize("case", _ADD_CASES, ids=[c.name for c in _ADD_CASES])
def test_add_container(case: AddCase) -> None:
    mgr = _mgr(case.policy, case.machine_state, case.assignments, case.active)
    ctr = case.pod.containers[0]
    if case.expected_error is None:
        mgr.allocate(case.pod, ctr)
    else:
        with pytest.raises(MemoryManagerError) as info:
            mgr.allocate(case.pod, ctr)
        assert str(info.value) == case.expected_error
    mgr.add_container(case.pod, ctr)
    assert mgr.machine_state() == case.expected_state


# -- TestRemoveContainer --------------------------------------------------------------------------


@dataclass(frozen=True)
class RemoveCase:
    name: str
    remove: tuple[str, str]
    assignments: Mapping[str, Mapping[str, Sequence[Block]]]
    machine_state: Mapping[int, NUMANodeState]
    expected_assignments: Mapping[str, Mapping[str, Sequence[Block]]]
    expected_state: Mapping[int, NUMANodeState]


_REMOVE_CASES = [
    RemoveCase("Correct removing of a container", ("fakePod1", "fakeContainer2"),
               TWO_ON_NODE0, TWO_ON_NODE0_STATE,
               {"fakePod1": {"fakeContainer1": mem_hp([0], GB, GB)}}, ONE_ON_NODE0_STATE),
    RemoveCase("Correct removing of a multi NUMA container", ("fakePod1", "fakeContainer2"),
               {"fakePod1": {"fakeContainer1": mem_hp([0, 1], GB, GB),
                             "fakeContainer2": mem_hp([0, 1], 12 * GB, GB)}},
               {0: ns(mt(9 * GB, 0, 9 * GB, GB, 10 * GB), mt(5 * GB, 3 * GB, 2 * GB, 0, 5 * GB), cells=[0, 1], n=4),
                1: ns(mt(9 * GB, 5 * GB, 4 * GB, GB, 10 * GB), mt(5 * GB, 5 * GB, 0, 0, 5 * GB), cells=[0, 1], n=4)},
               {"fakePod1": {"fakeContainer1": mem_hp([0, 1], GB, GB)}},
               {0: ns(mt(9 * GB, 9 * GB, 0, GB, 10 * GB), mt(5 * GB, 4 * GB, GB, 0, 5 * GB), cells=[0, 1], n=2),
                1: ns(mt(9 * GB, 8 * GB, GB, GB, 10 * GB), mt(5 * GB, 5 * GB, 0, 0, 5 * GB), cells=[0, 1], n=2)}),
    RemoveCase("Should do nothing if container is not in containerMap", ("fakePod1", "fakeContainer3"),
               TWO_ON_NODE0, TWO_ON_NODE0_STATE, TWO_ON_NODE0, TWO_ON_NODE0_STATE),
]  # fmt: skip


@pytest.mark.parametrize("case", _REMOVE_CASES, ids=[c.name for c in _REMOVE_CASES])
def test_remove_container(case: RemoveCase) -> None:
    mgr = _mgr("Static", case.machine_state, case.assignments, {})
    mgr.remove_container(*case.remove)
    assert sorted_blocks(mgr.state.get_memory_assignments()) == sorted_blocks(case.expected_assignments)
    assert mgr.machine_state() == case.expected_state


# -- TestNewManager -------------------------------------------------------------------------------


def _machine() -> Machine:
    cpus = {i: CPUInfo(numa_node=n.id, socket=n.id, core=i, uncore_cache=n.id) for i, n in enumerate(NODES)}
    topo = CPUTopology(cpus, num_cpus=len(cpus), num_sockets=len(NODES), num_cores=len(cpus))
    return Machine(topo, NODES)


def _gi(n: int) -> Quantity:
    return Quantity.from_int(n * GB, binary=True)


_PER_NODE_1GI = (ReservedMemory(0, {MEM: _gi(1)}), ReservedMemory(1, {MEM: _gi(1)}))

_NEW_MANAGER_CASES = [
    ("Successful creation of Memory Manager instance",
     "Static", {MEM: _gi(2)}, _PER_NODE_1GI, None),
    ("Should return an error when systemReservedMemory (configured with kubelet flag) does not comply with Node "
     "Allocatable feature values",
     "Static", {MEM: _gi(2)}, (ReservedMemory(0, {MEM: _gi(1)}), ReservedMemory(1, {MEM: _gi(2)})),
     'the total amount "3Gi" of type "memory" is not equal to the value "2Gi" determined by Node Allocatable '
     "feature"),
    ("Should return an error when memory reserved for system is empty (systemReservedMemory)",
     "Static", {}, (), "[memorymanager] you should specify the system reserved memory"),
    ("Should return an error when policy name is not correct", "fake", {}, (), 'unknown policy: "fake"'),
    ('Should create manager with "none" policy', "None", {}, (), None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "policy", "reservation", "reserved", "error"), _NEW_MANAGER_CASES, ids=[c[0] for c in _NEW_MANAGER_CASES]
)
def test_new_manager(
    name: str,
    policy: str,
    reservation: Mapping[str, Quantity],
    reserved: tuple[ReservedMemory, ...],
    error: str | None,
) -> None:
    cfg = KubeletConfig(memory_manager_policy=policy, reserved_memory=reserved)
    if error is not None:
        with pytest.raises(KubeletStartupError) as info:
            new_memory_manager(cfg, _machine(), FakeAffinity(), GATES, reservation=reservation, start=False)
        assert str(info.value) == error
        return
    mgr = new_memory_manager(cfg, _machine(), FakeAffinity(), GATES, reservation=reservation, start=False)
    assert mgr.policy_name == policy
    if policy == "Static":
        assert mgr.policy.system_reserved == RESERVED  # type: ignore[attr-defined]


# -- TestGetTopologyHints -------------------------------------------------------------------------

_HINTS_BOTH_SINGLE = [hint([0], True), hint([1], True)]
_HINTS_ALL = [hint([0], True), hint([1], True), hint([0, 1], False)]

_TOPOLOGY_HINT_CASES = [
    ("Successful hint generation", {"fakePod1": {"fakeContainer1", "fakeContainer2"}},
     {MEM: _HINTS_BOTH_SINGLE, HP1G: _HINTS_BOTH_SINGLE}),
    # the second upstream row (same description): fakePod1 is not active any more,
    # so its stale state is collected before the hints are computed
    ("Successful hint generation (stale state removed)", {},
     {MEM: _HINTS_ALL, HP1G: _HINTS_ALL}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "active", "expected"), _TOPOLOGY_HINT_CASES, ids=[c[0] for c in _TOPOLOGY_HINT_CASES]
)
def test_get_topology_hints(
    name: str, active: Mapping[str, set[str]], expected: Mapping[str, list[TopologyHint]]
) -> None:
    mgr = _mgr("Static", TWO_ON_NODE0_STATE, TWO_ON_NODE0, active)
    pod = get_pod("fakePod2", "fakeContainer1", GUARANTEED)
    assert mgr.get_topology_hints(pod, pod.containers[0]) == expected


# -- TestAllocateAndAddPodWithInitContainers --------------------------------------------------------


def test_allocate_and_add_pod_with_init_containers() -> None:
    """should remove init containers from the state file, once app container started"""
    node = ns(mt(9728 * MB, 9728 * MB, 0, 512 * MB, 10 * GB), mt(5 * GB, 5 * GB, 0, 0, 5 * GB))
    machine_state = {0: ns(node.memory_map[MEM], node.memory_map[HP1G], cells=[0]),
                     1: ns(node.memory_map[MEM], node.memory_map[HP1G], cells=[1])}  # fmt: skip
    pod = pod_with_inits(
        "pod1",
        [container("container1", res(cpu="1000Mi", memory="4Gi", hp1g="4Gi"))],
        [container("initContainer1", res(cpu="1000Mi", memory="7Gi", hp1g="5Gi"), kind="init")],
    )
    mgr = _mgr("Static", machine_state, {}, {"pod1": {"initContainer1", "container1"}}, {0: {MEM: 512 * MB}})
    for ctr in pod.init_containers:
        mgr.allocate(pod, ctr)
    for ctr in pod.containers:
        mgr.allocate(pod, ctr)
    for ctr in pod.init_containers:
        mgr.add_container(pod, ctr)
    for ctr in pod.containers:
        mgr.add_container(pod, ctr)
    assert sorted_blocks(mgr.state.get_memory_assignments()) == sorted_blocks(
        {"pod1": {"container1": mem_hp([0], 4 * GB, 4 * GB)}}
    )
    assert mgr.machine_state() == {
        0: ns(mt(9728 * MB, 5632 * MB, 4 * GB, 512 * MB, 10 * GB), mt(5 * GB, GB, 4 * GB, 0, 5 * GB), cells=[0], n=2),
        1: machine_state[1],
    }


# -- calculateHints quirk (upstream's memory manager)----------------------------


def test_existing_group_hint_is_not_preferred() -> None:
    """minAffinitySize is taken before the group rules drop the single-NUMA
    masks, so the only fitting hint (the existing {0,1} group) comes out
    non-preferred; a preferred nil hint then fails in Allocate."""
    group = {
        0: ns(mt(9 * GB, 0, 9 * GB, GB, 10 * GB), mt(5 * GB, 4 * GB, GB, 0, 5 * GB), cells=[0, 1], n=2),
        1: ns(mt(9 * GB, 5 * GB, 4 * GB, GB, 10 * GB), mt(5 * GB, 5 * GB, 0, 0, 5 * GB), cells=[0, 1], n=2),
    }  # fmt: skip
    assignments = {"fakePod1": {"fakeContainer1": mem_hp([0, 1], 13 * GB, GB)}}
    pod = get_pod("fakePod2", "fakeContainer1", GUARANTEED)
    mgr = _mgr("Static", group, assignments, {"fakePod1": {"fakeContainer1"}, "fakePod2": {"fakeContainer1"}})
    expected = [hint([0, 1], False)]
    assert mgr.get_topology_hints(pod, pod.containers[0]) == {MEM: expected, HP1G: expected}

    preferred_nil = MemoryManager(
        new_static_policy(NODES, RESERVED, FakeAffinity(hint(None, True)), GATES),
        MemoryManagerState(group, assignments),
        GATES,
    )
    with pytest.raises(MemoryManagerError) as info:
        preferred_nil.allocate(pod, pod.containers[0])
    assert str(info.value) == "[memorymanager] failed to find the default preferred hint"

    mgr.allocate(pod, pod.containers[0])  # the fake manager's hint is not preferred: accepted
    assert sorted_blocks(mgr.state.get_memory_assignments())["fakePod2"] == sorted_blocks(
        {"fakePod2": {"fakeContainer1": mem_hp([0, 1], GB, GB)}}
    )["fakePod2"]
