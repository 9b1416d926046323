"""Clients that open calls and never send their request: they keep no other
client waiting (a call waits for its request on the server's loop, not on
a handler's thread), and their calls end with their connection's age. A
request that does not decode fails with ``INTERNAL``, as grpc-go answers."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import grpc
from podnuma.grpc import client, server
from podnuma.grpc.provider import NodeProvider
from podnuma.grpc.ratelimit import TokenBucket
from podnuma.grpc.server import serve_unix
from tests.grpc.test_podresources_server import played

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "pod-level" / "pod-scope-2-mixed.yaml"


@pytest.fixture
def sock() -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="pnhc", dir="/tmp"))  # (a short path: a socket's limit)
    try:
        yield where / "kubelet.sock"
    finally:
        shutil.rmtree(where, ignore_errors=True)


class _Held:
    """``n`` calls of ``List`` over ``channels`` connections whose request
    is never sent (the request stream waits until :meth:`release`)."""

    def __init__(self, sock: Path, n: int, channels: int) -> None:
        self.gate = threading.Event()
        self.channels = [grpc.insecure_channel(f"unix:{sock}") for _ in range(channels)]
        self.calls: list[Any] = []
        for i in range(n):
            call = self.channels[i % channels].stream_unary(
                "/v1.PodResourcesLister/List", request_serializer=lambda x: x,
                response_deserializer=lambda x: x)
            self.calls.append(call.future(self._never()))

    def _never(self) -> Iterator[bytes]:
        self.gate.wait()
        return
        yield b""  # (a generator)

    def release(self) -> None:
        self.gate.set()
        for ch in self.channels:
            ch.close()


@pytest.mark.parametrize("n", [4, 70])
def test_calls_never_sent_keep_no_client_waiting(sock: Path, n: int) -> None:
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods), bucket=TokenBucket(qps=1e9, burst=10**6))
    held = _Held(sock, n, channels=10)
    try:
        assert not any(c.done() for c in held.calls)
        with client.connect(sock) as stub:  # a new client, answered while they wait
            got = client.list_pods(stub, timeout=10).pod_resources
        assert [p.name for p in got] == [p.name for p in pods if p.name in {q.name for q in got}] and got
        assert not any(c.done() for c in held.calls)  # (still held: they were not what answered)
    finally:
        held.release()
        srv.stop(None).wait()


def test_a_call_never_sent_ends_with_its_connection(sock: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "MAX_CONNECTION_AGE_S", 1)
    monkeypatch.setattr(server, "MAX_CONNECTION_GRACE_S", 1)
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    held = _Held(sock, 3, channels=1)
    try:
        for call in held.calls:  # ended by the server (the client would wait for ever)
            err = call.exception(timeout=30)
            assert isinstance(err, grpc.RpcError)
            assert err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.INTERNAL)
        with client.connect(sock) as stub:
            assert client.list_pods(stub, timeout=10).pod_resources
    finally:
        held.release()
        srv.stop(None).wait()


def test_a_request_that_does_not_decode_is_internal(sock: Path) -> None:
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with grpc.insecure_channel(f"unix:{sock}") as ch:
            for method in ("/v1.PodResourcesLister/Get", "/v1alpha1.PodResourcesLister/List"):
                call = ch.unary_unary(method, request_serializer=lambda x: x, response_deserializer=lambda x: x)
                with pytest.raises(grpc.RpcError) as err:
                    call(b"\x0a\xff", timeout=10)  # a field whose length runs past the end
                assert err.value.code() == grpc.StatusCode.INTERNAL
                assert (err.value.details() or "").startswith("grpc: error unmarshalling request: ")
    finally:
        srv.stop(None).wait()


def test_stop_is_idempotent_and_frees_the_socket(sock: Path) -> None:
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    first = srv.stop(1.0)
    assert srv.stop(None) is first
    assert first.wait(30)
    assert not sock.exists()  # (its socket file removed by the stop)
    again = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with client.connect(sock) as stub:
            assert client.list_pods(stub, timeout=10).pod_resources
    finally:
        again.stop(None).wait()


def test_a_request_over_the_size_limit_is_refused(sock: Path) -> None:
    node, pods = played(SCENARIO)
    srv = serve_unix(sock, NodeProvider.of(node, pods))
    try:
        with grpc.insecure_channel(f"unix:{sock}") as ch:
            call = ch.unary_unary("/v1.PodResourcesLister/Get", request_serializer=lambda x: x,
                                  response_deserializer=lambda x: x)
            big = server.pb.GetPodResourcesRequest(pod_namespace="kep", pod_name="a" * server.MAX_REQUEST_BYTES)
            with pytest.raises(grpc.RpcError) as err:
                call(big.SerializeToString(), timeout=10)
            assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        srv.stop(None).wait()
