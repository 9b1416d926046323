"""``-`` is standard input on the command line only. Inside a document
(a scenario's ``node.machineInfoFile`` and ``kubeletConfigFile``, a
``--node`` file's ``machineInfoFile``) it is the file named ``-`` beside
that document, whatever the spelling of the document's name (``s.yaml``,
``./s.yaml``, ``/abs/s.yaml``), as the oracle's Go reader opens it
(tests/oracle/test_dash_inside_a_document_differential.py): one document,
one meaning. Joining ``-`` to the directory ``.`` came back to the bare
``-``, which the reader took for standard input: the machine piped to
the command was read for one spelling only, and ``advise - --node
node.yaml`` read standard input a second time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

#: a machine, piped to the command: never read through a document's ``-``
MACHINE_INFO = (
    '{"num_cores": 2, "num_physical_cores": 2, "num_sockets": 1, "memory_capacity": 4294967296,'
    ' "topology": [{"node_id": 0, "memory": 4294967296, "cores": ['
    '{"core_id": 0, "thread_ids": [0], "socket_id": 0}, {"core_id": 1, "thread_ids": [1], "socket_id": 0}]}]}\n'
)
DASH_MACHINE = "apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {name: nd, machineInfoFile: \"-\"}\nsteps: []\n"
DASH_CONFIG = ("apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {name: nd, synthetic: {sockets: 1, "
               "numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1}}\n"
               "kubeletConfigFile: \"-\"\nsteps: []\n")
SPELLINGS = ["relative", "dot-relative", "absolute"]


def _podnuma(args: list[str], cwd: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    env["NO_COLOR"] = "1"
    return subprocess.run([*cmd, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120, check=False)


def _name(tmp_path: Path, spelling: str) -> str:
    return {"relative": "s.yaml", "dot-relative": "./s.yaml", "absolute": str(tmp_path / "s.yaml")}[spelling]


def _one_error(proc: subprocess.CompletedProcess[str], field: str) -> str:
    assert proc.returncode == 2, proc.stdout
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f": {field}: " in lines[0], lines
    return lines[0]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_machine_info_file_dash_is_the_file_beside_the_scenario(tmp_path: Path, spelling: str) -> None:
    """No file ``-`` beside the scenario: not found, for every spelling
    (the machine on standard input is not read)."""
    (tmp_path / "s.yaml").write_text(DASH_MACHINE)
    proc = _podnuma(["simulate", _name(tmp_path, spelling)], tmp_path, MACHINE_INFO)
    assert "machine info file not found" in _one_error(proc, "node.machineInfoFile")


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_machine_info_file_dash_reads_a_file_named_dash(tmp_path: Path, spelling: str) -> None:
    """With a file ``-`` there, it is the machine read, for every spelling
    (standard input, empty here, is not)."""
    (tmp_path / "s.yaml").write_text(DASH_MACHINE)
    (tmp_path / "-").write_text(MACHINE_INFO)
    proc = _podnuma(["simulate", _name(tmp_path, spelling), "-o", "json"], tmp_path, "")
    assert proc.returncode == 0, proc.stderr
    assert '"node"' in proc.stdout


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_kubelet_config_file_dash_is_the_file_beside_the_scenario(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "s.yaml").write_text(DASH_CONFIG)
    proc = _podnuma(["simulate", _name(tmp_path, spelling)], tmp_path, "cpuManagerPolicy: static\n")
    assert "kubelet configuration file" in _one_error(proc, "kubeletConfigFile")


def test_a_node_file_s_dash_does_not_read_standard_input_again(tmp_path: Path) -> None:
    """``advise - --node node.yaml``: the pod is standard input; the
    node's ``machineInfoFile: "-"`` is the file ``-`` beside node.yaml
    (none: not found), not the rest of standard input."""
    (tmp_path / "node.yaml").write_text('name: nd\nmachineInfoFile: "-"\n')
    pod = (EXAMPLES / "whatif" / "trainer-pod.yaml").read_text()
    proc = _podnuma(["advise", "-", "--node", "node.yaml"], tmp_path, pod)
    line = _one_error(proc, "machineInfoFile")
    assert "not found" in line and "invalid JSON" not in line, line
