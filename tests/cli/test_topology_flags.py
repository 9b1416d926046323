"""``podnuma topology``'s flags: ``--output-file``'s suffix against ``-o``,
the text picture's width (the terminal's, ``COLUMNS``) and its colours
(decided as for ``simulate``: none under ``TERM=dumb``)."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli import cli

from ..scenario.helpers import write

ROOT = Path(__file__).resolve().parents[2]
RESTRICTED = ROOT / "examples" / "topology" / "restricted.yaml"
LONG = "pod-with-a-rather-long-descriptive-name-for-width-testing"


def _long_names(tmp_path: Path) -> Path:
    doc: dict[str, Any] = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {"name": "wide-node", "synthetic": {
            "sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 16,
            "threadsPerCore": 2, "memoryPerNumaNode": "64Gi",
        }},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
        "steps": [{"addPod": {
            "metadata": {"name": f"{LONG}-{i}", "namespace": "ns"},
            "spec": {"containers": [{"name": "a-long-container-name-too",
                                     "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
        }} for i in range(3)],
    }
    return write(tmp_path / "long.yaml", doc)


# -- --output-file's suffix and -o ----------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "name", "words", "good"),
    [
        # -o, a file refused, the words of the error, and what is written
        # instead: (-o, a file that agrees, how its content starts)
        ("svg", "pic.png", "'.png' is for png, not -o svg", (None, "pic.png", b"\x89PNG")),
        (None, "pic.jpg", "unknown suffix '.jpg'", ("png", "picture", b"\x89PNG")),
        ("png", "pic.svg", "'.svg' is for svg, not -o png", ("svg", "pic.SVG", b"<?xml")),
        ("json", "pic.yaml", "'.yaml' is for yaml, not -o json", ("yaml", "pic.yml", b"node: ")),
        ("table", "pic.json", "'.json' is for json, not -o table", ("json", "pic.json", b"{")),
        ("yaml", "pic.txt", "'.txt' is for text, not -o yaml", ("text", "pic.TXT", b"Machine ")),
        ("svg", "pic.jpg", "unknown suffix '.jpg'", ("svg", "picture", b"<?xml")),
        ("text", "pic.html", "unknown suffix '.html'", (None, "picture", b"Machine ")),
    ],
)
def test_a_suffix_against_the_format_is_a_usage_error(
    fmt: str | None, name: str, words: str, good: tuple[str | None, str, bytes], tmp_path: Path
) -> None:
    def invoke(fmt: str | None, out: Path) -> Any:
        args = ["topology", str(RESTRICTED), "--output-file", str(out)]
        return CliRunner().invoke(cli, args if fmt is None else [*args, "-o", fmt])

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    res = invoke(fmt, out_dir / name)
    assert res.exit_code == 2, res.output
    assert words in res.output
    assert res.output.startswith("error: ") and res.output.count("\n") == 1, res.output
    assert list(out_dir.iterdir()) == []  # nothing written
    good_fmt, good_name, head = good
    res = invoke(good_fmt, out_dir / good_name)
    assert res.exit_code == 0, res.output
    assert (out_dir / good_name).read_bytes().startswith(head)


def test_json_keys_are_unique_with_many_owners(tmp_path: Path) -> None:
    doc: dict[str, Any] = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {"name": "big-node", "synthetic": {
            "sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 32,
            "threadsPerCore": 2, "memoryPerNumaNode": "512Gi",
        }},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "maxPods": 500},
        "steps": [{"addPod": {
            "metadata": {"name": f"p{i}", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "100Mi"}}}]},
        }} for i in range(400)],
    }
    scenario = write(tmp_path / "many.yaml", doc)
    res = CliRunner().invoke(cli, ["topology", str(scenario), "-o", "json"])
    assert res.exit_code == 0, res.output
    keys = [o["key"] for o in json.loads(res.stdout)["owners"]]
    assert len(keys) > 120
    assert len(keys) == len(set(keys))
    assert not any(ch.isdigit() for k in keys for ch in k)


# -- the width ------------------------------------------------------------------


@pytest.mark.parametrize("columns", [50, 72, 100])
def test_text_takes_its_width_from_columns(columns: int, tmp_path: Path) -> None:
    scenario = _long_names(tmp_path)
    res = CliRunner().invoke(cli, ["topology", str(scenario), "--step", "0"], env={"COLUMNS": str(columns)})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= columns, res.stdout
    assert LONG in res.stdout.replace("\n", "").replace(" ", "") or columns < 70


def test_text_is_wider_with_wide_columns(tmp_path: Path) -> None:
    scenario = _long_names(tmp_path)
    plain = CliRunner().invoke(cli, ["topology", str(scenario), "--step", "0"])
    wide = CliRunner().invoke(cli, ["topology", str(scenario), "--step", "0"], env={"COLUMNS": "220"})
    assert max(len(line) for line in plain.stdout.splitlines()) <= 100  # the default
    assert len(wide.stdout.splitlines()) < len(plain.stdout.splitlines())
    assert 100 < max(len(line) for line in wide.stdout.splitlines()) <= 220


# -- colour, as the other commands decide it --------------------------------------


def _on_a_terminal(args: list[str], term: str, extra: dict[str, str] | None = None) -> bytes:
    """What ``podnuma ARGS`` writes on a pseudo-terminal with ``TERM``."""
    import pty

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    env.update({"TERM": term, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100", **(extra or {})})
    proc = subprocess.Popen([sys.executable, "-m", "podnuma.cli", *args], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        proc.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else b""
    return out


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_no_colour_on_a_dumb_terminal() -> None:
    args = ["topology", str(RESTRICTED)]
    coloured = _on_a_terminal(args, "xterm-256color")
    assert b"\x1b[" in coloured  # a terminal with colours: coloured
    dumb = _on_a_terminal(args, "dumb")
    assert b"\x1b" not in dumb
    assert b"Machine snc-node" in dumb
    assert _on_a_terminal(["simulate", str(RESTRICTED)], "dumb").count(b"\x1b") == 0  # (as simulate)
    assert b"\x1b" not in _on_a_terminal(args, "xterm-256color", {"NO_COLOR": "1"})


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_a_terminal_gives_the_width(term: str) -> None:
    out = _on_a_terminal(["topology", str(RESTRICTED)], term, {"COLUMNS": "40"})
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.decode()).replace("\r\n", "\n")
    assert max(len(line) for line in text.splitlines()) <= 40, text


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("args", [
    ["restart", str(ROOT / "examples" / "pod-level" / "restart.yaml")],
    ["cgroups", "plan", str(ROOT / "examples" / "pod-level" / "restart.yaml"), "--driver", "systemd",
     "--cgroup-version", "2"],
])
def test_the_plain_text_views_have_no_colour_on_a_dumb_terminal(args: list[str]) -> None:
    """``restart`` and ``cgroups plan`` (laid out as text, then painted)
    colour as ``simulate`` does: on a terminal with colours, not under
    ``TERM=dumb``, even with ``FORCE_COLOR``."""
    assert b"\x1b[" in _on_a_terminal(args, "xterm-256color")
    for extra in ({}, {"FORCE_COLOR": "1"}):
        dumb = _on_a_terminal(args, "dumb", extra)
        assert b"\x1b" not in dumb, dumb[:200]
        assert dumb.replace(b"\r\n", b"\n").decode().strip()  # (the view itself is there)
