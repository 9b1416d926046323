"""``SIGTERM`` (``timeout``, ``kill``, a container stopped) stops a command
as Ctrl-C does, its clean-up included, and the process then ends by the
signal (a shell reports 143), silently: a ``fleet generate`` stopped half
way leaves no staging directory (and runs again into the same directory);
a picture stopped while it is written leaves no temporary file and no
target; a command waiting on its input ends without ``Aborted!``. A
process started with ``SIGTERM`` ignored keeps ignoring it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_interrupt import _wait_reading_stdin

ROOT = Path(__file__).resolve().parents[2]
RUN = [sys.executable, "-c", "from podnuma.cli import run; run()"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra)
    return env


def _until(cond: Callable[[], bool], proc: subprocess.Popen[bytes], within: float = 120.0) -> None:
    end = time.monotonic() + within
    while not cond():
        assert proc.poll() is None, "the command ended before the signal"
        assert time.monotonic() < end, "never reached the point to stop it at"
        time.sleep(0.01)


def _terminated(proc: subprocess.Popen[bytes]) -> bytes:
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGTERM, err.decode()
    return err


def test_fleet_generate_stopped_leaves_nothing_and_runs_again(tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    proc = subprocess.Popen([*RUN, "-q", "fleet", "generate", "--nodes", "3000", "--pods-per-node", "50",
                             "--output-dir", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env())

    def staged() -> bool:
        return out.is_dir() and any(p.name.startswith(".podnuma-staging") and any(p.iterdir())
                                    for p in out.iterdir())

    _until(staged, proc)
    assert _terminated(proc) == b""
    assert not out.exists() or list(out.iterdir()) == []
    again = subprocess.run([*RUN, "-q", "fleet", "generate", "--nodes", "2", "--pods-per-node", "2",
                            "--output-dir", str(out)], capture_output=True, env=_env(), timeout=120)
    assert again.returncode == 0, again.stderr.decode()
    assert (out / "nodes.json").is_file()


def test_a_picture_stopped_while_written_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "pic.svg"
    proc = subprocess.Popen([*RUN, "topology", str(ROOT / "examples/pod-level/pod-scope-2-mixed.yaml"),
                             "--output-file", str(target)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(PODNUMA_FAULT_WRITE_PAUSE="60"), cwd=tmp_path)
    # (half the picture written to its temporary file, the rest held back)
    _until(lambda: any(p.name.startswith(".pic.svg.") and p.stat().st_size > 0
                       for p in tmp_path.iterdir()), proc)
    assert _terminated(proc) == b""
    assert list(tmp_path.iterdir()) == []


def test_a_command_waiting_on_its_input_ends_silently() -> None:
    proc = subprocess.Popen([*RUN, "simulate", "-", "-o", "json"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert proc.stdin is not None
    proc.stdin.write(b"apiVersion: podnuma.io/v1\n")
    proc.stdin.flush()
    _wait_reading_stdin(proc.pid)
    assert _terminated(proc) == b""


def test_sigterm_ignored_at_the_start_stays_ignored() -> None:
    proc = subprocess.Popen([*RUN, "simulate", "-", "-o", "json"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                            preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"apiVersion: podnuma.io/v1\n")
        proc.stdin.flush()
        _wait_reading_stdin(proc.pid)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.communicate(timeout=60)


@pytest.mark.parametrize("args", [["simulate", "-"], ["explain", "-"]])
def test_no_aborted_line_on_sigterm(args: list[str]) -> None:
    proc = subprocess.Popen([*RUN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env())
    assert proc.stdin is not None
    proc.stdin.write(b"apiVersion: podnuma.io/v1\n")
    proc.stdin.flush()
    _wait_reading_stdin(proc.pid)
    assert b"Aborted" not in _terminated(proc)
