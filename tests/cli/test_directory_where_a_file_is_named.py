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


_RESTART = str(EXAMPLES / "pod-level" / "restart.yaml")


@pytest.mark.parametrize(("args", "option"), [
    (["compare", _WHATIF[0], "--kubelet-config", "odir"], "--kubelet-config"),
    (["compare", _WHATIF[0], "--node", "odir"], "--node"),
    (["advise", _WHATIF[0], "--kubelet-config", "odir"], "--kubelet-config"),
    (["advise", _WHATIF[0], "--node", "odir/"], "--node"),
    (["state", "inspect", "st", "--pods", "odir"], "--pods"),
    (["state", "inspect", "st", "--node", "odir"], "--node"),
    (["state", "inspect", "st", "--kubelet-config", "odir"], "--kubelet-config"),
    (["restart", "--state-dir", "st", "--pods", "odir"], "--pods"),
    (["restart", "--state-dir", "st", "--node", "odir"], "--node"),
    (["restart", "--state-dir", "st", "--kubelet-config", "odir"], "--kubelet-config"),
    (["agent", "--manifests", "m", "--state-dir", "as", "--node", "odir"], "--node"),
    (["agent", "--manifests", "m", "--state-dir", "as", "--kubelet-config", "odir"], "--kubelet-config"),
])
def test_every_option_naming_a_file_to_read_tells_a_directory_one_way(
    tmp_path: Path, args: list[str], option: str,
) -> None:
    """Every option naming a file the command reads (``--node``,
    ``--kubelet-config``, ``--pods`` of every command, as ``--kubeconfig``)
    tells a directory there as the command line is read, in one wording:
    ``DIR: OPTION: cannot read: Is a directory`` (``odir/`` too), nothing
    done (the agent makes no state directory)."""
    (tmp_path / "odir").mkdir()
    (tmp_path / "m").mkdir()
    made = subprocess.run([*_run_cmd(), "simulate", _RESTART, "--checkpoint-dir", "st"], cwd=tmp_path,
                          capture_output=True, text=True, env=_env(), stdin=subprocess.DEVNULL, timeout=120,
                          check=False)
    assert made.returncode == 0, made.stderr
    proc = subprocess.run([*_run_cmd(), *args], cwd=tmp_path, capture_output=True, text=True, env=_env(),
                          stdin=subprocess.DEVNULL, timeout=120, check=False)
    named = args[args.index(option) + 1]
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr == f"error: {named}: {option}: cannot read: Is a directory\n"
    assert not (tmp_path / "as").exists()


def _run_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "podnuma"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["NO_COLOR"] = "1"
    return env
