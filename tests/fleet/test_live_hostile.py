"""A live answer is read as the same content in a dump file is: the same
outcome, the same issues in the same words, the API path in place of the
file's name; never a traceback.

* a list answer whose ``items`` is not a list, or whose items are not
  mappings (or have a ``spec``, ``metadata`` or ``nodeName`` of the wrong
  type): the issues a dump of it gives, at their field path (at most 20 a
  list); a nodes answer that leaves no node is the command's one line;
* a configz answer that is no kubelet configuration (``{}``,
  ``{"kubeletconfig": 5}``): the error a configz file of it is;
* a NodeResourceTopology answer without objects: one of the report's
  issues, as its dump beside the others is (the command's one line when
  there is no node, as for the dumps).

Each answer is served by the loopback stub of the API server of
tests/fleet/test_empty_dumps.py, and the same content written as dump files
beside the example fleet's is read by the same command."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

from .conftest import EXAMPLE
from .test_empty_dumps import NODES, NOTHING, NRTS, PODS, _Api, _line, _live, _served

LIVE = "<live cluster>"
#: each list's dump file, as kubectl writes it
DUMPS = {NODES: "nodes.json", PODS: "pods.json", NRTS: "noderesourcetopologies.json"}


def _items(name: str) -> list[Any]:
    items: list[Any] = json.loads((EXAMPLE / name).read_text())["items"]
    return items


PODS_ = _items("pods.json")
NODES_ = _items("nodes.json")
NODE = NODES_[0]["metadata"]["name"]
CONFIGZ = f"/api/v1/nodes/{NODE}/proxy/configz"


def _list(kind: str, items: Any) -> str:
    return json.dumps({"kind": kind, "apiVersion": "v1", "metadata": {}, "items": items})


def _files(tmp_path: Path, answers: dict[str, str]) -> tuple[int, str, str, dict[str, str]]:
    """The CLI on the example fleet's dumps with ``answers`` written in
    place of the lists' (a configz beside them as ``configz/NODE.json``);
    with the file standing for each API path."""
    d = tmp_path / "dumps"
    d.mkdir()
    names: dict[str, str] = {}
    for path, dump in DUMPS.items():
        shutil.copy(EXAMPLE / dump, d / dump)
        names[path] = str(d / dump)
    for path, text in answers.items():
        if path in DUMPS:
            (d / DUMPS[path]).write_text(text)
        else:
            (d / "configz").mkdir(exist_ok=True)
            f = d / "configz" / f"{path.split('/')[4]}.json"
            f.write_text(text)
            names[path] = str(f)
    r = CliRunner().invoke(cli, ["fleet", "analyze", str(d), "-o", "json"])
    return r.exit_code, r.stdout, r.stderr, names


def _serve(api: tuple[_Api, Path], answers: dict[str, str]) -> tuple[int, str, str]:
    a, kc = api
    a.answers.update(answers)
    code, out, err = _live(kc)
    assert "Traceback" not in err and "internal error" not in err, err
    return code, out, err


def _said(doc: dict[str, Any], names: dict[str, str]) -> list[tuple[Any, ...]]:
    """The issues of the report naming one of ``names`` (an API path, or
    the file standing for it), with that name put back as the API path."""
    back = {v: k for k, v in names.items()}
    return [(i["severity"], i.get("node"), back[i["file"]], i.get("path"), i["message"])
            for i in doc["issues"] if i.get("file") in back]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[_Api, Path]]:
    """The example fleet served, and a kubeconfig for it
    (tests/fleet/test_empty_dumps.py)."""
    with _served(tmp_path) as served:
        yield served


def _pods_by_node(doc: dict[str, Any]) -> dict[str, tuple[int, Any]]:
    """Each node's pods: those counted, and those replayed."""
    return {n["name"]: (n["podCount"], n.get("baseline", {}).get("pods")) for n in doc["nodes"]}


def _alike(api: tuple[_Api, Path], tmp_path: Path, answers: dict[str, str]) -> list[tuple[Any, ...]]:
    """The live read of ``answers`` and the dumps of them give the same
    report (the same nodes, pods and issues naming them): those issues."""
    code, out, err = _serve(api, answers)
    assert code == 0, err
    fcode, fout, ferr, names = _files(tmp_path, answers)
    assert fcode == 0, ferr
    live, files = json.loads(out), json.loads(fout)
    assert _pods_by_node(live) == _pods_by_node(files)
    counts = ("nodes", "podsInDumps", "podsWithoutNode", "podsOnNodes", "podsDumpedTwice")
    assert {k: live["fleet"][k] for k in counts} == {k: files["fleet"][k] for k in counts}
    said = _said(live, {p: f"{LIVE} {p}" for p in names})
    assert said == _said(files, names)
    return said


# -- malformed list answers: issues at their field path ----------------------

BAD_PODS = {
    "items not a list": _list("PodList", 5),
    "items not mappings": _list("PodList", [1, "x", None, *PODS_]),
    "fields of the wrong type": _list("PodList", [
        {**PODS_[0], "spec": 5}, {**PODS_[1], "metadata": []},
        {**PODS_[2], "spec": {**PODS_[2]["spec"], "nodeName": 7}}, *PODS_[3:]]),
    "more than 20 bad": _list("PodList", [7] * 25 + PODS_),
}


@pytest.mark.parametrize("text", BAD_PODS.values(), ids=BAD_PODS.keys())
def test_a_malformed_pods_answer_is_the_issues_of_its_dump(api: tuple[_Api, Path], tmp_path: Path,
                                                          text: str) -> None:
    said = _alike(api, tmp_path, {PODS: text})
    mine = [s for s in said if s[2] == PODS and "not in the nodes dump" not in s[4]]  # (the items' own)
    assert mine
    if text == BAD_PODS["items not a list"]:
        assert mine == [("error", None, PODS, "items", "must be a list, got an integer")]
    if text == BAD_PODS["more than 20 bad"]:
        assert len(mine) == 21 and mine[-1][4] == ("5 more object(s) of this file with a field of "
                                                   "the wrong type, not listed")
    if text == BAD_PODS["fields of the wrong type"]:
        assert [s[3] for s in mine] == ["items[0].spec", "items[1].metadata", "items[2].spec.nodeName"]


BAD_NODES = {
    "items not mappings": json.dumps({"kind": "NodeList", "items": [5, *NODES_]}),
    "metadata of the wrong type": json.dumps({"kind": "NodeList", "items": [
        {**NODES_[0], "metadata": 5}, *NODES_[1:]]}),
    "spec of the wrong type": json.dumps({"kind": "NodeList", "items": [
        {**NODES_[0], "spec": "x"}, *NODES_[1:]]}),
}


@pytest.mark.parametrize("text", BAD_NODES.values(), ids=BAD_NODES.keys())
def test_a_malformed_nodes_answer_is_the_issues_of_its_dump(api: tuple[_Api, Path], tmp_path: Path,
                                                           text: str) -> None:
    said = _alike(api, tmp_path, {NODES: text})
    assert [s for s in said if s[2] == NODES]


BAD_NRTS = {
    "items not a list": json.dumps({"kind": "NodeResourceTopologyList", "items": 5}),
    "items not mappings": json.dumps({"kind": "NodeResourceTopologyList",
                                      "items": [5, "x", *_items("noderesourcetopologies.json")]}),
}


@pytest.mark.parametrize("text", BAD_NRTS.values(), ids=BAD_NRTS.keys())
def test_a_malformed_nrt_answer_is_the_issues_of_its_dump(api: tuple[_Api, Path], tmp_path: Path,
                                                         text: str) -> None:
    said = _alike(api, tmp_path, {NRTS: text})
    assert [s for s in said if s[2] == NRTS]


def test_a_nodes_answer_whose_items_are_not_a_list_is_one_line(api: tuple[_Api, Path], tmp_path: Path) -> None:
    """No node left: the command's one line, as for the dump of it."""
    text = json.dumps({"kind": "NodeList", "items": 5})
    line = _line(*_serve(api, {NODES: text}))
    assert line == f"error: {LIVE} {NODES}: items: must be a list, got an integer"
    code, out, err, names = _files(tmp_path, {NODES: text})
    assert _line(code, out, err) == f"error: {names[NODES]}: items: must be a list, got an integer"


def test_pages_are_read_as_one_list(api: tuple[_Api, Path], tmp_path: Path) -> None:
    """The pages of a list are the items of one dump (``kubectl get -o json``
    joins them): a bad item of the second page is said at its place in the
    whole list."""
    first = {"kind": "PodList", "apiVersion": "v1", "metadata": {"continue": "next"},
             "items": [7, *PODS_[:10]]}
    second = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": ["x", *PODS_[10:]]}
    code, out, err = _serve(api, {PODS: json.dumps(first), f"{PODS}?continue=next": json.dumps(second)})
    assert code == 0, err
    live = json.loads(out)
    whole = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": first["items"] + second["items"]}
    fcode, fout, ferr, names = _files(tmp_path, {PODS: json.dumps(whole)})
    files = json.loads(fout)
    assert _pods_by_node(live) == _pods_by_node(files)
    assert live["fleet"]["podsInDumps"] == files["fleet"]["podsInDumps"] == len(PODS_)
    said = _said(live, {PODS: f"{LIVE} {PODS}"})
    assert said == _said(files, {PODS: names[PODS]})
    assert [s[3] for s in said if s[3]] == ["items[0]", "items[11]"]


# -- configz: the error a configz file of it is -------------------------------

@pytest.mark.parametrize("text,path,message", [
    ("{}", None, "not a Kubernetes object or list (a mapping without kind): no Kubernetes objects"),
    ('{"kubeletconfig": 5}', "kubeletconfig", "must be a mapping, got an integer"),
    ('{"kubeletconfig": [1]}', "kubeletconfig", "must be a mapping, got a list"),
], ids=["empty mapping", "a number", "a list"])
def test_a_configz_answer_without_a_configuration_is_the_error_of_its_file(
    api: tuple[_Api, Path], tmp_path: Path, text: str, path: str | None, message: str,
) -> None:
    said = _alike(api, tmp_path, {CONFIGZ: text})
    node = NODE if path else None  # (a configz file of `{}` is not known to be one)
    assert [s for s in said if s[2] == CONFIGZ] == [("error", node, CONFIGZ, path, message)]
    code, out, err = _live(api[1])
    n = next(n for n in json.loads(out)["nodes"] if n["name"] == NODE)
    assert n["configSource"] == "kubelet defaults"


# -- NodeResourceTopology objects: as their dump beside the others -----------

@pytest.mark.parametrize("text,what", NOTHING)
def test_an_nrt_answer_without_objects_is_an_issue_and_the_run_goes_on(
    api: tuple[_Api, Path], tmp_path: Path, text: str, what: str,
) -> None:
    said = _alike(api, tmp_path, {NRTS: text})
    assert [s for s in said if s[2] == NRTS] == [
        ("error", None, NRTS, None, f"not a Kubernetes object or list ({what}): no Kubernetes objects")]
    code, out, err = _live(api[1])
    doc = json.loads(out)
    assert len(doc["nodes"]) == 5
    assert not any("NodeResourceTopology" in n["topologySource"] for n in doc["nodes"])


def test_an_nrt_answer_without_objects_and_no_node_is_one_line(api: tuple[_Api, Path], tmp_path: Path) -> None:
    """No node (an empty list of them): the command's one line naming the
    NodeResourceTopology list, as for the dumps of them."""
    answers = {NODES: _list("NodeList", []), PODS: _list("PodList", []), NRTS: "{}"}
    msg = "not a Kubernetes object or list (a mapping without kind): no Kubernetes objects"
    assert _line(*_serve(api, answers)) == f"error: {LIVE} {NRTS}: {msg}"
    code, out, err, names = _files(tmp_path, answers)
    assert _line(code, out, err) == f"error: {names[NRTS]}: {msg}"


def test_a_configz_answer_with_a_repeated_key_is_read_as_its_file(api: tuple[_Api, Path], tmp_path: Path) -> None:
    """A configuration with a key given twice: decoded as the kubelet's
    lenient decoding does (the last one, and a warning of the repeated
    field), as a configz file of it is; not thrown away for the kubelet's
    defaults. Every note on it names the API path."""
    text = ('{"kubeletconfig": {"cpuManagerPolicy": "static", "cpuManagerPolicy": "none", '
            '"reservedSystemCPUs": "0"}}')
    said = _alike(api, tmp_path, {CONFIGZ: text})
    assert not any("not usable" in s[4] for s in said)
    code, out, err = _live(api[1])
    doc = json.loads(out)
    n = next(n for n in doc["nodes"] if n["name"] == NODE)
    assert n["configSource"] == f"configz {LIVE} {CONFIGZ}"
    (tmp_path / "again").mkdir()
    fcode, fout, ferr, names = _files(tmp_path / "again", {CONFIGZ: text})

    def repeated(doc: dict[str, Any], name: str) -> list[tuple[Any, ...]]:
        return [(i["severity"], i.get("path"), i["message"], i.get("file", "").replace(name, "NAME"))
                for i in doc["issues"] if i.get("node") == NODE and "cpuManagerPolicy" in i["message"]]

    mine = repeated(doc, f"{LIVE} {CONFIGZ}")
    assert mine and mine == repeated(json.loads(fout), names[CONFIGZ])
    assert all("NAME" in m[3] for m in mine)


@pytest.mark.parametrize("what", ["a Pod", "a List"])
def test_a_configz_answer_of_kubernetes_objects_is_read_as_its_file(
    api: tuple[_Api, Path], tmp_path: Path, what: str,
) -> None:
    """A configz answer that holds Kubernetes objects (a Pod, a List of
    pods) is read as a file of them is: its pods counted and replayed."""
    pod = {**PODS_[0], "metadata": {**PODS_[0]["metadata"], "name": "from-configz", "uid": "u-configz"}}
    text = json.dumps(pod if what == "a Pod" else {"kind": "List", "apiVersion": "v1", "items": [pod]})
    _alike(api, tmp_path, {CONFIGZ: text})
    code, out, err = _live(api[1])
    doc = json.loads(out)
    assert doc["fleet"]["podsInDumps"] == len(PODS_) + 1
    n = next(n for n in doc["nodes"] if n["name"] == pod["spec"]["nodeName"])
    assert n["podCount"] == 1 + sum(p["spec"].get("nodeName") == n["name"] for p in PODS_)


def test_nrt_issues_name_the_api_path_at_the_item(api: tuple[_Api, Path], tmp_path: Path) -> None:
    """A NodeResourceTopology object the report notes is named by the API
    path listed, at its place in the list (``items[0].zones...``), as its
    dump is named by the file and the same field path; the nodes' topology
    source names the API path."""
    nrts = _items("noderesourcetopologies.json")
    broken = {**nrts[0], "zones": [{**nrts[0]["zones"][0], "name": 5}, *nrts[0]["zones"][1:]]}
    text = json.dumps({"kind": "NodeResourceTopologyList", "apiVersion": "topology.node.k8s.io/v1alpha2",
                       "items": [broken, *nrts[1:]]})
    code, out, err = _live(api[1])
    sources = [n["topologySource"] for n in json.loads(out)["nodes"]]
    assert f"NodeResourceTopology {LIVE} {NRTS}" in sources, sources
    said = _alike(api, tmp_path, {NRTS: text})
    paths = [s[3] for s in said if s[2] == NRTS and s[3]]
    assert paths and all(p.startswith("items[0].") for p in paths), said


def test_pods_in_a_nodes_answer_are_replayed_as_from_its_file(api: tuple[_Api, Path], tmp_path: Path) -> None:
    """A nodes answer that is a List of Nodes and Pods: its pods counted
    and replayed on their nodes, as from a nodes dump of it."""
    extra = [{**p, "metadata": {**p["metadata"], "name": f"in-nodes-{i}", "uid": f"u-in-nodes-{i}"}}
             for i, p in enumerate(PODS_[:3])]
    text = json.dumps({"kind": "List", "apiVersion": "v1", "items": [*NODES_, *extra]})
    _alike(api, tmp_path, {NODES: text})
    code, out, err = _live(api[1])
    doc = json.loads(out)
    assert doc["fleet"]["podsInDumps"] == len(PODS_) + 3
    n = next(n for n in doc["nodes"] if n["name"] == extra[0]["spec"]["nodeName"])
    assert n["podCount"] == sum(p["spec"].get("nodeName") == n["name"] for p in [*PODS_, *extra])
