"""Characters past U+FFFF (an emoji) in inputs: written raw, as a YAML
``\\U0001F600`` escape, or in a JSON file as the pair of escapes JSON writes
for them (``"\\ud83d\\ude00"``: Python's ``json.dumps`` by default). Every
command takes them, including the documents commands hand on to each
other (advise's replay, compare's restart rows, which went through
``json.dumps`` and back as YAML, and were refused). YAML itself takes no
surrogate escape (libyaml and Go's YAML refuse one): a pair of them in
YAML text is refused in one line saying how to write it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from podnuma.inputs.documents import parse_documents

ROOT = Path(__file__).resolve().parents[2]
EMOJI = "\U0001F600"


def _run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, errors="backslashreplace")


def _scenario() -> dict:  # type: ignore[type-arg]
    doc = yaml.safe_load((ROOT / "examples" / "static-dual-socket.yaml").read_text())
    pod = doc["steps"][0]["addPod"]
    pod["metadata"]["annotations"] = {"note": EMOJI, f"k{EMOJI}": "v"}
    return doc


def test_yaml_takes_the_character_and_its_escape_not_a_pair_of_escapes() -> None:
    (doc,) = parse_documents(json.dumps({"a": EMOJI, EMOJI: "b"}, ensure_ascii=False), name="x")
    assert doc.data == {"a": EMOJI, EMOJI: "b"}
    (doc,) = parse_documents('a: "\\U0001F600"', name="x.yaml")
    assert doc.data == {"a": EMOJI}
    with pytest.raises(Exception, match=r"a surrogate pair written as two escapes \(\\ud83d\\ude00\)"):
        parse_documents(json.dumps({"a": EMOJI}), name="x")


@pytest.mark.parametrize("half", ["\\ude00\\ud83d", "\\ud83d", "x\\ude00"])
def test_a_half_pair_is_a_lone_surrogate(half: str) -> None:
    with pytest.raises(Exception, match="lone surrogate"):
        parse_documents(f'a: "{half}"', name="x.yaml")


@pytest.mark.parametrize("spelling", ["raw", "yaml-escape", "json-pair"])
def test_simulate_and_restart_take_an_emoji_annotation(tmp_path: Path, spelling: str) -> None:
    doc = _scenario()
    if spelling == "json-pair":
        name, text = "s.json", json.dumps(doc)  # (ensure_ascii: the pair of escapes)
        assert "\\ud83d\\ude00" in text
    elif spelling == "raw":
        name, text = "s.yaml", yaml.safe_dump(doc, allow_unicode=True)
        assert EMOJI in text
    else:
        name, text = "s.yaml", yaml.safe_dump(doc)
        assert "\\U0001F600" in text
    (tmp_path / name).write_text(text, encoding="utf-8")
    proc = _run("restart", "-o", "json", name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = _run("simulate", "-o", "json", name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["steps"][0]["admitted"] is True


def test_advise_and_compare_take_a_pod_with_an_emoji(tmp_path: Path) -> None:
    """The advice's replay, compare's restart rows and the scenarios they
    write went through ``json.dumps`` and back: a pair of escapes each."""
    text = (ROOT / "examples" / "whatif" / "trainer-mesh.yaml").read_text()
    pod = yaml.safe_load(text)
    pod["metadata"]["annotations"]["team"] = f"ml {EMOJI}"
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod, allow_unicode=True), encoding="utf-8")
    proc = _run("advise", "pod.yaml", "-o", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = _run("advise", "pod.yaml", "--as-scenario", "advice.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = _run("simulate", "advice.yaml", "-o", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = _run("compare", "pod.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    restart = proc.stdout[proc.stdout.index("kubelet restart"):]
    assert "not a valid pod" not in restart and restart.count(": kept (") == 3, proc.stdout
