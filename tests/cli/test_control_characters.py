"""Control characters from the input never reach the terminal, and are
never dropped either: a file name or a value holding an escape sequence is
written escaped (``\\x1b``) in error lines, notes and the headers of the
views, and a node name or device id holding one is refused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "static-dual-socket.yaml"
PODS = ROOT / "examples" / "whatif" / "trainer-pod.yaml"
ESC_NAME = "e\x1b[31mred.yaml"


def _run(*args: str, force_colour: bool = False) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NO_COLOR", "FORCE_COLOR")}
    if force_colour:
        env["FORCE_COLOR"] = "1"
    return subprocess.run([sys.executable, "-c", "from podnuma.cli import run; run()", *args],
                          capture_output=True, env=env, timeout=300, check=False)


@pytest.mark.parametrize("command", [["simulate"], ["simulate", "-o", "wide"], ["explain", "--step", "1", "--no-picture"],
                                     ["advise"], ["restart"], ["compare"], ["topology"]])
def test_a_file_name_with_an_escape_sequence_is_shown_escaped(tmp_path: Path, command: list[str]) -> None:
    scenario = tmp_path / ESC_NAME
    shutil.copy(PODS if command[0] == "compare" else EXAMPLE, scenario)
    proc = _run(*command, str(scenario))
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b" not in proc.stdout + proc.stderr
    if command[0] in ("simulate", "explain", "restart"):  # the views whose header names the file
        assert b"e\\x1b[31mred.yaml" in proc.stdout


def test_escaped_under_colour_too(tmp_path: Path) -> None:
    scenario = tmp_path / ESC_NAME
    shutil.copy(EXAMPLE, scenario)
    proc = _run("simulate", str(scenario), force_colour=True)
    assert proc.returncode == 0, proc.stderr
    assert b"\x1b[" in proc.stdout  # coloured
    assert b"e\\x1b[31mred.yaml" in proc.stdout and b"e\x1b[31mred" not in proc.stdout


@pytest.mark.parametrize("command", [["simulate"], ["simulate", "-o", "json"], ["explain"], ["compare"]])
def test_an_error_naming_such_a_file_escapes_it(tmp_path: Path, command: list[str]) -> None:
    scenario = tmp_path / ESC_NAME
    scenario.write_text("")
    proc = _run(*command, str(scenario))
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert "\x1b" not in err and "e\\x1b[31mred.yaml" in err and len(err.splitlines()) == 1


def test_a_quoted_value_is_escaped() -> None:
    proc = _run("simulate", str(EXAMPLE), "-o", "\x1b[31m")
    assert proc.returncode == 2
    assert b"\x1b" not in proc.stderr and b"'\\x1b[31m'" in proc.stderr


def _scenario(tmp_path: Path, node: dict[str, object], pod_name: str = "db") -> Path:
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario",
           "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 2,
                                  "threadsPerCore": 1}, **node},
           "steps": [{"addPod": {"metadata": {"name": pod_name, "namespace": "a"},
                                 "spec": {"containers": [{"name": "c"}]}}}]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize(("node", "field"), [
    ({"name": "n\x1b]0;pwned\x07x"}, "node.name"),
    ({"devices": {"example.com/gpu": [{"id": "g\x9b0", "numaNodes": [0]}]}}, "node.devices.example.com/gpu[0].id"),
    ({"devices": {"example.com/gpu": [{"id": "g\x1b[31m0", "numaNodes": [0]}]}}, "node.devices.example.com/gpu[0].id"),
    ({"devices": {"example.com/gpu": [{"id": "a\u2028b", "numaNodes": [0]}]}}, "node.devices.example.com/gpu[0].id"),
])
def test_control_characters_in_a_node_name_or_device_id_are_refused(tmp_path: Path, node: dict[str, object],
                                                                     field: str) -> None:
    proc = _run("simulate", str(_scenario(tmp_path, node)))
    assert proc.returncode == 2 and proc.stdout == b""
    err = proc.stderr.decode()
    assert f"{field}: must not contain control characters" in err
    assert "\x1b" not in err and "\x9b" not in err


def test_a_pod_name_with_an_escape_sequence_is_quoted_escaped(tmp_path: Path) -> None:
    proc = _run("simulate", str(_scenario(tmp_path, {}, pod_name="Bad_Name\x1b[31mRED")))
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "\x1b" not in err and 'Invalid value: "Bad_Name\\x1b[31mRED"' in err
