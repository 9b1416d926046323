"""Upstream's CPU-manager test expectations, through ``podnuma simulate``.

The case data are the ported upstream tables of ``tests/cm/cpumanager``
(imported, not copied). Each case becomes a scenario document -- the
fixture topology as a ``node.cpus`` table, a static-policy kubelet
configuration, the case's state as a ``cpu_manager_state`` checkpoint, the
case's pod as an ``addPod`` step -- which runs through the real command line
(``podnuma simulate -o json``); the case's expectation is checked on the
output document.

How a case is turned into a state the kubelet starts from (placeholder pod,
strict reservation, ...) is in ``tests/e2e/scenario_builder.py``. Cases with
no equivalent scenario are skipped with a one-line reason (see
``EXCLUDED`` and the ``NotExpressible`` reasons).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.cpumanager.policy import SMTAlignmentError
from podnuma.cm.cpumanager.policy_static import new_static_policy
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.new_manager import new_topology_policy
from podnuma.inputs.discover.table import load_table
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUTopology
from tests.cm.cpumanager import test_cpu_manager as cm_tests
from tests.cm.cpumanager import test_policy_static as static_tests
from tests.cm.cpumanager import test_topology_hints as hint_tests
from tests.cm.cpumanager.cpu_policy_helpers import (
    ALPHA,
    DEFAULT_GATES,
    DEFAULTS,
    FakeAffinity,
    Gates,
    hint,
    make_multi_container_pod,
    make_pod,
)
from tests.cm.cpumanager.topologies import TOPO_DUAL_SOCKET_HT, TOPO_SINGLE_SOCKET_HT
from tests.e2e.scenario_builder import (
    NotExpressible,
    SimResult,
    StatePlan,
    check_topology,
    k8s_name,
    plan_state,
    pod_manifest,
    scenario,
    simulate,
)

AddCase = static_tests.AddCase


def _gate_overrides(gates: Gates) -> dict[str, bool]:
    return {k: v for k, v in gates.values.items() if DEFAULT_GATES.get(k) != v}


def _skip(e: NotExpressible) -> None:
    pytest.skip(f"not expressible: {e}")


def _plan(topo: CPUTopology, **kw: Any) -> StatePlan:
    try:
        check_topology(topo)
        return plan_state(topo, **kw)
    except NotExpressible as e:
        _skip(e)
        raise AssertionError("unreachable") from None


def _ok(res: SimResult) -> dict[str, Any]:
    assert res.exit_code == 0, res.stderr
    assert res.output is not None
    return res.output


def _merged_hint(
    topo: CPUTopology,
    plan: StatePlan,
    gates: Gates,
    num_reserved: int,
    reserved: CPUSet,
    tm_policy: str,
    pod: Any,
    pod_scope: bool = False,
) -> TopologyHint:
    """What the topology manager would merge from the CPU manager's hints,
    computed on the unit path (policy object + topology-manager policy)."""
    policy = new_static_policy(
        topo,
        num_reserved if plan.reserved_system_cpus is None else plan.reserved_system_cpus.size(),
        reserved if plan.reserved_system_cpus is None else plan.reserved_system_cpus,
        FakeAffinity(),
        plan.options,
        gates,
        topology_manager_policy=tm_policy,
    )
    st = CPUManagerState(plan.default, {u: dict(c) for u, c in plan.assignments.items()})
    if pod_scope:
        hints = policy.get_pod_topology_hints(st, pod)
    else:
        hints = policy.get_topology_hints(st, pod, pod.containers[0])
    tm, _, _ = new_topology_policy(tm_policy, load_table(_node(topo)), None, gates)
    merged, _ = tm.merge([hints])
    return merged


def _node(topo: CPUTopology) -> dict[str, Any]:
    from tests.e2e.scenario_builder import node_table

    return node_table(topo)


# -- TestStaticPolicyAdd / TestStaticPolicyAddWithResvList -------------------------------------


def run_add_case(case: AddCase, tmp_path: Path) -> None:
    plan = _plan(
        case.topo,
        default=case.default,
        assignments=case.assignments,
        num_reserved=case.num_reserved,
        reserved=case.reserved,
        options=case.options,
        gates=case.gates,
        pod=case.pod,
    )
    tm_policy = "none"
    if case.hint is not None:
        # the case gives the hint; the topology manager must merge exactly it
        tm_policy = "restricted"
        merged = _merged_hint(
            case.topo, plan, case.gates, case.num_reserved, case.reserved, tm_policy, case.pod
        )
        if merged != case.hint:
            pytest.skip(
                f"not expressible: the topology manager merges {merged} from the CPU manager's "
                f"hints, not the case's hint {case.hint}"
            )
    doc = scenario(
        case.topo,
        plan,
        [{"addPod": pod_manifest(case.pod)}],
        gates=_gate_overrides(case.gates),
        topology_manager_policy=tm_policy,
    )
    out = _ok(simulate(doc, tmp_path))
    assert out["node"]["reservedCpus"] == str(plan.reserved)
    step = out["steps"][0]
    ctr = case.pod.containers[0]
    entries = out["checkpoints"]["cpuManager"].get("entries") or {}
    if case.exp_err is not None:
        assert step["admitted"] is False
        if isinstance(case.exp_err, SMTAlignmentError):
            assert step["reason"] == "SMTAlignmentError"
            assert step["message"] == f"Pod was rejected: {case.exp_err}"
        else:
            assert step["reason"] == "UnexpectedAdmissionError"
            assert step["message"] == (
                f"Pod was rejected: Allocate failed due to {case.exp_err}, which is unexpected"
            )
        # a failed allocation leaves the shared pool alone
        assert step["defaultCpuSet"] == str(case.default)
        assert step["containers"] == []
        assert k8s_name(ctr.name) not in entries.get(case.pod.uid, {})
        return
    assert step["admitted"] is True, step["message"]
    assert step["reason"] is None
    (got,) = [c for c in step["containers"] if c["name"] == k8s_name(ctr.name)]
    if case.exp_alloc:
        assert got["cpus"] == str(case.exp_cset)
        assert got["isolation"] == "container"
        assert entries[case.pod.uid][k8s_name(ctr.name)] == str(case.exp_cset)
        assert (CPUSet.parse(step["defaultCpuSet"]) & case.exp_cset).is_empty()
        if case.hint is not None:
            assert got["topologyHint"] == case.hint.to_json()
    else:
        assert got["isolation"] == "host"
        assert got["cpus"] == step["defaultCpuSet"] == str(case.default)
        assert k8s_name(ctr.name) not in entries.get(case.pod.uid, {})


@pytest.mark.parametrize("case", static_tests.ADD_CASES, ids=lambda c: c.description)
def test_static_policy_add(case: AddCase, tmp_path: Path) -> None:
    run_add_case(case, tmp_path)


@pytest.mark.parametrize("case", static_tests.ADD_WITH_RESV_LIST, ids=lambda c: c.description)
def test_static_policy_add_with_resv_list(case: AddCase, tmp_path: Path) -> None:
    run_add_case(case, tmp_path)


# -- TestStaticPolicyStart / TestStaticPolicyStartWithResvList ------------------------------------
# Start-up validation itself is under test: the state is used as given (no
# placeholder, no added option); errors are the CLI's "kubelet would not start".


def _run_start(
    tmp_path: Path,
    topo: CPUTopology,
    default: CPUSet,
    assignments: Mapping[str, Mapping[str, CPUSet]],
    num_reserved: int,
    reserved: CPUSet,
    options: Mapping[str, str] | None,
    gates: Gates,
    exp_cset: CPUSet | None,
    exp_err: str | None,
) -> None:
    plan = _plan(
        topo,
        default=default,
        assignments=assignments,
        num_reserved=num_reserved,
        reserved=reserved,
        options=options,
        gates=gates,
        allow_emulation=False,
    )
    doc = scenario(topo, plan, [], gates=_gate_overrides(gates))
    res = simulate(doc, tmp_path)
    if exp_err is not None:
        assert res.exit_code == 2, res.output
        # ContainerManager.Start wraps the policy's validateState error
        assert f"kubelet would not start: start cpu manager error: {exp_err}" in res.stderr
        return
    out = _ok(res)
    assert out["node"]["reservedCpus"] == str(plan.reserved)
    assert out["checkpoints"]["cpuManager"]["defaultCpuSet"] == str(exp_cset)


@pytest.mark.parametrize("case", static_tests.START_CASES, ids=lambda c: c.description)
def test_static_policy_start(case: static_tests.StartCase, tmp_path: Path) -> None:
    _run_start(
        tmp_path, case.topo, case.default, case.assignments, case.num_reserved, CPUSet(),
        case.options, ALPHA, None if case.exp_err else case.exp_cset, case.exp_err,
    )


@pytest.mark.parametrize(
    ("description", "num_reserved", "reserved", "options", "default", "exp_cset", "exp_err", "exp_new_err"),
    static_tests.START_WITH_RESV_LIST_CASES,
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
    tmp_path: Path,
) -> None:
    _run_start(
        tmp_path, TOPO_DUAL_SOCKET_HT, default, {}, num_reserved, reserved, options, ALPHA,
        exp_cset, exp_err or exp_new_err,
    )


# -- TestStaticPolicyRemove ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "container_name", "assignments", "default", "exp_cset"),
    static_tests.REMOVE_CASES,
)
def test_static_policy_remove(
    description: str,
    container_name: str,
    assignments: Mapping[str, Mapping[str, CPUSet]],
    default: CPUSet,
    exp_cset: CPUSet,
    tmp_path: Path,
) -> None:
    if container_name not in assignments.get("fakePod", {}):
        pytest.skip(
            "not expressible: removes a container the state does not hold; a scenario can only "
            "remove running containers"
        )
    if set(assignments["fakePod"]) != {container_name}:
        pytest.skip(
            "not expressible: the policy releases one container of a pod whose other containers "
            "keep theirs; in the kubelet a stopped container keeps its CPUs until the pod leaves "
            "the active set (PostStopContainer tells only the topology manager)"
        )
    plan = _plan(
        TOPO_SINGLE_SOCKET_HT, default=default, assignments=assignments, num_reserved=0,
        gates=DEFAULTS,
    )
    # the pod's only container: the pod leaving releases it (removeStaleState)
    stop = {"removeContainer": {"pod": "fakePod", "container": k8s_name(container_name)}}
    out = _ok(simulate(scenario(TOPO_SINGLE_SOCKET_HT, plan, [stop, {"removePod": "fakePod"}]), tmp_path))
    assert out["steps"][0]["defaultCpuSet"] == str(default)  # a stopped container keeps its CPUs
    assert out["steps"][1]["defaultCpuSet"] == str(exp_cset)
    entries = out["checkpoints"]["cpuManager"].get("entries") or {}
    assert k8s_name(container_name) not in entries.get("fakePod", {})


# -- TestStaticPolicyReuseCPUs / TestStaticPolicyDoNotReuseCPUs -------------------------------


@pytest.mark.parametrize("sidecar", [False, True], ids=["ReuseCPUs", "DoNotReuseCPUs"])
def test_static_policy_reuse_cpus(sidecar: bool, tmp_path: Path) -> None:
    pod = make_multi_container_pod([("4000m", "4000m", sidecar)], [("2000m", "2000m")])
    plan = _plan(
        TOPO_SINGLE_SOCKET_HT, default=CPUSet(range(8)), assignments={}, num_reserved=0,
        gates=DEFAULTS, pod=pod,
    )
    steps: list[dict[str, Any]] = [{"addPod": pod_manifest(pod)}]
    if not sidecar:
        steps.append({"removeContainer": {"pod": pod.uid, "container": "initcontainer-0"}})
    out = _ok(simulate(scenario(TOPO_SINGLE_SOCKET_HT, plan, steps), tmp_path))
    if sidecar:
        assert out["steps"][0]["defaultCpuSet"] == "3,7"
    else:
        assert out["steps"][0]["defaultCpuSet"] == "2-3,6-7"
        # the init container stopped: its CPUs stay assigned while the pod
        # is active (the app container reused them at admission)
        assert out["steps"][1]["defaultCpuSet"] == "2-3,6-7"


# -- TestTopologyAwareAllocateCPUs ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "num", "mask", "exp"), static_tests.TOPOLOGY_AWARE_CASES
)
def test_topology_aware_allocate_cpus(
    description: str, num: int, mask: Any, exp: CPUSet, tmp_path: Path
) -> None:
    pod = make_pod("fakePod", "fakeContainer", str(num), str(num))
    plan = _plan(
        TOPO_DUAL_SOCKET_HT, default=CPUSet(range(12)), assignments={}, num_reserved=0,
        gates=DEFAULTS, pod=pod,
    )
    want = None if mask is None else TopologyHint(mask, True)
    merged = _merged_hint(TOPO_DUAL_SOCKET_HT, plan, DEFAULTS, 0, CPUSet(), "restricted", pod)
    if want is not None and merged != want:
        pytest.skip(f"not expressible: the topology manager merges {merged}, not {want}")
    tm = "none" if want is None else "restricted"
    out = _ok(simulate(scenario(TOPO_DUAL_SOCKET_HT, plan, [{"addPod": pod_manifest(pod)}],
                                topology_manager_policy=tm), tmp_path))
    assert out["steps"][0]["containers"][0]["cpus"] == str(exp)


# -- TestStaticPolicyAddWithUncoreAlignment ----------------------------------------------------


@pytest.mark.parametrize("case", static_tests.UNCORE_CASES, ids=lambda c: c.description)
def test_static_policy_add_with_uncore_alignment(case: Any, tmp_path: Path) -> None:
    topo = static_tests._topo_named(case.topo)
    default = None if topo is None else static_tests._uncore_default(case, topo)
    if topo is None or default is None:
        pytest.skip(f"not expressible: fixture {case.topo} not in tests/cm/cpumanager/topologies.py")
    pod = make_multi_container_pod([], [(f"{n}000m", f"{n}000m") for n in case.apps], uid=case.uid)
    plan = _plan(
        topo, default=default - case.reserved, assignments={},
        num_reserved=case.reserved.size(), reserved=case.reserved, options=case.options,
        gates=ALPHA, pod=pod,
    )
    out = _ok(simulate(scenario(topo, plan, [{"addPod": pod_manifest(pod)}],
                                gates=_gate_overrides(ALPHA)), tmp_path))
    step = out["steps"][0]
    assert step["admitted"] is True, step["message"]
    cpus = {c["name"]: CPUSet.parse(c["cpus"]) for c in step["containers"]}
    for c in step["containers"]:
        assert c["isolation"] == "container"
    if case.exp_cset is not None:
        assert cpus[k8s_name(pod.containers[0].name)] == case.exp_cset
        return
    uncore = 0
    for cset in cpus.values():
        for cpu in cset:
            uncore |= 1 << topo.cpu_info[cpu].uncore_cache
    assert CPUSet.from_mask(uncore) == case.exp_uncore


# -- TestGetTopologyHints / TestGetPodTopologyHints ------------------------------------------------
# The output shows the merged hint: with policy restricted, the narrowest
# preferred hint of the list (pod admitted, its topologyHint), or, when the
# list has no preferred hint, a TopologyAffinityError rejection.


def _run_hints(
    tmp_path: Path,
    topo: CPUTopology,
    pod: Any,
    default: CPUSet,
    assignments: Mapping[str, Mapping[str, CPUSet]],
    expected: list[tuple[tuple[int, ...], bool]],
    scope: str,
    options: Mapping[str, str] | None = None,
    gates: Gates = DEFAULTS,
) -> None:
    plan = _plan(
        topo, default=default, assignments=assignments, num_reserved=0, options=options,
        gates=gates, pod=pod,
    )
    tm, _, _ = new_topology_policy("restricted", load_table(_node(topo)), None, gates)
    want, admit = tm.merge([{"cpu": [hint(bits, pref) for bits, pref in expected]}])
    doc = scenario(topo, plan, [{"addPod": pod_manifest(pod)}], gates=_gate_overrides(gates),
                   topology_manager_policy="restricted", topology_manager_scope=scope)
    step = _ok(simulate(doc, tmp_path))["steps"][0]
    if admit:
        assert step["admitted"] is True, step["message"]
        assert step["containers"][0]["topologyHint"] == want.to_json()
    else:
        assert step["admitted"] is False
        assert step["reason"] == "TopologyAffinityError"


@pytest.mark.parametrize("case", hint_tests.HINT_CASES, ids=lambda c: c.name)
def test_get_topology_hints(case: Any, tmp_path: Path) -> None:
    _run_hints(tmp_path, hint_tests.MACHINE, case.pod, case.default, case.assignments,
               case.expected, "container")


@pytest.mark.parametrize("case", hint_tests.HINT_CASES, ids=lambda c: c.name)
def test_get_pod_topology_hints(case: Any, tmp_path: Path) -> None:
    _run_hints(tmp_path, hint_tests.MACHINE, case.pod, case.default, case.assignments,
               case.expected, "pod")


@pytest.mark.parametrize(
    ("description", "cpus", "default", "align", "expected"), hint_tests.POLICY_OPTION_HINT_CASES
)
def test_get_pod_topology_hints_with_policy_options(
    description: str,
    cpus: str,
    default: CPUSet,
    align: str,
    expected: list[tuple[tuple[int, ...], bool]],
    tmp_path: Path,
) -> None:
    from podnuma.cm.cpumanager.policy_options import ALIGN_BY_SOCKET_OPTION
    from tests.cm.cpumanager.topologies import TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT

    pod = make_pod("fakePod", "fakeContainer", cpus, cpus)
    _run_hints(tmp_path, TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT, pod, default, {}, expected,
               "pod", {ALIGN_BY_SOCKET_OPTION: align}, ALPHA)


# -- cpu_manager_test.go ---------------------------------------------------------------------------


def test_cpu_manager_add_with_resv_list(tmp_path: Path) -> None:
    pod = make_pod("fakePod", "fakeContainer", "2", "2")
    plan = _plan(cm_tests.FOUR_CPUS, default=CPUSet(range(4)), assignments={}, num_reserved=1,
                 reserved=CPUSet([0]), gates=DEFAULTS, pod=pod)
    out = _ok(simulate(scenario(cm_tests.FOUR_CPUS, plan, [{"addPod": pod_manifest(pod)}]),
                       tmp_path))
    assert out["steps"][0]["defaultCpuSet"] == "0,3"


def test_cpu_manager_add_no_error(tmp_path: Path) -> None:
    pod = make_pod("fakePod", "fakeContainer", "2", "2")
    plan = _plan(cm_tests.FOUR_CPUS, default=CPUSet([1, 2, 3, 4]), assignments={}, num_reserved=0,
                 gates=DEFAULTS, pod=pod)
    out = _ok(simulate(scenario(cm_tests.FOUR_CPUS, plan, [{"addPod": pod_manifest(pod)}]),
                       tmp_path))
    assert out["steps"][0]["defaultCpuSet"] == "3-4"


def test_cpu_manager_get_allocatable_cpus_static(tmp_path: Path) -> None:
    # allocatable = every CPU minus the reserved ones, from the output's node
    pod = make_pod("fakePod", "fakeContainer", "2", "2")
    plan = _plan(cm_tests.FOUR_CPUS, default=CPUSet(range(4)), assignments={}, num_reserved=1,
                 reserved=CPUSet([0]), gates=DEFAULTS, pod=pod)
    out = _ok(simulate(scenario(cm_tests.FOUR_CPUS, plan, [{"addPod": pod_manifest(pod)}]),
                       tmp_path))
    node = out["node"]
    assert CPUSet.parse(node["cpus"]) - CPUSet.parse(node["reservedCpus"]) == CPUSet([1, 2, 3])


@pytest.mark.parametrize(
    ("description", "init", "app", "exp_init", "exp_app"), cm_tests.INIT_CONTAINER_CASES
)
def test_cpu_manager_add_with_init_containers(
    description: str, init: Any, app: Any, exp_init: list[CPUSet], exp_app: list[CPUSet],
    tmp_path: Path,
) -> None:
    pod = make_multi_container_pod(init, app)
    plan = _plan(TOPO_SINGLE_SOCKET_HT, default=CPUSet(range(8)), assignments={}, num_reserved=0,
                 gates=DEFAULTS, pod=pod)
    out = _ok(simulate(scenario(TOPO_SINGLE_SOCKET_HT, plan, [{"addPod": pod_manifest(pod)}]),
                       tmp_path))
    got = {c["name"]: c for c in out["steps"][0]["containers"]}
    for ctr, exp in zip(pod.all_containers(), exp_init + exp_app, strict=True):
        if not exp.is_empty():
            assert got[k8s_name(ctr.name)]["cpus"] == str(exp)


# -- Upstream tests with no scenario equivalent (counted in the report) --------------------------

EXCLUDED = {
    "TestPodGuaranteedCPUs": "calls the internal podGuaranteedCPUs; the output shows no per-pod CPU count",
    "TestCPUManagerAdd (policy error)": "injects a mock policy error",
    "TestCPUManagerGenerate / HandlePolicyOptions": "constructor-level checks (none policy, invalid name)",
    "TestCPUManagerRemove": "mock policy",
    "TestCPUManagerGetAllocatableCPUs (None Policy)": "the none policy's allocatable set is not in the output",
    "TestSMTAlignmentErrorText": "error-text formatting only (checked through the Add cases' messages)",
}
