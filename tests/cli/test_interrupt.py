"""Ctrl-C ends a command with 130 (128 + SIGINT, what a shell reports for a
command the signal ended) and ``Aborted!``, not with 1, the exit code of a
bug: both on simulate's fast path and through click. The commands wait on
standard input (``-``) when the signal comes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _wait_reading_stdin(pid: int, within: float = 120.0) -> None:
    """Until the process is blocked in read(2) on its standard input (its
    imports done, the command reading the scenario): a signal sent during
    the interpreter's start would end it before the command runs."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            fields = Path(f"/proc/{pid}/syscall").read_text().split()
        except OSError:
            fields = []
        if len(fields) > 1 and fields[0] == "0" and int(fields[1], 16) == 0:  # read(0, ...)
            time.sleep(0.2)  # (and still there a moment later)
            if Path(f"/proc/{pid}/syscall").read_text().split()[:2] == fields[:2]:
                return
        time.sleep(0.05)
    pytest.fail("the command never waited on its standard input")


@pytest.mark.parametrize("args", [["simulate", "-"], ["simulate", "-", "-o", "json"], ["explain", "-"],
                                  ["topology", "-"]])
def test_ctrl_c_exits_130(args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from podnuma.cli import run; run()", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(b"apiVersion: podnuma.io/v1\n")  # a start, then nothing: the reader waits
        proc.stdin.flush()
        _wait_reading_stdin(proc.pid)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert out == b""
    assert err.decode().strip().splitlines()[-1] == "Aborted!"
