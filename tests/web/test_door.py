"""What the web door answers to requests it does not take, over a real
server (uvicorn on a loopback port): a method a path does not take (405 with
its methods), several problems (a line each), fields an endpoint does not
have or that cannot go together, values of another JSON type, a body that
is not a JSON object, and the refusals made before the application runs
(Host, origin, size, slowness): each in the API's ``{"error": ...}`` shape
with the page's security headers. And a request waiting for a job process
holds no thread: its wait ends within the time limit, and the other routes
answer meanwhile."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
from typing import Any

import pytest

from tests.web.conftest import running
from tests.web.test_api import EXAMPLES, call, heavy_scenario

#: the headers PageHeaders adds to every answer
SECURITY = ("content-security-policy", "x-content-type-options", "referrer-policy")
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE")
POD = (EXAMPLES / "whatif" / "trainer-pod.yaml").read_text()
SCENARIO = (EXAMPLES / "pod-level" / "pod-scope-2-mixed.yaml").read_text()


def send(url: str, method: str, path: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """Any method, any headers: status, headers (lower-case names), body."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def problems(status: int, data: bytes) -> list[str]:
    """The lines of a 422: ``errors`` when there are several (``error`` is
    them joined), else the one ``error``."""
    assert status == 422, (status, data[:500])
    body = json.loads(data)
    if "errors" in body:
        assert body["error"] == "\n".join(body["errors"]) and len(body["errors"]) > 1, body
        return list(body["errors"])
    assert list(body) == ["error"] and "\n" not in body["error"], body
    return [body["error"]]


def post_json(url: str, path: str, body: Any) -> tuple[int, bytes]:
    status, _, data = call(url + path, json.dumps(body).encode(), "application/json")
    return status, data


# ------------------------------------------------------------------ methods


def test_a_method_an_api_path_does_not_take_is_405_with_its_methods(server: str) -> None:
    """Every API path of the OpenAPI description, with every other method:
    405, ``Allow`` its methods (``HEAD`` with ``GET``), the error shape, the
    security headers. (The page, mounted at ``/``, answered 404 or 405
    ``Allow: GET, HEAD``.)"""
    status, _, data = send(server, "GET", "/openapi.json")
    assert status == 200
    paths = {p: ops for p, ops in json.loads(data)["paths"].items() if p.startswith("/api/")}
    assert {"/api/simulate", "/api/compare", "/api/advise", "/api/examples"} <= set(paths)
    checked = 0
    for path, ops in paths.items():
        concrete = path.replace("{example_id}", "static-dual-socket")
        takes = {m.upper() for m in ops}
        if "GET" in takes:
            takes.add("HEAD")
        allow = ", ".join(sorted(takes))
        for method in METHODS:
            if method in takes:
                continue
            status, headers, data = send(server, method, concrete)
            assert status == 405, (method, path, status, data[:300])
            assert headers.get("allow") == allow, (method, path, headers)
            assert all(h in headers for h in SECURITY), (method, path, headers)
            if method != "HEAD":  # (no body to a HEAD request)
                assert headers["content-type"].startswith("application/json")
                assert json.loads(data) == {
                    "error": f"method {method} not allowed on {concrete} (it takes {allow})"}
            checked += 1
    assert checked > 50
    # HEAD where GET is taken: the GET answer's head
    status, headers, data = send(server, "HEAD", "/api/examples")
    assert status == 200 and data == b"" and headers["content-type"] == "application/json"
    # an /api path no route has: 404, whatever the method
    for method in ("GET", "POST", "PUT"):
        status, headers, data = send(server, method, "/api/nope", b"{}" if method != "GET" else None)
        assert status == 404, (method, data)
        assert json.loads(data) == {"error": "no such path: /api/nope"}


# ------------------------------------------------------------------ request bodies


def test_several_problems_are_a_line_each(server: str) -> None:
    takes = ("pod, podName, node, nodeName, kubeletConfig, kubeletConfigName, scenario, "
             "scenarioName, step, set")
    assert problems(*post_json(server, "/api/compare", {"bogus": 1, "other": 2})) == [
        f"bogus: unknown field (this request takes {takes})",
        f"other: unknown field (this request takes {takes})",
    ]
    body = SCENARIO.encode()
    status, _, data = call(server + "/api/simulate?bogus=1&other=2", body)
    assert problems(status, data) == [
        "bogus: unknown query parameter (this path takes detail, name, set)",
        "other: unknown query parameter (this path takes detail, name, set)",
    ]


# request -> the lines of its 422 (one field each)
REFUSED = {
    "compare-advise-fields": ("/api/compare", {
        "pod": POD, "strategy": "max-freed", "sidecars": ["x"], "asScenario": True, "sharedPoolCpus": 1},
        ["strategy: advise only (the CLI's --strategy): /api/compare does not take it",
         "sidecars: advise only (the CLI's --sidecar): /api/compare does not take it",
         "asScenario: advise only (the CLI's --as-scenario): /api/compare does not take it",
         "sharedPoolCpus: advise only (the CLI's --shared-pool-cpus): /api/compare does not take it"]),
    "compare-step-without-scenario": ("/api/compare", {"pod": POD, "step": 7},
        ["step: only with scenario (the addPod step of the scenario to take the pod from)"]),
    "compare-advise-field-and-step": ("/api/compare", {"pod": POD, "strategy": "max-freed", "step": 7},
        ["strategy: advise only (the CLI's --strategy): /api/compare does not take it",
         "step: only with scenario (the addPod step of the scenario to take the pod from)"]),
    "compare-pod-and-scenario": ("/api/compare", {"pod": POD, "scenario": SCENARIO, "step": 0},
        ["pod: not with scenario (the pod, node and kubelet configuration are the scenario's)"]),
    "advise-scenario-and-node": ("/api/advise", {
        "scenario": SCENARIO, "step": 0, "node": "name: n\n", "kubeletConfigName": "k.yaml"},
        ["node: not with scenario (the pod, node and kubelet configuration are the scenario's)",
         "kubeletConfigName: not with scenario (the pod, node and kubelet configuration are the scenario's)"]),
    "advise-names-without-texts": ("/api/advise", {"pod": POD, "nodeName": "n.yaml", "scenarioName": "s.yaml"},
        ["nodeName: only with node (the name of its text, for messages)",
         "scenarioName: only with scenario (the name of its text, for messages)"]),
    "compare-names-without-texts": ("/api/compare", {"podName": "p.yaml", "kubeletConfigName": "k.yaml"},
        ["podName: only with pod (the name of its text, for messages)",
         "kubeletConfigName: only with kubeletConfig (the name of its text, for messages)"]),
    "advise-types": ("/api/advise", {
        "pod": POD, "sharedPoolCpus": True, "asScenario": "yes", "step": "1", "sidecars": ["a", 2],
        "set": ["a=1", 5], "strategy": "fast"},
        ['step: Input should be a valid integer, found "1"',
         "set[1]: must be a PATH=VALUE string, got an integer",
         "sharedPoolCpus: expected auto or a whole number of CPUs >= 1, found true",
         "strategy: Input should be 'keep-limits', 'keep-cpus' or 'max-freed', found \"fast\"",
         "sidecars[1]: Input should be a valid string, found 2",
         'asScenario: Input should be a valid boolean, found "yes"',
         "step: only with scenario (the addPod step of the scenario to take the pod from)"]),
    "advise-pool-values": ("/api/advise", {"pod": POD, "sharedPoolCpus": "2"},
        ['sharedPoolCpus: expected auto or a whole number of CPUs >= 1, found "2"']),
    "advise-pool-zero": ("/api/advise", {"pod": POD, "sharedPoolCpus": 0},
        ["sharedPoolCpus: expected auto or a whole number of CPUs >= 1, found 0"]),
    "advise-pool-float": ("/api/advise", {"pod": POD, "sharedPoolCpus": 1.0},
        ["sharedPoolCpus: expected auto or a whole number of CPUs >= 1, found 1.0"]),
    "compare-set-number": ("/api/compare", {"pod": POD, "set": 5},
        ["set: must be PATH=VALUE lines (a string) or a list of strings, got an integer"]),
    "fleet-types": ("/api/fleet/analyze", {"files": {"nodes.json": 1}, "whatIfs": [True], "set": {}},
        ["files[nodes.json]: Input should be a valid string, found 1",
         "whatIfs[0]: Input should be a valid string, found true",
         "set: must be PATH=VALUE lines (a string) or a list of strings, got a mapping"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_field_the_endpoint_does_not_take_or_of_another_type_is_refused(server: str, case: str) -> None:
    """A field an endpoint does not use, fields that cannot go together,
    and a value the model would have converted (``true`` as 1, ``"yes"``
    as true, ``"1"`` as 1) are refused, each named by the request's own
    field path (no ``sharedPoolCpus.literal['auto']`` or ``set.list[str]``)."""
    path, body, want = REFUSED[case]
    assert problems(*post_json(server, path, body)) == want


def test_what_the_endpoints_take_still_answers(server: str) -> None:
    for path, body in (("/api/compare", {"scenario": SCENARIO, "scenarioName": "s.yaml", "step": 0,
                                         "set": [], "pod": None}),
                       ("/api/advise", {"pod": POD, "podName": "p.yaml", "sharedPoolCpus": "auto",
                                        "asScenario": False, "step": None}),
                       ("/api/advise", {"pod": POD, "sharedPoolCpus": 2, "strategy": "max-freed"})):
        status, data = post_json(server, path, body)
        assert status == 200, (path, data[:500])


@pytest.mark.parametrize("endpoint", ["/api/compare", "/api/advise", "/api/fleet/analyze"])
def test_a_body_that_is_not_a_json_object_says_so(server: str, endpoint: str) -> None:
    send_json = "send a JSON object, with Content-Type: application/json"
    for body, headers, want in (
        (None, {}, f"request body: empty ({send_json})"),
        (b"", {"Content-Type": "application/json"}, f"request body: empty ({send_json})"),
        (b'{"pod": "x"}', {"Content-Type": "text/plain"},
         f"request body: Content-Type 'text/plain', not application/json ({send_json})"),
        (b'{"pod": "x"}', {}, f"request body: no Content-Type, not application/json ({send_json})"),
        (b'["x"]', {"Content-Type": "application/json"}, "request body: expected a JSON object, found a list"),
        (b'"x"', {"Content-Type": "application/json"}, "request body: expected a JSON object, found a string"),
        # a number as written (its text kept, past the float range too): a number all the same
        *((text, {"Content-Type": "application/json"}, "request body: expected a JSON object, found a number")
          for text in (b"2.5", b"2.5e0", b"1E2", b"1e400", b"-0.0")),
    ):
        status, _, data = send(server, "POST", endpoint, body, headers)
        assert problems(status, data) == [want], (body, headers)


# ------------------------------------------------------------------ before the application


def test_refusals_before_the_application_have_the_error_shape_and_headers() -> None:
    """The Host check (400), the origin check (403), the body size (413) and
    the body deadline (408) answer before the application runs: in the
    API's error shape, with the page's security headers."""
    with running(max_body=4096, read_timeout=1.0) as url:
        port = urllib.parse.urlsplit(url).port
        status, headers, data = send(url, "GET", "/api/examples", headers={"Host": "evil.example"})
        assert status == 400 and headers["content-type"] == "application/json"
        assert json.loads(data) == {"error": "Host header 'evil.example' refused: this server answers "
                                    "only to 127.0.0.1, localhost, ::1, [::1] (it listens on loopback)"}
        assert all(h in headers for h in SECURITY), headers
        # loopback names, with a port or without, IPv6 in brackets
        for host in (f"127.0.0.1:{port}", "localhost", f"[::1]:{port}", "LOCALHOST:1"):
            assert send(url, "GET", "/api/examples", headers={"Host": host})[0] == 200, host
        status, headers, data = send(url, "POST", "/api/simulate", SCENARIO.encode(),
                                     {"Origin": "http://attacker.example"})
        assert status == 403 and json.loads(data)["error"].startswith("cross-origin request refused")
        assert all(h in headers for h in SECURITY), headers
        status, headers, data = send(url, "POST", "/api/simulate", b"#" * 5000)
        assert status == 413 and json.loads(data)["error"].startswith("the request body is larger")
        assert all(h in headers for h in SECURITY), headers
        # a body that stops coming: 408 after the read timeout
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(f"POST /api/simulate HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         "Content-Length: 100\r\n\r\n0123456789".encode())
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").lower().split("\r\n")
        assert lines[0].startswith("http/1.1 408"), answer
        assert all(any(line.startswith(h + ":") for line in lines) for h in SECURITY), head
        assert json.loads(body) == {"error": "the request body was not received within 1 s"}


# ------------------------------------------------------------------ waiting for a job process


LIMIT = 5.0
PENDING = 60
#: the message of a request that waited for a job process until the limit
BUSY = {"error": "the server is busy (at most 1 simulations at once): try again"}
#: the message of a job killed at the limit
TOO_LONG = ("the simulation took longer than the server's limit of 5 s "
            "(fewer steps, a smaller machine, or no search for explain)")


def _pools(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The worker pool of every application made from here on (the server
    runs in this process): its own counters say what its requests do."""
    import podnuma.web.app as web_app

    made: list[Any] = []
    create = web_app.create_app

    def recording(*args: Any, **kwargs: Any) -> Any:
        app = create(*args, **kwargs)
        made.append(app.state.pool)
        return app

    monkeypatch.setattr(web_app, "create_app", recording)
    return made


def _slots(pool: Any) -> tuple[int, int, int]:
    """As the pool counts them: the requests holding a job slot, those
    waiting for one (a task each, holding no thread), and the threads
    running jobs."""
    if pool._slots is None:  # (made on the first request)
        return 0, 0, 0
    slots, threads = pool._slots.statistics(), pool._threads.statistics()
    return slots.borrowed_tokens, slots.tasks_waiting, threads.borrowed_tokens


def _until(pool: Any, want: tuple[int, int, int], results: list[Any]) -> None:
    """Wait until the pool counts ``want`` (a hang guard of a minute: far
    above the limit), no request answered meanwhile."""
    deadline = time.monotonic() + 60
    while (got := _slots(pool)) != want:
        assert not results, (got, want, [r[:2] for r in results])
        assert time.monotonic() < deadline, (got, want)
        time.sleep(0.02)


def test_waiting_for_a_job_process_holds_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """One job process, 60 requests for it at once (more than the 40
    threads the framework runs plain routes in): one has the job process,
    the others wait for it as tasks of the server holding no thread (the
    pool counts them waiting, and one thread running a job), and while
    they wait, the routes that need no job answer. A request that finds it
    busy until the time limit answers 503 saying so; a job that ran is
    killed at the limit and says that."""
    pools = _pools(monkeypatch)
    body = heavy_scenario()  # far past the limit: each job that runs is killed at it
    parts = urllib.parse.urlsplit
    # (a body time limit far above what 60 bodies at once need on a loaded machine)
    with running(time_limit=LIMIT, workers=1, read_timeout=60.0) as url:
        pool, = pools
        results: list[tuple[int, bytes]] = []
        lock = threading.Lock()

        def slow() -> None:
            conn = http.client.HTTPConnection("127.0.0.1", parts(url).port, timeout=120)
            try:
                conn.request("POST", "/api/explain", body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                answer = (resp.status, resp.read())
            finally:
                conn.close()
            with lock:
                results.append(answer)

        threads = [threading.Thread(target=slow, daemon=True) for _ in range(PENDING)]
        for t in threads:
            t.start()
        _until(pool, (1, PENDING - 1, 1), results)  # (one job runs, every other request waits)
        for path in ("/api/examples", "/api/defaults", "/api/examples-whatif", "/"):
            assert call(url + path)[0] == 200, path
        with lock:
            answered = [r[:2] for r in results]
        # those routes answered while every request still waited
        assert (_slots(pool), answered) == ((1, PENDING - 1, 1), [])
        for t in threads:
            t.join(120)  # (a hang guard)
        assert len(results) == PENDING
        assert _slots(pool) == (0, 0, 0)  # (every wait ended, its token given back)
        busy = [r for r in results if r[0] == 503]
        ran = [r for r in results if r[0] == 422]
        assert len(busy) + len(ran) == PENDING, [r for r in results if r[0] not in (422, 503)]
        assert len(busy) >= PENDING - 3, [r[0] for r in results]
        assert all(json.loads(data) == BUSY for _, data in busy)
        assert all(json.loads(data) == {"error": TOO_LONG} for _, data in ran), ran


def test_a_fleet_dump_waiting_for_a_job_process_has_written_nothing(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """/api/fleet/analyze lays its dump out once its job has a slot, and
    removes it after: with the one job process busy, requests waiting for
    it have written no file (the server's temporary directory stays
    without a dump's directory), and once every request has its answer
    none is left."""
    import tempfile

    from tests.web.test_api import EXAMPLES as examples

    pools = _pools(monkeypatch)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # (the server runs in this process)
    dump = examples / "fleet"
    files = {p.relative_to(dump).as_posix(): p.read_text() for p in sorted(dump.rglob("*")) if p.is_file()}
    fleet_body = json.dumps({"files": files}).encode()
    with running(time_limit=LIMIT, workers=1, read_timeout=60.0) as url:
        pool, = pools
        results: list[tuple[str, int]] = []
        lock = threading.Lock()

        def post(path: str, body: bytes) -> None:
            status, _, _ = send(url, "POST", path, body, {"Content-Type": "application/json"})
            with lock:
                results.append((path, status))

        busy = threading.Thread(target=post, args=("/api/explain", heavy_scenario()), daemon=True)
        busy.start()
        _until(pool, (1, 0, 1), results)  # (the explain has the one job process)
        waiting = [threading.Thread(target=post, args=("/api/fleet/analyze", fleet_body), daemon=True)
                   for _ in range(4)]
        for t in waiting:
            t.start()
        _until(pool, (1, 4, 1), results)  # (they reach the server and wait for the job process)
        assert sorted(p.name for p in tmp_path.glob("podnuma-fleet-*")) == []
        with lock:
            answered = list(results)
        assert (_slots(pool), answered) == ((1, 4, 1), [])  # the explain still runs, the dumps still wait
        for t in [busy, *waiting]:
            t.join(120)  # (a hang guard)
        assert len(results) == 5
        assert all(status in (200, 422, 503) for _, status in results), results
        assert sorted(p.name for p in tmp_path.glob("podnuma-fleet-*")) == []
