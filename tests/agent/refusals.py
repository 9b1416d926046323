"""Helpers for the tests of refused agent starts: a one-shot agent run with
some options changed, a fingerprint of a state directory, a way to run the
agent without the power to bypass file permissions."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.helpers import DEADLINE, ROOT, AgentProcess

PODS = ROOT / "examples" / "agent" / "pods"


def with_options(a: AgentProcess, **changes: str) -> list[str]:
    """``a``'s command line with the options named (``state_dir`` for
    ``--state-dir``) given other values."""
    argv = a.argv()
    for key, value in changes.items():
        flag = "--" + key.replace("_", "-")
        argv[argv.index(flag) + 1] = value
    return argv


def run_once(argv: list[str], prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run an agent that is expected to stop on its own (a refused start)."""
    return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=DEADLINE,
                          check=False, stdin=subprocess.DEVNULL)


def fingerprint(directory: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every entry under ``directory``: inode, mode, modification time and,
    for a regular file, its bytes (a rewrite, even to the same bytes, shows)."""
    out: dict[str, tuple[int, int, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            st = os.lstat(path)
            data = path.read_bytes() if stat.S_ISREG(st.st_mode) else b""
            out[str(path.relative_to(directory))] = (st.st_ino, st.st_mode, st.st_mtime_ns, data)
    return out


def error_lines(stderr: str) -> list[str]:
    """What the agent printed that is not one of its JSON log records."""
    return [line for line in stderr.splitlines() if line and not line.startswith("{")]


def unprivileged() -> tuple[str, ...]:
    """A command prefix that runs a program without the power to bypass
    file permissions: nothing for an ordinary user; for root, ``setpriv``
    dropping the DAC capabilities (root keeps its uid, so the files it
    made stay its own)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot be enforced")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", "--inh-caps=-all")


@contextlib.contextmanager
def serving_db_and_train(prefix: str) -> Iterator[AgentProcess]:
    """An agent that has admitted ``db`` and ``train`` (examples/agent/pods),
    in a directory of its own under /tmp (a short socket path), killed if it
    still runs at the end and its directory removed (made searchable first:
    a test may have taken the permissions away)."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    a = AgentProcess(base)
    try:
        for name in ("db.yaml", "train.yaml"):
            shutil.copy(PODS / name, a.manifests / name)
        a.start()
        a.wait_ready()
        a.wait(lambda s: sum(p["admitted"] for p in s["pods"]) == 2, "db and train admitted")
        yield a
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        for dirpath, dirnames, _ in os.walk(base):
            for name in dirnames:
                os.chmod(Path(dirpath) / name, 0o755)
        shutil.rmtree(base, ignore_errors=True)
