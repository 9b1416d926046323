"""What ``fleet analyze`` says of inputs that overlap or that it does not
read: a pod in two dumps whose copies differ, a pod listed twice in one
dump, one file named twice, a node's configuration or NodeResourceTopology
given twice, an object of a kind the fleet does not read, and the dump a
pod the replay refuses was read from. Each is said with the files it is
about, and the report is the same bytes in one process, ``--workers 2``
and ``--dask local:2``."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLE, need
from .onedump import analyze as _analyze
from .onedump import guaranteed as _guaranteed
from .onedump import one_dump_fleet
from .onedump import pods_dump as _pods


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    return one_dump_fleet(tmp_path)

NODE = "ip-10-0-0-0.eu-west-1.compute.internal"


def _resized_copy(d: Path, name: str = "z-resized.json") -> tuple[dict[str, Any], Path]:
    """A second dump holding one Guaranteed pod of ``pods.json`` again, with
    6 CPUs instead of its own (a resize between two ``kubectl get``)."""
    _, doc = _pods(d)
    pod = copy.deepcopy(_guaranteed(doc))
    for c in pod["spec"]["containers"]:
        for k in ("requests", "limits"):
            if "cpu" in c.get("resources", {}).get(k, {}):
                c["resources"][k]["cpu"] = "6"
    path = d / "pods" / name
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}, indent=4))
    return pod, path


def test_a_pod_whose_two_dumps_differ_is_a_warning_naming_it_and_both_dumps(fleet: Path) -> None:
    """Two dumps taken at different times hold one pod (namespace, name,
    uid) with other resources. Neither says which copy is newer
    (``resourceVersion`` is opaque to clients), so one is replayed, the
    first read (the dumps in path order), and a warning names the pod,
    the field that differs, the dump whose copy is replayed and the other.
    A copy that differs in nothing the replay reads is said nowhere but in
    the count of pods in two dumps."""
    same = json.loads((fleet / "pods" / "pods.json").read_text())
    pod0 = _guaranteed(same)
    (fleet / "pods" / "z-same.json").write_text(json.dumps({"kind": "List", "items": [pod0]}))
    quiet = _analyze(str(fleet))
    assert quiet["fleet"]["podsDumpedTwice"] == 1
    assert not [i for i in quiet["issues"] if i["severity"] == "warning"]
    (fleet / "pods" / "z-same.json").unlink()

    pod, later = _resized_copy(fleet)
    got = _analyze(str(fleet))
    name = pod["metadata"]["name"]
    said = [i for i in got["issues"] if i["severity"] == "warning" and name in i["message"]]
    assert len(said) == 1, [i["message"] for i in got["issues"]]
    first = str(fleet / "pods" / "pods.json")
    assert said[0]["file"] == first and said[0]["node"] == pod["spec"]["nodeName"]
    assert "spec.containers[0].resources.requests.cpu" in said[0]["message"]
    assert f"the copy of {first} is replayed" in said[0]["message"] and str(later) in said[0]["message"]
    node = next(n for n in got["nodes"] if n["name"] == pod["spec"]["nodeName"])
    assert node["status"] == "warning"


def test_the_copy_replayed_is_said_whichever_dump_sorts_first(fleet: Path) -> None:
    """The same resized copy in a dump whose path sorts before
    ``pods.json``: that copy is the one replayed (more exclusive CPUs),
    and the warning says so, naming it."""
    before = next(n for n in _analyze(str(fleet))["nodes"] if n["name"] == NODE)["baseline"]
    pod, early = _resized_copy(fleet, "a-resized.json")
    assert pod["spec"]["nodeName"] == NODE
    got = _analyze(str(fleet))
    node = next(n for n in got["nodes"] if n["name"] == NODE)
    assert node["baseline"]["exclusiveCpus"] > before["exclusiveCpus"]
    said = [i for i in node["issues"] if pod["metadata"]["name"] in i["message"]]
    assert len(said) == 1 and said[0]["file"] == str(early)
    assert f"the copy of {early} is replayed" in said[0]["message"]


def test_a_pod_listed_twice_in_one_dump_is_said_of_that_dump(fleet: Path) -> None:
    """``kubectl get pods -A -o json`` lists each pod once: a pod twice in
    one list is a damaged dump, said of that dump (a warning naming it),
    not "a pod in more than one dump"; it is counted and replayed once."""
    clean = _analyze(str(fleet))
    path, doc = _pods(fleet)
    doc["items"].append(copy.deepcopy(doc["items"][4]))
    path.write_text(json.dumps(doc, indent=4))
    got = _analyze(str(fleet))
    said = [i for i in got["issues"] if "twice" in i["message"] or "more than one dump" in i["message"]]
    assert [(i["severity"], i["file"]) for i in said] == [("warning", str(path))], said
    assert "1 pod(s) listed twice in this dump" in said[0]["message"]
    assert got["fleet"]["podsInDumps"] == clean["fleet"]["podsInDumps"]
    assert got["summary"] == clean["summary"]


def test_one_dump_named_twice_is_one_dump(fleet: Path) -> None:
    """``fleet analyze DIR DIR/pods/pods.json``: the file is one dump, read
    once (a warning naming it), none of its pods "in more than one dump";
    the report's figures are those of the directory alone. So is a link
    to a file of the tree."""
    clean = _analyze(str(fleet))
    got = _analyze(str(fleet), str(fleet / "pods" / "pods.json"))
    assert got["fleet"] == clean["fleet"] and got["fleet"]["podsDumpedTwice"] == 0
    assert not any("more than one dump" in i["message"] for i in got["issues"])
    assert [i["file"] for i in got["issues"] if "read once" in i["message"]] == [str(fleet / "pods" / "pods.json")]
    os.symlink("pods.json", fleet / "pods" / "latest.json")
    linked = _analyze(str(fleet))
    assert linked["fleet"] == clean["fleet"]
    assert [i["file"] for i in linked["issues"] if "read once" in i["message"]] == [
        str(fleet / "pods" / "pods.json")]


def test_two_configurations_of_one_node_are_said(fleet: Path) -> None:
    """Two configz files name one node (a stale copy in another directory
    of the tree): the last in path order is used, as of a Node listed
    twice, and a warning names the node and both files."""
    current = fleet / "configz" / f"{NODE}.json"
    assert '"cpuManagerPolicy": "static"' in current.read_text()
    (fleet / "old").mkdir()
    stale = fleet / "old" / f"{NODE}.json"
    stale.write_text(current.read_text().replace('"cpuManagerPolicy": "static"', '"cpuManagerPolicy": "none"'))
    got = _analyze(str(fleet))
    said = [i for i in got["issues"] if i.get("node") == NODE and "given twice" in i["message"]]
    assert [(i["severity"], i["file"]) for i in said] == [("warning", str(stale))]
    assert f"in {current}, then in {stale}" in said[0]["message"]
    node = next(n for n in got["nodes"] if n["name"] == NODE)
    assert node["configSource"] == f"configz {stale}"


def test_two_noderesourcetopologies_of_one_node_are_said(tmp_path: Path) -> None:
    """A second dump of NodeResourceTopology objects holding a node's
    again: the last is used, with a warning naming the node and both
    files; the same object twice in one list, a warning naming the file."""
    d = tmp_path / "fleet"
    shutil.copytree(EXAMPLE, d)
    doc = json.loads((d / "noderesourcetopologies.json").read_text())
    nrt = copy.deepcopy(doc["items"][0])
    node = nrt["metadata"]["name"]
    nrt["zones"] = nrt["zones"][:1]
    (d / "zz-nrt.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [nrt]}))
    got = _analyze(str(d))
    said = [i for i in got["issues"] if i.get("node") == node and "given twice" in i["message"]]
    assert [(i["severity"], i["file"]) for i in said] == [("warning", str(d / "zz-nrt.json"))]
    assert f"in {d / 'noderesourcetopologies.json'}, then in {d / 'zz-nrt.json'}" in said[0]["message"]
    (d / "zz-nrt.json").unlink()
    doc["items"].append(nrt)
    (d / "noderesourcetopologies.json").write_text(json.dumps(doc))
    got = _analyze(str(d))
    said = [i for i in got["issues"] if i.get("node") == node and "given twice" in i["message"]]
    assert [(i["file"], i["path"]) for i in said] == [
        (str(d / "noderesourcetopologies.json"), f"items[{len(doc['items']) - 1}]")]


def test_a_kubernetes_object_of_another_kind_in_the_tree_is_an_issue_naming_it(fleet: Path) -> None:
    """A Deployment manifest, or ``kubectl get events -o json``, left in
    the dumps directory is no dump: not read, and a warning names the file
    and the kinds; the nodes are those of the dumps alone."""
    want = _analyze(str(fleet))
    deploy = fleet / "deploy.yaml"
    deploy.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n"
                      "spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: "
                      "{labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}\n")
    events = fleet / "events.json"
    events.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"e{i}"}} for i in range(3)]}))
    got = _analyze(str(fleet))
    assert got["nodes"] == want["nodes"]
    said = {i["file"]: i for i in got["issues"] if "does not read" in i["message"]}
    assert set(said) == {str(deploy), str(events)}
    assert said[str(deploy)]["severity"] == "warning" and "(1 Deployment)" in said[str(deploy)]["message"]
    assert "3 object(s)" in said[str(events)]["message"] and said[str(events)]["path"] == "items[0]"


def test_a_pod_not_replayed_is_said_with_the_dump_it_came_from(fleet: Path) -> None:
    """A pod the replay refuses (a cpu request that is no quantity) is a
    warning naming the dump it was read from and the field path, also when
    the node's pods are in several dumps (here the refused pod alone in a
    second one)."""
    path, doc = _pods(fleet)
    pod = next(p for p in doc["items"] if p["spec"]["containers"][0].get("resources", {}).get("requests"))
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "abc"
    path.write_text(json.dumps(doc, indent=4))
    got = _analyze(str(fleet))
    said = [i for i in got["issues"] if "not replayed" in i["message"] and pod["metadata"]["name"] in i["message"]]
    assert len(said) == 1, got["issues"]
    assert said[0]["file"] == str(path) and said[0]["path"].endswith("requests[cpu]")
    doc["items"].remove(pod)
    path.write_text(json.dumps(doc, indent=4))
    other = fleet / "pods" / "a-one.yaml"
    other.write_text(json.dumps({"kind": "List", "items": [pod]}))
    got = _analyze(str(fleet))
    said = [i for i in got["issues"] if "not replayed" in i["message"] and pod["metadata"]["name"] in i["message"]]
    assert [i["file"] for i in said] == [str(other)]


def _cli(*args: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", *args],
                       env=env, capture_output=True, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def test_the_report_of_such_inputs_is_the_same_bytes_in_every_mode(fleet: Path) -> None:
    """All of the above at once: one process, ``--workers 2`` and ``--dask
    local:2`` (the dumps read where the replay runs, their pod keys matched
    by the process that assembles the fleet) give the same report."""
    need("distributed")
    _resized_copy(fleet)
    path, doc = _pods(fleet)
    doc["items"].append(copy.deepcopy(doc["items"][4]))
    doc["items"][0]["spec"]["containers"][0].setdefault("resources", {}).setdefault("requests", {})["cpu"] = "x"
    path.write_text(json.dumps(doc, indent=4))
    (fleet / "old").mkdir()
    shutil.copy(fleet / "configz" / f"{NODE}.json", fleet / "old" / f"{NODE}.json")
    (fleet / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    args = [str(fleet), str(path), "-o", "json"]
    one = _cli(*args)
    report = json.loads(one)
    messages = " ".join(i["message"] for i in report["issues"])
    for said in ("copies differ", "listed twice in this dump", "read once", "given twice", "does not read",
                 "not replayed"):
        assert said in messages, said
    assert _cli(*args, "--workers", "2") == one
    assert _cli(*args, "--dask", "local:2") == one
