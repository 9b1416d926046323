"""The Static memory manager adds sizes as ``uint64``, and the sums wrap.

``calculateHints`` (``pkg/kubelet/cm/memorymanager/policy_static.go``) adds
the allocatable and free amounts of a mask's nodes, ``isAffinitySatisfyRequest``
the free ones, ``getPodRequestedResources`` / ``validatePodScopeResources``
the containers' requests, all in ``uint64``. A node whose reservations pass
its memory has an allocatable amount near 2^64; adding another node's
memory to it wraps to a small number, so the kubelet finds that the
two-node mask does not fit where exact arithmetic says it does. With no
mask left the memory manager gives no hints, the topology manager admits on
the CPU hint alone and ``Allocate`` fails ("failed to find NUMA nodes to
extend the current topology hint", or under ``none`` "failed to get the
default NUMA affinity"): ``UnexpectedAdmissionError``, with the CPUs
already given left in the CPU checkpoint under restricted and
single-numa-node. Each scenario runs through podnuma and the kubelet oracle,
checkpoint bytes included.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.harness import compare, run_oracle, run_oracle_checkpoints, run_podnuma


def _check(oracle_binary: str, tmp_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    mine = run_podnuma(path)
    theirs = run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok", theirs
    diffs = compare(mine, theirs, doc)
    assert not diffs, "\n".join(diffs)
    with_bytes = run_oracle_checkpoints(oracle_binary, path)
    diffs = compare(mine, with_bytes, doc, check_bytes=True)
    assert not diffs, "\n".join(diffs)
    assert mine.doc is not None
    return mine.doc


def _wrapped_node(policy: str, scope: str) -> dict[str, Any]:
    """NUMA node 0: 2Gi of memory, a 1Gi hugepage and 1124Mi reserved, so
    its memory allocatable (total - reserved - hugepages) is -100Mi, 2^64 -
    100Mi as the kubelet's uint64 holds it; node 1 has 1Gi allocatable. The
    pod asks for 1Gi of memory and 2Gi of 1Gi hugepages: only the mask
    {0,1} has the hugepages, and its memory sum wraps to 924Mi."""
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 2,
                               "threadsPerCore": 2, "memoryPerNumaNode": "2Gi",
                               "hugepagesPerNumaNode": {"hugepages-1Gi": "1Gi"}}},
        "kubeletConfig": {
            "cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1", "memory": "1024Mi"},
            "memoryManagerPolicy": "Static", "evictionHard": {"memory.available": "100Mi"},
            "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}],
            "topologyManagerPolicy": policy, "topologyManagerScope": scope,
        },
        "steps": [{"addPod": {
            "metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
            "spec": {"containers": [{"name": "c", "resources": {
                "limits": {"cpu": "2", "memory": "1Gi", "hugepages-1Gi": "2Gi"}}}]},
        }}],
    }  # fmt: skip


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize("policy", ["none", "best-effort", "restricted", "single-numa-node"])
def test_a_mask_whose_allocatable_sum_wraps_does_not_fit(
    oracle_binary: str, tmp_path: Path, policy: str, scope: str
) -> None:
    """No memory hint at all: the pod is refused by ``Allocate``, as the
    kubelet refuses it, and the checkpoints hold what the kubelet's do."""
    out = _check(oracle_binary, tmp_path, _wrapped_node(policy, scope))
    step = out["steps"][0]
    assert step["reason"] == "UnexpectedAdmissionError", step
    wanted = "failed to get the default NUMA affinity" if policy == "none" else "failed to find NUMA nodes to extend"
    assert wanted in step["message"], step


def test_a_later_pod_on_the_other_node_is_still_placed(oracle_binary: str, tmp_path: Path) -> None:
    """The wrapped node spoils only the masks holding it: a pod asking for
    memory alone fits node 1 (and the two-node mask wraps below its
    request too), as in the kubelet."""
    doc = _wrapped_node("restricted", "container")
    doc["steps"].append({"addPod": {
        "metadata": {"name": "q", "namespace": "ns", "uid": "uid-q"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "memory": "512Mi"}}}]},
    }})  # fmt: skip
    out = _check(oracle_binary, tmp_path, doc)
    assert out["steps"][1]["admitted"] is True, out["steps"][1]


def test_pod_level_budget_on_the_wrapped_node(oracle_binary: str, tmp_path: Path) -> None:
    """The same sums in the pod-level resource managers' path
    (``AllocatePod`` through the default and extended hints)."""
    doc = copy.deepcopy(_wrapped_node("best-effort", "pod"))
    doc["kubeletConfig"]["featureGates"] = {"PodLevelResources": True, "PodLevelResourceManagers": True}
    doc["steps"][0]["addPod"]["spec"]["resources"] = {
        "requests": {"cpu": "2", "memory": "1Gi", "hugepages-1Gi": "2Gi"},
        "limits": {"cpu": "2", "memory": "1Gi", "hugepages-1Gi": "2Gi"},
    }
    _check(oracle_binary, tmp_path, doc)
