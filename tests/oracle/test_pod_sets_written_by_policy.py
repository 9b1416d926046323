"""Which kubelet configurations write a pod's own set (a pod budget,
``podEntries`` in the CPU manager checkpoint): only the pod scope of a
topology manager policy other than ``none`` hands a pod-level pod to the
managers whole. The ``none`` policy's scope allocates container by
container whatever scope is configured, and so does the container scope.
The kubelet's code (the oracle) and podnuma write the same checkpoints;
``podnuma restart --state-dir`` rules ``none`` out of a state holding pod
sets on this ground (tests/analysis/test_restart_policy_from_checkpoints.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from tests.oracle.harness import run_oracle_checkpoints

SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "pod-level" / "restart.yaml"


@pytest.mark.parametrize("scope", ["pod", "container"])
@pytest.mark.parametrize("policy", ["none", "best-effort", "restricted", "single-numa-node"])
def test_pod_sets_are_written_under_the_pod_scope_of_a_policy_other_than_none(
    oracle_binary: str, tmp_path: Path, policy: str, scope: str
) -> None:
    doc = yaml.safe_load(SCENARIO.read_text())
    doc["kubeletConfig"].update(topologyManagerPolicy=policy, topologyManagerScope=scope)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    theirs = run_oracle_checkpoints(oracle_binary, path)
    assert theirs.kind == "ok", theirs.message
    mine_dir = tmp_path / "state"
    r = CliRunner().invoke(cli, ["simulate", str(path), "--checkpoint-dir", str(mine_dir), "-o", "json"])
    assert r.exit_code == 0, r.output
    cpu = theirs.files["cpu_manager_state"]
    assert (mine_dir / "cpu_manager_state").read_bytes() == cpu
    pod_sets = json.loads(json.loads(cpu)["data"]).get("podEntries") or {}
    assert bool(pod_sets) == (scope == "pod" and policy != "none")
