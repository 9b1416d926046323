"""Pod and node dumps read as the kubelet's Go reads the same objects.

The API server's own lists (``kubectl get --raw /api/v1/pods``) leave the
``kind`` off their items: Go decodes every item of a ``v1.PodList`` as a
``v1.Pod``. client-go skips a field v1.37.2 does not know without
converting its value (an integer of thousands of digits, nesting deeper
than msgspec's decoder goes: encoding/json allows 10,000 levels), and
``sigs.k8s.io/yaml``'s non-strict ``Unmarshal`` keeps the last value of a
key given twice, as encoding/json does. The kubelet holds one pod of a
namespace and name at a time (a pod re-created between two dumps is the
newer one), and admits a pod with the resources it allocated
(``pkg/kubelet/allocation``'s ``AddPod`` / ``UpdatePodFromAllocation``),
which a pending in-place resize leaves below (or above) the spec.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

from .onedump import guaranteed as _guaranteed
from .onedump import one_dump_fleet
from .onedump import pods_dump as _pods


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    return one_dump_fleet(tmp_path)


def _run(*args: str) -> str:
    r = CliRunner().invoke(cli, ["fleet", "analyze", *args, "-o", "json"])
    assert r.exit_code == 0, r.stderr[-2000:]
    return r.stdout


def _analyze(*args: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(_run(*args))
    return report


def _node(report: dict[str, Any], name: str) -> dict[str, Any]:
    node: dict[str, Any] = next(n for n in report["nodes"] if n["name"] == name)
    return node


def _raw_list(path: Path, kind: str) -> None:
    """The file as the API server serves the list: a typed list whose items
    carry no ``kind`` nor ``apiVersion`` of their own."""
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        item.pop("kind", None)
        item.pop("apiVersion", None)
    path.write_text(json.dumps({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                "items": doc["items"]}, indent=4))


def test_the_api_servers_own_pod_and_node_lists_are_read_as_kubectls(fleet: Path) -> None:
    """A ``PodList`` and a ``NodeList`` whose items say no kind give the
    report of the same objects as ``kubectl get -o json`` writes them."""
    from podnuma.fleet.podscan import index_pod_file

    want = _analyze(str(fleet))
    _raw_list(fleet / "pods" / "pods.json", "PodList")
    _raw_list(fleet / "nodes.json", "NodeList")
    index = index_pod_file(fleet / "pods" / "pods.json")  # (the fast path takes it, as kubectl's)
    assert index is not None and index.pods == 18
    got = _analyze(str(fleet))
    assert got["fleet"]["podsReplayed"] == 18 and got["fleet"]["nodes"] == 3
    assert got["fleet"] == want["fleet"]
    assert got["summary"] == want["summary"]
    assert got["nodes"] == want["nodes"]


def test_a_list_whose_items_kind_cannot_be_known_is_an_error_naming_the_file(fleet: Path) -> None:
    """A plain ``List`` (or a mapping with ``items`` and no kind) whose
    items say no kind: nothing says what they are, so they are not read,
    and one issue names the file and ``items``: never 0 pods silently."""
    path, _ = _pods(fleet)
    _raw_list(path, "List")
    got = _analyze(str(fleet))
    said = [i for i in got["issues"] if i["file"] == str(path)]
    assert [(i["severity"], i["path"]) for i in said] == [("error", "items")], said
    assert "18 of its 18 item(s) say no kind" in said[0]["message"]
    assert got["fleet"]["podsInDumps"] == 0


def test_a_pod_recreated_under_its_name_is_replayed_once_the_newer(fleet: Path, tmp_path: Path) -> None:
    """The same namespace/name on one node with two uids (re-created between
    two dumps): an input problem, not a rejection (no kubelet gives
    ``InvalidInput``); the newer by creation time is replayed whichever
    dump is read first, a warning names both uids and both dumps, and the
    node's scenario replays in ``podnuma simulate`` with the report's
    figures."""
    path, doc = _pods(fleet)
    pod = _guaranteed(doc)
    again = copy.deepcopy(pod)
    again["metadata"]["uid"] = "0f6e1c0a-5f3b-4a52-9f0e-000000000001"
    again["metadata"]["creationTimestamp"] = "2099-01-01T00:00:00Z"
    again["status"]["startTime"] = "2099-01-01T00:00:01Z"
    later = fleet / "pods" / "a-later.json"  # (read before pods.json: the choice is not the file order)
    later.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [again]}, indent=4))
    out = tmp_path / "scenarios"
    report = _analyze(str(fleet), "--as-scenario", str(out))
    assert "InvalidInput" not in report["summary"]["as running"]["rejectedByReason"]
    name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
    said = [i for i in report["issues"] if i["severity"] == "warning" and name in i["message"]]
    assert len(said) == 1, report["issues"]
    msg = said[0]["message"]
    for text in (pod["metadata"]["uid"], again["metadata"]["uid"], str(path), str(later)):
        assert text in msg
    assert msg.endswith(f"the newer, uid {again['metadata']['uid']} (the API server holds one pod of a name "
                        "at a time: the inputs are of two moments)")
    node = _node(report, pod["spec"]["nodeName"])
    scenario = out / f"{node['name']}.yaml"
    import yaml

    steps = yaml.safe_load(scenario.read_text())["steps"]
    uids = [s["addPod"]["metadata"]["uid"] for s in steps if "addPod" in s
            and s["addPod"]["metadata"]["name"] == pod["metadata"]["name"]]
    assert uids == [again["metadata"]["uid"]]
    r = CliRunner().invoke(cli, ["simulate", str(scenario), "-o", "json"])
    assert r.exit_code == 0, r.stderr[-1000:]
    sim = json.loads(r.stdout)
    rejected = sum(1 for s in sim["steps"] if s.get("admitted") is False)
    assert rejected == len(node["baseline"]["rejected"])


def _pending_resize(pod: dict[str, Any], cpus: str) -> dict[str, Any]:
    """``pod`` (Guaranteed, running) whose first container was resized to
    ``cpus`` CPUs in its spec, the resize pending (infeasible): the status
    shows the resources the kubelet allocated. The allocated requests."""
    c = pod["spec"]["containers"][0]
    allocated: dict[str, Any] = copy.deepcopy(c["resources"]["requests"])
    c["resources"]["requests"]["cpu"] = c["resources"]["limits"]["cpu"] = cpus
    pod["status"]["containerStatuses"] = [{
        "name": c["name"], "ready": True, "restartCount": 0, "image": "x", "imageID": "", "started": True,
        "allocatedResources": allocated, "resources": {"requests": allocated, "limits": allocated},
        "state": {"running": {"startedAt": pod["status"].get("startTime")}}}]
    pod["status"].setdefault("conditions", []).append(
        {"type": "PodResizePending", "status": "True", "reason": "Infeasible",
         "message": "exclusive CPUs cannot be resized"})
    return allocated


def test_a_pod_with_a_pending_resize_is_replayed_with_its_allocated_resources(fleet: Path, tmp_path: Path) -> None:
    """A Guaranteed pod whose spec asks 4 CPUs in a pending resize, the
    kubelet having allocated 2: replayed (and written to its scenario) with
    the 2 CPUs allocated, as the kubelet admits it; a container status
    whose ``allocatedResources`` are the spec's changes nothing."""
    path, doc = _pods(fleet)
    pod = _guaranteed(doc)
    node = pod["spec"]["nodeName"]
    before = _node(_analyze(str(fleet)), node)["baseline"]
    # a status whose allocation is the spec's: the same figures
    c = pod["spec"]["containers"][0]
    pod["status"]["containerStatuses"] = [{"name": c["name"], "allocatedResources": c["resources"]["requests"]}]
    path.write_text(json.dumps(doc, indent=4))
    assert _node(_analyze(str(fleet)), node)["baseline"] == before
    allocated = _pending_resize(pod, "4")
    assert allocated["cpu"] != "4"
    path.write_text(json.dumps(doc, indent=4))
    out = tmp_path / "scenarios"
    report = _analyze(str(fleet), "--as-scenario", str(out))
    assert _node(report, node)["baseline"] == before
    import yaml

    steps = yaml.safe_load((out / f"{node}.yaml").read_text())["steps"]
    got = next(s["addPod"] for s in steps if "addPod" in s
               and s["addPod"]["metadata"]["name"] == pod["metadata"]["name"])
    res = got["spec"]["containers"][0]["resources"]
    assert res["requests"]["cpu"] == res["limits"]["cpu"] == allocated["cpu"]
    # without the applied resources, a limit equal to its request follows the allocation
    del pod["status"]["containerStatuses"][0]["resources"]
    path.write_text(json.dumps(doc, indent=4))
    assert _node(_analyze(str(fleet)), node)["baseline"] == before


def _huge_int_in(doc: dict[str, Any], where: str) -> str:
    """The dump's text with an integer of 5,000 digits in the first pod's
    first container's ``resources`` (``where``: a field v1.37.2 does not
    know, or ``requests``)."""
    res = doc["items"][0]["spec"]["containers"][0].setdefault("resources", {})
    if where == "requests":
        res.setdefault("requests", {})["zzBig"] = 0
    else:
        res[where] = 0
    marker = f'"{"zzBig" if where == "requests" else where}": 0'
    text = json.dumps(doc, indent=4)
    assert text.count(marker) == 1
    return text.replace(marker, marker[:-1] + "1" + "0" * 4999)


def test_a_huge_integer_in_a_field_the_kubelet_does_not_know_costs_no_pod(fleet: Path) -> None:
    """In a field of ``resources`` v1.37.2 does not know the integer is
    skipped, as Go's decoder skips the field: the report is the clean
    dump's. In ``resources.requests`` (a field the replay reads) the pod is
    left out with a warning naming the file and the field path, and the
    counts agree."""
    clean = _analyze(str(fleet))
    path, doc = _pods(fleet)
    path.write_text(_huge_int_in(copy.deepcopy(doc), "zzNewerField"))
    got = _analyze(str(fleet))
    assert got["fleet"] == clean["fleet"] and got["summary"] == clean["summary"]
    assert [i for i in got["issues"] if i["severity"] != "info"] == []
    path.write_text(_huge_int_in(copy.deepcopy(doc), "requests"))
    got = _analyze(str(fleet))
    f = got["fleet"]
    assert f["podsReplayed"] == clean["fleet"]["podsReplayed"] - 1
    said = [i for i in got["issues"] if "digits" in i["message"]]
    assert [(i["file"], i["path"]) for i in said] == [(str(path), "spec.containers[0].resources.requests.zzBig")]


@pytest.mark.parametrize("field", ["spec", "resources"])
def test_nesting_past_the_decoders_limit_in_a_field_the_fleet_does_not_read_costs_no_pod(
    fleet: Path, field: str,
) -> None:
    """2,000 levels (past msgspec's limit, within encoding/json's 10,000)
    in a field v1.37.2 does not know, of the pod's spec or of a
    container's resources: skipped with the field, the report the clean
    dump's, nothing said."""
    clean = _analyze(str(fleet))
    path, doc = _pods(fleet)
    if field == "resources":
        doc["items"][2]["spec"]["containers"][0].setdefault("resources", {})["zzDeep"] = 0
    text = json.dumps(doc, indent=4)
    deep = "[" * 2000 + "]" * 2000
    if field == "spec":
        at = text.index('"spec": {') + len('"spec": {')
        text = text[:at] + '"zzNewerField": ' + deep + ", " + text[at:]
    else:
        text = text.replace('"zzDeep": 0', '"zzDeep": ' + deep)
    path.write_text(text)
    got = _analyze(str(fleet))
    assert got["fleet"] == clean["fleet"] and got["summary"] == clean["summary"]
    assert [i for i in got["issues"] if i["severity"] != "info"] == []


def test_a_key_twice_in_a_yaml_dump_keeps_the_last_value_as_in_json(fleet: Path) -> None:
    """A key given twice in one pod of a YAML dump (``kubectl get -o yaml``)
    keeps its last value, as in a JSON dump (encoding/json, and
    ``sigs.k8s.io/yaml``'s non-strict ``Unmarshal``): the same report."""
    import yaml

    path, doc = _pods(fleet)
    text = json.dumps(doc, indent=4)
    node = doc["items"][0]["spec"]["nodeName"]
    at = text.index('"nodeName": ')
    path.write_text(text[:at] + '"nodeName": "nowhere",\n' + text[at:])
    as_json = _analyze(str(fleet))
    assert as_json["fleet"]["podsReplayed"] == len(doc["items"])
    body = yaml.safe_dump(doc)
    at = body.index(f"    nodeName: {node}")
    path.unlink()
    (fleet / "pods" / "pods.yaml").write_text(body[:at] + "    nodeName: nowhere\n" + body[at:])
    as_yaml = _analyze(str(fleet))
    assert as_yaml["fleet"] == as_json["fleet"] and as_yaml["summary"] == as_json["summary"]
    assert as_yaml["nodes"] == as_json["nodes"]
    # the user's FleetConfig is no dump: a key given twice still refuses it
    (fleet / "fleet.yaml").write_text("apiVersion: podnuma.io/v1\nkind: FleetConfig\nnodeGroups: []\n"
                                      "nodeGroups: []\n")
    r = CliRunner().invoke(cli, ["fleet", "analyze", str(fleet), "-o", "json"])
    assert r.exit_code == 2 and "nodeGroups: duplicate key 'nodeGroups'" in r.stderr


def test_these_dumps_give_one_report_in_every_mode(fleet: Path) -> None:
    """An API server's ``PodList``, a pending resize, a re-created pod, a
    huge integer and deep nesting in unknown fields: the same report in
    one process, ``--workers 2`` and ``--dask local:2``."""
    pytest.importorskip("distributed")
    path, doc = _pods(fleet)
    pod = _guaranteed(doc)
    _pending_resize(pod, "4")
    again = copy.deepcopy(doc["items"][1])
    again["metadata"]["uid"] = "0f6e1c0a-5f3b-4a52-9f0e-000000000002"
    again.pop("kind")
    (fleet / "pods" / "z-later.json").write_text(json.dumps({"kind": "PodList", "items": [again]}))
    text = _huge_int_in(doc, "zzNewerField")
    at = text.index('"spec": {') + len('"spec": {')
    path.write_text(text[:at] + '"zzNewerField": ' + "[" * 2000 + "]" * 2000 + ", " + text[at:])
    _raw_list(fleet / "nodes.json", "NodeList")
    one = _run(str(fleet))
    assert json.loads(one)["fleet"]["podsReplayed"] == 18
    assert _run(str(fleet), "--workers", "2") == one
    assert _run(str(fleet), "--dask", "local:2") == one
