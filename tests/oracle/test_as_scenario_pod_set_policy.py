"""``podnuma state inspect DIR --as-scenario`` without ``--kubelet-config``,
of checkpoints holding pod-level sets (pod budgets): the topology manager
policy it writes is one that can have written them, as ``podnuma restart
--state-dir`` reasons (tests/oracle/test_pod_sets_written_by_policy.py):
never ``none``; not ``single-numa-node`` when a pod's set spans NUMA nodes,
nor ``restricted`` when its CPUs span more NUMA nodes than the fewest that
hold as many (the kubelet's code rejects such a pod under them); one left,
that one; of several left, the first,
when every one replays the checkpoints to the same run (the kubelet's code
says so too), with a note naming them. The written scenario replays in
``podnuma simulate`` and in the kubelet's code (the oracle) to the same
figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli
from tests.oracle.harness import device_numa, normalise, run_oracle_checkpoints, run_podnuma

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "pod-level" / "restart.yaml"
POLICIES = ["best-effort", "restricted", "single-numa-node"]


def _invoke(*args: str) -> Result:
    r = CliRunner().invoke(cli, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def _state(tmp_path: Path, policy: str, trainer_cpus: str = "4") -> tuple[Path, Path, dict[str, Any]]:
    """The state directory the example leaves under ``policy`` (scope pod;
    the trainer's budget ``trainer_cpus``), and its node as a file."""
    doc = yaml.safe_load(SCENARIO.read_text())
    doc["kubeletConfig"]["topologyManagerPolicy"] = policy
    for step in doc["steps"]:
        if step["addPod"]["metadata"]["name"] == "trainer":
            step["addPod"]["spec"]["resources"]["requests"]["cpu"] = trainer_cpus
            step["addPod"]["spec"]["resources"]["limits"]["cpu"] = trainer_cpus
    src = tmp_path / f"{policy}.yaml"
    src.write_text(yaml.safe_dump(doc))
    state = tmp_path / f"state-{policy}"
    r = _invoke("simulate", str(src), "--checkpoint-dir", str(state), "-o", "json")
    assert r.exit_code == 0, r.output
    assert all(s["admitted"] for s in json.loads(r.stdout)["steps"])
    assert "podEntries" in (state / "cpu_manager_state").read_text()
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(doc["node"]))
    return state, node, doc


def _as_scenario(state: Path, *more: str) -> tuple[dict[str, Any], list[str]]:
    r = _invoke("state", "inspect", str(state), "--as-scenario", "-o", "json", *more)
    assert r.exit_code == 0, r.output
    notes = [line.removeprefix("note: ") for line in r.stderr.splitlines()]
    return json.loads(r.stdout), notes


def _same_figures(oracle_binary: str, doc: dict[str, Any], path: Path) -> dict[str, Any]:
    """``doc`` replayed by podnuma (as ``simulate`` runs it) and by the
    kubelet's code: the same figures (the checkpoints after, as objects,
    among them); the oracle's."""
    path.write_text(json.dumps(doc))
    mine, theirs = run_podnuma(path), run_oracle_checkpoints(oracle_binary, path)
    assert theirs.kind == "ok", theirs.message
    assert mine.kind == "ok", mine.message
    assert mine.doc is not None and theirs.doc is not None
    numa = device_numa(doc)
    assert normalise(mine.doc, numa) == normalise(theirs.doc, numa)
    return normalise(theirs.doc, numa)


@pytest.mark.parametrize("written_under", POLICIES)
def test_a_policy_that_can_have_written_the_pod_sets_and_replays_as_the_kubelet_does(
    oracle_binary: str, tmp_path: Path, written_under: str
) -> None:
    state, node, _ = _state(tmp_path, written_under)
    doc, notes = _as_scenario(state, "--node", str(node), "--set", "reservedSystemCPUs=0")
    config = doc["kubeletConfig"]
    assert (config["topologyManagerPolicy"], config["topologyManagerScope"]) == ("best-effort", "pod")
    assert not any("none assumed" in n for n in notes)
    (note,) = [n for n in notes if "topology manager policy is not recorded" in n]
    assert note.endswith("written under best-effort, restricted or single-numa-node only (never none); the "
                         "replay is the same under best-effort, restricted and single-numa-node (the scenario "
                         "runs best-effort); give the node's configuration (--kubelet-config) to write its own")
    # the kubelet's code replays the checkpoints to the same run under each
    runs = []
    for policy in POLICIES:
        each = json.loads(json.dumps(doc))
        each["kubeletConfig"]["topologyManagerPolicy"] = policy
        runs.append(_same_figures(oracle_binary, each, tmp_path / f"as-{policy}.json"))
    assert runs[1] == runs[0] and runs[2] == runs[0]
    # and a pod added after the start lands where the kubelet's code puts it
    doc["steps"] = [{"addPod": {"metadata": {"name": "late", "namespace": "shop"}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}}}]
    got = _same_figures(oracle_binary, doc, tmp_path / "late.json")
    assert got["steps"][0]["admitted"] is True


def test_a_pod_set_across_numa_nodes_rules_single_numa_node_out(oracle_binary: str, tmp_path: Path) -> None:
    """A trainer of 10 CPUs on NUMA nodes of 8: best-effort spreads its set
    over both; the kubelet's code rejects it under single-numa-node, so
    that policy is not written, nor named among those that replay alike."""
    state, node, doc = _state(tmp_path, "best-effort", trainer_cpus="10")
    doc["kubeletConfig"]["topologyManagerPolicy"] = "single-numa-node"
    single = tmp_path / "single.yaml"
    single.write_text(yaml.safe_dump(doc))
    theirs = run_oracle_checkpoints(oracle_binary, single)
    assert theirs.kind == "ok", theirs.message
    assert theirs.doc is not None
    assert [s["admitted"] for s in theirs.doc["steps"] if s["pod"] == "ml/trainer"] == [False]
    got, notes = _as_scenario(state, "--node", str(node), "--set", "reservedSystemCPUs=0")
    assert got["kubeletConfig"]["topologyManagerPolicy"] == "best-effort"
    (note,) = [n for n in notes if "topology manager policy is not recorded" in n]
    trainer = next(uid for uid in json.loads(json.loads((state / "cpu_manager_state").read_text())["data"])[
        "podEntries"])
    assert f"not single-numa-node, which keeps a pod's set on one NUMA node: pod {trainer}'s spans more; " \
        "the replay is the same under best-effort and restricted (the scenario runs best-effort)" in note
    runs = []
    for policy in ("best-effort", "restricted"):
        each = json.loads(json.dumps(got))
        each["kubeletConfig"]["topologyManagerPolicy"] = policy
        runs.append(_same_figures(oracle_binary, each, tmp_path / f"as-{policy}.json"))
    assert runs[0] == runs[1]


def test_without_the_machine_nothing_is_replayed_and_none_is_never_written(tmp_path: Path) -> None:
    state, _, _ = _state(tmp_path, "restricted")
    doc, notes = _as_scenario(state)
    assert doc["kubeletConfig"]["topologyManagerPolicy"] == "best-effort"
    (note,) = [n for n in notes if "topology manager policy is not recorded" in n]
    assert "without the node's machine (--node, --sysfs) they are not replayed: best-effort is written" in note


def test_the_policy_given_is_kept(tmp_path: Path) -> None:
    state, node, _ = _state(tmp_path, "restricted")
    doc, notes = _as_scenario(state, "--node", str(node), "--set", "reservedSystemCPUs=0",
                              "--set", "topologyManagerPolicy=restricted")
    assert doc["kubeletConfig"]["topologyManagerPolicy"] == "restricted"
    assert not any("topology manager policy" in n for n in notes)


def _pod(name: str, cpus: str, pod_level: bool = False) -> dict[str, Any]:
    meta = {"name": name, "namespace": "shop"}
    if pod_level:
        return {"addPod": {"metadata": meta, "spec": {
            "resources": {"requests": {"cpu": cpus, "memory": "2Gi"}, "limits": {"cpu": cpus, "memory": "2Gi"}},
            "containers": [{"name": "app", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
                           {"name": "side"}]}}}
    return {"addPod": {"metadata": meta, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": cpus, "memory": "1Gi"}}}]}}}


def test_a_pod_set_on_more_numa_nodes_than_needed_leaves_best_effort_alone(
    oracle_binary: str, tmp_path: Path
) -> None:
    """Two pods leave 3 CPUs free on each NUMA node of 8; a pod-level pod of
    4 then gets its set across both under best-effort (no preferred hint),
    which the kubelet's code rejects under restricted and single-numa-node:
    only best-effort can have written it, and it is written, said so."""
    doc = yaml.safe_load(SCENARIO.read_text())
    doc["steps"] = [_pod("a", "4"), _pod("b", "5"), _pod("c", "4", pod_level=True)]
    runs = {}
    for policy in POLICIES:
        doc["kubeletConfig"]["topologyManagerPolicy"] = policy
        path = tmp_path / f"{policy}.yaml"
        path.write_text(yaml.safe_dump(doc))
        theirs = run_oracle_checkpoints(oracle_binary, path)
        assert theirs.kind == "ok" and theirs.doc is not None, theirs.message
        runs[policy] = {s["pod"]: s["admitted"] for s in theirs.doc["steps"]}
    assert runs == {"best-effort": {"shop/a": True, "shop/b": True, "shop/c": True},
                    "restricted": {"shop/a": True, "shop/b": True, "shop/c": False},
                    "single-numa-node": {"shop/a": True, "shop/b": True, "shop/c": False}}
    state = tmp_path / "state"
    r = _invoke("simulate", str(tmp_path / "best-effort.yaml"), "--checkpoint-dir", str(state), "-o", "json")
    assert r.exit_code == 0, r.output
    (uid,) = json.loads(json.loads((state / "cpu_manager_state").read_text())["data"])["podEntries"]
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(doc["node"]))
    got, notes = _as_scenario(state, "--node", str(node), "--set", "reservedSystemCPUs=0")
    assert got["kubeletConfig"]["topologyManagerPolicy"] == "best-effort"
    (note,) = [n for n in notes if "topology manager policy is not recorded" in n]
    assert f"; not restricted, which keeps a pod's CPUs on the fewest NUMA nodes that hold as many: pod {uid}'s " \
        f"span more; not single-numa-node, which keeps a pod's set on one NUMA node: pod {uid}'s spans more; " \
        "only best-effort is left: the scenario runs it;" in note
    _same_figures(oracle_binary, got, tmp_path / "as.json")
