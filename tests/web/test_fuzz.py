"""Hypothesis fuzzing of the HTTP API, over a real server (uvicorn on a
loopback port, the app of ``podnuma serve``): scenario bodies for
``/api/simulate``, ``/api/explain`` and ``/api/topology``; what-if requests
for ``/api/compare`` and ``/api/advise``; fleet reports for
``/api/fleet/html``; hostile query parameters. The inputs are those of
``tests/fuzz/hostile.py`` (mutations, YAML aliases, deep nesting, huge
values, binary), as request bodies or inside the JSON fields.

Expectation: 200 with the document, or a 4xx with a JSON ``{"error": ...}``
of one line (several problems: a line each, also listed in ``errors``) --
never a 500, a non-JSON error or a hung request (each request has a 60 s
socket timeout, far above the server's own limits).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.hostile import FUZZ, HEAVY, hostile_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCENARIO = yaml.safe_load((EXAMPLES / "pod-level" / "pod-scope-2-mixed.yaml").read_text())
POD = yaml.safe_load((EXAMPLES / "whatif" / "trainer-pod.yaml").read_text())


def post(url: str, body: bytes, ctype: str) -> tuple[int, str, bytes]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": ctype}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read()


def answered(status: int, ctype: str, data: bytes) -> None:
    assert status < 500, (status, data[:500])
    if status >= 400:
        assert "json" in ctype, (status, ctype, data[:300])
        body = json.loads(data)
        err = body["error"]
        # several problems: a line each, in "errors" (and joined in "error")
        lines = body.get("errors", [err])
        assert isinstance(err, str) and err == "\n".join(lines), body
        for line in lines:
            assert isinstance(line, str) and line and "\n" not in line, line
            assert "Traceback" not in line and "internal error" not in line, line


queries = st.fixed_dictionaries({}, optional={
    "name": st.one_of(st.text(max_size=300), st.just("../../etc/passwd")),
    "step": st.one_of(st.integers(-(2**70), 2**70).map(str), st.text(max_size=8)),
    "pod": st.text(max_size=40),
    "detail": st.sampled_from(["true", "false", "yes", "2", ""]),
})  # fmt: skip


@HEAVY
@given(
    st.sampled_from(["simulate", "explain", "topology"]),
    hostile_text(SCENARIO),
    queries,
    st.sampled_from(["application/yaml", "application/json", "text/plain", "application/octet-stream"]),
)
def test_scenario_bodies(server: str, endpoint: str, body: bytes, query: dict[str, str], ctype: str) -> None:
    if endpoint == "explain":
        query = {**query, "search": "false"}
    url = f"{server}/api/{endpoint}?{urllib.parse.urlencode(query)}"
    answered(*post(url, body, ctype))


def _whatif(field: str, text: bytes, extra: dict[str, Any]) -> bytes:
    return json.dumps({field: text.decode("utf-8", "surrogateescape"), **extra}, default=str,
                      ensure_ascii=True).encode("utf-8", "surrogatepass")  # fmt: skip


@HEAVY
@given(
    st.sampled_from(["compare", "advise"]),
    st.one_of(
        hostile_text(POD).map(lambda t: ("pod", t)),
        hostile_text(SCENARIO).map(lambda t: ("scenario", t)),
    ),
    st.fixed_dictionaries({}, optional={
        "step": st.one_of(st.integers(-5, 50), st.text(max_size=4), st.none()),
        "sharedPoolCpus": st.one_of(st.integers(-3, 2**70), st.floats()),
        "podName": st.text(max_size=50),
        "node": st.sampled_from(["", "{}", "synthetic: 1", "[[[[[[[[[[[[[[]]]]]]]]]]]]]]"]),
    }),
)  # fmt: skip
def test_whatif_requests(server: str, endpoint: str, field_text: tuple[str, bytes], extra: dict[str, Any]) -> None:
    field, text = field_text
    answered(*post(f"{server}/api/{endpoint}", _whatif(field, text, extra), "application/json"))


@FUZZ
@given(st.one_of(
    st.binary(max_size=2000),
    st.sampled_from([b"{}", b"[]", b"null", b'{"kind": "FleetReport"}', b"[" * 50 + b"]" * 50,
                     b'{"kind": "FleetReport", "apiVersion": "podnuma.io/v1", "nodes": "x"}']),
))  # fmt: skip
def test_fleet_reports(server: str, body: bytes) -> None:
    answered(*post(f"{server}/api/fleet/html", body, "application/json"))
