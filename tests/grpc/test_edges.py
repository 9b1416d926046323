"""The PodResources server at its edges, over a real unix socket with a
real gRPC client:

* calls as grpc-go's server answers them: a unary call whose request
  stream ends without a message is answered at once ``Unknown`` ``EOF``
  (and spends no token of the rate limit); messages after the first are
  not read (the first is answered); unknown services and methods and
  malformed paths get grpc-go's ``Unimplemented`` texts. The same requests
  are sent to the kubelet's own server (``kubelet-oracle podresources``,
  when it is built) and must get the same codes and texts;
* its socket file: a live server whose queue of connections is full is not
  taken for a stale socket; a stale one (connections refused) is replaced;
  stopping removes the socket file only while it is still the one this
  server bound (not another server's, bound at the path since);
* its connections: past the cap, the server closes new connections at
  once; one that sends nothing is closed after the handshake time.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import grpc
from podnuma.errors import InputError
from podnuma.grpc import client, server
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.grpc.provider import NodeProvider
from podnuma.grpc.ratelimit import TokenBucket
from podnuma.grpc.server import serve_unix
from podnuma.inputs.scenario import load_scenario
from tests.grpc.test_podresources_server import played
from tests.oracle.conftest import oracle_binary

__all__ = ["oracle_binary"]  # the differential suite's fixture: its build, its skip (fail under CI)

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "pod-level" / "pod-scope-2-mixed.yaml"
METHODS = ("/v1.PodResourcesLister/List", "/v1.PodResourcesLister/Get",
           "/v1.PodResourcesLister/GetAllocatableResources", "/v1alpha1.PodResourcesLister/List")
RAW: dict[str, Any] = {"request_serializer": lambda x: x, "response_deserializer": lambda x: x}
# the Get request of pod "pod-scope-mixed" in namespace "kep" (both servers know it)
GET_MIXED = pb.GetPodResourcesRequest(pod_namespace="kep", pod_name="pod-scope-mixed").SerializeToString()


@pytest.fixture
def sock() -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="pned", dir="/tmp"))  # (a short path: a socket's limit)
    try:
        yield where / "kubelet.sock"
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        got = fn()
    except grpc.RpcError as e:
        return (e.code().name, e.details() or "")
    return ("OK", got.hex() if isinstance(got, bytes) else repr(got))


def _edge_cases(channel: grpc.Channel) -> list[tuple[str, tuple[str, str]]]:
    """Each edge request sent once (``timeout`` 10 s: a call never answered
    would be ``DEADLINE_EXCEEDED``), with its code and details."""
    out: list[tuple[str, tuple[str, str]]] = []
    for method in METHODS:
        call = channel.stream_unary(method, **RAW)
        time.sleep(0.05)  # (the kubelet's rate limit, 100 a second: never met)
        out.append((f"{method} no message", _outcome(lambda call=call: call(iter([]), timeout=10))))
    get = channel.stream_unary("/v1.PodResourcesLister/Get", **RAW)
    time.sleep(0.05)
    out.append(("Get, a second message that does not decode",
                _outcome(lambda: get(iter([GET_MIXED, b"\x0a\xff"]), timeout=10))))
    time.sleep(0.05)
    out.append(("Get, a second message naming another pod",
                _outcome(lambda: get(iter([b"\x0a\x04nope", GET_MIXED]), timeout=10))))
    for path in ("/v1.PodResourcesLister/Watch", "/v1alpha1.PodResourcesLister/Get",
                 "/v2.PodResourcesLister/List", "/v1.PodResourcesLister/List/", "/a/b/c", "//",
                 "/v1.PodResourcesLister/", "List", "/List", "v1.PodResourcesLister/List"):
        unary = channel.unary_unary(path, **RAW)
        out.append((path, _outcome(lambda unary=unary: unary(b"", timeout=10))))
    return out


EXPECTED = [
    *[(f"{m} no message", ("UNKNOWN", "EOF")) for m in METHODS],
    ("Get, a second message that does not decode", ("OK", "")),  # (the first's answer, checked below)
    ("Get, a second message naming another pod", ("UNKNOWN", "pod nope in namespace  not found")),
    ("/v1.PodResourcesLister/Watch", ("UNIMPLEMENTED", "unknown method Watch for service v1.PodResourcesLister")),
    ("/v1alpha1.PodResourcesLister/Get",
     ("UNIMPLEMENTED", "unknown method Get for service v1alpha1.PodResourcesLister")),
    ("/v2.PodResourcesLister/List", ("UNIMPLEMENTED", "unknown service v2.PodResourcesLister")),
    ("/v1.PodResourcesLister/List/", ("UNIMPLEMENTED", "unknown service v1.PodResourcesLister/List")),
    ("/a/b/c", ("UNIMPLEMENTED", "unknown service a/b")),
    ("//", ("UNIMPLEMENTED", "unknown service ")),
    ("/v1.PodResourcesLister/", ("UNIMPLEMENTED", "unknown method  for service v1.PodResourcesLister")),
    ("List", ("UNIMPLEMENTED", 'malformed method name: "List"')),
    ("/List", ("UNIMPLEMENTED", 'malformed method name: "/List"')),
    ("v1.PodResourcesLister/List", ("UNIMPLEMENTED", 'malformed method name: "v1.PodResourcesLister/List"')),
]


def _comparable(cases: list[tuple[str, tuple[str, str]]]) -> list[tuple[str, tuple[str, str]]]:
    """The answers with a successful ``Get``'s bytes checked and left out
    (the order of CPU ids in an answer is each server's own)."""
    out = []
    for name, (code, details) in cases:
        if name.startswith("Get, a second") and code == "OK":
            answer = pb.GetPodResourcesResponse.FromString(bytes.fromhex(details))
            assert (answer.pod_resources.namespace, answer.pod_resources.name) == ("kep", "pod-scope-mixed")
            details = ""
        out.append((name, (code, details)))
    return out


def test_edge_requests_get_grpc_gos_answers(sock: Path) -> None:
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with grpc.insecure_channel(f"unix:{sock}") as ch:
            got = _comparable(_edge_cases(ch))
        with client.connect(sock) as stub:  # (and the server serves on)
            assert client.list_pods(stub, timeout=10).pod_resources
    finally:
        srv.stop(None)
    assert got == EXPECTED


def test_a_call_without_its_request_spends_no_token(sock: Path) -> None:
    now = [1_000_000_000_000]  # (the clock held still: no token comes back)
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods), bucket=TokenBucket(qps=100, burst=1, clock=lambda: now[0]))
    try:
        with grpc.insecure_channel(f"unix:{sock}") as ch:
            empty = ch.stream_unary("/v1.PodResourcesLister/List", **RAW)
            assert [_outcome(lambda: empty(iter([]), timeout=10))[0] for _ in range(3)] == ["UNKNOWN"] * 3
            unary = ch.unary_unary("/v1.PodResourcesLister/List", **RAW)
            assert [_outcome(lambda: unary(b"", timeout=10))[0] for _ in range(2)] == ["OK", "RESOURCE_EXHAUSTED"]
    finally:
        srv.stop(None)


def test_edge_requests_get_the_kubelets_answers(sock: Path, oracle_binary: str) -> None:  # noqa: F811
    """The same edge requests to the kubelet's own PodResources server
    (grpc-go): the same codes and texts as podnuma's."""
    oracle = subprocess.Popen(
        [oracle_binary, "podresources", str(SCENARIO), "--socket", str(sock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert oracle.stdout is not None and oracle.stdin is not None
        ready = oracle.stdout.readline()
        assert ready.startswith("ready"), (oracle.stderr.read() if oracle.stderr else "")
        for _ in load_scenario(SCENARIO).steps:  # (every step run, as ``played`` runs them)
            oracle.stdin.write("next\n")
            oracle.stdin.flush()
            assert oracle.stdout.readline().startswith("ready")
        with grpc.insecure_channel(f"unix:{sock}") as ch:
            theirs = _comparable(_edge_cases(ch))
    finally:
        assert oracle.stdin is not None
        oracle.stdin.close()
        try:
            oracle.wait(timeout=30)
        except subprocess.TimeoutExpired:
            oracle.kill()
            oracle.wait()
    assert theirs == EXPECTED


# -- the socket file -----------------------------------------------------------


def test_stop_leaves_another_servers_socket(sock: Path) -> None:
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    os.unlink(sock)  # (removed by someone; another server binds the path)
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        other.bind(str(sock))
        other.listen()
        theirs = os.stat(sock).st_ino
        srv.stop(1.0).wait(30)
        assert sock.exists() and os.stat(sock).st_ino == theirs
    finally:
        other.close()


def test_stop_removes_its_own_socket(sock: Path) -> None:
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    assert sock.is_socket()
    assert srv.stop(1.0).wait(30)
    assert not os.path.lexists(sock)
    assert os.listdir(sock.parent) == []  # (nor its temporary name)


def test_a_busy_server_is_not_taken_for_a_stale_socket(sock: Path) -> None:
    """A live server whose queue of connections is full (a connection
    attempt gets ``EAGAIN``) keeps its socket: the start is refused."""
    node, pods = played(SCENARIO)
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(str(sock))
    live.listen(1)
    queued: list[socket.socket] = []
    try:
        for _ in range(100):  # fill its queue
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.setblocking(False)
            try:
                c.connect(str(sock))
            except BlockingIOError:
                c.close()
                break
            queued.append(c)
        else:
            pytest.fail("the queue never filled")
        ino = os.stat(sock).st_ino
        with pytest.raises(InputError, match="another server is listening on this socket"):
            serve_unix(sock, NodeProvider.of(node, pods))
        assert os.stat(sock).st_ino == ino
        assert sorted(os.listdir(sock.parent)) == ["kubelet.sock"]
    finally:
        for c in queued:
            c.close()
        live.close()


def test_a_stale_socket_is_replaced(sock: Path) -> None:
    node, pods = played(SCENARIO)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(sock))
    dead.close()  # (its file left behind: connections refused)
    stale = os.stat(sock).st_ino
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        assert os.stat(sock).st_ino != stale
        with client.connect(sock) as stub:
            assert client.list_pods(stub, timeout=10).pod_resources
        assert sorted(os.listdir(sock.parent)) == ["kubelet.sock"]
    finally:
        srv.stop(None)
    assert not os.path.lexists(sock)


# -- connections ---------------------------------------------------------------


def _closed_by_server(conns: list[socket.socket], want: int, within: float) -> set[int]:
    """Which of ``conns`` the server closed (their end reads as EOF),
    waiting until ``want`` are or ``within`` seconds have passed."""
    closed: set[int] = set()
    end = time.monotonic() + within
    while len(closed) < want and time.monotonic() < end:
        ready, _, _ = select.select([c for i, c in enumerate(conns) if i not in closed], [], [], 0.2)
        for c in ready:
            try:
                data = c.recv(4096)
            except OSError:
                data = b""
            if data == b"":
                closed.add(conns.index(c))
    return closed


def test_connections_past_the_cap_are_closed_at_once(sock: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "MAX_CONNECTIONS", 4)
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    conns: list[socket.socket] = []
    try:
        for _ in range(12):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(str(sock))
            conns.append(c)
        closed = _closed_by_server(conns, 8, within=30)
        assert len(closed) == 8 and closed == set(range(4, 12))  # (the first 4 are held)
        for c in conns:
            c.close()
        conns.clear()
        end = time.monotonic() + 30  # (the server sees the 4 go, then serves again)
        while True:
            try:
                with client.connect(sock) as stub:
                    assert client.list_pods(stub, timeout=5).pod_resources
                break
            except grpc.RpcError:
                if time.monotonic() > end:
                    raise
    finally:
        for c in conns:
            c.close()
        srv.stop(None)


def test_a_connection_that_sends_nothing_is_closed(sock: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "HANDSHAKE_TIMEOUT_S", 1)
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    conns = []
    try:
        for _ in range(3):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(str(sock))
            conns.append(c)
        assert len(_closed_by_server(conns, 3, within=60)) == 3
    finally:
        for c in conns:
            c.close()
        srv.stop(None)


def test_idle_connections_give_their_places_back(sock: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections that send the HTTP/2 preface and then nothing, as many
    as the cap: each is closed once idle for MAX_CONNECTION_IDLE_S, so a
    client is served again within seconds, not after the connections' age
    (a minute and more)."""
    monkeypatch.setattr(server, "MAX_CONNECTIONS", 4)
    monkeypatch.setattr(server, "MAX_CONNECTION_IDLE_S", 1)
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # + empty SETTINGS
    conns: list[socket.socket] = []
    try:
        for _ in range(4):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(str(sock))
            c.sendall(preface)
            conns.append(c)
        # all four closed by the server while the connections' age (60 s) is far off
        assert len(_closed_by_server(conns, 4, within=30)) == 4
        with client.connect(sock) as stub:
            assert client.list_pods(stub, timeout=10).pod_resources
    finally:
        for c in conns:
            c.close()
        srv.stop(None)
