"""One agent per state directory: a second agent on the same ``--state-dir``
is refused (whatever its socket, whatever its manifests) before it restores,
syncs or cleans anything, so the running agent's checkpoints, status file
and temporary files are left as they are. And a state directory removed
while the agent runs is told as such."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from podnuma.grpc import client
from tests.agent.helpers import DEADLINE, STATUS, AgentProcess
from tests.agent.refusals import (
    error_lines,
    fingerprint,
    run_once,
    serving_db_and_train,
    with_options,
)

LOCK = "podnuma-agent.lock"


@pytest.fixture
def running() -> Iterator[AgentProcess]:
    """An agent serving ``db`` and ``train`` (examples/agent/pods)."""
    with serving_db_and_train("pnl") as a:
        yield a


def _served(a: AgentProcess) -> dict[str, list[int]]:
    with client.connect(a.socket) as stub:
        return {p.name: sorted(p.cpu_ids) for p in client.list_pods(stub).pod_resources}


def _checkpoints(a: AgentProcess) -> dict[str, tuple[int, int, int, bytes]]:
    """The state directory's fingerprint but the status file, which the
    running agent rewrites at every resync."""
    return {name: entry for name, entry in fingerprint(a.state).items() if name != STATUS}


def _refused_for_the_lock(a: AgentProcess, argv: list[str]) -> None:
    proc = run_once(argv)
    assert proc.returncode == 2, proc.stderr
    status = a.status()  # (the running agent's, not the refused one's)
    assert status is not None and status["pid"] == a.proc.pid and len(status["pods"]) == 2  # type: ignore[union-attr]
    assert error_lines(proc.stderr) == [
        f"error: {a.state}: another agent is running on this state directory (it holds {LOCK}); "
        "one agent per state directory"
    ], proc.stderr


@pytest.mark.parametrize("socket", ["same", "other"])
def test_second_agent_refused_and_the_state_untouched(running: AgentProcess, socket: str) -> None:
    a = running
    served = _served(a)
    assert served["train-kep-node"] == [4, 5, 6, 7]
    before = _checkpoints(a)
    sock = str(a.socket) if socket == "same" else str(a.base / "other.sock")
    _refused_for_the_lock(a, with_options(a, podresources_socket=sock))
    assert _checkpoints(a) == before
    assert not (a.base / "other.sock").exists()
    assert _served(a) == served  # the first agent serves on, unchanged


def test_second_agent_with_no_manifests_wipes_nothing(running: AgentProcess) -> None:
    a = running
    empty = a.base / "empty"
    empty.mkdir()
    before = _checkpoints(a)
    _refused_for_the_lock(a, with_options(a, manifests=str(empty), podresources_socket=str(a.base / "o.sock")))
    assert _checkpoints(a) == before


def test_second_agent_leaves_the_running_agents_temporary_files(running: AgentProcess) -> None:
    a = running
    # a checkpoint write of the running agent under way (staged, not renamed yet)
    staged = a.state / ".cpu_manager_state.0123456789ab"
    staged.write_bytes(b"{")
    _refused_for_the_lock(a, with_options(a, podresources_socket=str(a.base / "o.sock")))
    assert staged.read_bytes() == b"{"
    staged.unlink()


def test_the_lock_goes_with_the_agent(running: AgentProcess) -> None:
    """Stopped (or killed: the kernel drops the lock with the process), the
    directory is free for the next agent, which restores from it."""
    a = running
    assert a.signal() == 0
    assert (a.state / LOCK).is_file()  # (kept: removing it would race with a starting agent)
    a.start()
    a.wait_ready()  # (its status file, written by this new process)
    a.kill()
    a.start()
    a.wait_ready()


def test_a_symlinked_lock_file_is_not_followed() -> None:
    base = Path(tempfile.mkdtemp(prefix="pnl", dir="/tmp"))
    try:
        a = AgentProcess(base)
        a.state.mkdir()
        target = base / "elsewhere"
        target.write_text("x")
        os.symlink(target, a.state / LOCK)
        proc = run_once(a.argv())
        assert proc.returncode == 2, proc.stderr
        assert error_lines(proc.stderr) == [
            f"error: {a.state}: cannot open its lock file {LOCK}: it is a symlink (not followed)"
        ], proc.stderr
        assert target.read_text() == "x"
        assert sorted(os.listdir(a.state)) == [LOCK]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_state_directory_removed_while_running(running: AgentProcess) -> None:
    """The agent stops (exit 2) saying what happened at run time, not
    blaming its command line; its last log record says it stopped."""
    a = running
    shutil.rmtree(a.state)
    assert a.proc is not None
    assert a.proc.wait(timeout=DEADLINE) == 2, a.log()
    lines = error_lines(a.log())
    assert lines == [
        f"error: {a.state}: the state directory was removed while the agent ran, its checkpoints "
        "with it; the agent stopped (started again, it admits the manifests' pods on a fresh state)"
    ], a.log()
    assert "--state-dir" not in a.log()
    assert a.log_records()[-1]["msg"] == "Agent stopped"
    assert not a.state.exists()  # (not made again behind the operator's back)
    assert not a.socket.exists()


def test_state_directory_replaced_while_running(running: AgentProcess) -> None:
    """Removed and made again (empty): the same, and nothing is written
    into the new directory, which this agent does not hold the lock of."""
    a = running
    shutil.rmtree(a.state)
    a.state.mkdir()
    assert a.proc is not None
    assert a.proc.wait(timeout=DEADLINE) == 2, a.log()
    assert error_lines(a.log())[-1].startswith(
        f"error: {a.state}: the state directory was removed while the agent ran"), a.log()
    assert os.listdir(a.state) == []
