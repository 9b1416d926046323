"""How the server uses its connections: every answer leaves at once."""

from __future__ import annotations

import http.client
import socket
import threading
import time

from tests.web.conftest import _importable, need


def test_answers_are_not_held_back_by_nagle() -> None:
    """Every accepted TCP connection has TCP_NODELAY set: an answer's head
    and body are separate writes, and without it the body waits for the
    client's delayed acknowledgement of the head (tens of milliseconds a
    request). The listening socket is made as ``podnuma serve`` makes it
    (``socket.create_server``, on which asyncio does not set the option
    itself)."""
    need("the web extra (fastapi, uvicorn)", _importable("fastapi") and _importable("uvicorn"))
    from podnuma.web.app import create_app, make_server
    from podnuma.web.worker import Limits

    app = create_app(Limits(workers=1))
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "the server did not start"
            time.sleep(0.02)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/defaults", headers={"Host": "127.0.0.1"})
        resp = conn.getresponse()
        assert resp.status == 200
        resp.read()
        connections = list(server.server_state.connections)
        assert len(connections) == 1
        accepted = connections[0].transport.get_extra_info("socket")
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        conn.close()
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
        app.state.pool.kill_all()
