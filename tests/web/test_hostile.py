"""Hostile clients of a real server (uvicorn on a loopback port): a 9-level
YAML alias bomb on every endpoint, a client trickling its request, a
cross-origin form post, SIGTERM with a request in flight, and a sandboxed
job reaching numpy."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from tests.web.conftest import running
from tests.web.test_api import call, heavy_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

def bomb_lines(indent: int, levels: int = 9) -> str:
    pad = " " * indent
    lines = [f'{pad}l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"{pad}l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


POD_BOMB = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
    "  - name: c\n    resources: {limits: {cpu: '1', memory: 1Gi}}\n"
    "    env:\n    - name: A\n      value: b\n      xbomb:\n" + bomb_lines(8)
)
NODES_BOMB = (
    "apiVersion: v1\nkind: NodeList\nitems:\n- kind: Node\n  metadata:\n    name: n\n    xbomb:\n"
    + bomb_lines(6)
)
SCENARIO_BOMB = (
    "apiVersion: podnuma.io/v1\nkind: Scenario\nnode:\n  name: n\n"
    "  synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 4, threadsPerCore: 1,"
    " memoryPerNumaNode: 8Gi}\n"
    "steps:\n- addPod:\n    metadata: {name: p}\n    spec:\n      containers:\n"
    "      - name: c\n        resources: {limits: {cpu: '1', memory: 1Gi}}\n"
    "        xbomb:\n" + bomb_lines(10)
)
NODE_BOMB = "name: n\nxbomb:\n" + bomb_lines(2)
CONFIG_BOMB = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nxbomb:\n" + bomb_lines(2)


def test_the_bombs_are_small() -> None:
    for text in (POD_BOMB, SCENARIO_BOMB, NODE_BOMB, CONFIG_BOMB):
        assert len(text) < 1200


def requests() -> list[tuple[str, bytes, str]]:
    out: list[tuple[str, bytes, str]] = []
    for path in ("/api/simulate", "/api/simulate?detail=true", "/api/explain",
                 "/api/topology", "/api/topology?format=json"):
        out.append((path, SCENARIO_BOMB.encode(), "application/yaml"))
    for path in ("/api/compare", "/api/advise"):
        for body in ({"pod": POD_BOMB}, {"pod": POD_BOMB.replace("xbomb:\n" + bomb_lines(8), "")
                                         .rstrip() + "\n", "node": NODE_BOMB},
                     {"pod": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                      "spec: {containers: [{name: c}]}\n", "kubeletConfig": CONFIG_BOMB},
                     {"scenario": SCENARIO_BOMB, "step": 0}):
            out.append((path, json.dumps(body).encode(), "application/json"))
    # JSON has no aliases: the bomb is malformed JSON there
    out.append(("/api/fleet/html", SCENARIO_BOMB.encode(), "application/json"))
    # a dump whose only file is a bomb: nothing to report but that file's error
    out.append(("/api/fleet/analyze", json.dumps({"files": {"nodes.yaml": NODES_BOMB}}).encode(),
                "application/json"))
    return out


def test_alias_bomb_on_every_endpoint_is_a_quick_4xx() -> None:
    """Every endpoint refuses the bomb as the input it is (the alias named,
    or malformed JSON): a 4xx saying so, never the time limit's or the
    memory limit's answer of a job that expanded it."""
    with running(time_limit=20.0, workers=2) as url:
        results: dict[int, tuple[int, bytes]] = {}
        cases = requests()

        def send(i: int, path: str, body: bytes, ctype: str) -> None:
            status, _, data = call(url + path, body, ctype)
            results[i] = (status, data)

        threads = [threading.Thread(target=send, args=(i, *case), daemon=True)
                   for i, case in enumerate(cases)]
        for t in threads:
            t.start()
        # the server answers other requests meanwhile
        status, _, listed = call(url + "/api/examples")
        assert status == 200 and json.loads(listed)
        for t in threads:
            t.join(120)  # (a hang guard)
        assert len(results) == len(cases)
        for i, (path, _, _) in enumerate(cases):
            status, data = results[i]
            assert 400 <= status < 500, (path, status, data[:300])
            message = json.loads(data)["error"]
            assert "the server's limit" not in message and "memory" not in message, (path, message)
            if path == "/api/fleet/html":
                # (JSON has no aliases: the first byte is malformed)
                assert message == "fleet-report.json: invalid JSON: Expecting value (line 1, column 1)"
            else:
                assert "alias" in message and "xbomb" in message, (path, message)
            assert len(data) < 2000


def test_alias_bomb_cli_exits_2(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD_BOMB)
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "advise", "pod.yaml", "-o", "json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    # a bad input: nothing on standard output, the one error line
    assert proc.stdout == ""
    assert re.fullmatch(r"error: pod\.yaml: spec\.containers\[0\]\.env\[0\]\.xbomb\.l\d.*alias.*\n",
                        proc.stderr), proc.stderr


def _connect(url: str) -> socket.socket:
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _trickle(sock: socket.socket, data: bytes, every: float, guard: float) -> tuple[bool, bytes]:
    """Send ``data`` a byte every ``every`` seconds: whether the server
    closed the connection before it was all sent, and what it answered
    first (a hang guard of ``guard`` seconds ends the sending: not closed)."""
    end = time.monotonic() + guard
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return True, b""
        sock.settimeout(every)
        try:
            got = sock.recv(4096)
        except TimeoutError:
            got = None
        except OSError:
            return True, b""
        if got is not None:
            # an answer (408) then the close, or the close itself; a reset
            # is the close too (the server closes with our bytes unread)
            answer = got
            sock.settimeout(5)
            with contextlib.suppress(ConnectionResetError):
                while got:
                    got = sock.recv(4096)
            return True, answer
        if time.monotonic() > end:
            break
    return False, b""


def test_a_trickling_client_is_cut_off() -> None:
    """A client sending its headers, or its body, a byte every 0.5 s is cut
    off by the server's read deadline (2 s) long before it is done (some
    hundred seconds of bytes): the connection closed, with a 408 when the
    server answers at all; a minute is only the hang guard."""
    with running(read_timeout=2.0) as url:
        head = (b"POST /api/simulate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
                b"X-Padding: " + b"a" * 200 + b"\r\n\r\n")
        with _connect(url) as sock:
            closed, answer = _trickle(sock, head, 0.5, 60.0)
            assert closed and (answer == b"" or answer.startswith(b"HTTP/1.1 408")), answer[:80]
        body = (EXAMPLES / "static-dual-socket.yaml").read_bytes()
        with _connect(url) as sock:
            sock.sendall(head.replace(b"\r\n\r\n", f"\r\nContent-Length: {len(body)}\r\n\r\n"
                                      .encode()))
            closed, answer = _trickle(sock, body, 0.5, 60.0)
            assert closed and (answer == b"" or answer.startswith(b"HTTP/1.1 408")), answer[:80]
        # the server goes on serving
        assert call(url + "/api/examples")[0] == 200


def test_cross_origin_post_is_refused(server: str) -> None:
    report = b'{"apiVersion": "podnuma.io/v1", "kind": "FleetReport"}'
    port = urllib.parse.urlsplit(server).port
    for headers in ({"Origin": "http://attacker.example"}, {"Origin": "null"},
                    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
                    {"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "cross-site"}):
        for path in ("/api/fleet/html", "/api/simulate", "/api/advise"):
            status, _, data = call(server + path, report, "text/plain", headers)
            assert status == 403, (path, headers, data)
            assert "cross-origin request refused" in json.loads(data)["error"]
    # the page itself, and clients that are not browsers, are served
    small = (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_bytes()
    for headers in ({"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"},
                    {"Sec-Fetch-Site": "none"}, {}):
        assert call(server + "/api/simulate", small, "application/yaml", headers)[0] == 200
    # reading is not state-changing
    assert call(server + "/api/examples", None, "text/plain",
                {"Origin": "http://attacker.example"})[0] == 200


def _serve(*extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "podnuma.cli", "serve", "--port", "0", *extra],
        stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    m = re.match(r"podnuma: serving on (http://127\.0\.0\.1:\d+)/", line)
    assert m, line
    return proc, m.group(1)


def _busy_child(proc: subprocess.Popen[str], cpu_s: float, timeout: float) -> bool:
    """Whether a process under ``proc`` used ``cpu_s`` more CPU seconds
    than when this was called, within ``timeout`` seconds (a job running)."""
    import psutil

    def used() -> dict[int, float]:
        out: dict[int, float] = {}
        for child in psutil.Process(proc.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                times = child.cpu_times()
                out[child.pid] = times.user + times.system
        return out

    before = used()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(cpu - before.get(pid, 0.0) >= cpu_s for pid, cpu in used().items()):
            return True
        time.sleep(0.05)
    return False


def test_sigterm_stops_the_server_with_a_request_in_flight() -> None:
    proc, url = _serve("--time-limit", "120", "--workers", "1")
    try:
        got: dict[str, Any] = {}
        body = heavy_scenario()

        def slow(key: str) -> None:
            got[key] = call(url + "/api/explain", body, "application/json")

        t = threading.Thread(target=slow, args=("running",), daemon=True)
        t.start()
        assert _busy_child(proc, 0.5, 60.0)  # the job is running
        # a second request waits for the one job process
        waiting = threading.Thread(target=slow, args=("waiting",), daemon=True)
        waiting.start()
        time.sleep(1.0)  # (pacing: it reaches the server)
        assert got == {}
        proc.send_signal(signal.SIGTERM)
        # stopped at once, not after the job's minutes: the answers below say
        # which (a job left to run ends at the 120 s limit, answered 422);
        # the wait is a hang guard above that limit, not the check
        proc.wait(300)
        t.join(60)
        waiting.join(60)
        # the request in flight, and the one waiting, were answered (not
        # left hanging), as requests the server is stopping for: not as a
        # job that ran out of memory
        for key in ("running", "waiting"):
            assert key in got, key
            status, ctype, data = got[key]
            assert (status, ctype) == (503, "application/json"), (key, data[:300])
            assert json.loads(data) == {"error": "the server is stopping"}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


NUMA16 = """\
apiVersion: podnuma.io/v1
kind: Scenario
node:
  name: big
  synthetic: {sockets: 2, numaNodesPerSocket: 8, coresPerNumaNode: 4, threadsPerCore: 1,
              memoryPerNumaNode: 8Gi}
kubeletConfig:
  cpuManagerPolicy: static
  reservedSystemCPUs: "0"
  topologyManagerPolicy: restricted
  topologyManagerPolicyOptions: {max-allowable-numa-nodes: "16"}
  memoryManagerPolicy: Static
  kubeReserved: {memory: 1Gi}
  evictionHard: {memory.available: 100Mi}
  reservedMemory:
    - {numaNode: 0, limits: {memory: 1124Mi}}
steps:
  - addPod:
      metadata: {name: wide}
      spec:
        containers:
          - name: c
            resources: {limits: {cpu: "20", memory: 20Gi}}
"""


def _numpy_paths() -> tuple[int]:
    """The topology manager's numpy paths, run in a job process."""
    from podnuma.cm.topologymanager import policy_fastmerge as policy

    fewest, _arr = policy._mask_array([None], 0b11)
    return (int(fewest),)


def test_16_numa_restricted_simulates_in_the_sandbox() -> None:
    # the merge of this pod's hints runs numpy (and np.unique, numpy.ma);
    # a generous time limit: the machine running the tests may be loaded
    with running(time_limit=60.0) as url:
        status, _, data = call(url + "/api/simulate", NUMA16.encode(), "application/yaml")
        assert status == 200, data[:500]
        # explain reaches the same merge first; it may then run past the
        # limit, but never fails for a module left to import in the sandbox
        status, _, data = call(url + "/api/explain?search=false", NUMA16.encode(),
                               "application/yaml")
        assert status in (200, 422), data[:500]
        assert b"PermissionError" not in data


def test_numpy_is_imported_before_the_sandbox_closes() -> None:
    from podnuma.web.worker import Limits, WorkerPool

    pool = WorkerPool(Limits())
    assert pool.run(_numpy_paths) == (-1,)
