"""``podnuma restart --set PATH=VALUE`` replays exactly: the node runs the
scenario's steps and restarts with the overridden kubelet configuration;
``--as-scenario FILE`` writes the restart with that configuration inline,
and both ``podnuma simulate`` and the kubelet oracle replay FILE to the
report's figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.machine.cpuset import CPUSet
from tests.oracle.harness import compare, run_oracle_checkpoints, run_podnuma

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pod-level" / "restart.yaml"


def _restart(tmp_path: Path, *sets: str, name: str = "restart.yaml") -> tuple[dict[str, Any], Path]:
    out = tmp_path / name
    args = ["restart", str(EXAMPLE), "-o", "json", "--as-scenario", str(out)]
    for s in sets:
        args += ["--set", s]
    got = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout), out


def _cpus(step: dict[str, Any]) -> str:
    got = CPUSet.parse(step["podAllocation"]["cpus"]) if step.get("podAllocation") else CPUSet()
    for c in step["containers"]:
        if c["isolation"] in ("container", "pod"):
            got = got | CPUSet.parse(c["cpus"])
    return str(got)


@pytest.mark.parametrize(
    "sets",
    [
        # the gate off: the pod-level pod runs in the shared pool, nothing moves
        ("featureGates.PodLevelResourceManagers=false",),
        # container scope: no pod-level set, each container keeps its CPUs
        ("topologyManagerScope=container",),
        ("topologyManagerPolicy=single-numa-node", "reservedSystemCPUs=0-1"),
    ],
    ids=["gate-off", "container-scope", "single-numa-node"],
)
def test_restart_with_overrides_replays_in_the_oracle(oracle_binary: str, tmp_path: Path, sets: tuple[str, ...]) -> None:
    plain, _ = _restart(tmp_path, name="plain.yaml")
    report, written = _restart(tmp_path, *sets)
    assert report["set"] == list(sets) and "set" not in plain
    # the override changed something the plain restart reports
    assert [(p["pod"], p["outcome"], p["after"]) for p in report["pods"]] != [
        (p["pod"], p["outcome"], p["after"]) for p in plain["pods"]
    ]
    doc = yaml.safe_load(written.read_text())
    cfg = doc["kubeletConfig"]
    for s in sets:
        path, _, value = s.partition("=")
        head, _, key = path.partition(".")
        got = cfg[head][key] if key else cfg[head]
        assert str(got).lower() == value.lower(), (path, got)

    mine, theirs = run_podnuma(written), run_oracle_checkpoints(oracle_binary, written)
    assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
    assert compare(mine, theirs, doc, check_bytes=True) == []
    assert theirs.doc is not None
    steps = theirs.doc["steps"]
    for p in report["pods"]:
        if p["step"] is None:
            continue
        step = steps[p["step"]]
        assert step["pod"] == p["pod"]
        assert step["admitted"] == (p["outcome"] != "rejected")
        assert (step["reason"], step["message"]) == (p["reason"], p["message"])
        if p["outcome"] != "rejected":
            assert _cpus(step) == p["after"]["cpus"]


def test_restart_state_dir_with_overrides(tmp_path: Path) -> None:
    # the checkpoints of a static CPU manager, restarted with the none
    # policy: the kubelet refuses to start (policy mismatch), as it would
    state = tmp_path / "state"
    got = CliRunner().invoke(cli, ["simulate", str(EXAMPLE), "--checkpoint-dir", str(state), "-o", "json"])
    assert got.exit_code == 0, got.output
    res = CliRunner().invoke(cli, ["restart", "--state-dir", str(state), "--node", str(EXAMPLE),
                                   "--kubelet-config", str(EXAMPLE), "--set", "cpuManagerPolicy=none"])
    assert res.exit_code == 2
    assert 'configured policy "none" differs from state checkpoint policy "static"' in res.output
    bad = CliRunner().invoke(cli, ["restart", str(EXAMPLE), "--set", "cpuManagerPolicy=dynamic"])
    assert bad.exit_code == 2 and "--set" in bad.output and "cpuManagerPolicy" in bad.output
