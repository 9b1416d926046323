"""Every figure ``podnuma advise`` gives replays: the scenario it writes
(``--as-scenario``) runs through ``podnuma simulate`` and through the
kubelet oracle (kubelet v1.37.2's own code) to the same documents, and
those documents show exactly the advice's figures: admission of the pod as
written, exclusive CPUs, the pod shared pool, CPUs taken from the node and
the density (copies until the first rejection) of both forms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli.advise import advise_command
from podnuma.machine.cpuset import CPUSet
from tests.oracle.harness import compare, run_oracle, run_podnuma, write_scenario

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "examples" / "whatif" / "node.yaml"

#: the classic case: a trainer rejected today under full-pcpus-only because
#: of its 1-CPU sidecars (a native one and an istio-injected app container)
TRAINER = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
  annotations: {sidecar.istio.io/status: '{"containers":["istio-proxy"]}'}
spec:
  initContainers:
  - name: fluent-bit
    restartPolicy: Always
    resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
  - name: train
    resources: {limits: {cpu: "8", memory: 40Gi}}
  - name: istio-proxy
    resources: {limits: {cpu: "1", memory: 512Mi}}
"""


def _config(tmp_path: Path, full_pcpus: bool) -> Path:
    doc = yaml.safe_load((ROOT / "examples" / "whatif" / "kubelet-config.yaml").read_text())
    if full_pcpus:
        doc["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    p = tmp_path / "kubelet-config.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def _held(step: dict[str, Any], before: str) -> int:
    return CPUSet.parse(before).size() - CPUSet.parse(step["defaultCpuSet"]).size()


@pytest.mark.parametrize(
    ("pod_file", "full_pcpus", "strategy"),
    [
        ("trainer-full", True, "keep-limits"),
        ("trainer-full", True, "max-freed"),
        ("examples", False, "keep-cpus"),
        ("examples", False, "max-freed"),
    ],
)
def test_advice_replays_on_the_oracle(
    oracle_binary: str, tmp_path: Path, pod_file: str, full_pcpus: bool, strategy: str
) -> None:
    if pod_file == "examples":
        pod = ROOT / "examples" / "whatif" / "trainer-pod.yaml"
    else:
        pod = tmp_path / "trainer.yaml"
        pod.write_text(TRAINER)
    cfg = _config(tmp_path, full_pcpus)
    out = tmp_path / "replay.yaml"
    r = CliRunner().invoke(advise_command, [
        str(pod), "--node", str(NODE), "--kubelet-config", str(cfg), "--strategy", strategy,
        "--as-scenario", str(out), "-o", "json",
    ])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    (advice,) = report["pods"]
    assert advice["status"] == "rewritten", advice["reason"]
    (ix,) = report["replay"]

    scenario = yaml.safe_load(out.read_text())
    path = write_scenario(scenario, tmp_path / "replay.json")
    mine = run_podnuma(path)
    (theirs,) = run_oracle(oracle_binary, [path])
    assert mine.kind == "ok", mine.message
    assert theirs.kind == "ok", theirs.message
    assert compare(mine, theirs, scenario) == []

    assert theirs.doc is not None
    steps = theirs.doc["steps"]
    empty = theirs.doc["node"]["cpus"]  # the shared pool of the empty node (reserved CPUs included)
    before, after = advice["before"], advice["after"]
    # the pod as written: admitted or not, the same way and for the same reason
    b0 = steps[ix["beforeStep"]]
    assert b0["admitted"] == before["admitted"]
    assert b0["reason"] == before["reason"]
    b_admitted = [s for s in steps[ix["beforeStep"]: ix["beforeStep"] + ix["beforeCopies"]] if s["admitted"]]
    assert len(b_admitted) == before["density"]
    if before["admitted"]:
        assert _held(b0, empty) == before["heldCpus"]["count"]
        excl = CPUSet()
        for c in b0["containers"]:
            if c["type"] != "init" and c["isolation"] == "container":
                excl = excl | CPUSet.parse(c["cpus"])
        assert excl.size() == before["exclusiveCpus"]["count"]
    # the rewrite: admitted, its exclusive CPUs, pod shared pool, CPUs taken, density
    a0 = steps[ix["afterStep"]]
    assert a0["admitted"] is True
    assert a0["podAllocation"]["cpus"] == after["podAllocation"]
    excl = CPUSet()
    pool = CPUSet()
    for c in a0["containers"]:
        if c["type"] == "init":
            continue
        if c["isolation"] == "container":
            excl = excl | CPUSet.parse(c["cpus"])
        elif c["isolation"] == "pod":
            pool = pool | CPUSet.parse(c["cpus"])
    assert str(excl) == after["exclusiveCpus"]["cpus"]
    assert str(pool) == after["podSharedCpus"]["cpus"]
    assert _held(a0, empty) == after["heldCpus"]["count"] == int(advice["rewrite"]["spec"]["resources"]
                                                                   ["requests"]["cpu"])
    a_steps = steps[ix["afterStep"]: ix["afterStep"] + ix["afterCopies"]]
    assert sum(1 for s in a_steps if s["admitted"]) == after["density"]
    assert a_steps[-1]["admitted"] is False and a_steps[-1]["reason"] == after["densityStop"]
    # each candidate refused was refused by the kubelet's own reason
    for cand in advice["candidates"]:
        if cand["verdict"] == "refused":
            assert cand["reason"].split(":")[0] in ("SMTAlignmentError", "TopologyAffinityError",
                                                    "UnexpectedAdmissionError", "OutOfcpu", "OutOfmemory")
    if full_pcpus:
        # the classic case: rejected as written, the rewrite admitted
        assert before["admitted"] is False and before["reason"] == "SMTAlignmentError"
        assert {s["name"] for s in advice["sidecars"]} == {"fluent-bit", "istio-proxy"}
