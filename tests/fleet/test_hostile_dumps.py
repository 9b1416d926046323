"""Hostile cluster dumps are normal input: a NodeResourceTopology whose
capacities have no bound, fields of the wrong type in it, a pods dump whose
items are not objects. Each is an issue of the report naming the file and
the field path, in the field kit's wording; never a traceback, a hang or
memory without bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import podnuma.fleet.inputs as inputs_mod
from podnuma.fleet.files import ItemProblems
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.model import Issue
from podnuma.fleet.nrt import MAX_DEVICES, NrtError, NrtForms, nrt_node_form
from podnuma.fleet.podscan import index_pod_file

from .conftest import EXAMPLE

A1 = "ip-10-20-1-17.eu-west-1.compute.internal"  # the node with a NodeResourceTopology
NRT = "noderesourcetopologies.json"
SRC = Path(__file__).resolve().parents[2] / "src"


def _nrt_doc(d: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((d / NRT).read_text())
    return doc


def _cpu_index(doc: dict[str, Any]) -> int:
    res = doc["items"][0]["zones"][0]["resources"]
    return next(j for j, r in enumerate(res) if r["name"] == "cpu")


def _analyze_bounded(d: Path) -> dict[str, Any]:
    """``fleet analyze D -o json`` in a process of at most 2 GiB of address
    space and one minute: the report document (exit 0)."""

    def limit() -> None:  # (in the child, before it runs Python)
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(d), "-o", "json"],
                          capture_output=True, text=True, timeout=60, env=env, preexec_fn=limit)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def _nrt_issues(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in report["issues"] if i["node"] == A1 and "NodeResourceTopology" in i["message"]]


@pytest.mark.parametrize("what", ["cpu", "device"])
def test_a_capacity_without_bound_is_refused_before_anything_is_laid_out(example: Path, what: str) -> None:
    """A CPU capacity of 99999999999999999999Ei, or an extended resource of
    10^11 devices: the node's NodeResourceTopology is not usable, said at
    the capacity's field path with the node forms' bound, at once (it laid
    out that many CPU rows or device records, for minutes and gigabytes);
    the other nodes are replayed."""
    doc = _nrt_doc(example)
    res = doc["items"][0]["zones"][0]["resources"]
    if what == "cpu":
        j = _cpu_index(doc)
        res[j]["capacity"] = "99999999999999999999Ei"
        shown = "99999999999999999999Ei"
    else:
        j = len(res)
        res.append({"name": "example.com/gpu", "capacity": "100000000000"})
        shown = "100000000000"
    (example / NRT).write_text(json.dumps(doc, indent=2))
    report = _analyze_bounded(example)
    issues = _nrt_issues(report)
    bound = 8192 if what == "cpu" else MAX_DEVICES
    assert issues == [{
        "severity": "error", "node": A1, "file": str(example / NRT),
        "path": f"items[0].zones[0].resources[{j}].capacity",
        "message": f"NodeResourceTopology not usable: must be at most {bound}, got {shown}",
    }]
    assert report["fleet"]["nodeStatus"]["error"] == 2  # this node and the one without topology
    assert report["fleet"]["podsReplayed"] > 0


def test_capacities_are_checked_against_the_bound_before_the_rows() -> None:
    """Each capacity the form reads is checked where it is read, and the
    totals as they add up: nothing is laid out past a bound."""
    base = json.loads((EXAMPLE / NRT).read_text())["items"][0]

    def with_caps(cpu: Any, extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        nrt = json.loads(json.dumps(base))
        for z in nrt["zones"]:
            for r in z["resources"]:
                if r["name"] == "cpu":
                    r["capacity"] = cpu
            z["resources"].extend(extra or [])
        return nrt

    def refusal(nrt: dict[str, Any]) -> tuple[str, str]:
        with pytest.raises(NrtError) as err:
            nrt_node_form(nrt, threads_per_core=2)
        assert str(err.value) == f"{err.value.path}: {err.value.message}"
        return err.value.path, err.value.message

    assert refusal(with_caps("9000")) == ("zones[0].resources[0].capacity", "must be at most 8192, got 9000")
    assert refusal(with_caps(9000)) == ("zones[0].resources[0].capacity", "must be at most 8192, got 9000")
    assert refusal(with_caps("8Ki")) == ("zones", "16384 CPUs: more than Linux supports (8192)")
    assert refusal(with_caps("9" * 5000)) == (
        "zones[0].resources[0].capacity", f"must be at most 8192, got {'9' * 40}...")
    gpus = [{"name": "example.com/gpu", "capacity": "5000"}]
    assert refusal(with_caps("32", gpus)) == (
        "zones[1].resources[2].capacity", "10000 devices in all: more than a node form takes (8192)")
    assert refusal(with_caps("32", [{"name": "example.com/gpu", "capacity": 10**12}])) == (
        "zones[0].resources[2].capacity", "must be at most 8192, got 1000000000000")
    huge_memory = with_caps("32")
    huge_memory["zones"][0]["resources"][1]["capacity"] = "99999999999999999999Ei"
    assert refusal(huge_memory) == ("zones[0].resources[1].capacity",
                                    "too large: '99999999999999999999Ei' does not fit in 64 bits "
                                    "(as cadvisor reports bytes)")
    far = with_caps("32")
    far["zones"][1]["name"] = "node-" + "9" * 30
    assert refusal(far) == ("zones[1].name", f"NUMA node id {'9' * 20}... out of range "
                            "(Linux supports ids below 1024)")
    # at the bound: laid out
    form, _ = nrt_node_form(with_caps("4096", [{"name": "example.com/gpu", "capacity": "4096"}]),
                            threads_per_core=2)
    assert len(form["cpus"]) == 8192 and len(form["devices"]["example.com/gpu"]) == 8192
    # the cached refusal of a shape is the same error, path and all
    forms = NrtForms()
    for _ in range(2):
        with pytest.raises(NrtError) as again:
            forms.form(with_caps("9000"), threads_per_core=2)
        assert (again.value.path, again.value.message) == refusal(with_caps("9000"))


@pytest.mark.parametrize(("field", "value", "path", "message"), [
    ("zones", "x", "items[0].zones", "must be a list, got a string"),
    ("zones", 5, "items[0].zones", "must be a list, got an integer"),
    ("resources", "x", "items[0].zones[0].resources", "must be a list, got a string"),
    ("costs", 5, "items[0].zones[0].costs", "must be a list, got an integer"),
])
def test_nrt_fields_of_the_wrong_type_are_said_so(
    example: Path, field: str, value: Any, path: str, message: str
) -> None:
    """``zones: "x"`` is not a missing list but one of the wrong type (the
    field kit's wording); ``costs: 5`` was a TypeError out of the reading."""
    doc = _nrt_doc(example)
    if field == "zones":
        doc["items"][0]["zones"] = value
    else:
        doc["items"][0]["zones"][0][field] = value
    (example / NRT).write_text(json.dumps(doc))
    fleet = load_fleet([example])
    node = next(n for n in fleet.nodes if n.name == A1)
    assert not node.topology_source.startswith("NodeResourceTopology")
    assert [i for i in node.issues if "NodeResourceTopology" in i.message] == [
        Issue("error", f"NodeResourceTopology not usable: {message}", node=A1, file=str(example / NRT),
              path=path)]


def test_a_zone_twice_and_a_capacity_that_is_no_quantity_are_refused() -> None:
    """Two zones of one NUMA id: the later replaced the earlier without a
    word; a capacity that is not a whole quantity was skipped (the node
    then had "no cpu capacity", or fewer devices): both name the field."""
    base = json.loads((EXAMPLE / NRT).read_text())["items"][0]
    twice = json.loads(json.dumps(base))
    twice["zones"].append(json.loads(json.dumps(twice["zones"][0])))
    with pytest.raises(NrtError) as err:
        nrt_node_form(twice, threads_per_core=2)
    last = len(twice["zones"]) - 1
    assert (err.value.path, err.value.message) == (
        f"zones[{last}]", "NUMA zone node-0 is listed twice (first at zones[0])")
    for capacity in ("1500m", "lots", 1.5, True, {"a": 1}):
        odd = json.loads(json.dumps(base))
        odd["zones"][0]["resources"][0]["capacity"] = capacity
        assert odd["zones"][0]["resources"][0]["name"] == "cpu"
        with pytest.raises(NrtError) as err:
            nrt_node_form(odd, threads_per_core=2)
        assert err.value.path == "zones[0].resources[0].capacity"
        assert err.value.message.startswith("not a whole quantity: "), err.value.message
    absent = json.loads(json.dumps(base))
    del absent["zones"][0]["resources"][1]["capacity"]  # (memory: not counted, as before)
    nrt_node_form(absent, threads_per_core=2)


def test_a_missing_zones_list_is_still_said_missing() -> None:
    with pytest.raises(NrtError, match=r"^zones: required list is missing$"):
        nrt_node_form({"metadata": {"name": "n"}}, threads_per_core=2)


def _pods_issues(fleet: Any, f: Path) -> list[tuple[str, str, str]]:
    return [(i.severity, i.path, i.message) for i in fleet.issues if i.file == str(f) and i.node is None]


BAD_ITEMS = [1, "a", None, {"spec": "x"}, {"metadata": 5}]
BAD_ITEMS_ISSUES = [
    ("warning", "items[0]", "must be a mapping, got an integer"),
    ("warning", "items[1]", "must be a mapping, got a string"),
    ("warning", "items[2]", "must be a mapping, got null"),
    ("warning", "items[3].spec", "must be a mapping, got a string"),
    ("warning", "items[4].metadata", "must be a mapping, got an integer"),
]


@pytest.mark.parametrize("general", [False, True], ids=["as read", "general reader"])
@pytest.mark.parametrize(("items", "want"), [
    ("x", [("error", "items", "must be a list, got a string")]),
    ({"a": 1}, [("error", "items", "must be a list, got a mapping")]),
    (BAD_ITEMS, BAD_ITEMS_ISSUES),
])
def test_a_malformed_pods_dump_is_an_issue_naming_the_file_and_the_field(
    example: Path, monkeypatch: pytest.MonkeyPatch, items: Any, want: list[tuple[str, str, str]],
    general: bool,
) -> None:
    """A pods dump whose ``items`` is not a list, or whose items are not
    pod objects, was read as no pod without a word ("0 pods replayed",
    exit 0): each is an issue naming the file and the field path. The fast
    path does not take it; the general reader, which reads it, says it."""
    f = example / "pods.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert index_pod_file(f) is None
    if general:
        monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    fleet = load_fleet([example])
    assert _pods_issues(fleet, f) == want
    assert fleet.pods_total == 0


def test_a_malformed_pod_among_good_ones_is_named_and_the_others_replayed(
    example: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pod whose ``spec.nodeName`` is not a string was dropped without a
    word (the fast path took it as a pod without a node): the dump goes to
    the general reader, which names it and reads the other pods as
    before."""
    f = example / "pods.json"
    doc = json.loads(f.read_text())
    before = load_fleet([example])
    n = 7
    doc["items"][n]["spec"]["nodeName"] = 5
    doc["items"][n + 1]["spec"] = "x"
    f.write_text(json.dumps(doc, indent=4))
    assert index_pod_file(f) is None
    fleet = load_fleet([example])
    assert _pods_issues(fleet, f) == [
        ("warning", f"items[{n}].spec.nodeName", "must be a string, got an integer"),
        ("warning", f"items[{n + 1}].spec", "must be a mapping, got a string"),
    ]
    assert fleet.pods_total == before.pods_total
    assert fleet.pods_without_node == before.pods_without_node + 2
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    assert _pods_issues(load_fleet([example]), f) == _pods_issues(fleet, f)


def test_the_fast_path_still_takes_clean_dumps(tmp_path: Path) -> None:
    """A clean dump (pods with and without a node, ``nodeName: null``) is
    indexed by the fast path as before, and nothing is said of it."""
    assert index_pod_file(EXAMPLE / "pods.json") is not None
    items = [{"kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {"nodeName": f"n{i % 3}"}}
             for i in range(6)]
    items += [{"kind": "Pod", "metadata": {"name": "q"}, "spec": {"nodeName": None}},
              {"kind": "Pod", "metadata": {"name": "r"}, "spec": {}},
              {"kind": "Pod", "metadata": None, "spec": None}]
    f = tmp_path / "pods.json"
    f.write_text(json.dumps({"kind": "PodList", "items": items}))
    index = index_pod_file(f)
    assert index is not None and index.pods == 9 and index.unbound == 3
    fleet = load_fleet([f])
    assert _pods_issues(fleet, f) == []
    assert fleet.pods_total == 9 and fleet.pods_without_node == 3


def test_many_bad_items_are_a_bounded_number_of_issues(tmp_path: Path) -> None:
    """A dump of 100,000 bad items is the first few named and one issue
    counting the rest, not 100,000 issues."""
    f = tmp_path / "pods.json"
    f.write_text(json.dumps({"kind": "List", "items": [1] * 100_000}))
    issues = _pods_issues(load_fleet([f]), f)
    shown = ItemProblems.SHOWN
    assert len(issues) == shown + 1
    assert issues[:2] == [("warning", "items[0]", "must be a mapping, got an integer"),
                          ("warning", "items[1]", "must be a mapping, got an integer")]
    assert issues[-1] == ("warning", "", f"{100_000 - shown} more object(s) of this file with a field "
                          "of the wrong type, not listed")


def test_yaml_dumps_and_documents_are_checked_with_their_paths(tmp_path: Path) -> None:
    """The general reader's other shapes: a YAML dump of several documents
    (each one's path first), a pod that is a document itself."""
    import yaml

    f = tmp_path / "pods.yaml"
    f.write_text(yaml.safe_dump_all([
        {"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "a"}, "spec": {"nodeName": "node-a"}}]},
        {"kind": "PodList", "items": "x"},
        {"kind": "List", "items": [None]},
        {"kind": "Pod", "metadata": {"name": "b"}, "spec": {"nodeName": ["node-a"]}},
        {"kind": "ConfigMap", "metadata": 5},  # not read by the fleet: not checked, said not read
    ]))
    fleet = load_fleet([f])
    assert _pods_issues(fleet, f) == [
        ("error", "[1].items", "must be a list, got a string"),
        ("warning", "[2].items[0]", "must be a mapping, got null"),
        ("warning", "[3].spec.nodeName", "must be a string, got a list"),
        ("warning", "[4]", "1 object(s) of a kind the fleet does not read (1 ConfigMap): not read "
                           "(the dumps it reads hold Pod, Node, NodeResourceTopology objects)"),
    ]
    assert fleet.pods_total == 2 and fleet.pods_without_node == 1
