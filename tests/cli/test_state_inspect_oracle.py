"""``podnuma state inspect`` reads the checkpoints the kubelet's own code
writes: scenarios run through the Go oracle (``oracle/build``,
``kubelet-oracle simulate S --checkpoint-dir D``), then inspected.

Skips when the oracle is not in this tree; skips without Go, and fails
instead under CI=true.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from podnuma.analysis.state import inspect_state
from podnuma.inputs.state import read_state_dir

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "oracle" / "build"
SCENARIOS = [
    "examples/static-dual-socket.yaml",
    "examples/topology/restricted.yaml",
    "examples/pod-level/pod-scope-2-mixed.yaml",
    "examples/pod-level/init-and-sidecars.yaml",
    "examples/pod-level/container-scope-1-mixed.yaml",
]


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def oracle() -> Path:
    if not BUILD.is_file():
        pytest.skip("the Go oracle (oracle/build) is not in this tree")
    if shutil.which("go") is None and not Path("/usr/local/go/bin/go").is_file():
        _skip_or_fail("Go is not installed: the oracle cannot be built")
    res = subprocess.run([str(BUILD)], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        pytest.fail(f"oracle/build failed: {res.stderr.strip()[-2000:]}")
    return Path(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_checkpoints_written_by_the_kubelet_code(oracle: Path, scenario: str, tmp_path: Path) -> None:
    res = subprocess.run(
        [str(oracle), "simulate", str(REPO / scenario), "--checkpoint-dir", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    files = read_state_dir(tmp_path)
    assert (files.cpu_version, files.memory_version) == (4, 3)
    report = inspect_state(files)
    assert report.issues == ()
    assert files.cpu is not None
    assert {p.uid for p in report.pods} >= set(files.cpu.entries)
