"""The largest CPU id podnuma reads in a CPU manager checkpoint (docs/limits.md).

podnuma's CPU sets are dense bitmasks: a list naming a CPU past
``MAX_CPU_ID`` (2^20-1; Linux numbers at most 8,192 CPUs) is refused as it
is read. The kubelet's ``cpuset.Parse`` keeps a Go map and takes any id;
with the ``static`` policy it then refuses to start at its state check, so
both refuse; with ``none`` it starts. These are the claims docs/limits.md
makes, checked against the kubelet through the Go oracle.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from podnuma.cm.checkpoint import CheckpointError
from podnuma.cm.cpumanager.checkpoint import decode_cpu_checkpoint
from podnuma.machine.cpuset import MAX_CPU_ID
from tests.oracle.conftest import oracle_binary  # noqa: F401  (the fixture)
from tests.oracle.harness import run_oracle, run_podnuma

HEADER = {"apiVersion": "podnuma.io/v1", "kind": "Scenario"}


def _scenario(tmp_path: Path, policy: str, checkpoint: str) -> Path:
    (tmp_path / "cpu_manager_state").write_text(checkpoint)
    doc = {
        **HEADER,
        "node": {"name": "worker", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                                   "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}},
        "kubeletConfig": {"cpuManagerPolicy": policy, "reservedSystemCPUs": "0"},
        "state": {"cpuManagerFile": str(tmp_path / "cpu_manager_state")},
        "steps": [],
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_the_largest_id_is_read_and_the_next_refused() -> None:
    ok = f'{{"policyName":"static","defaultCpuSet":"0-3,{MAX_CPU_ID}","entries":{{}},"checksum":0}}'
    data = decode_cpu_checkpoint(ok)
    assert data.default_cpuset.contains(MAX_CPU_ID)
    bad = f'{{"policyName":"static","defaultCpuSet":"0-3,{MAX_CPU_ID + 1}","entries":{{}},"checksum":0}}'
    with pytest.raises(CheckpointError, match="out of the range podnuma supports"):
        decode_cpu_checkpoint(bad)


def test_static_policy_both_refuse_to_start(oracle_binary: str, tmp_path: Path) -> None:  # noqa: F811
    path = _scenario(tmp_path, "static",
                     '{"policyName":"static","defaultCpuSet":"0-3","entries":{"u":{"c":"1048576"}},"checksum":0}')
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == mine.kind == "startup"
    assert 'doesn\'t match with CPUs in state "0-3,1048576"' in theirs.message
    assert "CPU id out of the range podnuma supports" in mine.message


def test_none_policy_the_kubelet_starts_podnuma_refuses(oracle_binary: str, tmp_path: Path) -> None:  # noqa: F811
    path = _scenario(tmp_path, "none",
                     '{"policyName":"none","defaultCpuSet":"","entries":{"u":{"c":"1048576"}},"checksum":0}')
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok"
    assert mine.kind == "startup" and "CPU id out of the range podnuma supports" in mine.message
