"""The fleet report's figures replayed by the real kubelet code: every
node's runs (as running and under each what-if) written as scenarios
(``fleet analyze --as-scenario``) give the same step documents through
the oracle as through podnuma, and the figures the report gives for the
run (pinned, free, CPUs of rejected pods returned by the reconcile loop,
rejections) read back from the oracle's document."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.fleet.figures import is_static, report_figures
from tests.fleet.partial import write_partial_fleet
from tests.oracle.harness import compare, run_oracle, run_podnuma

WHAT_IFS = ["policy=single-numa-node", "cpu-option=full-pcpus-only", "memory-policy=None"]


def test_fleet_runs_replay_in_the_oracle_to_the_report_figures(oracle_binary: str, tmp_path: Path) -> None:
    dump = write_partial_fleet(tmp_path / "dump")
    scen = tmp_path / "scenarios"
    args = [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(dump), "-o", "json",
            "--as-scenario", str(scen)]
    for w in WHAT_IFS:
        args += ["--what-if", w]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    checked = 0
    held = 0
    for node in report["nodes"]:
        runs = {f"{node['name']}.yaml": node["baseline"]}
        for i, label in enumerate(WHAT_IFS, 1):
            runs[f"{node['name']}.whatif-{i}.yaml"] = node["whatIfs"][label]
        for name, run in runs.items():
            path = scen / name
            scenario = yaml.safe_load(path.read_text())
            (theirs,) = run_oracle(oracle_binary, [path])
            mine = run_podnuma(path)
            assert compare(mine, theirs, scenario) == [], name
            checked += 1
            if "error" in run:  # the kubelet refuses the what-if: so does the oracle, in the same words
                assert theirs.kind == "startup" and theirs.message in run["error"], name
                continue
            assert theirs.doc is not None
            got = report_figures(theirs.doc, is_static(scenario))
            want = {k: (len(run[k]) if k == "rejected" else int(run[k])) for k in got}
            assert got == want, name
            held += got["rejectedPodCpus"]
    # every run has its scenario; a pod rejected after its CPUs were chosen
    # is among them
    # (the density figures' scenarios beside them: tests/oracle/test_fleet_density_scenarios.py)
    assert checked == len([p for p in scen.iterdir() if ".density-" not in p.name]) == 3 * (1 + len(WHAT_IFS))
    assert held > 0


def test_fleet_restart_scenarios_replay_in_the_oracle(oracle_binary: str, tmp_path: Path) -> None:
    """``--what-if ...,restart --as-scenario DIR`` writes per node the
    restart after the what-if (``NODE.whatif-N.restart.yaml``): the oracle
    replays it to the same documents as podnuma, and to the what-if's
    ``restart`` figures (pods rejected at re-admission and their reasons,
    the CPUs of the pods that moved)."""
    root = Path(__file__).resolve().parents[2]
    scen = tmp_path / "scenarios"
    label = "pod-level,scope=pod,restart"
    proc = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(root / "examples" / "fleet"), "-o", "json",
         "--what-if", label, "--as-scenario", str(scen)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    replayed = rejected_total = 0
    for node in report["nodes"]:
        figures = node.get("whatIfs", {}).get(label, {}).get("restart")
        if figures is None or "error" in figures:
            continue
        path = scen / f"{node['name']}.whatif-1.restart.yaml"
        doc = yaml.safe_load(path.read_text())
        assert doc["state"]["cpuManager"] and doc["state"]["pods"]
        mine = run_podnuma(path)
        (theirs,) = run_oracle(oracle_binary, [path])
        assert mine.kind == theirs.kind == "ok", (path, mine.message, theirs.message)
        assert compare(mine, theirs, doc) == [], path
        assert theirs.doc is not None
        steps = {s["pod"]: s for s in theirs.doc["steps"] if s["op"] == "addPod"}
        readmitted = [s for s in steps.values()]
        assert sum(1 for s in readmitted if s["admitted"] is False) == figures["rejected"]
        assert len(readmitted) == figures["kept"] + figures["moved"] + figures["rejected"]
        for p in figures["pods"]:
            step = steps[p["pod"]]
            assert step["admitted"] == (p["outcome"] != "rejected")
            assert (step["reason"], step["message"]) == (p["reason"], p["message"])
        replayed += 1
        rejected_total += figures["rejected"]
    assert replayed == report["restart"][label]["nodes"] >= 3
    assert rejected_total == report["restart"][label]["rejected"] > 0
