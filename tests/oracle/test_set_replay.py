"""``--set`` overrides replay exactly: ``podnuma simulate --set ...
--as-scenario FILE`` writes the scenario as it ran (the overridden
configuration inline), and both ``podnuma simulate`` and the kubelet oracle
replay that file to the figures of the overridden run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from tests.oracle.harness import compare, run_oracle, run_podnuma

ROOT = Path(__file__).resolve().parents[2]

#: the example runs per-container pods under full-pcpus-only (one of them is
#: rejected for an odd CPU count); the overrides change the policy option,
#: the scope and the gates, which moves CPUs and admits that pod
SETS = (
    "cpuManagerPolicyOptions.full-pcpus-only=false",
    "topologyManagerScope=pod",
    "topologyManagerPolicy=single-numa-node",
    "featureGates.PodLevelResourceManagers=true",
)


@pytest.fixture
def written(tmp_path: Path) -> tuple[dict[str, object], Path]:
    source = ROOT / "examples" / "static-dual-socket.yaml"
    out = tmp_path / "as-run.yaml"
    args = ["simulate", str(source), "-o", "json", "--as-scenario", str(out)]
    for s in SETS:
        args += ["--set", s]
    got = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout), out


def test_the_written_scenario_carries_the_overrides(written: tuple[dict[str, object], Path]) -> None:
    doc, path = written
    scenario = yaml.safe_load(path.read_text())
    cfg = scenario["kubeletConfig"]
    assert cfg["cpuManagerPolicyOptions"] == {"full-pcpus-only": "false"}
    assert cfg["topologyManagerScope"] == "pod"
    assert cfg["featureGates"] == {"PodLevelResourceManagers": True}
    assert cfg["reservedSystemCPUs"] == "0,16"  # the scenario's own field kept
    record = doc["kubeletConfig"]
    assert isinstance(record, dict)
    assert record["set"] == list(SETS)
    assert record["effective"] == cfg
    # the override changed the outcome: the odd pod is admitted now
    steps = doc["steps"]
    assert isinstance(steps, list)
    assert steps[1]["pod"] == "shop/odd" and steps[1]["admitted"] is True


def test_podnuma_and_the_oracle_replay_it(
    oracle_binary: str, written: tuple[dict[str, object], Path]
) -> None:
    doc, path = written
    mine = run_podnuma(path)
    assert mine.kind == "ok" and mine.doc is not None
    (theirs,) = run_oracle(oracle_binary, [path])
    scenario = yaml.safe_load(path.read_text())
    assert compare(mine, theirs, scenario) == []
    # podnuma simulate replays the file to the figures of the overridden run
    again = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json"], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    ran = {k: v for k, v in doc.items() if k != "kubeletConfig"}
    assert json.loads(again.stdout) == ran
