"""The order in which the kubelet meets start-up errors: configuration
validation, then the managers' NewManager (topology, CPU, memory), then
their Start (CPU, memory), then the node allocatable check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli import cli

from .helpers import base, write


def _refusal(tmp_path: Path, config: dict[str, Any]) -> str:
    doc = base()
    doc["kubeletConfig"].update(config)
    result = CliRunner().invoke(cli, ["simulate", str(write(tmp_path / "s.yaml", doc))])
    assert result.exit_code == 2, result.output
    prefix = "error: kubelet would not start: "
    assert result.stderr.startswith(prefix), result.stderr
    return result.stderr[len(prefix):]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"cpuManagerPolicy": "Static"}, 'unknown policy: "Static"'),
        ({"memoryManagerPolicy": "static"}, 'unknown policy: "static"'),
        ({"memoryManagerPolicy": "none"}, 'unknown policy: "none"'),
        ({"memoryManagerPolicy": "BestEffort"}, 'policy "BestEffort" is not available for platform "linux"'),
        # the CPU manager's NewManager comes before the memory manager's
        ({"reservedSystemCPUs": "", "memoryManagerPolicy": "static"},
         "[cpumanager] unable to determine reserved CPU resources for static policy"),
        ({"cpuManagerPolicy": "dynamic", "memoryManagerPolicy": "BestEffort"}, 'unknown policy: "dynamic"'),
    ],
)
def test_first_refusal_wins(tmp_path: Path, config: dict[str, Any], message: str) -> None:
    assert _refusal(tmp_path, config).startswith(message)
