"""A unix socket an option names is told as every other path an option
names (docs/cli.md: ``PATH: OPTION: PROBLEM``, one line, exit 2, before
anything is done): ``podresources list|get|allocatable --socket`` (a client:
the socket must be there) and the agent's ``--podresources-socket`` (the
agent creates it). ``-`` is standard input or output for a file, and a
socket is neither: it is refused, never a socket named ``-``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["NO_COLOR"] = "1"
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=60, check=False)


def _refused(proc: subprocess.CompletedProcess[str], path: str, option: str) -> str:
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {path}: {option}: "), lines[0]
    return lines[0][len(f"error: {path}: {option}: "):]


@pytest.mark.parametrize("sub", [["list"], ["allocatable"], ["get", "default", "db"]], ids=lambda s: s[0])
def test_a_missing_socket_is_named_with_its_option(tmp_path: Path, sub: list[str]) -> None:
    missing = tmp_path / "kubelet.sock"
    proc = _run(["podresources", *sub, "--socket", str(missing)])
    assert _refused(proc, str(missing), "--socket") == "no such socket"


def test_what_is_no_socket_is_told_by_its_kind(tmp_path: Path) -> None:
    """A regular file is not dialled (gRPC's ``Connection refused`` said
    nothing of what was there); a directory is not told in click's words."""
    plain = tmp_path / "kubelet.sock"
    plain.write_text("not a socket\n")
    assert _refused(_run(["podresources", "list", "--socket", str(plain)]), str(plain), "--socket") \
        == "not a socket (a regular file)"
    assert _refused(_run(["podresources", "list", "--socket", str(tmp_path)]), str(tmp_path), "--socket") \
        == "not a socket (a directory)"


def test_dash_names_no_socket() -> None:
    proc = _run(["podresources", "list", "--socket", "-"])
    assert _refused(proc, "-", "--socket").startswith("'-' names no socket")


def test_a_socket_there_is_taken(tmp_path: Path) -> None:
    """A socket with no server behind it passes the option's check and is
    dialled: what fails is the connection, told as such."""
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.bind(str(path))  # (bound, not listening: connections are refused)
        proc = _run(["podresources", "list", "--socket", str(path)])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {path}: cannot connect: "), proc.stderr


def test_the_agent_refuses_dash_and_writes_nothing(tmp_path: Path) -> None:
    """docs/cli.md: nothing is ever written to a file named ``-``; the
    agent does not start (no socket ``./-``, no state directory)."""
    work = tmp_path / "cwd"
    work.mkdir()
    proc = _run(["agent", "--manifests", str(EXAMPLES / "agent" / "pods"), "--state-dir", str(tmp_path / "s"),
                 "--podresources-socket", "-"], cwd=work)
    assert _refused(proc, "-", "--podresources-socket").startswith("'-' names no socket")
    assert list(work.iterdir()) == []
    assert not (tmp_path / "s").exists()


def test_the_agent_tells_a_directory_in_the_grammar_s_words(tmp_path: Path) -> None:
    proc = _run(["agent", "--manifests", str(EXAMPLES / "agent" / "pods"), "--state-dir", str(tmp_path / "s"),
                 "--podresources-socket", str(tmp_path)])
    assert _refused(proc, str(tmp_path), "--podresources-socket") == "not a socket (a directory)"
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(("args", "option"), [
    (["podresources", "list", "--socket"], "--socket"),
    (["agent", "--podresources-socket"], "--podresources-socket"),
])
def test_a_trailing_slash_changes_nothing_in_the_wording(tmp_path: Path, args: list[str], option: str) -> None:
    """A directory named as a socket with a trailing ``/`` (``sd/``) is told
    as without it, ``not a socket (a directory)``; so is a missing client
    socket, ``no such socket``: one wording for one path."""
    (tmp_path / "sd").mkdir()
    for given in ("sd", "sd/"):
        assert _refused(_run([*args, given], cwd=tmp_path), given, option) == "not a socket (a directory)"
    if option == "--socket":
        for given in ("nosuch", "nosuch/"):
            assert _refused(_run([*args, given], cwd=tmp_path), given, option) == "no such socket"
