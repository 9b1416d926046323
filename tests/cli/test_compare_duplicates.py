"""``podnuma compare`` of two pods with the same name (variants of one pod
in one file): each pod's table is followed by its own restart lines, and
``-o json`` tells them apart (``podIndex`` and ``source`` on ``pods[]``
and on ``restart[]``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.text import TextInput
from podnuma.service import whatif


def _pod(cpus: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "x"},
        "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpus, "memory": "1Gi"}}}]},
    }


def _multi(tmp_path: Path) -> Path:
    f = tmp_path / "pods-multi.yaml"
    f.write_text(yaml.safe_dump_all([_pod("2"), _pod("4")], sort_keys=False))
    return f


def _run(*args: str) -> str:
    r = CliRunner().invoke(cli, ["compare", *args], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    return r.stdout


def test_each_table_is_followed_by_its_own_restart_lines(tmp_path: Path) -> None:
    out = _run(str(_multi(tmp_path)))
    sections = out.split("\nPod x/a")
    assert len(sections) == 2
    two, four = sections
    risks = [[ln for ln in s.splitlines() if " / scope " in ln] for s in sections]
    assert [len(r) for r in risks] == [4, 4]
    assert "kept (1,17)" in two and "1-2,17-18" not in two.split("kubelet restart")[1]
    assert "kept (1-2,17-18)" in four and "kept (1,17)" not in four
    # the headings say which of the two each is
    assert "pods-multi.yaml documents[0]" in two.splitlines()[0]
    assert "pods-multi.yaml documents[1]" in four.splitlines()[0]


def test_json_keys_restart_entries_by_pod_index_and_source(tmp_path: Path) -> None:
    f = _multi(tmp_path)
    doc = json.loads(_run(str(f), "-o", "json"))
    pods, restart = doc["pods"], doc["restart"]
    assert [p["pod"] for p in pods] == ["x/a", "x/a"]
    assert [p["podIndex"] for p in pods] == [0, 1]
    assert [p["source"] for p in pods] == [
        {"file": str(f), "document": 0, "item": None},
        {"file": str(f), "document": 1, "item": None},
    ]
    assert len(restart) == 8
    assert [r["podIndex"] for r in restart] == [0] * 4 + [1] * 4
    for r in restart:
        assert r["pod"] == "x/a"  # (kept)
        assert r["source"] == pods[r["podIndex"]]["source"]
    kept = {r["podIndex"]: r["summary"] for r in restart if r["form"] == "perContainer" and r["scope"] == "pod"}
    assert kept == {0: "kept (1,17)", 1: "kept (1-2,17-18)"}


def test_items_of_a_list_and_skipped_objects(tmp_path: Path) -> None:
    f = tmp_path / "list.yaml"
    f.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
        {"apiVersion": "v1", "kind": "List", "items": [_pod("2"), _pod("4")]},
    ], sort_keys=False))
    r = CliRunner().invoke(cli, ["compare", str(f), "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # podIndex: the place in pods[] (a skipped object takes none)
    assert [(p["podIndex"], p["source"]["document"], p["source"]["item"]) for p in doc["pods"]] == [
        (0, 1, 0), (1, 1, 1)]
    assert {r["podIndex"] for r in doc["restart"]} == {0, 1}
    text = CliRunner().invoke(cli, ["compare", str(f)], env={"COLUMNS": "120"}).stdout
    assert "list.yaml documents[1].items[0]" in text and "list.yaml documents[1].items[1]" in text


def test_a_pod_alone_keeps_its_heading(tmp_path: Path) -> None:
    f = tmp_path / "one.yaml"
    f.write_text(yaml.safe_dump_all([_pod("2"), {**_pod("4"), "metadata": {"name": "b", "namespace": "x"}}]))
    out = _run(str(f))
    heads = [ln for ln in out.splitlines() if ln.startswith("Pod ")]
    assert heads == [
        "Pod x/a  (as written: per-container; derived: pod-level)",
        "Pod x/b  (as written: per-container; derived: pod-level)",
    ]
    doc = json.loads(_run(str(f), "-o", "json"))
    assert [r["podIndex"] for r in doc["restart"]] == [0] * 4 + [1] * 4


def test_the_web_door_answers_the_same_keys(tmp_path: Path) -> None:
    text = _multi(tmp_path).read_text()
    web = whatif.whatif_request({"pod": text, "podName": "pods.yaml"}, False)
    cli_doc = whatif.compare(TextInput(text, "pods.yaml")).document()
    assert web == cli_doc
    assert [r["podIndex"] for r in web["restart"]] == [0] * 4 + [1] * 4
    assert web["pods"][1]["source"] == {"file": "pods.yaml", "document": 1, "item": None}
