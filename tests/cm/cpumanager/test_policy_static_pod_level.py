"""The static policy's pod-level path (KEP-5526): upstream policy_static_test.go
TestStaticPolicyAllocatePod and TestValidatePodScopeResources,
cpu_manager_pod_level_test.go TestStaticPolicyRestorePodAllocation,
TestGetPodTopologyHintsWithRestoredPodCPUSet,
TestGetPodTopologyHintsStalePodCPUSet and
TestGetPodTopologyHintsStaleNonPrefixPodCPUSet, and the state outcomes of
policy_static_metrics_test.go TestStaticPolicyMetricsPodLevelAllocation /
TestStaticPolicyMetricsPodLevelRestore."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from podnuma.api.pod import Pod
from podnuma.cm.admission import EmptyPodSharedPoolError, get_pod_admit_result
from podnuma.cm.cpumanager.policy import SMTAlignmentError, UnexpectedAdmissionError
from podnuma.cm.cpumanager.policy_none import NonePolicy
from podnuma.cm.cpumanager.policy_static import StaticPolicy, new_static_policy
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.machine.cpuset import EMPTY, CPUSet
from podnuma.machine.topology import CPUTopology
from tests.cm.cpumanager.cpu_policy_helpers import FakeAffinity, Gates, cs, hint
from tests.cm.cpumanager.pod_level_helpers import (
    GATES_OFF,
    GATES_ON,
    GATES_PLRM_OFF,
    TOPO_RESTORE_DUAL_NUMA,
    TOPO_RESTORE_UNIFORM,
    C,
    pod_level_pod,
    shared,
)
from tests.cm.cpumanager.topologies import TOPO_DUAL_SOCKET_HT, TOPO_SINGLE_SOCKET_HT

ALL12 = CPUSet(range(12))
ALL8 = CPUSet(range(8))
NUMA0 = hint([0], True)
RESERVED0 = cs(0)

EMPTY_POOL_MSG = (
    "pod rejected, sum of exclusive container cpu requests equals pod budget, "
    "leaving no cpus for shared containers"
)
SHARED_INIT_MSG = "pod rejected, pod has shared init containers but no cpus available for them"


def _policy(
    topo: CPUTopology,
    reserved: CPUSet = RESERVED0,
    *,
    gates: Gates = GATES_ON,
    hint_: TopologyHint | None = None,
    options: dict[str, str] | None = None,
) -> StaticPolicy:
    return new_static_policy(topo, reserved.size(), reserved, FakeAffinity(hint_), options, gates)


def _state(
    default: CPUSet,
    uid: str | None = None,
    pod_cpus: CPUSet | None = None,
    assignments: dict[str, CPUSet] | None = None,
) -> CPUManagerState:
    st = CPUManagerState(default)
    if uid is not None:
        if pod_cpus is not None:
            st.set_pod_cpu_set(uid, pod_cpus)
        for name, cset in (assignments or {}).items():
            st.set_cpu_set(uid, name, cset)
    return st


# -- TestStaticPolicyAllocatePod ----------------------------------------------------
# topoDualSocketHT, reserved {0}, hint NUMA 0 preferred, empty state.


@dataclass
class AllocatePodCase:
    desc: str
    pod_req: str
    pod_lim: str
    inits: tuple[C, ...]
    apps: tuple[C, ...]
    exp_assignments: dict[str, CPUSet]
    exp_default: CPUSet
    exp_pod_cpus: CPUSet | None = None
    exp_error: str | None = None


ALLOCATE_POD_CASES = [
    AllocatePodCase(
        "single guaranteed container",
        "2", "2", (), (C("container1", "1"),),
        {"container1": cs(2)}, ALL12 - cs(2, 8), cs(2, 8),
    ),
    AllocatePodCase(
        "single guaranteed container with pod-level resources",
        "2", "2", (), (C("gu-container", "1"),),
        {"gu-container": cs(2)}, ALL12 - cs(2, 8), cs(2, 8),
    ),
    AllocatePodCase(
        "single non-guaranteed container: 1 CPU from the core half used by the reserved CPU",
        "1", "1", (), (shared("ngu-container"),),
        {"ngu-container": cs(6)}, ALL12 - cs(6), cs(6),
    ),
    AllocatePodCase(
        "two guaranteed and one shared container",
        "3", "3", (), (C("gu-container-1", "1"), C("gu-container-2", "1"), shared("ngu-container")),
        {"gu-container-1": cs(6), "gu-container-2": cs(2), "ngu-container": cs(8)},
        ALL12 - cs(2, 6, 8), cs(2, 6, 8),
    ),
    AllocatePodCase(
        "guaranteed init containers reuse the CPUs of the app containers",
        "2", "2", (C("gu-init-container-1", "1"), C("gu-init-container-2", "1")),
        (C("gu-container-1", "1"), C("gu-container-2", "1")),
        {
            "gu-init-container-1": cs(2),
            "gu-init-container-2": cs(2),
            "gu-container-1": cs(2),
            "gu-container-2": cs(8),
        },
        ALL12 - cs(2, 8), cs(2, 8),
    ),
    AllocatePodCase(
        "shared init containers around an exclusive sidecar",
        "3", "3",
        (shared("ngu-init-container-1"), C("gu-init-container-restartable-2", "1", sidecar=True),
         shared("ngu-init-container-3")),
        (C("gu-container-1", "1"), shared("ngu-container-2")),
        {
            "ngu-init-container-1": cs(2, 6, 8),
            "gu-init-container-restartable-2": cs(6),
            "ngu-init-container-3": cs(2, 8),
            "gu-container-1": cs(2),
            "ngu-container-2": cs(8),
        },
        ALL12 - cs(2, 6, 8), cs(2, 6, 8),
    ),
    AllocatePodCase(
        "shared sidecar gets the final pod shared pool",
        "3", "3",
        (shared("ngu-init-container-1"), shared("ngu-init-container-restartable-2", sidecar=True),
         shared("ngu-init-container-3")),
        (C("gu-container-1", "1"), shared("ngu-container-2")),
        {
            "ngu-init-container-1": cs(2, 6, 8),
            "ngu-init-container-restartable-2": cs(2, 8),
            "ngu-init-container-3": cs(2, 6, 8),
            "gu-container-1": cs(6),
            "ngu-container-2": cs(2, 8),
        },
        ALL12 - cs(2, 6, 8), cs(2, 6, 8),
    ),
    AllocatePodCase(
        "exclusive requests equal to the budget leave the shared container nothing",
        "2", "2", (), (C("gu-container-1", "1"), C("gu-container-2", "1"), shared("ngu-container")),
        {}, ALL12, None, EMPTY_POOL_MSG,
    ),
    AllocatePodCase(
        "burstable pod-level pod gets nothing",
        "2", "1", (), (C("gu-container-1", "1"),),
        {}, ALL12,
    ),
]


@pytest.mark.parametrize("tc", ALLOCATE_POD_CASES, ids=lambda tc: tc.desc)
def test_static_policy_allocate_pod(tc: AllocatePodCase) -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, hint_=NUMA0)
    st = _state(ALL12)
    pod = pod_level_pod("pod", tc.pod_req, tc.pod_lim, tc.inits, tc.apps)
    if tc.exp_error is not None:
        with pytest.raises(EmptyPodSharedPoolError) as exc:
            policy.allocate_pod(st, pod)
        result = get_pod_admit_result(exc.value)
        assert (result.reason, result.message) == ("EmptyPodSharedPoolError", tc.exp_error)
    else:
        policy.allocate_pod(st, pod)
    assert st.assignments.get("pod", {}) == tc.exp_assignments
    assert st.get_default_cpuset() == tc.exp_default
    assert st.get_pod_cpu_set("pod") == tc.exp_pod_cpus


# -- TestValidatePodScopeResources ----------------------------------------------------
# topoSingleSocketHT, pod scope, gates on; upstream only asserts error / no error.

VALIDATE_CASES: list[tuple[str, str, tuple[C, ...], tuple[C, ...], str | None]] = [
    ("one exclusive and one shared container", "4", (), (C("c1", "2"), shared("c2")), None),
    ("exclusive containers use the whole budget, nothing shared", "4", (),
     (C("c1", "2"), C("c2", "2")), None),
    ("only shared containers", "4", (), (shared("c1"), shared("c2")), None),
    ("non-integral and burstable containers are shared", "6", (),
     (C("c1", "3"), C("c2", "2"), C("c3", "500m", "1000m"), shared("c4")), None),
    ("exclusive requests equal the budget with a shared container", "5", (),
     (C("c1", "3"), C("c2", "2"), shared("c3")), EMPTY_POOL_MSG),
    ("exclusive init and sidecar with a shared app container", "2",
     (C("init-container1", "1"), C("restartable-init-container1", "1", sidecar=True)),
     (shared("container1"),), None),
    ("exclusive init container as large as the budget", "2",
     (C("init-container1", "2"),), (C("container1", "2"),), None),
    ("shared init container after a sidecar taking the whole budget", "2",
     (C("restartable-init-container1", "2", sidecar=True), shared("init-container1")), (),
     SHARED_INIT_MSG),
    ("shared init container declared before the sidecar", "2",
     (shared("init-container1"), C("restartable-init-container1", "2", sidecar=True)), (), None),
    ("shared sidecar next to a sidecar taking the whole budget", "2",
     (C("restartable-init-container1", "2", sidecar=True),
      shared("restartable-init-container2", sidecar=True)), (), EMPTY_POOL_MSG),
    ("exclusive sidecar and app container filling the budget", "2",
     (C("restartable-init-container1", "1", sidecar=True),), (C("container1", "1"),), None),
    # not upstream rows: v1.37.2 does not check an exclusive init container
    # against what the earlier sidecars leave
    ("exclusive init container larger than what earlier sidecars leave", "4",
     (C("s1", "2", sidecar=True), C("i1", "3")), (C("c1", "2"),), None),
    ("exclusive init container exactly what earlier sidecars leave", "4",
     (C("s1", "2", sidecar=True), C("i1", "2")), (C("c1", "2"),), None),
]


@pytest.mark.parametrize(
    ("desc", "pod_cpu", "inits", "apps", "expected"), VALIDATE_CASES, ids=[c[0] for c in VALIDATE_CASES]
)
def test_validate_pod_scope_resources(
    desc: str, pod_cpu: str, inits: tuple[C, ...], apps: tuple[C, ...], expected: str | None
) -> None:
    policy = _policy(TOPO_SINGLE_SOCKET_HT)
    pod = pod_level_pod("pod", pod_cpu, pod_cpu, inits, apps)
    assert policy.validate_pod_scope_resources(pod) == expected


@pytest.mark.parametrize(
    ("desc", "pod_cpu", "inits", "apps", "expected"),
    [c for c in VALIDATE_CASES if c[4] is not None],
    ids=[c[0] for c in VALIDATE_CASES if c[4] is not None],
)
def test_empty_pod_shared_pool_gives_empty_pod_hints(
    desc: str, pod_cpu: str, inits: tuple[C, ...], apps: tuple[C, ...], expected: str | None
) -> None:
    """GetPodTopologyHints: an empty (non-nil) list when validation fails;
    AllocatePod: EmptyPodSharedPoolError with the validation text."""
    policy = _policy(TOPO_SINGLE_SOCKET_HT)
    pod = pod_level_pod("pod", pod_cpu, pod_cpu, inits, apps)
    st = _state(ALL8)
    assert policy.get_pod_topology_hints(st, pod) == {"cpu": []}
    with pytest.raises(EmptyPodSharedPoolError) as exc:
        policy.allocate_pod(st, pod)
    assert exc.value.reason == "EmptyPodSharedPoolError"
    assert exc.value.message == expected
    assert st.get_default_cpuset() == ALL8 and st.assignments == {} and st.pod_assignments == {}


# -- re-admission after a restart (v1.37.2) ------------------------------------------
# topoRestoreUniformSingleSocket (8 CPUs, no SMT), reserved {0}, no hint.
# allocatePodForAdd does not consult the entries the state holds for the pod.


def test_readmission_allocates_a_new_bubble_and_leaks_the_old_one() -> None:
    policy = _policy(TOPO_RESTORE_UNIFORM)
    pod = pod_level_pod("pod", "4", "4", (), (C("c1", "2"), C("c2", "2")))
    st = _state(cs(0, 5, 6, 7), "pod", cs(1, 2, 3, 4), {"c1": cs(1, 2), "c2": cs(3, 4)})
    policy.start(st)
    with pytest.raises(UnexpectedAdmissionError) as exc:
        policy.allocate_pod(st, pod)
    # only 5-7 are free: the 4-CPU bubble cannot be taken again
    assert exc.value.error == "not enough cpus available to satisfy request: requested=4, available=3"
    assert st.get_pod_cpu_set("pod") == cs(1, 2, 3, 4)
    assert st.get_default_cpuset() == cs(0, 5, 6, 7)


def test_readmission_with_room_replaces_the_entries() -> None:
    policy = _policy(TOPO_RESTORE_UNIFORM)
    pod = pod_level_pod("pod", "2", "2", (), (C("c1", "2"),))
    st = _state(cs(0, 3, 4, 5, 6, 7), "pod", cs(1, 2), {"c1": cs(1, 2)})
    policy.start(st)
    policy.allocate_pod(st, pod)
    assert st.get_pod_cpu_set("pod") == cs(3, 4)
    assert st.assignments == {"pod": {"c1": cs(3, 4)}}
    # CPUs 1-2 are now in no entry and not in the shared pool
    assert st.get_default_cpuset() == cs(0, 5, 6, 7)


def test_restored_shared_container_entry_gives_empty_pod_hints() -> None:
    # a shared container's entry (the pod shared pool) never matches its
    # exclusive count (0), so the regenerated pod hints are empty
    policy = _policy(TOPO_RESTORE_DUAL_NUMA)
    pod = pod_level_pod("pod", "3", "3", (), (C("c1", "2"), shared("c2")))
    st = _state(ALL8 - cs(5, 6, 7), "pod", cs(5, 6, 7), {"c1": cs(5, 6), "c2": cs(7)})
    assert policy.get_pod_topology_hints(st, pod) == {"cpu": []}


def test_restored_exclusive_entries_regenerate_pod_hints() -> None:
    policy = _policy(TOPO_RESTORE_DUAL_NUMA)
    pod = pod_level_pod("pod", "2", "2", (), (C("c1", "2"),))
    st = _state(ALL8 - cs(5, 6), "pod", cs(5, 6), {"c1": cs(5, 6)})
    hints = policy.get_pod_topology_hints(st, pod)
    assert hints is not None
    assert [h.numa_node_affinity for h in hints["cpu"] if h.preferred] == [BitMask([1])]


# -- policy_static_metrics_test.go: the state side ----------------------------------------
# topoDualSocketHT, reserved {0}, hint NUMA 0.

BUBBLE = cs(2, 4, 8, 10)
GU_SHARED = (C("gu-container", "2"), shared("shared-container"))


def test_whole_bubble_released_with_the_last_container() -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, hint_=NUMA0)
    st = _state(ALL12)
    pod = pod_level_pod("plrm-pod", "4", "4", (), GU_SHARED)
    policy.allocate_pod(st, pod)
    assert st.get_pod_cpu_set("plrm-pod") == BUBBLE
    assert st.assignments == {"plrm-pod": {"gu-container": cs(2, 8), "shared-container": cs(4, 10)}}
    policy.remove_container(st, "plrm-pod", "gu-container")
    assert st.get_default_cpuset() == ALL12 - BUBBLE
    policy.remove_container(st, "plrm-pod", "shared-container")
    assert st.get_default_cpuset() == ALL12
    assert st.pod_assignments == {} and st.assignments == {}


def test_failed_bubble_partitioning_keeps_the_bubble() -> None:
    """The bubble fits the budget, the containers do not: the error is
    returned after the pod entry was written, and nothing gives the bubble
    back (v1.37.2)."""
    policy = _policy(TOPO_DUAL_SOCKET_HT, hint_=NUMA0)
    st = _state(ALL12)
    pod = pod_level_pod("rollback-pod", "3", "3", (), (C("gu-container-1", "2"), C("gu-container-2", "2")))
    with pytest.raises(UnexpectedAdmissionError) as exc:
        policy.allocate_pod(st, pod)
    assert exc.value.message == (
        "Allocate failed due to not enough cpus available to satisfy request: "
        "requested=2, available=1, which is unexpected"
    )
    bubble = st.get_pod_cpu_set("rollback-pod")
    assert bubble is not None and bubble.size() == 3
    assert st.get_default_cpuset() == ALL12 - bubble
    assert st.assignments == {}


@pytest.mark.parametrize("pod_cpu", ["1500m", "3500m"])
def test_non_integral_pod_budget_allocates_nothing(pod_cpu: str) -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, hint_=NUMA0)
    st = _state(ALL12)
    pod = pod_level_pod("mixed-pod", pod_cpu, pod_cpu, (), GU_SHARED)
    policy.allocate_pod(st, pod)
    assert st.get_default_cpuset() == ALL12 and st.pod_assignments == {} and st.assignments == {}
    assert policy.get_pod_topology_hints(st, pod) is None
    # the integral container still gets node-scope exclusive CPUs via Allocate
    policy.allocate(st, pod, pod.containers[0])
    policy.allocate(st, pod, pod.containers[1])
    assert st.assignments == {"mixed-pod": {"gu-container": cs(2, 8)}}
    assert st.get_default_cpuset() == ALL12 - cs(2, 8)
    policy.remove_container(st, "mixed-pod", "gu-container")
    assert st.get_default_cpuset() == ALL12


# -- errors and gates ------------------------------------------------------------------


def test_smt_alignment_checks_only_the_pod_total() -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, hint_=NUMA0, options={"full-pcpus-only": "true"})
    st = _state(ALL12)
    odd = pod_level_pod("pod", "3", "3", (), (C("c1", "1"), shared("c2")))
    with pytest.raises(SMTAlignmentError) as exc:
        policy.allocate_pod(st, odd)
    assert exc.value.message == "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2"
    assert st.get_default_cpuset() == ALL12 and st.pod_assignments == {}
    # a 1-CPU container inside an even bubble is fine
    even = pod_level_pod("pod", "4", "4", (), (C("c1", "1"), shared("c2")))
    policy.allocate_pod(st, even)
    assert st.get_pod_cpu_set("pod") == BUBBLE
    assert st.assignments["pod"]["c1"].size() == 1


def test_bubble_allocation_failure_is_unexpected() -> None:
    policy = _policy(TOPO_RESTORE_UNIFORM)
    st = _state(cs(0, 1, 2))
    pod = pod_level_pod("pod", "4", "4", (), (C("c1", "2"), shared("c2")))
    with pytest.raises(UnexpectedAdmissionError) as exc:
        policy.allocate_pod(st, pod)
    result = get_pod_admit_result(exc.value)
    assert result.reason == "UnexpectedAdmissionError"
    assert result.message == (
        "Allocate failed due to not enough cpus available to satisfy request: "
        "requested=4, available=2, which is unexpected"
    )
    assert st.get_default_cpuset() == cs(0, 1, 2) and st.pod_assignments == {}


def _gu_pod() -> Pod:
    return pod_level_pod("pod", "4", "4", (), (C("c1", "2"), shared("c2")))


@pytest.mark.parametrize("gates", [GATES_PLRM_OFF, GATES_OFF], ids=["managers off", "both off"])
def test_pod_level_pod_unmanaged_when_gates_off(gates: Gates) -> None:
    policy = _policy(TOPO_RESTORE_UNIFORM, gates=gates)
    pod = _gu_pod()
    st = _state(ALL8)
    assert policy.get_pod_topology_hints(st, pod) is None
    for c in pod.containers:
        assert policy.get_topology_hints(st, pod, c) is None
        policy.allocate(st, pod, c)
    assert st.assignments == {} and st.pod_assignments == {}


def test_container_scope_hybrid_allocates_eligible_containers_from_node() -> None:
    """Gate on, container scope: the pod-level QoS makes the eligible
    container exclusive, allocated per container from the node pool."""
    policy = _policy(TOPO_RESTORE_UNIFORM)
    pod = _gu_pod()
    st = _state(ALL8)
    hints = policy.get_topology_hints(st, pod, pod.containers[0])
    assert hints is not None and hints["cpu"]
    assert policy.get_topology_hints(st, pod, pod.containers[1]) is None
    for c in pod.containers:
        policy.allocate(st, pod, c)
    assert st.assignments == {"pod": {"c1": cs(1, 2)}}
    assert st.pod_assignments == {}


def test_pod_hints_fresh_from_available_cpus() -> None:
    policy = _policy(TOPO_RESTORE_DUAL_NUMA)
    st = _state(ALL8)
    hints = policy.get_pod_topology_hints(st, _gu_pod())
    # 4 CPUs: NUMA 0 has only 3 free (0 is reserved)
    assert hints == {
        "cpu": [TopologyHint(BitMask([1]), True), TopologyHint(BitMask([0, 1]), False)]
    }


def test_none_policy_allocate_pod_is_a_no_op() -> None:
    st = _state(EMPTY)
    NonePolicy().allocate_pod(st, _gu_pod())
    assert st.assignments == {} and st.pod_assignments == {} and st.get_default_cpuset() == EMPTY
