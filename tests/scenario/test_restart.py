"""A kubelet restart: starting checkpoints in older format versions left as
found, checkpoints the kubelet cannot restore, the specs of the running pods
(``state.pods``), and containers stopping versus pods leaving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli import cli

from .helpers import base, pod, write


def _simulate(path: Path, out_dir: Path | None = None) -> Any:
    args = ["simulate", str(path), "-o", "json"]
    if out_dir is not None:
        args += ["--checkpoint-dir", str(out_dir)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _first_life(tmp_path: Path) -> dict[str, Any]:
    """The checkpoint objects after pod a (2 CPUs) was admitted."""
    doc = base()
    doc["steps"] = [{"addPod": pod("a", "2", uid="uid-a")}]
    out = _simulate(write(tmp_path / "first.yaml", doc))
    ckpts: dict[str, Any] = out["checkpoints"]
    return ckpts


def _as_v2(v4: dict[str, Any]) -> bytes:
    """The same CPU state as a V2 file (checksum 0: accepted when reading
    the older formats)."""
    data = json.loads(v4["data"])
    v2 = {"policyName": data["policyName"], "defaultCpuSet": data["defaultCpuSet"],
          "entries": data["entries"], "checksum": 0}
    return json.dumps(v2, separators=(",", ":")).encode()


def test_unchanged_legacy_checkpoint_is_left_as_found(tmp_path: Path) -> None:
    v2 = _as_v2(_first_life(tmp_path)["cpuManager"])
    (tmp_path / "cpu_state").write_bytes(v2)
    doc = base()
    doc["state"] = {"cpuManagerFile": "cpu_state"}
    # the running pod re-admitted: its CPUs are kept, nothing is written
    doc["steps"] = [{"addPod": pod("a", "2", uid="uid-a")}]
    out = _simulate(write(tmp_path / "s.yaml", doc), tmp_path / "out")
    assert out["steps"][0]["admitted"] is True
    assert (tmp_path / "out" / "cpu_manager_state").read_bytes() == v2
    assert out["checkpoints"]["cpuManager"] == json.loads(v2)


def test_legacy_checkpoint_is_written_as_v4_once_the_state_changes(tmp_path: Path) -> None:
    v2 = _as_v2(_first_life(tmp_path)["cpuManager"])
    (tmp_path / "cpu_state").write_bytes(v2)
    doc = base()
    doc["state"] = {"cpuManagerFile": "cpu_state"}
    doc["steps"] = [{"addPod": pod("b", "2", uid="uid-b")}]
    out = _simulate(write(tmp_path / "s.yaml", doc), tmp_path / "out")
    written = json.loads((tmp_path / "out" / "cpu_manager_state").read_bytes())
    assert "data" in written and "dataChecksum" in written
    assert set(json.loads(written["data"])["entries"]) == {"uid-a", "uid-b"}
    assert out["checkpoints"]["cpuManager"] == written


def test_corrupt_memory_checkpoint_stops_the_start(tmp_path: Path) -> None:
    doc = base()
    doc["state"] = {"memoryManager": {"policyName": "None", "machineState": {}, "checksum": 12}}
    result = CliRunner().invoke(cli, ["simulate", str(write(tmp_path / "s.yaml", doc))])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: kubelet would not start: start memory manager error: could not restore state from "
        "checkpoint: checkpoint is corrupted, please drain this node and delete the memory manager "
        'checkpoint file "/var/lib/kubelet/memory_manager_state" before restarting Kubelet'
    ), result.stderr
    assert "state.memoryManager" in result.stderr


def test_stopped_container_keeps_its_cpus_until_the_pod_leaves(tmp_path: Path) -> None:
    doc = base()
    two = pod("two", "2", uid="uid-two")
    two["spec"]["containers"].append(
        {"name": "side", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}
    )
    doc["steps"] = [
        {"addPod": two},
        {"removeContainer": {"pod": "uid-two", "container": "app"}},
        {"removePod": "uid-two"},
    ]
    admitted, stopped, gone = _simulate(write(tmp_path / "s.yaml", doc))["steps"]
    held = admitted["defaultCpuSet"]
    assert stopped["defaultCpuSet"] == held  # PostStopContainer frees nothing
    assert [c["name"] for c in stopped["containers"]] == ["side"]
    assert gone["defaultCpuSet"] == "0-15"  # removeStaleState frees it all


@pytest.mark.parametrize("with_spec", [False, True])
def test_running_pods_with_their_specs(tmp_path: Path, with_spec: bool) -> None:
    state = _first_life(tmp_path)
    doc = base()
    doc["state"] = {"cpuManager": state["cpuManager"]}
    if with_spec:
        doc["state"]["pods"] = [pod("a", "2", uid="uid-a")]
    doc["steps"] = [{"removeContainer": {"pod": "uid-a", "container": "app"}}, {"removePod": "uid-a"}]
    stop, gone = _simulate(write(tmp_path / "s.yaml", doc))["steps"]
    if with_spec:
        # the pod is the one the API server knows: its name, its QoS class
        assert stop["pod"] == "default/a" and stop["qosClass"] == "Guaranteed"
    else:
        # a stand-in known by its UID only
        assert stop["pod"] == "uid-a" and stop["qosClass"] is None
    assert gone["defaultCpuSet"] == "0-15"


def test_reconcile_pass_frees_the_cpus_of_a_pod_rejected_by_the_memory_manager(tmp_path: Path) -> None:
    doc = base()
    doc["kubeletConfig"].update({
        "memoryManagerPolicy": "Static", "kubeReserved": {"memory": "924Mi"},
        "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
        "topologyManagerPolicy": "best-effort",
    })
    # 20Gi fits no NUMA node: no memory hint ("don't care"), the CPUs are
    # allocated, then the memory manager's Allocate fails
    doc["steps"] = [{"addPod": pod("big", "2", "20Gi", uid="uid-big")}, {"reconcile": {}}]
    rejected, reconciled = _simulate(write(tmp_path / "s.yaml", doc))["steps"]
    assert rejected["reason"] == "UnexpectedAdmissionError"
    assert rejected["defaultCpuSet"] != "0-15"  # the CPUs wait for removeStaleState
    assert reconciled["op"] == "reconcile" and reconciled["containers"] == []
    assert reconciled["defaultCpuSet"] == "0-15"


def test_running_pod_without_entries_counts_toward_allocatable(tmp_path: Path) -> None:
    doc = base()
    # a Burstable pod holding 14 of the 15 allocatable CPUs' requests runs
    big = pod("big", "14", uid="uid-big", limits_cpu="15")
    doc["state"] = {"pods": [big]}
    doc["steps"] = [{"addPod": pod("c", "2", uid="uid-c")}]
    (step,) = _simulate(write(tmp_path / "s.yaml", doc))["steps"]
    assert step["admitted"] is False
    assert step["reason"] == "OutOfcpu"
