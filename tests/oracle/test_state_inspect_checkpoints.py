"""``podnuma state inspect`` reads the checkpoints the kubelet's own code
writes: scenarios run through the Go oracle (``kubelet-oracle simulate S
--checkpoint-dir D``; the binary from this suite's ``oracle_binary``), then
inspected: every format read, checksums verified, no inconsistency."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from podnuma.analysis.state import inspect_state
from podnuma.inputs.state import read_state_dir

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = [
    "examples/static-dual-socket.yaml",
    "examples/topology/restricted.yaml",
    "examples/pod-level/pod-scope-2-mixed.yaml",
    "examples/pod-level/init-and-sidecars.yaml",
    "examples/pod-level/container-scope-1-mixed.yaml",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_checkpoints_written_by_the_kubelet_code(oracle_binary: str, scenario: str, tmp_path: Path) -> None:
    res = subprocess.run(
        [oracle_binary, "simulate", str(REPO / scenario), "--checkpoint-dir", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    files = read_state_dir(tmp_path)
    assert (files.cpu_version, files.memory_version) == (4, 3)
    report = inspect_state(files)
    assert report.issues == ()
    assert files.cpu is not None
    assert {p.uid for p in report.pods} >= set(files.cpu.entries)
