"""Static policy: the container-level tables of upstream policy_static_test.go
(v1.37)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pytest

from podnuma.api.pod import Pod
from podnuma.cm.cpumanager.policy import (
    CPUManagerAdmissionError,
    SMTAlignmentError,
    UnexpectedAdmissionError,
)
from podnuma.cm.cpumanager.policy_options import (
    ALIGN_BY_SOCKET_OPTION,
    DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION,
    FULL_PCPUS_ONLY_OPTION,
    STRICT_CPU_RESERVATION_OPTION,
)
from podnuma.cm.cpumanager.policy_static import StaticPolicy, new_static_policy
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.errors import KubeletStartupError
from podnuma.machine.cpuset import EMPTY, CPUSet
from podnuma.machine.topology import CPUTopology
from tests.cm.cpumanager.cpu_policy_helpers import (
    ALPHA,
    DEFAULTS,
    FakeAffinity,
    Gates,
    cs,
    make_multi_container_pod,
    make_pod,
    make_state,
    numa,
)
from tests.cm.cpumanager.topologies import (
    TOPO_DUAL_SOCKET_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    TOPO_DUAL_SOCKET_NO_HT,
    TOPO_QUAD_SOCKET_FOUR_WAY_HT,
    TOPO_SINGLE_SOCKET_HT,
)

Assignments = Mapping[str, Mapping[str, CPUSet]]

LARGE = TOPO_QUAD_SOCKET_FOUR_WAY_HT.cpus()
LARGE_SOCK0 = TOPO_QUAD_SOCKET_FOUR_WAY_HT.details.cpus_in_sockets(0)
LARGE_SOCK1 = TOPO_QUAD_SOCKET_FOUR_WAY_HT.details.cpus_in_sockets(1)


def _policy(
    topo: CPUTopology,
    num_reserved: int,
    reserved: CPUSet = EMPTY,
    options: Mapping[str, str] | None = None,
    gates: Gates = DEFAULTS,
    hint: TopologyHint | None = None,
) -> StaticPolicy:
    return new_static_policy(topo, num_reserved, reserved, FakeAffinity(hint), options, gates)


def test_static_policy_name() -> None:
    assert _policy(TOPO_SINGLE_SOCKET_HT, 1).name() == "static"


# -- TestStaticPolicyStart ------------------------------------------------------


@dataclass(frozen=True)
class StartCase:
    description: str
    topo: CPUTopology
    default: CPUSet
    assignments: Assignments = field(default_factory=dict)
    num_reserved: int = 0
    options: Mapping[str, str] | None = None
    exp_cset: CPUSet = CPUSet()
    exp_err: str | None = None


START_CASES = [
    StartCase("non-corrupted state", TOPO_DUAL_SOCKET_HT, cs(*range(1, 12)),
              {"fakePod": {"0": cs(0)}}, exp_cset=cs(*range(1, 12))),
    StartCase("empty cpuset", TOPO_DUAL_SOCKET_HT, cs(), num_reserved=1, exp_cset=cs(*range(12))),
    StartCase("reserved cores 0 & 6 are not present in available cpuset", TOPO_DUAL_SOCKET_HT,
              cs(0, 1), num_reserved=2,
              exp_err='not all reserved cpus: "0,6" are present in defaultCpuSet: "0-1"'),
    StartCase("some of reserved cores are present in available cpuset (StrictCPUReservationOption)",
              TOPO_DUAL_SOCKET_HT, cs(0, 1), num_reserved=2,
              options={STRICT_CPU_RESERVATION_OPTION: "true"},
              exp_err='some of strictly reserved cpus: "0" are present in defaultCpuSet: "0-1"'),
    StartCase("assigned core 2 is still present in available cpuset", TOPO_DUAL_SOCKET_HT,
              cs(*range(2, 12)), {"fakePod": {"0": cs(0, 1, 2)}},
              exp_err='pod: fakePod, container: 0 cpuset: "0-2" overlaps with default cpuset "2-11"'),
    StartCase("assigned core 2 is still present in available cpuset (StrictCPUReservationOption)",
              TOPO_DUAL_SOCKET_HT, cs(*range(2, 12)), {"fakePod": {"0": cs(0, 1, 2)}},
              options={STRICT_CPU_RESERVATION_OPTION: "true"},
              exp_err='pod: fakePod, container: 0 cpuset: "0-2" overlaps with default cpuset "2-11"'),
    StartCase("core 12 is not present in topology but is in state cpuset", TOPO_DUAL_SOCKET_HT,
              cs(*range(5, 13)), {"fakePod": {"0": cs(0, 1, 2), "1": cs(3, 4)}},
              exp_err='current set of available CPUs "0-11" doesn\'t match with CPUs in state "0-12"'),
    StartCase("core 11 is present in topology but is not in state cpuset", TOPO_DUAL_SOCKET_HT,
              cs(*range(5, 11)), {"fakePod": {"0": cs(0, 1, 2), "1": cs(3, 4)}},
              exp_err='current set of available CPUs "0-11" doesn\'t match with CPUs in state "0-10"'),
]


@pytest.mark.parametrize("case", START_CASES, ids=lambda c: c.description)
def test_static_policy_start(case: StartCase) -> None:
    policy = _policy(case.topo, case.num_reserved, options=case.options, gates=ALPHA)
    st = make_state(case.default, case.assignments)
    if case.exp_err is not None:
        with pytest.raises(KubeletStartupError) as exc:
            policy.start(st)
        assert str(exc.value) == case.exp_err
        return
    policy.start(st)
    if not case.default.is_empty():
        for cpu in range(1, case.topo.num_cpus):
            assert cpu in st.default_cpuset
    assert st.default_cpuset == case.exp_cset


def test_start_empty_default_with_assignments_is_an_error() -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, 1)
    st = make_state(cs(), {"fakePod": {"c": cs(3)}})
    with pytest.raises(KubeletStartupError, match="^default cpuset cannot be empty$"):
        policy.start(st)


def test_start_validation_order_reserved_before_overlap() -> None:
    # reserved check fires first even though the assignment also overlaps
    policy = _policy(TOPO_DUAL_SOCKET_HT, 2)
    st = make_state(cs(1, 2, 3), {"p": {"c": cs(2)}})
    with pytest.raises(KubeletStartupError, match="^not all reserved cpus"):
        policy.start(st)


# -- TestStaticPolicyAdd -----------------------------------------------------------


@dataclass(frozen=True)
class AddCase:
    description: str
    topo: CPUTopology
    default: CPUSet
    pod: Pod
    assignments: Assignments = field(default_factory=dict)
    num_reserved: int = 0
    reserved: CPUSet = CPUSet()
    options: Mapping[str, str] | None = None
    hint: TopologyHint | None = None
    exp_err: str | SMTAlignmentError | None = None
    exp_alloc: bool = False
    exp_cset: CPUSet = CPUSet()
    gates: Gates = DEFAULTS


OPTIONS_INSENSITIVE = [
    AddCase("GuPodMultipleCores, SingleSocketHT, ExpectAllocOneCore", TOPO_SINGLE_SOCKET_HT,
            cs(0, 1, 4, 5), make_pod("fakePod", "fakeContainer3", "2000m", "2000m"),
            {"fakePod": {"fakeContainer100": cs(2, 3, 6, 7)}}, num_reserved=1,
            exp_alloc=True, exp_cset=cs(1, 5)),
    AddCase("GuPodMultipleCores, DualSocketHT, ExpectAllocOneSocket", TOPO_DUAL_SOCKET_HT,
            cs(0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11), make_pod("fakePod", "fakeContainer3", "6000m", "6000m"),
            {"fakePod": {"fakeContainer100": cs(2)}}, num_reserved=1,
            exp_alloc=True, exp_cset=cs(1, 3, 5, 7, 9, 11)),
    AddCase("GuPodMultipleCores, DualSocketHT, ExpectAllocThreeCores", TOPO_DUAL_SOCKET_HT,
            cs(0, 2, 3, 4, 6, 7, 8, 9, 10, 11), make_pod("fakePod", "fakeContainer3", "6000m", "6000m"),
            {"fakePod": {"fakeContainer100": cs(1, 5)}}, num_reserved=1,
            exp_alloc=True, exp_cset=cs(2, 3, 4, 8, 9, 10)),
    AddCase("GuPodMultipleCores, DualSocketNoHT, ExpectAllocOneSocket", TOPO_DUAL_SOCKET_NO_HT,
            cs(0, 1, 3, 4, 5, 6, 7), make_pod("fakePod", "fakeContainer1", "4000m", "4000m"),
            {"fakePod": {"fakeContainer100": cs()}}, num_reserved=1,
            exp_alloc=True, exp_cset=cs(4, 5, 6, 7)),
    AddCase("GuPodMultipleCores, DualSocketNoHT, ExpectAllocFourCores", TOPO_DUAL_SOCKET_NO_HT,
            cs(0, 1, 3, 6, 7), make_pod("fakePod", "fakeContainer1", "4000m", "4000m"),
            {"fakePod": {"fakeContainer100": cs(4, 5)}}, num_reserved=1,
            exp_alloc=True, exp_cset=cs(1, 3, 6, 7)),
    AddCase("GuPodMultipleCores, DualSocketHT, ExpectAllocOneSocketOneCore", TOPO_DUAL_SOCKET_HT,
            cs(0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11), make_pod("fakePod", "fakeContainer3", "8000m", "8000m"),
            {"fakePod": {"fakeContainer100": cs(2)}}, num_reserved=1,
            exp_alloc=True, exp_cset=cs(1, 3, 4, 5, 7, 9, 10, 11)),
    AddCase("NonGuPod, SingleSocketHT, NoAlloc", TOPO_SINGLE_SOCKET_HT, cs(*range(8)),
            make_pod("fakePod", "fakeContainer1", "1000m", "2000m"), num_reserved=1),
    AddCase("GuPodNonIntegerCore, SingleSocketHT, NoAlloc", TOPO_SINGLE_SOCKET_HT, cs(*range(8)),
            make_pod("fakePod", "fakeContainer4", "977m", "977m"), num_reserved=1),
    AddCase("GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocSock0", TOPO_QUAD_SOCKET_FOUR_WAY_HT,
            LARGE - cs(3, 11, 4, 5, 6, 7), make_pod("fakePod", "fakeContainer5", "72000m", "72000m"),
            {"fakePod": {"fakeContainer100": cs(3, 11, 4, 5, 6, 7)}},
            exp_alloc=True, exp_cset=LARGE_SOCK0),
    AddCase("GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocAllFullCoresFromThreeSockets",
            TOPO_QUAD_SOCKET_FOUR_WAY_HT,
            cs(1, 25, 13, 38, 2, 9, 11, 35, 23, 48, 12, 51, 53, 173, 113, 233, 54, 61),
            make_pod("fakePod", "fakeCcontainer5", "12000m", "12000m"),
            {"fakePod": {"fakeContainer100": LARGE - cs(1, 25, 13, 38, 2, 9, 11, 35, 23, 48, 12, 51,
                                                          53, 173, 113, 233, 54, 61)}},
            exp_alloc=True, exp_cset=cs(1, 25, 13, 38, 11, 35, 23, 48, 53, 173, 113, 233)),
    AddCase("GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocAllSock1+FullCore",
            TOPO_QUAD_SOCKET_FOUR_WAY_HT,
            LARGE_SOCK1 | cs(10, 34, 22, 47, 53, 173, 61, 181, 108, 228, 115, 235),
            make_pod("fakePod", "fakeContainer5", "76000m", "76000m"),
            {"fakePod": {"fakeContainer100": LARGE - (LARGE_SOCK1 | cs(10, 34, 22, 47, 53, 173, 61, 181,
                                                                        108, 228, 115, 235))}},
            exp_alloc=True, exp_cset=LARGE_SOCK1 | cs(10, 34, 22, 47)),
]

DEFAULT_OPTIONS = [
    AddCase("GuPodSingleCore, SingleSocketHT, ExpectAllocOneCPU", TOPO_SINGLE_SOCKET_HT, cs(*range(8)),
            make_pod("fakePod", "fakeContainer2", "1000m", "1000m"), num_reserved=1,
            exp_alloc=True, exp_cset=cs(4)),  # sibling of the partly used core
    AddCase("GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocCPUs", TOPO_QUAD_SOCKET_FOUR_WAY_HT,
            cs(10, 11, 53, 67, 52), make_pod("fakePod", "fakeContainer5", "5000m", "5000m"),
            {"fakePod": {"fakeContainer100": LARGE - cs(10, 11, 53, 37, 55, 67, 52)}},
            exp_alloc=True, exp_cset=cs(10, 11, 53, 67, 52)),
    AddCase("GuPodSingleCore, SingleSocketHT, ExpectError", TOPO_SINGLE_SOCKET_HT, cs(*range(8)),
            make_pod("fakePod", "fakeContainer2", "8000m", "8000m"), num_reserved=1,
            exp_err="not enough cpus available to satisfy request: requested=8, available=7"),
    AddCase("GuPodMultipleCores, SingleSocketHT, ExpectSameAllocation", TOPO_SINGLE_SOCKET_HT,
            cs(0, 1, 4, 5), make_pod("fakePod", "fakeContainer3", "4000m", "4000m"),
            {"fakePod": {"fakeContainer3": cs(2, 3, 6, 7)}}, num_reserved=1,
            exp_alloc=True, exp_cset=cs(2, 3, 6, 7)),
    AddCase("GuPodMultipleCores, DualSocketHT, NoAllocExpectError", TOPO_DUAL_SOCKET_HT,
            cs(0, 4, 5, 6, 7, 8, 9, 10, 11), make_pod("fakePod", "fakeContainer5", "10000m", "10000m"),
            {"fakePod": {"fakeContainer100": cs(1, 2, 3)}}, num_reserved=1,
            exp_err="not enough cpus available to satisfy request: requested=10, available=8"),
    AddCase("GuPodMultipleCores, SingleSocketHT, NoAllocExpectError", TOPO_SINGLE_SOCKET_HT,
            cs(0, 7), make_pod("fakePod", "fakeContainer5", "2000m", "2000m"),
            {"fakePod": {"fakeContainer100": cs(1, 2, 3, 4, 5, 6)}}, num_reserved=1,
            exp_err="not enough cpus available to satisfy request: requested=2, available=1"),
    AddCase("GuPodMultipleCores, topoQuadSocketFourWayHT, NoAlloc", TOPO_QUAD_SOCKET_FOUR_WAY_HT,
            cs(10, 11, 53, 37, 55, 67, 52), make_pod("fakePod", "fakeContainer5", "76000m", "76000m"),
            {"fakePod": {"fakeContainer100": LARGE - cs(10, 11, 53, 37, 55, 67, 52)}},
            exp_err="not enough cpus available to satisfy request: requested=76, available=7"),
]

FULL_PCPUS = {FULL_PCPUS_ONLY_OPTION: "true"}

SMT_ALIGN = [
    AddCase("GuPodSingleCore, SingleSocketHT, ExpectAllocOneCPU", TOPO_SINGLE_SOCKET_HT, cs(*range(8)),
            make_pod("fakePod", "fakeContainer2", "1000m", "1000m"), num_reserved=1, options=FULL_PCPUS,
            exp_err=SMTAlignmentError(1, 2)),
    AddCase("GuPodMultipleCores, topoQuadSocketFourWayHT, ExpectAllocOneCPUs", TOPO_QUAD_SOCKET_FOUR_WAY_HT,
            LARGE, make_pod("fakePod", "fakeContainer15", "15000m", "15000m"), num_reserved=8,
            options=FULL_PCPUS, exp_err=SMTAlignmentError(15, 4)),
    AddCase("GuPodManyCores, topoDualSocketHT, ExpectDoNotAllocPartialCPU", TOPO_DUAL_SOCKET_HT,
            cs(0, 2, 3, 4, 5, 7, 8, 9, 10, 11),
            make_pod("fakePod", "fakeContainerBug113537_1", "10000m", "10000m"),
            num_reserved=2, reserved=cs(1, 6), options=FULL_PCPUS,
            exp_err=SMTAlignmentError(10, 2, 8, True)),
    AddCase("GuPodManyCores, topoDualSocketHT, AutoReserve, ExpectAllocAllCPUs", TOPO_DUAL_SOCKET_HT,
            cs(1, 2, 3, 4, 5, 7, 8, 9, 10, 11),
            make_pod("fakePod", "fakeContainerBug113537_2", "10000m", "10000m"),
            num_reserved=2, options=FULL_PCPUS,
            exp_alloc=True, exp_cset=cs(1, 2, 3, 4, 5, 7, 8, 9, 10, 11)),
    AddCase("GuPodManyCores, topoDualSocketHT, ExpectAllocAllCPUs", TOPO_DUAL_SOCKET_HT,
            cs(1, 2, 3, 4, 5, 7, 8, 9, 10, 11),
            make_pod("fakePod", "fakeContainerBug113537_2", "10000m", "10000m"),
            num_reserved=2, reserved=cs(0, 6), options=FULL_PCPUS,
            exp_alloc=True, exp_cset=cs(1, 2, 3, 4, 5, 7, 8, 9, 10, 11)),
]

ALIGN_BY_SOCKET = [
    AddCase("Align by socket: true, cpu's within same socket of numa in hint are part of allocation",
            TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT, cs(2, 11, 21, 22),
            make_pod("fakePod", "fakeContainer2", "2000m", "2000m"), num_reserved=1,
            options={ALIGN_BY_SOCKET_OPTION: "true"}, hint=TopologyHint(numa(0, 2), True),
            exp_alloc=True, exp_cset=cs(2, 11), gates=ALPHA),
    AddCase("Align by socket: false, cpu's are taken strictly from NUMA nodes in hint",
            TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT, cs(2, 11, 21, 22),
            make_pod("fakePod", "fakeContainer2", "2000m", "2000m"), num_reserved=1,
            options={ALIGN_BY_SOCKET_OPTION: "false"}, hint=TopologyHint(numa(0, 2), True),
            exp_alloc=True, exp_cset=cs(2, 21), gates=ALPHA),
]

ADD_CASES = (
    [replace(c, description=f"options=nil {c.description}") for c in OPTIONS_INSENSITIVE]
    + [
        replace(c, description=f"options=full-pcpus-only {c.description}", options=FULL_PCPUS)
        for c in OPTIONS_INSENSITIVE
    ]
    + DEFAULT_OPTIONS
    + [replace(c, description=f"smtalign {c.description}") for c in SMT_ALIGN]
    + ALIGN_BY_SOCKET
)


def run_add_case(case: AddCase) -> None:
    policy = _policy(case.topo, case.num_reserved, case.reserved, case.options, case.gates, case.hint)
    st = make_state(case.default, case.assignments)
    ctr = case.pod.containers[0]
    if case.exp_err is not None:
        with pytest.raises(CPUManagerAdmissionError) as exc:
            policy.allocate(st, case.pod, ctr)
        if isinstance(case.exp_err, SMTAlignmentError):
            assert exc.value == case.exp_err
            assert exc.value.reason == "SMTAlignmentError"
            assert exc.value.message == str(case.exp_err)
        else:
            assert isinstance(exc.value, UnexpectedAdmissionError)
            assert str(exc.value) == case.exp_err
            assert exc.value.reason == "UnexpectedAdmissionError"
            assert exc.value.message == f"Allocate failed due to {case.exp_err}, which is unexpected"
        # a failed allocation leaves the shared pool alone
        assert st.default_cpuset == case.default
    else:
        policy.allocate(st, case.pod, ctr)
    got = st.get_cpu_set(case.pod.uid, ctr.name)
    if case.exp_alloc:
        assert got == case.exp_cset
        assert (got & st.default_cpuset).is_empty()
    else:
        assert got is None


@pytest.mark.parametrize("case", ADD_CASES, ids=lambda c: c.description)
def test_static_policy_add(case: AddCase) -> None:
    run_add_case(case)


# -- TestStaticPolicyAddWithResvList ---------------------------------------------------

ADD_WITH_RESV_LIST = [
    AddCase("GuPodSingleCore, SingleSocketHT, ExpectError", TOPO_SINGLE_SOCKET_HT, cs(*range(8)),
            make_pod("fakePod", "fakeContainer2", "8000m", "8000m"), num_reserved=1, reserved=cs(0),
            exp_err="not enough cpus available to satisfy request: requested=8, available=7"),
    AddCase("GuPodSingleCore, SingleSocketHT, ExpectAllocOneCPU", TOPO_SINGLE_SOCKET_HT, cs(*range(8)),
            make_pod("fakePod", "fakeContainer2", "1000m", "1000m"), num_reserved=2, reserved=cs(0, 1),
            exp_alloc=True, exp_cset=cs(4)),
    AddCase("GuPodMultipleCores, SingleSocketHT, ExpectAllocOneCore", TOPO_SINGLE_SOCKET_HT,
            cs(0, 1, 4, 5), make_pod("fakePod", "fakeContainer3", "2000m", "2000m"),
            {"fakePod": {"fakeContainer100": cs(2, 3, 6, 7)}}, num_reserved=2, reserved=cs(0, 1),
            exp_alloc=True, exp_cset=cs(4, 5)),
]


@pytest.mark.parametrize("case", ADD_WITH_RESV_LIST, ids=lambda c: c.description)
def test_static_policy_add_with_resv_list(case: AddCase) -> None:
    run_add_case(case)


# -- TestStaticPolicyStartWithResvList ------------------------------------------------


START_WITH_RESV_LIST_CASES = [
    ("empty cpuset", 2, cs(0, 1), None, cs(), cs(*range(12)), None, None),
    ("empty cpuset with StrictCPUReservationOption enabled", 2, cs(0, 1),
     {STRICT_CPU_RESERVATION_OPTION: "true"}, cs(), cs(*range(2, 12)), None, None),
    ("reserved cores 0 & 1 are not present in available cpuset", 2, cs(0, 1), None, cs(2, 3, 4, 5),
     None, 'not all reserved cpus: "0-1" are present in defaultCpuSet: "2-5"', None),
    ("reserved cores 0 & 1 are present in available cpuset with StrictCPUReservationOption enabled",
     2, cs(0, 1), {STRICT_CPU_RESERVATION_OPTION: "true"}, cs(*range(6)), None,
     'some of strictly reserved cpus: "0-1" are present in defaultCpuSet: "0-5"', None),
    ("inconsistency between numReservedCPUs and reserved", 1, cs(0, 1), None, cs(*range(12)), None,
     None, "[cpumanager] unable to reserve the required amount of CPUs (size of 0-1 did not equal 1)"),
]


@pytest.mark.parametrize(
    ("description", "num_reserved", "reserved", "options", "default", "exp_cset", "exp_err", "exp_new_err"),
    START_WITH_RESV_LIST_CASES,
)
def test_static_policy_start_with_resv_list(
    description: str,
    num_reserved: int,
    reserved: CPUSet,
    options: Mapping[str, str] | None,
    default: CPUSet,
    exp_cset: CPUSet | None,
    exp_err: str | None,
    exp_new_err: str | None,
) -> None:
    if exp_new_err is not None:
        with pytest.raises(KubeletStartupError) as exc:
            _policy(TOPO_DUAL_SOCKET_HT, num_reserved, reserved, options, ALPHA)
        assert str(exc.value) == exp_new_err
        return
    policy = _policy(TOPO_DUAL_SOCKET_HT, num_reserved, reserved, options, ALPHA)
    st = make_state(default)
    if exp_err is not None:
        with pytest.raises(KubeletStartupError) as exc:
            policy.start(st)
        assert str(exc.value) == exp_err
        return
    policy.start(st)
    assert st.default_cpuset == exp_cset


# -- TestStaticPolicyRemove ----------------------------------------------------------------


REMOVE_CASES = [
    ("SingleSocketHT, DeAllocOneContainer", "fakeContainer1",
     {"fakePod": {"fakeContainer1": cs(1, 2, 3)}}, cs(4, 5, 6, 7), cs(1, 2, 3, 4, 5, 6, 7)),
    ("SingleSocketHT, DeAllocOneContainer, BeginEmpty", "fakeContainer1",
     {"fakePod": {"fakeContainer1": cs(1, 2, 3), "fakeContainer2": cs(4, 5, 6, 7)}}, cs(), cs(1, 2, 3)),
    ("SingleSocketHT, DeAllocTwoContainer", "fakeContainer1",
     {"fakePod": {"fakeContainer1": cs(1, 3, 5), "fakeContainer2": cs(2, 4)}}, cs(6, 7),
     cs(1, 3, 5, 6, 7)),
    ("SingleSocketHT, NoDeAlloc", "fakeContainer2",
     {"fakePod": {"fakeContainer1": cs(1, 3, 5)}}, cs(2, 4, 6, 7), cs(2, 4, 6, 7)),
]


@pytest.mark.parametrize(
    ("description", "container_name", "assignments", "default", "exp_cset"),
    REMOVE_CASES,
)
def test_static_policy_remove(
    description: str, container_name: str, assignments: Assignments, default: CPUSet, exp_cset: CPUSet
) -> None:
    policy = _policy(TOPO_SINGLE_SOCKET_HT, 0)
    st = make_state(default, assignments)
    policy.remove_container(st, "fakePod", container_name)
    assert st.default_cpuset == exp_cset
    assert st.get_cpu_set("fakePod", container_name) is None


def test_remove_keeps_cpus_a_sibling_still_uses() -> None:
    policy = _policy(TOPO_SINGLE_SOCKET_HT, 0)
    st = make_state(cs(6, 7), {"p": {"init": cs(0, 1, 4, 5), "app": cs(0, 4)}})
    policy.remove_container(st, "p", "init")
    assert st.default_cpuset == cs(1, 5, 6, 7)
    assert st.assignments == {"p": {"app": cs(0, 4)}}


# -- TestStaticPolicyReuseCPUs / TestStaticPolicyDoNotReuseCPUs ---------------------------


def test_static_policy_reuse_cpus() -> None:
    # SingleSocketHT, DeAllocOneInitContainer
    policy = _policy(TOPO_SINGLE_SOCKET_HT, 0)
    st = make_state(cs(*range(8)))
    pod = make_multi_container_pod([("4000m", "4000m")], [("2000m", "2000m")])
    for ctr in pod.all_containers():
        policy.allocate(st, pod, ctr)
    assert st.get_cpu_set(pod.uid, "initContainer-0") == cs(0, 1, 4, 5)
    assert st.get_cpu_set(pod.uid, "appContainer-0") == cs(0, 4)
    assert st.default_cpuset == cs(2, 3, 6, 7)
    policy.remove_container(st, pod.uid, "initContainer-0")
    assert st.default_cpuset == cs(1, 2, 3, 5, 6, 7)
    assert st.get_cpu_set(pod.uid, "initContainer-0") is None


def test_static_policy_do_not_reuse_cpus() -> None:
    # SingleSocketHT, Don't reuse CPUs of a restartable init container
    policy = _policy(TOPO_SINGLE_SOCKET_HT, 0)
    st = make_state(cs(*range(8)))
    pod = make_multi_container_pod([("4000m", "4000m", True)], [("2000m", "2000m")])
    for ctr in pod.all_containers():
        policy.allocate(st, pod, ctr)
    assert st.default_cpuset == cs(3, 7)
    assert st.get_cpu_set(pod.uid, "appContainer-0") == cs(2, 6)


def test_reuse_is_forgotten_for_other_pods() -> None:
    policy = _policy(TOPO_SINGLE_SOCKET_HT, 0)
    st = make_state(cs(*range(8)))
    pod = make_multi_container_pod([("2000m", "2000m")], [("2000m", "2000m")], uid="a")
    policy.allocate(st, pod, pod.init_containers[0])
    assert policy.cpus_to_reuse == {"a": cs(0, 4)}
    other = make_pod("b", "c", "2000m", "2000m")
    policy.allocate(st, other, other.containers[0])
    # the other pod's allocation drops pod a's reusable CPUs; b cannot take them
    assert "a" not in policy.cpus_to_reuse
    assert st.get_cpu_set("b", "c") == cs(1, 5)


# -- TestTopologyAwareAllocateCPUs -----------------------------------------------------------


TOPOLOGY_AWARE_CASES = [
    ("Request 2 CPUs, No BitMask", 2, None, cs(0, 6)),
    ("Request 2 CPUs, BitMask on Socket 0", 2, BitMask([0]), cs(0, 6)),
    ("Request 2 CPUs, BitMask on Socket 1", 2, BitMask([1]), cs(1, 7)),
    ("Request 8 CPUs, BitMask on Socket 0", 8, BitMask([0]), cs(0, 6, 2, 8, 4, 10, 1, 7)),
    ("Request 8 CPUs, BitMask on Socket 1", 8, BitMask([1]), cs(1, 7, 3, 9, 5, 11, 0, 6)),
]


@pytest.mark.parametrize(
    ("description", "num", "mask", "exp"),
    TOPOLOGY_AWARE_CASES,
)
def test_topology_aware_allocate_cpus(description: str, num: int, mask: BitMask | None, exp: CPUSet) -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, 0)
    st = make_state(cs(*range(12)))
    policy.start(st)
    got = policy.allocate_cpus(st, num, mask, cs())
    assert got == exp
    assert st.default_cpuset == cs(*range(12)) - exp


# -- TestSMTAlignmentErrorText -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("err", "expected"),
    [
        (SMTAlignmentError(15, 4), "SMT Alignment Error: requested 15 cpus not multiple cpus per core = 4"),
        (SMTAlignmentError(4, 2, 0), "SMT Alignment Error: requested 4 cpus not multiple cpus per core = 2"),
        (SMTAlignmentError(4, 2, 0, True),
         "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 0, "
         "requested CPUs = 4, CPUs per core = 2"),
    ],
)
def test_smt_alignment_error_text(err: SMTAlignmentError, expected: str) -> None:
    assert str(err) == expected
    assert err.message == expected
    assert err.reason == "SMTAlignmentError"


# -- beyond the upstream tables: upstream behaviours easy to get wrong---------------------


def test_smt_check_only_for_exclusive_containers() -> None:
    policy = _policy(TOPO_SINGLE_SOCKET_HT, 1, options=FULL_PCPUS)
    st = make_state(cs(*range(8)))
    burstable = make_pod("p", "c", "1", "2")
    policy.allocate(st, burstable, burstable.containers[0])  # no SMTAlignmentError
    assert st.assignments == {}


def test_existing_assignment_is_kept_before_the_smt_check() -> None:
    # v1.37 (kubernetes#129079): Allocate looks up an existing assignment
    # before enforceSMTAlignment, so a re-admitted container keeps its CPUs
    # even when too few free physical CPUs remain (upstream test case
    # "... pre-allocated cpus ..." on topoDualSocketHT, full-pcpus-only).
    policy = _policy(TOPO_DUAL_SOCKET_HT, 1, options=FULL_PCPUS)
    pod = make_multi_container_pod([], [("4000m", "4000m"), ("4000m", "4000m")])
    st = make_state(
        cs(0, 5, 6, 11),
        {"podUID": {"appContainer-0": cs(2, 3, 8, 9), "appContainer-1": cs(1, 4, 7, 10)}},
    )
    assert policy.get_available_physical_cpus(st).size() == 2  # the SMT check alone would reject 4
    policy.allocate(st, pod, pod.containers[0])
    assert st.get_cpu_set("podUID", "appContainer-0") == cs(2, 3, 8, 9)
    assert st.get_default_cpuset() == cs(0, 5, 6, 11)
    # a container without an assignment still goes through the SMT check
    fresh = make_pod("other", "c", "4", "4")
    with pytest.raises(SMTAlignmentError):
        policy.allocate(st, fresh, fresh.containers[0])


def test_align_by_socket_reaches_the_distributed_picker() -> None:
    # v1.37 (kubernetes#139778): with distribute-cpus-across-numa and
    # align-by-socket, takeByTopology asks the distributed picker for a
    # combination inside one socket. NUMA 0/1 (socket 0) have 30 free CPUs,
    # NUMA 2 (socket 1) 20: the balanced pick would span both sockets.
    opts = {DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "true", ALIGN_BY_SOCKET_OPTION: "true",
            FULL_PCPUS_ONLY_OPTION: "true"}
    topo = TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT
    avail = cs(*range(0, 15), *range(20, 30), *range(40, 55), *range(60, 70))
    aligned = _policy(topo, 1, cs(79), opts, ALPHA).take_by_topology(avail, 24)
    assert aligned == cs(*range(0, 7), *range(10, 15), *range(40, 47), *range(50, 55))
    del opts[ALIGN_BY_SOCKET_OPTION]
    spread = _policy(topo, 1, cs(79), opts, ALPHA).take_by_topology(avail, 24)
    assert spread == cs(*range(0, 6), *range(20, 26), *range(40, 46), *range(60, 66))


def test_reserved_physical_cpus_include_siblings() -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, 1, cs(1), FULL_PCPUS)
    assert policy.reserved_physical_cpus == cs(1, 7)
    st = make_state(cs(*range(12)))
    assert policy.get_available_cpus(st) == cs(*range(12)) - cs(1)
    assert policy.get_available_physical_cpus(st) == cs(*range(12)) - cs(1, 7)


def test_reserved_cpus_use_the_options_picker() -> None:
    # packed takes both threads of core 0; distribute-cpus-across-cores spreads
    packed = _policy(TOPO_DUAL_SOCKET_HT, 2)
    assert packed.reserved_cpus == cs(0, 6)
    spread = _policy(TOPO_DUAL_SOCKET_HT, 2, options={"distribute-cpus-across-cores": "true"}, gates=ALPHA)
    assert spread.reserved_cpus != packed.reserved_cpus


def test_strict_reservation_allocatable_and_shared_pool() -> None:
    policy = _policy(TOPO_DUAL_SOCKET_HT, 2, options={STRICT_CPU_RESERVATION_OPTION: "true"})
    st = make_state(cs())
    policy.start(st)
    assert st.default_cpuset == cs(*range(12)) - cs(0, 6)
    assert policy.get_allocatable_cpus(st) == cs(*range(12)) - cs(0, 6)


def test_reserved_cpu_outside_topology_is_a_startup_error() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        _policy(TOPO_DUAL_SOCKET_HT, 1, cs(99))
    assert str(exc.value) == (
        "[cpumanager] unable to build the reserved physical CPUs from the reserved set: unknown CPU ID: 99"
    )


def test_too_many_reserved_cpus() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        _policy(TOPO_DUAL_SOCKET_HT, 13)
    assert str(exc.value) == (
        "[cpumanager] unable to reserve the required amount of CPUs (size of  did not equal 13)"
    )


def test_pod_level_pod_left_alone_when_gate_off() -> None:
    from podnuma.api.pod import PodLevelResources
    from podnuma.api.quantity import parse_quantity

    pod = make_pod("p", "c", "2", "2")
    pod = pod.replace(
        resources=PodLevelResources(
            requests={"cpu": parse_quantity("4"), "memory": parse_quantity("4G")},
            limits={"cpu": parse_quantity("4"), "memory": parse_quantity("4G")},
        ),
    )
    policy = _policy(TOPO_DUAL_SOCKET_HT, 1)
    st = make_state(cs(*range(12)))
    assert policy.guaranteed_cpus(pod, pod.containers[0]) == 2
    assert policy.get_topology_hints(st, pod, pod.containers[0]) is None
    assert policy.get_pod_topology_hints(st, pod) is None
    policy.allocate(st, pod, pod.containers[0])
    assert st.assignments == {}


# -- TestStaticPolicyAddWithUncoreAlignment ---------------------------------------------------
# Upstream's uncore topologies come from tests/cm/cpumanager/topologies.py by
# their Go name; a case whose fixture is not there yet is skipped.

from tests.cm.cpumanager import topologies as _topologies  # noqa: E402

_BY_GO_NAME = {name.replace("_", "").lower(): t for name, t in _topologies.ALL_TOPOLOGIES.items()}


def _topo_named(go_name: str) -> CPUTopology | None:
    return _BY_GO_NAME.get(go_name.lower())


F_U = {FULL_PCPUS_ONLY_OPTION: "true", "prefer-align-cpus-by-uncorecache": "true"}
U = {"prefer-align-cpus-by-uncorecache": "true"}
S_U = {STRICT_CPU_RESERVATION_OPTION: "true", "prefer-align-cpus-by-uncorecache": "true"}

DSU = "topoDualSocketSingleNumaPerSocketSMTUncore"
SSU = "topoSingleSocketSingleNumaPerSocketSMTSmallUncore"
MONO = "topoDualSocketSubNumaPerSocketHTMonolithicUncore"


@dataclass(frozen=True)
class UncoreCase:
    description: str
    topo: str
    reserved: CPUSet
    options: Mapping[str, str]
    apps: tuple[int, ...]
    uid: str
    # the default set: ("all",) | ("minus-uncore", ids...) | ("minus", cpus...) | ("all-of", topo name)
    default: tuple[object, ...] = ("all",)
    exp_uncore: CPUSet | None = None
    exp_cset: CPUSet | None = None


UNCORE_CASES = [
    UncoreCase("GuPodSingleContainerSaturating, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
               DSU, cs(0, 1, 96, 97, 192, 193, 288, 289), F_U, (16,), "with-app-container-saturating",
               ("minus-uncore", 0, 12), exp_uncore=cs(1)),
    UncoreCase("GuPodMainAndSidecarContainer, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
               DSU, cs(0, 1, 96, 97, 192, 193, 288, 289), F_U, (12, 2), "with-app-container-and-sidecar",
               ("minus-uncore", 0, 12), exp_uncore=cs(1)),
    UncoreCase("GuPodSidecarAndMainContainer, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
               DSU, cs(0, 1, 96, 97, 192, 193, 288, 289), F_U, (2, 12), "with-sidecar-and-app-container",
               ("minus-uncore", 0, 12), exp_uncore=cs(1)),
    UncoreCase("GuPodMainAndManySidecarContainer, DualSocketHTUncore, ExpectAllocOneUncore, FullUncoreAvail",
               DSU, cs(0, 1, 96, 97, 192, 193, 288, 289), F_U, (10, 2, 2, 2),
               "with-app-container-and-multi-sidecar", ("minus-uncore", 0, 12), exp_uncore=cs(1)),
    UncoreCase("GuPodMainAndSidecarContainer, DualSocketHTUncore, ExpectAllocTwoUncore",
               DSU, cs(0, 1, 96, 97, 192, 193, 288, 289), F_U, (12, 2), "with-app-container-and-sidecar",
               exp_uncore=cs(0, 1)),
    UncoreCase("GuPodSingleContainer, SingleSocketSMTSmallUncore, ExpectAllocOneUncore",
               SSU, cs(0, 1, 64, 65), F_U, (8,), "with-app-container-saturating", exp_uncore=cs(1)),
    UncoreCase("GuPodSingleContainer, SingleSocketSMTSmallUncore, ExpectAllocTwoUncore",
               SSU, cs(0, 1, 64, 65), F_U, (12,), "with-app-container-saturating",
               ("minus-uncore", 1), exp_uncore=cs(0, 2)),
    UncoreCase("GuPodSingleContainer, SingleSocketNoSMTSmallUncore, FragmentedUncore, ExpectAllocThreeUncore",
               "topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore", cs(0, 1, 2, 3), F_U, (12,),
               "with-app-container-saturating", ("minus-uncore", 2, 3, 5), exp_uncore=cs(1, 4, 6)),
    UncoreCase("GuPodMultiContainer, DualSocketSMTUncore, FragmentedUncore, ExpectAllocOneUncore",
               "topoSmallDualSocketSingleNumaPerSocketNoSMTUncore", cs(0, 1, 32, 33), F_U, (4, 2),
               "with-multiple-container", ("minus-uncore", 1), exp_uncore=cs(0)),
    UncoreCase("GuPodMultiContainer, DualSocketSMTUncore, FragmentedUncore, ExpectAllocTwoUncore",
               "topoSmallDualSocketSingleNumaPerSocketNoSMTUncore", cs(0, 1, 32, 33), F_U, (4, 4),
               "with-multiple-container", ("minus-uncore", 1), exp_uncore=cs(0, 2)),
    UncoreCase("GuPodMultiContainer, LargeSingleSocketSMTUncore, PartialUncoreFit, ExpectAllocTwoUncore",
               "topoLargeSingleSocketSingleNumaPerSocketSMTUncore", cs(0, 1, 128, 129), F_U, (12, 12),
               "with-multiple-container", ("minus", 8, 9, 136, 137), exp_uncore=cs(0, 1)),
    UncoreCase("GuPodMultiContainer, LargeSingleSocketSMTUncore, PartialUncoreNoFit, ExpectAllocTwoUncore",
               "topoLargeSingleSocketSingleNumaPerSocketSMTUncore", cs(0, 1, 128, 129), F_U, (14, 14),
               "with-multiple-container", ("minus", 8, 9, 136, 137), exp_uncore=cs(2, 3)),
    UncoreCase("GuPodLargeSingleContainer, DualSocketNoSMTUncore, FullNUMAsAvail, ExpectAllocFullNUMA",
               "topoDualSocketMultiNumaPerSocketUncore", cs(0, 1, 2, 3), F_U, (48,),
               "with-large-single-container", exp_uncore=cs(6, 7, 8, 9, 10, 11)),
    UncoreCase("GuPodSingleContainer, MonoUncoreCacheHT, ExpectAllocCPUSet (dual socket)",
               MONO, cs(0, 1, 120, 121), F_U, (6,), "with-single-container",
               exp_cset=cs(2, 3, 4, 122, 123, 124)),
    UncoreCase("GuPodSingleContainer, MonoUncoreCacheHT, ExpectAllocCPUSet (P-cores)",
               "topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore", cs(0, 1), F_U, (6,),
               "with-single-container", ("minus", 4, 5, 6, 7), exp_cset=cs(2, 3, 8, 9, 16, 17)),
    UncoreCase("GuPodSingleContainer, LargeSingleSocketUncore, ExpectAllocOneUncore",
               "topoLargeSingleSocketSingleNumaPerSocketUncore", cs(0, 1, 2, 3), F_U, (8,),
               "with-single-container", exp_uncore=cs(1)),
    UncoreCase("GuPodSingleContainer, MonoUncoreCacheHT, ExpectFragmentedAllocCPUSet",
               "topoSingleSocketSingleNumaPerSocketUncore", cs(0, 1), F_U, (12,), "with-single-container",
               ("minus", 6, 7, 8, 9, 12, 13, 14, 15, 18, 19),
               exp_cset=cs(2, 3, 4, 5, 10, 11, 16, 17, 20, 21, 22, 23)),
    UncoreCase("GuPodSingleContainer, SingleSocketUncore, PartialUncore, ExpectBestEffortAllocTwoUncore",
               "topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore", cs(0, 1, 2, 3), F_U, (8,),
               "with-single-container", ("minus", 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27),
               exp_uncore=cs(0, 1)),
    UncoreCase("odd integer cpu required on smt-disabled",
               "topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore", cs(0, 1, 2, 3), F_U, (5,),
               "with-single-container", exp_cset=cs(8, 9, 10, 11, 12)),
    UncoreCase("odd integer required on smt-enabled", SSU, cs(0, 1, 64, 65), U, (3,),
               "with-single-container", exp_cset=cs(2, 3, 66)),
    UncoreCase("odd integer required on odd integer partial uncore", SSU, cs(0, 1, 64), U, (3,),
               "with-single-container", exp_cset=cs(2, 65, 66)),
    UncoreCase("even integer required on odd integer partial uncore", SSU, cs(0, 1, 64), U, (4,),
               "with-single-container", exp_cset=cs(4, 5, 68, 69)),
    UncoreCase("large odd integer required on smt-enabled", SSU, cs(0, 1, 64), U, (11,),
               "with-single-container", exp_cset=cs(2, 65, 66, 4, 5, 6, 7, 68, 69, 70, 71)),
    # upstream builds the default set of these two from another topology (quirk kept)
    UncoreCase("odd integer required on HT monolithic uncore", MONO, cs(0, 1, 120), U, (5,),
               "with-single-container", ("all-of", SSU), exp_cset=cs(2, 3, 121, 122, 123)),
    UncoreCase("even integer required on HT monolithic uncore", MONO, cs(0, 1, 120), U, (4,),
               "with-single-container", ("all-of", SSU), exp_cset=cs(2, 3, 122, 123)),
    UncoreCase("GuPodSingleContainer, SingleSocketSMTSmallUncore, StrictReserveCompatability",
               SSU, cs(0, 1, 64, 65), S_U, (2,), "with-single-container", exp_cset=cs(2, 66)),
    UncoreCase("GuPodSingleContainer, DualSocketHTMonoUncore, StrictReserveCompatability",
               MONO, cs(0, 1, 120, 121), S_U, (4,), "with-single-container", exp_cset=cs(2, 3, 122, 123)),
]


def _uncore_default(case: UncoreCase, topo: CPUTopology) -> CPUSet | None:
    kind = case.default[0]
    if kind == "all":
        return topo.cpus()
    if kind == "minus-uncore":
        ids = [int(str(i)) for i in case.default[1:]]
        return topo.cpus() - topo.details.cpus_in_uncore_caches(*ids)
    if kind == "minus":
        return topo.cpus() - CPUSet(int(str(i)) for i in case.default[1:])
    other = _topo_named(str(case.default[1]))
    return None if other is None else other.cpus()


@pytest.mark.parametrize("case", UNCORE_CASES, ids=lambda c: c.description)
def test_static_policy_add_with_uncore_alignment(case: UncoreCase) -> None:
    topo = _topo_named(case.topo)
    default = None if topo is None else _uncore_default(case, topo)
    if topo is None or default is None:
        pytest.skip(f"fixture {case.topo} not in tests/cm/cpumanager/topologies.py")
    policy = _policy(topo, case.reserved.size(), case.reserved, case.options, ALPHA)
    st = make_state(default - case.reserved)  # the CPU manager's invariant
    pod = make_multi_container_pod([], [(f"{n}000m", f"{n}000m") for n in case.apps], uid=case.uid)
    for ctr in pod.containers:
        policy.allocate(st, pod, ctr)
    if case.exp_cset is not None:
        assert st.get_cpu_set(pod.uid, pod.containers[0].name) == case.exp_cset
        return
    uncore = 0
    for ctr in pod.containers:
        cset = st.get_cpu_set(pod.uid, ctr.name)
        assert cset is not None
        for cpu in cset:
            uncore |= 1 << topo.cpu_info[cpu].uncore_cache
    assert CPUSet.from_mask(uncore) == case.exp_uncore
