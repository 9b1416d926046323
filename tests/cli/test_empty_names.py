"""An empty file or directory name (``''``: a shell's unset ``"$VAR"``)
names no file, for every argument and option that takes one: before, it
was the working directory (``state inspect ''`` read it, ``simulate
--checkpoint-dir ''`` wrote the checkpoints into it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "examples" / "pod-level" / "restart.yaml")


@pytest.mark.parametrize(("args", "name"), [
    (["simulate", ""], "SCENARIO"),
    (["simulate", "", "-o", "json"], "SCENARIO"),
    (["simulate", SCENARIO, "--checkpoint-dir", ""], "--checkpoint-dir"),
    (["state", "inspect", ""], "DIRECTORY"),
    (["restart", "--state-dir", ""], "--state-dir"),
    (["topology", ""], "SCENARIO"),
    (["compare", ""], "POD"),
    (["cgroups", "apply", SCENARIO, "--root", "", "--driver", "systemd", "--cgroup-version", "2"], "--root"),
    (["node", "discover", "--sysfs", ""], "--sysfs"),
    (["fleet", "generate", "--nodes", "1", "--pods-per-node", "1", "--output-dir", ""], "--output-dir"),
])
def test_an_empty_name_is_no_file(tmp_path: Path, args: list[str], name: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: Invalid value for '{name}': '': no such file or directory"), line
    assert list(tmp_path.iterdir()) == []  # (nothing written into the working directory)
