"""A lone surrogate written as an escape in an input (``"\\ud800"``):
every command exits 2 with one line naming the file and the field, never
1 (an internal error), never a traceback; ``topology`` encodes its
picture inside its guard."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..scenario.helpers import base

VALUE = "not Unicode text: a lone surrogate (\\ud800, written as an escape) in the value"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], cwd=cwd,
                          capture_output=True, text=True, errors="backslashreplace")


def _refused(proc: subprocess.CompletedProcess[str], want: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"error: {want}"], proc.stderr
    assert proc.stdout == ""


@pytest.fixture
def scenarios(tmp_path: Path) -> Path:
    doc = base()
    doc["node"]["name"] = "NODE"
    text = json.dumps(doc)
    (tmp_path / "s.json").write_text(text.replace('"NODE"', '"\\ud800"'))
    import yaml

    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc).replace("name: NODE", 'name: "\\ud800"'))
    return tmp_path


@pytest.mark.parametrize("command", [["simulate"], ["simulate", "-o", "json"], ["explain"], ["restart"],
                                     ["topology"], ["topology", "-o", "svg"], ["topology", "-o", "json"]])
@pytest.mark.parametrize("file", ["s.yaml", "s.json"])
def test_every_scenario_command_exits_2(scenarios: Path, command: list[str], file: str) -> None:
    proc = _run(*command, file, cwd=scenarios)
    where = "" if file.endswith(".json") else f" (line {_line(scenarios / file)}, column 9)"
    _refused(proc, f"{file}: node.name: {VALUE}{where}")


def _line(path: Path) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if "\\ud800" in line)


def test_a_streamed_json_scenario_refuses_a_late_step(tmp_path: Path) -> None:
    doc = base()
    step = doc["steps"][0]
    doc["steps"] = []
    for i in range(3000):
        s = json.loads(json.dumps(step))
        s["addPod"]["metadata"]["name"] = f"p{i}"
        doc["steps"].append(s)
    doc["steps"][2500]["addPod"]["metadata"]["annotations"] = {"note": "\ud800"}
    (tmp_path / "big.json").write_text(json.dumps(doc))
    for out in ("json", "table"):
        _refused(_run("simulate", "big.json", "-o", out, cwd=tmp_path),
                 f"big.json: steps[2500].addPod.metadata.annotations.note: {VALUE}")


@pytest.mark.parametrize("command", ["advise", "compare"])
def test_a_pod_annotation(tmp_path: Path, command: str) -> None:
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: tr\n  annotations: {note: \"\\ud800\"}\n"
        "spec:\n  containers:\n  - {name: c, resources: {limits: {cpu: \"4\", memory: 4Gi}}}\n")
    _refused(_run(command, "pod.yaml", "-o", "json", cwd=tmp_path),
             f"pod.yaml: metadata.annotations.note: {VALUE} (line 5, column 23)")


def test_a_kubelet_config(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: tr}\n"
        "spec:\n  containers:\n  - {name: c, resources: {limits: {cpu: \"4\", memory: 4Gi}}}\n")
    (tmp_path / "kc.json").write_text(
        '{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", '
        '"cpuManagerPolicy": "\\ud800"}')
    _refused(_run("compare", "pod.yaml", "--kubelet-config", "kc.json", "-o", "json", cwd=tmp_path),
             f"kc.json: cpuManagerPolicy: {VALUE}")
