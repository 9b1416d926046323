"""``explain --candidate ... --as-scenario``: an admission that was not
rejected has nothing to change, and the error says so (it asked to choose
a step with --step, which had been given); the pod-level example's header
shows the commands that write the fixed scenario."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli.app import cli
from podnuma.cli.explain import explain_command

ROOT = Path(__file__).resolve().parents[2]
RESTRICTED = ROOT / "examples" / "topology" / "restricted.yaml"
SIDECAR_SMT = ROOT / "examples" / "pod-level" / "sidecar-smt.yaml"


def _error(r: Result) -> str:
    assert r.exit_code == 2, r.output
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("select", "said"),
    [
        (["--step", "2"], "step 2 (demo/gpu-pair) was admitted: nothing to change"),
        (["--pod", "demo/aligned"], "pod demo/aligned was admitted: nothing to change"),
    ],
)
def test_an_admitted_step_has_no_change_to_write(tmp_path: Path, select: list[str], said: str) -> None:
    out = tmp_path / "c.yaml"
    r = CliRunner().invoke(
        explain_command, [str(RESTRICTED), *select, "--candidate", "nearest", "--as-scenario", str(out)]
    )
    line = _error(r)
    assert line == f"error: {RESTRICTED}: {said} (--candidate writes a change the search tried for a " \
        "rejected admission)"
    assert "choose one with --step" not in line
    assert not out.exists()


def test_a_scenario_without_a_rejection_says_so(tmp_path: Path) -> None:
    doc = yaml.safe_load(RESTRICTED.read_text())
    doc["steps"] = doc["steps"][:3]  # the three admitted pods
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(doc))
    out = tmp_path / "c.yaml"
    r = CliRunner().invoke(explain_command, [str(scenario), "--candidate", "1", "--as-scenario", str(out)])
    assert ": no admission was rejected: nothing to change" in _error(r)
    assert not out.exists()


def test_a_rejected_step_still_writes_its_change(tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    r = CliRunner().invoke(
        explain_command, [str(RESTRICTED), "--step", "6", "--candidate", "nearest", "--as-scenario", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert out.exists()
    # several rejected and none chosen: the service asks to choose one
    r = CliRunner().invoke(explain_command, [str(RESTRICTED), "--candidate", "nearest", "--as-scenario", str(out)])
    assert "choose one with --step or --pod" in _error(r)


def test_a_pod_rejected_twice_asks_for_a_step_not_for_the_pod_given(tmp_path: Path) -> None:
    """--pod names a pod rejected at two steps: the words ask for --step
    (the --pod was given) and name the steps."""
    doc = yaml.safe_load((ROOT / "examples" / "static-dual-socket.yaml").read_text())
    doc["steps"].append(doc["steps"][1])  # shop/odd again, rejected again
    scenario = tmp_path / "twice.yaml"
    scenario.write_text(yaml.safe_dump(doc))
    out = tmp_path / "c.yaml"
    r = CliRunner().invoke(explain_command, [str(scenario), "--pod", "shop/odd", "--candidate", "nearest",
                                             "--as-scenario", str(out)])
    line = _error(r)
    assert line.endswith("pod shop/odd was rejected at steps 1, 5: choose one with --step")
    assert not out.exists()
    r = CliRunner().invoke(explain_command, [str(scenario), "--pod", "shop/odd", "--step", "5",
                                             "--candidate", "nearest", "--as-scenario", str(out)])
    assert r.exit_code == 0, r.output
    assert out.exists()


def _header_commands(path: Path) -> list[list[str]]:
    """The ``podnuma ...`` commands of the example's header comment (a line
    ending in a backslash goes on on the next one)."""
    commands: list[list[str]] = []
    text = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        body = line.lstrip("#").strip()
        if text:
            text += " " + body
        elif body.startswith("podnuma "):
            text = body
        else:
            continue
        if text.endswith("\\"):
            text = text[:-1].rstrip()
            continue
        commands.append(shlex.split(text)[1:])
        text = ""
    return commands


def test_the_pod_level_example_header_writes_the_fixed_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header's ``--as-scenario fixed.yaml`` then ``simulate fixed.yaml``
    runs the trainer admitted (without ``--candidate`` it wrote the scenario
    as it ran: rejected again)."""
    commands = _header_commands(SIDECAR_SMT)
    writes = [c for c in commands if "--as-scenario" in c]
    assert writes and all("--candidate" in c for c in writes), commands
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(os.environ, "NO_COLOR", "1")
    runner = CliRunner()
    for args in commands:
        r = runner.invoke(cli, args)
        assert r.exit_code == 0, (args, r.output)
    simulated = [c for c in commands if c[0] == "simulate"]
    assert simulated
    r = runner.invoke(cli, [*simulated[-1], "-o", "json"])
    assert r.exit_code == 0, r.output
    (step,) = yaml.safe_load(r.stdout)["steps"]
    assert step["admitted"] is True, step
