"""synthetic.py: the shorthand machine form."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.errors import InputError
from podnuma.inputs.discover.synthetic import load_synthetic
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUInfo

GiB = 1024**3
MiB = 1024**2


def spec(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 2}
    base.update(over)
    return base


def test_linux_x86_numbering() -> None:
    t = load_synthetic(spec()).topology
    assert (t.num_cpus, t.num_sockets, t.num_cores, t.num_numa_nodes) == (16, 2, 8, 2)
    for c in range(8):
        assert t.details.cpus_in_cores(c).list() == [c, c + 8]
    assert t.details.cpus_in_sockets(0) == CPUSet.parse("0-3,8-11")
    assert t.details.cpus_in_sockets(1) == CPUSet.parse("4-7,12-15")
    assert t.cpu_info[12] == CPUInfo(numa_node=1, socket=1, core=4, uncore_cache=1)


def test_four_threads_per_core() -> None:
    t = load_synthetic(spec(sockets=1, coresPerNumaNode=2, threadsPerCore=4)).topology
    assert t.details.cpus_in_cores(1).list() == [1, 3, 5, 7]


def test_numa_nodes_within_sockets_and_default_distances() -> None:
    m = load_synthetic(spec(numaNodesPerSocket=2, coresPerNumaNode=2, threadsPerCore=1))
    t = m.topology
    assert t.details.numa_nodes_in_sockets(1).list() == [2, 3]
    assert t.details.cpus_in_numa_nodes(3).list() == [6, 7]
    assert [tuple(n.distances) for n in m.numa_nodes] == [
        (10, 12, 21, 21),
        (12, 10, 21, 21),
        (21, 21, 10, 12),
        (21, 21, 12, 10),
    ]


def test_no_uncore_cache_means_socket() -> None:
    t = load_synthetic(spec()).topology
    assert all(i.uncore_cache == i.socket for i in t.cpu_info.values())


def test_uncore_caches_numbered_machine_wide() -> None:
    t = load_synthetic(spec(coresPerNumaNode=8, coresPerUncoreCache=4)).topology
    assert t.num_uncore_caches == 4
    assert t.details.cpus_in_uncore_caches(2) == CPUSet.parse("8-11,24-27")


def test_uncore_spanning_several_numa_nodes() -> None:
    t = load_synthetic(spec(sockets=1, numaNodesPerSocket=2, coresPerNumaNode=2, coresPerUncoreCache=4)).topology
    assert {i.uncore_cache for i in t.cpu_info.values()} == {0}


def test_uncore_equal_to_numa_node_is_a_node_cache_for_cadvisor() -> None:
    # An L3 shared by exactly the node's CPUs is filed as a node cache: socket id.
    t = load_synthetic(spec(numaNodesPerSocket=2, coresPerNumaNode=4, coresPerUncoreCache=4)).topology
    assert {c: i.uncore_cache for c, i in t.cpu_info.items() if c < 16} == {
        c: (0 if c < 8 else 1) for c in range(16)
    }


def test_pools_larger_than_the_memory_are_kept() -> None:
    # as the sysfs form and the kubelet take them (the kubelet's allocatable
    # memory floors at 0; tests/oracle/test_sysfs_wrap.py)
    m = load_synthetic(spec(memoryPerNumaNode="8Gi", hugepagesPerNumaNode={"hugepages-2Mi": "128Gi"}))
    assert {(n.memory, tuple(n.hugepages.items())) for n in m.numa_nodes} == {(8 * GiB, ((2 * MiB, 128 * GiB),))}


def test_memory_and_hugepages() -> None:
    m = load_synthetic(spec(memoryPerNumaNode="32Gi", hugepagesPerNumaNode={"hugepages-2Mi": "1Gi", "hugepages-1Gi": "2Gi"}))
    for n in m.numa_nodes:
        assert n.memory == 32 * GiB
        assert dict(n.hugepages) == {2 * MiB: GiB, GiB: 2 * GiB}
    assert m.memory_capacity() == 64 * GiB


def test_default_memory() -> None:
    m = load_synthetic(spec())
    assert [n.memory for n in m.numa_nodes] == [64 * GiB, 64 * GiB]
    assert all(dict(n.hugepages) == {} for n in m.numa_nodes)


@pytest.mark.parametrize("distances", [[[10, 32], [32, 10]], {0: [10, 32], "1": [32, 10]}])
def test_explicit_distances(distances: object) -> None:
    m = load_synthetic(spec(distances=distances))
    assert [tuple(n.distances) for n in m.numa_nodes] == [(10, 32), (32, 10)]


@pytest.mark.parametrize(
    ("over", "path"),
    [
        ({"coresPerNuma": 4}, "synthetic.coresPerNuma"),
        ({"sockets": 0}, "synthetic.sockets"),
        ({"threadsPerCore": "2"}, "synthetic.threadsPerCore"),
        ({"threadsPerCore": True}, "synthetic.threadsPerCore"),
        ({"coresPerUncoreCache": 3}, "synthetic.coresPerUncoreCache"),
        ({"memoryPerNumaNode": "lots"}, "synthetic.memoryPerNumaNode"),
        ({"memoryPerNumaNode": "-1Gi"}, "synthetic.memoryPerNumaNode"),
        ({"hugepagesPerNumaNode": {"huge-2Mi": "1Gi"}}, "synthetic.hugepagesPerNumaNode.huge-2Mi"),
        ({"hugepagesPerNumaNode": {"hugepages-2Mi": "3Mi"}}, "synthetic.hugepagesPerNumaNode.hugepages-2Mi"),
        ({"distances": [[10, 21]]}, "synthetic.distances"),
        ({"distances": [[10, 21], [21]]}, "synthetic.distances[1]"),
        ({"distances": [[10, 21], [21, 0]]}, "synthetic.distances[1][1]"),
        ({"distances": {0: [10, 21], 5: [21, 10]}}, "synthetic.distances.5"),
    ],
)
def test_invalid(over: dict[str, Any], path: str) -> None:
    with pytest.raises(InputError) as exc:
        load_synthetic(spec(**over))
    assert exc.value.path == path


def test_missing_required_field() -> None:
    doc = spec()
    del doc["threadsPerCore"]
    with pytest.raises(InputError) as exc:
        load_synthetic(doc)
    assert exc.value.path == "synthetic.threadsPerCore"


def test_not_a_mapping() -> None:
    with pytest.raises(InputError) as exc:
        load_synthetic([1, 2])
    assert exc.value.path == "synthetic"
