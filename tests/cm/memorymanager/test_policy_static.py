"""Tests of the memory manager's Static policy.

Ports upstream's pkg/kubelet/cm/memorymanager/policy_static_test.go tables
(TestStaticPolicyNew, Name, Start, Allocate, AllocateWithInitContainers,
AllocateWithRestartableInitContainers, RemoveContainer, GetTopologyHints,
Test_getPodRequestedResources) as data, plus podnuma checks of upstream
quirks a port easily gets wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod import Pod
from podnuma.api.quantity import Quantity
from podnuma.cm.admission import KubeletPanic
from podnuma.cm.memorymanager.policy import MemoryManagerError
from podnuma.cm.memorymanager.policy_static import (
    ERR_DEFAULT_NOT_PREFERRED,
    ERR_EMPTY_STATE_WITH_ASSIGNMENTS,
    ERR_EXTENDED_NOT_PREFERRED,
    ERR_NO_DEFAULT_AFFINITY,
    ERR_NO_EXTENSION,
    ERR_NO_SYSTEM_RESERVED,
    ERR_QUANTITY_INT64,
    ERR_STATE_DIFFERS,
    ERR_VIOLATES_ALLOCATIONS,
    POLICY_STATIC,
    StaticPolicy,
    are_machine_states_equal,
    find_best_hint,
    get_pod_requested_resources,
    hugepage_resource_name,
    is_hint_in_group,
    new_static_policy,
)
from podnuma.cm.memorymanager.state import Block, MemoryManagerState, NUMANodeState
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import NUMANode

from .helpers import (
    BURSTABLE_LIM,
    BURSTABLE_REQ,
    GATES,
    GB,
    GUARANTEED,
    HP1G,
    HP2M,
    MB,
    MEM,
    FakeAffinity,
    blk,
    container,
    g,
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

SR0 = {0: {MEM: 512 * MB}}
SR01 = {0: {MEM: 512 * MB}, 1: {MEM: 512 * MB}}
SR012 = {n: {MEM: 512 * MB} for n in range(3)}
SR0123 = {n: {MEM: 512 * MB} for n in range(4)}

Assignments = Mapping[str, Mapping[str, Sequence[Block]]]


def make_policy(
    system_reserved: Mapping[int, Mapping[str, int]],
    machine: Sequence[NUMANode] = (),
    affinity: TopologyHint | None = None,
    gates: FeatureGates = GATES,
) -> StaticPolicy:
    return new_static_policy(machine, system_reserved, FakeAffinity(affinity), gates)


def make_state(machine_state: Mapping[int, NUMANodeState] | None, assignments: Assignments | None) -> MemoryManagerState:
    return MemoryManagerState(machine_state or {}, assignments or {})


# -- TestStaticPolicyNew / Name ------------------------------------------------------


def test_static_policy_new_requires_reserved_memory() -> None:
    with pytest.raises(KubeletStartupError, match=r"^\[memorymanager\] you should specify the system reserved memory$"):
        make_policy({})
    assert str(ERR_NO_SYSTEM_RESERVED).startswith("[memorymanager]")


def test_static_policy_new_one_node_with_reserved_memory() -> None:
    p = make_policy({0: {}, 1: {MEM: 512 * MB}})
    assert isinstance(p, StaticPolicy)


def test_static_policy_name() -> None:
    assert make_policy(SR0).name() == POLICY_STATIC == "Static"


# -- TestStaticPolicyStart ------------------------------------------------------------

_M2G_1P = [numa(0, 2 * GB, 1)]


@dataclass
class StartCase:
    name: str
    machine: Sequence[NUMANode]
    state: dict[int, NUMANodeState]
    assignments: dict[str, dict[str, list[Block]]] = field(default_factory=dict)
    system_reserved: Mapping[int, Mapping[str, int]] = field(default_factory=lambda: SR0)
    error: str | None = None
    expected: dict[int, NUMANodeState] | None = None


_CROSS_STATE = {
    n: ns(mt(640 * MB, f, r, 512 * MB, 2176 * MB), mt(GB, 0, GB, 0, GB), cells=[0, 1], n=4)
    for n, f, r in ((0, 0, 640 * MB), (1, 256 * MB, 384 * MB))
}

_START_CASES = [
    StartCase(
        "should fail, if machine state is empty, but it has memory assignments",
        [], {}, {"pod": {"container1": [blk([0], MEM, 512 * MB)]}},
        error=ERR_EMPTY_STATE_WITH_ASSIGNMENTS,
    ),
    StartCase(
        "should fill the state with default values, when the state is empty",
        [numa(0, 3 * GB, 1)], {},
        expected={0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 3 * GB), mt(GB, GB, 0, 0, GB), cells=[0])},
    ),
    StartCase(
        "should fail when machine state does not have all NUMA nodes",
        [numa(0, 2 * GB, 1), numa(1, 2 * GB, 1)],
        {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[0])},
        error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when machine state does not have memory resource",
        _M2G_1P, {0: ns(None, mt(GB, GB, 0, 0, GB), cells=[0])}, error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when machine state has wrong size of total memory",
        _M2G_1P, {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 1536 * MB), cells=[0])}, error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when machine state has wrong size of system reserved memory",
        _M2G_1P, {0: ns(mt(1536 * MB, 1536 * MB, 0, 1024, 2 * GB), cells=[0])}, error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when machine state reserved memory is different from the memory of all containers memory assignments",
        _M2G_1P, {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), cells=[0], n=1)},
        {"pod": {"container1": [blk([0], MEM, 512 * MB)]}}, error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when machine state has wrong size of hugepages",
        [numa(0, 2 * GB, 2)],
        {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[0])},
        error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when machine state has wrong size of system reserved hugepages",
        [numa(0, 2 * GB, 2)],
        {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, GB, 2 * GB), cells=[0])},
        error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when the hugepages reserved machine state is different from the hugepages of all containers memory assignments",
        [numa(0, 2 * GB, 4)],
        {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(4 * GB, GB, 3 * GB, 0, 4 * GB), cells=[0], n=2)},
        {"pod1": {"container1": [blk([0], HP1G, GB)]}, "pod2": {"container2": [blk([0], HP1G, GB)]}},
        error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should fail when machine state does not have NUMA node that used under the memory assignment",
        _M2G_1P, {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[0])},
        {"pod1": {"container1": [blk([1], MEM, GB)]}},
        error="[memorymanager] (pod: pod1, container: container1) the memory assignment uses the NUMA that does not exist",
    ),
    StartCase(
        "should fail when machine state does not have resource that used under the memory assignment",
        _M2G_1P, {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[0], n=2)},
        {"pod1": {"container1": [blk([0], MEM, GB), blk([0], HP2M, GB)]}},
        error="[memorymanager] (pod: pod1, container: container1) the memory assignment uses memory resource that does not exist",
    ),
    StartCase(
        "should fail when machine state number of assignments is different from the expected one",
        _M2G_1P, {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[0], n=1)},
        {"pod1": {"container1": mem_hp([0], GB, GB)}}, error=ERR_STATE_DIFFERS,
    ),
    StartCase(
        "should validate cross NUMA reserved memory vs container assignments",
        [numa(0, 2176 * MB, 1), numa(1, 2176 * MB, 1)], _CROSS_STATE,
        {"pod1": {"container1": mem_hp([0, 1], 768 * MB, GB)}, "pod2": {"container2": mem_hp([0, 1], 256 * MB, GB)}},
        system_reserved=SR01, expected=_CROSS_STATE,
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", _START_CASES, ids=[c.name for c in _START_CASES])
def test_static_policy_start(case: StartCase) -> None:
    p = make_policy(case.system_reserved, case.machine)
    s = make_state(case.state, case.assignments)
    if case.error is not None:
        with pytest.raises(KubeletStartupError) as info:
            p.start(s)
        assert str(info.value) == case.error
        return
    p.start(s)
    assert sorted_blocks(s.get_memory_assignments()) == sorted_blocks(case.assignments)
    assert case.expected is not None
    assert are_machine_states_equal(s.get_machine_state(), case.expected)
    assert s.get_machine_state() == case.expected


def test_start_keeps_the_stored_distribution() -> None:
    # free/reserved are compared as sums over the NUMA group: a different
    # split of the same group total is accepted and kept as stored
    swapped = {
        n: ns(mt(640 * MB, f, r, 512 * MB, 2176 * MB), mt(GB, 0, GB, 0, GB), cells=[0, 1], n=4)
        for n, f, r in ((0, 256 * MB, 384 * MB), (1, 0, 640 * MB))
    }
    p = make_policy(SR01, [numa(0, 2176 * MB, 1), numa(1, 2176 * MB, 1)])
    s = make_state(
        swapped,
        {"pod1": {"container1": mem_hp([0, 1], 768 * MB, GB)}, "pod2": {"container2": mem_hp([0, 1], 256 * MB, GB)}},
    )
    p.start(s)
    assert s.get_machine_state() == swapped


# -- TestStaticPolicyAllocate -----------------------------------------------------------

_N0_FREE = ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB))
_N0_USED = ns(mt(1536 * MB, 512 * MB, 1024 * MB, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB))
_THREE_NODES = {
    0: ns(mt(GB, 512 * MB, 512 * MB, 512 * MB, 1536 * MB), mt(GB, GB, 0, 0, GB), cells=[0], n=1),
    1: ns(mt(512 * MB, 512 * MB, 0, 512 * MB, 1536 * MB), mt(GB, GB, 0, 0, GB), cells=[1]),
    2: ns(mt(512 * MB, 512 * MB, 0, 512 * MB, 1536 * MB), mt(GB, GB, 0, 0, GB), cells=[2]),
}
_FOUR_SMALL = {n: ns(mt(512 * MB, 512 * MB, 0, 512 * MB, GB), mt(GB, GB, 0, 0, GB), cells=[n]) for n in range(4)}


@dataclass
class AllocCase:
    name: str
    pod: Pod
    state: dict[int, NUMANodeState]
    hint: TopologyHint
    assignments: dict[str, dict[str, list[Block]]] = field(default_factory=dict)
    system_reserved: Mapping[int, Mapping[str, int]] = field(default_factory=lambda: SR0)
    error: str | None = None
    expected_assignments: dict[str, dict[str, list[Block]]] | None = None
    expected_state: dict[int, NUMANodeState] | None = None


_ALLOC_CASES = [
    AllocCase(
        "should do nothing for non-guaranteed pods",
        get_pod("pod1", "container1", BURSTABLE_REQ, BURSTABLE_LIM), {0: _N0_FREE}, hint(None, False),
        expected_assignments={}, expected_state={0: _N0_FREE},
    ),
    AllocCase(
        "should do nothing once container already exists under the state file",
        get_pod("pod1", "container1", GUARANTEED), {0: _N0_USED}, hint(None, False),
        assignments={"pod1": {"container1": [blk([0], MEM, GB)]}},
        expected_assignments={"pod1": {"container1": [blk([0], MEM, GB)]}}, expected_state={0: _N0_USED},
    ),
    AllocCase(
        "should calculate a default topology hint when no NUMA affinity was provided by the topology manager hint",
        get_pod("pod1", "container1", GUARANTEED),
        {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[0])}, hint(None, False),
        expected_assignments={"pod1": {"container1": mem_hp([0], GB, GB)}},
        expected_state={0: ns(mt(1536 * MB, 512 * MB, 1024 * MB, 512 * MB, 2 * GB), mt(GB, 0, GB, 0, GB), cells=[0], n=2)},
    ),
    AllocCase(
        "should fail when no NUMA affinity was provided under the topology manager hint and calculation of the default hint failed",
        get_pod("pod2", "container2", GUARANTEED),
        {0: ns(mt(1536 * MB, 512 * MB, 1024 * MB, 512 * MB, 2 * GB), mt(GB, 0, GB, 0, GB), cells=[0], n=2)},
        hint(None, False), assignments={"pod1": {"container1": mem_hp([0], GB, GB)}}, error=ERR_NO_DEFAULT_AFFINITY,
    ),
    AllocCase(
        "should fail when no NUMA affinity was provided under the topology manager preferred hint and default hint has preferred false",
        get_pod("pod2", "container2", GUARANTEED), _THREE_NODES, hint(None, True),
        assignments={"pod1": {"container1": [blk([0], MEM, 512 * MB)]}}, system_reserved=SR012,
        error=ERR_DEFAULT_NOT_PREFERRED,
    ),
    AllocCase(
        "should fail when NUMA affinity provided under the topology manager hint did not satisfy container requirements and extended hint generation failed",
        get_pod("pod1", "container1", GUARANTEED),
        {
            0: ns(mt(512 * MB, 512 * MB, 0, 512 * MB, GB), mt(GB, GB, 0, 0, GB), cells=[0]),
            1: ns(mt(1536 * MB, 512 * MB, GB, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[1, 2], n=1),
            2: ns(mt(1536 * MB, 512 * MB, GB, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[1, 2], n=1),
        },
        hint([0], False), system_reserved=SR012, error=ERR_NO_EXTENSION,
    ),
    AllocCase(
        "should fail when the topology manager provided the preferred hint and extended hint has preferred false",
        get_pod("pod2", "container2", GUARANTEED), _THREE_NODES, hint([1], True),
        assignments={"pod1": {"container1": [blk([0], MEM, 512 * MB)]}}, system_reserved=SR012,
        error=ERR_EXTENDED_NOT_PREFERRED,
    ),
    AllocCase(
        "should succeed to allocate memory from multiple NUMA nodes",
        get_pod("pod1", "container1", GUARANTEED), _FOUR_SMALL, hint(None, True), system_reserved=SR0123,
        expected_assignments={"pod1": {"container1": mem_hp([0, 1], GB, GB)}},
        expected_state={
            0: ns(mt(512 * MB, 0, 512 * MB, 512 * MB, GB), mt(GB, 0, GB, 0, GB), cells=[0, 1], n=2),
            1: ns(mt(512 * MB, 0, 512 * MB, 512 * MB, GB), mt(GB, GB, 0, 0, GB), cells=[0, 1], n=2),
            2: _FOUR_SMALL[2],
            3: _FOUR_SMALL[3],
        },
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", _ALLOC_CASES, ids=[c.name for c in _ALLOC_CASES])
def test_static_policy_allocate(case: AllocCase) -> None:
    p = make_policy(case.system_reserved, affinity=case.hint)
    s = make_state(case.state, case.assignments)
    ctr = case.pod.containers[0]
    if case.error is not None:
        with pytest.raises(MemoryManagerError) as info:
            p.allocate(s, case.pod, ctr)
        assert str(info.value) == case.error
        assert not hasattr(info.value, "reason")  # admission: UnexpectedAdmissionError
        return
    p.allocate(s, case.pod, ctr)
    assert case.expected_assignments is not None and case.expected_state is not None
    assert sorted_blocks(s.get_memory_assignments()) == sorted_blocks(case.expected_assignments)
    assert are_machine_states_equal(s.get_machine_state(), case.expected_state)
    assert s.get_machine_state() == case.expected_state


# -- TestStaticPolicyAllocateWithInitContainers --------------------------------------------


@dataclass
class InitCase:
    name: str
    inits: Sequence[int]  # GiB of memory and of 1Gi hugepages per init container
    apps: Sequence[int]
    node: tuple[int, int]  # (memory allocatable MiB, total GiB)
    expected_init_sizes: Sequence[int]
    reserved: int  # GiB, memory and hugepages
    reusable_pod0: bool = False


_INIT_CASES = [
    InitCase("should re-use init containers memory, init containers requests 1Gi and 2Gi, apps containers 3Gi and 4Gi",
             [1, 2], [3, 4], (7680, 8), [0, 0], 7),
    InitCase("should re-use init containers memory, init containers requests 4Gi and 3Gi, apps containers 2Gi and 1Gi",
             [4, 3], [2, 1], (7680, 8), [0, 1], 4),
    InitCase("should re-use init containers memory, init containers requests 7Gi and 4Gi, apps containers 4Gi and 3Gi",
             [7, 4], [4, 3], (7680, 8), [0, 0], 7),
    InitCase("should re-use init containers memory, init containers requests 7Gi and 4Gi, apps containers 5Gi and 2Gi",
             [7, 4], [5, 2], (10240, 10), [0, 0], 7, reusable_pod0=True),
]  # fmt: skip


def _gi(n: int) -> str:
    return f"{n}Gi"


@pytest.mark.parametrize("case", _INIT_CASES, ids=[c.name for c in _INIT_CASES])
def test_static_policy_allocate_with_init_containers(case: InitCase) -> None:
    inits = [container(f"initContainer{i + 1}", g(_gi(s)), kind="init") for i, s in enumerate(case.inits)]
    apps = [container(f"container{i + 1}", g(_gi(s))) for i, s in enumerate(case.apps)]
    pod = pod_with_inits("pod1", apps, inits)
    alloc_mib, total = case.node
    state = {0: ns(mt(alloc_mib * MB, alloc_mib * MB, 0, 512 * MB, total * GB), mt(total * GB, total * GB, 0, 0, total * GB), cells=[0])}
    p = make_policy(SR0, affinity=hint(None, False))
    if case.reusable_pod0:
        p.init_containers_reusable_memory = {"pod0": {}}
    s = make_state(state, {})
    for ctr in (*pod.init_containers, *pod.containers):
        p.allocate(s, pod, ctr)
    expected = {
        "pod1": {
            **{c.name: mem_hp([0], size * GB, size * GB) for c, size in zip(inits, case.expected_init_sizes, strict=True)},
            **{c.name: mem_hp([0], size * GB, size * GB) for c, size in zip(apps, case.apps, strict=True)},
        }
    }
    assert sorted_blocks(s.get_memory_assignments()) == sorted_blocks(expected)
    n = 2 * (len(inits) + len(apps))
    r = case.reserved * GB
    assert s.get_machine_state() == {
        0: ns(
            mt(alloc_mib * MB, alloc_mib * MB - r, r, 512 * MB, total * GB),
            mt(total * GB, total * GB - r, r, 0, total * GB),
            cells=[0],
            n=n,
        )
    }
    # the reuse bookkeeping only ever holds the pod being allocated
    assert set(p.init_containers_reusable_memory) == {"pod1"}


# -- TestStaticPolicyAllocateWithRestartableInitContainers --------------------------------


def test_restartable_init_containers_existing_state_is_kept() -> None:
    pod = pod_with_inits(
        "pod1", [container("container1", GUARANTEED)], [container("initContainer1", GUARANTEED, kind="sidecar")]
    )
    state = {0: ns(mt(2560 * MB, 512 * MB, 2048 * MB, 512 * MB, 3 * GB), mt(2 * GB, 2 * GB, 0, 0, 2 * GB))}
    assignments = {"pod1": {"initContainer1": [blk([0], MEM, GB)], "container1": [blk([0], MEM, GB)]}}
    p = make_policy(SR0, affinity=hint(None, False))
    s = make_state(state, assignments)
    for ctr in pod.all_containers():
        p.allocate(s, pod, ctr)
    assert s.get_memory_assignments() == assignments
    assert s.get_machine_state() == state


def test_restartable_init_containers_memory_is_not_reused() -> None:
    inits = [
        container("initContainer1", g("1Gi"), kind="init"),
        container("restartableInitContainer2", g("2Gi"), kind="sidecar"),
        container("initContainer3", g("3Gi"), kind="init"),
        container("restartableInitContainer4", g("4Gi"), kind="sidecar"),
    ]
    pod = pod_with_inits("pod1", [container("container1", GUARANTEED)], inits)
    state = {0: ns(mt(7 * GB, 7 * GB, 0, 512 * MB, 7680 * MB), mt(7 * GB, 7 * GB, 0, 0, 7 * GB), cells=[0])}
    p = make_policy(SR0, affinity=hint(None, False))
    s = make_state(state, {})
    for ctr in pod.all_containers():
        p.allocate(s, pod, ctr)
    expected = {
        "pod1": {
            "initContainer1": mem_hp([0], 0, 0),
            "restartableInitContainer2": mem_hp([0], 2 * GB, 2 * GB),
            "initContainer3": mem_hp([0], 0, 0),
            "restartableInitContainer4": mem_hp([0], 4 * GB, 4 * GB),
            "container1": mem_hp([0], GB, GB),
        }
    }
    assert sorted_blocks(s.get_memory_assignments()) == sorted_blocks(expected)
    assert s.get_machine_state() == {
        0: ns(mt(7 * GB, 0, 7 * GB, 512 * MB, 7680 * MB), mt(7 * GB, 0, 7 * GB, 0, 7 * GB), cells=[0], n=10)
    }


# -- TestStaticPolicyRemoveContainer --------------------------------------------------------

_RC_CROSS = {
    0: ns(mt(512 * MB, 0, 512 * MB, 512 * MB, GB), mt(GB, 0, GB, 0, GB), cells=[0, 1], n=2),
    1: ns(mt(512 * MB, 0, 512 * MB, 512 * MB, GB), mt(GB, GB, 0, 0, GB), cells=[0, 1], n=2),
}


@pytest.mark.parametrize(
    ("name", "assignments", "state", "expected_state", "system_reserved"),
    [
        ("should do nothing when the container does not exist under the state", {}, {0: _N0_FREE}, {0: _N0_FREE}, SR0),
        (
            "should delete the container assignment and update the machine state",
            {"pod1": {"container1": mem_hp([0], GB, GB)}},
            {0: ns(mt(1536 * MB, 512 * MB, 1024 * MB, 512 * MB, 2 * GB), mt(GB, 0, GB, 0, GB), cells=[0], n=2)},
            {0: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[0])},
            SR0,
        ),
        (
            "should delete the cross NUMA container assignment and update the machine state",
            {"pod1": {"container1": mem_hp([0, 1], GB, GB)}},
            _RC_CROSS,
            {n: ns(mt(512 * MB, 512 * MB, 0, 512 * MB, GB), mt(GB, GB, 0, 0, GB), cells=[n]) for n in (0, 1)},
            SR01,
        ),
    ],
)
def test_static_policy_remove_container(
    name: str,
    assignments: dict[str, dict[str, list[Block]]],
    state: dict[int, NUMANodeState],
    expected_state: dict[int, NUMANodeState],
    system_reserved: Mapping[int, Mapping[str, int]],
) -> None:
    p = make_policy(system_reserved)
    s = make_state(state, assignments)
    p.remove_container(s, "pod1", "container1")
    assert s.get_memory_assignments() == {}
    assert s.get_machine_state() == expected_state
    p.remove_container(s, "pod1", "container1")  # idempotent
    assert s.get_machine_state() == expected_state


def test_release_frees_lowest_numa_first() -> None:
    # the 512Mi block was served by node 1, but releasing it frees node 0 first
    state = {
        0: ns(mt(GB, 0, GB, 0, GB), cells=[0, 1], n=2),
        1: ns(mt(GB, 512 * MB, 512 * MB, 0, GB), cells=[0, 1], n=2),
    }
    assignments = {"pod": {"a": [blk([0, 1], MEM, GB)], "b": [blk([0, 1], MEM, 512 * MB)]}}
    p = make_policy({0: {MEM: 1}})
    s = make_state(state, assignments)
    p.remove_container(s, "pod", "b")
    ms = s.get_machine_state()
    assert (ms[0].memory_map[MEM].free, ms[1].memory_map[MEM].free) == (512 * MB, 512 * MB)
    assert ms[0].cells == [0, 1] and ms[0].number_of_assignments == 1


# -- TestStaticPolicyGetTopologyHints --------------------------------------------------------

_H_FOUR = {
    0: ns(mt(1536 * MB, 0, 1536 * MB, 512 * MB, 2 * GB), mt(GB, 0, GB, 0, GB), cells=[0, 1], n=2),
    1: ns(mt(1536 * MB, GB, 512 * MB, 512 * MB, 2 * GB), mt(GB, 0, GB, 0, GB), cells=[0, 1], n=2),
    2: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[2]),
    3: ns(mt(1536 * MB, 1536 * MB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[3]),
}
_H_2M = {
    0: ns(mt(1536 * MB, 0, 1536 * MB, 512 * MB, 2 * GB), hp2m=mt(20 * MB, 0, 20 * MB, 0, 20 * MB), cells=[0, 1], n=2),
    1: ns(mt(1536 * MB, GB, 512 * MB, 512 * MB, 2 * GB), hp2m=mt(20 * MB, 16 * MB, 4 * MB, 0, 20 * MB), cells=[0, 1], n=2),
}
_PREF_2_3 = [hint([2], True), hint([3], True), hint([2, 3], False)]

_HINT_CASES = [
    ("should not provide topology hints for non-guaranteed pods",
     get_pod("pod1", "container1", BURSTABLE_REQ, BURSTABLE_LIM), {}, {}, SR0, None),
    ("should provide topology hints based on the existent memory assignment",
     get_pod("pod1", "container1", GUARANTEED), {}, {"pod1": {"container1": mem_hp([0], GB, GB)}}, SR0,
     {MEM: [hint([0], True)], HP1G: [hint([0], True)]}),
    ("should calculate new topology hints, when the container does not exist under assignments",
     get_pod("pod2", "container2", GUARANTEED), _H_FOUR, {"pod1": {"container1": mem_hp([0, 1], 2 * GB, 2 * GB)}},
     SR0123, {MEM: _PREF_2_3, HP1G: _PREF_2_3}),
    ("should fail when number of existing memory assignment resources are different from resources requested by container",
     get_pod("pod1", "container1", GUARANTEED), {}, {"pod1": {"container1": [blk([0], MEM, GB)]}}, SR0, None),
    ("should fail when existing memory assignment resources are different from resources requested by container",
     get_pod("pod1", "container1", GUARANTEED), {}, {"pod1": {"container1": mem_hp([0], GB, GB, HP2M)}}, SR0, None),
    ("should fail when existing memory assignment size is different from one requested by the container",
     get_pod("pod1", "container1", GUARANTEED), {}, {"pod1": {"container1": mem_hp([0], 512 * MB, GB)}}, SR0, None),
    ("should not return preferred hints with multiple NUMA nodes for the pod with resources satisfied by a single NUMA node",
     get_pod("pod2", "container2", res(cpu="1000Mi", memory="1Gi", hp2m="16Mi")), _H_2M,
     {"pod1": {"container1": mem_hp([0, 1], 2 * GB, 24 * MB, HP2M)}}, SR01,
     {MEM: [hint([0, 1], False)], HP2M: [hint([0, 1], False)]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "pod", "state", "assignments", "system_reserved", "expected"), _HINT_CASES, ids=[c[0] for c in _HINT_CASES]
)
def test_static_policy_get_topology_hints(
    name: str,
    pod: Pod,
    state: dict[int, NUMANodeState],
    assignments: dict[str, dict[str, list[Block]]],
    system_reserved: Mapping[int, Mapping[str, int]],
    expected: dict[str, list[TopologyHint]] | None,
) -> None:
    p = make_policy(system_reserved)
    s = make_state(state, assignments)
    assert p.get_topology_hints(s, pod, pod.containers[0]) == expected


def test_a_hugepage_size_the_node_lacks_is_the_kubelets_panic() -> None:
    # calculateHints reads the table of every requested resource on every
    # NUMA node without a nil check: a node that reports no 2Mi pages has
    # no such table, and the kubelet dies on the nil pointer
    p = make_policy(SR01, affinity=hint(None, False))
    state = {n: ns(mt(GB, GB, 0, 512 * MB, 2 * GB), mt(GB, GB, 0, 0, GB), cells=[n]) for n in (0, 1)}
    s = make_state(state, {})
    pod = get_pod("p", "c", res(cpu="1", memory="256Mi", hp2m="4Mi"))
    with pytest.raises(KubeletPanic) as hints_err:
        p.get_topology_hints(s, pod, pod.containers[0])
    assert hints_err.value.where == "[memorymanager] calculateHints"
    assert str(hints_err.value) == (
        "[memorymanager] calculateHints: NUMA node 0 has no hugepages-2Mi memory table: runtime error: "
        "invalid memory address or nil pointer dereference (kubelet v1.37 panics here)"
    )
    # Allocate without a hint (topology manager policy none) takes the
    # default hint through calculateHints: the same panic
    with pytest.raises(KubeletPanic):
        p.allocate(s, pod, pod.containers[0])
    assert s.get_memory_blocks("p", "c") is None
    # the size the node has is read as before
    ok = get_pod("q", "c", res(cpu="1", memory="256Mi", hp1g="1Gi"))
    assert p.get_topology_hints(s, ok, ok.containers[0])


def test_no_fit_returns_an_empty_map() -> None:
    # nothing fits: an empty (not nil) map, read as "don't care" by the
    # topology manager; the pod then fails in Allocate
    p = make_policy(SR0, affinity=hint(None, False))
    state = {0: ns(mt(512 * MB, 512 * MB, 0, 512 * MB, GB), mt(GB, GB, 0, 0, GB), cells=[0])}
    s = make_state(state, {})
    pod = get_pod("p", "c", GUARANTEED)
    assert p.get_topology_hints(s, pod, pod.containers[0]) == {}
    with pytest.raises(MemoryManagerError, match="failed to get the default NUMA affinity"):
        p.allocate(s, pod, pod.containers[0])


def test_merged_hint_is_extended() -> None:
    # the topology manager narrowed the memory manager's {0,1} to {0}:
    # Allocate widens it back to the narrowest fitting group containing it
    p = make_policy(SR01, affinity=hint([0], False))
    s = make_state(_FOUR_SMALL, {})
    pod = get_pod("p", "c", GUARANTEED)
    p.allocate(s, pod, pod.containers[0])
    assert s.get_memory_blocks("p", "c") == [blk([0, 1], HP1G, GB), blk([0, 1], MEM, GB)]


def test_violating_allocation_rejected() -> None:
    # node 0 holds a single-NUMA allocation: a {0,1} hint that fits is refused
    state = {
        0: ns(mt(2 * GB, GB, GB, 0, 2 * GB), cells=[0], n=1),
        1: ns(mt(2 * GB, 2 * GB, 0, 0, 2 * GB), cells=[1]),
    }
    p = make_policy({0: {MEM: 1}}, affinity=hint([0, 1], False))
    s = make_state(state, {"other": {"c": [blk([0], MEM, GB)]}})
    pod = get_pod("p", "c", res(cpu="1", memory="2Gi"))
    with pytest.raises(MemoryManagerError) as info:
        p.allocate(s, pod, pod.containers[0])
    assert str(info.value) == ERR_VIOLATES_ALLOCATIONS


def test_fractional_memory_request() -> None:
    p = make_policy(SR0, affinity=hint(None, False))
    s = make_state({0: _N0_FREE}, {})
    pod = get_pod("p", "c", res(cpu="1", memory="1500m"))
    assert p.get_topology_hints(s, pod, pod.containers[0]) is None
    with pytest.raises(MemoryManagerError, match=r"^\[memorymanager\] failed to represent quantity as int64$"):
        p.allocate(s, pod, pod.containers[0])
    assert ERR_QUANTITY_INT64.startswith("[memorymanager]")


def test_pod_topology_hints_classic() -> None:
    p = make_policy(SR0123)
    s = make_state(_H_FOUR, {"pod1": {"container1": mem_hp([0, 1], 2 * GB, 2 * GB)}})
    pod = pod_with_inits("pod2", [container("a", g("512Mi")), container("b", g("512Mi"))], [])
    assert p.get_pod_topology_hints(s, pod) == {HP1G: _PREF_2_3, MEM: _PREF_2_3}
    # a restarted pod regenerates from its first container holding blocks,
    # compared with the pod totals: only equal for a single container
    s.set_memory_blocks("pod2", "a", mem_hp([2], 512 * MB, 512 * MB))
    assert p.get_pod_topology_hints(s, pod) is None
    burstable = get_pod("pod3", "c", BURSTABLE_REQ, BURSTABLE_LIM)
    assert p.get_pod_topology_hints(s, burstable) is None


# -- Test_getPodRequestedResources ------------------------------------------------------------


def _r(mem: str, hp: str) -> dict[str, Quantity]:
    return res(memory=mem, hp1g=hp)


@pytest.mark.parametrize(
    ("name", "apps", "inits", "expected"),
    [
        ("maximum resources of init containers > total resources of containers",
         [_r("1Gi", "1Gi"), _r("2Gi", "2Gi")], [("init", _r("1Gi", "1Gi")), ("init", _r("4Gi", "4Gi"))], (4, 4)),
        ("maximum resources of init containers < total resources of containers",
         [_r("2Gi", "2Gi"), _r("3Gi", "3Gi")], [("init", _r("1Gi", "1Gi")), ("init", _r("3Gi", "3Gi"))], (5, 5)),
        ("calculate different resources independently",
         [_r("2Gi", "1Gi"), _r("3Gi", "2Gi")], [("init", _r("1Gi", "1Gi")), ("init", _r("3Gi", "4Gi"))], (5, 4)),
        ("maximum resources of init containers > total resources of long running containers, including restartable init containers",
         [_r("1Gi", "1Gi"), _r("2Gi", "2Gi")], [("sidecar", _r("2Gi", "2Gi")), ("init", _r("4Gi", "4Gi"))], (6, 6)),
        ("maximum resources of init containers < total resources of long running containers, including restartable init containers",
         [_r("2Gi", "2Gi"), _r("3Gi", "3Gi")], [("sidecar", _r("2Gi", "2Gi")), ("init", _r("4Gi", "4Gi"))], (7, 7)),
    ],
)  # fmt: skip
def test_get_pod_requested_resources(
    name: str,
    apps: Sequence[dict[str, Quantity]],
    inits: Sequence[tuple[str, dict[str, Quantity]]],
    expected: tuple[int, int],
) -> None:
    pod = pod_with_inits(
        "",
        [container(f"container{i + 1}", r, {}) for i, r in enumerate(apps)],
        [container(f"init{i + 1}", r, {}, kind=k) for i, (k, r) in enumerate(inits)],
    )
    assert get_pod_requested_resources(pod, GATES) == {MEM: expected[0] * GB, HP1G: expected[1] * GB}


def test_pod_requested_resources_ignore_init_only_types() -> None:
    # only the resources app containers request are reported
    pod = pod_with_inits("", [container("a", res(memory="1Gi"), {})], [container("i", _r("1Gi", "2Gi"), {}, kind="init")])
    assert get_pod_requested_resources(pod, GATES) == {MEM: GB}


# -- helpers ---------------------------------------------------------------------------------


def test_find_best_hint() -> None:
    assert find_best_hint([]) == TopologyHint(None, False)
    hints = [hint([0, 1], False), hint([2], True), hint([1], True), hint([0, 2], True)]
    assert find_best_hint(hints) == hint([1], True)


def test_is_hint_in_group() -> None:
    assert is_hint_in_group([1], [0, 1])
    assert is_hint_in_group([0, 1], [1, 0, 2])
    assert not is_hint_in_group([2], [0, 1])


def test_default_machine_state_and_allocatable_memory() -> None:
    machine = [NUMANode(0, 16 * GB, {2 * MB: GB, GB: 2 * GB}), NUMANode(1, 16 * GB, {})]
    p = make_policy({0: {MEM: GB, HP2M: 2 * MB}, 1: {MEM: 512 * MB}}, machine)
    ms = p.get_default_machine_state()
    assert ms[0].memory_map[MEM] == mt(12 * GB, 12 * GB, 0, GB, 16 * GB)
    assert ms[0].memory_map[HP2M] == mt(GB - 2 * MB, GB - 2 * MB, 0, 2 * MB, GB)
    assert ms[0].memory_map[HP1G] == mt(2 * GB, 2 * GB, 0, 0, 2 * GB)
    assert ms[1].memory_map == {MEM: mt(15872 * MB, 15872 * MB, 0, 512 * MB, 16 * GB)}
    s = make_state(None, None)
    p.start(s)
    assert p.get_allocatable_memory(s) == [
        blk([0], HP1G, 2 * GB), blk([0], HP2M, GB - 2 * MB), blk([0], MEM, 12 * GB), blk([1], MEM, 15872 * MB)
    ]


def test_reserving_more_than_a_node_has_wraps() -> None:
    # uint64 arithmetic, as upstream: the allocatable wraps around
    p = make_policy({0: {MEM: 2 * GB}}, [NUMANode(0, GB, {})])
    assert p.get_default_machine_state()[0].memory_map[MEM].allocatable == (1 << 64) - GB


def test_hugepage_resource_name() -> None:
    assert hugepage_resource_name(2 * MB) == "hugepages-2Mi"
    assert hugepage_resource_name(GB) == "hugepages-1Gi"
    assert hugepage_resource_name(64 * 1024) == "hugepages-64Ki"


def test_pod_level_pod_skipped_while_gate_off() -> None:
    from podnuma.api.pod import PodLevelResources

    pod = Pod(
        uid="p", name="p", containers=(container("c", GUARANTEED),),
        resources=PodLevelResources(requests=res(cpu="2", memory="2Gi"), limits=res(cpu="2", memory="2Gi")),
    )  # fmt: skip
    p = make_policy(SR0, affinity=hint(None, False))
    s = make_state({0: _N0_FREE}, {})
    assert p.get_topology_hints(s, pod, pod.containers[0]) is None
    assert p.get_pod_topology_hints(s, pod) is None
    p.allocate(s, pod, pod.containers[0])
    assert s.get_memory_assignments() == {}
