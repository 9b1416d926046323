"""PodResources requests at the edges of the wire format, sent as the same
bytes to podnuma's server and to the kubelet's own (``kubelet-oracle
podresources``): the same status codes and texts, as protobuf-go decodes
them under grpc-go (bad UTF-8 in a string field, a field cut short, a
field number or wire type outside the format, end-group tags that do not
match, unknown fields of any type skipped, unknown groups nested to
protobuf-go's depth and one past it, a string field given with another
wire type or twice)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import grpc
from podnuma.grpc.provider import NodeProvider
from podnuma.grpc.server import serve_unix
from podnuma.inputs.scenario import load_scenario
from tests.grpc.test_edges import RAW, SCENARIO, _outcome
from tests.grpc.test_podresources_server import played
from tests.oracle.conftest import oracle_binary

__all__ = ["oracle_binary"]  # the differential suite's fixture

LIST, GET = "/v1.PodResourcesLister/List", "/v1.PodResourcesLister/Get"
ALLOCATABLE = "/v1.PodResourcesLister/GetAllocatableResources"


def _get(name: bytes, namespace: bytes = b"") -> bytes:
    return b"\x0a" + bytes([len(name)]) + name + (b"\x12" + bytes([len(namespace)]) + namespace if namespace else b"")


REQUESTS = {
    "Get, a name of bad UTF-8": (GET, b"\x0a\x03kep\x12\x02\xff\xfe"),
    "Get, a namespace that is a surrogate in UTF-8": (GET, b"\x0a\x01a\x12\x03\xed\xa0\x80"),
    "Get, an overlong UTF-8 name": (GET, b"\x0a\x02\xc0\xaf"),
    "Get, the name given as a varint (an unknown field)": (GET, b"\x08\x05" + _get(b"x", b"y")[:0]),
    "Get, the name given twice": (GET, _get(b"first") + _get(b"second")),
    "List, a field cut short": (LIST, b"\x0a\x05ab"),
    "List, a varint cut short": (LIST, b"\x08\xff"),
    "List, a varint of eleven bytes": (LIST, b"\x08" + b"\xff" * 10 + b"\x01"),
    "List, field number 0": (LIST, b"\x00\x01"),
    "List, wire type 6": (LIST, b"\x0e"),
    "List, wire type 7": (LIST, b"\x0f"),
    "List, an end group at the top": (LIST, b"\x0c"),
    "List, a group ended by another number": (LIST, b"\x0b\x14"),
    "List, a group never ended": (LIST, b"\x0b\x08\x01"),
    "List, fixed32 cut short": (LIST, b"\x0d\x01\x02"),
    "List, fixed64 and fixed32 unknown fields": (LIST, b"\x09" + b"\x00" * 8 + b"\x0d" + b"\x00" * 4),
    "List, an unknown field of 200 nested groups": (LIST, b"\x0b" * 200 + b"\x0c" * 200),
    "List, 10,001 nested groups": (LIST, b"\x0b" * 10_001 + b"\x0c" * 10_001),
    "List, 10,002 nested groups": (LIST, b"\x0b" * 10_002 + b"\x0c" * 10_002),
    "List, a group holding fields of every type": (LIST, b"\x0b\x10\x01\x19" + b"\x00" * 8 + b"\x22\x01z\x2d" + b"\x00" * 4 + b"\x0c"),
    "GetAllocatableResources, an unknown bytes field": (ALLOCATABLE, b"\x52\x02hi"),
}


def _answers(sock: Path) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    with grpc.insecure_channel(f"unix:{sock}") as ch:
        for name, (method, data) in REQUESTS.items():
            time.sleep(0.05)  # (the rate limit never met)
            unary = ch.unary_unary(method, **RAW)
            code, details = _outcome(lambda unary=unary, data=data: unary(data, timeout=10))
            # (protobuf-go writes "proto:" with a space or a no-break space,
            # chosen per binary, to keep callers from matching the text)
            out[name] = (code, details.replace("\xa0", " ") if code != "OK" else "")
    return out


def test_requests_at_the_edges_of_the_wire_format_are_answered_as_the_kubelet_answers(oracle_binary: str) -> None:
    where = Path(tempfile.mkdtemp(prefix="pnw", dir="/tmp"))  # (a short path: a socket's limit)
    try:
        node, pods = played(SCENARIO)
        srv = serve_unix(where / "p.sock", NodeProvider.of(node, pods))
        try:
            ours = _answers(where / "p.sock")
        finally:
            srv.stop(None)
        oracle = subprocess.Popen(
            [oracle_binary, "podresources", str(SCENARIO), "--socket", str(where / "o.sock")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert oracle.stdout is not None and oracle.stdin is not None
            assert oracle.stdout.readline().startswith("ready")
            for _ in load_scenario(SCENARIO).steps:
                oracle.stdin.write("next\n")
                oracle.stdin.flush()
                assert oracle.stdout.readline().startswith("ready")
            theirs = _answers(where / "o.sock")
        finally:
            assert oracle.stdin is not None
            oracle.stdin.close()
            try:
                oracle.wait(timeout=30)
            except subprocess.TimeoutExpired:
                oracle.kill()
                oracle.wait()
    finally:
        shutil.rmtree(where, ignore_errors=True)
    # (the cases reach both outcomes: decoded and refused)
    assert theirs["List, 10,001 nested groups"][0] == "OK"
    assert theirs["List, 10,002 nested groups"][0] == "INTERNAL"
    assert ours == theirs
