"""Answers the kubelet itself picks by Go map order, and how the harness
takes them.

In three places kubelet v1.37.2 gives different answers to the same
scenario from run to run: ``validatePodScopeResources`` names the first
resource of the pod's budget (a Go map) whose shared pool is empty,
``validateReservedMemory`` the first memory type (a Go map) whose
reservedMemory total differs from Node Allocatable's, and the device
manager hands a regular init container's devices on to a later container
by ranging over a Go set, whatever their NUMA node, which shows only in the
device checkpoint when the pod is rejected after the pick. podnuma gives
one of those answers; the harness accepts exactly the kubelet's: for the
two messages it runs the kubelet code again until it gives podnuma's answer
(a made-up one is never given), for the device pick it checks that the
picked devices are as many and within the pod's init containers' devices.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

from tests.oracle import harness
from tests.oracle.harness import (
    CHECKPOINT_FILES,
    Outcome,
    compare,
    compare_resampled,
    run_both,
    run_oracle,
    run_oracle_checkpoints,
    run_podnuma,
)


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _reserved_memory_two_types() -> dict[str, Any]:
    """reservedMemory names 2Mi and 1Gi hugepages that Node Allocatable
    does not reserve: both types differ, the kubelet names either."""
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2, "threadsPerCore": 1,
                               "memoryPerNumaNode": "4Gi",
                               "hugepagesPerNumaNode": {"hugepages-2Mi": "64Mi", "hugepages-1Gi": "1Gi"}}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1", "memory": "1Gi"},
                          "memoryManagerPolicy": "Static", "evictionHard": {"memory.available": "100Mi"},
                          "reservedMemory": [{"numaNode": 0, "limits": {
                              "memory": "1124Mi", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}}]},
        "steps": [],
    }  # fmt: skip


def _pod_budget_two_resources() -> dict[str, Any]:
    """A pod-level pod whose one exclusive container takes the whole budget
    of both memory and 2Mi hugepages, beside a shared container."""
    budget = {"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"}
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2, "threadsPerCore": 1,
                               "memoryPerNumaNode": "4Gi", "hugepagesPerNumaNode": {"hugepages-2Mi": "64Mi"}}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1", "memory": "1Gi"},
                          "memoryManagerPolicy": "Static", "evictionHard": {"memory.available": "100Mi"},
                          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
                          "topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod",
                          "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True}},
        "steps": [{"addPod": {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
                              "spec": {"resources": {"limits": budget, "requests": budget},
                                       "containers": [{"name": "x", "resources": {"limits": {
                                           "cpu": "1", "memory": "1Gi", "hugepages-2Mi": "4Mi"}}},
                                           {"name": "s"}]}}}],
    }  # fmt: skip


def _renamed(outcome: Outcome, old: str, new: str) -> Outcome:
    if outcome.doc is None:
        return Outcome(kind=outcome.kind, message=outcome.message.replace(old, new))
    doc = json.loads(json.dumps(outcome.doc).replace(old, new))
    return Outcome(doc=doc, files=outcome.files)


def test_reserved_memory_check_names_either_type(oracle_binary: str, tmp_path: Path) -> None:
    """Both hugepage sizes come up in the kubelet's runs, and either stands
    against the other; a type the kubelet never names does not."""
    doc = _reserved_memory_two_types()
    path = _write(tmp_path, doc)
    seen = collections.Counter(o.message for o in run_oracle(oracle_binary, [path] * 60))
    assert len(seen) == 2 and all("hugepages-" in m for m in seen), seen
    mine = run_podnuma(path)
    assert mine.kind == "startup"
    for message in seen:
        notes: list[str] = []
        theirs = Outcome(kind="startup", message=message)
        assert not compare_resampled(oracle_binary, path, mine, theirs, doc, notes=notes)
    made_up = Outcome(kind="startup", message=(
        'the total amount "1124Mi" of type "memory" is not equal to the value "1124Mi" '
        "determined by Node Allocatable feature"))  # fmt: skip
    assert compare_resampled(oracle_binary, path, made_up, Outcome(kind="startup", message=next(iter(seen))), doc)


def test_pod_budget_check_names_either_resource(oracle_binary: str, tmp_path: Path) -> None:
    """podnuma names one of the two exhausted resources; against an oracle
    run naming the other, the kubelet's other runs bear it out. A name of
    a resource outside the budget is never borne out."""
    doc = _pod_budget_two_resources()
    path = _write(tmp_path, doc)
    mine = run_podnuma(path)
    assert mine.doc is not None
    message = mine.doc["steps"][0]["message"]
    assert "sum of exclusive container" in message, message
    named = "memory" if " memory requests" in message else "hugepages-2Mi"
    other = "hugepages-2Mi" if named == "memory" else "memory"
    theirs = _renamed(mine, f"container {named} requests", f"container {other} requests")
    assert compare(mine, theirs, doc)
    notes: list[str] = []
    assert not compare_resampled(oracle_binary, path, mine, theirs, doc, notes=notes)
    assert notes == ["map order picks the answer: validatePodScopeResources"]
    made_up = _renamed(mine, f"container {named} requests", "container hugepages-1Gi requests")
    assert compare_resampled(oracle_binary, path, made_up, theirs, doc)


def _reuse_then_rejected(policy: str) -> dict[str, Any]:
    """A regular init container holds gpu0 (node 0) and gpu1 (node 1); app
    container ``a`` reuses one of them, then ``b`` asks more CPUs than the
    node has and the pod is rejected, its device entries kept."""
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2, "threadsPerCore": 1,
                               "memoryPerNumaNode": "4Gi"},
                 "devices": {"example.com/gpu": [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1", "numaNodes": [1]}]}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}, "topologyManagerPolicy": policy},
        "steps": [{"addPod": {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"}, "spec": {
            "initContainers": [{"name": "i", "resources": {"limits": {
                "cpu": "1", "memory": "1Gi", "example.com/gpu": "2"}}}],
            "containers": [{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"}}},
                           {"name": "b", "resources": {"limits": {"cpu": "3", "memory": "1Gi"}}}]}}}],
    }  # fmt: skip


def test_init_devices_handed_on_in_a_rejected_pod(oracle_binary: str, tmp_path: Path) -> None:
    """Either GPU in ``a``'s entry is the kubelet's (both come up in its
    runs); a device outside the init container's, or one too many, is not."""
    doc = _reuse_then_rejected("none")
    path = _write(tmp_path, doc)
    mine = run_podnuma(path)
    name = CHECKPOINT_FILES["deviceManager"]
    picks = set()
    for _ in range(40):
        theirs = run_oracle_checkpoints(oracle_binary, path)
        picks.add(json.dumps(json.loads(theirs.files[name])["Data"]["PodDeviceEntries"][0]["DeviceIDs"]))
        assert not compare(mine, theirs, doc, check_bytes=True)
        if len(picks) == 2:
            break
    assert picks == {'{"0": ["gpu0"]}', '{"1": ["gpu1"]}'}, picks
    mine_bytes = mine.files[name]
    entries = json.loads(mine_bytes)
    for wrong in ({"2": ["gpu9"]}, {"0": ["gpu0"], "1": ["gpu1"]}):
        entries["Data"]["PodDeviceEntries"][0]["DeviceIDs"] = wrong
        bad = Outcome(doc=mine.doc, files={**mine.files, name: json.dumps(entries).encode()})
        assert compare(bad, theirs, doc, check_bytes=True)


def test_a_podnuma_crash_goes_to_the_slow_lane_and_is_compared(
    oracle_binary: str, tmp_path: Path, monkeypatch: Any
) -> None:
    """A crash gives no provider hints to size the kubelet's merge walk by:
    the scenario runs alone, time-bounded, and the crash is reported even
    when the kubelet does not answer in time."""
    doc = _reuse_then_rejected("none")
    alone: list[Path] = []

    def crash(path: Path) -> Outcome:
        return Outcome(kind="crash", message="internal error")

    def hang(binary: str, path: Path, timeout: float = 60.0) -> Outcome:
        alone.append(path)
        return Outcome(kind="hang", message="no answer")

    monkeypatch.setattr(harness, "run_podnuma", crash)
    monkeypatch.setattr(harness, "_alone", hang)
    stats: dict[str, int] = {}
    out = run_both(oracle_binary, [("s", doc)], tmp_path, stats=stats)
    assert len(alone) == 1 and stats["slow"] == 1 and stats["slow_unfinished"] == 0
    assert len(out) == 1 and "podnuma crash" in out[0][2][0], out
