"""Gaps of the fleet's inputs found by the reviews:

1. a pods dump with one damaged pod (a lone surrogate, a field of another
   type) is indexed item by item, that pod left out in the general
   reader's words, rather than the whole dump built by the general reader;
   a clean nodes dump is read without the fields the fleet does not read
   (annotations...), with the same outcome;
2. pods are replayed in the order of the moments their start times stand
   for, not of their text (an offset, a fraction);
3. a NodeResourceTopology whose name is not a DNS subdomain is left out
   with an issue, as a Node is;
4. a configz named after no node of the dump (``fleet.yaml`` holding a
   ``kubeletconfig``) is said, not silently unused;
5. a JSON FleetConfig that cannot be parsed is the command's error when it
   says ``kind: FleetConfig``, an issue otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import podnuma.fleet.inputs as inputs_mod
from podnuma.errors import InputError
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.nodescan import clean_node_list
from podnuma.fleet.pods import read_node_pods, start_key, start_order
from podnuma.fleet.podscan import in_start_order, index_pod_file, pods_of_ranges

from .conftest import copy_of, generated, need

SURROGATE = ("not Unicode text: a lone surrogate (\\ud800, written as an escape) in the value: the apiserver "
             "serves no such Pod (a damaged dump); the pod is not read")


@pytest.fixture(scope="module")
def one_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fleet whose pods are in one dump (``pods/pods.json``)."""
    return generated(tmp_path_factory, "gaps", nodes=4, pods_per_node=12, seed=3, nodes_per_pods_file=0)


@pytest.fixture
def fleet(one_dump: Path, tmp_path: Path) -> Path:
    return copy_of(one_dump, tmp_path)


def _issues(fleet: Any, f: Path | str) -> list[tuple[str, str | None, str]]:
    return [(i.severity, i.path, i.message) for i in fleet.issues if i.file == str(f)]


def _damage(f: Path) -> tuple[int, int]:
    """Two pods of ``f`` damaged: a lone surrogate in a field the fleet
    does not read, and a ``status`` that is not a mapping."""
    doc = json.loads(f.read_text())
    a, b = 4, len(doc["items"]) - 3
    doc["items"][a]["spec"]["containers"][0]["terminationMessagePath"] = "LONE"
    doc["items"][b]["status"] = "Running"
    doc["items"][0]["metadata"].setdefault("annotations", {})["note"] = "café ✓"  # (a dump of UTF-8, not ASCII)
    f.write_text(json.dumps(doc, indent=4, ensure_ascii=False).replace('"LONE"', '"\\ud800"'))
    return a, b


def _summary(fleet: Any) -> Any:
    return ([(n.name, n.pods_bound, n.pod_ranges != (), n.labels, n.allocatable, n.capacity, n.issues)
             for n in fleet.nodes], [(i.severity, i.node, i.file, i.path, i.message) for i in fleet.issues],
            fleet.pods_total, fleet.pods_without_node, fleet.pods_duplicated)


def test_a_damaged_pod_is_left_out_item_by_item_not_by_the_general_reader(
        fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = fleet / "pods" / "pods.json"
    before = load_fleet([fleet])
    a, b = _damage(f)
    # the dump is never handed to the general reader whole
    parse = inputs_mod.parse_document

    def no_whole_dump(path: Path, text: str) -> Any:
        assert Path(path) != f, "the damaged dump was read whole"
        return parse(path, text)

    monkeypatch.setattr(inputs_mod, "parse_document", no_whole_dump)
    got = load_fleet([fleet])
    said = [("warning", f"items[{a}].spec.containers[0].terminationMessagePath", SURROGATE),
            ("warning", f"items[{b}].status", "must be a mapping, got a string: the apiserver serves no such "
             "Pod (a damaged dump); the pod is not read")]
    assert _issues(got, f) == said
    assert got.pods_total == before.pods_total - 2
    # its other pods are read from byte ranges that hold no damaged pod
    ranges = {n.name: n.pod_ranges for n in got.nodes}
    assert all(ranges.values())
    pods, errors = pods_of_ranges(ranges)
    assert not errors and sum(len(v) for v in pods.values()) == before.pods_total - 2
    monkeypatch.undo()
    # the general reader, reading the whole dump, gives the same
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    general = load_fleet([fleet])
    assert _issues(general, f) == said
    assert general.pods_total == got.pods_total
    assert [(n.name, n.pods_bound) for n in general.nodes] == [(n.name, n.pods_bound) for n in got.nodes]


def test_an_item_the_general_reader_reads_sends_the_dump_to_it(fleet: Path) -> None:
    """A damaged pod beside an item that is no pod (a Node in the list):
    not the fast reader's, item by item or not; the general reader's
    words for both."""
    f = fleet / "pods" / "pods.json"
    _damage(f)
    doc = json.loads(f.read_text().replace('"\\ud800"', '"LONE"'))
    doc["items"].append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "extra"}})
    f.write_text(json.dumps(doc, indent=4).replace('"LONE"', '"\\ud800"'))
    assert index_pod_file(f) is None
    got = load_fleet([fleet])
    assert [p for _, p, _ in _issues(got, f)] == [
        "items[4].spec.containers[0].terminationMessagePath", f"items[{len(doc['items']) - 4}].status"]
    assert "extra" in [n.name for n in got.nodes]


def test_every_executor_gives_the_same_report_of_a_dump_read_item_by_item(fleet: Path, tmp_path: Path) -> None:
    need("distributed")
    _damage(fleet / "pods" / "pods.json")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = []
    for mode in ([], ["--dask", "local:2"]):
        p = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json",
                            *mode], env=env, capture_output=True, timeout=600, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        got.append(p.stdout)
    assert got[1] == got[0]
    report = json.loads(got[0])
    assert len([i for i in report["issues"] if "damaged dump" in i["message"]]) == 2


def _annotated(fleet: Path, per_node: int) -> dict[str, Any]:
    f = fleet / "nodes.json"
    doc = json.loads(f.read_text())
    for k, n in enumerate(doc["items"]):
        n["metadata"].setdefault("annotations", {}).update({f"k{j}": f"{k}.{j}" for j in range(per_node)})
    f.write_text(json.dumps(doc, separators=(",", ":")))
    return doc  # type: ignore[no-any-return]


def test_a_clean_nodes_dump_is_read_without_the_fields_not_read(
        fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _annotated(fleet, 500)
    doc["items"].append(json.loads(json.dumps(doc["items"][0])))  # (listed twice: said)
    (fleet / "nodes.json").write_text(json.dumps(doc))
    trimmed = clean_node_list((fleet / "nodes.json").read_bytes())
    assert trimmed is not None and len(trimmed["items"]) == len(doc["items"])
    first = trimmed["items"][0]
    assert set(first["metadata"]) == {"name", "labels"} and set(first["status"]) == {"capacity", "allocatable"}
    got = load_fleet([fleet])
    assert [i.message for i in got.issues if "listed twice" in i.message] == [
        f"node {doc['items'][0]['metadata']['name']} listed twice; the last one is used"]
    monkeypatch.setattr(inputs_mod, "clean_node_list", lambda *_: None)
    assert _summary(load_fleet([fleet])) == _summary(got)


@pytest.mark.parametrize("damage", [
    lambda n: n["metadata"]["labels"].update(x=5),
    lambda n: n["status"]["allocatable"].update(cpu=4),
    lambda n: n.update(status="x"),
    lambda n: n["metadata"].update(name="../../etc/x"),
    lambda n: n.update(spec=[]),
], ids=["label", "quantity", "status", "name", "spec"])
def test_a_nodes_dump_the_node_reader_does_not_take_gives_the_general_readers_words(
        fleet: Path, monkeypatch: pytest.MonkeyPatch, damage: Any) -> None:
    f = fleet / "nodes.json"
    doc = json.loads(f.read_text())
    damage(doc["items"][1])
    f.write_text(json.dumps(doc, indent=2))
    got = load_fleet([fleet])
    said = [(i.severity, i.path, i.message) for i in got.issues if i.file == str(f)]
    said += [(i.severity, i.path, i.message) for n in got.nodes for i in n.issues if i.file == str(f)]
    assert said  # the damage is said
    monkeypatch.setattr(inputs_mod, "clean_node_list", lambda *_: None)
    assert _summary(load_fleet([fleet])) == _summary(got)


def _pods_at(fleet: Path, times: list[tuple[str, str]]) -> tuple[Path, str]:
    """The pods dump with its first node's pods given these (name, start
    time) in this order in the file, the others' pods left as they are."""
    f = fleet / "pods" / "pods.json"
    doc = json.loads(f.read_text())
    node = doc["items"][0]["spec"]["nodeName"]
    mine = [p for p in doc["items"] if p["spec"].get("nodeName") == node]
    rest = [p for p in doc["items"] if p["spec"].get("nodeName") != node]
    pods = []
    for k, (name, t) in enumerate(times):
        p = json.loads(json.dumps(mine[k % len(mine)]))
        p["metadata"]["name"] = name
        p["metadata"]["namespace"] = "ns"
        p["metadata"]["uid"] = f"uid-{name}"
        p["status"]["startTime"] = t
        pods.append(p)
    doc["items"] = pods + rest
    f.write_text(json.dumps(doc, indent=4))
    return f, node


TIMES = [
    ("b-utc-9", "2026-01-01T09:00:00Z"),
    ("a-plus2-8", "2026-01-01T10:00:00+02:00"),  # 08:00Z: first, though its text sorts after 09:00Z
    ("c-frac", "2026-01-01T09:00:05.5Z"),  # after 09:00:05Z, though "." sorts before "Z"
    ("d-whole", "2026-01-01T09:00:05Z"),
    ("f-same", "2026-01-01T07:30:00-01:30"),  # 09:00Z: the same moment as b-utc-9: by name
    ("e-minus", "2026-01-01T08:30:00-00:45"),  # 09:15Z
]
ORDER = ["a-plus2-8", "b-utc-9", "f-same", "d-whole", "c-frac", "e-minus"]


def test_pods_are_replayed_in_the_order_of_their_start_instants(fleet: Path) -> None:
    f, node = _pods_at(fleet, TIMES)
    # the general reader's pods (compact documents)
    by_node, issues = read_node_pods([str(f)], [node])
    assert not issues
    assert [p["metadata"]["name"] for p in by_node[node]][:6] == ORDER
    # the fast reader's (pods scanned from byte ranges, as the replay reads them)
    index = index_pod_file(f)
    assert index is not None
    scanned, errors = pods_of_ranges({node: index.ranges[node]}, scanned=True)
    assert not errors
    ordered = in_start_order(node, [], [p for ps in scanned.values() for p in ps])
    assert [p.name for p in ordered][:6] == ORDER
    assert [p.start for p in ordered] == [start_key(p.doc) for p in ordered]


def test_start_order_of_times_the_parse_refuses_or_at_the_ends() -> None:
    assert start_order("2026-01-01T10:00:00+02:00") == "2026-01-01T08:00:00"
    assert start_order("2026-01-01T08:00:00.000Z") == start_order("2026-01-01T08:00:00Z")
    # a day every month has not (29-31) is parsed, not taken as written
    assert start_order("2026-01-31T01:00:00+02:00") == "2026-01-30T23:00:00"
    assert start_order("2026-02-30T00:00:00Z") == "2026-02-30T00:00:00Z"  # refused: as its text
    assert start_order("garbage") == "garbage"
    early, late = start_order("0000-01-01T00:30:00+01:00"), start_order("9999-12-31T23:30:00-01:00")
    assert early < start_order("0000-01-01T00:00:00Z") < start_order("9999-12-31T23:59:59Z") < late


def test_an_unparsable_start_time_is_said_as_before(fleet: Path, tmp_path: Path) -> None:
    _pods_at(fleet, [("x-bad", "2026-01-01 10:00"), *TIMES[:2]])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json"],
                       env=env, capture_output=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    said = [i for i in json.loads(p.stdout)["issues"] if i["path"] == "status.startTime"]
    assert [i["message"].split(": ")[0] for i in said] == ["pod ns/x-bad not replayed"]
    assert "not an RFC 3339 time" in said[0]["message"]


def test_a_noderesourcetopology_whose_name_is_no_dns_subdomain_is_left_out(example: Path) -> None:
    fleet = example
    f = fleet / "noderesourcetopologies.json"
    doc = json.loads(f.read_text())
    good = doc["items"][0]["metadata"]["name"]
    bad = json.loads(json.dumps(doc["items"][0]))
    bad["metadata"]["name"] = "../../etc/x"
    doc["items"].append(bad)
    f.write_text(json.dumps(doc, indent=2))
    from podnuma.fleet.inputs import Scan, scan_files

    scan: Scan = scan_files([str(f)])[0]
    assert "../../etc/x" not in scan.nrt and good in scan.nrt
    said = [(i.severity, i.path, i.message) for i in scan.issues]
    assert said == [("warning", f"items[{len(doc['items']) - 1}].metadata.name",
                     'Invalid value: "../../etc/x": a lowercase RFC 1123 subdomain must consist of lower case '
                     "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
                     "(e.g. 'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'): the apiserver serves "
                     "no such NodeResourceTopology (a damaged dump); the NodeResourceTopology is not read")]
    got = load_fleet([fleet])
    assert [i.path for i in got.issues if i.file == str(f) and i.path] == [
        f"items[{len(doc['items']) - 1}].metadata.name"]


def test_a_configz_in_fleet_yaml_is_said_not_silently_unused(fleet: Path, tmp_path: Path) -> None:
    other = tmp_path / "mine"
    other.mkdir()
    (other / "fleet.yaml").write_text("kubeletconfig:\n  cpuManagerPolicy: static\n")
    before = load_fleet([fleet])
    got = load_fleet([fleet, other / "fleet.yaml"])
    said = [(i.severity, i.node, i.message) for i in got.issues if i.file == str(other / "fleet.yaml")]
    assert said == [("warning", "fleet", "a kubelet configuration for node fleet (the file's name), "
                     "which is not in the nodes dump: not used (a FleetConfig is `apiVersion: podnuma.io/v1`, "
                     "`kind: FleetConfig` with `nodeGroups`, each group's configuration under `kubeletConfig` "
                     "or `kubeletConfigFile`)")]
    assert [(n.name, n.config_source) for n in got.nodes] == [(n.name, n.config_source) for n in before.nodes]


def test_a_json_fleetconfig_that_cannot_be_parsed(fleet: Path) -> None:
    says = fleet / "groups.json"
    says.write_text('{"apiVersion": "podnuma.io/v1", "kind": "FleetConfig", "nodeGroups": [{"name": "a",}]}')
    with pytest.raises(InputError) as e:
        load_fleet([fleet])
    assert e.value.file == str(says)
    says.write_text('{"apiVersion": "podnuma.io/v1", "nodeGroups": [{"name": "a",}]}')  # (no kind: no way to tell)
    got = load_fleet([fleet])
    assert [(i.severity, i.message.split(":")[0]) for i in got.issues if i.file == str(says)] == [
        ("error", "invalid JSON")]


def test_a_pod_with_a_number_too_long_is_left_out_alone_in_every_mode(fleet: Path, tmp_path: Path) -> None:
    # a number of more than Python's 4,300 digits in a field the fleet does
    # not read: the general reader refuses its item (not the run of pods it
    # is read in, which differs between one process and the workers' pieces)
    need("distributed")
    f = fleet / "pods" / "pods.json"
    doc = json.loads(f.read_text())
    total = len(doc["items"])
    doc["items"][total // 2]["metadata"].setdefault("annotations", {})["zz"] = "BIG"
    f.write_text(json.dumps(doc, indent=4).replace('"BIG"', "9" * 5000))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = []
    for mode in ([], ["--workers", "2"], ["--dask", "local:2"]):
        p = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json",
                            *mode], env=env, capture_output=True, timeout=600, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        got.append(p.stdout)
    assert got[1] == got[0] and got[2] == got[0]
    report = json.loads(got[0])
    assert report["summary"]["as running"]["pods"] == total - 1, report["summary"]
    assert any("a number of more than 4300 digits" in i["message"] for i in report["issues"])
