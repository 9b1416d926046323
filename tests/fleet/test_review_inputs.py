"""Review fixes of ``fleet analyze``: a UID given to two pods, the what-if
grammar (shared-pool-cpus=0, a key given twice, the help), the restart
totals over the nodes whose configuration is assumed, a JSON file that
holds no Kubernetes object, a ``--as-scenario`` directory that is not
empty; dumps read as the apiserver served them (a syntax error in the
middle, a byte order mark, a Node without a name, fields of another type
than the apiserver serves)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli


def _run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def _twin_uid(fleet: Path) -> str:
    """db/orders-pg-0 dumped again as db/orders-pg-9 with the same uid; the uid."""
    path = fleet / "pods.json"
    doc = json.loads(path.read_text())
    pod = next(p for p in doc["items"] if p["metadata"]["name"] == "orders-pg-0")
    twin = copy.deepcopy(pod)
    twin["metadata"]["name"] = "orders-pg-9"
    doc["items"].append(twin)
    path.write_text(json.dumps(doc))
    return str(pod["metadata"]["uid"])


def test_a_uid_of_two_pods_is_an_input_issue_and_the_scenario_replays(example: Path, tmp_path: Path) -> None:
    uid = _twin_uid(example)
    out_dir = tmp_path / "sc"
    code, out, _ = _run("fleet", "analyze", str(example), "-o", "json", "--what-if", "restart",
                        "--as-scenario", str(out_dir))
    assert code == 0
    doc = json.loads(out)
    said = [i for i in doc["issues"] if uid in i["message"]]
    assert len(said) == 1
    assert "db/orders-pg-9" in said[0]["message"] and "db/orders-pg-0" in said[0]["message"]
    assert not [r for rows in doc["rejected"].values() for r in rows if r["reason"] == "InvalidInput"]
    assert doc["restart"]["restart"]["notReplayed"] == 0
    node = said[0]["node"]
    code, _, err = _run("simulate", str(out_dir / f"{node}.yaml"))
    assert code == 0, err


def test_a_restart_not_replayed_is_an_issue() -> None:
    from types import SimpleNamespace

    from podnuma.fleet.report import fleet_report

    from .conftest import EXAMPLE

    code, out, _ = _run("fleet", "analyze", str(EXAMPLE), "-o", "json", "--what-if", "restart")
    assert code == 0
    nodes = json.loads(out)["nodes"]
    node = next(n for n in nodes if "restart" in n.get("whatIfs", {}).get("restart", {}))
    node["whatIfs"]["restart"]["restart"] = {"error": "the kubelet said no"}
    inputs = SimpleNamespace(issues=[], pods_total=0, pods_duplicated=0, pods_without_node=0)
    doc = fleet_report(inputs, nodes, ["restart"])  # type: ignore[arg-type]
    assert doc["restart"]["restart"]["notReplayed"] == 1
    said = [i for i in doc["issues"] if "the restart is not replayed" in i["message"]]
    assert [(i["node"], i["message"]) for i in said] == [
        (node["name"], "what-if restart: the restart is not replayed: the kubelet said no")]


@pytest.mark.parametrize("what_if,said", [
    ("pod-level,shared-pool-cpus=0", "shared-pool-cpus=0: expected a whole number of CPUs >= 1"),
    ("pod-level,scope=pod,scope=container", "scope given twice"),
    ("policy=none,policy=single-numa-node", "policy given twice"),
    ("restart,restart", "restart given twice"),
])
def test_what_if_refused_in_one_line(what_if: str, said: str, example: Path) -> None:
    code, out, err = _run("fleet", "analyze", str(example), "--what-if", what_if)
    assert code == 2 and out == ""
    assert said in err and len(err.strip().splitlines()) == 1


def test_what_if_options_of_different_names_are_not_a_key_twice() -> None:
    from podnuma.fleet.whatif import parse_what_if

    w = parse_what_if("cpu-option=full-pcpus-only,cpu-option=distribute-cpus-across-numa")
    assert len(w.options) == 2
    assert parse_what_if("pod-level,shared-pool-cpus=1").shared_pool_cpus == 1


def test_help_lists_every_what_if_change() -> None:
    code, out, _ = _run("fleet", "analyze", "--help")
    assert code == 0
    text = "".join(out.split())  # (the help is wrapped, at hyphens too)
    for change in ("gates", "pod-level", "shared-pool-cpus=N", "scope=", "policy=", "cpu-policy=",
                   "memory-policy=", "cpu-option=", "topology-option=", "restart;"):
        assert change in text, change


def test_restart_totals_leave_out_the_assumed_nodes(example: Path) -> None:
    (example / "configz" / "ip-10-20-2-41.eu-west-1.compute.internal.json").unlink()
    code, out, _ = _run("fleet", "analyze", str(example), "-o", "json", "--what-if", "pod-level,scope=pod,restart")
    assert code == 0
    doc = json.loads(out)
    assumed = {n["name"] for n in doc["assumed"]["nodes"]}
    assert assumed == {"ip-10-20-2-41.eu-west-1.compute.internal"}
    sec = doc["restart"]["pod-level,scope=pod,restart"]
    assert sec["nodes"] == doc["fleet"]["nodesInTotals"]
    assert sec["assumed"]["nodes"] == 1
    per_node = {n["name"]: n["whatIfs"]["pod-level,scope=pod,restart"]["restart"]
                for n in doc["nodes"] if "restart" in n.get("whatIfs", {}).get("pod-level,scope=pod,restart", {})}
    for key in ("kept", "moved", "rejected"):
        assert sec[key] == sum(r[key] for name, r in per_node.items() if name not in assumed)
        assert sec["assumed"][key] == sum(r[key] for name, r in per_node.items() if name in assumed)
    for p in sec["pods"]:
        assert p.get("configAssumed", False) == (p["node"] in assumed)
    code, table, _ = _run("fleet", "analyze", str(example), "--what-if", "pod-level,scope=pod,restart")
    assert code == 0
    assert f"{sec['nodes']} nodes " in table and "1 nodes assumed *" in table


@pytest.mark.parametrize("text,what", [
    ('{"foo": 1}', "a mapping without kind"),
    ("42", "a number"),
    ("null", "null"),
    ("[1, 2]", "values none of which is a Kubernetes object"),
    ('{"kind": "List"}', "a List without items"),
    ('"x"', "a string"),
])
def test_json_without_kubernetes_objects_alone_is_the_error(text: str, what: str, tmp_path: Path) -> None:
    f = tmp_path / "w.json"
    f.write_text(text + "\n")
    code, out, err = _run("fleet", "analyze", str(f))
    assert code == 2 and out == ""
    assert err.strip() == f"error: {f}: not a Kubernetes object or list ({what}): no Kubernetes objects"


@pytest.mark.parametrize("text", ['{"kind": "List", "items": []}', '{"kind": "List", "items": null}',
                                  '{"apiVersion": "v1", "kind": "NodeList", "items": []}'])
def test_an_empty_list_is_still_zero_nodes(text: str, tmp_path: Path) -> None:
    f = tmp_path / "w.json"
    f.write_text(text)
    code, out, _ = _run("fleet", "analyze", str(f))
    assert code == 0 and out.startswith("0 nodes")


def test_json_without_kubernetes_objects_beside_dumps_is_one_issue(example: Path) -> None:
    (example / "weird.json").write_text('{"foo": 1}')
    code, out, _ = _run("fleet", "analyze", str(example), "-o", "json")
    assert code == 0
    said = [i for i in json.loads(out)["issues"] if (i.get("file") or "").endswith("weird.json")]
    assert [i["severity"] for i in said] == ["error"]


def test_as_scenario_refuses_a_directory_not_empty(example: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "sc"
    out_dir.mkdir()
    (out_dir / "old-node.yaml").write_text("stale\n")
    code, out, err = _run("fleet", "analyze", str(example), "--as-scenario", str(out_dir))
    assert code == 2 and out == ""
    assert err.strip() == (f"error: {out_dir}: --as-scenario: not empty "
                           "(the scenarios go into a new or empty directory)")
    assert sorted(p.name for p in out_dir.iterdir()) == ["old-node.yaml"]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, _ = _run("fleet", "analyze", str(example), "--as-scenario", str(empty))
    assert code == 0 and any(empty.iterdir())


# --------------------------------------------------------------------------
# Dumps read as the apiserver served them: a syntax error in the middle is
# malformed JSON (only a text that stops is a truncated dump), a byte order
# mark is what the general reader says it is, a Node without a name and
# fields of another type than the apiserver serves are issues naming the
# file and the field path.

MIDBAD = """{"apiVersion":"v1","kind":"List","items":[
{"kind":"Node","metadata":{"name":"a"}},
oops,
{"kind":"Node","metadata":{"name":"b"}}
]}
"""


def _issues(out: str, file: Path) -> list[tuple[str, str | None, str | None, str]]:
    """The issues of ``file`` that name a field (the example's pods dump
    also has a pod bound to a node missing from its nodes dump)."""
    return [(i["severity"], i["node"], i["path"], i["message"]) for i in json.loads(out)["issues"]
            if i["file"] == str(file) and (i["path"] or "JSON" in i["message"])]


def test_a_syntax_error_in_the_middle_is_malformed_json_not_a_truncated_dump(tmp_path: Path) -> None:
    f = tmp_path / "midbad.json"
    f.write_text(MIDBAD)
    code, out, err = _run("fleet", "analyze", str(f), "-o", "json")
    assert code == 2 and out == ""
    assert err.strip() == f"error: {f}: invalid JSON: Expecting value (line 3, column 1)"


def test_a_dump_is_truncated_only_where_its_text_stops(example: Path) -> None:
    """Cut anywhere in a run of bytes that spans two whole pods (in a
    string, an escape, a number, a literal, between two items), a dump is
    read up to its last complete item; the same bytes with a control
    character put there, the rest of the dump after it, are malformed: an
    error."""
    import re

    from podnuma.fleet.files import parse_document

    f = example / "pods.json"
    doc = json.loads(f.read_text())
    for pod in doc["items"]:
        pod["status"]["x"] = "@X@"  # (written below as kubectl writes it: an escape, literals, an exponent)
    array = '[true, false, null, -1.5e+3, "\\u00e9"]'
    text = json.dumps(doc, indent=4).replace('"@X@"', array)
    assert text.count(array) == len(doc["items"]) == 42
    # (the items of the list, at indent 8: where each starts and ends)
    starts = [m.start() + 1 for m in re.finditer(r"\n {8}\{\n", text)]
    assert len(starts) == len(doc["items"])
    ends = [text.rindex("}", 0, s) + 1 for s in starts[1:]]
    j = len(starts) // 3
    lo, hi = starts[j], ends[j + 1]  # (items j and j + 1, whole)
    arrays = [m.start() for m in re.finditer(re.escape(array), text[lo:hi])]
    assert len(arrays) == 2
    cuts = set(range(lo, hi + 1, 7)) | {lo + a + d for a in arrays for d in range(len(array) + 1)}
    cuts |= {ends[j], ends[j] + 1, starts[j + 1]}  # (a whole item, its comma, the next one's line)
    for k in sorted(cuts):
        got, issue = parse_document(f, text[:k])
        assert issue is not None and issue.severity == "warning", (k, issue)
        assert "a truncated dump" in issue.message and got["_truncated"], k
        whole = sum(e <= k for e in ends)
        assert len(got["items"]) == whole, (k, repr(text[k - 10:k]))
        assert got["items"][-1]["status"]["x"] == [True, False, None, -1500.0, "\u00e9"], k
        got, issue = parse_document(f, text[:k] + "\x01" + text[k:])
        assert got is None and issue is not None and issue.severity == "error", (k, issue)
        assert "truncated" not in issue.message and issue.message.startswith("invalid JSON: "), k


@pytest.mark.parametrize("padding", ["", "\n", " ", "\x00\x00"])
def test_a_dump_cut_at_any_byte_is_truncated_whatever_follows_the_cut(padding: str) -> None:
    """Cut at every offset past its first item of a small dump written as kubectl writes it
    (``&`` as ``\\u0026``, a character outside the BMP as a surrogate
    pair, escapes, numbers, literals), then padded (a line break, a space,
    the zeros a crash leaves): read as truncated every time. A cut right
    after a whole ``\\uXXXX`` escape, and a cut inside a string followed
    by a line break, were refused as malformed."""
    from podnuma.fleet.files import parse_document

    pods = [{"kind": "Pod", "metadata": {"name": f"p{i}", "annotations": {"q": "a=1&b=2 \U0001F600 \\ \" x"}},
             "spec": {"nodeName": "n", "x": [1.5, -2e3, True, None]}} for i in range(3)]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}, indent=1).replace("&", "\\u0026")
    assert "\\u0026" in text and "\\ud83d\\ude00" in text
    name = Path("pods.json")
    for k in range(text.index('"p1"'), len(text)):  # (once one item is whole: none is an error)
        doc, issue = parse_document(name, text[:k] + padding)
        assert issue is not None and issue.severity == "warning", (k, repr(text[k - 10:k]), issue)
        assert "a truncated dump" in issue.message, (k, issue.message)


def test_a_byte_order_mark_is_said_as_the_general_reader_says_it(example: Path, tmp_path: Path) -> None:
    """A JSON file that begins with a byte order mark was read whole and
    called "a truncated dump"; it is JSON the general reader refuses
    (``podnuma simulate`` of a scenario with one): the same error, as for
    any malformed dump, whichever reader reads it."""
    import yaml

    scenario = tmp_path / "s.json"
    scenario.write_bytes(b"\xef\xbb\xbf" + json.dumps(
        yaml.safe_load((Path(__file__).resolve().parents[2] / "examples" / "static-dual-socket.yaml")
                       .read_text())).encode())
    code, _, said = _run("simulate", str(scenario))
    assert code == 2
    general = said.strip().removeprefix(f"error: {scenario}: ")
    assert general == "invalid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) (line 1, column 1)"
    for name in ("nodes.json", "pods.json"):
        f = example / name
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
        code, out, err = _run("fleet", "analyze", str(f), "-o", "json")
        assert code == 2 and out == ""
        assert err.strip() == f"error: {f}: {general}"
    nodes = example / "nodes.json"
    nodes.write_bytes(nodes.read_bytes()[3:])
    code, out, _ = _run("fleet", "analyze", str(example), "-o", "json")
    assert code == 0  # (beside the other dumps: one of the report's issues)
    assert _issues(out, example / "pods.json") == [("error", None, None, general)]


@pytest.mark.parametrize("meta,path,said", [
    ({"name": ""}, "metadata.name", "Required value: name or generateName is required"),
    ({"labels": {"a": "b"}}, "metadata.name", "Required value: name or generateName is required"),
    ({"name": ["a"]}, "metadata.name", "must be a string, got a list"),
    (None, "metadata.name", "Required value: name or generateName is required"),
    (5, "metadata", "must be a mapping, got an integer"),
])
def test_a_node_without_a_name_is_an_issue_naming_the_field(
        example: Path, meta: Any, path: str, said: str) -> None:
    f = example / "nodes.json"
    doc = json.loads(f.read_text())
    doc["items"].insert(1, {"apiVersion": "v1", "kind": "Node", **({} if meta is None else {"metadata": meta})})
    f.write_text(json.dumps(doc))
    code, out, _ = _run("fleet", "analyze", str(example), "-o", "json")
    assert code == 0
    assert _issues(out, f) == [("error", None, f"items[1].{path}", f"{said}: the apiserver serves no such Node "
                                "(a damaged dump); the node is not read")]
    assert json.loads(out)["fleet"]["nodes"] == len(doc["items"]) - 1


def _damage_pod(example: Path, damage: Any, beside_clean: bool = False) -> tuple[Path, int, str]:
    """The first bound pod of the example's pods dump damaged; the file,
    the pod's index and its node. ``beside_clean``: the damaged pod and
    the pod after it (before it) are moved to a dump of their own,
    ``pods-damaged.json``; ``pods.json`` keeps the other pods, clean."""
    f = example / "pods.json"
    doc = json.loads(f.read_text())
    i = next(k for k, p in enumerate(doc["items"]) if p["spec"].get("nodeName")
             and p["metadata"].get("namespace") == "analytics" and p["status"]["phase"] == "Running")
    node = doc["items"][i]["spec"]["nodeName"]
    damage(doc["items"][i])
    if beside_clean:
        moved = [doc["items"].pop(i + 1), doc["items"].pop(i)]
        f.write_text(json.dumps(doc, indent=4))
        f = example / "pods-damaged.json"
        f.write_text(json.dumps({**doc, "items": moved}, indent=4))
        i = 1
    else:
        f.write_text(json.dumps(doc, indent=4))
    return f, i, node


POD_DAMAGE = [
    ("no name", lambda p: p["metadata"].pop("name"), "metadata.name",
     "Required value: name or generateName is required"),
    ("empty name", lambda p: p["metadata"].update(name=""), "metadata.name",
     "Required value: name or generateName is required"),
    ("phase", lambda p: p["status"].update(phase=7), "status.phase", "must be a string, got an integer"),
    ("status", lambda p: p.update(status="x"), "status", "must be a mapping, got a string"),
    ("owners", lambda p: p["metadata"].update(ownerReferences="x"), "metadata.ownerReferences",
     "must be a list, got a string"),
    ("owner name", lambda p: p["metadata"].update(ownerReferences=[{"kind": "ReplicaSet"}]),
     "metadata.ownerReferences[0].name", "Required value"),
    ("controller", lambda p: p["metadata"].update(ownerReferences=[
        {"kind": "ReplicaSet", "name": "x", "controller": "yes"}]),
     "metadata.ownerReferences[0].controller", "must be a boolean, got a string"),
]


@pytest.mark.parametrize("beside_clean", [False, True], ids=["one dump", "beside a clean dump"])
@pytest.mark.parametrize("name,damage,path,said", POD_DAMAGE, ids=[d[0] for d in POD_DAMAGE])
def test_a_damaged_pod_is_an_issue_naming_the_field_and_is_not_read(
        example: Path, name: str, damage: Any, path: str, said: str, beside_clean: bool) -> None:
    """A pod the apiserver cannot have served (no name though bound to a
    node, a phase or status of another type, owner references that are
    none) was replayed as running, as its own workload, or named
    "analytics/None": one warning naming the file and the field path, the
    pod left out of the counts and the replay. The whole dump's fast
    decoding does not take a dump that holds it; its items are then read
    one by one, that one by the general reader's rules, which say it,
    whether the dump is the only one or sits beside a clean dump the fast
    path takes."""
    from podnuma.fleet.podscan import index_pod_file

    code, before, _ = _run("fleet", "analyze", str(example), "-o", "json")
    assert code == 0
    f, i, node = _damage_pod(example, damage, beside_clean)
    # (the whole dump's decoding declines it; its items are then indexed
    # one by one, the damaged pod left out in the general reader's words)
    for index in (index_pod_file(f), index_pod_file(f, {}, None, True)):
        assert index is not None and [x.path for x in index.issues] == [f"items[{i}].{path}"]
    clean = example / "pods.json"
    if beside_clean:  # (the other pods, through the fast path)
        index = index_pod_file(clean)
        assert index is not None and f != clean
    code, out, _ = _run("fleet", "analyze", str(example), "-o", "json")
    assert code == 0
    assert _issues(out, f) == [("warning", None, f"items[{i}].{path}", f"{said}: the apiserver serves no such "
                                "Pod (a damaged dump); the pod is not read")]
    if beside_clean:
        assert _issues(out, clean) == []
    assert "/None" not in out
    was, now = json.loads(before), json.loads(out)
    assert now["fleet"]["podsInDumps"] == was["fleet"]["podsInDumps"] - 1

    def count(doc: Any) -> int:
        return int(next(n["podCount"] for n in doc["nodes"] if n["name"] == node))

    assert count(now) == count(was) - 1
    if beside_clean:  # (every other node: its pods, from either dump, all read)
        assert [(n["name"], n["podCount"]) for n in now["nodes"] if n["name"] != node] == [
            (n["name"], n["podCount"]) for n in was["nodes"] if n["name"] != node]


def test_a_pod_without_a_name_replayed_from_elsewhere_is_named_without_none() -> None:
    """A pod handed to the replay inline (not from a dump: no file to
    name) without a name: the issue says so, never "analytics/None"."""
    from dataclasses import replace

    from podnuma.fleet.inputs import load_fleet
    from podnuma.fleet.replay import replay_node

    from .conftest import EXAMPLE

    spec = next(n for n in load_fleet([EXAMPLE]).nodes if n.topology is not None and n.config is not None)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "analytics", "uid": "u-1"},
           "spec": {"nodeName": spec.name, "containers": [{"name": "c", "image": "x"}]},
           "status": {"phase": "Running"}}
    report = replay_node(replace(spec, pods=(pod,), pod_files=(), pod_ranges=()))
    said = [i["message"] for i in report["issues"] if "not replayed" in i["message"]]
    assert said == ["a pod in namespace analytics without a name not replayed: Required value: "
                    "name or generateName is required"]


NODE_DAMAGE = [
    ("labels", lambda n: n["metadata"].update(labels=["a"]), "metadata.labels", "must be a mapping, got a list"),
    ("label value", lambda n: n["metadata"]["labels"].update({"node.kubernetes.io/instance-type": 5}),
     "metadata.labels.node.kubernetes.io/instance-type", "must be a string, got an integer"),
    ("allocatable", lambda n: n["status"].update(allocatable="x"), "status.allocatable",
     "must be a mapping, got a string"),
    ("allocatable cpu", lambda n: n["status"]["allocatable"].update(cpu="x"), "status.allocatable.cpu",
     "Invalid value: \"x\": quantities must match the regular expression "
     "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("capacity number", lambda n: n["status"]["capacity"].update(cpu=16), "status.capacity.cpu",
     "must be a string (a quantity), got an integer"),
    ("status", lambda n: n.update(status="x"), "status", "must be a mapping, got a string"),
]


@pytest.mark.parametrize("name,damage,path,said", NODE_DAMAGE, ids=[d[0] for d in NODE_DAMAGE])
def test_a_damaged_node_is_an_error_naming_the_field_and_is_not_replayed(
        example: Path, name: str, damage: Any, path: str, said: str) -> None:
    """Labels, allocatable or capacity of another type than the apiserver
    serves were read as Python writes them (``5`` a label "5") or not at
    all (the configuration's check went without them): the node is listed,
    not replayed, with one error naming the file and the field path."""
    f = example / "nodes.json"
    doc = json.loads(f.read_text())
    k = 3
    node = doc["items"][k]["metadata"]["name"]
    damage(doc["items"][k])
    f.write_text(json.dumps(doc, indent=4))
    code, out, _ = _run("fleet", "analyze", str(example), "-o", "json")
    assert code == 0
    assert _issues(out, f) == [("error", node, f"items[{k}].{path}", f"{said}: the apiserver serves no such "
                                "Node (a damaged dump); the node is not replayed")]
    got = next(n for n in json.loads(out)["nodes"] if n["name"] == node)
    assert got["status"] == "error" and "baseline" not in got
    assert all(isinstance(v, str) for v in got["labels"].values())


def _damaged_fleet(example: Path) -> Path:
    """The example damaged; the dump of clean pods moved out of
    ``pods.json`` (the fast path takes it)."""
    nodes = example / "nodes.json"
    doc = json.loads(nodes.read_text())
    doc["items"][0]["metadata"]["labels"]["node.kubernetes.io/instance-type"] = 5
    doc["items"][2]["status"]["allocatable"]["cpu"] = "x"
    doc["items"].append({"kind": "Node", "metadata": {"name": ""}})
    nodes.write_text(json.dumps(doc, indent=2))
    _, i, _ = _damage_pod(example, lambda p: p["status"].update(phase=7))
    pods = example / "pods.json"
    doc = json.loads(pods.read_text())
    bound = [k for k, p in enumerate(doc["items"]) if p["spec"].get("nodeName") and k != i]
    doc["items"][bound[0]]["metadata"]["ownerReferences"] = "x"
    doc["items"][bound[-1]]["metadata"].pop("name")
    damaged = {i, bound[0], bound[-1]}
    middle = [k for k in range(len(doc["items"])) if min(damaged) < k < max(damaged) and k not in damaged]
    clean = example / "pods-clean.json"
    clean.write_text(json.dumps({**doc, "items": [doc["items"][k] for k in middle]}, indent=4))
    doc["items"] = [p for k, p in enumerate(doc["items"]) if k not in middle]
    pods.write_text(json.dumps(doc, indent=4))
    (example / "midbad.json").write_text(MIDBAD)
    return clean


@pytest.mark.parametrize("executor", [["--workers", "2"], ["--dask", "local:2"]], ids=["workers", "dask"])
def test_the_issues_are_the_same_in_every_executor(example: Path, executor: list[str]) -> None:
    """The report of a damaged fleet is the same bytes in one process (the
    pods of the clean dump kept from the index, the damaged dump indexed
    item by item), in worker processes and on a Dask cluster (the
    dumps read where the replay runs)."""
    if executor[0] == "--dask":
        from .conftest import need

        need("distributed")
    from podnuma.fleet.podscan import index_pod_file

    clean = _damaged_fleet(example)
    damaged = index_pod_file(example / "pods.json")  # (indexed item by item, three pods left out)
    assert index_pod_file(clean) is not None and damaged is not None and len(damaged.issues) == 3
    code, one, _ = _run("fleet", "analyze", str(example), "-o", "json")
    assert code == 0
    said = [(i["file"], i["path"]) for i in json.loads(one)["issues"] if "damaged dump" in i["message"]]
    assert len(said) == 6 and not [f for f, _ in said if f == str(clean)]
    assert [i for i in json.loads(one)["issues"] if i["file"] == str(example / "midbad.json")] == [
        {"severity": "error", "node": None, "file": str(example / "midbad.json"), "path": None,
         "message": "invalid JSON: Expecting value (line 3, column 1)"}]
    code, other, _ = _run("fleet", "analyze", str(example), "-o", "json", *executor)
    assert code == 0
    assert other == one
