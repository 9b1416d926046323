"""Hypothesis fuzzing of the PodResources gRPC server on a real unix
socket: ``Get`` with arbitrary namespaces and names (empty, huge, binary,
invalid UTF-8 on the wire), and raw bytes sent to every method (truncated,
malformed and oversized protobuf messages, unknown fields, wrong wire
types).

Expectation: an answer, or a gRPC error status -- ``UNKNOWN`` only with the
kubelet's own "pod ... not found" message (what the kubelet answers), never
an exception escaping a handler ("Exception calling application") and
never a hang (every call has a 10 s deadline, far above a real answer).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import grpc
from podnuma.grpc.podresources.v1 import api_pb2 as pb
from podnuma.grpc.provider import NodeProvider
from podnuma.grpc.ratelimit import TokenBucket
from podnuma.grpc.server import serve_unix
from tests.fuzz.hostile import FUZZ
from tests.grpc.test_podresources_server import played

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "pod-level" / "pod-scope-2-mixed.yaml"
METHODS = ("List", "GetAllocatableResources", "Get")
SERVICE = "/v1.PodResourcesLister/"


@pytest.fixture(scope="module")
def channel() -> Iterator[grpc.Channel]:
    import shutil
    import tempfile

    # (a short directory: a unix socket's path has a length limit)
    where = Path(tempfile.mkdtemp(prefix="pnfz", dir="/tmp"))
    sock = where / "kubelet.sock"
    node, pods = played(SCENARIO)
    server = serve_unix(sock, NodeProvider.of(node, pods), bucket=TokenBucket(qps=1e9, burst=10**6))
    ch = grpc.insecure_channel(f"unix:{sock}")
    try:
        yield ch
    finally:
        ch.close()
        server.stop(None)
        shutil.rmtree(where, ignore_errors=True)


def _answered_or_status(call: grpc.UnaryUnaryMultiCallable[bytes, bytes], request: bytes) -> None:
    try:
        call(request, timeout=10)
    except grpc.RpcError as err:
        code, details = err.code(), err.details() or ""
        assert code != grpc.StatusCode.DEADLINE_EXCEEDED, "the server did not answer in 10 s"
        assert "Exception calling application" not in details, details
        assert "Exception deserializing request" not in details or code == grpc.StatusCode.INTERNAL
        if code == grpc.StatusCode.UNKNOWN:
            assert details.startswith("pod ") and details.endswith(" not found"), details


names = st.one_of(
    st.text(max_size=300),
    st.sampled_from(["", "kep", "pod-scope-mixed-kep-node", "../..", "\x00", "a" * 70_000, "\ud7ff\uffff"]),
)


@FUZZ
@given(names, names)
def test_get_with_any_name(channel: grpc.Channel, namespace: str, name: str) -> None:
    call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(SERVICE + "Get")
    request = pb.GetPodResourcesRequest(pod_namespace=namespace, pod_name=name).SerializeToString()
    _answered_or_status(call, request)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    key = (number << 3) | wire
    out = bytearray()
    while True:
        b = key & 0x7F
        key >>= 7
        out.append(b | (0x80 if key else 0))
        if not key:
            break
    return bytes(out) + payload


raw = st.one_of(
    st.binary(max_size=2000),
    st.builds(lambda n, w, p: _field(n, w, p), st.integers(1, 2**29 - 1), st.integers(0, 7), st.binary(max_size=40)),
    st.sampled_from([
        b"\x0a\xff\xff\xff\xff\x0f",                   # a length far beyond the message
        b"\x0a\x02\xff\xfe\x12\x01a",                  # invalid UTF-8 in a string field
        b"\x0a" + b"\x80" * 11,                         # an overlong varint
        b"\x0a\x05hello\x12\x05world" * 1000,           # repeated fields, large
        _field(1, 0, b"\x01") + _field(2, 5, b"\x00\x00\x00\x00"),  # wrong wire types
        b"\x0a\xa0\x9c\x01" + b"x" * 20000,              # a 20000-byte name
    ]),
)  # fmt: skip


@FUZZ
@given(st.sampled_from(METHODS), raw)
def test_raw_requests(channel: grpc.Channel, method: str, request: bytes) -> None:
    call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(SERVICE + method)
    _answered_or_status(call, request)
