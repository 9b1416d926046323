"""A fleet's resized pods, replayed by the real kubelet code: a pod whose
pod-level resize the kubelet did not actuate (its spec asks 30 CPUs of a
node of 15, its status shows the 3 allocated) is admitted with its
allocated budget (pkg/kubelet/allocation: ``AddPod`` admits a pod with the
resources it checkpointed, ``UpdatePodFromAllocation``); the scenario the
fleet writes of the node carries that budget, and the oracle replays it,
and the restart after it, to the report's figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.fleet.figures import is_static, report_figures
from tests.fleet.partial import KNOWN, pod, write_partial_fleet
from tests.oracle.harness import compare, run_oracle, run_podnuma


def _pod_level(name: str, asked: str, allocated: str, second: int) -> dict[str, Any]:
    """A Guaranteed pod-level pod asking ``asked`` CPUs, ``allocated`` of
    them allocated by the kubelet (``status.allocatedResources``)."""
    res = {"cpu": asked, "memory": "1Gi"}
    doc = pod(name, KNOWN, "1", "1Gi", second)
    doc["spec"]["resources"] = {"requests": res, "limits": dict(res)}
    doc["spec"]["containers"] = [{"name": "app"}]
    doc["status"]["qosClass"] = "Guaranteed"
    doc["status"]["allocatedResources"] = {"cpu": allocated, "memory": "1Gi"}
    doc["status"]["resources"] = {"requests": {"cpu": allocated, "memory": "1Gi"},
                                  "limits": {"cpu": allocated, "memory": "1Gi"}}
    return doc


def test_a_pod_level_resize_not_actuated_replays_with_the_allocated_budget(
    oracle_binary: str, tmp_path: Path
) -> None:
    dump = write_partial_fleet(tmp_path / "dump")
    pods = json.loads((dump / "pods.json").read_text())
    pods["items"].append(_pod_level("plevel", "30", "3", 4))
    (dump / "pods.json").write_text(json.dumps(pods))
    scen = tmp_path / "scenarios"
    proc = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(dump), "-o", "json",
         "--what-if", "restart", "--as-scenario", str(scen)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    node = next(n for n in report["nodes"] if n["name"] == KNOWN)
    assert "t/plevel" not in [r["pod"] for r in node["baseline"]["rejected"]]
    path = scen / f"{KNOWN}.yaml"
    scenario = yaml.safe_load(path.read_text())
    (added,) = [s["addPod"] for s in scenario["steps"] if "addPod" in s
                and s["addPod"]["metadata"]["name"] == "plevel"]
    assert added["spec"]["resources"]["requests"]["cpu"] == "3"
    (theirs,) = run_oracle(oracle_binary, [path])
    mine = run_podnuma(path)
    assert compare(mine, theirs, scenario) == []
    assert theirs.doc is not None
    (step,) = [s for s in theirs.doc["steps"] if s["op"] == "addPod" and s["pod"] == "t/plevel"]
    assert step["admitted"] is True
    got = report_figures(theirs.doc, is_static(scenario))
    assert got == {k: (len(node["baseline"][k]) if k == "rejected" else int(node["baseline"][k])) for k in got}
    # the restart after it: the same documents, the report's restart figures
    figures = node["whatIfs"]["restart"]["restart"]
    assert "error" not in figures
    path = scen / f"{KNOWN}.whatif-1.restart.yaml"
    doc = yaml.safe_load(path.read_text())
    mine = run_podnuma(path)
    (theirs,) = run_oracle(oracle_binary, [path])
    assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
    assert compare(mine, theirs, doc) == []
    assert theirs.doc is not None
    steps = {s["pod"]: s for s in theirs.doc["steps"] if s["op"] == "addPod"}
    assert steps["t/plevel"]["admitted"] is True
    assert sum(1 for s in steps.values() if s["admitted"] is False) == figures["rejected"]
    assert len(steps) == figures["kept"] + figures["moved"] + figures["rejected"]
