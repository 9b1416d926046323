"""explain's nearest-configuration search tries the smallest changes first:
the container at fault's own resources, one policy option off, the
pod-level rewrite, then the topology policy and scope, fewer CPUs and
removals; it lists every change tried with the engine's verdict, and any
of them is written as a scenario that ``podnuma simulate`` replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from podnuma.analysis.nearest import FAMILY_ORDER
from podnuma.cli.explain import explain_command
from podnuma.cli.simulate import simulate_command

ROOT = Path(__file__).resolve().parents[2]
SIDECAR = ROOT / "examples" / "pod-level" / "sidecar-smt.yaml"


def _json(args: list[str]) -> dict[str, Any]:
    r = CliRunner().invoke(explain_command, [*args, "-o", "json"])
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.output)
    return doc


def test_the_sidecar_at_fault_is_tried_first() -> None:
    (adm,) = _json([str(SIDECAR)])["admissions"]
    assert adm["reason"] == "SMTAlignmentError"
    assert adm["rejection"]["container"] == "fluent-bit"
    search = adm["search"]
    cands = search["candidates"]
    changes = [c["change"] for c in cands]
    # the 1-CPU sidecar: a whole core, or the shared pool (still Guaranteed)
    assert changes[0] == "container fluent-bit cpu 2 instead of 1 (rounded up to whole cores)"
    assert changes[1].startswith("container fluent-bit cpu 900m instead of 1 (on a shared pool")
    assert [c["admitted"] for c in cands[:2]] == [True, True]
    # then full-pcpus-only off, then the pod-level rewrite with the gate on
    assert changes[2] == "cpuManagerPolicyOptions full-pcpus-only off"
    assert cands[2]["admitted"] is True
    rewrites = [c for c in cands if c["family"] == "podLevel"]
    # the rewrite's own budget (9 CPUs) breaks full-pcpus-only on the pod; a pool of 2 does not
    assert [(c["admitted"], c["reason"]) for c in rewrites] == [(False, "SMTAlignmentError"), (True, None)]
    assert "spec.resources cpu 9" in rewrites[0]["change"]
    assert "cpu 10" in rewrites[1]["change"] and "PodLevelResourceManagers on" in rewrites[1]["change"]
    # families in order, every change tried numbered
    fams = [c["family"] for c in cands]
    assert fams == sorted(fams, key=FAMILY_ORDER.index)
    assert [c["order"] for c in cands] == list(range(1, len(cands) + 1))
    assert search["tried"] == len(cands)
    assert search["nearest"] == 1
    assert search["nearestChange"] == changes[0]


def test_text_lists_the_changes_tried_and_the_nearest() -> None:
    r = CliRunner().invoke(explain_command, [str(SIDECAR), "--no-picture"])
    assert r.exit_code == 0, r.output
    assert "changes tried, smallest first (13)" in r.output
    assert "nearest admissible: #1 container fluent-bit cpu 2 instead of 1" in r.output
    assert "[option] cpuManagerPolicyOptions full-pcpus-only off" in r.output


def test_as_scenario_replays_each_change(tmp_path: Path) -> None:
    doc = _json([str(SIDECAR)])
    cands = doc["admissions"][0]["search"]["candidates"]
    for c in cands:
        out = tmp_path / f"c{c['order']}.yaml"
        r = CliRunner().invoke(
            explain_command, [str(SIDECAR), "--as-scenario", str(out), "--candidate", str(c["order"])]
        )
        assert r.exit_code == 0, r.output
        assert out.stat().st_mode & 0o777 == 0o644
        r = CliRunner().invoke(simulate_command, [str(out), "-o", "json"])
        assert r.exit_code == 0, r.output
        last = json.loads(r.output)["steps"][-1]
        assert last["admitted"] is c["admitted"], c["change"]
        assert last["reason"] == (None if c["admitted"] else c["reason"])
    # the nearest admitted change
    out = tmp_path / "nearest.yaml"
    r = CliRunner().invoke(explain_command, [str(SIDECAR), "--as-scenario", str(out), "--candidate", "nearest"])
    assert r.exit_code == 0, r.output
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    (sidecar,) = written["steps"][-1]["addPod"]["spec"]["initContainers"]
    assert sidecar["resources"]["limits"]["cpu"] == "2"
    # the rewrite with the gate: spec.resources, the gate on in the configuration
    r = CliRunner().invoke(explain_command, [str(SIDECAR), "--as-scenario", str(out), "--candidate", "5"])
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert written["kubeletConfig"]["featureGates"]["PodLevelResourceManagers"] is True
    assert written["steps"][-1]["addPod"]["spec"]["resources"]["limits"]["cpu"] == "10"
    # with --set: the change is made on the scenario as it ran
    r = CliRunner().invoke(explain_command, [
        str(SIDECAR), "--set", "topologyManagerPolicy=best-effort", "--as-scenario", str(out),
        "--candidate", "nearest",
    ])
    assert r.exit_code == 0, r.output
    written = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert written["kubeletConfig"]["topologyManagerPolicy"] == "best-effort"


def test_as_scenario_refusals(tmp_path: Path) -> None:
    many = str(ROOT / "examples" / "topology" / "restricted.yaml")
    r = CliRunner().invoke(explain_command, [many, "--as-scenario", str(tmp_path / "x.yaml"), "--candidate", "1"])
    assert r.exit_code == 2
    assert "choose one with --step or --pod" in r.output
    assert not (tmp_path / "x.yaml").exists()
    x = str(tmp_path / "x.yaml")
    r = CliRunner().invoke(explain_command, [str(SIDECAR), "--as-scenario", x, "--candidate", "99"])
    assert r.exit_code == 2
    assert "--candidate 99: the search of step 0 tried 13 change(s)" in r.output
    r = CliRunner().invoke(explain_command, [str(SIDECAR), "--candidate", "1"])
    assert r.exit_code == 2
    assert "--candidate goes with --as-scenario" in r.output
    r = CliRunner().invoke(explain_command, [str(SIDECAR), "--as-scenario", x, "--candidate", "first"])
    assert r.exit_code == 2
    assert "a change's number (1, 2, ...) or 'nearest'" in r.output
    r = CliRunner().invoke(explain_command, [many, "--step", "7", "--no-search", "--as-scenario", x, "--candidate", "1"])
    assert r.exit_code == 2
    assert "--as-scenario needs the search (drop --no-search)" in r.output
    hopeless = str(ROOT / "examples" / "topology" / "best-effort.yaml")
    r = CliRunner().invoke(explain_command, [hopeless, "--step", "7", "--as-scenario", x, "--candidate", "nearest"])
    assert r.exit_code == 2, r.output
    assert "no change tried admits the pod of step 7: pick one with --candidate N" in r.output
