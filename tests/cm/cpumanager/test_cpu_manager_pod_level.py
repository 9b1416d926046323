"""The CPU manager with pod-level resources (KEP-5526): upstream
cpu_manager_pod_level_test.go TestCPUManagerRestoreState,
TestPodLevelResourcesReallocationAfterRestart (kubernetes#140989),
TestPodLevelResourcesRestoreCPUIntegrity, TestMixedScopeRestoreCPUIntegrity;
cm's TestContainerHasExclusiveCPUs / TestPodHasExclusiveCPUs; the isolation
levels (GetResourceIsolationLevel) and the PodResources view
(server_v1_test.go TestListPodResourcesV1, pod-level rows)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from podnuma.api.pod import Pod
from podnuma.api.resources import is_pod_level_resources_set
from podnuma.cm.cpumanager.checkpoint import (
    CPUCheckpointData,
    decode_cpu_checkpoint,
    encode_cpu_checkpoint,
)
from podnuma.cm.cpumanager.cpu_manager import (
    CPUManager,
    active_containers_of,
    new_cpu_manager,
    resources_qualify_for_exclusive_cpus,
)
from podnuma.cm.cpumanager.policy import UnexpectedAdmissionError
from podnuma.cm.cpumanager.policy_none import NonePolicy
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.results import Isolation
from podnuma.machine.cpuset import EMPTY, CPUSet
from tests.cm.cpumanager.cpu_policy_helpers import FakeAffinity, Gates, cs
from tests.cm.cpumanager.pod_level_helpers import (
    GATES_OFF,
    GATES_ON,
    GATES_PLRM_OFF,
    C,
    classic_pod,
    pod_level_pod,
    shared,
    single_numa_no_smt,
)

# -- restart tests ---------------------------------------------------------------------
# newRestoreTestManager: N single-thread cores on one socket / NUMA node, one
# reserved CPU from the node allocatable reservation (cpu = 1).


def _manager(
    num_cpus: int,
    gates: Gates,
    pods: Iterable[Pod],
    checkpoint: CPUCheckpointData | None = None,
) -> CPUManager:
    active = active_containers_of(list(pods))
    return new_cpu_manager(
        "static",
        None,
        single_numa_no_smt(num_cpus, numa_nodes=1),
        None,
        1000,
        FakeAffinity(),
        gates,
        checkpoint=checkpoint,
        active_pods=lambda: active,
    )


def _restart(mgr: CPUManager, gates: Gates, pods: Iterable[Pod]) -> CPUManager:
    """Write the checkpoint as the kubelet does, read it back, start anew."""
    plrm = gates.enabled("PodLevelResourceManagers")
    data = CPUCheckpointData(
        "static",
        mgr.state.get_default_cpuset(),
        mgr.state.get_cpu_assignments(),
        dict(mgr.state.pod_assignments) if plrm else {},
    )
    restored = decode_cpu_checkpoint(encode_cpu_checkpoint(data), pod_level_resource_managers=plrm)
    return _manager(mgr.topology.num_cpus, gates, pods, restored)


def _allocate(mgr: CPUManager, pod: Pod, gates: Gates) -> None:
    """Pod scope: AllocatePod for pod-level pods with the gate on, per-container
    Allocate otherwise."""
    if gates.enabled("PodLevelResourceManagers") and is_pod_level_resources_set(pod):
        mgr.allocate_pod(pod)
    else:
        for c in pod.containers:
            mgr.allocate(pod, c)


RESTORE_STATE_CASES = [
    ("pod-level resources and managers enabled", GATES_ON, "2", (C("container1", "1"),), True),
    ("pod-level resources enabled, managers disabled", GATES_PLRM_OFF, "2",
     (C("container1", "1"),), False),
    ("container-level pod, features enabled", GATES_ON, None,
     (C("container1", "1"), C("container2", "1")), False),
    ("container-level pod, features disabled", GATES_OFF, None,
     (C("container1", "1"), C("container2", "1")), False),
]


@pytest.mark.parametrize(
    ("desc", "gates", "pod_cpu", "apps", "expect_pod_cpuset"),
    RESTORE_STATE_CASES,
    ids=[c[0] for c in RESTORE_STATE_CASES],
)
def test_cpu_manager_restore_state(
    desc: str, gates: Gates, pod_cpu: str | None, apps: tuple[C, ...], expect_pod_cpuset: bool
) -> None:
    pod = pod_level_pod("pod1", pod_cpu, pod_cpu, (), apps)
    mgr = _manager(4, gates, [pod])
    _allocate(mgr, pod, gates)
    before = mgr.get_pod_cpus("pod1")
    assert (before is not None) == expect_pod_cpuset

    mgr2 = _restart(mgr, gates, [pod])
    assert mgr2.get_pod_cpus("pod1") == before
    skipped = (
        gates.enabled("PodLevelResources")
        and not gates.enabled("PodLevelResourceManagers")
        and is_pod_level_resources_set(pod)
    )
    for c in pod.containers:
        cset = mgr2.state.get_cpu_set("pod1", c.name)
        if skipped:
            assert cset is None
        else:
            assert cset is not None and not cset.is_empty()
            assert cset == mgr.state.get_cpu_set("pod1", c.name)


# (num CPUs, pod cpu, containers, pod CPUs, container CPUs, after re-admission)
# -- v1.37.2's allocatePodForAdd ignores what the restored state holds: the
# re-admission allocates a new bubble from the shared pool, or fails when the
# pool is too small; the old bubble is in no entry and not in the pool.
REALLOCATION_CASES = [
    (4, "2", (C("container1", "2"),), cs(1, 2), {"container1": cs(1, 2)},
     "not enough cpus available to satisfy request: requested=2, available=1"),
    (6, "2", (C("container1", "2"),), cs(1, 2), {"container1": cs(1, 2)},
     (cs(3, 4), {"container1": cs(3, 4)})),
    (6, "4", (C("container1", "2"), C("container2", "2")), cs(1, 2, 3, 4),
     {"container1": cs(1, 2), "container2": cs(3, 4)},
     "not enough cpus available to satisfy request: requested=4, available=1"),
]


@pytest.mark.parametrize(
    ("num_cpus", "pod_cpu", "apps", "pod_cpus", "containers", "after"),
    REALLOCATION_CASES,
    ids=["4 CPUs, pod of 2", "6 CPUs, pod of 2", "6 CPUs, pod of 4 in two containers"],
)
def test_pod_level_resources_reallocation_after_restart(
    num_cpus: int,
    pod_cpu: str,
    apps: tuple[C, ...],
    pod_cpus: CPUSet,
    containers: dict[str, CPUSet],
    after: str | tuple[CPUSet, dict[str, CPUSet]],
) -> None:
    pod = pod_level_pod("test-pod", pod_cpu, pod_cpu, (), apps)
    mgr = _manager(num_cpus, GATES_ON, [pod])
    mgr.allocate_pod(pod)
    assert mgr.get_pod_cpus("test-pod") == pod_cpus
    assert mgr.state.assignments["test-pod"] == containers
    default_before = mgr.state.get_default_cpuset()

    mgr2 = _restart(mgr, GATES_ON, [pod])
    if isinstance(after, str):
        with pytest.raises(UnexpectedAdmissionError) as exc:
            mgr2.allocate_pod(pod)  # re-admission
        assert exc.value.error == after
        assert mgr2.get_pod_cpus("test-pod") == pod_cpus
        assert mgr2.state.get_default_cpuset() == default_before
        return
    new_pod_cpus, new_containers = after
    mgr2.allocate_pod(pod)
    assert mgr2.get_pod_cpus("test-pod") == new_pod_cpus
    assert mgr2.state.assignments["test-pod"] == new_containers
    # the old bubble leaks: neither in the shared pool nor in any entry
    assert mgr2.state.get_default_cpuset() == default_before - new_pod_cpus
    assert (mgr2.state.get_default_cpuset() & pod_cpus).is_empty()


def test_pod_level_resources_readmission_moves_every_pod() -> None:
    pods = [
        pod_level_pod(name, "2", "2", (), (C(f"container-{i}", "2"),))
        for i, name in enumerate(["pod1", "pod2"])
    ]
    mgr = _manager(8, GATES_ON, pods)
    for p in pods:
        mgr.allocate_pod(p)
    assert {p.uid: mgr.get_pod_cpus(p.uid) for p in pods} == {"pod1": cs(1, 2), "pod2": cs(3, 4)}

    mgr2 = _restart(mgr, GATES_ON, pods)
    mgr2.allocate_pod(pods[0])
    assert mgr2.get_pod_cpus("pod1") == cs(5, 6)
    with pytest.raises(UnexpectedAdmissionError) as exc:
        mgr2.allocate_pod(pods[1])
    assert exc.value.error == "not enough cpus available to satisfy request: requested=2, available=1"
    assert mgr2.get_pod_cpus("pod2") == cs(3, 4)
    assert mgr2.state.get_default_cpuset() == cs(0, 7)


def test_stale_pod_level_pod_released_when_inactive() -> None:
    """removeStaleState only walks container entries; the pod's CPUs return
    with the last of them."""
    pod = pod_level_pod("p", "4", "4", (C("i1", "1"),), (C("c1", "2"), shared("c2")))
    active: dict[str, set[str]] = active_containers_of([pod])
    mgr = new_cpu_manager("static", None, single_numa_no_smt(8, numa_nodes=1), None, 1000,
                          FakeAffinity(), GATES_ON, active_pods=lambda: active)
    mgr.allocate_pod(pod)
    assert mgr.get_pod_cpus("p") == cs(1, 2, 3, 4)
    assert set(mgr.state.assignments["p"]) == {"i1", "c1", "c2"}
    active.clear()
    mgr.remove_stale_state()
    assert mgr.state.assignments == {} and mgr.state.pod_assignments == {}
    assert mgr.state.get_default_cpuset() == CPUSet(range(8))


def test_pod_entry_without_container_entries_is_not_collected() -> None:
    """Upstream quirk: a pod entry alone is never garbage-collected by
    removeStaleState (only a re-admission of the same pod cleans it)."""
    st = CPUManagerState(cs(0, 3, 4, 5, 6, 7), {}, {"gone": cs(1, 2)})
    mgr = new_cpu_manager("static", None, single_numa_no_smt(8, numa_nodes=1), None, 1000,
                          FakeAffinity(), GATES_ON, st, active_pods=lambda: {})
    mgr.remove_stale_state()
    assert mgr.get_pod_cpus("gone") == cs(1, 2)
    assert mgr.state.get_default_cpuset() == cs(0, 3, 4, 5, 6, 7)


def test_none_policy_manager_allocate_pod() -> None:
    pod = pod_level_pod("p", "2", "2", (), (C("c1", "2"),))
    mgr = new_cpu_manager("none", None, single_numa_no_smt(4, numa_nodes=1), None, None,
                          FakeAffinity(), GATES_ON)
    mgr.allocate_pod(pod)
    assert mgr.state.assignments == {} and mgr.state.pod_assignments == {}
    assert mgr.get_resource_isolation_level(pod, pod.containers[0]) == "host"
    assert not mgr.container_has_exclusive_cpus(pod, pod.containers[0])


# -- isolation level, exclusive CPUs, PodResources ----------------------------------------

G = C("c1", "1")  # cpu 1/1, memory 100Mi/100Mi
NI = C("c1", "500m")  # non-integral
B = C("c1", "1", None)  # cpu request, no cpu limit
BE = shared("c1")  # no cpu at all (memory only)
F = C("c1", "1500m")  # equivalent-guaranteed, not integral


def _reader(gates: Gates, entries: dict[str, dict[str, CPUSet]] | None = None,
            pod_entries: dict[str, CPUSet] | None = None) -> CPUManager:
    st = CPUManagerState(CPUSet(range(40)), entries or {}, pod_entries or {})
    return CPUManager(NonePolicy(), st, single_numa_no_smt(40), gates=gates)


def _pl(*apps: C) -> Pod:
    return pod_level_pod("pod", "4", "4", (), apps)


def _classic(*apps: C) -> Pod:
    return classic_pod("pod", apps)


@pytest.mark.parametrize(
    ("c", "qualifies"),
    [(G, True), (NI, False), (B, False), (BE, False), (F, False), (C("c1", "2", "3"), False)],
    ids=["guaranteed", "non-integral", "no cpu limit", "best-effort", "1500m", "req != lim"],
)
def test_resources_qualify_for_exclusive_cpus(c: C, qualifies: bool) -> None:
    assert resources_qualify_for_exclusive_cpus(_pl(c).containers[0]) is qualifies


ISOLATION_CASES: list[tuple[str, Pod, CPUSet | None, Gates, Isolation]] = [
    ("classic pod with exclusive CPUs", _classic(G), cs(1), GATES_ON, "container"),
    ("classic pod without an entry", _classic(G), None, GATES_ON, "host"),
    ("pod-level pod, qualifying container", _pl(G), cs(1), GATES_ON, "container"),
    ("pod-level pod, non-integral container", _pl(NI), cs(1, 2), GATES_ON, "pod"),
    ("pod-level pod, container without cpu limit", _pl(B), cs(1, 2), GATES_ON, "pod"),
    ("pod-level pod, best-effort container", _pl(BE), cs(1, 2), GATES_ON, "pod"),
    ("pod-level pod, 1500m container", _pl(F), cs(1, 2), GATES_ON, "pod"),
    ("pod-level pod, no entry (container scope)", _pl(BE), None, GATES_ON, "host"),
    ("pod-level pod, gate off, no entry", _pl(G), None, GATES_PLRM_OFF, "host"),
    ("pod-level pod, gate off, entry", _pl(BE), cs(1), GATES_PLRM_OFF, "container"),
]


@pytest.mark.parametrize(
    ("desc", "pod", "entry", "gates", "expected"), ISOLATION_CASES, ids=[c[0] for c in ISOLATION_CASES]
)
def test_get_resource_isolation_level(
    desc: str, pod: Pod, entry: CPUSet | None, gates: Gates, expected: Isolation
) -> None:
    mgr = _reader(gates, {"pod": {"c1": entry}} if entry is not None else None)
    assert mgr.get_resource_isolation_level(pod, pod.containers[0]) == expected


# TestContainerHasExclusiveCPUs
HAS_EXCLUSIVE_CASES: list[tuple[str, Pod, CPUSet | None, Gates, bool]] = [
    ("classic pod with exclusive CPUs", _classic(G), cs(1), GATES_ON, True),
    ("pod-level pod, container isolation", _pl(G), cs(1), GATES_ON, True),
    ("pod-level pod, no exclusive CPUs", _pl(G), None, GATES_ON, False),
    ("pod-level pod, non-integral container in the pod pool", _pl(NI), cs(1), GATES_ON, False),
    ("pod-level pod, burstable container in the pod pool", _pl(B), cs(1), GATES_ON, False),
    ("pod-level pod, best-effort container in the pod pool", _pl(BE), cs(1), GATES_ON, False),
    ("gates off, guaranteed container", _pl(G), None, GATES_OFF, False),
    ("gates off, best-effort container", _pl(BE), None, GATES_OFF, False),
]


@pytest.mark.parametrize(
    ("desc", "pod", "entry", "gates", "expected"),
    HAS_EXCLUSIVE_CASES,
    ids=[c[0] for c in HAS_EXCLUSIVE_CASES],
)
def test_container_has_exclusive_cpus(
    desc: str, pod: Pod, entry: CPUSet | None, gates: Gates, expected: bool
) -> None:
    mgr = _reader(gates, {"pod": {"c1": entry}} if entry is not None else None)
    assert mgr.container_has_exclusive_cpus(pod, pod.containers[0]) is expected


# TestPodHasExclusiveCPUs (the pod-level rule is inferred: see cpu_manager.py)
POD_HAS_EXCLUSIVE_CASES: list[tuple[str, Pod, dict[str, CPUSet], Gates, bool]] = [
    ("classic pod, one exclusive container", _classic(G, shared("c2")), {"c1": cs(1)}, GATES_ON, True),
    ("classic pod, no exclusive container", _classic(BE), {}, GATES_ON, False),
    ("pod-level pod, container isolation", _pl(G), {"c1": cs(1)}, GATES_ON, True),
    ("pod-level pod, pod isolation", _pl(BE), {"c1": cs(1, 2)}, GATES_ON, False),
    ("pod-level pod, mixed isolation", _pl(G, shared("c2")), {"c1": cs(1), "c2": cs(2, 3)},
     GATES_ON, False),
    ("gates off, no sets", _pl(G), {}, GATES_OFF, False),
]


@pytest.mark.parametrize(
    ("desc", "pod", "entries", "gates", "expected"),
    POD_HAS_EXCLUSIVE_CASES,
    ids=[c[0] for c in POD_HAS_EXCLUSIVE_CASES],
)
def test_pod_has_exclusive_cpus(
    desc: str, pod: Pod, entries: dict[str, CPUSet], gates: Gates, expected: bool
) -> None:
    mgr = _reader(gates, {"pod": entries} if entries else None)
    assert mgr.pod_has_exclusive_cpus(pod) is expected


POD5 = cs(12, 23, 30, 31, 32)


@pytest.mark.parametrize(
    ("desc", "pod", "entries", "pod_entry", "gates", "exp_pod", "exp_container"),
    [
        ("pod-level pod, exclusive container", pod_level_pod("pod", "5", "5", (), (C("c1", "3"),)),
         {"c1": cs(12, 23, 30)}, POD5, GATES_ON, POD5, cs(12, 23, 30)),
        ("pod-level pod, shared container", pod_level_pod("pod", "5", "5", (), (shared("c1"),)),
         {"c1": POD5}, POD5, GATES_ON, POD5, EMPTY),
        ("pod-level pod in container scope", pod_level_pod("pod", "5", "5", (), (C("c1", "3"),)),
         {"c1": cs(12, 23, 30)}, None, GATES_ON, EMPTY, cs(12, 23, 30)),
        ("pod-level pod, shared container in the node pool",
         pod_level_pod("pod", "5", "5", (), (shared("c1"),)), {}, None, GATES_ON, EMPTY, EMPTY),
        ("classic pod", classic_pod("pod", (C("c1", "3"),)), {"c1": cs(12, 23, 30)}, None,
         GATES_ON, EMPTY, cs(12, 23, 30)),
        ("gate off: no pod-level fields", pod_level_pod("pod", "5", "5", (), (C("c1", "3"),)),
         {}, POD5, GATES_PLRM_OFF, EMPTY, EMPTY),
    ],
)
def test_podresources_view(
    desc: str,
    pod: Pod,
    entries: dict[str, CPUSet],
    pod_entry: CPUSet | None,
    gates: Gates,
    exp_pod: CPUSet,
    exp_container: CPUSet,
) -> None:
    mgr = _reader(gates, {"pod": entries} if entries else None,
                  {"pod": pod_entry} if pod_entry is not None else None)
    assert mgr.podresources_pod_cpus(pod) == exp_pod
    assert mgr.podresources_container_cpus(pod, pod.containers[0]) == exp_container


def test_end_to_end_views_after_allocate_pod() -> None:
    """AllocatePod, then the isolation / quota / PodResources readers."""
    pod = pod_level_pod("p", "4", "4", (C("i1", "1"),), (C("c1", "2"), shared("c2")))
    mgr = new_cpu_manager("static", None, single_numa_no_smt(8, numa_nodes=1), None, 1000,
                          FakeAffinity(), GATES_ON)
    mgr.allocate_pod(pod)
    i1, c1, c2 = (*pod.init_containers, *pod.containers)
    assert mgr.get_pod_cpus("p") == cs(1, 2, 3, 4)
    assert [mgr.get_resource_isolation_level(pod, c) for c in (i1, c1, c2)] == [
        "container", "container", "pod"
    ]
    assert [mgr.container_has_exclusive_cpus(pod, c) for c in (i1, c1, c2)] == [True, True, False]
    assert mgr.get_cpu_affinity("p", "c2") == cs(3, 4)
    assert mgr.podresources_container_cpus(pod, c1) == cs(1, 2)
    assert mgr.podresources_container_cpus(pod, c2) == EMPTY
    assert mgr.podresources_pod_cpus(pod) == cs(1, 2, 3, 4)
    assert not mgr.pod_has_exclusive_cpus(pod)
