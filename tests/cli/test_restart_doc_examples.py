"""docs/commands/restart.md shows what ``podnuma restart`` prints: the
plain output as the command wraps it (120 columns, docs/cli.md), and
``--as-scenario FILE`` printing nothing beside the output, as
``simulate --as-scenario`` and ``explain --as-scenario`` print nothing
(the file is there; no note)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "commands" / "restart.md"


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["NO_COLOR"] = "1"
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=120, check=False)


def _shown(command: str) -> list[str]:
    """The lines the doc shows under ``$ command`` (to the next command or
    the end of the block)."""
    lines = DOC.read_text().splitlines()
    shown: list[str] = []
    for line in lines[lines.index(f"$ {command}") + 1:]:
        if line.startswith(("```", "$ ")):
            break
        shown.append(line.rstrip())
    return shown


def test_the_example_is_what_the_command_prints() -> None:
    command = "podnuma restart examples/pod-level/restart.yaml"
    proc = _run(command.split()[1:], ROOT)
    assert proc.returncode == 0, proc.stderr
    assert [line.rstrip() for line in proc.stdout.rstrip("\n").splitlines()] == _shown(command)
    assert max(len(line) for line in _shown(command)) <= 120


def test_as_scenario_prints_nothing_beside_the_output(tmp_path: Path) -> None:
    assert _shown("podnuma restart examples/pod-level/restart.yaml --as-scenario replay.yaml >/dev/null") == []
    shutil.copytree(ROOT / "examples" / "pod-level", tmp_path / "examples" / "pod-level")
    for command in (["restart", "examples/pod-level/restart.yaml"],
                    ["simulate", "examples/pod-level/restart.yaml"],
                    ["explain", "examples/pod-level/restart.yaml", "--no-search"]):
        proc = _run([*command, "--as-scenario", "replay.yaml"], tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "", (command, proc.stderr)
        assert (tmp_path / "replay.yaml").exists()
        (tmp_path / "replay.yaml").unlink()
