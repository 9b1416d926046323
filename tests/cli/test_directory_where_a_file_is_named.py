"""A directory where an option names a file is told in the grammar's
words (docs/cli.md: ``PATH: OPTION: PROBLEM``, one line, exit 2, before
any work), not in click's (``Invalid value for '--as-scenario': File 'DIR'
is a directory.``): a file the command writes as ``--output-file DIR``
tells it, ``cannot write: Is a directory``; a file it reads,
``cannot read: Is a directory``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
_STATIC = str(EXAMPLES / "static-dual-socket.yaml")
_WHATIF = [str(EXAMPLES / "whatif" / "trainer-pod.yaml"), "--node", str(EXAMPLES / "whatif" / "node.yaml"),
           "--kubelet-config", str(EXAMPLES / "whatif" / "kubelet-config.yaml")]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
                          timeout=120, check=False)


@pytest.mark.parametrize("args", [
    ["simulate", _STATIC], ["explain", _STATIC], ["restart", _STATIC], ["advise", *_WHATIF],
], ids=lambda a: a[0])
def test_as_scenario_naming_a_directory(tmp_path: Path, args: list[str]) -> None:
    target = tmp_path / "x.yaml"
    target.mkdir()
    proc = _run([*args, "--as-scenario", str(target)])
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"error: {target}: --as-scenario: cannot write: Is a directory\n"
    assert list(target.iterdir()) == []


def test_output_file_says_it_in_the_same_words(tmp_path: Path) -> None:
    proc = _run(["topology", _STATIC, "-o", "json", "--output-file", str(tmp_path)])
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"error: {tmp_path}: --output-file: cannot write: Is a directory\n"


def test_kubeconfig_naming_a_directory(tmp_path: Path) -> None:
    proc = _run(["fleet", "analyze", "--kubeconfig", str(tmp_path)])
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"error: {tmp_path}: --kubeconfig: cannot read: Is a directory\n"
