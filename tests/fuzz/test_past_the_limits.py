"""Inputs past every reading limit, through each door, in a child process
capped at 1 GiB of address space and 20 s: a 9-level YAML alias bomb
(9**9 nodes once expanded, 510 bytes of text) under a key no reader
checks, and 50,000 levels of nesting (YAML flow lists, JSON arrays).

Expectation, per door: exit code 0 or 2, and on 2 one ``error:`` line on
standard error -- never a traceback, a MemoryError or a hang. These are the
inputs Hypothesis does not generate (``tests/fuzz/hostile.py`` stays below
10**4 expanded nodes and 60 levels, so that a regression cannot eat the
machine).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fuzz.hostile import alias_nest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MEMORY_CAP = 1 << 30
TIME_CAP = 20.0
DEPTH = 50_000

BOMB = alias_nest(9, 9)
DEEP_YAML = "[" * DEPTH + "]" * DEPTH
DEEP_JSON = "[" * DEPTH + "1" + "]" * DEPTH



def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_door(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The door in a child process; past the time cap it is killed and the
    outcome is exit code -9 (a hang)."""
    try:
        return subprocess.run(
            [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=TIME_CAP,
            preexec_fn=_limit, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, -9, "", f"killed: no answer within {TIME_CAP:.0f} s")


def expect_clean(proc: subprocess.CompletedProcess[str]) -> None:
    err = proc.stderr.strip()
    assert proc.returncode in (0, 2), f"exit {proc.returncode}: {err[-1500:]}"
    assert "Traceback" not in err and "internal error" not in err and "MemoryError" not in err, err[-1500:]
    if proc.returncode == 2:
        lines = [ln for ln in err.splitlines() if not ln.startswith("warning: ")]
        assert len(lines) == 1 and lines[0].startswith("error: "), err[-1500:]


def _pod_with(value: str) -> str:
    pod: Any = yaml.safe_load((EXAMPLES / "whatif" / "trainer-pod.yaml").read_text())
    pod["spec"]["containers"][0]["env"] = [{"name": "A", "value": "b", "xbomb": "__V__"}]
    return yaml.safe_dump(pod, sort_keys=False).replace("__V__", value, 1)


def _scenario_with(value: str) -> str:
    doc: Any = yaml.safe_load((EXAMPLES / "pod-level" / "pod-scope-2-mixed.yaml").read_text())
    doc["steps"][0]["addPod"]["spec"]["containers"][0]["env"] = [{"name": "A", "xbomb": "__V__"}]
    return yaml.safe_dump(doc, sort_keys=False).replace("__V__", value, 1)


DOORS = {
    "advise": lambda f: ["advise", f],
    "compare": lambda f: ["compare", f, "-o", "json"],
    "simulate": lambda f: ["simulate", f, "-o", "json"],
    "cgroups": lambda f: ["cgroups", "plan", f, "--driver", "systemd", "--cgroup-version", "2"],
}
POD_DOORS = ("advise", "compare")

CASES = [
    pytest.param(door, kind, id=f"{door}-{kind}")
    for door in DOORS
    for kind in ("bomb", "deep")
]  # fmt: skip


@pytest.mark.parametrize(("door", "kind"), CASES)
def test_cli_doors(tmp_path: Path, door: str, kind: str) -> None:
    value = BOMB if kind == "bomb" else DEEP_YAML
    text = _pod_with(value) if door in POD_DOORS else _scenario_with(value)
    path = tmp_path / "input.yaml"
    path.write_text(text)
    expect_clean(run_door(["-m", "podnuma.cli", "-q", *DOORS[door](str(path))], tmp_path))


_MANIFEST = """
import sys
from pathlib import Path
from podnuma.agent.manifests import read_manifest
from podnuma.api.featuregates import FeatureGates
from podnuma.errors import InputError
try:
    read_manifest(Path(sys.argv[1]), node_name="n", gates=FeatureGates.defaults())
except InputError as e:
    sys.exit(f"error: {e}")
"""


@pytest.mark.parametrize("kind", ["bomb", "deep"])
def test_agent_manifest_reader(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(_pod_with(BOMB if kind == "bomb" else DEEP_YAML))
    proc = run_door(["-c", _MANIFEST, str(path)], tmp_path)
    if proc.returncode == 1 and proc.stderr.startswith("error: "):  # sys.exit(message) exits 1
        proc = subprocess.CompletedProcess(proc.args, 2, proc.stdout, proc.stderr)
    expect_clean(proc)


@pytest.mark.parametrize("kind", ["bomb", "deep"])
def test_fleet_dump(tmp_path: Path, kind: str) -> None:
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for f in ("nodes.json", "noderesourcetopologies.json"):
        (fleet / f).write_text((EXAMPLES / "fleet" / f).read_text())
    pods = json.loads((EXAMPLES / "fleet" / "pods.json").read_text())
    pods["items"] = pods["items"][:3]
    text = json.dumps(pods).replace('"kind": "List"', '"kind": "List", "xbomb": "__V__"', 1)
    if kind == "bomb":  # YAML (aliases are YAML only): the dump as a YAML file
        (fleet / "pods.yaml").write_text(text.replace('"__V__"', BOMB))
    else:
        (fleet / "pods.json").write_text(text.replace('"__V__"', DEEP_JSON))
    expect_clean(run_door(["-m", "podnuma.cli", "-q", "fleet", "analyze", str(fleet), "-o", "json"], tmp_path))


@pytest.mark.parametrize("name", ["cpu_manager_state", "memory_manager_state"])
def test_deep_checkpoint(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text('{"policyName": "static", "x": ' + DEEP_JSON + "}")
    expect_clean(run_door(["-m", "podnuma.cli", "-q", "state", "inspect", str(tmp_path)], tmp_path))
