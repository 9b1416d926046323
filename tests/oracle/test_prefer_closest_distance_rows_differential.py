"""prefer-closest-numa-nodes on distance rows that the NUMA ids run past.

``NUMADistances.CalculateAverageFor``
(``pkg/kubelet/cm/topologymanager/numa_info.go``) reads ``d[a][b]`` with
``b`` a NUMA *id*, while the kernel's ``nodeN/distance`` lists one entry per
online node: with ids 0 and 2 (a node offline) or a row shorter than the
node count, the first ``Closest`` call that weighs two equal-width masks
holding such a node indexes past the row and the kubelet panics ("index out
of range [i] with length n"). podnuma rejects that step naming the panic
(its kubelet-panic rejection), and the harness checks that the oracle died
of the same runtime error in that function. Where the merge never weighs two
such masks (single-numa-node ignores the option), both admit the pod alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.harness import compare, run_oracle, run_podnuma


def _scenario(second_id: int, second_row: list[int], policy: str = "best-effort") -> dict[str, Any]:
    """NUMA nodes 0 and ``second_id``, one socket each, two CPUs each;
    ``second_row`` is the second node's distance row."""

    def node(nid: int, cpus: tuple[int, int], socket: int, distances: list[int]) -> dict[str, Any]:
        return {
            "node_id": nid, "memory": 4 * 1024**3, "distances": distances,
            "cores": [{"core_id": c, "thread_ids": [c], "socket_id": socket} for c in cpus],
        }  # fmt: skip

    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"machineInfo": {"num_cores": 4, "num_physical_cores": 4, "num_sockets": 2,
                                 "memory_capacity": 8 * 1024**3,
                                 "topology": [node(0, (0, 1), 0, [10, 20]),
                                              node(second_id, (2, 3), 1, second_row)]}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
                          "topologyManagerPolicy": policy,
                          "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
        "steps": [{"addPod": {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
                              "spec": {"containers": [{"name": "c", "resources": {
                                  "limits": {"cpu": "1", "memory": "1Gi"}}}]}}}],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("second_id", "second_row", "words"),
    [(2, [20, 10], "index out of range [2] with length 2"), (1, [20], "index out of range [1] with length 1")],
    ids=["numa-ids-0-2", "short-distance-row"],
)
def test_closest_past_a_distance_row_is_the_kubelet_panic(
    oracle_binary: str, tmp_path: Path, second_id: int, second_row: list[int], words: str
) -> None:
    """The CPU hints {0} and {second_id} are both preferred and one wide:
    ``Closest`` averages each, and the second's lookup runs off its row."""
    doc = _scenario(second_id, second_row)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "crash", theirs
    assert "NUMADistances.CalculateAverageFor" in theirs.message and words in theirs.message, theirs.message
    assert mine.kind == "ok" and mine.doc is not None, mine
    step = mine.doc["steps"][0]
    assert step["reason"] == "UnexpectedAdmissionError" and words in step["message"], step
    notes: list[str] = []
    assert not compare(mine, theirs, doc, notes=notes)
    assert notes == ["kubelet panic confirmed"]


def test_single_numa_node_never_averages_distances(oracle_binary: str, tmp_path: Path) -> None:
    """single-numa-node compares masks by width alone, so the same machine
    admits the pod in both engines."""
    doc = _scenario(2, [20, 10], policy="single-numa-node")
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "ok", theirs
    assert not compare(mine, theirs, doc)
    assert mine.doc is not None and mine.doc["steps"][0]["admitted"] is True
