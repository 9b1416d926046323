"""Device NUMA ids the machine lacks are the kubelet's input too.

A device plugin reports any NUMA ids it likes in a device's
``TopologyInfo``; the kubelet's device manager takes them as given
(``pkg/kubelet/cm/devicemanager``: ``deviceNUMANodes`` leaves the unknown
ids out of the masks it combines, ``AnySet`` / ``IsSet`` find no bit for
them, a negative id sorts with the devices without topology). podnuma reads
such devices and answers as the kubelet does; only an id past int64 (the
plugin API's type) is refused, as a bad input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.harness import compare, run_oracle, run_podnuma


def _scenario(ids: list[int], policy: str, per_pod: str) -> dict[str, Any]:
    """gpu0 on ``ids``, gpu1 on node 0 of a two-node machine; two pods each
    asking ``per_pod`` GPUs."""
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2,
                               "threadsPerCore": 1, "memoryPerNumaNode": "4Gi"},
                 "devices": {"example.com/gpu": [{"id": "gpu0", "numaNodes": ids},
                                                 {"id": "gpu1", "numaNodes": [0]}]}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
                          "topologyManagerPolicy": policy},
        "steps": [{"addPod": {"metadata": {"name": f"p{k}", "namespace": "ns", "uid": f"uid-p{k}"},
                              "spec": {"containers": [{"name": "c", "resources": {
                                  "limits": {"cpu": "1", "memory": "1Gi", "example.com/gpu": per_pod}}}]}}}
                  for k in range(2)],
    }  # fmt: skip


@pytest.mark.parametrize("policy", ["best-effort", "restricted"])
@pytest.mark.parametrize("per_pod", ["1", "2"])
@pytest.mark.parametrize("ids", [[3], [3, 0], [-1], [-1, 1], [70], [5_000_000_000]], ids=str)
def test_devices_on_absent_numa_nodes(
    oracle_binary: str, tmp_path: Path, ids: list[int], policy: str, per_pod: str
) -> None:
    """Hints, picks, admissions and the device checkpoint as the kubelet's."""
    doc = _scenario(ids, policy, per_pod)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok", theirs
    diffs = compare(mine, theirs, doc)
    assert not diffs, "\n".join(diffs)


def test_two_gpus_one_on_node_3_are_admitted_with_hint_0(oracle_binary: str, tmp_path: Path) -> None:
    """gpu0 on "node 3", gpu1 on node 0, a container asking for both: the
    device manager combines only node 0 (the one known node hosting a
    device), whose mask holds one GPU, so it gives no hint; a resource
    without hints counts as "any node, not preferred", which the merge
    ANDs with the CPU hint {0}: best-effort admits the pod with {0} not
    preferred and gives it both GPUs."""
    doc = _scenario([3], "best-effort", "2")
    doc["steps"] = doc["steps"][:1]
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert not compare(mine, theirs, doc)
    assert mine.doc is not None
    step = mine.doc["steps"][0]
    assert step["admitted"] is True, step
    (ctr,) = step["containers"]
    assert ctr["topologyHint"] == {"numaNodes": [0], "preferred": False}, ctr
    assert sorted(d for ids in ctr["devices"].values() for d in ids) == ["gpu0", "gpu1"], ctr
