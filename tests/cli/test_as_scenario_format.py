"""``--as-scenario FILE`` writes JSON for a ``.json`` name (any case) and
YAML otherwise, in every command that takes it (``simulate`` and
``explain`` wrote YAML into ``x.json``; ``advise`` and ``restart`` JSON);
what each writes replays."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples/pod-level/pod-scope-2-mixed.yaml")
COMMANDS = {
    "simulate": ["simulate", SCENARIO, "-o", "json"],
    "explain": ["explain", SCENARIO, "--no-search", "-o", "json"],
    "advise": ["advise", str(ROOT / "examples/whatif/trainer-pod.yaml"), "-o", "json"],
    "restart": ["restart", SCENARIO, "-o", "json"],
}


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_format_follows_the_name(command: str, tmp_path: Path) -> None:
    for name in ("s.json", "s.JSON", "s.yaml", "s.scenario"):
        got = _run(*COMMANDS[command], "--as-scenario", name, cwd=tmp_path)
        assert got.returncode == 0, got.stderr
        text = (tmp_path / name).read_text()
        if name.lower().endswith(".json"):
            doc = json.loads(text)
        else:
            assert not text.lstrip().startswith("{"), text[:80]
            doc = yaml.safe_load(text)
        assert doc["kind"] == "Scenario"
        replay = _run("simulate", name, "-o", "json", cwd=tmp_path)
        assert replay.returncode == 0, replay.stderr
