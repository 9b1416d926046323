"""How ``state inspect --as-scenario`` (no ``--kubelet-config``) settles the
topology manager policy of checkpoints holding pod sets, where the replays
under the policies that can have written them are not all alike: one that
does not start is ruled out (one left: written, said so); runs that differ
are refused in one line asking for the node's configuration and naming
what each gives. (The kubelet's code replays such checkpoints alike under
each: tests/oracle/test_as_scenario_pod_set_policy.py; the replay is made
to differ here.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

import podnuma.service.state as state_service
from podnuma.cli import cli
from podnuma.errors import InputError

SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "pod-level" / "restart.yaml"


def _invoke(*args: str) -> Result:
    r = CliRunner().invoke(cli, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


@pytest.fixture()
def state(tmp_path: Path) -> tuple[Path, Path]:
    doc = yaml.safe_load(SCENARIO.read_text())
    out = tmp_path / "state"
    assert _invoke("simulate", str(SCENARIO), "--checkpoint-dir", str(out), "-o", "json").exit_code == 0
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(doc["node"]))
    return out, node


def _replays(monkeypatch: pytest.MonkeyPatch, runs: dict[str, str | None]) -> list[str]:
    """The replay under each policy made ``runs[policy]`` (``None``: the
    kubelet does not start); the policies replayed, in order."""
    asked: list[str] = []
    real = state_service._replay_text

    def replay(doc: dict[str, Any], directory: Path) -> str:
        policy = doc["kubeletConfig"]["topologyManagerPolicy"]
        asked.append(policy)
        text = real(doc, directory)  # (it runs, whatever is made of it)
        got = runs[policy]
        if got is None:
            raise InputError("kubelet would not start")
        if got:  # (a run that differs: its restored pods)
            run = json.loads(text)
            run["restored"] = got
            return json.dumps(run)
        return text

    monkeypatch.setattr(state_service, "_replay_text", replay)
    return asked


def _as_scenario(state: tuple[Path, Path]) -> Result:
    return _invoke("state", "inspect", str(state[0]), "--as-scenario", "--node", str(state[1]), "-o", "json",
                   "--set", "reservedSystemCPUs=0")


def test_one_policy_left_is_written(state: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _replays(monkeypatch, {"best-effort": None, "restricted": "", "single-numa-node": None})
    r = _as_scenario(state)
    assert r.exit_code == 0, r.output
    assert asked[:3] == ["best-effort", "restricted", "single-numa-node"]
    assert json.loads(r.stdout)["kubeletConfig"]["topologyManagerPolicy"] == "restricted"
    (note,) = [n for n in r.stderr.splitlines() if "topology manager policy is not recorded" in n]
    assert "; not best-effort, which the kubelet does not start with from them on this machine; not " \
        "single-numa-node, which the kubelet does not start with from them on this machine; only restricted " \
        "is left: the scenario runs it;" in note


def test_replays_that_differ_are_refused(state: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _replays(monkeypatch, {"best-effort": "a", "restricted": "b", "single-numa-node": "b"})
    r = _as_scenario(state)
    assert r.exit_code == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line == (
        "error: --kubelet-config: the node's topology manager policy is needed: the checkpoints hold pod-level "
        "sets (pod budgets), which the kubelet writes under best-effort, restricted or single-numa-node here, "
        "and their replay differs (best-effort: run 1; restricted and single-numa-node: run 2; they differ at "
        "restored): give --kubelet-config FILE, or --set topologyManagerPolicy=POLICY")
