"""The CPU manager: upstream cpu_manager_test.go (TestCPUManagerAdd,
TestCPUManagerAddWithInitContainers, TestCPUManagerGenerate,
TestCPUManagerRemove, TestCPUManagerAddWithResvList,
TestCPUManagerHandlePolicyOptions, TestCPUManagerGetAllocatableCPUs and the
stale-state part of TestReconcileState)."""

from __future__ import annotations

import pytest

from podnuma.api.pod import Container, Pod
from podnuma.cm.cpumanager.cpu_manager import CPUManager, new_cpu_manager
from podnuma.cm.cpumanager.policy import Policy, TopologyHints, UnexpectedAdmissionError
from podnuma.cm.cpumanager.policy_none import NonePolicy, new_none_policy
from podnuma.cm.cpumanager.policy_static import StaticPolicy, new_static_policy
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.errors import KubeletStartupError
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUInfo, CPUTopology
from tests.cm.cpumanager.cpu_policy_helpers import (
    ALPHA,
    DEFAULTS,
    FakeAffinity,
    Spec,
    cs,
    make_multi_container_pod,
    make_pod,
    make_state,
)
from tests.cm.cpumanager.topologies import TOPO_DUAL_SOCKET_HT, TOPO_SINGLE_SOCKET_HT

# 4 single-thread cores on one socket (NUMA node / uncore cache: Go zero values)
FOUR_CPUS = CPUTopology({c: CPUInfo(numa_node=0, socket=0, core=c, uncore_cache=0) for c in range(4)},
                        num_cpus=4, num_sockets=1, num_cores=4)
# 2 sockets x 4 cores, no NUMA ids (TestReconcileState)
EIGHT_CPUS = CPUTopology(
    {c: CPUInfo(numa_node=0, socket=c // 4, core=c % 4, uncore_cache=0) for c in range(8)},
    num_cpus=8, num_sockets=2, num_cores=4,
)


class MockPolicy(Policy):
    """mockPolicy: every call fails with ``err`` when set (a subclass of the
    policy base class: the compiled engine takes nothing else)."""

    def __init__(self, err: Exception | None = None) -> None:
        self.err = err

    def name(self) -> str:
        return "mock"

    def _fail(self) -> None:
        if self.err is not None:
            raise self.err

    def start(self, state: CPUManagerState) -> None:
        self._fail()

    def allocate(self, state: CPUManagerState, pod: Pod, container: Container) -> None:
        self._fail()

    def remove_container(self, state: CPUManagerState, pod_uid: str, container_name: str) -> None:
        self._fail()

    def get_topology_hints(
        self, state: CPUManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None:
        return None

    def get_pod_topology_hints(self, state: CPUManagerState, pod: Pod) -> TopologyHints | None:
        return None

    def get_allocatable_cpus(self, state: CPUManagerState) -> CPUSet:
        return CPUSet()


# -- TestCPUManagerAdd / TestCPUManagerAddWithResvList ---------------------------------------


def test_cpu_manager_add_no_error() -> None:
    policy = new_static_policy(FOUR_CPUS, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    # CPU 4 is not in the topology: upstream's table keeps it (it stays shared)
    mgr = CPUManager(policy, make_state(cs(1, 2, 3, 4)), FOUR_CPUS, active_pods=lambda: {})
    pod = make_pod("fakePod", "fakeContainer", "2", "2")
    mgr.allocate(pod, pod.containers[0])
    assert mgr.state.default_cpuset == cs(3, 4)


def test_cpu_manager_add_policy_error() -> None:
    err = UnexpectedAdmissionError("fake reg error")
    mgr = CPUManager(MockPolicy(err), make_state(cs(1, 2, 3, 4)), FOUR_CPUS, active_pods=lambda: {})
    pod = make_pod("fakePod", "fakeContainer", "2", "2")
    with pytest.raises(UnexpectedAdmissionError) as exc:
        mgr.allocate(pod, pod.containers[0])
    assert exc.value is err
    assert mgr.state.default_cpuset == cs(1, 2, 3, 4)


def test_cpu_manager_add_with_resv_list() -> None:
    policy = new_static_policy(FOUR_CPUS, 1, cs(0), FakeAffinity(), None, DEFAULTS)
    mgr = CPUManager(policy, make_state(cs(0, 1, 2, 3)), FOUR_CPUS, active_pods=lambda: {})
    pod = make_pod("fakePod", "fakeContainer", "2", "2")
    mgr.allocate(pod, pod.containers[0])
    assert mgr.state.default_cpuset == cs(0, 3)


# -- TestCPUManagerAddWithInitContainers -----------------------------------------------------


INIT_CONTAINER_CASES = [
    ("No Guaranteed Init CPUs", [("100m", "100m")], [("4000m", "4000m")],
     [cs()], [cs(0, 4, 1, 5)]),
    ("Equal Number of Guaranteed CPUs", [("4000m", "4000m")], [("4000m", "4000m")],
     [cs(0, 4, 1, 5)], [cs(0, 4, 1, 5)]),
    ("More Init Container Guaranteed CPUs", [("6000m", "6000m")], [("4000m", "4000m")],
     [cs(0, 4, 1, 5, 2, 6)], [cs(0, 4, 1, 5)]),
    ("Less Init Container Guaranteed CPUs", [("2000m", "2000m")], [("4000m", "4000m")],
     [cs(0, 4)], [cs(0, 4, 1, 5)]),
    ("Multi Init Container Equal CPUs", [("2000m", "2000m"), ("2000m", "2000m")],
     [("2000m", "2000m")], [cs(0, 4), cs(0, 4)], [cs(0, 4)]),
    ("Multi Init Container Less CPUs", [("4000m", "4000m"), ("4000m", "4000m")],
     [("2000m", "2000m")], [cs(0, 4, 1, 5), cs(0, 4, 1, 5)], [cs(0, 4)]),
    ("Multi Init Container More CPUs", [("2000m", "2000m"), ("2000m", "2000m")],
     [("4000m", "4000m")], [cs(0, 4), cs(0, 4)], [cs(0, 4, 1, 5)]),
    ("Multi Init Container Increasing CPUs", [("2000m", "2000m"), ("4000m", "4000m")],
     [("6000m", "6000m")], [cs(0, 4), cs(0, 4, 1, 5)], [cs(0, 4, 1, 5, 2, 6)]),
    ("Multi Init, Multi App Container Split CPUs", [("2000m", "2000m"), ("4000m", "4000m")],
     [("2000m", "2000m"), ("2000m", "2000m")], [cs(0, 4), cs(0, 4, 1, 5)], [cs(0, 4), cs(1, 5)]),
]


@pytest.mark.parametrize(
    ("description", "init", "app", "exp_init", "exp_app"),
    INIT_CONTAINER_CASES,
)
def test_cpu_manager_add_with_init_containers(
    description: str, init: list[Spec], app: list[Spec], exp_init: list[CPUSet], exp_app: list[CPUSet]
) -> None:
    pod = make_multi_container_pod(init, app)
    policy = new_static_policy(TOPO_SINGLE_SOCKET_HT, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    start = cs(*range(8))
    mgr = CPUManager(
        policy,
        make_state(start),
        TOPO_SINGLE_SOCKET_HT,
        active_pods=lambda: {pod.uid: {c.name for c in pod.all_containers()}},
    )
    used = CPUSet()
    for ctr, exp in zip(pod.all_containers(), exp_init + exp_app, strict=True):
        mgr.allocate(pod, ctr)
        got = mgr.state.get_cpu_set(pod.uid, ctr.name)
        if not exp.is_empty():
            assert got == exp
        if got is not None:
            assert got == exp
            used = used | got
    assert mgr.state.default_cpuset == start - used


# -- TestCPUManagerGenerate / TestCPUManagerHandlePolicyOptions -------------------------------


def _generate(name: str, millis: int | None, options: dict[str, str] | None = None) -> CPUManager:
    return new_cpu_manager(name, options, FOUR_CPUS, CPUSet(), millis, FakeAffinity(), DEFAULTS,
                           CPUManagerState())


def test_cpu_manager_generate_none() -> None:
    mgr = _generate("none", None)
    assert mgr.policy.name() == "none"
    assert isinstance(mgr.policy, NonePolicy)


def test_cpu_manager_generate_invalid_policy() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        _generate("invalid", None)
    assert str(exc.value) == 'unknown policy: "invalid"'


def test_cpu_manager_generate_static() -> None:
    mgr = _generate("static", 3000)
    assert mgr.policy.name() == "static"
    assert isinstance(mgr.policy, StaticPolicy)
    assert mgr.get_reserved_cpus() == cs(0, 1, 2)


@pytest.mark.parametrize("millis", [None, 0])
def test_cpu_manager_generate_broken_reservation(millis: int | None) -> None:
    # upstream: an absent cpu entry; the kubelet drops a zero sum from the
    # node-allocatable reservation, so 0 reads the same (upstream's explicit
    # zero Quantity -- "requires ... greater than zero" -- never reaches it)
    with pytest.raises(KubeletStartupError) as exc:
        _generate("static", millis)
    assert str(exc.value) == "[cpumanager] unable to determine reserved CPU resources for static policy"


def test_cpu_manager_handle_policy_options() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        _generate("none", None, {"full-pcpus-only": "true"})
    assert "received unsupported options" in str(exc.value)
    assert str(exc.value) == (
        "new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]"
    )


@pytest.mark.parametrize(("millis", "expected"), [(1, 1), (1000, 1), (1001, 2), (1500, 2), (2000, 2)])
def test_reserved_count_is_the_ceiling(millis: int, expected: int) -> None:
    mgr = new_cpu_manager("static", None, TOPO_DUAL_SOCKET_HT, None, millis, FakeAffinity(), DEFAULTS,
                          CPUManagerState())
    assert mgr.get_reserved_cpus().size() == expected


def test_reserved_system_cpus_override_the_quantity() -> None:
    mgr = new_cpu_manager("static", None, TOPO_DUAL_SOCKET_HT, cs(5, 11), 500, FakeAffinity(), DEFAULTS,
                          CPUManagerState())
    assert mgr.get_reserved_cpus() == cs(5, 11)
    mgr.start()
    assert mgr.get_allocatable_cpus() == cs(*range(12)) - cs(5, 11)
    assert mgr.state.default_cpuset == cs(*range(12))


def test_static_errors_are_wrapped() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        new_cpu_manager("static", {"align-by-socket": "true"}, TOPO_DUAL_SOCKET_HT, None, 1000,
                        FakeAffinity(), DEFAULTS, CPUManagerState())
    assert str(exc.value) == (
        'new static policy error: CPU Manager Policy Alpha-level Options not enabled, but option '
        '"align-by-socket" provided'
    )
    with pytest.raises(KubeletStartupError) as exc:
        new_cpu_manager("static", {"align-by-socket": "true"}, TOPO_DUAL_SOCKET_HT, None, 1000,
                        FakeAffinity(), ALPHA, CPUManagerState(), topology_manager_policy="single-numa-node")
    assert str(exc.value).startswith("new static policy error: Topolgy manager single-numa-node policy")


def test_start_errors_propagate() -> None:
    mgr = _generate("static", 1000)
    mgr.state.set_default_cpuset(cs(1, 2))
    with pytest.raises(KubeletStartupError, match="^not all reserved cpus"):
        mgr.start()


# -- TestCPUManagerRemove ------------------------------------------------------------------------


def test_cpu_manager_remove() -> None:
    mgr = CPUManager(MockPolicy(), make_state(cs()), FOUR_CPUS)
    mgr.remove_container("", "")
    err = KeyError("fake error")
    mgr = CPUManager(MockPolicy(err), make_state(cs()), FOUR_CPUS)
    with pytest.raises(KeyError):
        mgr.remove_container("", "")


# -- TestCPUManagerGetAllocatableCPUs -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "static", "expected"),
    [("None Policy", False, cs()), ("Static Policy", True, cs(1, 2, 3))],
)
def test_cpu_manager_get_allocatable_cpus(description: str, static: bool, expected: CPUSet) -> None:
    policy = (
        new_static_policy(FOUR_CPUS, 1, cs(0), FakeAffinity(), None, DEFAULTS) if static else new_none_policy()
    )
    mgr = CPUManager(policy, make_state(cs(0, 1, 2, 3)), FOUR_CPUS, active_pods=lambda: {})
    mgr.start()
    pod = make_pod("fakePod", "fakeContainer", "2", "2")
    mgr.allocate(pod, pod.containers[0])
    assert mgr.get_allocatable_cpus() == expected


# -- removeStaleState (TestReconcileState "state has inactive container") --------------------------


def test_remove_stale_state_drops_inactive_containers() -> None:
    policy = new_static_policy(EIGHT_CPUS, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    st = make_state(
        cs(5, 6, 7),
        {"fakePodUID": {"fakeContainerName": cs(1, 2)}, "secondfakePodUID": {"secondfakeContainerName": cs(3, 4)}},
    )
    mgr = CPUManager(policy, st, EIGHT_CPUS, active_pods=lambda: {"fakePodUID": {"fakeContainerName"}})
    mgr.remove_stale_state()
    assert st.assignments == {"fakePodUID": {"fakeContainerName": cs(1, 2)}}
    assert st.default_cpuset == cs(3, 4, 5, 6, 7)


def test_stale_state_collected_before_allocation() -> None:
    # a rejected pod's CPUs stay until the next allocation collects them
    policy = new_static_policy(TOPO_SINGLE_SOCKET_HT, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    st = make_state(cs(*range(8)))
    active: dict[str, set[str]] = {"a": {"c"}}
    mgr = CPUManager(policy, st, TOPO_SINGLE_SOCKET_HT, active_pods=lambda: active)
    a = make_pod("a", "c", "6", "6")
    mgr.allocate(a, a.containers[0])
    assert st.default_cpuset.size() == 2
    active.clear()
    b = make_pod("b", "c", "6", "6")
    active["b"] = {"c"}
    mgr.allocate(b, b.containers[0])
    assert "a" not in st.assignments
    assert st.get_cpu_set("b", "c") is not None


def test_no_stale_collection_without_active_pods_source() -> None:
    policy = new_static_policy(TOPO_SINGLE_SOCKET_HT, 0, CPUSet(), FakeAffinity(), None, DEFAULTS)
    st = make_state(cs(2, 3, 6, 7), {"gone": {"c": cs(0, 1, 4, 5)}})
    mgr = CPUManager(policy, st, TOPO_SINGLE_SOCKET_HT)  # sources not ready
    pod = make_pod("p", "c", "2", "2")
    mgr.allocate(pod, pod.containers[0])
    assert "gone" in st.assignments
    # an explicit list of active pods collects
    mgr.remove_stale_state({"p": {"c"}})
    assert "gone" not in st.assignments


def test_manager_readers() -> None:
    policy = new_static_policy(TOPO_SINGLE_SOCKET_HT, 1, CPUSet(), FakeAffinity(), None, DEFAULTS)
    mgr = CPUManager(policy, make_state(cs()), TOPO_SINGLE_SOCKET_HT)
    mgr.start()
    pod = make_pod("p", "c", "2", "2")
    mgr.allocate(pod, pod.containers[0])
    excl = mgr.get_exclusive_cpus("p", "c")
    assert excl.size() == 2
    assert mgr.get_cpu_set_or_default("p", "c") == excl
    assert mgr.get_cpu_affinity("p", "other") == mgr.state.default_cpuset
    assert mgr.get_exclusive_cpus("p", "other").is_empty()
    assert mgr.get_all_cpus() == cs(*range(8))
    # the shared pool keeps the reserved CPU (not strict)
    assert 0 in mgr.state.default_cpuset
