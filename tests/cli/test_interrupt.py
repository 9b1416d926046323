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

import pytest


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
        time.sleep(2.0)  # imported and reading (a signal before the handler is installed ends it the same way)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err.decode()
    assert out == b""
    assert err.decode().strip().splitlines()[-1] == "Aborted!"
