"""CPU topology hints: upstream topology_hints_test.go (TestPodGuaranteedCPUs,
TestGetTopologyHints, TestGetPodTopologyHints,
TestGetPodTopologyHintsWithPolicyOptions)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from podnuma.api.pod import Container, Pod
from podnuma.cm.cpumanager.cpu_manager import CPUManager, active_containers_of
from podnuma.cm.cpumanager.policy_options import ALIGN_BY_SOCKET_OPTION, StaticPolicyOptions
from podnuma.cm.cpumanager.policy_static import StaticPolicy, new_static_policy
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUInfo, CPUTopology
from tests.cm.cpumanager.cpu_policy_helpers import (
    ALPHA,
    DEFAULTS,
    FakeAffinity,
    Spec,
    cs,
    hint,
    make_multi_container_pod,
    make_pod,
    make_state,
)
from tests.cm.cpumanager.topologies import (
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    TOPO_SINGLE_SOCKET_HT,
)


def _machine_topology() -> CPUTopology:
    """returnMachineInfo() through topology.Discover: 2 NUMA nodes = 2
    sockets, cores (0,6) (1,7) (2,8) on node 0 and (3,9) (4,10) (5,11) on
    node 1; core id = lowest thread id, uncore id falls back to the socket."""
    info: dict[int, CPUInfo] = {}
    for node, cores in ((0, ((0, 6), (1, 7), (2, 8))), (1, ((3, 9), (4, 10), (5, 11)))):
        for threads in cores:
            for cpu in threads:
                info[cpu] = CPUInfo(numa_node=node, socket=node, core=min(threads), uncore_cache=node)
    return CPUTopology(info)


MACHINE = _machine_topology()


# -- TestPodGuaranteedCPUs ------------------------------------------------------------

O0: Spec = ("0", "0")
O2: Spec = ("2", "2")
O5: Spec = ("5", "5")


POD_GUARANTEED_CPUS_CASES = [
    ("TestCase01: if requestedCPU == 0, Pod is not Guaranteed Qos", [O0], [O0], 0),
    ("TestCase02: if requestedCPU == 0, Pod is not Guaranteed Qos", [O0], [O2], 0),
    ("TestCase03: if requestedCPU == 0, Pod is not Guaranteed Qos", [O2], [O0], 0),
    ("TestCase04: Guaranteed Pod requests 2 CPUs", [O2], [O2], 2),
    ("TestCase05: Guaranteed Pod requests 5 CPUs", [O5], [O5], 5),
    ("TestCase06: app requests more than init", [O2], [O5], 5),
    ("TestCase07: init requests more than app", [O5], [O2], 5),
    ("TestCase08: Sum of CPUs requested by multiple containers", [O2, ("4", "4")], [O2, ("4", "4")], 6),
    ("TestCase09: restartable init container + regular container", [("1", "1", True)], [("1", "1")], 2),
    ("TestCase10: multiple restartable init containers",
     [O5, ("1", "1", True), ("2", "2", True), ("3", "3", True)], [("1", "1")], 7),
    ("TestCase11: multiple restartable and regular init containers",
     [O5, ("1", "1", True), ("2", "2", True), O5, ("3", "3", True)], [("1", "1")], 8),
    ("TestCase12: restartable init, regular init and regular container",
     [("10", "10", True), ("200", "200")], [("100", "100")], 210),
]


@pytest.mark.parametrize(
    ("name", "init", "app", "expected"),
    POD_GUARANTEED_CPUS_CASES,
)
def test_pod_guaranteed_cpus(name: str, init: list[Spec], app: list[Spec], expected: int) -> None:
    policy = new_static_policy(TOPO_SINGLE_SOCKET_HT, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    assert policy.pod_guaranteed_cpus(make_multi_container_pod(init, app)) == expected


# -- TestGetTopologyHints / TestGetPodTopologyHints -------------------------------------------

POD2 = make_pod("fakePod", "fakeContainer", "2", "2")
POD5 = make_pod("fakePod", "fakeContainer", "5", "5")
POD7 = make_pod("fakePod", "fakeContainer", "7", "7")
POD11 = make_pod("fakePod", "fakeContainer", "11", "11")
FIRST = (0,)
SECOND = (1,)
CROSS = (0, 1)


@dataclass(frozen=True)
class HintCase:
    name: str
    pod: Pod
    default: CPUSet
    expected: list[tuple[tuple[int, ...], bool]]
    assignments: Mapping[str, Mapping[str, CPUSet]] = field(default_factory=dict)

    @property
    def container(self) -> Container:
        return self.pod.containers[0]


FREE = cs(2, 3, 4, 5, 6, 7, 8, 9, 10, 11)

HINT_CASES = [
    HintCase("Request 2 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", POD2, FREE,
             [(FIRST, True), (SECOND, True), (CROSS, False)]),
    HintCase("Request 5 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", POD5, FREE,
             [(SECOND, True), (CROSS, False)]),
    HintCase("Request 7 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", POD7, FREE, [(CROSS, True)]),
    HintCase("Request 11 CPUs, 4 available on NUMA 0, 6 available on NUMA 1", POD11, FREE, []),
    HintCase("Request 2 CPUs, 1 available on NUMA 0, 1 available on NUMA 1", POD2, cs(0, 3),
             [(CROSS, False)]),
    HintCase("Request more CPUs than available", POD5, cs(0, 1, 2, 3), []),
    HintCase("Regenerate Single-Node NUMA Hints if already allocated 1/2", POD2, cs(),
             [(FIRST, True), (CROSS, False)], {"fakePod": {"fakeContainer": cs(0, 6)}}),
    HintCase("Regenerate Single-Node NUMA Hints if already allocated 2/2", POD2, cs(),
             [(SECOND, True), (CROSS, False)], {"fakePod": {"fakeContainer": cs(3, 9)}}),
    HintCase("Regenerate Cross-NUMA Hints if already allocated", POD11, cs(),
             [(CROSS, True)], {"fakePod": {"fakeContainer": cs(*range(11))}}),
    HintCase("Requested less than already allocated", POD2, cs(), [],
             {"fakePod": {"fakeContainer": cs(0, 6, 3, 9)}}),
    HintCase("Requested more than already allocated", POD11, cs(), [],
             {"fakePod": {"fakeContainer": cs(0, 6, 3, 9)}}),
]


def _manager(case: HintCase) -> CPUManager:
    policy = StaticPolicy(MACHINE, 0, CPUSet(), FakeAffinity(), StaticPolicyOptions(), DEFAULTS)
    st = make_state(case.default, case.assignments)
    # the assignments' pods are the active pods, so nothing is collected
    active = {uid: set(containers) for uid, containers in case.assignments.items()}
    return CPUManager(policy, st, MACHINE, active_pods=lambda: active)


def _norm(hints: list[TopologyHint]) -> list[tuple[tuple[int, ...], bool]]:
    out = []
    for h in hints:
        assert h.numa_node_affinity is not None
        out.append((tuple(h.numa_node_affinity.bits()), h.preferred))
    return sorted(out)


@pytest.mark.parametrize("case", HINT_CASES, ids=lambda c: c.name)
def test_get_topology_hints(case: HintCase) -> None:
    mgr = _manager(case)
    hints = mgr.get_topology_hints(case.pod, case.container)
    assert hints is not None and set(hints) == {"cpu"}
    assert _norm(hints["cpu"]) == sorted(case.expected)
    # generating hints changes nothing
    assert mgr.state.default_cpuset == case.default


@pytest.mark.parametrize("case", HINT_CASES, ids=lambda c: c.name)
def test_get_pod_topology_hints(case: HintCase) -> None:
    mgr = _manager(case)
    hints = mgr.get_pod_topology_hints(case.pod)
    assert hints is not None and set(hints) == {"cpu"}
    assert _norm(hints["cpu"]) == sorted(case.expected)


def test_no_hints_for_shared_containers() -> None:
    mgr = _manager(HINT_CASES[0])
    burstable = make_pod("p", "c", "1", "2")
    fractional = make_pod("p", "c", "1500m", "1500m")
    for pod in (burstable, fractional):
        assert mgr.get_topology_hints(pod, pod.containers[0]) is None
        assert mgr.get_pod_topology_hints(pod) is None


def test_hints_count_reserved_cpus_for_preference_only() -> None:
    # CPU 3 reserved: NUMA 1 has 6 CPUs of capacity but only 5 free
    policy = new_static_policy(MACHINE, 1, cs(3), FakeAffinity(), None, DEFAULTS)
    six = make_pod("fakePod", "fakeContainer", "6", "6")
    st = make_state(MACHINE.cpus())
    hints = policy.get_topology_hints(st, six, six.containers[0])
    assert hints is not None
    assert _norm(hints["cpu"]) == sorted([(FIRST, True), (CROSS, False)])
    # fragmented: no single node has 6 free, yet one node's capacity suffices,
    # so the only hint is the non-preferred cross-NUMA one
    st = make_state(MACHINE.cpus() - cs(0))
    hints = policy.get_topology_hints(st, six, six.containers[0])
    assert hints is not None
    assert _norm(hints["cpu"]) == [(CROSS, False)]


def test_reusable_init_cpus_count_inside_the_mask() -> None:
    policy = new_static_policy(MACHINE, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    st = make_state(MACHINE.cpus())
    pod = make_multi_container_pod([("6", "6")], [("6", "6")])
    policy.allocate(st, pod, pod.init_containers[0])
    init_cpus = st.get_cpu_set(pod.uid, "initContainer-0")
    assert init_cpus == cs(0, 1, 2, 6, 7, 8)
    hints = policy.get_topology_hints(st, pod, pod.containers[0])
    assert hints is not None
    # the init container's CPUs on NUMA 0 are reusable, so NUMA 0 still fits
    assert _norm(hints["cpu"]) == sorted([(FIRST, True), (CROSS, False)])


def test_sidecar_cpus_are_not_reusable_for_hints() -> None:
    policy = new_static_policy(MACHINE, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    st = make_state(MACHINE.cpus())
    pod = make_multi_container_pod([("6", "6", True)], [("6", "6")])
    policy.allocate(st, pod, pod.init_containers[0])
    hints = policy.get_topology_hints(st, pod, pod.containers[0])
    assert hints is not None
    assert _norm(hints["cpu"]) == sorted([(SECOND, True), (CROSS, False)])


# -- TestGetPodTopologyHintsWithPolicyOptions -----------------------------------------------

M0001 = (0,)
M0011 = (0, 1)
M0101 = (0, 2)
M1001 = (0, 3)
M0111 = (0, 1, 2)
M1011 = (0, 1, 3)
M1101 = (0, 2, 3)
M1111 = (0, 1, 2, 3)


POLICY_OPTION_HINT_CASES = [
    ("AlignBySocket:false, Preferred hints does not contains socket aligned hints", "2",
     cs(2, 3, 11), "false",
     [(M0001, True), (M0011, False), (M0101, False), (M1001, False), (M0111, False),
      (M1011, False), (M1101, False), (M1111, False)]),
    ("AlignBySocket:true Preferred hints contains socket aligned hints", "2", cs(2, 3, 11), "true",
     [(M0001, True), (M0011, True), (M0101, False), (M1001, False), (M0111, False),
      (M1011, False), (M1101, False), (M1111, False)]),
    ("AlignBySocket:true Preferred hints are spread across socket since 2 sockets are required",
     "41", CPUSet.parse("0-28,40-57"), "true", [(M0111, True), (M1111, True)]),
]


@pytest.mark.parametrize(
    ("description", "cpus", "default", "align", "expected"),
    POLICY_OPTION_HINT_CASES,
)
def test_get_pod_topology_hints_with_policy_options(
    description: str,
    cpus: str,
    default: CPUSet,
    align: str,
    expected: list[tuple[tuple[int, ...], bool]],
) -> None:
    topo = TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT
    policy = new_static_policy(topo, 0, CPUSet(), FakeAffinity(), {ALIGN_BY_SOCKET_OPTION: align}, ALPHA)
    mgr = CPUManager(policy, make_state(default), topo, active_pods=lambda: {})
    pod = make_pod("fakePod", "fakeContainer", cpus, cpus)
    hints = mgr.get_pod_topology_hints(pod)
    assert hints is not None
    assert _norm(hints["cpu"]) == sorted(expected)


def test_active_containers_of() -> None:
    pod = make_multi_container_pod([("1", "1")], [("1", "1")])
    assert active_containers_of([pod]) == {"podUID": {"initContainer-0", "appContainer-0"}}


def test_hint_helper() -> None:
    assert hint([0, 1], True) == TopologyHint(hint([0, 1], True).numa_node_affinity, True)
