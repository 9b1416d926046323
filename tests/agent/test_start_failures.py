"""Starts the agent refuses: each with one line naming the path and the
cause, exit 2, and before anything of the state directory is restored,
synced or written (the checkpoints, the status file, temporary files are
left as they are). Real processes, real unix sockets."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.helpers import AgentProcess
from tests.agent.refusals import (
    error_lines,
    fingerprint,
    run_once,
    serving_db_and_train,
    unprivileged,
    with_options,
)


@pytest.fixture
def settled() -> Iterator[AgentProcess]:
    """A state directory an agent left (``db`` and ``train`` admitted, then
    stopped): a start that got as far as restoring it would rewrite it (its
    status file at least; and ``train``, restored, is rejected)."""
    with serving_db_and_train("pns") as a:
        assert a.signal() == 0
        yield a


def _refused(a: AgentProcess, argv: list[str], line: str, prefix: tuple[str, ...] = ()) -> None:
    """The start is refused with exactly ``line`` (besides log records),
    exit 2, and the state directory is as it was."""
    before = fingerprint(a.state)
    proc = run_once(argv, prefix)
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [line], proc.stderr
    assert fingerprint(a.state) == before


def test_a_live_server_on_the_socket(settled: AgentProcess) -> None:
    a = settled
    (a.base / "other").mkdir()
    other = AgentProcess(a.base / "other")
    try:
        other.start()
        other.wait_ready()
        _refused(a, with_options(a, podresources_socket=str(other.socket)),
                 f"error: {other.socket}: another server is listening on this socket")
    finally:
        other.signal()


def test_a_file_at_the_socket_path(settled: AgentProcess) -> None:
    a = settled
    plain = a.base / "plain"
    plain.write_text("x")
    _refused(a, with_options(a, podresources_socket=str(plain)), f"error: {plain}: exists and is not a socket")
    assert plain.read_text() == "x"


def test_a_socket_path_too_long(settled: AgentProcess) -> None:
    a = settled
    long = a.base / ("d" * 120) / "k.sock"
    size = len(os.fsencode(long))
    _refused(a, with_options(a, podresources_socket=str(long)),
             f"error: {long}: socket path is {size} bytes, longer than the 107 a unix socket address holds "
             "(give a shorter path, e.g. a relative one)")
    assert not long.parent.exists()


def test_a_file_where_the_sockets_directory_goes(settled: AgentProcess) -> None:
    a = settled
    afile = a.base / "afile"
    afile.write_text("x")
    _refused(a, with_options(a, podresources_socket=str(afile / "k.sock")),
             f"error: {afile / 'k.sock'}: cannot make its directory: {afile} is not a directory")
    _refused(a, with_options(a, podresources_socket=str(afile / "sub" / "k.sock")),
             f"error: {afile / 'sub' / 'k.sock'}: cannot make its directory: {afile} is not a directory")


def test_the_metrics_port_taken(settled: AgentProcess) -> None:
    a = settled
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = f"error: --metrics-port: cannot listen on 127.0.0.1:{port}: Address already in use"
        _refused(a, [*a.argv(), "--metrics-port", str(port)], line)


def _locked_dirs(base: Path) -> tuple[Path, Path]:
    """``base/perm/nox`` (mode 0600: not searchable) and ``base/perm/ro``
    (mode 0555: not writable)."""
    nox = base / "perm" / "nox"
    ro = base / "perm" / "ro"
    nox.mkdir(parents=True)
    ro.mkdir()
    (nox / "m").mkdir()
    nox.chmod(0o600)
    ro.chmod(0o555)
    return nox, ro


def test_a_socket_in_a_directory_that_cannot_be_searched(settled: AgentProcess) -> None:
    a = settled
    prefix = unprivileged()
    nox, _ = _locked_dirs(a.base)
    sock = nox / "k.sock"
    _refused(a, with_options(a, podresources_socket=str(sock)),
             f"error: {sock}: cannot reach it: Permission denied (a directory on the way cannot be searched)",
             prefix)


def test_manifests_in_a_directory_that_cannot_be_searched(settled: AgentProcess) -> None:
    a = settled
    prefix = unprivileged()
    nox, _ = _locked_dirs(a.base)
    m = nox / "m"
    _refused(a, with_options(a, manifests=str(m)),
             f"error: {m}: --manifests: cannot reach it: Permission denied "
             "(a directory on the way cannot be searched)", prefix)


def test_manifests_that_cannot_be_listed_or_searched(settled: AgentProcess) -> None:
    a = settled
    prefix = unprivileged()
    m = a.base / "m"
    m.mkdir()
    try:
        m.chmod(0o300)  # (refused by the command line's own check: it cannot be read)
        before = fingerprint(a.state)
        proc = run_once(with_options(a, manifests=str(m)), prefix)
        assert proc.returncode == 2, proc.stderr
        (line,) = error_lines(proc.stderr)
        assert line == f"error: {m}: --manifests: cannot read: Permission denied", line
        assert fingerprint(a.state) == before
        m.chmod(0o600)
        _refused(a, with_options(a, manifests=str(m)),
                 f"error: {m}: --manifests: cannot search it: Permission denied", prefix)
    finally:
        m.chmod(0o755)


def test_a_state_directory_that_cannot_be_reached(settled: AgentProcess) -> None:
    a = settled
    prefix = unprivileged()
    nox, _ = _locked_dirs(a.base)
    state = nox / "state"
    proc = run_once(with_options(a, state_dir=str(state)), prefix)
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == [
        f"error: {state}: --state-dir: cannot reach it: Permission denied "
        "(a directory on the way cannot be searched)"
    ], proc.stderr


def test_a_socket_in_a_read_only_directory(settled: AgentProcess) -> None:
    """The cause, under the path given (not gRPC's temporary name), and no
    line of gRPC's own logging."""
    a = settled
    prefix = unprivileged()
    _, ro = _locked_dirs(a.base)
    sock = ro / "k.sock"
    _refused(a, with_options(a, podresources_socket=str(sock)),
             f"error: {sock}: cannot listen: Permission denied", prefix)
    assert os.listdir(ro) == []
