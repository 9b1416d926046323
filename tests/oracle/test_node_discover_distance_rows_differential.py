"""``node discover`` carries a NUMA node's distance row as sysfs has it.

cadvisor reads ``nodeN/distance`` into the node's ``Distances`` whatever
its length (``getDistances``, utils/sysinfo/sysinfo.go), and the kubelet's
``prefer-closest-numa-nodes`` indexes row i by NUMA id j only when it
compares masks holding both nodes (``NUMADistances.CalculateAverageFor``).
So a short row is no error by itself: the kubelet starts and admits what
never needs the missing entry. The ``cpus`` node form, which ``node
discover`` writes, takes each row as read (one or more non-negative
numbers), so the discovered node, pasted into a scenario, is the same
machine as the ``sysfs`` form: checked here against the kubelet through
the Go oracle for both forms.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.errors import InputError
from podnuma.inputs.discover.table import parse_table
from tests.oracle.harness import compare, run_oracle, run_podnuma

HEADER = {"apiVersion": "podnuma.io/v1", "kind": "Scenario"}


def _two_node_tree(root: Path, rows: tuple[str, str]) -> Path:
    """CPUs 0-1 on NUMA node 0, 2-3 on node 1, one package; ``rows`` the
    nodes' ``distance`` files."""
    sys_root = root / "sys"
    cpu_root = sys_root / "devices" / "system" / "cpu"
    cpu_root.mkdir(parents=True)
    (cpu_root / "online").write_text("0-3\n")
    for cpu in range(4):
        topo = cpu_root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu}\n")
        (topo / "physical_package_id").write_text("0\n")
    for nid, cpus in ((0, (0, 1)), (1, (2, 3))):
        node = sys_root / "devices" / "system" / "node" / f"node{nid}"
        node.mkdir(parents=True)
        for cpu in cpus:
            (node / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
        (node / "meminfo").write_text(f"Node {nid} MemTotal:  1000000 kB\n")
        (node / "distance").write_text(rows[nid])
    (root / "proc").mkdir()
    (root / "proc" / "meminfo").write_text("MemTotal: 2000000 kB\n")
    return sys_root


def _discovered(sys_root: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "node", "discover", "--sysfs", str(sys_root),
                           "--name", "worker", "-o", "json"],
                          capture_output=True, text=True, check=True, env=env, timeout=120)
    node: dict[str, Any] = json.loads(proc.stdout)["node"]
    return node


def _pod(cpu: str) -> dict[str, Any]:
    return {"metadata": {"name": f"p{cpu}", "namespace": "s"},
            "spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": cpu, "memory": "100Mi"}}}]}}


@pytest.mark.parametrize(
    ("rows", "policy", "cpus"),
    [
        (("10\n", "20 10\n"), "single-numa-node", "1"),
        (("10 20\n", "20 10\n"), "single-numa-node", "1"),
        (("10 0\n", "0 10\n"), "single-numa-node", "1"),
        (("10 20 30\n", "20 10\n"), "restricted", "3"),
    ],
    ids=["short-row", "full-rows", "zero-distance", "long-and-short-rows"],
)
def test_discovered_node_is_the_sysfs_machine(oracle_binary: str, tmp_path: Path, rows: tuple[str, str],
                                              policy: str, cpus: str) -> None:
    """Both forms, simulated by podnuma and by the kubelet, give one
    answer (the rows travel as read)."""
    sys_root = _two_node_tree(tmp_path / "root", rows)
    node = _discovered(sys_root)
    assert node["distances"] == {
        str(i): [int(t) for t in row.split()] for i, row in enumerate(rows)
    }
    config = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "1", "topologyManagerPolicy": policy,
              "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}}
    outcomes = []
    for form, node_doc in (("sysfs", {"name": "worker", "sysfs": str(sys_root)}), ("discovered", node)):
        doc = {**HEADER, "node": node_doc, "kubeletConfig": config, "steps": [{"addPod": _pod(cpus)}]}
        path = tmp_path / f"{form}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
        assert compare(mine, theirs, doc) == [], form
        outcomes.append((theirs.kind, theirs.doc))
    assert outcomes[0] == outcomes[1]
    if rows[0] == "10\n":
        assert outcomes[0][0] == "ok"


def test_a_node_without_a_distance_file_leaves_all_rows_out(tmp_path: Path) -> None:
    """A row per node or none: without node 1's ``distance`` file the
    kubelet has no row for it (cadvisor's nil), which with
    ``prefer-closest-numa-nodes`` stops it as having no distances at all."""
    sys_root = _two_node_tree(tmp_path / "root", ("10 20\n", ""))
    (sys_root / "devices/system/node/node1/distance").unlink()
    assert "distances" not in _discovered(sys_root)


@pytest.mark.parametrize(
    ("distances", "message"),
    [({0: [], 1: [20, 10]}, "needs at least one distance"),
     ({0: [10, -1], 1: [20, 10]}, "must be a non-negative integer"),
     ({0: [10, 20]}, "missing the row of NUMA node 1")],
)
def test_table_rows_as_read_are_still_checked(distances: dict[int, list[int]], message: str) -> None:
    """A row as read has at least one number, none negative, and every node
    has one."""
    doc = {"cpus": [{"id": 0, "core": 0, "socket": 0, "numaNode": 0},
                    {"id": 1, "core": 1, "socket": 0, "numaNode": 1}],
           "distances": distances}
    with pytest.raises(InputError) as exc:
        parse_table(doc)
    assert message in exc.value.message
