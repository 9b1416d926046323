"""An empty distance row is not a missing one.

cadvisor's ``Node.Distances`` is a ``[]uint64``: a ``machineInfo`` node
without ``distances`` (or with ``null``) decodes to a nil slice, one with
``"distances": []`` to an empty, non-nil slice. With
``prefer-closest-numa-nodes``, ``NewNUMAInfo``
(``pkg/kubelet/cm/topologymanager/numa_info.go``) refuses only the nil row
("error getting NUMA distances from cadvisor"); with an empty row the
kubelet starts, and ``CalculateAverageFor`` indexes past it ("index out of
range [i] with length 0") the first time ``Closest`` weighs two equal-width
masks holding that node. Where no such pair is weighed, the pod is admitted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy_options import PolicyOptions
from podnuma.errors import KubeletStartupError
from podnuma.inputs.discover.machineinfo import load_machine_info, parse_machine_info
from tests.oracle.harness import compare, run_oracle, run_podnuma


def _node(nid: int, row: list[int] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"node_id": nid, "memory": 4 * 1024**3,
                           "cores": [{"core_id": 2 * nid + j, "thread_ids": [2 * nid + j], "socket_id": nid}
                                     for j in range(2)]}  # fmt: skip
    if row is not None:
        out["distances"] = row
    return out


def _scenario(policy: str, cpus: str, second_row: list[int] | None = None) -> dict[str, Any]:
    """Three NUMA nodes, node 1's ``distances`` ``second_row`` (absent for
    ``None``); prefer-closest on; one pod of ``cpus`` CPUs."""
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"machineInfo": {"num_cores": 6, "num_physical_cores": 6, "num_sockets": 3,
                                 "memory_capacity": 12 * 1024**3,
                                 "topology": [_node(0, [10, 20, 30]), _node(1, second_row),
                                              _node(2, [30, 20, 10])]}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"},
                          "topologyManagerPolicy": policy,
                          "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
        "steps": [{"addPod": {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
                              "spec": {"containers": [{"name": "c", "resources": {
                                  "limits": {"cpu": cpus, "memory": "1Gi"}}}]}}}],
    }  # fmt: skip


def _run(oracle_binary: str, tmp_path: Path, doc: dict[str, Any]) -> tuple[Any, Any]:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return run_podnuma(path), run_oracle(oracle_binary, [path])[0]


@pytest.mark.parametrize("policy", ["best-effort", "restricted"])
def test_an_empty_row_starts_the_kubelet_which_panics_in_closest(
    oracle_binary: str, tmp_path: Path, policy: str
) -> None:
    """1 CPU: ``Closest`` weighs single-node masks, reads node 1's empty row
    and panics; podnuma rejects the step with that panic."""
    doc = _scenario(policy, "1", [])
    mine, theirs = _run(oracle_binary, tmp_path, doc)
    assert theirs.kind == "crash", theirs
    assert "CalculateAverageFor" in theirs.message and "with length 0" in theirs.message, theirs.message
    assert mine.kind == "ok", mine.message
    assert compare(mine, theirs, doc, notes=[]) == []


@pytest.mark.parametrize("policy", ["best-effort", "restricted"])
def test_an_empty_row_admits_where_closest_is_never_asked(oracle_binary: str, tmp_path: Path, policy: str) -> None:
    """5 CPUs: only the three-node mask fits, so no two equal-width masks
    are weighed and the kubelet admits the pod."""
    doc = _scenario(policy, "5", [])
    mine, theirs = _run(oracle_binary, tmp_path, doc)
    assert theirs.kind == "ok", theirs
    assert mine.kind == "ok", mine.message
    assert compare(mine, theirs, doc) == []


def test_a_missing_row_still_stops_the_kubelet(oracle_binary: str, tmp_path: Path) -> None:
    """No ``distances`` key at all is Go's nil row: the kubelet does not start."""
    doc = _scenario("best-effort", "1", None)
    mine, theirs = _run(oracle_binary, tmp_path, doc)
    assert theirs.kind != "ok", theirs
    assert "error getting NUMA distances from cadvisor" in mine.message, mine.message
    assert compare(mine, theirs, doc) == []


def test_machine_info_keeps_absent_null_and_empty_rows_apart() -> None:
    """``None`` for an absent or null row, ``()`` for ``[]``; the topology
    manager takes the empty row and refuses only the missing one."""
    doc = _scenario("best-effort", "1", [])["node"]["machineInfo"]
    opts = PolicyOptions(prefer_closest_numa=True)
    info = parse_machine_info(doc)
    assert [n.distances for n in info.topology] == [(10, 20, 30), (), (30, 20, 10)]
    assert NUMAInfo.from_machine(load_machine_info(doc), opts).distances[1] == ()
    doc["topology"][1]["distances"] = None
    assert parse_machine_info(doc).topology[1].distances is None
    del doc["topology"][1]["distances"]
    assert parse_machine_info(doc).topology[1].distances is None
    with pytest.raises(KubeletStartupError, match="error getting NUMA distances from cadvisor"):
        NUMAInfo.from_machine(load_machine_info(doc), opts)
