"""A pods dump written on one line (``kubectl get pods -A -o json | jq -c``,
``json.dumps`` without an indent) with damaged pods is read item by item,
as one laid out one item a line is (docs/fleet.md, "one bad pod costs what
the pod costs"): each damaged pod left out alone with the general reader's
warning naming it, the other pods kept, never the whole dump built by the
general reader. Its items are found by their opening bytes (the first
item's, up to its first object: ``{"apiVersion":"v1","kind":"Pod",
"metadata":``), each taken only where it decodes as one value, else its end
found by its strings and brackets; the same marks cut a large one-line
dump into pieces for the workers. The report is the same bytes in one
process, ``--workers 2`` and ``--dask local:2``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import podnuma.fleet.inputs as inputs_mod
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.podscan import cut_pieces, index_piece, index_pod_file, pods_of_ranges

from .conftest import copy_of, generated, need
from .test_pieces import SMALL, _Mapper, _report, small_pieces, whole_reads  # noqa: F401 (fixtures)
from .test_review_inputs import POD_DAMAGE

#: the two one-line layouts: ``jq -c`` (and ``kubectl`` piped through it)
#: and Python's ``json.dumps`` without an indent
SEPARATORS = {"jq -c": (",", ":"), "json.dumps": (", ", ": ")}
LONE = "LONE-SURROGATE-HERE"
BIG = "NUMBER-TOO-LONG-HERE"
DAMAGED = "the apiserver serves no such Pod (a damaged dump); the pod is not read"
SURROGATE = "not Unicode text: a lone surrogate (\\ud800, written as an escape) in the value"


@pytest.fixture(scope="module")
def one_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated(tmp_path_factory, "compact", nodes=4, pods_per_node=12, seed=11, nodes_per_pods_file=0)


@pytest.fixture
def fleet(one_dump: Path, tmp_path: Path) -> Path:
    return copy_of(one_dump, tmp_path)


def _write(f: Path, doc: Any, layout: str) -> None:
    """``doc`` on one line, each string ``LONE`` a lone surrogate escape and
    each ``BIG`` an integer of 5,000 digits."""
    text = json.dumps(doc, separators=SEPARATORS[layout], ensure_ascii=False)
    f.write_text(text.replace(json.dumps(LONE), '"\\ud800"').replace(json.dumps(BIG), "9" * 5000))
    assert "\n" not in f.read_text()


def _summary(fleet: Any) -> Any:
    return ([(n.name, n.pods_bound, n.labels, n.allocatable, n.capacity, n.issues) for n in fleet.nodes],
            [(i.severity, i.node, i.file, i.path, i.message) for i in fleet.issues],
            fleet.pods_total, fleet.pods_without_node, fleet.pods_duplicated)


def _bound(doc: Any, k: int) -> int:
    """The index of the ``k``-th pod of ``doc`` bound to a node."""
    return [i for i, p in enumerate(doc["items"]) if p["spec"].get("nodeName")][k]


# every damage the indented dumps' tests give a pod (test_surrogate_pods,
# test_input_gaps, test_review_inputs' POD_DAMAGE): what it does to a pod,
# the field path said and the start of the words
DAMAGE: list[tuple[str, Callable[[Any], Any], str, str]] = [
    ("lone surrogate in a value", lambda p: p["metadata"].setdefault("annotations", {}).update(x=LONE),
     "metadata.annotations.x", SURROGATE),
    ("lone surrogate in a key", lambda p: p["metadata"].update(labels={LONE: "v"}),
     "metadata.labels", SURROGATE.replace("in the value", "in a key")),
    ("lone surrogate in a field not read", lambda p: p["spec"]["containers"][0].update(
        terminationMessagePath=LONE), "spec.containers[0].terminationMessagePath", SURROGATE),
] + POD_DAMAGE


@pytest.mark.parametrize("layout", list(SEPARATORS))
@pytest.mark.parametrize(("name", "damage", "path", "said"), DAMAGE, ids=[d[0] for d in DAMAGE])
def test_a_damaged_pod_of_a_one_line_dump_is_left_out_alone(
    fleet: Path, monkeypatch: pytest.MonkeyPatch, layout: str, name: str, damage: Callable[[Any], Any],
    path: str, said: str,
) -> None:
    f = fleet / "pods" / "pods.json"
    doc = json.loads(f.read_text())
    before = load_fleet([fleet])
    i = _bound(doc, 5)
    damage(doc["items"][i])
    doc["items"][0]["metadata"].setdefault("annotations", {})["note"] = "café ✓ },{\"apiVersion\""  # not ASCII
    _write(f, doc, layout)
    index = index_pod_file(f)
    assert index is not None, "the dump was not indexed item by item"
    assert [(x.severity, x.path) for x in index.issues] == [("warning", f"items[{i}].{path}")]
    assert index.issues[0].message.startswith(said) and index.issues[0].message.endswith(DAMAGED)
    assert index.pods == len(doc["items"]) - 1
    # the dump is never handed to the general reader whole
    parse = inputs_mod.parse_document

    def no_whole_dump(p: Path, text: str) -> Any:
        assert Path(p) != f, "the damaged dump was read whole"
        return parse(p, text)

    monkeypatch.setattr(inputs_mod, "parse_document", no_whole_dump)
    got = load_fleet([fleet])
    assert got.pods_total == before.pods_total - 1
    # its other pods are read back from byte ranges that hold no damaged pod
    pods, errors = pods_of_ranges({n.name: n.pod_ranges for n in got.nodes})
    assert not errors and sum(len(v) for v in pods.values()) == got.pods_total
    monkeypatch.undo()
    # the general reader, given the whole dump, gives the same
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    assert _summary(load_fleet([fleet])) == _summary(got)


@pytest.mark.parametrize("layout", list(SEPARATORS))
def test_marks_inside_items_and_items_laid_out_otherwise(
    fleet: Path, monkeypatch: pytest.MonkeyPatch, layout: str,
) -> None:
    """An object nested in a pod that opens as the dump's items do (a mark
    inside an item), a pod whose fields are in another order (no mark
    before it), next to damaged pods: each item is still found whole."""
    f = fleet / "pods" / "pods.json"
    doc = json.loads(f.read_text())
    items = doc["items"]
    a, b, c = _bound(doc, 2), _bound(doc, 3), _bound(doc, 9)
    items[a]["spec"]["x-nested"] = [1, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "inner"}},
                                    {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "y": "}]"}]
    items[b]["metadata"]["annotations"] = {"x": LONE}
    items[b + 1] = {"kind": "Pod", **{k: v for k, v in items[b + 1].items() if k != "kind"}}
    items[c]["status"] = ["Running"]
    _write(f, doc, layout)
    index = index_pod_file(f)
    assert index is not None
    assert [x.path for x in index.issues] == [f"items[{b}].metadata.annotations.x", f"items[{c}].status"]
    got = load_fleet([fleet])
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    assert _summary(load_fleet([fleet])) == _summary(got)


@pytest.mark.parametrize("layout", list(SEPARATORS))
@pytest.mark.parametrize("damage", ["truncated", "NaN", "a Node in the list", "unclosed string",
                                    "a comma before the list's end", "no comma between two items"])
def test_what_is_not_a_damaged_pod_still_goes_to_the_general_reader(
    fleet: Path, monkeypatch: pytest.MonkeyPatch, layout: str, damage: str,
) -> None:
    f = fleet / "pods" / "pods.json"
    doc = json.loads(f.read_text())
    doc["items"][3]["metadata"].setdefault("annotations", {})["x"] = LONE
    if damage == "a Node in the list":
        doc["items"].append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "extra"}})
    _write(f, doc, layout)
    text = f.read_text()
    if damage == "truncated":
        f.write_text(text[: len(text) * 2 // 3])
    elif damage == "NaN":
        f.write_text(text.replace('"restartPolicy":"Always"' if layout == "jq -c" else
                                  '"restartPolicy": "Always"', '"restartPolicy":NaN', 1))
    elif damage == "unclosed string":
        f.write_text(text[: len(text) // 2] + '"' + text[len(text) // 2:])
    elif damage == "a comma before the list's end":
        assert text.endswith("}]}")
        f.write_text(text[:-2] + ",]}")
    elif damage == "no comma between two items":
        sep = "},{" if layout == "jq -c" else "}, {"
        assert sep + '"apiVersion"' in text
        f.write_text(text.replace(sep + '"apiVersion"', "}{" + '"apiVersion"', 1))
    assert f.read_text() != text or damage == "a Node in the list"
    assert index_pod_file(f) is None
    got = load_fleet([fleet]) if damage == "a Node in the list" else None
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    if got is not None:
        assert _summary(load_fleet([fleet])) == _summary(got)


@pytest.mark.parametrize("layout", list(SEPARATORS))
def test_a_one_line_dump_is_cut_into_pieces_that_are_its_items(
    small_fleet: Path, tmp_path: Path, small_pieces: None, layout: str,  # noqa: F811
) -> None:
    f = tmp_path / "pods.json"
    _write(f, json.loads(sorted((small_fleet / "pods").glob("*.json"))[0].read_text()), layout)
    whole = index_pod_file(f)
    pieces = cut_pieces(str(f))
    assert whole is not None and pieces is not None and len(pieces) >= 10
    indexes = [index_piece(p) for p in pieces]
    assert all(i is not None for i in indexes)
    assert any(i is not None and i.pods == 0 for i in indexes)  # (pieces smaller than a pod)
    data = f.read_bytes()

    def items(ranges: list[tuple[str, int, int]]) -> list[Any]:
        return [p for r in sorted(ranges, key=lambda r: r[1]) for p in json.loads(b"[" + data[r[1]:r[2]] + b"]")]

    assert sum(i.pods for i in indexes if i) == whole.pods
    for node, ranges in whole.ranges.items():
        assert items([r for i in indexes if i for r in i.ranges.get(node, [])]) == items(ranges)


@pytest.mark.parametrize("layout", list(SEPARATORS))
@pytest.mark.parametrize("damaged", [False, True], ids=["clean", "damaged"])
def test_pieces_of_a_one_line_dump_give_the_report_of_one_process(
    small_fleet: Path, tmp_path: Path, small_pieces: None, whole_reads: list[str],  # noqa: F811
    layout: str, damaged: bool,
) -> None:
    """Clean, its pieces are read by themselves; damaged, the pieces that
    hold the damaged pod cannot be, and the dump is read whole, item by
    item: either way the report of one process."""
    d = tmp_path / "fleet"
    shutil.copytree(small_fleet, d)
    files = sorted((d / "pods").glob("*.json"))
    for f in files:
        doc = json.loads(f.read_text())
        if f == files[0]:
            first = doc
        if damaged and f == files[0]:
            doc["items"][len(doc["items"]) // 2]["metadata"]["labels"] = {LONE: "x"}
        _write(f, doc, layout)
    serial = _report(d)
    whole_reads.clear()
    mapper = _Mapper()
    assert _report(d, mapper) == serial
    assert mapper.pieces >= sum(f.stat().st_size // SMALL for f in files)
    assert whole_reads == ([str(files[0])] if damaged else [])
    if damaged:
        assert [i["path"] for i in json.loads(serial)["issues"] if SURROGATE.replace(
            "in the value", "in a key") in i["message"]] == [f"items[{len(first['items']) // 2}].metadata.labels"]


def test_every_mode_gives_the_same_report(fleet: Path, tmp_path: Path) -> None:
    """A one-line dump with a pod of each kind of damage (and an integer too
    long for Python in a field not read): the same bytes in one process,
    ``--workers 2`` and ``--dask local:2``; each damaged pod said once."""
    need("distributed")
    f = fleet / "pods" / "pods.json"
    doc = json.loads(f.read_text())
    bound = [i for i, p in enumerate(doc["items"]) if p["spec"].get("nodeName")]
    for k, (_, damage, _, _) in enumerate(DAMAGE):
        damage(doc["items"][bound[2 * k + 1]])
    big = bound[-2]
    doc["items"][big]["metadata"].setdefault("annotations", {})["zz"] = BIG
    _write(f, doc, "jq -c")
    index = index_pod_file(f)
    assert index is not None and len(index.issues) == len(DAMAGE)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = []
    for mode in ([], ["--workers", "2"], ["--dask", "local:2"]):
        p = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json",
                            *mode], env=env, capture_output=True, timeout=600, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        got.append(p.stdout)
    assert got[1] == got[0] and got[2] == got[0]
    report = json.loads(got[0])
    said = [i for i in report["issues"] if i.get("file") == str(f)]
    assert [i["path"] for i in said if DAMAGED in i["message"]] == [
        f"items[{bound[2 * k + 1]}].{path}" for k, (_, _, path, _) in enumerate(DAMAGE)]
    assert any("a number of more than 4300 digits" in i["message"] for i in said)
    assert report["fleet"]["podsInDumps"] == len(doc["items"]) - len(DAMAGE)
