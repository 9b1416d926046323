"""What ``podnuma advise`` refuses and what it skips: a pod the API server
refuses is invalid input (named, exit 2) whatever its form, read through the
reader ``compare`` uses; a rewrite that gains nothing on the node (more CPUs
taken from it, no more copies) is skipped with its figures, not proposed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "examples" / "whatif" / "node.yaml"
CONFIG = ROOT / "examples" / "whatif" / "kubelet-config.yaml"

#: a pod-level pod the API server refuses: a container's request above the pod budget
OVER_BUDGET = """\
apiVersion: v1
kind: Pod
metadata: {name: inv, namespace: ml}
spec:
  resources: {limits: {cpu: "1", memory: 1Gi}}
  containers:
    - name: a
      resources: {limits: {cpu: "2", memory: 1Gi}}
"""

#: a valid pod-level pod: skipped (nothing to rewrite)
POD_LEVEL = """\
apiVersion: v1
kind: Pod
metadata: {name: pl, namespace: ml}
spec:
  resources: {limits: {cpu: "4", memory: 2Gi}}
  containers:
    - name: a
      resources: {limits: {cpu: "2", memory: 1Gi}}
"""

#: a Guaranteed pod whose only exclusive CPU is its sidecar's: the app asks for 1500m
NO_EXCLUSIVE_APP = """\
apiVersion: v1
kind: Pod
metadata: {name: noex, namespace: ml}
spec:
  initContainers:
    - name: logs
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 64Mi}}
  containers:
    - name: app
      resources: {limits: {cpu: 1500m, memory: 1Gi}}
"""


def _invoke(*args: str) -> Result:
    got = CliRunner().invoke(cli, list(args), prog_name="podnuma")
    assert got.exception is None or isinstance(got.exception, SystemExit), repr(got.exception)
    return got


def test_advise_refuses_an_invalid_pod_level_pod_as_compare_does(tmp_path: Path) -> None:
    """A pod-level pod whose container asks for more than the pod budget is
    invalid: the API server refuses it ("must be less than or equal to cpu
    limit of 1", API validation), and docs/pod-level.md says podnuma
    refuses it as invalid input, exit 2. ``advise`` reads pods through the
    reader ``compare`` uses, so it refuses it with the same line (file and
    field) before it looks at the form; a valid pod-level pod is still
    skipped as already pod-level."""
    pod = tmp_path / "inv.yaml"
    pod.write_text(OVER_BUDGET)
    ref = _invoke("compare", str(pod))
    assert ref.exit_code == 2 and ref.stdout == ""
    assert "must be less than or equal to cpu limit of 1" in ref.stderr
    r = _invoke("advise", str(pod))
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == ref.stderr
    valid = tmp_path / "pl.yaml"
    valid.write_text(POD_LEVEL)
    ok = _invoke("advise", str(valid), "-o", "json")
    assert ok.exit_code == 0, ok.stderr
    (advice,) = json.loads(ok.stdout)["pods"]
    assert (advice["status"], advice["reason"]) == ("skipped", "already pod-level (spec.resources is set)")


def _advise(pod: Path, *extra: str) -> dict[str, Any]:
    r = _invoke("advise", str(pod), "--node", str(NODE), "--kubelet-config", str(CONFIG), "-o", "json", *extra)
    assert r.exit_code == 0, r.stderr
    (advice,) = json.loads(r.stdout)["pods"]
    assert isinstance(advice, dict)
    return advice


def test_advise_skips_a_rewrite_that_takes_more_cpus_and_fits_no_more_copies(tmp_path: Path) -> None:
    """The pod holds one exclusive CPU (its sidecar's) and runs its 1500m
    app on the node's shared pool. Under keep-limits its pod shared pool
    must hold the 2500m the moved containers ask for: 3 CPUs, so the
    rewrite takes 3 CPUs from the node where the pod took 1, and fits 20
    copies where the pod fits 24. Nothing advise measures improves on the
    node: the pod is skipped with those figures (and the strategy that
    searches smaller pools), not proposed. Under max-freed the 1-CPU pool
    keeps the CPUs taken and fits more copies: that rewrite is proposed."""
    pod = tmp_path / "noex.yaml"
    pod.write_text(NO_EXCLUSIVE_APP)
    advice = _advise(pod)
    assert advice["status"] == "skipped", advice["status"]
    assert advice["reason"].startswith(
        "nothing to gain: the rewrite takes 2 more CPU(s) from the node (1 -> 3: the pod shared pool of "
        "3 CPU(s) holds more than the 1 exclusive CPU(s) freed) and fits fewer copies (24 -> 20)"
    ), advice["reason"]
    assert "--strategy max-freed" in advice["reason"]
    # the figures behind the verdict stay in the report
    assert (advice["before"]["heldCpus"]["count"], advice["after"]["heldCpus"]["count"]) == (1, 3)
    assert (advice["before"]["density"], advice["after"]["density"]) == (24, 20)
    assert advice["rewrite"] is None
    freed = _advise(pod, "--strategy", "max-freed")
    assert freed["status"] == "rewritten", freed["reason"]
    s = freed["savings"]
    assert s["cpusTakenFromNodeAfter"] <= s["cpusTakenFromNodeBefore"]
    assert s["densityAfter"] > s["densityBefore"]


def _oracle() -> str:
    binary = os.environ.get("PODNUMA_ORACLE") or "/tmp/or-main/kubelet-oracle"
    if not Path(binary).is_file():
        pytest.skip(f"no kubelet oracle at {binary} (set PODNUMA_ORACLE)")
    return binary


def test_the_skipped_rewrites_figures_replay_in_the_oracle(tmp_path: Path) -> None:
    """The figures a skip gives are the kubelet's: the replay scenario of the
    skipped pod (``--as-scenario``), run by the kubelet oracle (kubelet
    v1.37.2's code), admits 24 copies of the pod as written (the 25th
    rejected: OutOfcpu) and 20 of the pod-level form (the 21st rejected:
    TopologyAffinityError), the pod-level form's pool of 3 CPUs taken from
    the node's shared pool."""
    binary = _oracle()
    pod = tmp_path / "noex.yaml"
    pod.write_text(NO_EXCLUSIVE_APP)
    scenario = tmp_path / "replay.json"
    r = _invoke("advise", str(pod), "--node", str(NODE), "--kubelet-config", str(CONFIG), "-o", "json",
                "--as-scenario", str(scenario))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    (replay,) = doc["replay"]
    assert replay["status"] == "skipped"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([binary, "simulate", str(scenario), "-o", "json"], capture_output=True, text=True,
                          timeout=300, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout)["steps"]

    def admitted(first: int, count: int) -> list[bool]:
        return [bool(steps[i]["admitted"]) for i in range(first, first + count)]

    b, a = replay["beforeStep"], replay["afterStep"]
    assert admitted(b, 25) == [True] * 24 + [False]
    assert steps[b + 24]["reason"] == "OutOfcpu"
    assert admitted(a, 21) == [True] * 20 + [False]
    assert steps[a + 20]["reason"] == "TopologyAffinityError"
    pool = steps[a]["podAllocation"]["cpus"]
    assert sum(len(range(int(x.split("-")[0]), int(x.split("-")[-1]) + 1)) for x in pool.split(",")) == 3
