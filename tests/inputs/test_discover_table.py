"""table.py: the explicit ``cpus`` table."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.errors import InputError
from podnuma.inputs.discover.table import load_table
from podnuma.machine.topology import CPUInfo

GiB = 1024**3
MiB = 1024**2


def row(cpu: int, core: int, socket: int, numa: int, uncore: int | None = None) -> dict[str, int]:
    r = {"id": cpu, "core": core, "socket": socket, "numaNode": numa}
    if uncore is not None:
        r["uncoreCache"] = uncore
    return r


# 2 sockets x 2 cores x 2 threads, cores labelled per socket as sysfs does (0, 1).
HW_LABELS = [
    row(0, 0, 0, 0), row(1, 1, 0, 0), row(2, 0, 1, 1), row(3, 1, 1, 1),
    row(4, 0, 0, 0), row(5, 1, 0, 0), row(6, 0, 1, 1), row(7, 1, 1, 1),
]
# The same machine labelled with the kubelet's core ids (lowest sibling).
KUBELET_LABELS = [
    row(0, 0, 0, 0), row(1, 1, 0, 0), row(2, 2, 1, 1), row(3, 3, 1, 1),
    row(4, 0, 0, 0), row(5, 1, 0, 0), row(6, 2, 1, 1), row(7, 3, 1, 1),
]


@pytest.mark.parametrize("cpus", [HW_LABELS, KUBELET_LABELS], ids=["hardware-labels", "kubelet-ids"])
def test_core_labels_map_to_kubelet_core_ids(cpus: list[dict[str, int]]) -> None:
    t = load_table({"cpus": cpus}).topology
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (8, 2, 4, 2)
    assert t.cpu_info[6] == CPUInfo(numa_node=1, socket=1, core=2, uncore_cache=1)
    assert [t.details.cpus_in_cores(c).list() for c in (0, 1, 2, 3)] == [[0, 4], [1, 5], [2, 6], [3, 7]]


def test_explicit_uncore_caches() -> None:
    cpus = [row(c, c, 0, 0, uncore=10 + c // 2) for c in range(4)]
    t = load_table({"cpus": cpus}).topology
    assert {c: i.uncore_cache for c, i in t.cpu_info.items()} == {0: 10, 1: 10, 2: 11, 3: 11}


def test_negative_ids_as_cadvisor_reports_them() -> None:
    """core, socket and uncoreCache are Go ints: -1 is an id like any other."""
    cpus = [row(0, -1, -1, 0), row(1, 0, -1, 0, uncore=-1), row(2, 0, 0, 0, uncore=4)]
    t = load_table({"cpus": cpus}).topology
    assert t.cpu_info[0] == CPUInfo(numa_node=0, socket=-1, core=0, uncore_cache=-1)
    assert t.cpu_info[1] == CPUInfo(numa_node=0, socket=-1, core=1, uncore_cache=-1)
    assert t.cpu_info[2] == CPUInfo(numa_node=0, socket=0, core=2, uncore_cache=4)
    assert (t.num_sockets, t.num_cores, t.num_uncore_caches) == (2, 3, 2)


def test_pools_larger_than_the_memory_are_kept() -> None:
    # as the sysfs form gives them, so that ``node discover``'s export of
    # such a tree loads back (tests/oracle/test_sysfs_wrap.py)
    m = load_table({"cpus": HW_LABELS, "memory": {0: {"memory": "1Gi", "hugepages-2Mi": "2Gi"},
                                                  1: {"memory": "1Gi", "hugepages-1Gi": str(1 << 63)}}})
    assert [(n.memory, dict(n.hugepages)) for n in m.numa_nodes] == [
        (GiB, {2 * MiB: 2 * GiB}), (GiB, {GiB: 1 << 63})]


def test_memory_hugepages_distances_and_memory_only_node() -> None:
    m = load_table({
        "cpus": HW_LABELS,
        "memory": {
            0: {"memory": "16Gi", "hugepages-2Mi": "1Gi", "hugepages-1Gi": 0},
            "1": {"memory": "8Gi"},
            2: {"memory": "64Gi"},
        },
        "distances": {0: [10, 21, 17], 1: [21, 10, 28], 2: [17, 28, 10]},
    })
    assert m.numa_ids() == [0, 1, 2]
    n0, n1, n2 = m.numa_nodes
    assert (n0.memory, dict(n0.hugepages)) == (16 * GiB, {2 * MiB: GiB, GiB: 0})
    assert (n1.memory, dict(n1.hugepages)) == (8 * GiB, {})
    assert n2.memory == 64 * GiB and tuple(n2.distances) == (17, 28, 10)
    assert m.topology.num_numa_nodes == 2


def test_node_without_memory_entry_has_zero() -> None:
    m = load_table({"cpus": HW_LABELS})
    assert [n.memory for n in m.numa_nodes] == [0, 0]
    assert not m.has_distances()


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"cpus": []}, "cpus"),
        ({"cpus": {}}, "cpus"),
        ({"cpus": [row(0, 0, 0, 0), {"id": 1, "core": 1, "socket": 0}]}, "cpus[1].numaNode"),
        ({"cpus": [row(0, 0, 0, 0), {**row(1, 1, 0, 0), "numa": 0}]}, "cpus[1].numa"),
        ({"cpus": [row(0, 0, 0, 0), row(0, 1, 0, 0)]}, "cpus[1].id"),
        ({"cpus": [row(0, 0, 0, 0), {**row(1, 1, 0, 0), "socket": "0"}]}, "cpus[1].socket"),
        ({"cpus": [row(0, 0, 0, 0), {**row(1, 1, 0, 0), "numaNode": -1}]}, "cpus[1].numaNode"),
        ({"cpus": [row(0, 0, 0, 0)], "cpuCapacity": 0}, "cpuCapacity"),
        ({"cpus": [row(0, 0, 0, 0), row(1, 1, 0, 0)], "cpuCapacity": 1}, "cpuCapacity"),
        ({"cpus": [row(0, 0, 0, 0)], "cpuCapacity": "2"}, "cpuCapacity"),
        ({"cpus": [row(0, 0, 0, 0), row(1, 1, 0, 0), row(2, 1, 0, 0, uncore=3)]}, "cpus[2].uncoreCache"),
        ({"cpus": HW_LABELS, "memory": {0: {"hugepages-2Mi": "1Gi"}}}, "memory.0.memory"),
        ({"cpus": HW_LABELS, "memory": {0: {"memory": "1Gi", "memroy": 1}}}, "memory.0.memroy"),
        ({"cpus": HW_LABELS, "memory": {"x": {"memory": "1Gi"}}}, "memory.x"),
        ({"cpus": HW_LABELS, "distances": {0: [10, 21]}}, "distances"),
        ({"cpus": HW_LABELS, "distances": {0: [10, 21], 1: []}}, "distances.1"),  # (a row as read: 1+ numbers)
        ({"cpus": HW_LABELS, "distances": {0: [10, 21], 1: [21, -1]}}, "distances.1[1]"),
    ],
)
def test_invalid(doc: dict[str, Any], path: str) -> None:
    with pytest.raises(InputError) as exc:
        load_table(doc)
    assert exc.value.path == path
