from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, encode_cpu_checkpoint
from podnuma.machine.cpuset import CPUSet

from ..scenario.helpers import base, write


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def valid_cpu_checkpoint() -> bytes:
    """A cpu_manager_state the base scenario's node would accept: pod uid-a
    holds CPUs 1 and 9."""
    data = CPUCheckpointData(
        "static", CPUSet.parse("0,2-8,10-15"), {"uid-a": {"app": CPUSet.parse("1,9")}}
    )
    return encode_cpu_checkpoint(data)


@pytest.fixture
def scenario_path(tmp_path: Path) -> Path:
    return write(tmp_path / "scenario.yaml", base())
