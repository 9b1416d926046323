"""The agent's metrics port: bounded means. Clients that open connections
and send nothing are closed after the idle time and never hold more than
the connection cap; a scrape is answered meanwhile."""

from __future__ import annotations

import socket
import threading
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


def test_a_bad_address_is_an_os_error() -> None:
    with pytest.raises(OSError):
        AgentMetrics().serve(0, "no-such-host.invalid")
