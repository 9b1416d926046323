"""``podnuma compare``'s runs are checkable: each run carries the scenario
that replays it (``-o json`` ``runs[].scenario``; ``--as-scenario DIR``
writes them), which ``podnuma simulate`` and the kubelet oracle (kubelet
v1.37.2's code) run to the run's figures; and the memory a run pins is the
memory, huge pages apart, as ``advise`` tells them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli
from podnuma.machine.cpuset import CPUSet

ROOT = Path(__file__).resolve().parents[2]
WHATIF = ROOT / "examples" / "whatif"
TRAINER = WHATIF / "trainer-pod.yaml"
NODE = WHATIF / "node.yaml"
CONFIG = WHATIF / "kubelet-config.yaml"

#: a pod with memory and 2Mi huge pages in both containers
HUGEPAGES = """\
apiVersion: v1
kind: Pod
metadata: {name: hp, namespace: ml}
spec:
  initContainers:
    - name: logs
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 256Mi, hugepages-2Mi: 64Mi}}
  containers:
    - name: app
      resources: {limits: {cpu: "4", memory: 4Gi, hugepages-2Mi: 1Gi}}
"""

HUGEPAGE_NODE = """\
synthetic:
  sockets: 2
  numaNodesPerSocket: 1
  coresPerNumaNode: 16
  threadsPerCore: 2
  memoryPerNumaNode: 128Gi
  hugepagesPerNumaNode: {hugepages-2Mi: 4Gi}
"""

MI = 2**20


def _invoke(*args: str) -> Result:
    got = CliRunner().invoke(cli, list(args), prog_name="podnuma")
    assert got.exception is None or isinstance(got.exception, SystemExit), repr(got.exception)
    return got


def _hugepage_inputs(tmp_path: Path) -> tuple[Path, Path]:
    pod = tmp_path / "hp.yaml"
    pod.write_text(HUGEPAGES)
    node = tmp_path / "node.yaml"
    node.write_text(HUGEPAGE_NODE)
    return pod, node


def test_compare_memory_pinned_is_memory_not_memory_plus_hugepages(tmp_path: Path) -> None:
    """A pod of 4352Mi memory and 1088Mi of 2Mi huge pages. Memory and huge
    pages are different resources (different pools on the node, different
    rejections: ``OutOfhugepages-2Mi``), and ``advise`` tells them apart
    (``hugepages-2Mi 1088Mi on NUMA 0, memory 4352Mi on NUMA 0``):
    ``compare``'s ``memory pinned`` is the memory, 4352Mi (not 5440Mi), and
    the huge pages have a row and a figure of their own. The pod-level form
    under scope container pins the app's alone (the sidecar runs on the
    node's shared pool, unpinned): 4Gi and 1Gi."""
    pod, node = _hugepage_inputs(tmp_path)
    r = _invoke("compare", str(pod), "--node", str(node), "--kubelet-config", str(CONFIG), "-o", "json")
    assert r.exit_code == 0, r.stderr
    (p,) = json.loads(r.stdout)["pods"]
    got = {(run["form"], run["scope"]): (run["memoryBytes"], run["hugepagesBytes"]) for run in p["runs"]}
    assert got == {
        ("perContainer", "pod"): (4352 * MI, {"hugepages-2Mi": 1088 * MI}),
        ("perContainer", "container"): (4352 * MI, {"hugepages-2Mi": 1088 * MI}),
        ("podLevel", "pod"): (4352 * MI, {"hugepages-2Mi": 1088 * MI}),
        ("podLevel", "container"): (4096 * MI, {"hugepages-2Mi": 1024 * MI}),
    }
    table = _invoke("compare", str(pod), "--node", str(node), "--kubelet-config", str(CONFIG))
    assert table.exit_code == 0, table.stderr
    assert "5440Mi" not in table.stdout
    rows = {line.split("  ")[1].strip(): line for line in table.stdout.splitlines() if line.startswith("  ")}
    assert rows["memory pinned"].split()[2:] == ["4352Mi", "4352Mi", "4352Mi", "4Gi"]
    assert rows["huge pages pinned"].split()[3:] == [
        "hugepages-2Mi", "1088Mi", "hugepages-2Mi", "1088Mi", "hugepages-2Mi", "1088Mi", "hugepages-2Mi", "1Gi"]
    # a pod without huge pages has no such row
    plain = _invoke("compare", str(TRAINER), "--node", str(NODE), "--kubelet-config", str(CONFIG))
    assert plain.exit_code == 0 and "huge pages pinned" not in plain.stdout


def _simulate(path: Path) -> list[dict[str, Any]]:
    r = _invoke("simulate", str(path), "-o", "json")
    assert r.exit_code == 0, r.stderr
    steps: list[dict[str, Any]] = json.loads(r.stdout)["steps"]
    return steps


def _oracle() -> str | None:
    binary = os.environ.get("PODNUMA_ORACLE") or "/tmp/or-main/kubelet-oracle"
    return binary if Path(binary).is_file() else None


def _oracle_steps(binary: str, path: Path) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([binary, "simulate", str(path), "-o", "json"], capture_output=True, text=True,
                          timeout=300, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    steps: list[dict[str, Any]] = json.loads(proc.stdout)["steps"]
    return steps


def _figures(step: dict[str, Any]) -> dict[str, Any]:
    """A replayed pod's figures as a run counts them: exclusive CPUs and
    pod shared pool of its long-running containers, and the memory and
    huge pages pinned (the pod's blocks, else its long-running
    containers')."""
    exclusive, pool = CPUSet(), CPUSet()
    for c in step["containers"]:
        if c["type"] == "init":
            continue
        if c["isolation"] == "container":
            exclusive = exclusive | CPUSet.parse(c["cpus"])
        elif c["isolation"] == "pod":
            pool = pool | CPUSet.parse(c["cpus"])
    alloc = step.get("podAllocation")
    blocks = (alloc or {}).get("memory") or [
        b for c in step["containers"] if c["type"] != "init" for b in c["memory"]]
    memory = sum(b["size"] for b in blocks if b["type"] == "memory")
    pages: dict[str, int] = {}
    for b in blocks:
        if b["type"] != "memory":
            pages[b["type"]] = pages.get(b["type"], 0) + b["size"]
    return {"exclusive": str(exclusive), "pool": str(pool), "memory": memory, "hugepages": pages}


def _check_replay(run: dict[str, Any], steps: list[dict[str, Any]], who: str) -> None:
    density = run["density"]
    want = [True] * density + ([] if run["densityCapped"] else [False])
    assert [bool(s["admitted"]) for s in steps] == want, who
    if not run["densityCapped"]:
        assert steps[density]["reason"] == run["densityStop"], who
    assert _figures(steps[0]) == {
        "exclusive": run["exclusiveCpus"]["cpus"], "pool": run["podSharedCpus"]["cpus"],
        "memory": run["memoryBytes"], "hugepages": run["hugepagesBytes"],
    }, who


@pytest.mark.parametrize("case", ["trainer", "hugepages"])
def test_compare_runs_carry_a_replayable_scenario(tmp_path: Path, case: str) -> None:
    """Each of the four runs (per-container / pod-level x scope pod /
    container) carries its scenario in ``-o json``, as ``restart[]``
    entries do: the node, the configuration of the run (its scope, the
    gates it forced on), and the copies it added. ``podnuma simulate`` and
    the kubelet oracle replay it to the run's figures: ``density`` copies
    admitted then the rejection the run names, and the first copy's
    exclusive CPUs, pod shared pool, memory and huge pages."""
    if case == "trainer":
        args = [str(TRAINER), "--node", str(NODE), "--kubelet-config", str(CONFIG)]
    else:
        pod, node = _hugepage_inputs(tmp_path)
        args = [str(pod), "--node", str(node), "--kubelet-config", str(CONFIG)]
    r = _invoke("compare", *args, "-o", "json")
    assert r.exit_code == 0, r.stderr
    (pod_doc,) = json.loads(r.stdout)["pods"]
    binary = _oracle()
    for k, run in enumerate(pod_doc["runs"]):
        who = f"{run['form']} / scope {run['scope']}"
        scenario = run["scenario"]
        assert scenario["kubeletConfig"]["topologyManagerScope"] == run["scope"], who
        path = tmp_path / f"run{k}.json"
        path.write_text(json.dumps(scenario))
        _check_replay(run, _simulate(path), who)
        if binary is not None:
            _check_replay(run, _oracle_steps(binary, path), f"oracle: {who}")
    if binary is None:
        pytest.skip("no kubelet oracle (set PODNUMA_ORACLE): replayed in podnuma simulate only")


def test_compare_as_scenario_writes_each_run_into_a_new_directory(tmp_path: Path) -> None:
    """``--as-scenario DIR`` (as ``fleet analyze`` has it: a new or empty
    directory, every file or none) writes each run's scenario, the one
    ``-o json`` carries, as ``NAMESPACE.NAME.FORM.scope-SCOPE.yaml``; a
    directory that holds anything is refused before any work, and an
    invalid pod leaves no directory behind."""
    out = tmp_path / "runs" / "trainer"
    args = [str(TRAINER), "--node", str(NODE), "--kubelet-config", str(CONFIG)]
    r = _invoke("compare", *args, "-o", "json", "--as-scenario", str(out))
    assert r.exit_code == 0, r.stderr
    assert f"wrote 4 scenario(s) to {out}" in r.stderr
    (pod_doc,) = json.loads(r.stdout)["pods"]
    names = {f"ml.trainer.{form}.scope-{scope}.yaml": (form, scope)
             for form in ("per-container", "pod-level") for scope in ("pod", "container")}
    assert sorted(os.listdir(out)) == sorted(names)
    forms = {"per-container": "perContainer", "pod-level": "podLevel"}
    for name, (form, scope) in names.items():
        (run,) = [x for x in pod_doc["runs"] if (x["form"], x["scope"]) == (forms[form], scope)]
        assert yaml.safe_load((out / name).read_text()) == run["scenario"], name
    _check_replay(pod_doc["runs"][2], _simulate(out / "ml.trainer.pod-level.scope-pod.yaml"), "file")
    again = _invoke("compare", *args, "--as-scenario", str(out))
    assert again.exit_code == 2 and again.stdout == ""
    assert again.stderr == f"error: {out}: --as-scenario: not empty (the scenarios go into a new or empty directory)\n"
    bad = tmp_path / "inv.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: inv}\nspec:\n"
                   "  resources: {limits: {cpu: '1', memory: 1Gi}}\n"
                   "  containers: [{name: a, resources: {limits: {cpu: '2', memory: 1Gi}}}]\n")
    fresh = tmp_path / "new" / "dir"
    refused = _invoke("compare", str(bad), "--as-scenario", str(fresh))
    assert refused.exit_code == 2, refused.stderr
    assert not (tmp_path / "new").exists()


def test_compare_as_scenario_names_two_pods_of_one_name_apart(tmp_path: Path) -> None:
    """Two pods of one name (variants of one pod, compared side by side)
    get their index in ``pods[]`` after the name, ``_INDEX`` (``_`` is in
    no object's name: no other pod's file can be named so), and a
    workload's files start with its kind."""
    pods = tmp_path / "pods.yaml"
    pods.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\n"
        "spec: {template: {spec: {containers: [{name: a, resources: {limits: {cpu: '2', memory: 1Gi}}}]}}}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"
        "spec: {containers: [{name: a, resources: {limits: {cpu: '2', memory: 1Gi}}}]}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\n"
        "spec: {containers: [{name: a, resources: {limits: {cpu: '4', memory: 1Gi}}}]}\n")
    out = tmp_path / "runs"
    r = _invoke("compare", str(pods), "-o", "json", "--as-scenario", str(out))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    bases = ["Deployment.prod.web", "default.x_1", "default.x_2"]
    want = {f"{b}.{form}.scope-{scope}.yaml"
            for b in bases for form in ("per-container", "pod-level") for scope in ("pod", "container")}
    assert set(os.listdir(out)) == want
    for base, p in zip(bases, doc["pods"], strict=True):
        assert yaml.safe_load((out / f"{base}.per-container.scope-pod.yaml").read_text()) == p["runs"][0]["scenario"]
