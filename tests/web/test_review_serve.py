"""The web door as a second review found it, over a real server (uvicorn on
a loopback port): a request with many problems is answered at once, in a
bounded answer, while the server goes on answering others (D1); one
problem is one inert entry, a line break or an escape sequence of the
request's written escaped, as the CLI's ``error:`` line writes it (D3); a
fleet report of the wrong shape is named by its field path, never in
Python's words (D5); a request head over the limit is refused however its
bytes arrive (D6)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import urllib.parse
from typing import Any

import pytest

from tests.web.test_api import EXAMPLES, call

SCENARIO = (EXAMPLES / "pod-level" / "pod-scope-2-mixed.yaml").read_text()
CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def _answer(status: int, data: bytes) -> dict[str, Any]:
    body = json.loads(data)
    assert isinstance(body, dict) and set(body) <= {"error", "errors"}, body
    for line in [body["error"], *body.get("errors", [])]:
        assert not CONTROL.search(line.replace("\n", "") if "errors" in body else line), line
    if "errors" in body:
        assert body["error"] == "\n".join(body["errors"])
    return body


def _post_json(url: str, doc: Any) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    status, _, data = call(url, json.dumps(doc, separators=(",", ":")).encode(), "application/json")
    return status, _answer(status, data), time.monotonic() - started


def _while_answered(server: str, path: str, doc: Any) -> tuple[int, dict[str, Any], float, float]:
    """``doc`` posted to ``path``; and the seconds a ``GET /api/defaults``
    sent meanwhile waited."""
    waited: list[float] = []
    answered: list[int] = []

    def probe() -> None:
        time.sleep(0.05)
        started = time.monotonic()
        answered.append(call(server + "/api/defaults")[0])
        waited.append(time.monotonic() - started)

    thread = threading.Thread(target=probe)
    thread.start()
    status, body, took = _post_json(server + path, doc)
    thread.join(60)
    assert answered == [200], answered  # (the GET sent meanwhile was answered)
    return status, body, took, waited[0]


# ------------------------------------------------------------------ D1: many problems


MANY = {
    "whatIfs-40000-integers": ("/api/fleet/analyze", {"files": {"nodes.json": "{}"}, "whatIfs": [1] * 40_000},
                               "whatIfs: List should have at most 32 items after validation, not 40000"),
    "files-90000-integers": ("/api/fleet/analyze", {"files": {str(i): 1 for i in range(90_000)}},
                             "files: 90000 files, more than the limit of 4096 files a dump may hold"),
    "advise-100000-unknown-fields": ("/api/advise", {str(i): 1 for i in range(100_000)},
                                     'request body: 100000 unknown fields (the first: "0", "1", "2"; '
                                     "this request takes pod, podName,"),
    "compare-40000-unknown-fields": ("/api/compare", {f"k{i}": 1 for i in range(40_000)},
                                     'request body: 40000 unknown fields (the first: "k0", "k1", "k2";'),
    "set-200000-integers": ("/api/advise", {"pod": "x", "set": [1] * 200_000},
                            "set: 200000 values, more than the limit of 256"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(MANY))
def test_a_request_with_many_problems_is_answered_at_once(server: str, case: str) -> None:
    path, doc, want = MANY[case]
    status, body, took, waited = _while_answered(server, path, doc)
    assert status == 422
    assert body["error"].startswith(want), body["error"][:300]
    assert "errors" not in body and len(body["error"]) < 1000
    # (the review: 11 to 130 s for the answer, and as long for the GET
    # sent meanwhile; how long is not asserted here: that both are
    # answered, the GET too, is: bench figures, not test bounds)


def test_at_most_twenty_problems_are_listed(server: str) -> None:
    from podnuma.web.app import MAX_PROBLEMS

    status, body, _ = _post_json(server + "/api/fleet/analyze", {"files": {f"f{i}.json": i for i in range(100)}})
    assert status == 422
    errors = body["errors"]
    assert len(errors) == MAX_PROBLEMS + 1
    assert errors[0] == "files[f0.json]: Input should be a valid string, found 0"
    assert errors[-1] == f"and {100 - MAX_PROBLEMS} more problems"
    status, body, _ = _post_json(server + "/api/advise", {f"k{i}": 1 for i in range(MAX_PROBLEMS + 1)})
    assert status == 422 and body["errors"][-1] == "and 1 more problem"


def test_the_problems_of_a_request_are_counted_in_linear_time() -> None:
    """``_problems`` keeps each problem once in a dict (the review's list
    took 11 s for 40,000)."""
    from fastapi.exceptions import RequestValidationError
    from starlette.requests import Request

    from podnuma.web.app import _problems

    errors = [{"type": "string_type", "loc": ("body", "whatIfs", i), "msg": "Input should be a valid string",
               "input": i} for i in range(100_000)]
    errors += errors[:10]
    request = Request({"type": "http", "method": "POST", "path": "/api/fleet/analyze", "headers": []})
    lines = _problems(request, RequestValidationError(errors))  # (how long: bench figures, no bound here)
    assert len(lines) == 100_000 and lines[1] == "whatIfs[1]: Input should be a valid string, found 1"


def test_the_caps_are_documented() -> None:
    from podnuma.web.app import MAX_HEAD, MAX_PROBLEMS, MAX_SET_VALUES, MAX_WHAT_IFS
    from tests.web.test_api import ROOT

    doc = " ".join((ROOT / "docs" / "commands" / "serve.md").read_text().split())
    for words in (f"at most {MAX_PROBLEMS} problems", f"at most {MAX_WHAT_IFS} `whatIfs`",
                  f"at most {MAX_SET_VALUES} `set` values", f"{MAX_HEAD // 1024} KiB"):
        assert words in doc, words


# ------------------------------------------------------------------ D3: one problem, one inert line


def test_a_line_break_in_a_key_is_one_problem_written_escaped(server: str) -> None:
    doc = {"a\nb": 1, "apiVersion": "podnuma.io/v1", "kind": "Scenario"}
    status, _, data = call(server + "/api/simulate", json.dumps(doc).encode(), "application/json")
    body = _answer(status, data)
    assert status == 400 and "errors" not in body, body
    assert "\n" not in body["error"] and 'unknown field "a\\nb"' in body["error"], body["error"]


def test_a_query_value_is_echoed_inert(server: str) -> None:
    status, _, data = call(server + "/api/explain?pod=%0a%1b", SCENARIO.encode())
    body = _answer(status, data)
    assert status == 400 and "errors" not in body, body
    assert "\\n\\x1b" in body["error"], body["error"]


def test_an_unknown_field_with_a_line_break_is_one_entry(server: str) -> None:
    status, body, _ = _post_json(server + "/api/advise", {"pod": "x", "a\nb\u2028": 1, "c\x1b[31m": 2})
    assert status == 422
    assert [e.split(":")[0] for e in body["errors"]] == ["a\\nb\\u2028", "c\\x1b[31m"]


def test_several_invalid_pods_are_one_entry_each(server: str) -> None:
    """A pods file with two invalid pods (one with a line break in a key):
    two entries, as the CLI prints two ``error:`` lines."""
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
           "spec": {"containers": [{"name": "c", "image": "i", "a\nb": 1}]}}
    other = {**bad, "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "i", "zz": 1}]}}
    pods = json.dumps({"apiVersion": "v1", "kind": "List", "items": [bad, other]})
    status, body, _ = _post_json(server + "/api/advise", {"pod": pods, "podName": "pods.json"})
    assert status == 400, body
    assert len(body["errors"]) == 2, body
    assert 'unknown field "a\\nb"' in body["errors"][0] and '"zz"' in body["errors"][1], body


# ------------------------------------------------------------------ D5: a fleet report's shape


FLEET_SHAPES = {
    "nodes-an-integer": ({"nodes": 5}, "nodes: must be a list, got an integer"),
    "no-kind": ({"kind": None}, 'kind: must be "FleetReport", got null'),
    "empty": ({"apiVersion": None, "kind": None}, 'apiVersion: must be "podnuma.io/v1", got null'),
    "fleet-no-status": ({"fleet": {"nodes": 1}}, "fleet.nodeStatus: required field is missing (expected a mapping)"),
    "no-issues": ({}, "issues: required field is missing (expected a list)"),
    "node-a-list": ({"nodes": [[1]]}, "nodes[0]: must be a mapping, got a list"),
    "summary-no-baseline": ({"summary": {}}, "summary[as running]: required field is missing (expected a mapping)"),
    "whatif-an-integer": ({"whatIfs": [1]}, "whatIfs[0]: must be a string, got an integer"),
}  # fmt: skip


MINIMAL_REPORT: dict[str, Any] = {
    "apiVersion": "podnuma.io/v1", "kind": "FleetReport", "whatIfs": [], "summary": {"as running": {}},
    "fleet": {"nodes": 1, "nodeStatus": {}, "podsReplayed": 0},
    "workloads": {}, "rejected": {}, "issues": [], "nodes": []}


def test_the_smallest_fleet_report_of_the_right_shape_is_drawn(server: str) -> None:
    from podnuma.web.app import FLEET_EXTRA
    from tests.web.conftest import need

    need("the fleet extra (plotly)", FLEET_EXTRA)
    status, _, data = call(server + "/api/fleet/html", json.dumps(MINIMAL_REPORT).encode(), "application/json")
    assert status == 200, data


@pytest.mark.parametrize("case", sorted(FLEET_SHAPES))
def test_a_fleet_report_of_the_wrong_shape_is_named_by_its_field(server: str, case: str) -> None:
    from podnuma.web.app import FLEET_EXTRA
    from tests.web.conftest import need

    need("the fleet extra (plotly)", FLEET_EXTRA)
    change, want = FLEET_SHAPES[case]
    doc = {**MINIMAL_REPORT, **change}
    doc = {k: v for k, v in doc.items() if v is not None}
    if case == "no-issues":
        del doc["issues"]
    status, _, data = call(server + "/api/fleet/html?name=r.json", json.dumps(doc).encode(), "application/json")
    body = _answer(status, data)
    assert status == 400
    assert body["error"].startswith(f"r.json: {want}"), body["error"]
    assert "Error" not in body["error"] and "None" not in body["error"]


# ------------------------------------------------------------------ D6: a request head's size


def _head_status(server: str, size: int, chunk: int | None, pipelined: bool = False) -> tuple[int, bytes]:
    head = (b"GET /api/defaults HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: " + b"b" * size
            + b"\r\nConnection: close\r\n\r\n")
    if pipelined:
        head = b"GET /api/defaults HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + head
    parts = urllib.parse.urlsplit(server)
    with socket.create_connection((parts.hostname or "", parts.port or 0), timeout=30) as sock:
        try:
            if chunk is None:
                sock.sendall(head)
            else:
                for i in range(0, len(head), chunk):
                    sock.sendall(head[i:i + chunk])
                    time.sleep(0.001)
        except (BrokenPipeError, ConnectionResetError):
            pass
        out = b""
        try:
            while data := sock.recv(65536):
                out += data
        except ConnectionResetError:
            pass
    statuses = re.findall(rb"HTTP/1.1 (\d+) ", out)
    return int(statuses[-1]), out


@pytest.mark.parametrize("chunk", [None, 8192, 1000])
@pytest.mark.parametrize("size", [20_000, 60_000, 70_000, 100_000, 250_000])
def test_a_request_head_over_the_limit_is_refused_however_it_arrives(server: str, size: int,
                                                                     chunk: int | None) -> None:
    status, out = _head_status(server, size, chunk)
    if size <= 60_000:
        assert status == 200, out[-300:]
    else:
        assert status == 400, out[:300]
        assert b"the request head is larger than the server's limit of 65536 bytes" in out, out[-300:]


@pytest.mark.parametrize("size", [60_000, 100_000])
def test_a_pipelined_request_head_is_counted_too(server: str, size: int) -> None:
    status, out = _head_status(server, size, None, pipelined=True)
    assert out.startswith(b"HTTP/1.1 200 "), out[:100]
    assert status == (200 if size <= 60_000 else 400), out[-300:]
