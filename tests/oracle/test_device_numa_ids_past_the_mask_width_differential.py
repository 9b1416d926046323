"""Device NUMA ids past the width of the kubelet's hint masks.

A device plugin may report any int64 NUMA id. The kubelet's device manager
tests a device against a hint mask with ``bitmask.IsSet`` / ``AnySet``
(``pkg/kubelet/cm/devicemanager/topology_hints.go``), and a mask is a
64-bit word: ``IsSet`` is false for an id below 0 or at 64 and above. So a
device on such an id lies in no mask, and the pods are handled with the
other devices' hints. podnuma gives such an id no bit either, so it never
builds a mask wider than 64 bits (an id near 2^63 would otherwise need
exabytes).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.devicemanager.topology_hints import device_numa_mask
from podnuma.machine.topology import Device
from tests.oracle.harness import compare, run_oracle, run_podnuma


def _scenario(first_ids: list[int], policy: str, scope: str) -> dict[str, Any]:
    """gpu0 on ``first_ids``, gpu1 on node 1 of a two-node machine; two pods
    each asking one GPU."""
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2,
                               "threadsPerCore": 1, "memoryPerNumaNode": "4Gi"},
                 "devices": {"example.com/gpu": [{"id": "gpu0", "numaNodes": first_ids},
                                                 {"id": "gpu1", "numaNodes": [1]}]}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
                          "topologyManagerPolicy": policy, "topologyManagerScope": scope},
        "steps": [{"addPod": {"metadata": {"name": f"p{k}", "namespace": "ns", "uid": f"uid-p{k}"},
                              "spec": {"containers": [{"name": "c", "resources": {
                                  "limits": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"}}}]}}}
                  for k in range(2)],
    }  # fmt: skip


@pytest.mark.parametrize("policy", ["best-effort", "restricted", "single-numa-node"])
@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize(
    "ids", [[2**63 - 1], [2**62], [5 * 10**9], [64], [1 << 40, 0]], ids=["int64-max", "2^62", "5e9", "64", "2^40+0"]
)
def test_a_device_on_an_id_past_the_mask_width_is_in_no_mask(
    oracle_binary: str, tmp_path: Path, policy: str, scope: str, ids: list[int]
) -> None:
    """Both pods are handled as the kubelet handles them: the big id has no
    bit in any mask (with node 0 beside it, the device counts for node 0)."""
    doc = _scenario(ids, policy, scope)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    started = time.monotonic()
    mine = run_podnuma(path)
    assert time.monotonic() - started < 30
    theirs = run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok", theirs
    assert mine.kind == "ok", mine.message
    assert compare(mine, theirs, doc) == []


def test_the_device_mask_keeps_only_the_bits_of_a_hint_mask() -> None:
    """Ids below 0 and at 64 or above get no bit; 0-63 do."""
    dev = Device("d", numa_nodes=(-1, 0, 63, 64, 2**62, 2**63 - 1))
    assert device_numa_mask(dev) == (1 << 0) | (1 << 63)
    assert device_numa_mask(Device("e", numa_nodes=(2**63 - 1,))) == 0
