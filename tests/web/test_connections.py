"""``podnuma serve`` under many connections and odd request heads, on a
real server process: a flood of connections that never finish their head
leaves a new client an answer at once (the soft ``RLIMIT_NOFILE`` raised
as the agent raises it; where the hard limit is low, the connections past
the server's cap answered 503 as they open), with no traceback; a request
giving both ``Content-Length`` and ``Transfer-Encoding`` (the shape of a
request-smuggling attempt) is answered and its connection closed (RFC
9112, 6.3: "the server MUST close the connection after responding to such
a request"), a request pipelined behind it left unanswered."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import podnuma

from .conftest import _importable, need

SRC = str(Path(podnuma.__file__).parents[1])


def _soft_limit() -> None:
    """A common soft limit of open files (the hard one as it is)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))


def _hard_limit() -> None:
    """A hard limit of 256 open files: the server cannot raise it."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


@pytest.mark.parametrize(("limit", "answer"), [(_soft_limit, {200}), (_hard_limit, {200, 503})], ids=["soft", "hard"])
def test_a_flood_of_idle_connections_keeps_no_client_waiting(tmp_path: Path, limit: Any, answer: set[int]) -> None:
    """300 connections that never finish their request head, then a
    client's ``GET``: answered within 2 s (under a soft limit of 256 files,
    raised, it is served; under a hard one it is served or, when the
    server holds its cap of connections, answered 503 at once), and the server's standard error holds no
    traceback."""
    need("the web extra (fastapi, uvicorn)", _importable("fastapi") and _importable("uvicorn"))
    err = (tmp_path / "stderr").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "podnuma.cli", "serve", "-p", "0", "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=err, text=True, env={**os.environ, "PYTHONPATH": SRC, "PYTHONUNBUFFERED": "1"},
        preexec_fn=limit,
    )  # fmt: skip
    socks: list[socket.socket] = []
    try:
        deadline = time.monotonic() + 60
        found = None
        while found is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
            found = re.search(r"serving on http://127\.0\.0\.1:(\d+)/", (tmp_path / "stderr").read_text())
        assert found, (tmp_path / "stderr").read_text()
        port = int(found.group(1))
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never finished
            socks.append(s)
        time.sleep(0.5)
        started = time.monotonic()
        outcome: object
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/defaults", timeout=10) as r:
                outcome = r.status
        except urllib.error.HTTPError as e:
            outcome = e.code
        except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
            outcome = repr(e)
        waited = time.monotonic() - started
        assert waited < 2.0, f"a new client waited {waited:.1f} s ({outcome}) behind 300 idle connections"
        assert outcome in answer
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait(15)
        err.seek(0)
        stderr = err.read()
        err.close()
    assert "Traceback" not in stderr, stderr[-2000:]


def test_a_request_with_both_body_lengths_closes_its_connection(server: str) -> None:
    """The request, then a ``GET`` pipelined behind it on the same
    connection: one answer, then the connection closed."""
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"POST /api/simulate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        time.sleep(0.3)
        with contextlib.suppress(OSError):  # (a server that closed at once: the send may fail)
            s.sendall(b"GET /api/defaults HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        got = b""
        started = time.monotonic()
        s.settimeout(2)
        try:
            while time.monotonic() - started < 3:
                data = s.recv(65536)
                if not data:
                    break
                got += data
        except (TimeoutError, OSError):
            pass
    answers = re.findall(rb"HTTP/1\.1 (\d{3})", got)
    assert len(answers) == 1, f"answers on one connection: {answers} (the connection was kept open)"
    assert answers[0].startswith(b"4") or answers[0] == b"200", answers
