"""Socket id -1 (arm64 kernels that cannot tell a CPU's package): the
kubelet uses it as a socket id like any other, sorted before 0, and as the
uncore-cache id of cores without an L3 of their own. The machine model keys
its socket and uncore tables by an order-preserving offset, so the CPU
manager makes the kubelet's choices (checked against kubelet-oracle, the
kubelet's own code, when it is built)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.discover.table import load_table
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUInfo, CPUTopology

ROOT = Path(__file__).resolve().parents[2]
HEADER = "apiVersion: podnuma.io/v1\nkind: Scenario\n"


def _rows(sockets: tuple[int, int]) -> list[dict[str, int]]:
    """8 CPUs on one NUMA node: CPUs 0-3 on the first socket, 4-7 on the second."""
    return [
        {"id": c, "core": c % 4, "socket": sockets[0] if c < 4 else sockets[1], "numaNode": 0}
        for c in range(8)
    ]


# ------------------------------------------------------------------ the model


def test_non_negative_ids_are_their_own_keys() -> None:
    t = load_table({"cpus": _rows((0, 1))}).topology
    assert (t.socket_offset, t.uncore_offset) == (0, 0)
    assert sorted(t.socket_masks) == [0, 1]
    assert t.details.cpus_in_sockets(1) == CPUSet.parse("4-7")


def test_socket_minus_one_is_a_socket_like_any_other() -> None:
    t = load_table({"cpus": _rows((-1, 0))}).topology
    # the ids as reported ...
    assert t.cpu_info[0] == CPUInfo(numa_node=0, socket=-1, core=0, uncore_cache=-1)
    assert t.cpu_socket_id(5) == 0
    # ... and the tables keyed in the same order, -1 first
    assert (t.socket_offset, t.uncore_offset) == (1, 1)
    assert t.details.sockets().list() == [t.socket_key(-1), t.socket_key(0)] == [0, 1]
    assert t.details.cpus_in_sockets(t.socket_key(-1)) == CPUSet.parse("0-3")
    assert t.details.cpus_in_uncore_caches(t.uncore_key(-1)) == CPUSet.parse("0-3")
    assert t.details.sockets_in_numa_nodes(0).list() == [0, 1]
    assert (t.num_sockets, t.num_uncore_caches, t.cpus_per_socket()) == (2, 2, 4)


def test_a_whole_machine_on_socket_minus_one() -> None:
    rows = [{"id": c, "core": c, "socket": -1, "numaNode": c // 2} for c in range(4)]
    t = load_table({"cpus": rows}).topology
    assert t.details.sockets().list() == [0]
    assert t.details.sockets_in_numa_nodes(1).list() == [0]
    assert t.details.cpus_in_sockets(0) == CPUSet.parse("0-3")
    assert t.num_sockets == 1


def test_the_topology_with_negative_ids_equals_itself_only() -> None:
    a = CPUTopology({0: CPUInfo(0, -1, 0, -1), 1: CPUInfo(0, -1, 1, -1)})
    b = CPUTopology({0: CPUInfo(0, 0, 0, 0), 1: CPUInfo(0, 0, 1, 0)})
    assert a != b  # same keys, different ids
    assert a == CPUTopology({0: CPUInfo(0, -1, 0, -1), 1: CPUInfo(0, -1, 1, -1)})


# ----------------------------------------------------- the CPU manager's order


def _scenario(tmp_path: Path, name: str, node: dict[str, Any], options: dict[str, str] | None = None) -> Path:
    config: dict[str, Any] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cpuManagerPolicy": "static",
        "reservedSystemCPUs": "0,4",
    }
    if options:
        config["cpuManagerPolicyOptions"] = options

    def pod(n: str, cpu: str) -> dict[str, Any]:
        return {"addPod": {"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": n, "namespace": "d", "uid": f"{n * 8}-0000-4000-8000-000000000000"},
                           "spec": {"containers": [{"name": "app", "resources": {
                               "limits": {"cpu": cpu, "memory": "256Mi"}}}]}}}

    doc = {"node": node, "kubeletConfig": config, "steps": [pod("a", "1"), pod("b", "3")]}
    path = tmp_path / f"{name}.yaml"
    path.write_text(HEADER + yaml.safe_dump(doc, sort_keys=False))
    return path


def _cpus(path: Path) -> list[str]:
    res = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json"])
    assert res.exit_code == 0, res.output
    return [c["cpus"] for s in json.loads(res.output)["steps"] for c in s["containers"]]


@pytest.mark.parametrize("options", [None, {"prefer-align-cpus-by-uncorecache": "true"}],
                         ids=["packed", "uncore-cache"])
def test_minus_one_sorts_before_zero(tmp_path: Path, options: dict[str, str] | None) -> None:
    """Two sockets with as many free CPUs: the kubelet takes the lower id
    first, so (-1, 0) behaves as (0, 1) and not as (1, 0)."""
    got = {
        s: _cpus(_scenario(tmp_path, f"s{i}", {"cpus": _rows(s), "memory": {0: {"memory": "8Gi"}}}, options))
        for i, s in enumerate([(-1, 0), (0, 1), (1, 0)])
    }
    assert got[(-1, 0)] == got[(0, 1)] != got[(1, 0)]
    assert got[(-1, 0)][0] == "1"


# ------------------------------------------------------------ against the kubelet


def _oracle() -> str:
    env = os.environ.get("PODNUMA_ORACLE")
    path = env or str(ROOT / "oracle" / "bin" / "kubelet-oracle")
    if not os.access(path, os.X_OK):
        pytest.skip(f"kubelet-oracle not built ({path}; oracle/build builds it)")
    return path


def _sysfs(root: Path, packages: dict[int, int], nodes: dict[int, list[int]]) -> Path:
    """A sysfs tree: cpu -> package, NUMA node -> cpus (core id = cpu % 4)."""
    cpu_root = root / "devices" / "system" / "cpu"
    for cpu, pkg in packages.items():
        topo = cpu_root / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu % 4}\n")
        (topo / "physical_package_id").write_text(f"{pkg}\n")
    for nid, cpus in nodes.items():
        nd = root / "devices" / "system" / "node" / f"node{nid}"
        nd.mkdir(parents=True)
        for cpu in cpus:
            (nd / f"cpu{cpu}").symlink_to(f"../../cpu/cpu{cpu}")
        (nd / "meminfo").write_text(f"Node {nid} MemTotal:       8388608 kB\n")
        (nd / "distance").write_text(" ".join("10" if n == nid else "20" for n in nodes) + "\n")
    return root


@pytest.mark.parametrize(
    ("packages", "nodes"),
    [
        ({c: -1 for c in range(8)}, {0: list(range(8))}),
        ({c: -1 for c in range(8)}, {0: [0, 1, 2, 3], 1: [4, 5, 6, 7]}),
        ({c: -1 if c < 4 else 0 for c in range(8)}, {0: list(range(8))}),
    ],
    ids=["one-node", "two-nodes", "sockets-minus-one-and-zero"],
)
@pytest.mark.parametrize("options", [None, {"prefer-align-cpus-by-uncorecache": "true"}],
                         ids=["packed", "uncore-cache"])
def test_the_kubelet_agrees(tmp_path: Path, packages: dict[int, int], nodes: dict[int, list[int]],
                            options: dict[str, str] | None) -> None:
    """The sysfs form and the form ``node discover`` prints, run by podnuma
    and by the kubelet's own code: the same answer."""
    from tests.oracle.harness import compare, run_oracle, run_podnuma

    binary = _oracle()
    tree = _sysfs(tmp_path / "tree", packages, nodes)
    found = CliRunner().invoke(cli, ["node", "discover", "--sysfs", str(tree), "-o", "json"])
    assert found.exit_code == 0, found.output
    discovered = json.loads(found.output)["node"]
    assert {r["socket"] for r in discovered["cpus"]} == set(packages.values())
    paths = [_scenario(tmp_path, "sysfs", {"sysfs": str(tree)}, options),
             _scenario(tmp_path, "table", discovered, options)]
    theirs = run_oracle(binary, paths[:1])[0]
    assert theirs.kind == "ok", theirs.message
    for path in paths:
        mine = run_podnuma(path)
        scenario = yaml.safe_load(path.read_text())
        assert compare(mine, theirs, scenario) == [], path.name
