"""A real podnuma web server (uvicorn on a loopback ephemeral port, in a
thread of the test process) for the API and browser tests.

Without the web extra the tests skip with one line; under CI=true they fail.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

IN_CI = os.environ.get("CI") == "true"


def need(what: str, ok: bool) -> None:
    """Skip (locally) or fail (CI=true) when ``what`` is missing."""
    if ok:
        return
    if IN_CI:
        pytest.fail(f"{what} is missing and CI=true: install it (see CONTRIBUTING.md)")
    pytest.skip(f"{what} is not installed")


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


@contextmanager
def running(**limits: Any) -> Iterator[str]:
    """A server with these limits; yields its base URL."""
    need("the web extra (fastapi, uvicorn)", _importable("fastapi") and _importable("uvicorn"))
    from podnuma.web.app import create_app, make_server
    from podnuma.web.worker import Limits

    app = create_app(Limits(**limits))
    app.state.pool.warm_up()
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    with running() as url:
        yield url


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The server's temporary directory (it runs in this process) for this
    test alone: whatever a request leaves there is seen."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp


def fleet_dumps_left(tmp: Path) -> list[str]:
    """The fleet dump directories the server left in its temporary directory."""
    return sorted(name for name in os.listdir(tmp) if name.startswith("podnuma-fleet-"))
