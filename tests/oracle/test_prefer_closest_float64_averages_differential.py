"""prefer-closest averages are float64 sums, added one distance at a time.

``NUMADistances.CalculateAverageFor``
(``pkg/kubelet/cm/topologymanager/numa_info.go``) converts each
``d[a][b]`` (cadvisor's uint64) to a float64 and adds it to a float64
running sum, ``a`` outer and ``b`` inner over the mask's nodes, then
divides by the pair count; ``Closest`` compares those averages, a tie going
to the lower mask. With distances of 2^53 and more the additions round,
and the kubelet's choice can differ from the one exact integer sums give.
podnuma sums as Go does (exactly, while the sum stays below 2^53, where
the two agree).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.numa_info import NUMAInfo, calculate_average_for
from tests.oracle.harness import compare, run_oracle, run_podnuma

B, FAR = 2**53, 2**60
# {0,1} sums 2^53 + 1 + 1 + 1 to 2^53 (each +1 is rounded away); {2,3} sums
# 1 + 1 + 1 + (2^53 - 3) to exactly 2^53: the averages tie, {0,1} wins.
ROWS = [[B, 1, FAR, FAR], [1, 1, FAR, FAR], [FAR, FAR, 1, 1], [FAR, FAR, 1, B - 3]]


def _scenario(policy: str, rows: list[list[int]]) -> dict[str, Any]:
    """Four NUMA nodes of two CPUs each (``machineInfo``); a pod of 3 CPUs,
    so every two-node mask with three free CPUs is a preferred hint and
    ``Closest`` weighs them."""
    topo = [{"node_id": n, "memory": 4 * 1024**3, "distances": rows[n],
             "cores": [{"core_id": 2 * n + j, "thread_ids": [2 * n + j], "socket_id": n} for j in range(2)]}
            for n in range(4)]  # fmt: skip
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"machineInfo": {"num_cores": 8, "num_physical_cores": 8, "num_sockets": 4,
                                 "memory_capacity": 16 * 1024**3, "topology": topo}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
                          "topologyManagerPolicy": policy,
                          "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
        "steps": [{"addPod": {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
                              "spec": {"containers": [{"name": "c", "resources": {
                                  "limits": {"cpu": "3", "memory": "1Gi"}}}]}}}],
    }  # fmt: skip


def _hint(oracle_binary: str, tmp_path: Path, doc: dict[str, Any]) -> list[int]:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok", theirs
    assert mine.kind == "ok", mine.message
    assert compare(mine, theirs, doc) == []
    assert theirs.doc is not None
    (ctr,) = theirs.doc["steps"][0]["containers"]
    nodes: list[int] = ctr["topologyHint"]["numaNodes"]
    return nodes


@pytest.mark.parametrize("policy", ["best-effort", "restricted"])
def test_rounded_sums_tie_and_the_lower_mask_wins(oracle_binary: str, tmp_path: Path, policy: str) -> None:
    """Exact sums would pick {2,3} (2^53 + 3 against 2^53); Go's float64
    sums tie and pick {0,1}."""
    assert _hint(oracle_binary, tmp_path, _scenario(policy, ROWS)) == [0, 1]


@pytest.mark.parametrize("policy", ["best-effort", "restricted"])
def test_small_distances_order_by_their_exact_average(oracle_binary: str, tmp_path: Path, policy: str) -> None:
    """Below 2^53 nothing rounds: {2,3} is closer than {0,1} by one."""
    rows = [[10, 21, 40, 40], [21, 10, 40, 40], [40, 40, 10, 20], [40, 40, 20, 10]]
    assert _hint(oracle_binary, tmp_path, _scenario(policy, rows)) == [2, 3]


def test_the_average_adds_float64s_in_go_order() -> None:
    d: dict[int, tuple[int, ...] | None] = {n: tuple(r) for n, r in enumerate(ROWS)}
    assert calculate_average_for(d, BitMask([0, 1])) == float(B) / 4
    assert calculate_average_for(d, BitMask([2, 3])) == float(B) / 4
    info = NUMAInfo.of(range(4), d)
    assert info.closest(BitMask([2, 3]), BitMask([0, 1])) == BitMask([0, 1])
    # a uint64 past 2^53 converts to the nearest double first
    big = {0: (2**64 - 1, 1), 1: (1, 2**63 + 1)}
    acc = 0.0
    for v in (2**64 - 1, 1, 1, 2**63 + 1):
        acc += float(v)
    assert calculate_average_for(big, BitMask([0, 1])) == acc / 4.0
