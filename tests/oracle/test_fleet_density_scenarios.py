"""The fleet report's density figures replayed by the real kubelet code.

``fleet analyze --as-scenario DIR`` writes, beside each run's scenario,
one scenario per density figure of the run (``NODE.density-K.yaml`` as
running, ``NODE.whatif-N.density-K.yaml`` per what-if; K the workload's
place in the run's ``density``): the run's configuration on the node's
machine and the copies of the workload's pod the count added, the pod
itself then ``NAME-i``, and the first refused. The oracle (kubelet
v1.37.2's managers) admits exactly the report's ``copies`` of them, in a
row, and refuses the next for the report's ``stop`` reason; podnuma gives
the same step documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.oracle.harness import compare, run_oracle, run_podnuma

ROOT = Path(__file__).resolve().parents[2]
FLEET = ROOT / "examples" / "fleet"


def _analyze(out: Path, *what_ifs: str) -> dict[str, object]:
    args = [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(FLEET), "-o", "json", "--as-scenario",
            str(out)]
    for w in what_ifs:
        args += ["--what-if", w]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)
    return report


def test_every_density_figure_replays_in_the_oracle(oracle_binary: str, tmp_path: Path) -> None:
    scen = tmp_path / "scenarios"
    what_ifs = ["pod-level", "pod-level,shared-pool-cpus=1,scope=pod"]
    report = _analyze(scen, *what_ifs)
    expected: dict[str, tuple[str, int, str | None]] = {}
    nodes = report["nodes"]
    assert isinstance(nodes, list)
    for node in nodes:
        runs = {"": node.get("baseline")}
        runs.update({f".whatif-{i}": node.get("whatIfs", {}).get(w) for i, w in enumerate(what_ifs, 1)})
        for suffix, run in runs.items():
            if not run or "density" not in run:
                continue
            for k, (workload, figure) in enumerate(run["density"].items(), 1):
                expected[f"{node['name']}{suffix}.density-{k}.yaml"] = (workload, figure["copies"], figure["stop"])
    written = sorted(p.name for p in scen.iterdir() if ".density-" in p.name)
    assert written == sorted(expected)  # (one file per figure, none other)
    paths = [scen / name for name in written]
    theirs_all = run_oracle(oracle_binary, paths)
    pod_level_copies = 0
    for path, theirs in zip(paths, theirs_all, strict=True):
        workload, copies, stop = expected[path.name]
        text = path.read_text()
        assert text.startswith(f"# density of {workload} ("), text.splitlines()[0]
        scenario = yaml.safe_load(text)
        assert compare(run_podnuma(path), theirs, scenario) == [], path.name
        assert theirs.doc is not None, path.name
        steps = theirs.doc["steps"]
        admitted = [s["admitted"] for s in steps]
        assert admitted == [True] * copies + ([False] if stop is not None else []), path.name
        if stop is not None:
            assert steps[copies]["reason"] == stop, path.name
        if ".whatif-1." in path.name and workload == "payments/checkout-api":
            pod_level_copies = max(pod_level_copies, copies)
    assert pod_level_copies > 1  # (a rewritten pod counted in copies, not once)


def test_the_rewritten_pod_is_counted_in_its_node_shape(tmp_path: Path) -> None:
    """The pod-level rewrite of payments/checkout-api fits 6 copies on an
    empty ip-10-20-3-9 (the fleet's least): its scenario there admits 6
    copies of the rewritten pod through ``podnuma simulate``, each with the
    pod's budget (``spec.resources``), and refuses the 7th."""
    scen = tmp_path / "scenarios"
    report = _analyze(scen, "pod-level")
    workloads = report["workloads"]
    assert isinstance(workloads, dict)
    assert workloads["payments/checkout-api"]["pod-level"]["min"] == 6
    (node,) = [n for n in report["nodes"] if isinstance(n, dict) and n["name"].startswith("ip-10-20-3-9.")]
    density = node["whatIfs"]["pod-level"]["density"]
    k = list(density).index("payments/checkout-api") + 1
    path = scen / f"{node['name']}.whatif-1.density-{k}.yaml"
    doc = yaml.safe_load(path.read_text())
    pods = [s["addPod"] for s in doc["steps"]]
    assert len(pods) == 7 and all("resources" in p["spec"] for p in pods)
    assert [p["metadata"]["name"] for p in pods[1:]] == [f"{pods[0]['metadata']['name']}-{i}" for i in range(1, 7)]
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "simulate", str(path), "-o", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    steps = json.loads(proc.stdout)["steps"]
    assert [s["admitted"] for s in steps] == [True] * 6 + [False]
    assert steps[6]["reason"] == density["payments/checkout-api"]["stop"]
