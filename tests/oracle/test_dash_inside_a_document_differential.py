"""A scenario's ``node.machineInfoFile: "-"`` means the same to podnuma and
to the oracle's Go reader, whatever the spelling of the scenario's name:
the file named ``-`` beside the scenario (Go's ``os.ReadFile`` opens ``-``
as a file; standard input is the command line's ``-`` only). Without the
file both refuse the scenario at that field; with it both read the same
machine and print the same node."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_dash_inside_a_document import DASH_MACHINE, MACHINE_INFO


def _podnuma(args: list[str], cwd: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "podnuma"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    return subprocess.run([*cmd, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120, check=False)


@pytest.mark.parametrize("with_file", [False, True], ids=["no-file-dash", "file-dash"])
@pytest.mark.parametrize("spelling", ["relative", "dot-relative", "absolute"])
def test_podnuma_and_the_oracle_read_the_same_dash(
        oracle_binary: str, tmp_path: Path, spelling: str, with_file: bool) -> None:
    (tmp_path / "s.yaml").write_text(DASH_MACHINE)
    if with_file:
        (tmp_path / "-").write_text(MACHINE_INFO)
    name = {"relative": "s.yaml", "dot-relative": "./s.yaml", "absolute": str(tmp_path / "s.yaml")}[spelling]
    # (the machine piped to both: a reader taking "-" for standard input would succeed without the file)
    ours = _podnuma(["simulate", name, "-o", "json"], tmp_path, MACHINE_INFO)
    theirs = subprocess.run([oracle_binary, "simulate", name, "-o", "json"], input=MACHINE_INFO,
                            capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    assert (ours.returncode == 0) == (theirs.returncode == 0) == with_file, (ours.stderr, theirs.stderr)
    if with_file:
        assert json.loads(ours.stdout)["node"] == json.loads(theirs.stdout)["node"]
    else:
        assert "node.machineInfoFile" in ours.stderr and "node.machineInfoFile" in theirs.stderr
