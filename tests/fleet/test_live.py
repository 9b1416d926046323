"""Reading a live cluster through the official client, against a real HTTP
server on loopback that serves recorded API responses (the example dump)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.replay import replay_node
from podnuma.fleet.whatif import parse_what_if

from .conftest import EXAMPLE, need


class _Recorded(BaseHTTPRequestHandler):
    routes: dict[str, Any] = {}
    seen: list[tuple[str, str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        q = parse_qs(url.query)
        self.seen.append(("GET", url.path + ("?continue" if "continue" in q else "")))
        assert self.headers.get("Authorization") == "Bearer recorded-token"
        if url.path == "/api/v1/pods":
            items = self.routes["pods"]["items"]
            half = len(items) // 2
            if "continue" not in q:  # two pages, as an API server with limit= serves them
                self._send(200, {"kind": "PodList", "apiVersion": "v1",
                                 "metadata": {"continue": "page-2"}, "items": items[:half]})
            else:
                assert q["continue"] == ["page-2"]
                self._send(200, {"kind": "PodList", "apiVersion": "v1", "metadata": {},
                                 "items": items[half:]})
            return
        if url.path == "/api/v1/nodes":
            self._send(200, {"kind": "NodeList", "apiVersion": "v1", "metadata": {},
                             "items": self.routes["nodes"]["items"]})
            return
        if url.path == "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies":
            self._send(200, {"kind": "NodeResourceTopologyList", "metadata": {},
                             "apiVersion": "topology.node.k8s.io/v1alpha2",
                             "items": self.routes["nrt"]["items"]})
            return
        parts = url.path.split("/")
        if len(parts) == 7 and parts[1:4] == ["api", "v1", "nodes"] and parts[5:] == ["proxy", "configz"]:
            cfg = self.routes["configz"].get(parts[4])
            if cfg is None:
                self._send(403, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                 "reason": "Forbidden", "code": 403,
                                 "message": "nodes/proxy is forbidden"})
            else:
                self._send(200, cfg)
            return
        self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                         "reason": "NotFound", "message": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(("POST", self.path))
        self._send(405, {})


@pytest.fixture
def server() -> Iterator[str]:
    need("kubernetes")
    _Recorded.routes = {
        "nodes": json.loads((EXAMPLE / "nodes.json").read_text()),
        "pods": json.loads((EXAMPLE / "pods.json").read_text()),
        "nrt": json.loads((EXAMPLE / "noderesourcetopologies.json").read_text()),
        "configz": {p.stem: json.loads(p.read_text()) for p in (EXAMPLE / "configz").glob("*.json")},
    }
    _Recorded.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorded)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    p = tmp_path / "kubeconfig"
    p.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: recorded
  cluster: {{server: "{server}"}}
users:
- name: reader
  user: {{token: recorded-token}}
contexts:
- name: recorded
  context: {{cluster: recorded, user: reader}}
current-context: recorded
""")
    return p


def _strip(r: dict[str, Any]) -> dict[str, Any]:
    """A node report without the names of the files it came from."""
    out = {k: v for k, v in r.items() if k not in ("configSource", "topologySource", "issues")}
    out["issues"] = sorted(i["message"] for i in r.get("issues", []))
    return out


def test_live_cluster_reads_like_the_dump(tmp_path: Path, server: str) -> None:
    from podnuma.fleet.live import load_live

    fleet = load_live(str(_kubeconfig(tmp_path, server)), extra=[EXAMPLE / "fleet.yaml"])
    dump = load_fleet([EXAMPLE])
    assert [n.name for n in fleet.nodes] == [n.name for n in dump.nodes]
    w = [parse_what_if("pod-level,scope=pod")]
    live = {n.name: _strip(replay_node(n, w)) for n in fleet.nodes}
    files = {n.name: _strip(replay_node(n, w)) for n in dump.nodes}
    assert live == files
    assert any(n.config_source.startswith("configz <live cluster>") for n in fleet.nodes)
    # Read-only: GETs only; the pods came in two pages.
    methods = {m for m, _ in _Recorded.seen}
    assert methods == {"GET"}
    assert ("GET", "/api/v1/pods?continue") in _Recorded.seen
    # Nodes whose configz is forbidden are said so, and fall back to the node groups.
    c1 = next(n for n in fleet.nodes if n.name == "ip-10-20-1-88.eu-west-1.compute.internal")
    assert c1.config_source.startswith("group general")
    assert any("403" in i.message for i in fleet.issues if i.node == c1.name)


def test_unreachable_api_server_is_an_input_error(tmp_path: Path) -> None:
    need("kubernetes")
    import socket

    from podnuma.errors import InputError
    from podnuma.fleet.live import load_live

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(InputError, match="cannot reach the API server"):
        load_live(str(_kubeconfig(tmp_path, f"http://127.0.0.1:{port}")))
