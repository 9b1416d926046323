"""machineinfo.py: cadvisor MachineInfo JSON -> the kubelet's CPUTopology.

The Discover cases are upstream's Test_Discover
(pkg/kubelet/cm/cpumanager/topology/topology_test.go), as data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from podnuma.errors import InputError
from podnuma.inputs.discover.machineinfo import (
    build_machine,
    discover,
    load_machine_info,
    parse_machine_info,
)
from podnuma.machine.topology import CPUInfo

Row = tuple[int, int, int, int]  # (core, socket, numa, uncore) as upstream's CPUInfo


def core(core_id: int, threads: list[int], socket: int, uncore: int | None) -> dict[str, Any]:
    doc: dict[str, Any] = {"core_id": core_id, "thread_ids": threads, "socket_id": socket}
    doc["uncore_caches"] = [] if uncore is None else [{"id": uncore}]
    return doc


def machine(num_cores: int, sockets: int, nodes: list[tuple[int, list[dict[str, Any]]]]) -> dict[str, Any]:
    return {
        "num_cores": num_cores,
        "num_sockets": sockets,
        "topology": [{"node_id": nid, "cores": cores} for nid, cores in nodes],
    }


def ht_pairs(
    numa_cores: list[tuple[int, int, list[int]]], offset: int, uncore: Callable[[int], int]
) -> list[tuple[int, list[dict[str, Any]]]]:
    """Nodes of cores whose threads are (c, c+offset); numa_cores: (node, socket, cadvisor ids)."""
    out = []
    cpu = 0
    for nid, socket, ids in numa_cores:
        cores = []
        for cid in ids:
            cores.append(core(cid, [cpu, cpu + offset], socket, uncore(cpu)))
            cpu += 1
        out.append((nid, cores))
    return out


# Xeon Gold 6230 cadvisor core ids, per NUMA node (two nodes per socket).
GOLD_A = [0, 1, 2, 8, 9, 16, 17, 18, 24, 25]
GOLD_B = [3, 4, 10, 11, 12, 19, 20, 26, 27, 28]


def _one_socket_ht(uncore: int | None) -> dict[str, Any]:
    return machine(8, 1, [(0, [core(i, [i, i + 4], 0, uncore) for i in range(4)])])


def _table(n: int, f: Callable[[int], Row]) -> dict[int, Row]:
    return {cpu: f(cpu) for cpu in range(n)}


DISCOVER_CASES: list[tuple[str, dict[str, Any], tuple[int, int, int, int, int], dict[int, Row]]] = [
    # name, MachineInfo, (NumCPUs, NumSockets, NumCores, NumNUMANodes, NumUncoreCache), CPUDetails
    (
        "EmptyUncoreCache",
        _one_socket_ht(None),
        (8, 1, 4, 1, 1),
        _table(8, lambda c: (c % 4, 0, 0, 0)),
    ),
    (
        "OneSocketHT",
        _one_socket_ht(0),
        (8, 1, 4, 1, 1),
        _table(8, lambda c: (c % 4, 0, 0, 0)),
    ),
    (
        "DualSocketMultiNumaPerSocketHT",
        machine(80, 2, ht_pairs(
            [(0, 0, GOLD_A), (1, 0, GOLD_B), (2, 1, GOLD_A), (3, 1, GOLD_B)], 40, lambda _: 0
        )),
        (80, 2, 40, 4, 1),
        _table(80, lambda c: (c % 40, (c % 40) // 20, (c % 40) // 10, 0)),
    ),
    (
        "DualNumaMultiSocketPerNumaHT",
        machine(80, 4, [
            (0, [core(cid, [i, i + 40], i // 10, 1) for i, cid in enumerate(GOLD_A + GOLD_B)]),
            (1, [core(cid, [i + 20, i + 60], 2 + i // 10, 1) for i, cid in enumerate(GOLD_A + GOLD_B)]),
        ]),
        (80, 4, 40, 2, 1),
        _table(80, lambda c: (c % 40, (c % 40) // 10, (c % 40) // 20, 1)),
    ),
    (
        "DualSocketNoHT",
        machine(4, 2, [
            (0, [core(0, [0], 0, 0), core(2, [2], 0, 0)]),
            (1, [core(1, [1], 1, 0), core(3, [3], 1, 0)]),
        ]),
        (4, 2, 4, 2, 1),
        {0: (0, 0, 0, 0), 1: (1, 1, 1, 0), 2: (2, 0, 0, 0), 3: (3, 1, 1, 0)},
    ),
    (
        "DualSocketHT - non unique Core'ID's",
        machine(12, 2, [
            (0, [core(i, [i, i + 6], 0, 0) for i in range(3)]),
            (1, [core(i, [i + 3, i + 9], 1, 0) for i in range(3)]),
        ]),
        (12, 2, 6, 2, 1),
        _table(12, lambda c: (c % 6, (c % 6) // 3, (c % 6) // 3, 0)),
    ),
    (
        # AMD EPYC 7452 (Rome), 4 cores per LLC, one socket, SMT off, NPS=1
        "UncoreOneSocketNoSMT",
        machine(32, 1, [(0, [core(i, [i], 0, i // 4) for i in range(32)])]),
        (32, 1, 32, 1, 8),
        _table(32, lambda c: (c, 0, 0, c // 4)),
    ),
    (
        # AMD EPYC 24-core, 4 cores per LLC, two sockets, SMT on, NPS=2
        "UncoreDualSocketSMT",
        machine(96, 2, [
            (n, [core(i, [i, i + 48], n // 2, i // 4) for i in range(12 * n, 12 * n + 12)])
            for n in range(4)
        ]),
        (96, 2, 48, 4, 12),
        _table(96, lambda c: (c % 48, (c % 48) // 24, (c % 48) // 12, (c % 48) // 4)),
    ),
]


@pytest.mark.parametrize(
    ("doc", "counts", "details"),
    [pytest.param(d, n, t, id=name) for name, d, n, t in DISCOVER_CASES],
)
def test_discover(doc: dict[str, Any], counts: tuple[int, ...], details: dict[int, Row]) -> None:
    topo = discover(parse_machine_info(doc))
    assert (
        topo.num_cpus,
        topo.num_sockets,
        topo.num_cores,
        topo.num_numa_nodes,
        topo.num_uncore_caches,
    ) == counts
    want = {cpu: CPUInfo(numa_node=n, socket=s, core=c, uncore_cache=u) for cpu, (c, s, n, u) in details.items()}
    assert topo.cpu_info == want


DISCOVER_ERRORS = [
    ("FailNumCores", {"num_cores": 0}, "could not detect number of cpus", "num_cores"),
    (
        "OneSocketHT fail (duplicate thread)",
        machine(8, 1, [(0, [core(0, [0, 4], 0, 1), core(1, [1, 5], 0, 1), core(2, [2, 2], 0, 1), core(3, [3, 7], 0, 1)])]),
        "cpus provided are not unique",
        "topology[0].cores[2].thread_ids",
    ),
    (
        "OneSocketHT fail (no threads)",
        machine(8, 1, [(0, [core(0, [0, 4], 0, 1), core(1, [1, 5], 0, 1), core(2, [2, 6], 0, 1), core(3, [], 0, 1)])]),
        "no cpus provided",
        "topology[0].cores[3].thread_ids",
    ),
]


@pytest.mark.parametrize(("doc", "message", "path"), [pytest.param(d, m, p, id=n) for n, d, m, p in DISCOVER_ERRORS])
def test_discover_errors(doc: dict[str, Any], message: str, path: str) -> None:
    with pytest.raises(InputError) as exc:
        discover(parse_machine_info(doc))
    assert exc.value.message == message
    assert exc.value.path == path


def test_uncore_cache_is_first_entry_whatever_its_level() -> None:
    doc = machine(2, 1, [(0, [core(0, [0], 0, None), core(1, [1], 0, None)])])
    doc["topology"][0]["cores"][0]["uncore_caches"] = [{"id": 7, "level": 3}, {"id": 9, "level": 4}]
    doc["topology"][0]["cores"][1]["uncore_caches"] = [{"id": 5, "level": 2}]
    topo = discover(parse_machine_info(doc))
    assert topo.cpu_info[0].uncore_cache == 7
    assert topo.cpu_info[1].uncore_cache == 5


def test_num_cpus_comes_from_num_cores_not_the_table() -> None:
    # cadvisor counts threads; the kubelet trusts that number as is.
    doc = machine(6, 3, [(0, [core(0, [0, 1], 0, None)])])
    topo = discover(parse_machine_info(doc))
    assert (topo.num_cpus, topo.num_sockets, topo.num_cores) == (6, 3, 1)
    assert topo.cpus().list() == [0, 1]


# A real cadvisor /api/v1.3/machine answer, abridged (2 sockets, 2 NUMA, HT).
CADVISOR_DOC: dict[str, Any] = {
    "num_cores": 8,
    "num_physical_cores": 4,
    "num_sockets": 2,
    "cpu_frequency_khz": 2400000,
    "memory_capacity": 8589934592,
    "machine_id": "abc",
    "hugepages": [{"page_size": 2048, "num_pages": 512}],
    "topology": [
        {
            "node_id": 0,
            "memory": 4294967296,
            "hugepages": [{"page_size": 1048576, "num_pages": 1}, {"page_size": 2048, "num_pages": 256}],
            "distances": [10, 21],
            "cores": [
                {"core_id": 0, "thread_ids": [0, 4], "socket_id": 0,
                 "caches": [{"id": 0, "size": 32768, "type": "Data", "level": 1}],
                 "uncore_caches": None, "book_id": "", "drawer_id": ""},
                {"core_id": 1, "thread_ids": [1, 5], "socket_id": 0},
            ],
            "caches": [{"id": 0, "size": 31457280, "type": "Unified", "level": 3}],
        },
        {
            "node_id": 1,
            "memory": 4294967296,
            "hugepages": [{"page_size": 1048576, "num_pages": 0}, {"page_size": 2048, "num_pages": 256}],
            "distances": [21, 10],
            "cores": [
                {"core_id": 0, "thread_ids": [6, 2], "socket_id": 1},
                {"core_id": 1, "thread_ids": [3, 7], "socket_id": 1},
            ],
            "caches": None,
        },
    ],
    "cloud_provider": "Unknown",
}


def test_machine_from_cadvisor_document() -> None:
    m = load_machine_info(CADVISOR_DOC, name="worker-1")
    assert m.name == "worker-1"
    assert m.topology.num_cpus == 8
    assert m.topology.details.cpus_in_numa_nodes(1).list() == [2, 3, 6, 7]
    assert m.topology.cpu_info[6] == CPUInfo(numa_node=1, socket=1, core=2, uncore_cache=1)
    n0, n1 = m.numa_nodes
    assert (n0.id, n0.memory, tuple(n0.distances)) == (0, 4 * 1024**3, (10, 21))
    assert dict(n0.hugepages) == {1024**3: 1024**3, 2 * 1024**2: 512 * 1024**2}
    assert dict(n1.hugepages) == {1024**3: 0, 2 * 1024**2: 512 * 1024**2}
    assert m.memory_capacity() == 8 * 1024**3
    assert m.has_distances()


def test_keys_match_case_insensitively_like_go() -> None:
    doc = {"Num_Cores": 2, "NUM_SOCKETS": 1, "Topology": [{"Node_Id": 0, "Cores": [{"Core_Id": 0, "Thread_Ids": [0, 1]}]}]}
    topo = discover(parse_machine_info(doc))
    assert topo.num_cpus == 2 and topo.cpu_info[1].core == 0


def test_memory_only_node_is_kept() -> None:
    doc = machine(2, 1, [(0, [core(0, [0, 1], 0, None)])])
    doc["topology"].append({"node_id": 1, "memory": 1024, "cores": []})
    m = build_machine(parse_machine_info(doc))
    assert m.numa_ids() == [0, 1]
    assert m.topology.num_numa_nodes == 1


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ([], ""),
        ({"num_cores": "8"}, "num_cores"),
        ({"num_cores": 8.0}, "num_cores"),
        ({"num_cores": True}, "num_cores"),
        ({"num_cores": -1}, "num_cores"),
        ({"num_cores": 1, "topology": {}}, "topology"),
        ({"num_cores": 1, "topology": [7]}, "topology[0]"),
        ({"num_cores": 1, "topology": [{"cores": [{"thread_ids": [0, "1"]}]}]}, "topology[0].cores[0].thread_ids[1]"),
        ({"num_cores": 1, "topology": [{"node_id": 0}, {"node_id": 0}]}, "topology[1].node_id"),
        ({"num_cores": 1, "topology": [{"hugepages": [{"page_size": 2048}, {"page_size": 2048}]}]}, "topology[0].hugepages[1]"),
        ({"num_cores": 1, "topology": [{"cores": [{"uncore_caches": [{"id": "x"}]}]}]}, "topology[0].cores[0].uncore_caches[0].id"),
    ],
)
def test_bad_documents(doc: object, path: str) -> None:
    with pytest.raises(InputError) as exc:
        parse_machine_info(doc)
    assert exc.value.path == path
