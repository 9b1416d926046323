"""``podnuma advise`` of two pods with the same name (variants of one pod
in one file): the restart lines and the ``--as-scenario`` notes say which
pod each is of, and the report keys ``restart[]`` and ``replay[]`` entries
by ``podIndex`` (the index of their pod's ``pods[]`` entry), not by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.text import TextInput
from podnuma.service import whatif

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "examples/whatif/node.yaml"
CONFIG = ROOT / "examples/whatif/kubelet-config.yaml"
SETTING = ["--node", str(NODE), "--kubelet-config", str(CONFIG)]


def _pod(cpus: str) -> dict[str, Any]:
    """A Guaranteed pod with a 1-CPU native sidecar (as
    examples/whatif/trainer-pod.yaml), named x/a whatever its size."""
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "x"},
        "spec": {
            "initContainers": [{"name": "proxy", "restartPolicy": "Always",
                                "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}],
            "containers": [{"name": "app", "resources": {"limits": {"cpu": cpus, "memory": f"{cpus}Gi"}}}],
        },
    }


CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def _file(tmp_path: Path, *docs: dict[str, Any]) -> Path:
    f = tmp_path / "pods-multi.yaml"
    f.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
    return f


def _run(*args: str) -> tuple[str, str]:
    r = CliRunner().invoke(cli, ["advise", *args, *SETTING])
    assert r.exit_code == 0, (r.stdout, r.stderr)
    return r.stdout, r.stderr


def _restart_lines(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if " / scope " in ln]


def test_restart_lines_name_which_pod_they_are_of(tmp_path: Path) -> None:
    f = _file(tmp_path, _pod("2"), _pod("4"))
    out, _ = _run(str(f))
    lines = _restart_lines(out)
    assert len(lines) == 4
    # the 2-CPU pod (3 exclusive CPUs as written) is documents[0]; the
    # 4-CPU one (5) is documents[1]: each line says which
    first, second = f"#   x/a ({f}#0): ", f"#   x/a ({f}#1): "
    assert [ln.split("per-container")[0].split("pod-level")[0] for ln in lines] == [first, first, second, second]
    assert lines[0] == f"{first}per-container / scope pod: kept (1-2,34)"
    assert lines[2] == f"{second}per-container / scope pod: kept (1-3,34-35)"
    # the labels are the words of the pods' headings
    assert f"# {f}#0 x/a" in out and f"# {f}#1 x/a" in out


def test_a_pod_whose_name_is_its_own_is_named_alone(tmp_path: Path) -> None:
    other = _pod("4")
    other["metadata"]["name"] = "b"
    f = _file(tmp_path, _pod("2"), other)
    lines = _restart_lines(_run(str(f))[0])
    assert [ln.split(":")[0] for ln in lines] == ["#   x/a", "#   x/a", "#   x/b", "#   x/b"]


def test_scenario_notes_name_each_pod(tmp_path: Path) -> None:
    f = _file(tmp_path, _pod("2"), _pod("4"))
    replay = tmp_path / "replay.yaml"
    _, err = _run(str(f), "--as-scenario", str(replay))
    notes = [ln for ln in err.splitlines() if ln.startswith(f"note: {replay}: ")]
    assert len(notes) == 2
    assert notes[0].startswith(f"note: {replay}: x/a ({f}#0): as written at steps 0-")
    assert notes[1].startswith(f"note: {replay}: x/a ({f}#1): as written at steps ")


def test_replay_entries_carry_the_pod_index(tmp_path: Path) -> None:
    # a skipped object between them is a pods[] entry of its own: the
    # second pod's entries say podIndex 2
    f = _file(tmp_path, _pod("2"), CONFIG_MAP, _pod("4"))
    out, _ = _run(str(f), "-o", "json", "--as-scenario", str(tmp_path / "r.yaml"))
    doc = json.loads(out)
    assert [p["status"] for p in doc["pods"]] == ["rewritten", "skipped", "rewritten"]
    assert [(r["pod"], r["podIndex"]) for r in doc["replay"]] == [("x/a", 0), ("x/a", 2)]
    assert doc["replay"][1]["beforeCopies"] == doc["pods"][2]["before"]["density"] + 1


def _advices(f: Path) -> whatif.Advices:
    return whatif.advise([TextInput.read(str(f), what="pod")], TextInput.read(str(NODE), what="node"),
                         TextInput.read(str(CONFIG), what="kubelet configuration"))


def _cpus(entry: dict[str, Any]) -> str:
    return str(entry["summary"])


def test_the_document_keys_restart_entries_by_pod_index(tmp_path: Path) -> None:
    f = _file(tmp_path, _pod("2"), CONFIG_MAP, _pod("4"))
    got = _advices(f)
    assert got.restart_pods == [0, 0, 2, 2]
    doc = got.document()
    assert [p["podIndex"] for p in doc["pods"]] == [0, 1, 2]
    assert [p["source"] for p in doc["pods"]] == [f"{f}#0", f"{f}#1", f"{f}#2"]  # (unchanged)
    assert [r["podIndex"] for r in doc["restart"]] == [0, 0, 2, 2]
    assert [r["pod"] for r in doc["restart"]] == ["x/a"] * 4  # the name stays the name
    assert [_cpus(r) for r in doc["restart"] if r["form"] == "perContainer"] == [
        "kept (1-2,34)", "kept (1-3,34-35)"]


def test_json_keys_restart_entries_by_pod_index(tmp_path: Path) -> None:
    f = _file(tmp_path, _pod("2"), _pod("4"))
    doc = json.loads(_run(str(f), "-o", "json")[0])
    assert [p["podIndex"] for p in doc["pods"]] == [0, 1]
    assert [r["podIndex"] for r in doc["restart"]] == [0, 0, 1, 1]
