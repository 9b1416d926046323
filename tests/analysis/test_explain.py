"""``podnuma explain``: the decision trail and the nearest admissible
configuration, on the demo, the examples and small pod-level scenarios."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.analysis.explain import explain_run, explain_step, select_steps
from podnuma.analysis.nearest import (
    Variation,
    apply_variation,
    nearest_admissible,
    run_variation,
)
from podnuma.cli.explain import explain_command
from podnuma.inputs.scenario import Scenario, load_scenario, load_scenario_text
from podnuma.scenario.run import RunResult, run_scenario

from ..records import replace

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "podnuma" / "scenario" / "demo" / "demo.yaml"
EXAMPLES = ROOT / "examples"


def _run(path: Path) -> tuple[Scenario, RunResult]:
    scenario = load_scenario(path)
    return scenario, run_scenario(scenario)


def _explain(path: Path, **kw: Any) -> dict[str, Any]:
    scenario, result = _run(path)
    return explain_run(scenario, result, **kw)


def _adm(doc: dict[str, Any], step: int) -> dict[str, Any]:
    (adm,) = [a for a in doc["admissions"] if a["step"] == step]
    out: dict[str, Any] = adm
    return out


def _alt(adm: dict[str, Any], kind: str, **match: Any) -> dict[str, Any]:
    found = [
        a for a in adm["alternatives"]
        if a["kind"] == kind and all(a.get(k) == v for k, v in match.items())
    ]
    assert found, f"no {kind} {match} in {[a['summary'] for a in adm['alternatives']]}"
    out: dict[str, Any] = found[0]
    return out


def _variation(alt: dict[str, Any]) -> Variation:
    return Variation(
        alt["kind"], alt["change"], value=alt["value"], container=alt["container"],
        amount=alt["amount"] or 0, pod=alt["pod"], base=alt["originalCpus"],
        memory=alt["memory"] or 0,
    )


def _rerun_last(scenario: Scenario, step: int, alt: dict[str, Any]) -> Any:
    """Independently re-run the scenario with the suggested change."""
    changed = apply_variation(scenario, step, _variation(alt))
    return run_scenario(changed).steps[-1]


# --------------------------------------------------------------------------
# The demo
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> tuple[Scenario, RunResult, dict[str, Any]]:
    scenario, result = _run(DEMO)
    return scenario, result, explain_run(scenario, result)


def test_demo_admissions_are_the_add_pod_steps(demo: Any) -> None:
    _, _, doc = demo
    assert [a["step"] for a in doc["admissions"]] == [0, 1, 2, 3, 4, 6]
    assert doc["config"]["topologyManagerPolicy"] == "single-numa-node"
    assert doc["node"] == {"name": "demo-node", "cpus": "0-31", "numaNodes": [0, 1], "reservedCpus": "0,16"}


def test_demo_qos_reasons(demo: Any) -> None:
    _, _, doc = demo
    web = _adm(doc, 0)["qos"]
    assert web == {
        "class": "Guaranteed",
        "source": "containers",
        "why": "every container sets cpu and memory limits equal to its requests",
    }
    batch = _adm(doc, 1)["qos"]
    assert batch["class"] == "Burstable"
    assert batch["why"] == "container worker: cpu request 500m != limit 2"


def test_demo_hints_and_merge(demo: Any) -> None:
    _, _, doc = demo
    (merge,) = _adm(doc, 0)["topology"]["merges"]
    assert merge["container"] == "nginx"
    rows = {r["provider"]: r for r in merge["providers"]}
    assert rows["device"]["kind"] == "none"
    assert rows["cpu"]["hints"] == [
        {"numaNodes": [0], "preferred": True},
        {"numaNodes": [1], "preferred": True},
        {"numaNodes": [0, 1], "preferred": False},
    ]
    assert merge["merged"] == {"numaNodes": [0], "preferred": True}
    assert merge["admit"] is True
    assert "preferred masks every provider agrees on: {0}, {1}" in merge["why"]
    assert any("lower-numbered" in w for w in merge["why"])
    # Burstable: nil hints from cpu and memory, explained as no preference.
    (bmerge,) = _adm(doc, 1)["topology"]["merges"]
    kinds = {r["provider"]: r["kind"] for r in bmerge["providers"]}
    assert kinds == {"device": "none", "cpu": "nil", "memory": "nil"}
    assert bmerge["merged"] == {"numaNodes": None, "preferred": True}


def test_demo_container_pools(demo: Any) -> None:
    _, _, doc = demo
    (nginx,) = _adm(doc, 0)["containers"]
    assert (nginx["pool"], nginx["cpus"], nginx["cpuNumaNodes"]) == ("exclusive slice", "1-2,17-18", [0])
    assert nginx["cfsQuota"] == "disabled"
    assert nginx["memory"] == [{"type": "memory", "numaNodes": [0], "size": 4 << 30}]
    assert _adm(doc, 0)["cpuPolicyRule"].startswith("static policy, packed")
    assert _adm(doc, 1)["cpuPolicyRule"] is None
    assert "aligned with the merged hint (NUMA 0)" in nginx["why"]
    (exporter,) = _adm(doc, 2)["containers"]
    assert exporter["pool"] == "node shared pool" and exporter["cfsQuota"] == "enabled"
    assert "cpu request 1500m is not a whole number of CPUs" in exporter["why"]
    db = {c["name"]: c for c in _adm(doc, 3)["containers"]}
    assert db["postgres"]["cpus"] == "4-5,20-21"
    assert any("reuses CPUs 4-5,20-21 of init container migrate" in w for w in db["postgres"]["why"])


def test_demo_rejection_and_nearest(demo: Any) -> None:
    scenario, _, doc = demo
    render = _adm(doc, 4)
    assert render["admitted"] is False
    assert render["rejection"]["stage"] == "topology"
    assert render["rejection"]["container"] == "blender"
    assert render["rejection"]["reason"] == "TopologyAffinityError"
    assert render["rejection"]["message"] == (
        "Pod was rejected: Resources cannot be allocated with Topology locality"
    )
    # best-effort passes the topology manager but 20 CPUs do not fit allocatable.
    be = _alt(render, "topologyPolicy", value="best-effort")
    assert be["admitted"] is False and be["reason"] == "OutOfcpu" and be["stage"] == "nodeAllocatable"
    # The nearest fit: 4 fewer CPUs (16 fit on NUMA node 1, whose 16 CPUs are free).
    fewer = _alt(render, "fewerCPUs")
    assert fewer["admitted"] is True
    assert (fewer["container"], fewer["amount"], fewer["numaNodes"]) == ("blender", 4, [1])
    assert "fits with 4 fewer CPU(s) for container blender (16 instead of 20) on NUMA node(s) 1" in (
        render["suggestions"]
    )
    last = _rerun_last(scenario, 4, fewer)
    assert last.admitted and last.containers[0].cpus.size() == 16
    # 3 fewer does not fit: the reported reduction is the smallest admissible one.
    three = run_variation(scenario, 4, Variation("fewerCPUs", "", container="blender", amount=3))
    assert three.admitted is False


# --------------------------------------------------------------------------
# The examples
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def restricted() -> tuple[Scenario, dict[str, Any]]:
    scenario, result = _run(EXAMPLES / "topology" / "restricted.yaml")
    return scenario, explain_run(scenario, result)


def test_restricted_nic_fits_with_best_effort(restricted: Any) -> None:
    scenario, doc = restricted
    nic = _adm(doc, 6)
    assert nic["pod"] == "demo/nic"
    assert (nic["rejection"]["stage"], nic["rejection"]["container"]) == ("topology", "router")
    (merge,) = nic["topology"]["merges"]
    assert merge["merged"] == {"numaNodes": [1], "preferred": False} and merge["admit"] is False
    assert any(w.startswith("no NUMA mask is preferred by every provider") for w in merge["why"])
    assert merge["why"][-1] == "not preferred: restricted admits only a preferred hint -> container router rejected"
    be = _alt(nic, "topologyPolicy", value="best-effort")
    assert be["admitted"] is True and be["numaNodes"] == [0, 1]
    assert any(
        s.startswith("fits with topologyManagerPolicy best-effort on NUMA node(s) 0,1")
        for s in nic["suggestions"]
    )
    assert _rerun_last(scenario, 6, be).admitted is True
    # under best-effort demo/wide-memory (step 11) no longer fits: said so
    assert {"step": 11, "pod": "demo/wide-memory", "was": "admitted",
            "now": "rejected (UnexpectedAdmissionError)"} in be["sideEffects"]
    assert "; but then demo/wide-memory (step 11) rejected" in be["summary"]


def test_restricted_nic_fits_if_a_pod_is_removed(restricted: Any) -> None:
    scenario, doc = restricted
    nic = _adm(doc, 6)
    removal = _alt(nic, "removePod", pod="demo/filler-1")
    assert removal["admitted"] is True and removal["numaNodes"] == [1]
    assert any(
        s.startswith("fits on NUMA node(s) 1 if pod demo/filler-1 is removed") for s in nic["suggestions"]
    )
    last = _rerun_last(scenario, 6, removal)
    assert last.admitted and last.pod == "demo/nic"
    assert _alt(nic, "removePod", pod="demo/filler-2")["admitted"] is False


def test_restricted_wide_and_memory_hog(restricted: Any) -> None:
    scenario, doc = restricted
    wide = _adm(doc, 10)
    assert _alt(wide, "topologyPolicy", value="best-effort")["numaNodes"] == [0, 1, 2]
    fewer = _alt(wide, "fewerCPUs")
    assert (fewer["admitted"], fewer["amount"], fewer["numaNodes"]) == (True, 4, [1])
    assert _rerun_last(scenario, 10, fewer).admitted is True
    hog = _adm(doc, 7)
    assert hog["rejection"]["stage"] == "allocate:memory"
    assert hog["rejection"]["reason"] == "UnexpectedAdmissionError"
    # only less memory for the container the memory manager refused helps
    less = _alt(hog, "fewerMemory")
    assert (less["admitted"], less["container"], less["value"]) == (True, "cache", "10Gi")
    assert _rerun_last(scenario, 7, less).admitted is True
    assert [c["admitted"] for c in hog["search"]["candidates"] if c["kind"] == "fewerMemory"] == [
        False, False, True
    ]


def test_single_numa_node_tries_restricted_then_best_effort() -> None:
    doc = _explain(EXAMPLES / "topology" / "single-numa-node.yaml", step=2)
    (pair,) = doc["admissions"]
    assert pair["pod"] == "demo/gpu-pair" and pair["qos"]["class"] == "Burstable"
    assert any("single-numa-node: only preferred hints" in w for w in pair["topology"]["merges"][0]["why"])
    assert _alt(pair, "topologyPolicy", value="restricted")["admitted"] is True
    assert _alt(pair, "topologyPolicy", value="best-effort")["numaNodes"] == [1, 2]


def test_pod_scope_rejection_is_for_the_pod() -> None:
    scenario, result = _run(EXAMPLES / "topology" / "pod-scope.yaml")
    (pair,) = select_steps(result, pod="demo/pair")
    adm = explain_step(scenario, result, pair)
    assert adm["rejection"]["stage"] == "topology" and adm["rejection"]["container"] is None
    assert adm["rejection"]["who"] == "the pod"
    assert [m["container"] for m in adm["topology"]["merges"]] == [None]
    scope = _alt(adm, "topologyScope", value="container")
    assert scope["admitted"] is True
    assert _rerun_last(scenario, pair.index, scope).admitted is True


def test_smt_alignment_error_fits_with_one_fewer_cpu() -> None:
    scenario, result = _run(EXAMPLES / "static-dual-socket.yaml")
    doc = explain_run(scenario, result, step=1)
    (odd,) = doc["admissions"]
    rej = odd["rejection"]
    assert (rej["stage"], rej["container"], rej["reason"]) == ("allocate:cpu", "app", "SMTAlignmentError")
    assert rej["message"] == "Pod was rejected: SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2"
    assert odd["topology"]["note"].startswith("topology policy none")
    fewer = _alt(odd, "fewerCPUs")
    assert (fewer["admitted"], fewer["amount"], fewer["originalCpus"]) == (True, 1, 3)
    assert not any(a["kind"] == "topologyPolicy" for a in odd["alternatives"])
    last = _rerun_last(scenario, 1, fewer)
    assert last.admitted and last.containers[0].cpus.size() == 2


def test_prefer_closest_reports_average_distances() -> None:
    doc = _explain(EXAMPLES / "topology" / "prefer-closest-numa-nodes.yaml", step=1)
    (merge,) = doc["admissions"][0]["topology"]["merges"]
    assert merge["merged"] == {"numaNodes": [2, 3], "preferred": True}
    dist = {tuple(d["numaNodes"]): d["averageDistance"] for d in merge["distances"]}
    assert dist[(2, 3)] == min(dist.values())
    assert len(dist) >= 2
    assert any("prefer-closest-numa-nodes" in w for w in merge["why"])


# --------------------------------------------------------------------------
# Small scenarios: OutOfcpu, EmptyPodSharedPool
# --------------------------------------------------------------------------


def _pod(name: str, cpu: str, mem: str = "1Gi") -> str:
    return f"""
  - addPod:
      apiVersion: v1
      kind: Pod
      metadata: {{name: {name}, namespace: t}}
      spec:
        containers:
          - name: app
            image: x
            resources:
              requests: {{cpu: "{cpu}", memory: {mem}}}
              limits: {{cpu: "{cpu}", memory: {mem}}}
"""


HEADER = """
apiVersion: podnuma.io/v1
kind: Scenario
node:
  synthetic: {sockets: 1, numaNodesPerSocket: 2, coresPerNumaNode: 4, threadsPerCore: 2, memoryPerNumaNode: 16Gi}
kubeletConfig:
  apiVersion: kubelet.config.k8s.io/v1beta1
  kind: KubeletConfiguration
"""


def test_out_of_cpu() -> None:
    # CPU manager none: nothing is pinned, so only the predicate fit can refuse.
    text = HEADER + """  cpuManagerPolicy: none
steps:
""" + _pod("big", "10") + _pod("late", "7")
    scenario = load_scenario_text(text, name="ooc.yaml", base_dir=Path("."))
    result = run_scenario(scenario)
    doc = explain_run(scenario, result, step=1)
    (late,) = doc["admissions"]
    rej = late["rejection"]
    assert (rej["stage"], rej["reason"]) == ("nodeAllocatable", "OutOfcpu")
    assert rej["message"].startswith("Pod was rejected: Node didn't have enough resource: cpu")
    # Policy and scope cannot change a node-allocatable fit: not tried.
    assert {a["kind"] for a in late["alternatives"]} == {"fewerCPUs", "removePod"}
    fewer = _alt(late, "fewerCPUs")
    assert (fewer["admitted"], fewer["amount"]) == (True, 1)  # 16 allocatable - 10 = 6
    removal = _alt(late, "removePod", pod="t/big")
    assert removal["admitted"] is True
    assert _rerun_last(scenario, 1, removal).admitted is True


PLRM = HEADER + """  featureGates: {PodLevelResourceManagers: true, PodLevelResources: true}
  cpuManagerPolicy: static
  reservedSystemCPUs: "0"
  topologyManagerPolicy: best-effort
  topologyManagerScope: pod
steps:
  - addPod:
      apiVersion: v1
      kind: Pod
      metadata: {name: full, namespace: demo}
      spec:
        resources:
          requests: {cpu: "4", memory: 4Gi}
          limits: {cpu: "4", memory: 4Gi}
        containers:
          - name: worker
            image: x
            resources:
              requests: {cpu: "4", memory: 2Gi}
              limits: {cpu: "4", memory: 2Gi}
          - name: helper
            image: x
"""


def test_empty_pod_shared_pool() -> None:
    scenario = load_scenario_text(PLRM, name="plrm.yaml", base_dir=Path("."))
    result = run_scenario(scenario)
    doc = explain_run(scenario, result)
    (full,) = doc["admissions"]
    assert full["qos"] == {
        "class": "Guaranteed",
        "source": "pod-level",
        "why": "spec.resources sets cpu and memory limits equal to the requests",
    }
    rej = full["rejection"]
    assert (rej["stage"], rej["container"], rej["reason"]) == (
        "allocate:cpu", None, "EmptyPodSharedPoolError",
    )
    assert "leaving no cpus for shared containers" in rej["message"]
    (merge,) = full["topology"]["merges"]
    cpu = next(r for r in merge["providers"] if r["provider"] == "cpu")
    assert cpu["kind"] == "empty" and cpu["hints"] == []
    assert merge["admit"] is True  # best-effort lets it through to AllocatePod
    budget = _alt(full, "podBudget")
    assert (budget["admitted"], budget["amount"], budget["originalCpus"]) == (True, 1, 4)
    assert "fits with a pod CPU budget 1 CPU(s) larger (5 instead of 4) on NUMA node(s) 0" in full["suggestions"]
    last = _rerun_last(scenario, 0, budget)
    assert last.admitted and last.pod_allocation is not None and last.pod_allocation.cpus.size() == 5
    pools = {c.name: c.isolation for c in last.containers}
    assert pools == {"worker": "container", "helper": "pod"}
    fewer = _alt(full, "fewerCPUs")
    assert (fewer["admitted"], fewer["amount"]) == (True, 1)


def test_pod_shared_pool_equation() -> None:
    text = PLRM.replace('requests: {cpu: "4", memory: 2Gi}', 'requests: {cpu: "2", memory: 2Gi}').replace(
        'limits: {cpu: "4", memory: 2Gi}', 'limits: {cpu: "2", memory: 2Gi}'
    )
    scenario = load_scenario_text(text, name="plrm.yaml", base_dir=Path("."))
    result = run_scenario(scenario)
    (adm,) = explain_run(scenario, result)["admissions"]
    assert adm["admitted"] is True and adm["alternatives"] == []
    pods = {c["name"]: c for c in adm["containers"]}
    assert pods["helper"]["pool"] == "pod shared pool"
    pod_cpus = adm["podAllocation"]["cpus"]
    assert (
        f"pod shared pool = pod CPUs {pod_cpus} - exclusive slices {pods['worker']['cpus']} = "
        f"{pods['helper']['cpus']}"
    ) in pods["helper"]["why"]
    assert pods["worker"]["why"][0].startswith(f"an exclusive slice of the pod's CPUs {pod_cpus}")


def test_search_is_capped() -> None:
    scenario, result = _run(EXAMPLES / "topology" / "restricted.yaml")
    nic = next(s for s in result.steps if s.pod == "demo/nic")
    assert len(nearest_admissible(scenario, result, nic, max_runs=2)) <= 2
    assert nearest_admissible(scenario, result, nic, max_runs=0) == []


# --------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------


def test_command_json_is_the_document() -> None:
    r = CliRunner().invoke(explain_command, [str(DEMO), "--step", "4", "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    (adm,) = doc["admissions"]
    assert list(adm) == [
        "step", "pod", "podUID", "admitted", "reason", "message", "qos", "topology",
        "podAllocation", "containers", "cpuPolicyRule", "defaultCpuSet", "rejection", "alternatives",
        "suggestions", "search",
    ]
    assert adm["search"]["tried"] >= len(adm["alternatives"]) >= 1
    assert adm["search"]["complete"] is True and adm["search"]["notTried"] == []
    assert adm["rejection"]["reason"] == "TopologyAffinityError"
    assert any(a["admitted"] for a in adm["alternatives"])


def test_command_text() -> None:
    r = CliRunner().invoke(explain_command, [str(EXAMPLES / "topology" / "restricted.yaml"), "--pod", "demo/nic"])
    assert r.exit_code == 0, r.output
    out = r.output
    assert "step 6  demo/nic  ✗ rejected: TopologyAffinityError" in out
    assert "hints for container router" in out
    assert "stage: topology manager merge: the restricted policy refused the merged hint (container router)" in out
    assert "✓ fits with topologyManagerPolicy best-effort on NUMA node(s) 0,1" in out
    assert "✓ fits on NUMA node(s) 1 if pod demo/filler-1 is removed" in out
    assert "\x1b[" not in out  # plain when not a terminal


def test_command_no_search_and_filters() -> None:
    r = CliRunner().invoke(explain_command, [str(DEMO), "--no-search", "-o", "json"])
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert all(a["alternatives"] == [] for a in doc["admissions"])
    r = CliRunner().invoke(explain_command, [str(DEMO), "--pod", "6f1c2d2e-0000-4000-8000-000000000006", "-o", "json"])
    assert [a["pod"] for a in json.loads(r.output)["admissions"]] == ["shop/cache"]


@pytest.mark.parametrize("args", [["--step", "5"], ["--pod", "nobody/here"]])
def test_command_selection_matches_nothing(args: list[str]) -> None:
    r = CliRunner().invoke(explain_command, [str(DEMO), *args])
    assert r.exit_code == 2
    assert "no addPod step matches" in r.output


def test_command_bad_input_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: podnuma.io/v1\nkind: Scenario\nsteps: []\n")
    r = CliRunner().invoke(explain_command, [str(bad)])
    assert r.exit_code == 2


def test_empty_pool_behind_topology_affinity_error() -> None:
    """Under single-numa-node the empty-pool check shows as a pod-scope
    TopologyAffinityError (no CPU hints); best-effort reveals the real
    reason, and a larger budget (CPU and memory: both managers check) fits."""
    path = EXAMPLES / "pod-level" / "tutorial-2-empty-shared-pool.yaml"
    if not path.exists():
        pytest.skip("pod-level examples not present")
    scenario, result = _run(path)
    (adm,) = explain_run(scenario, result, pod="plrm-tutorial/empty-shared-pool")["admissions"]
    assert (adm["rejection"]["stage"], adm["rejection"]["container"]) == ("topology", None)
    assert _alt(adm, "topologyPolicy", value="best-effort")["reason"] == "EmptyPodSharedPoolError"
    budget = _alt(adm, "podBudget", admitted=True)
    assert budget["amount"] == 1 and budget["memory"] == 1 << 30
    assert _rerun_last(scenario, adm["step"], budget).admitted is True


@pytest.mark.parametrize("name", ["restricted.yaml", "single-numa-node.yaml", "pod-scope.yaml"])
def test_side_effects_match_an_independent_full_rerun(name: str) -> None:
    """Every suggestion's side effects are what a full re-run of the changed
    scenario, to its end, shows for the other pods: the next REPLAY_STEPS
    steps after a change to the pod or a removal, and for a configuration
    change (which applies from the node's start) the earlier steps too."""
    from podnuma.analysis.nearest import REPLAY_STEPS, _modify_pod, position
    from podnuma.errors import InputError
    from podnuma.inputs.scenario import Step
    from podnuma.scenario.run import play_step, start_node

    scenario, result = _run(EXAMPLES / "topology" / name)
    doc = explain_run(scenario, result)
    original = {s.index: s for s in result.steps}
    checked = 0
    configs = 0
    for adm in doc["admissions"]:
        for alt in adm["alternatives"]:
            if not alt["admitted"]:
                continue
            v = _variation(alt)
            steps = list(scenario.steps)
            pos = position(scenario, adm["step"])
            target = steps[pos]
            changed_scenario = scenario
            config_change = v.kind in ("topologyPolicy", "topologyScope")
            if config_change:
                changed_scenario = apply_variation(scenario, adm["step"], v)
                configs += 1
            elif v.kind == "removePod":
                steps.insert(pos, Step(target.index, "removePod", target.path, ref=v.value))
            else:
                assert target.pod is not None
                steps[pos] = replace(target, pod=_modify_pod(target.pod, v))
            node = start_node(changed_scenario)
            played = []
            for s in steps:  # to the end; a later step naming a removed pod no longer applies
                try:
                    played.append(play_step(node, s))
                except InputError:
                    continue
            # the replay follows the next REPLAY_STEPS steps (and says so)
            first = 0 if config_change else pos + 1
            window = {s.index for s in scenario.steps[first: pos + 1 + REPLAY_STEPS]} - {adm["step"]}
            if alt["sideEffectsCheckedSteps"] is None:
                assert len(scenario.steps) - pos - 1 <= REPLAY_STEPS
            else:
                assert alt["sideEffectsCheckedSteps"] == REPLAY_STEPS
            changed = sorted(
                (s.index, s.pod) for s in played
                if s.op == "addPod" and s.index in window and s.index in original
                and bool(original[s.index].admitted) != bool(s.admitted)
            )
            assert sorted((e["step"], e["pod"]) for e in alt["sideEffects"]) == changed
            checked += 1
    assert checked >= 2 and configs >= 1
    if name == "restricted.yaml":
        nic = _adm(doc, 6)
        removal = _alt(nic, "removePod", pod="demo/filler-1")
        assert removal["sideEffects"]
        summary = next(s for s in nic["suggestions"] if "demo/filler-1" in s)
        assert "; but then " in summary


# --------------------------------------------------------------------------
# How far the search went: caps, the time budget, progress
# --------------------------------------------------------------------------


def test_search_cap_is_reported_with_what_was_not_tried() -> None:
    scenario, result = _run(EXAMPLES / "topology" / "restricted.yaml")
    full = _adm(explain_run(scenario, result, step=6), 6)
    assert not any(c.startswith("stopped at") for c in full["search"]["cuts"])
    capped = _adm(explain_run(scenario, result, step=6, max_runs=1), 6)
    search = capped["search"]
    assert search["tried"] == 1 and len(capped["alternatives"]) == 1
    assert search["complete"] is False
    assert search["cuts"][-1] == "stopped at the cap of 1 changes per rejected pod"
    # every other change the full search ran is listed as not tried
    others = [a["change"] for a in full["alternatives"][1:]]
    assert others and all(c in search["notTried"] for c in others)


def test_time_budget_is_reported_with_what_was_not_tried() -> None:
    scenario, result = _run(EXAMPLES / "topology" / "restricted.yaml")
    (adm,) = explain_run(scenario, result, step=6, time_budget=0)["admissions"]
    assert adm["alternatives"] == [] and adm["suggestions"] == []
    assert adm["search"]["tried"] == 0
    assert adm["search"]["cuts"] == ["stopped at the time budget of 0 s per rejected pod"]
    assert "topologyManagerPolicy best-effort" in adm["search"]["notTried"]
    assert "remove running pod demo/filler-1 first" in adm["search"]["notTried"]


def test_removal_cap_is_reported() -> None:
    """More running pods than REMOVALS_TRIED, and fewer than REMOVALS_REPORTED
    of those tried admit the pod: the others are listed as not tried."""
    from podnuma.analysis.nearest import REMOVALS_TRIED

    scenario, result = _run(EXAMPLES / "topology" / "single-numa-node.yaml")
    doc = explain_run(scenario, result)
    cut = [
        a for a in doc["admissions"]
        if a["search"] is not None and any("tried for removal" in c for c in a["search"]["cuts"])
    ]
    assert cut, "a rejection whose removal candidates were cut"
    for adm in cut:
        removals = [a for a in adm["alternatives"] if a["kind"] == "removePod"]
        assert len(removals) == REMOVALS_TRIED
        assert sum(1 for a in removals if a["admitted"]) < 2
        assert adm["search"]["notTried"]
        assert all(n.startswith("remove running pod ") for n in adm["search"]["notTried"])


def test_progress_counts_admissions_and_changes() -> None:
    scenario, result = _run(EXAMPLES / "topology" / "restricted.yaml")
    seen: list[tuple[int, int]] = []
    doc = explain_run(scenario, result, progress=lambda done, total: seen.append((done, total)))
    admissions = len(doc["admissions"])
    tried = sum(a["search"]["tried"] for a in doc["admissions"] if a["search"])
    totals = {t for _, t in seen}
    assert len(totals) == 1
    (total,) = totals
    assert total >= admissions + tried
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and dones[-1] == total
    assert len(seen) == admissions + tried


def test_command_search_time_and_side_effects_in_text() -> None:
    path = str(EXAMPLES / "topology" / "restricted.yaml")
    r = CliRunner().invoke(explain_command, [path, "--step", "6", "--no-picture"])
    assert r.exit_code == 0, r.output
    assert "side effect: demo/wide-memory (step 11) rejected (UnexpectedAdmissionError) instead of admitted" in r.output
    # 6 running pods, 4 tried for removal, one of them admits the pod: said so
    assert "search cut: 4 of 6 running pods tried for removal" in r.output
    assert "not tried: remove running pod demo/hugepages first; remove running pod demo/gpu-pair first" in r.output
    r = CliRunner().invoke(explain_command, [path, "--step", "6", "--search-time", "0", "--no-picture"])
    assert r.exit_code == 0, r.output
    assert "search cut: stopped at the time budget of 0 s per rejected pod" in r.output
    # the smallest change first: the container at fault (router, 1 CPU) on a shared pool
    assert "not tried: container demo/router" not in r.output
    assert "not tried: container router cpu 900m instead of 1" in r.output
    r = CliRunner().invoke(explain_command, [path, "--step", "6", "--search-time", "0", "-o", "json"])
    (adm,) = json.loads(r.output)["admissions"]
    assert adm["search"]["complete"] is False
    r = CliRunner().invoke(explain_command, [path, "--search-time", "-1"])
    assert r.exit_code == 2
    r = CliRunner().invoke(explain_command, [path, "--search-time", "nan"])
    assert r.exit_code == 2
    assert "nan is not a number of seconds" in r.output
