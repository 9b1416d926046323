"""A pod holding a lone surrogate (a JSON ``"\\ud800"`` escape: no UTF-8
for it, and the apiserver, which writes UTF-8, serves none) is a damaged
pod: that pod is left out, with a warning naming the file and its field
path, as any damaged pod (docs/fleet.md), and the rest of the dump is
read; the review found the whole dump refused (600 pods -> 450, exit 0).
The same report in one process, ``--workers 2`` and ``--dask local:2``.
A lone surrogate anywhere else (a Node, a NodeResourceTopology, a
configz, a list's own fields) still refuses the file: one error naming it
and the field path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podnuma.fleet import inputs as inputs_mod
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.podscan import index_pod_file

from .conftest import copy_of, generated, need

LONE = "LONE-SURROGATE-HERE"
SAID = ("not Unicode text: a lone surrogate (\\ud800, written as an escape) in the value: the apiserver "
        "serves no such Pod (a damaged dump); the pod is not read")


def _write(path: Path, doc: Any, indent: int | None = 4) -> None:
    """``doc`` as JSON with each string ``LONE`` a ``"\\ud800"`` escape."""
    path.write_text(json.dumps(doc, indent=indent).replace(LONE, "\\ud800"))


def _issues(fleet: Any, f: Path) -> list[tuple[str, str, str]]:
    return [(i.severity, i.path, i.message) for i in fleet.issues if i.file == str(f)]


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated(tmp_path_factory, "sur", nodes=6, pods_per_node=8, seed=5, nodes_per_pods_file=3)


@pytest.fixture
def fleet(fleet_dir: Path, tmp_path: Path) -> Path:
    return copy_of(fleet_dir, tmp_path)


def _pods_file(fleet: Path) -> Path:
    return sorted((fleet / "pods").iterdir())[1]


@pytest.mark.parametrize("general", [False, True], ids=["as read", "general reader"])
def test_one_pod_with_a_lone_surrogate_is_left_out_not_the_dump(
    fleet: Path, monkeypatch: pytest.MonkeyPatch, general: bool,
) -> None:
    before = load_fleet([fleet])
    f = _pods_file(fleet)
    doc = json.loads(f.read_text())
    doc["items"][3]["metadata"].setdefault("annotations", {})["x"] = LONE
    doc["items"][5]["metadata"]["labels"] = {LONE: "v"}
    _write(f, doc)
    # the whole dump's decoding refuses it; its items are then indexed one
    # by one, the two damaged pods left out in the general reader's words
    index = index_pod_file(f)
    assert index is not None
    assert [(i.severity, i.path, i.message) for i in index.issues] == [
        ("warning", "items[3].metadata.annotations.x", SAID),
        ("warning", "items[5].metadata.labels", SAID.replace("in the value", "in a key")),
    ]
    assert index.pods == len(doc["items"]) - 2
    if general:
        monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    got = load_fleet([fleet])
    assert _issues(got, f) == [
        ("warning", "items[3].metadata.annotations.x", SAID),
        ("warning", "items[5].metadata.labels", SAID.replace("in the value", "in a key")),
    ]
    assert got.pods_total == before.pods_total - 2
    assert not [i for i in got.issues if i.severity == "error" and i.file == str(f)]


def test_every_mode_gives_the_same_report(fleet: Path, tmp_path: Path) -> None:
    need("distributed")
    f = _pods_file(fleet)
    doc = json.loads(f.read_text())
    total = sum(len(json.loads(p.read_text())["items"]) for p in (fleet / "pods").iterdir())
    doc["items"][2]["metadata"].setdefault("annotations", {})["x"] = LONE
    _write(f, doc)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = []
    for mode in ([], ["--workers", "2"], ["--dask", "local:2"]):
        p = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json",
                            *mode], env=env, capture_output=True, timeout=600, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        got.append((p.stdout, p.stderr))
    assert got[1] == got[0] and got[2] == got[0]
    report = json.loads(got[0][0])
    assert report["fleet"]["podsInDumps"] == total - 1
    assert report["fleet"]["podsReplayed"] > 0
    said = [i for i in report["issues"] if i.get("file") == str(f)]
    assert [(i["severity"], i["path"], i["message"]) for i in said] == [
        ("warning", "items[2].metadata.annotations.x", SAID)]
    assert got[0][1].decode().count("lone surrogate") == 1


def test_a_pair_is_one_character_not_damage(fleet: Path) -> None:
    """``"\\ud83d\\ude00"``: a character past U+FFFF, read as before."""
    before = load_fleet([fleet])
    f = _pods_file(fleet)
    doc = json.loads(f.read_text())
    doc["items"][1]["metadata"].setdefault("annotations", {})["x"] = "\U0001f600"
    f.write_text(json.dumps(doc, indent=4, ensure_ascii=True))
    assert "\\ud83d\\ude00" in f.read_text()
    got = load_fleet([fleet])
    assert _issues(got, f) == [] and got.pods_total == before.pods_total


def test_a_dump_with_a_duplicate_key_and_a_truncated_dump(tmp_path: Path) -> None:
    """The general reader's other ways in: a dump with a repeated key (kept
    as Go keeps it), a dump cut short (read up to its last complete item):
    the pod with the lone surrogate left out, the others read."""
    pods = [{"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "a"}, "spec": {}} for i in range(4)]
    pods[1]["metadata"]["annotations"] = {"x": LONE}
    f = tmp_path / "pods.json"
    _write(f, {"kind": "List", "items": pods})
    text = f.read_text()
    f.write_text(text.replace('"kind": "List"', '"kind": "List", "kind": "List"', 1))
    got = load_fleet([f])
    assert _issues(got, f) == [("warning", "items[1].metadata.annotations.x", SAID)]
    assert got.pods_total == 3
    f.write_text(text[: text.rindex('"p3"')])
    got = load_fleet([f])
    assert [(s, p) for s, p, _ in _issues(got, f)] == [
        ("warning", ""), ("warning", "items[1].metadata.annotations.x")]
    assert "truncated" in _issues(got, f)[0][2]
    assert got.pods_total == 2


def test_a_pod_that_is_a_document_itself(tmp_path: Path) -> None:
    f = tmp_path / "pod.json"
    _write(f, {"kind": "Pod", "metadata": {"name": "p", "annotations": {"x": LONE}}, "spec": {"nodeName": "n"}})
    got = load_fleet([f])
    assert _issues(got, f) == [("warning", "metadata.annotations.x", SAID)]
    assert got.pods_total == 0


@pytest.mark.parametrize(("what", "path"), [
    ("node", "items[0].metadata.labels"),
    ("nrt", "items[0].metadata.annotations.x"),
    ("list", "metadata.x"),
    ("configz", "kubeletconfig.x"),
])
def test_a_lone_surrogate_elsewhere_still_refuses_the_file(fleet: Path, what: str, path: str) -> None:
    """One error naming the file and the field path, as before; the file's
    other objects not read."""
    if what == "node":
        f = fleet / "nodes.json"
        doc = json.loads(f.read_text())
        doc["items"][0]["metadata"]["labels"] = {LONE: "v", "a": "b"}
        message = "not Unicode text: a lone surrogate (\\ud800, written as an escape) in a key"
    else:
        if what == "nrt":
            f = fleet / "noderesourcetopologies.json"
            doc = json.loads(f.read_text())
            doc["items"][0]["metadata"].setdefault("annotations", {})["x"] = LONE
        elif what == "list":
            f = _pods_file(fleet)
            doc = json.loads(f.read_text())
            doc["metadata"] = {"x": LONE}
        else:
            f = sorted((fleet / "configz").iterdir())[0]
            doc = json.loads(f.read_text())
            doc["kubeletconfig"]["x"] = LONE
        message = "not Unicode text: a lone surrogate (\\ud800, written as an escape) in the value"
    _write(f, doc)
    got = load_fleet([fleet])
    assert _issues(got, f) == [("error", "", f"{path}: {message}")]


def test_nothing_else_is_let_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A text refused for another reason as well (``NaN``) is refused as
    before: the lone surrogate is not a way past the other checks. Nesting
    past the limit inside a field the fleet does not read is skipped with
    the field, in a damaged dump as in a clean one, on one line as one item
    a line."""
    f = tmp_path / "pods.json"
    pods: list[Any] = [{"kind": "Pod", "metadata": {"name": "p", "annotations": {"x": LONE}}, "spec": {}},
                       {"kind": "Pod", "metadata": {"name": "q"}, "spec": {"x": "NAN-HERE"}}]
    _write(f, {"kind": "List", "items": pods})
    f.write_text(f.read_text().replace('"NAN-HERE"', "NaN"))
    got = load_fleet([f])
    assert [(s, m) for s, _, m in _issues(got, f)] == [("error", "invalid JSON: NaN is not a JSON value")]
    deep: Any = "v"
    for _ in range(300):
        deep = [deep]
    pods[1]["spec"] = {"x": deep}
    # nested past the limit inside a field the fleet does not read: skipped,
    # as in a clean dump (docs/limits.md), on one line as one item a line
    # (test_compact_damaged_dumps); the lone surrogate still said
    said = []
    for indent in (None, 4):
        _write(f, {"kind": "List", "items": pods}, indent=indent)
        said.append(_issues(load_fleet([f]), f))
    assert said[0] == said[1] == [("warning", "items[0].metadata.annotations.x", SAID)]
    monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)  # the general reader: the whole file
    got = load_fleet([f])
    assert [s for s, _, _ in _issues(got, f)] == ["error"]
    assert "nested more than" in _issues(got, f)[0][2]
