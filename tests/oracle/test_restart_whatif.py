"""``podnuma restart``: every figure it gives replays in the kubelet oracle.

For scenarios under topology scope pod and container, with per-container and
pod-level pods, ``podnuma restart SCENARIO --as-scenario FILE`` writes the
restart; the real kubelet v1.37.2 code (the oracle) runs FILE, and each
pod's outcome (kept / moved / rejected, the CPUs after, the reason and
message), the node's totals and the next start are read back from the
oracle's own output and compared with the report.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli
from podnuma.machine.cpuset import CPUSet
from tests.oracle.harness import compare, run_oracle_checkpoints, run_podnuma, write_scenario

MACHINE = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                         "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}}
CONFIG = {"featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "memoryManagerPolicy": "Static",
          "kubeReserved": {"memory": "924Mi"}, "evictionHard": {"memory.available": "100Mi"},
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}


def _per_container(name: str, cpu: str, created: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "r", "creationTimestamp": created},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}}]}}


def _pod_level(name: str, created: str) -> dict[str, Any]:
    budget = {"cpu": "4", "memory": "2Gi"}
    return {"metadata": {"name": name, "namespace": "r", "creationTimestamp": created},
            "spec": {"resources": {"requests": budget, "limits": budget},
                     "containers": [{"name": "main", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
                                    {"name": "sidecar"}]}}


def _scenario(policy: str, scope: str, memory: bool) -> dict[str, Any]:
    config = copy.deepcopy(CONFIG)
    config.update({"topologyManagerPolicy": policy, "topologyManagerScope": scope})
    if not memory:
        del config["memoryManagerPolicy"], config["reservedMemory"]
    # admitted in this order; the last one is the oldest: re-admitted first
    steps = [
        {"addPod": _per_container("first", "2", "2026-01-01T00:00:02Z")},
        {"addPod": _pod_level("trainer", "2026-01-01T00:00:03Z")},
        {"addPod": _per_container("oldest", "1", "2026-01-01T00:00:01Z")},
    ]
    return {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": copy.deepcopy(MACHINE),
            "kubeletConfig": config, "steps": steps}


CASES = {
    # pod scope: the pod-level pod is allocated afresh (kubernetes#140989):
    # other CPUs while its old ones stay taken ...
    "pod-scope-best-effort": (("best-effort", "pod", False), ("moved", None)),
    # ... or rejected: by the memory manager, whose blocks it already holds
    "pod-scope-best-effort-memory": (("best-effort", "pod", True), ("rejected", "UnexpectedAdmissionError")),
    "pod-scope-single-numa-node": (("single-numa-node", "pod", True), ("rejected", "TopologyAffinityError")),
    # container scope: no pod-level set, each container keeps its CPUs
    "container-scope-restricted": (("restricted", "container", True), ("kept", None)),
    "container-scope-none-memory": (("best-effort", "container", False), ("kept", None)),
}


def _restart(tmp_path: Path, doc: dict[str, Any]) -> tuple[dict[str, Any], Path]:
    src = write_scenario(doc, tmp_path / "scenario.yaml")
    out = tmp_path / "restart.json"
    res = CliRunner().invoke(cli, ["restart", str(src), "-o", "json", "--as-scenario", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout), out


def _cpus(step: dict[str, Any]) -> CPUSet:
    """The CPUs the oracle gave the pod: its pod-level set and its
    containers' exclusive or pod-pool CPUs."""
    got = CPUSet.parse(step["podAllocation"]["cpus"]) if step.get("podAllocation") else CPUSet()
    for c in step["containers"]:
        if c["isolation"] in ("container", "pod"):
            got = got | CPUSet.parse(c["cpus"])
    return got


def _unowned(checkpoint: dict[str, Any], all_cpus: CPUSet) -> CPUSet:
    data = json.loads(checkpoint["data"])
    owned = CPUSet.parse(data["defaultCpuSet"])
    for containers in data.get("entries", {}).values():
        for cs in containers.values():
            owned = owned | CPUSet.parse(cs)
    for entry in data.get("podEntries", {}).values():
        owned = owned | CPUSet.parse(entry["cpuSet"])
    return all_cpus.difference(owned)


@pytest.mark.parametrize("case", sorted(CASES))
def test_restart_figures_replay_in_the_oracle(oracle_binary: str, tmp_path: Path, case: str) -> None:
    (policy, scope, memory), (expected, reason) = CASES[case]
    report, written = _restart(tmp_path, _scenario(policy, scope, memory))
    restart_doc = json.loads(written.read_text())

    # the kubelet's order: oldest creationTimestamp first
    assert [s["addPod"]["metadata"]["name"] for s in restart_doc["steps"]] == ["oldest", "first", "trainer"]
    assert [p["pod"] for p in report["pods"]] == ["r/oldest", "r/first", "r/trainer"]

    mine, theirs = run_podnuma(written), run_oracle_checkpoints(oracle_binary, written)
    assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
    assert not compare(mine, theirs, restart_doc, check_bytes=True)
    assert theirs.doc is not None
    steps = theirs.doc["steps"]

    outcomes = {p["pod"]: p["outcome"] for p in report["pods"]}
    assert outcomes == {"r/oldest": "kept", "r/first": "kept", "r/trainer": expected}
    assert report["pods"][2]["reason"] == reason

    for p in report["pods"]:
        step = steps[p["step"]]
        assert step["pod"] == p["pod"]
        assert step["admitted"] == (p["outcome"] != "rejected")
        assert (step["reason"], step["message"]) == (p["reason"], p["message"])
        if p["outcome"] == "rejected":
            assert p["reason"] and p["message"].startswith("Pod was rejected: ")
            continue
        after = _cpus(step)
        assert str(after) == p["after"]["cpus"]
        before = CPUSet.parse(p["before"]["cpus"])
        assert (after == before) == (p["outcome"] == "kept")

    totals = report["totals"]
    all_cpus = CPUSet.parse(theirs.doc["node"]["cpus"])
    unowned = _unowned(theirs.doc["checkpoints"]["cpuManager"], all_cpus)
    assert totals["cpusTakenByNobody"] == unowned.size()
    assert totals["cpusTakenByNobodyList"] == str(unowned)
    assert totals["freeCpus"] == CPUSet.parse(steps[-1]["defaultCpuSet"]).difference(
        CPUSet.parse(theirs.doc["node"]["reservedCpus"])).size()
    # the CPUs a moved or rejected pod-level pod left behind are the ones nobody holds
    left = CPUSet()
    for p in report["pods"]:
        left = left | CPUSet.parse(p.get("leftBehind", ""))
    assert left == unowned
    assert bool(unowned) == (expected == "moved" or reason == "UnexpectedAdmissionError")

    # the next start from what the restart leaves, in the oracle
    nxt = {**restart_doc, "state": theirs.doc["checkpoints"], "steps": []}
    again = run_oracle_checkpoints(oracle_binary, write_scenario(nxt, tmp_path / "next.json"))
    if report["nextStart"]["starts"]:
        assert again.kind == "ok", again.message
    else:
        assert again.kind == "startup"
        assert again.message == report["nextStart"]["message"]
    assert report["nextStart"]["starts"] == (not unowned)


def test_compare_and_advise_restart_sections_replay_in_the_oracle(oracle_binary: str, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    args = [str(root / "examples/whatif/trainer-pod.yaml"), "--node", str(root / "examples/whatif/node.yaml"),
            "--kubelet-config", str(root / "examples/whatif/kubelet-config.yaml"), "-o", "json"]
    compared = CliRunner().invoke(cli, ["compare", *args])
    advised = CliRunner().invoke(cli, ["advise", *args])
    assert compared.exit_code == advised.exit_code == 0, (compared.output, advised.output)
    risks = json.loads(compared.stdout)["restart"] + json.loads(advised.stdout)["restart"]
    # compare: both forms under both scopes; advise: both forms under the configured scope
    assert [(r["form"], r["scope"]) for r in risks] == [
        ("perContainer", "pod"), ("perContainer", "container"), ("podLevel", "pod"), ("podLevel", "container"),
        ("perContainer", "pod"), ("podLevel", "pod")]
    outcomes = {(r["form"], r["scope"]): r["outcome"] for r in risks}
    assert outcomes == {("perContainer", "pod"): "kept", ("perContainer", "container"): "kept",
                        ("podLevel", "pod"): "rejected", ("podLevel", "container"): "kept"}
    for i, r in enumerate(risks):
        path = write_scenario(r["scenario"], tmp_path / f"risk-{i}.json")
        theirs = run_oracle_checkpoints(oracle_binary, path)
        assert theirs.kind == "ok" and theirs.doc is not None, theirs.message
        step = theirs.doc["steps"][r["detail"]["step"]]
        assert step["admitted"] == (r["outcome"] != "rejected")
        assert (step["reason"], step["message"]) == (r["detail"]["reason"], r["detail"]["message"])
        if r["outcome"] != "rejected":
            assert str(_cpus(step)) == r["detail"]["after"]["cpus"]


GPU = "example.com/gpu"


def _gpu_pod(name: str, gpus: int, created: str) -> dict[str, Any]:
    limits = {"cpu": "1", "memory": "1Gi", GPU: str(gpus)}
    return {"metadata": {"name": name, "namespace": "r", "creationTimestamp": created},
            "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]}}


def test_restart_restores_the_device_checkpoint(oracle_binary: str, tmp_path: Path) -> None:
    """The restart scenario carries the device manager's checkpoint as the
    run wrote it: the pods re-admitted (oldest first, the reverse of their
    admission) keep their devices in podnuma and in the real code alike."""
    machine = copy.deepcopy(MACHINE)
    machine["devices"] = {GPU: [{"id": f"gpu{i}", "numaNodes": [i // 2]} for i in range(4)]}
    config = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "single-numa-node"}
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": machine, "kubeletConfig": config,
           "steps": [{"addPod": _gpu_pod("a", 1, "2026-01-01T00:00:02Z")},
                     {"addPod": _gpu_pod("b", 2, "2026-01-01T00:00:01Z")}]}
    before = run_podnuma(write_scenario(doc, tmp_path / "before.json"))
    assert before.doc is not None
    held = {st["pod"]: st["containers"][0]["devices"][GPU] for st in before.doc["steps"]}
    assert held == {"r/a": ["gpu0"], "r/b": ["gpu2", "gpu3"]}

    report, written = _restart(tmp_path, doc)
    restart_doc = json.loads(written.read_text())
    entries = restart_doc["state"]["deviceManager"]["Data"]["PodDeviceEntries"]
    assert len(entries) == 2
    assert not any("devices" in n for n in report.get("notes", []))
    mine, theirs = run_podnuma(written), run_oracle_checkpoints(oracle_binary, written)
    assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
    assert not compare(mine, theirs, restart_doc, check_bytes=True)
    for outcome in (mine, theirs):
        assert outcome.doc is not None
        steps = outcome.doc["steps"]
        assert [s["pod"] for s in steps] == ["r/b", "r/a"]
        assert {s["pod"]: s["containers"][0]["devices"][GPU] for s in steps} == held
