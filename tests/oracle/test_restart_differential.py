"""Restarts against the real kubelet code: starting checkpoints in every
format version the kubelet reads (CPU V2-V4, memory V1-V3, written by the
kubelet's own types for those versions), left as found or rewritten, and the
specs of the running pods; checkpoint files compared byte for byte."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.harness import compare, run_oracle_checkpoints, run_podnuma, write_scenario

MACHINE = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                         "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}}
CONFIG = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "memoryManagerPolicy": "Static",
          "kubeReserved": {"memory": "924Mi"}, "evictionHard": {"memory.available": "100Mi"},
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
          "topologyManagerPolicy": "single-numa-node"}


def _pod(name: str, cpu: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "r", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}}]}}


def _scenario(steps: list[dict[str, Any]], state: dict[str, Any] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": copy.deepcopy(MACHINE),
                           "kubeletConfig": copy.deepcopy(CONFIG), "steps": steps}
    if state is not None:
        doc["state"] = state
    return doc


def _legacy(oracle: str, manager: str, version: int, current: bytes) -> bytes:
    proc = subprocess.run([oracle, "legacy-checkpoint", manager, str(version)], input=current,
                          capture_output=True, timeout=60, check=True)
    return proc.stdout


@pytest.fixture(scope="module")
def first_life(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    d = tmp_path_factory.mktemp("first-life")
    out = run_oracle_checkpoints(oracle_binary, write_scenario(_scenario([{"addPod": _pod("a", "2")}]), d / "s.json"))
    assert out.kind == "ok", out.message
    return out.files


@pytest.mark.parametrize("cpu_version", [2, 3, 4])
@pytest.mark.parametrize("memory_version", [1, 2, 3])
@pytest.mark.parametrize("change", [False, True], ids=["readmit", "new-pod"])
@pytest.mark.parametrize("specs", [False, True], ids=["stand-in", "spec"])
def test_restart_from_every_format(
    oracle_binary: str, first_life: dict[str, bytes], tmp_path: Path,
    cpu_version: int, memory_version: int, change: bool, specs: bool,
) -> None:
    (tmp_path / "cpu").write_bytes(_legacy(oracle_binary, "cpu", cpu_version, first_life["cpu_manager_state"]))
    (tmp_path / "mem").write_bytes(
        _legacy(oracle_binary, "memory", memory_version, first_life["memory_manager_state"]))
    state: dict[str, Any] = {"cpuManagerFile": "cpu", "memoryManagerFile": "mem"}
    if specs:
        state["pods"] = [_pod("a", "2")]
    steps = [{"addPod": _pod("b", "2") if change else _pod("a", "2")}, {"removePod": "uid-a"}]
    if not change:
        steps = steps[:1]
    doc = _scenario(steps, state)
    path = write_scenario(doc, tmp_path / "s.json")
    mine = run_podnuma(path)
    theirs = run_oracle_checkpoints(oracle_binary, path)
    assert mine.kind == theirs.kind == "ok", (mine.message, theirs.message)
    diffs = compare(mine, theirs, doc, check_bytes=True)
    assert not diffs, diffs
    cpu_file = mine.files["cpu_manager_state"]
    if change:
        assert b'"dataChecksum"' in cpu_file  # written by v1.37: V4
    else:
        assert cpu_file == (tmp_path / "cpu").read_bytes()  # left as found
        assert mine.files["memory_manager_state"] == (tmp_path / "mem").read_bytes()


def test_cpu_v1_is_refused_alike(oracle_binary: str, first_life: dict[str, bytes], tmp_path: Path) -> None:
    data = json.loads(json.loads(first_life["cpu_manager_state"])["data"])
    v1 = {"policyName": "static", "defaultCpuSet": data["defaultCpuSet"],
          "entries": {"containerd://0123456789abcdef": "1,9"}, "checksum": 1}
    (tmp_path / "cpu").write_text(json.dumps(v1))
    doc = _scenario([{"addPod": _pod("b", "1")}], {"cpuManagerFile": "cpu"})
    path = write_scenario(doc, tmp_path / "s.json")
    mine, theirs = run_podnuma(path), run_oracle_checkpoints(oracle_binary, path)
    assert mine.kind == theirs.kind == "startup"
    assert not compare(mine, theirs, doc)
    assert mine.message.startswith("start cpu manager error: could not restore state from checkpoint: ")
