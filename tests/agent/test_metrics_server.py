"""The agent's metrics port: bounded means. Clients that open connections
and send nothing, or trickle a request head in a byte at a time, are closed
once the time for the head (counted from the connection's start) is out,
and never hold more than the connection cap; a scrape is answered
meanwhile; a burst of connections is queued by the kernel, not dropped."""

from __future__ import annotations

import select
import socket
import threading
import time
import urllib.request

import pytest

from podnuma.agent import metrics as metrics_mod
from podnuma.agent.metrics import AgentMetrics


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return str(r.read().decode())


def _closed(conn: socket.socket, within: float) -> bool:
    """Whether the server closes ``conn`` (reads its end) within ``within`` s."""
    conn.settimeout(within)
    try:
        return conn.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_idle_connections_are_capped_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics_mod._Handler, "timeout", 1.0)
    m = AgentMetrics()
    m.admissions.labels(result="admitted", reason="").inc()
    server = m.serve(0)
    port = server.server_port
    idle = []
    try:
        for _ in range(metrics_mod.MAX_CONNECTIONS):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        # one more while all are held: closed at once, not served
        extra = socket.create_connection(("127.0.0.1", port), timeout=10)
        assert _closed(extra, within=5)
        extra.close()
        threads = [t for t in threading.enumerate() if t.name.startswith("Thread") and t.daemon]
        assert len(threads) <= metrics_mod.MAX_CONNECTIONS + 1
        # the idle ones are closed by the server after the idle time
        assert all(_closed(c, within=10) for c in idle)
        text = _scrape(port)  # and a scrape is served again
        assert 'podnuma_agent_admissions_total{reason="",result="admitted"} 1.0' in text
    finally:
        for c in idle:
            c.close()
        server.shutdown()
        server.server_close()


def test_a_scrape_is_answered_beside_slow_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics_mod._Handler, "timeout", 30.0)
    m = AgentMetrics()
    server = m.serve(0)
    port = server.server_port
    slow = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(4)]
    try:
        for c in slow:
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # a request head never ended
        assert "podnuma_agent_exclusive_cpus" in _scrape(port)
    finally:
        for c in slow:
            c.close()
        server.shutdown()
        server.server_close()


def _trickle_until_closed(conns: list[socket.socket], within: float) -> list[bool]:
    """Send each connection one more byte of a request line every 0.25 s
    (far less than the 1 s the test gives a head) until the server has
    closed them all or ``within`` seconds have passed; which were closed."""
    closed = [False] * len(conns)
    end = time.monotonic() + within
    while not all(closed) and time.monotonic() < end:
        for i, c in enumerate(conns):
            if closed[i]:
                continue
            try:
                c.sendall(b"G")
            except OSError:  # (broken pipe, reset: the server closed it)
                closed[i] = True
        time.sleep(0.25)
        for i, c in enumerate(conns):
            if not closed[i]:
                c.setblocking(False)
                try:
                    closed[i] = c.recv(1) == b""
                except BlockingIOError:
                    pass
                except OSError:
                    closed[i] = True
    return closed


def test_a_request_head_trickled_in_is_closed_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every slot held by a client sending a byte every 0.25 s: no read
    waits the 1 s, yet each connection is closed once 1 s has passed since
    it was made (a per-read timeout would keep them for ever), and a
    scrape is answered again."""
    monkeypatch.setattr(metrics_mod._Handler, "timeout", 1.0)
    m = AgentMetrics()
    server = m.serve(0)
    port = server.server_port
    conns = [socket.create_connection(("127.0.0.1", port), timeout=10)
             for _ in range(metrics_mod.MAX_CONNECTIONS)]
    try:
        assert all(_trickle_until_closed(conns, within=60))
        assert "podnuma_agent_exclusive_cpus" in _scrape(port)
    finally:
        for c in conns:
            c.close()
        server.shutdown()
        server.server_close()


def test_a_burst_of_connections_is_queued_by_the_kernel() -> None:
    """The listen backlog holds 100 connections made at once while the
    server accepts none (Python's default backlog, 5, leaves all but about
    6 of them unanswered by the kernel)."""
    server = AgentMetrics().bind(0)
    port = server.server_port
    conns = []
    try:
        for _ in range(100):
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            conns.append(c)
        pending = list(conns)
        end = time.monotonic() + 30
        while pending and time.monotonic() < end:
            _, writable, _ = select.select([], pending, [], 0.5)
            for c in writable:
                assert c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
                pending.remove(c)
        assert not pending, f"{len(pending)} of 100 connections never made"
    finally:
        for c in conns:
            c.close()
        server.server_close()


def test_a_bad_address_is_an_os_error() -> None:
    with pytest.raises(OSError):
        AgentMetrics().serve(0, "no-such-host.invalid")
