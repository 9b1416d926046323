"""Starting checkpoints the kubelet's ``validateState`` judges at start-up
(CPU manager ``policy_static.go`` and memory manager ``policy_static.go``),
through podnuma and through ``kubelet-oracle simulate``: both refuse with
the same message, or both start and then write the same checkpoint bytes.

The valid starting point is made by a run (two Guaranteed pods, one
exclusive CPU each, memory pinned); each case then edits the decoded
checkpoint and encodes it again, so its checksum is valid and only
``validateState`` can object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.cm.cpumanager.checkpoint import (
    CPUCheckpointData,
    cpu_checkpoint_object,
    decode_cpu_checkpoint,
)
from podnuma.cm.memorymanager.checkpoint import (
    MemoryCheckpointData,
    decode_memory_checkpoint,
    memory_checkpoint_object,
)
from podnuma.cm.memorymanager.state import Block
from podnuma.machine.cpuset import CPUSet
from tests.oracle.harness import (
    Outcome,
    run_oracle,
    run_oracle_checkpoints,
    run_podnuma,
    write_scenario,
)

from ..records import replace


def _pod(name: str, cpu: str = "1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "s", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}}]},
    }


def _base(**config: Any) -> dict[str, Any]:
    return {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": {
            "name": "start-node",
            "synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2,
                          "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"},
        },  # fmt: skip
        "kubeletConfig": {
            "cpuManagerPolicy": "static",
            "reservedSystemCPUs": "0",
            "memoryManagerPolicy": "Static",
            "systemReserved": {"memory": "924Mi"},
            "evictionHard": {"memory.available": "100Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
            **config,
        },
        "steps": [],
    }


def _valid_state() -> tuple[CPUCheckpointData, MemoryCheckpointData]:
    from podnuma.inputs.scenario import load_scenario_text
    from podnuma.scenario.run import run_scenario

    doc = _base()
    doc["steps"] = [{"addPod": _pod("a")}, {"addPod": _pod("b")}]
    result = run_scenario(load_scenario_text(json.dumps(doc), name="valid.json", base_dir=Path(".")))
    cpu = decode_cpu_checkpoint(result.checkpoint_files["cpu_manager_state"])
    memory = decode_memory_checkpoint(result.checkpoint_files["memory_manager_state"])
    assert set(cpu.entries) == {"uid-a", "uid-b"} and set(memory.entries) == {"uid-a", "uid-b"}
    return cpu, memory


Edit = Callable[[CPUCheckpointData, MemoryCheckpointData], tuple[CPUCheckpointData, MemoryCheckpointData]]


def _cpu(fn: Callable[[CPUCheckpointData], CPUCheckpointData]) -> Edit:
    return lambda c, m: (fn(c), m)


def _mem(fn: Callable[[MemoryCheckpointData], MemoryCheckpointData]) -> Edit:
    return lambda c, m: (c, fn(m))


def _entries(c: CPUCheckpointData, **sets: str) -> dict[str, dict[str, CPUSet]]:
    return {f"uid-{p}": {"app": CPUSet.parse(s)} for p, s in sets.items()}


def _a_cpu(c: CPUCheckpointData) -> CPUSet:
    return c.entries["uid-a"]["app"]


def _b_cpu(c: CPUCheckpointData) -> CPUSet:
    return c.entries["uid-b"]["app"]


def _move_block(m: MemoryCheckpointData, *, numa: int | None = None, kind: str | None = None) -> MemoryCheckpointData:
    (block,) = [b for b in m.entries["uid-a"]["app"] if b.type == "memory"]
    moved = Block((numa,) if numa is not None else block.numa_affinity, kind or block.type, block.size)
    entries = dict(m.entries)
    entries["uid-a"] = {"app": [moved, *[b for b in m.entries["uid-a"]["app"] if b.type != "memory"]]}
    return replace(m, entries=entries)


def _double_memory(m: MemoryCheckpointData) -> MemoryCheckpointData:
    entries = dict(m.entries)
    entries["uid-a"] = {"app": [Block(b.numa_affinity, b.type, b.size * 2) for b in m.entries["uid-a"]["app"]]}
    return replace(m, entries=entries)


CASES: dict[str, tuple[Edit, dict[str, Any]]] = {
    "valid": (lambda c, m: (c, m), {}),
    "default-empty-with-assignments": (
        _cpu(lambda c: replace(c, default_cpuset=CPUSet())), {}),
    "reserved-not-in-default": (
        _cpu(lambda c: replace(
            c, default_cpuset=c.default_cpuset - CPUSet.parse("0"),
            entries={**c.entries, "uid-z": {"app": CPUSet.parse("0")}})), {}),
    "strict-reserved-in-default": (
        lambda c, m: (c, m),
        {"cpuManagerPolicyOptions": {"strict-cpu-reservation": "true"}}),
    "assignment-overlaps-default": (
        _cpu(lambda c: replace(c, default_cpuset=c.default_cpuset | _a_cpu(c))), {}),
    "cpus-missing-from-state": (
        _cpu(lambda c: replace(c, entries={"uid-a": c.entries["uid-a"]})), {}),
    "cpu-beyond-the-machine": (
        _cpu(lambda c: replace(c, entries={**c.entries, "uid-z": {"app": CPUSet.parse("9")}})), {}),
    "two-pods-one-exclusive-cpu": (
        _cpu(lambda c: replace(c, entries={
            "uid-a": {"app": _a_cpu(c) | _b_cpu(c)}, "uid-b": c.entries["uid-b"]})), {}),
    "memory-state-empty-with-assignments": (
        _mem(lambda m: replace(m, machine_state={})), {}),
    "memory-numa-does-not-exist": (_mem(lambda m: _move_block(m, numa=7)), {}),
    "memory-resource-does-not-exist": (_mem(lambda m: _move_block(m, kind="hugepages-1Gi")), {}),
    "memory-state-differs": (_mem(_double_memory), {}),
}


def _scenario(tmp_path: Path, name: str, steps: list[dict[str, Any]]) -> Path:
    edit, config = CASES[name]
    cpu, memory = edit(*_valid_state())
    doc = _base(**config)
    doc["state"] = {"cpuManager": cpu_checkpoint_object(cpu), "memoryManager": memory_checkpoint_object(memory)}
    doc["steps"] = steps
    return write_scenario(doc, tmp_path / f"{name}.yaml")


def _same(ours: Outcome, theirs: Outcome) -> None:
    assert (ours.kind, ours.message) == (theirs.kind, theirs.message)


@pytest.mark.parametrize("name", sorted(CASES))
def test_start_refusals_match_the_kubelet(oracle_binary: str, tmp_path: Path, name: str) -> None:
    path = _scenario(tmp_path, name, [{"addPod": _pod("c")}])
    ours = run_podnuma(path)
    (theirs,) = run_oracle(oracle_binary, [path])
    _same(ours, theirs)
    if name in ("valid", "two-pods-one-exclusive-cpu"):
        assert ours.kind == "ok"
        # both started: the checkpoints they then write are the same bytes
        written = run_oracle_checkpoints(oracle_binary, path)
        assert written.kind == "ok"
        for f in ("cpu_manager_state", "memory_manager_state"):
            assert ours.files[f] == written.files[f], f
    else:
        assert ours.kind == "startup" and ours.message


def test_two_pods_on_one_exclusive_cpu_round_trip(oracle_binary: str, tmp_path: Path) -> None:
    """The kubelet starts with such a state; once one of the two pods goes,
    its CPUs return to the shared pool while the other still holds one, and
    the checkpoint it writes is one its next start refuses. podnuma writes
    the same bytes and refuses the next start with the same message."""
    path = _scenario(tmp_path, "two-pods-one-exclusive-cpu", [{"removePod": "uid-a"}])
    ours = run_podnuma(path)
    theirs = run_oracle_checkpoints(oracle_binary, path)
    assert ours.kind == theirs.kind == "ok"
    assert ours.files["cpu_manager_state"] == theirs.files["cpu_manager_state"]
    written = decode_cpu_checkpoint(theirs.files["cpu_manager_state"])
    assert _b_cpu(written) & written.default_cpuset  # the inconsistency the next start finds
    doc = yaml.safe_load(path.read_text())
    doc["state"]["cpuManager"] = json.loads(theirs.files["cpu_manager_state"])
    doc["state"]["memoryManager"] = json.loads(theirs.files["memory_manager_state"])
    doc["steps"] = [{"addPod": _pod("c")}]
    again = write_scenario(doc, tmp_path / "restart.yaml")
    ours = run_podnuma(again)
    (theirs,) = run_oracle(oracle_binary, [again])
    _same(ours, theirs)
    assert ours.kind == "startup" and "overlaps with default cpuset" in ours.message
