"""Review fixes of ``fleet analyze``: a UID given to two pods, the what-if
grammar (shared-pool-cpus=0, a key given twice, the help), the restart
totals over the nodes whose configuration is assumed, a JSON file that
holds no Kubernetes object, and a ``--as-scenario`` directory that is not
empty."""

from __future__ import annotations

import copy
import json
from pathlib import Path

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
    assert err.strip() == (f"error: {out_dir}: --as-scenario: the directory is not empty "
                           "(the scenarios go into a new or empty directory)")
    assert sorted(p.name for p in out_dir.iterdir()) == ["old-node.yaml"]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, _ = _run("fleet", "analyze", str(example), "--as-scenario", str(empty))
    assert code == 0 and any(empty.iterdir())
