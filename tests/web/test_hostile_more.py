"""More hostile requests to a real server (uvicorn on a loopback port):
cluster dumps whose file names cannot be laid out as given, and JSON bodies
the framework's own parser would refuse with its bare ``{"detail": ...}``.
Each answers 400 with the API's ``{"error": "FILE: MESSAGE"}`` (never a 500,
a plain-text error or a traceback), and leaves no temporary directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.web.conftest import need
from tests.web.test_api import EXAMPLES, call


def _fleet_extra() -> None:
    from podnuma.web.app import FLEET_EXTRA

    need("the fleet extra (plotly)", FLEET_EXTRA)




def _error(status: int, ctype: str, data: bytes) -> str:
    """The message of a 400 with the documented error shape."""
    assert status == 400, (status, data[:300])
    assert ctype.startswith("application/json"), (ctype, data[:300])
    body = json.loads(data)
    assert list(body) == ["error"], body
    message = body["error"]
    assert isinstance(message, str) and message and "\n" not in message
    assert "Traceback" not in message and "internal error" not in message
    assert len(data) < 1000  # a huge name is shown shortened
    return str(message)


LONG = "A" * 300 + ".json"
DEEP = "d/" * 2000 + "a.json"

# name -> text, then what the message holds
HOSTILE_DUMPS = {
    "file-and-dir": ({"a.json": "{}", "a.json/b.json": "{}"},
                     ["a.json/b.json: ", "a.json is both a file and a directory"]),
    "dir-and-file": ({"a.json/b.json": "{}", "a.json": "{}"},
                     ["a.json: ", "both a file and a directory", "a.json/b.json is given too"]),
    "long-part": ({LONG: "{}"},
                  ["AAAA", "(305 characters)", "a part of the name is 305 bytes long",
                   "limit of 255 bytes"]),
    # (a lone surrogate is refused where the request body is read, with its path)
    "lone-surrogate-text": ({"x.json": "\udc80"},
                            ["request body: files.x.json: not Unicode text: a lone surrogate "
                             "(\\udc80, written as an escape) in the value"]),
    "deep": ({DEEP: "{}"},
             ["d/d/d/", "(4006 characters)", "the name is 4006 bytes long",
              "limit of 1024 bytes"]),
    "many-parts": ({"d/" * 40 + "a.json": "{}"},
                   ["the name has 41 parts, more than the limit of 16"]),
    "lone-surrogate-name": ({"\udc80.json": "{}"},
                            ["request body: files: not Unicode text: a lone surrogate "
                             "(\\udc80, written as an escape) in a key"]),
    "line-break-in-a-directory": ({"d\n/a.json": "{}"},
                                  ["d\\n/a.json: not a plain relative name"]),
    "backslash": ({"a\\b.json": "{}", "a/b.json": "{}"},
                  ["a\\b.json: a backslash in the name: separate directories with /"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(HOSTILE_DUMPS))
def test_hostile_dump_names_are_a_400_naming_the_file(server: str, own_tmp: Path, case: str) -> None:
    _fleet_extra()
    files, wanted = HOSTILE_DUMPS[case]
    body = json.dumps({"files": files}).encode()
    message = _error(*call(server + "/api/fleet/analyze", body, "application/json"))
    for part in wanted:
        assert part in message, (part, message)
    assert os.listdir(own_tmp) == []


def test_a_dump_within_the_name_bounds_is_analysed(server: str, own_tmp: Path) -> None:
    """The bounds leave a real dump alone: the example dump, one of its
    files given again at the deepest and longest name allowed, is
    analysed (its job reads the files the server laid out), and its
    temporary directory is gone after."""
    _fleet_extra()
    dump = EXAMPLES / "fleet"
    files = {p.relative_to(dump).as_posix(): p.read_text() for p in sorted(dump.rglob("*"))
             if p.is_file()}
    deepest = "/".join(["d" * 60] * 15 + ["x" * 60 + ".json"])
    assert len(deepest) <= 1024 and deepest.count("/") == 15
    files[deepest] = files["nodes.json"]
    status, ctype, data = call(server + "/api/fleet/analyze", json.dumps({"files": files}).encode(),
                               "application/json")
    assert status == 200, data[:500]
    url = json.loads(data)["url"]
    assert call(server + url)[0] == 200
    assert os.listdir(own_tmp) == []


DEEP_BODY = b"[" * 100_000 + b"]" * 100_000
BIG_NUMBER = b'{"pod": "x", "step": ' + b"7" * 5000 + b"}"

# body -> what the message is
BAD_BODIES = {
    "deep-list": (DEEP_BODY, "request body: nested more than 100 levels deep"),
    "deep-field": (b'{"pod": "x", "sidecars": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                   "request body: nested more than 100 levels deep"),
    "long-number": (BIG_NUMBER, "request body: invalid JSON: a number of more than 4300 digits"),
    "long-number-in-a-list": (b'{"pod": "x", "sidecars": [' + b"1" * 5000 + b"]}",
                              "request body: invalid JSON: a number of more than 4300 digits"),
    "not-utf8": (b'{"pod": "\xff"}', "request body: not UTF-8 text (byte 9)"),
    "malformed": (b'{"pod": "x"', "request body: invalid JSON: Expecting ',' delimiter "
                                  "(line 1, column 12)"),
    "duplicate-key": (b'{"pod": "x", "pod": "y"}', "request body: pod: invalid JSON: duplicate key 'pod' "
                                                  "(line 1, column 14)"),
    "nan": (b'{"pod": NaN}', "request body: invalid JSON: NaN is not a JSON value"),
}  # fmt: skip


@pytest.mark.parametrize("endpoint", ["/api/compare", "/api/advise", "/api/fleet/analyze"])
@pytest.mark.parametrize("case", sorted(BAD_BODIES))
def test_json_bodies_are_read_within_the_limits(server: str, endpoint: str, case: str) -> None:
    body, want = BAD_BODIES[case]
    status, ctype, data = call(server + endpoint, body, "application/json")
    assert b"detail" not in data, data[:300]
    assert _error(status, ctype, data) == want


@pytest.mark.parametrize("endpoint", ["/api/simulate", "/api/explain", "/api/restart",
                                      "/api/topology", "/api/fleet/html"])
def test_the_text_bodies_are_read_within_the_limits_too(server: str, endpoint: str) -> None:
    """The endpoints that take a document as text read it through the
    same path: the same words, naming their file."""
    for body, want in ((DEEP_BODY, "nested more than 100 levels deep"),
                       (b'{"a": ' + b"1" * 5000 + b"}", "a number of more than 4300 digits")):
        message = _error(*call(server + endpoint, body, "application/json"))
        assert message.endswith(want), message
        assert message.startswith(("scenario.json: ", "fleet-report.json: ")), message


def test_a_lone_surrogate_in_a_message_is_shown_escaped(server: str) -> None:
    """A message echoing a request's lone surrogate (no UTF-8 for it)
    answers, the surrogate escaped."""
    _fleet_extra()
    body = json.dumps({"files": {"\udc80\udcff.json": "{}"}}).encode()
    message = _error(*call(server + "/api/fleet/analyze", body, "application/json"))
    assert message.startswith("request body: files: not Unicode text: a lone surrogate (\\udc80")
    status, _, data = call(server + "/api/fleet/analyze",
                           json.dumps({"files": {"a.json": "{}"}, "set": ["\udc80=1"]}).encode(),
                           "application/json")
    assert "\\udc80" in _error(status, "application/json", data)


def _read_as_the_readers_do(path: str) -> str:
    """A file read by the product's reader (a named pipe's open never waits:
    ``open`` with an opener that adds ``O_NONBLOCK``)."""
    from podnuma.inputs.documents import read_text

    return read_text(path, what="test")


def _wrap_descriptor(fd: int) -> str:
    with os.fdopen(fd, "rb", closefd=False) as fh:
        return fh.read().decode()


def test_a_job_reads_only_beneath_its_directory(tmp_path: Path) -> None:
    """The readers' opening passes the job sandbox's check (by name) beneath
    its readable directory; a file elsewhere, and a descriptor wrapped as a
    file (standard input), are refused."""
    from podnuma.web.worker import REFUSAL, Encoded, JobError, Limits, WorkerPool

    mine = tmp_path / "dump"
    mine.mkdir()
    (mine / "nodes.json").write_text("{}")
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    pool = WorkerPool(Limits(time_limit=60))
    root = str(mine)
    assert pool.run(_read_as_the_readers_do, str(mine / "nodes.json"), readable=root) == Encoded(
        b"{}", "text/plain; charset=utf-8")
    for fn, arg in ((_read_as_the_readers_do, str(secret)), (_wrap_descriptor, 0)):
        with pytest.raises(JobError) as info:
            pool.run(fn, arg, readable=root)
        assert REFUSAL in info.value.message, fn


def test_a_field_the_request_does_not_have_is_refused(server: str) -> None:
    """A misspelt field (``strategyy``) or one of another endpoint was
    ignored: the answer was the default one. It is refused, naming it, as
    the CLI refuses an option it does not have."""
    w = EXAMPLES / "whatif"
    pod = (w / "trainer-pod.yaml").read_text()
    for path, body, takes in (
            ("/api/advise", {"pod": pod, "strategyy": "max-freed"},
             "pod, podName, node, nodeName, kubeletConfig, kubeletConfigName, scenario, scenarioName, "
             "step, set, sharedPoolCpus, strategy, sidecars, asScenario"),
            ("/api/compare", {"pod": pod, "sidecar": ["train"]},
             "pod, podName, node, nodeName, kubeletConfig, kubeletConfigName, scenario, scenarioName, "
             "step, set"),
            ("/api/fleet/analyze", {"files": {"nodes.json": "{}"}, "whatIf": ["gates"]},
             "files, whatIfs, set")):
        status, ctype, data = call(server + path, json.dumps(body).encode(), "application/json")
        assert status == 422, (path, data)
        assert ctype.startswith("application/json")
        field = next(k for k in body if k not in ("pod", "files"))
        assert json.loads(data) == {"error": f"{field}: unknown field (this request takes {takes})"}


def test_no_such_path_or_method_answers_in_the_error_shape(server: str) -> None:
    # (an /api path no route has is 404 whatever the method; tests/web/test_door.py
    # asks every API path with every method it does not take)
    for method, path, status in (("GET", "/api/nope", 404), ("GET", "/favicon.ico", 404),
                                 ("POST", "/api/examples", 405), ("POST", "/api/nope", 404)):
        import urllib.error
        import urllib.request

        req = urllib.request.Request(server + path, data=b"{}" if method == "POST" else None, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req) as resp:
                got, ctype, data = resp.status, resp.headers.get("content-type", ""), resp.read()
        except urllib.error.HTTPError as e:
            got, ctype, data = e.code, e.headers.get("content-type", ""), e.read()
        assert got == status, (method, path, got, data)
        assert ctype.startswith("application/json")
        assert list(json.loads(data)) == ["error"], data


def test_a_query_parameter_the_path_does_not_take_is_refused(server: str) -> None:
    """A misspelt query parameter (``?detial=true``) was ignored: the
    answer was the one without it. It is refused, naming it and what the
    path takes; the page's own URL takes any (its script reads them)."""
    scenario = (EXAMPLES / "pod-level" / "pod-scope-1-shared.yaml").read_bytes()
    for path, body, takes in (
            ("/api/simulate?detial=true", scenario, "this path takes detail, name, set"),
            ("/api/examples?x=1", None, "this path takes none"),
            ("/api/explain?pod=a&serch=true", scenario, "this path takes name, pod, search, set, step")):
        status, ctype, data = call(server + path, body)  # (no body: GET)
        assert status == 422, (path, data)
        assert ctype.startswith("application/json")
        name = path.split("?")[1].split("&")[-1].split("=")[0]
        assert json.loads(data)["error"] == f"{name}: unknown query parameter ({takes})"
    status, _, data = call(server + "/api/simulate?detail=true", scenario)
    assert status == 200, data
    status, _, _ = call(server + "/?example=kep")
    assert status == 200
