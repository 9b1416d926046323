"""JSON that holds no Kubernetes object is refused the same way however it
is read: a dump file, read whole in one process or cut into pieces read by
several workers, and a list answered by an API server read live.

A file given alone is the command's one line naming it (``not a Kubernetes
object or list (...): no Kubernetes objects``); a list call of the live
read (nodes, pods) whose answer holds no Kubernetes object is the same line
naming the API path it listed, not a cluster of 0 nodes or 0 pods (the
NodeResourceTopology list is read as its dump beside the others is:
tests/fleet/test_live_hostile.py). An empty list (``{"kind": "NodeList",
"items": []}``) is 0 objects of its kind, on every path.

The live read is served here by a small HTTP server on loopback: a real
kube-apiserver never answers a list call so (tests/cluster runs the
live read against one)."""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli
from podnuma.fleet import podscan
from podnuma.fleet.execute import run_serial
from podnuma.fleet.inputs import Scan, load_fleet
from podnuma.fleet.podscan import Piece, cut_pieces
from podnuma.fleet.report import fleet_report
from podnuma.render.serialize import dump_json

from .conftest import EXAMPLE, need

NONE = "no Kubernetes objects"

#: answers that hold no Kubernetes object, with what the reader says they are
NOTHING = [
    ("{}", "a mapping without kind"),
    ('{"a": 1}', "a mapping without kind"),
    ("[]", "an empty array"),
    ('{"kind": "NodeList"}', "a NodeList without items"),
    ('{"metadata": {"resourceVersion": "1"}}', "a mapping without kind"),
    ("null", "null"),
    ("[1, 2]", "values none of which is a Kubernetes object"),
]


def _line(code: int, out: str, err: str) -> str:
    assert (code, out) == (2, ""), (code, out, err)
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# -- dump files: one process, pieces ----------------------------------------

#: small pieces, so that the test fleet's pods dumps are cut (see test_pieces)
SMALL = 1536


class _Mapper:
    """Runs the reading here, batch after batch, as a cluster would (not an
    executor of this process: large dumps are cut into pieces)."""

    def __init__(self) -> None:
        self.pieces = 0

    def __call__(self, fn: Callable[[Sequence[Any]], list[Scan]], args: Sequence[Sequence[Any]], *,
                 arrived: Callable[[int, list[Scan]], None] | None = None) -> list[list[Scan]]:
        out = []
        for i, batch in enumerate(args):
            scans = fn(batch)
            self.pieces += sum(isinstance(w, Piece) for w in batch)
            out.append(scans)
            if arrived is not None:
                arrived(i, scans)
        return out


def _report(d: Path, mapper: _Mapper | None = None) -> str:
    fleet = load_fleet([d], map_files=mapper, parts=4, runners=2) if mapper else load_fleet([d])
    return dump_json(fleet_report(fleet, run_serial(fleet.nodes, []), []))


@pytest.mark.parametrize("layout", ["nested items", "a List without items", "kind of another type",
                                    "beside an empty mapping"])
def test_a_dump_of_pods_without_a_list_reads_alike_whole_and_in_pieces(
    small_fleet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str,
) -> None:
    """A pods dump large enough to be cut whose pods are not a list's items
    (and an empty mapping beside it): the same report, the same issues
    naming the files, read in one process or in pieces."""
    monkeypatch.setattr(podscan, "PIECE_BYTES", SMALL)
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    dumps = sorted((d / "pods").glob("*.json"))
    for f in dumps:
        items = json.loads(f.read_text())["items"]
        doc: Any = {"kind": "PodList", "items": items}
        if layout == "nested items":
            doc = {"metadata": {"items": items}}
        elif layout == "a List without items":
            doc = {"kind": "List", "metadata": {"items": items}}
        elif layout == "kind of another type":
            doc = {"kind": 5, "items": items}
        f.write_text(json.dumps(doc, indent=2))
    (d / "empty.json").write_text("{}")
    assert cut_pieces(str(dumps[0])) is not None  # (the pieces' reader is asked first)
    serial = _report(d)
    mapper = _Mapper()
    assert _report(d, mapper) == serial and mapper.pieces > 0
    said = {i["file"] for i in json.loads(serial)["issues"] if i["message"].endswith(NONE)}
    assert str(d / "empty.json") in said
    if layout != "beside an empty mapping":
        assert {str(f) for f in dumps} <= said


@pytest.mark.parametrize("text,what", NOTHING)
@pytest.mark.parametrize("executor", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_a_dump_without_kubernetes_objects_alone_is_one_line(tmp_path: Path, text: str, what: str,
                                                             executor: list[str]) -> None:
    f = tmp_path / "nodes.json"
    f.write_text(text)
    r = CliRunner().invoke(cli, ["fleet", "analyze", str(f), *executor])
    assert _line(r.exit_code, r.stdout, r.stderr) == f"error: {f}: not a Kubernetes object or list ({what}): {NONE}"


# -- the live read ----------------------------------------------------------

NODES = "/api/v1/nodes"
PODS = "/api/v1/pods"
NRTS = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"


def _example(name: str) -> str:
    return (EXAMPLE / name).read_text()


class _Api:
    """A loopback HTTP server that answers GET ``path`` with ``answers[path]``
    (the query left off; a list's next page, asked with ``continue=TOKEN``,
    with ``answers["path?continue=TOKEN"]``), a 404 Status otherwise."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}
        #: how many times each ``path[?continue=TOKEN]`` was asked
        self.asked: dict[str, int] = {}
        #: answers that change as they are asked again: ``hook(key, times
        #: asked)``, else ``answers[key]``
        self.hook: Callable[[str, int], str | None] | None = None
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the handler's name)
                path, _, query = self.path.partition("?")
                token = parse_qs(query).get("continue")
                key = f"{path}?continue={token[0]}" if token else path
                api.asked[key] = api.asked.get(key, 0) + 1
                body = api.hook(key, api.asked[key]) if api.hook else None
                if body is None:
                    body = api.answers.get(key)
                code = 200
                if body is None:
                    code, body = 404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                                  "reason": "NotFound", "code": 404, "message": "not found"})
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[_Api, Path]]:
    with _served(tmp_path) as served:
        yield served


@contextlib.contextmanager
def _served(tmp_path: Path) -> Iterator[tuple[_Api, Path]]:
    """The example fleet served (nodes, pods, NodeResourceTopology objects,
    no configz), and a kubeconfig for it."""
    need("kubernetes")
    a = _Api()
    a.answers.update({NODES: _example("nodes.json"), PODS: _example("pods.json"),
                      NRTS: _example("noderesourcetopologies.json")})
    kc = tmp_path / "kubeconfig"
    kc.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "here",
        "clusters": [{"name": "c", "cluster": {"server": a.url}}],
        "users": [{"name": "u", "user": {"token": "some-token"}}],
        "contexts": [{"name": "here", "context": {"cluster": "c", "user": "u"}}],
    }))
    try:
        yield a, kc
    finally:
        a.close()


def _live(kc: Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["fleet", "analyze", "--kubeconfig", str(kc), "-o", "json"])
    return r.exit_code, r.stdout, r.stderr


def test_the_served_example_is_read(api: tuple[_Api, Path]) -> None:
    code, out, err = _live(api[1])
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["nodes"]) == 5 and doc["fleet"]["podsInDumps"] > 0


@pytest.mark.parametrize("path", [NODES, PODS], ids=["nodes", "pods"])
@pytest.mark.parametrize("text,what", NOTHING)
def test_a_list_answer_without_kubernetes_objects_is_one_line_naming_it(
    api: tuple[_Api, Path], path: str, text: str, what: str,
) -> None:
    """An answer that holds no Kubernetes object is the error a dump file
    of it is, naming the API path listed: never a cluster of 0 nodes or 0
    pods. (NodeResourceTopology objects: as their dump beside the others,
    one of the report's issues, tests/fleet/test_live_hostile.py.)"""
    a, kc = api
    a.answers[path] = text
    assert _line(*_live(kc)) == (f"error: <live cluster> {path}: "
                                 f"not a Kubernetes object or list ({what}): {NONE}")


@pytest.mark.parametrize("path", [NODES, PODS, NRTS], ids=["nodes", "pods", "nrts"])
def test_an_empty_list_answer_is_zero_objects(api: tuple[_Api, Path], tmp_path: Path, path: str) -> None:
    """An empty list is 0 objects of its kind, as its dump is. An empty list
    of nodes beside pods bound to nodes is what the dumps of them are: no
    node, and the pods bound to a node not in the nodes dump, the command's
    one line naming the pods' list (exit 2), not a report of 0 nodes (a
    cluster whose nodes answer is empty while pods run on nodes is an
    answer that cannot be right)."""
    a, kc = api
    empty = '{"apiVersion": "v1", "kind": "List", "metadata": {}, "items": []}'
    a.answers[path] = empty
    code, out, err = _live(kc)
    if path == NODES:
        d = tmp_path / "dumps"
        d.mkdir()
        (d / "nodes.json").write_text(empty)
        (d / "pods.json").write_text(_example("pods.json"))
        r = CliRunner().invoke(cli, ["fleet", "analyze", str(d), "-o", "json"])
        said = _line(r.exit_code, r.stdout, r.stderr)
        assert said.startswith(f"error: {d / 'pods.json'}: ") and said.endswith(
            "which is not in the nodes dump: not replayed")
        assert _line(code, out, err) == said.replace(str(d / "pods.json"), f"<live cluster> {PODS}")
        return
    assert code == 0, err
    doc = json.loads(out)
    if path == PODS:
        assert len(doc["nodes"]) == 5 and doc["fleet"]["podsInDumps"] == 0
    else:
        assert len(doc["nodes"]) == 5


# -- a list's pages: bounded together, as one dump file is -------------------

def _paged(items: list[Any], tokens: list[str]) -> dict[str, str]:
    """``items`` served in ``len(tokens) + 1`` pages, each asking for the
    next with its token."""
    n = len(tokens) + 1
    size = -(-len(items) // n)
    out: dict[str, str] = {}
    for i in range(n):
        meta = {"continue": tokens[i]} if i < len(tokens) else {}
        key = PODS if i == 0 else f"{PODS}?continue={tokens[i - 1]}"
        out[key] = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta,
                               "items": items[i * size:(i + 1) * size]})
    return out


def test_a_continue_token_answered_again_is_one_line_naming_the_list(api: tuple[_Api, Path]) -> None:
    """A server that answers ``continue=again`` with ``again`` once more
    would be listed for ever (its pages, and the memory they take, without
    end): the token seen before is the command's one line naming the list.
    (The stub gives up after 50 times, so that a reader that does not see
    it ends too: with every pod counted 50 times.)"""
    a, kc = api
    pods = json.loads(_example("pods.json"))
    again = json.dumps({**pods, "metadata": {"continue": "again"}})
    last = json.dumps({**pods, "metadata": {}})
    a.answers[PODS] = again
    a.hook = lambda key, times: (again if times < 50 else last) if key == f"{PODS}?continue=again" else None
    assert _line(*_live(kc)) == (f"error: <live cluster> {PODS}: the continue token 'again' was "
                                 "answered before: the list's pages repeat")
    assert a.asked[f"{PODS}?continue=again"] == 1


def test_the_pages_of_a_list_together_are_within_the_limit_of_one_dump(
    api: tuple[_Api, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each page within the byte limit, all of them not: the limit of one
    dump file (the list is one), the command's one line naming the list."""
    from podnuma.fleet import live

    a, kc = api
    items = json.loads(_example("pods.json"))["items"]
    a.answers.update(_paged(items, ["p2"]))
    limit = 80_000
    assert all(len(t) < limit for t in a.answers.values())
    assert sum(len(a.answers[k]) for k in (PODS, f"{PODS}?continue=p2")) > limit
    monkeypatch.setattr(live, "FLEET_LIMITS", live.FLEET_LIMITS.with_bytes(limit))
    assert _line(*_live(kc)) == (f"error: <live cluster> {PODS}: larger than the limit of {limit} "
                                 "bytes (the pages of the list together)")


def test_the_pages_of_a_list_are_at_most_a_limit(api: tuple[_Api, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages without end, each with a new token: at most ``MAX_PAGES`` of
    them are read, the command's one line naming the list past it."""
    from podnuma.fleet import live

    a, kc = api
    items = json.loads(_example("pods.json"))["items"]
    a.answers.update(_paged(items, [f"p{i}" for i in range(2, 7)]))  # 6 pages
    monkeypatch.setattr(live, "MAX_PAGES", 6)
    code, out, err = _live(kc)
    assert code == 0, err
    assert json.loads(out)["fleet"]["podsInDumps"] == len(items)
    monkeypatch.setattr(live, "MAX_PAGES", 5)
    assert _line(*_live(kc)) == f"error: <live cluster> {PODS}: more than the limit of 5 pages"
