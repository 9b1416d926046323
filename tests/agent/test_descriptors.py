"""File descriptors: a local client cannot make the agent run out of them,
and running out ends nothing.

* At start the agent raises its soft ``RLIMIT_NOFILE`` as the Go runtime
  raises the kubelet's (to the hard limit minus one).
* 400 idle connections to the PodResources socket of an agent limited to
  256 descriptors: all but the server's connection cap are closed by the
  server at once, the agent lives on and admits a new manifest.
* An agent whose descriptors run out (its soft limit lowered, with
  ``prlimit``, to 2 below the descriptors it holds) logs each failed sync and tries again: a pod
  admitted before is kept (its file could not be opened: not a reason to
  remove it), and once descriptors are free again the new manifest is
  admitted.
* The file watcher started while every descriptor is taken fails, is
  logged and started again later (a real watcher, in a child process that
  takes every descriptor it can).
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from podnuma.grpc import server as grpc_server
from tests.agent.helpers import DEADLINE, ROOT, AgentProcess, classic_pod, write_manifest


@pytest.fixture
def base() -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="pnfd", dir="/tmp"))  # (a short path: a socket's limit)
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _soft_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open files limit")


def _wait_log(a: AgentProcess, msg: str) -> dict[str, object]:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        for rec in a.log_records():
            if rec.get("msg") == msg:
                return rec
        assert a.proc is not None and a.proc.poll() is None, f"agent exited:\n{a.log()[-4000:]}"
        time.sleep(0.05)
    raise AssertionError(f"never logged {msg!r}:\n{a.log()[-4000:]}")


def test_the_open_files_limit_is_raised_at_start(base: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip(f"the hard limit here is {hard}")
    a = AgentProcess(base)
    a.start(nofile=(256, 1024))
    try:
        a.wait_ready()
        assert a.proc is not None
        assert _soft_limit(a.proc.pid) == 1023
        rec = _wait_log(a, "Open files limit raised")
        assert (rec["softLimit"], rec["was"]) == (1023, 256)
    finally:
        assert a.signal() == 0


def test_idle_podresources_connections_use_up_no_descriptors(base: Path) -> None:
    a = AgentProcess(base)
    a.start(nofile=(256, 256))  # (nothing to raise: soft is hard)
    conns: list[socket.socket] = []
    try:
        a.wait_ready()
        for _ in range(400):  # no HTTP/2 preface, nothing: idle connections
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(str(a.socket))
            conns.append(c)
        cap = 256 // 4
        assert cap == min(grpc_server.MAX_CONNECTIONS, 256 // 4)
        # the server closes those past its cap (their end reads as EOF)
        closed: set[int] = set()
        end = time.monotonic() + DEADLINE
        while len(closed) < len(conns) - cap and time.monotonic() < end:
            ready, _, _ = select.select([c for i, c in enumerate(conns) if i not in closed], [], [], 0.5)
            for c in ready:
                try:
                    data = c.recv(4096)
                except OSError:
                    data = b""
                if data == b"":
                    closed.add(conns.index(c))
        assert len(closed) >= len(conns) - cap
        write_manifest(a.manifests, "a.yaml", classic_pod("web"))
        st = a.wait(lambda s: [p["name"] for p in s["pods"]] == ["web-kep-node"], "web admitted")
        assert st["pods"][0]["admitted"]
        assert not [r for r in a.log_records() if r.get("level") == "error"]
    finally:
        for c in conns:
            c.close()
        assert a.signal() == 0


def test_running_out_of_descriptors_ends_nothing(base: Path) -> None:
    a = AgentProcess(base)
    a.start()
    try:
        a.wait_ready()
        write_manifest(a.manifests, "a.yaml", classic_pod("web"))
        before = a.wait(lambda s: len(s["pods"]) == 1, "web admitted")["pods"][0]
        assert a.proc is not None
        pid = a.proc.pid
        limit = resource.prlimit(pid, resource.RLIMIT_NOFILE)
        held = len(os.listdir(f"/proc/{pid}/fd"))
        # no descriptor left (2 below what it holds: one it held for a
        # moment and closes gives it none back)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (held - 2, limit[1]))
        try:
            write_manifest(a.manifests, "b.yaml", classic_pod("db"))
            rec = _wait_log(a, "Sync failed, out of file descriptors: trying again")
            assert "Too many open files" in str(rec["error"])
        finally:
            resource.prlimit(pid, resource.RLIMIT_NOFILE, limit)
        st = a.wait(lambda s: len(s["pods"]) == 2, "db admitted")
        assert [(p["name"], p["uid"], p["admitted"]) for p in st["pods"]] == [
            ("web-kep-node", before["uid"], True), ("db-kep-node", st["pods"][1]["uid"], True)]
        assert not [r for r in a.log_records() if r.get("msg") == "Pod removed"]
        assert a.proc.poll() is None
    finally:
        assert a.signal() == 0


_WATCHER_CHILD = textwrap.dedent("""
    import io, json, logging, os, sys, threading
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from podnuma.agent.core import Agent
    from podnuma.agent.logs import setup_logging
    from podnuma.agent.run import AgentOptions, _watch
    from podnuma.agent.state import StateDir
    from podnuma.inputs.pods import load_config_file, load_node_file
    from tests.agent.helpers import classic_pod, write_manifest
    import watchfiles  # (imported before the descriptors are taken: an import opens files)

    base = Path(sys.argv[1])
    machine, config = load_node_file(base / "node.yaml"), load_config_file(base / "kubelet.yaml")
    seen = threading.Event()
    lines = []

    class Seen(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())
            if record.getMessage().startswith("File watcher failed, out of file descriptors"):
                seen.set()

    log = setup_logging(io.StringIO(), logging.INFO)
    log.addHandler(Seen())
    agent = Agent(machine=machine, config=config, manifests=base / "manifests",
                  state=StateDir(base / "state"), logger=log)
    agent.sync()
    opts = AgentOptions(manifests=base / "manifests", state_dir=base / "state", machine=machine,
                        config=config, podresources_socket=None, resync=1.0)
    taken = []
    while True:  # every descriptor left taken
        try:
            taken.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            break
    stop = threading.Event()
    watching = threading.Thread(target=_watch, args=(agent, opts, stop, log))
    watching.start()
    ok = seen.wait(60)
    for fd in taken:
        os.close(fd)
    write_manifest(base / "manifests", "a.yaml", classic_pod("web"))
    for _ in range(600):
        with agent.lock:
            if agent.records:
                break
        stop.wait(0.1)
    alive = watching.is_alive()
    stop.set()
    watching.join(60)
    print(json.dumps({"seen": ok, "alive": alive, "taken": len(taken),
                      "pods": [r.pod.name for r in agent.records.values()], "log": lines}))
""")


def test_the_watcher_is_started_again_after_running_out(base: Path) -> None:
    a = AgentProcess(base)  # (for its files: node, configuration, manifests)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [sys.executable, "-c", _WATCHER_CHILD, str(base), str(ROOT)],
        capture_output=True, text=True, timeout=DEADLINE * 2, env=env, cwd=str(a.base), check=False,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["taken"] > 0
    assert got["seen"], got["log"]
    assert got["alive"], got["log"]
    assert got["pods"] == ["web-kep-node"], got["log"]
