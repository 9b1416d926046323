"""``podnuma agent`` processes started in milliseconds, for tests that kill
and restart the agent many times.

A parent process (the zygote) imports podnuma's command line, the agent, the
gRPC server and their dependencies once, creates no thread, channel or
server, and then forks on request: the child resets its signal handlers,
points standard error at the agent's log and runs ``podnuma.cli.main(ARGV)``
-- the same entry point as the ``podnuma`` command -- and exits with its
code. What the fork saves is the interpreter start-up and the imports
(about half a second a start here); the child is a separate process, killed
with a real SIGKILL through a pidfd (no PID reuse race).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

_ZYGOTE = r"""
import json, os, signal, sys
import grpc  # noqa: F401  (imported, never initialised: safe to fork)
import podnuma.agent.run, podnuma.cli.agent, podnuma.grpc.server, watchfiles, prometheus_client  # noqa: F401
from podnuma.cli.app import main

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_DFL)
            null = os.open(os.devnull, os.O_RDWR)
            log = os.open(req["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(log, 2)
            code = main(req["argv"])
        finally:
            try:
                sys.stderr.flush()
            finally:
                os._exit(code)
    sys.stdout.write(f"{pid}\n")
    sys.stdout.flush()
"""


class Zygote:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def spawn(self, argv: list[str], log: Path) -> Child:
        """Fork an agent running ``podnuma`` ARGV (without the program name)."""
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps({"argv": argv, "log": str(log)}) + "\n")
        stdin.flush()
        return Child(int(stdout.readline()))

    def close(self) -> None:
        stdin: IO[str] | None = self.proc.stdin
        if stdin is not None:
            stdin.close()
        self.proc.wait(timeout=30)


class Child:
    """A forked agent, with the part of ``subprocess.Popen``'s interface the
    agent tests use. The zygote reaps it, so its exit code is not known:
    ``returncode`` is -9 once it is gone."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd: int | None = os.pidfd_open(pid)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.fd is None:
            return self.returncode
        readable, _, _ = select.select([self.fd], [], [], 0)
        if readable:
            os.close(self.fd)
            self.fd = None
            self.returncode = -signal.SIGKILL
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None and self.fd is not None:
            signal.pidfd_send_signal(self.fd, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        end = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.poll() is None:
            if time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0)
            if self.fd is not None:
                select.select([self.fd], [], [], 0.5)
        assert self.returncode is not None
        return self.returncode
