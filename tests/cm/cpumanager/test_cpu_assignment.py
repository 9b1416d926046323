"""Tables ported from upstream's cpu_assignment_test.go (kubelet v1.37).

Every case keeps upstream's description, topology, available CPUs, request
and expected CPU set / error text.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from podnuma.cm.cpumanager.cpu_assignment import (
    CPUAccumulator,
    CPUAllocationError,
    CPUSortingStrategy,
    _GoSlice,
    iterate_combinations,
    standard_deviation,
    take_by_topology_numa_distributed,
    take_by_topology_numa_packed,
)
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUTopology
from tests.cm.cpumanager.topologies import (
    FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT as FAKE_MULTI_SOCKET_PER_NUMA,
)
from tests.cm.cpumanager.topologies import (
    TOPO_DUAL_SOCKET_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE,
    TOPO_DUAL_SOCKET_NO_HT,
    TOPO_QUAD_SOCKET_FOUR_WAY_HT,
    TOPO_SINGLE_SOCKET_HT,
    TOPO_TRIPLE_SOCKET_HT,
    TOPO_UNCORE_DUAL_SOCKET_NO_SMT,
    TOPO_UNCORE_SINGLE_SOCKET_MULTI_NUMA,
    TOPO_UNCORE_SINGLE_SOCKET_NO_SMT,
    TOPO_UNCORE_SINGLE_SOCKET_SMT,
)

MULTI_NUMA = TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT
PACKED = CPUSortingStrategy.PACKED
SPREAD = CPUSortingStrategy.SPREAD


def cs(text: str) -> CPUSet:
    return CPUSet.parse(text)


def ids(cases: Sequence[tuple[object, ...]]) -> list[str]:
    return [str(c[0]) for c in cases]


# -- TestCPUAccumulatorFreeSockets (result sorted before comparing) ------------------
FREE_SOCKETS: list[tuple[str, CPUTopology, str, list[int]]] = [
    ("single socket HT, 1 socket free", TOPO_SINGLE_SOCKET_HT, "0-7", [0]),
    ("single socket HT, 0 sockets free", TOPO_SINGLE_SOCKET_HT, "1-7", []),
    ("dual socket HT, 2 sockets free", TOPO_DUAL_SOCKET_HT, "0-11", [0, 1]),
    ("dual socket HT, 1 socket free", TOPO_DUAL_SOCKET_HT, "0-9,11", [1]),
    ("dual socket HT, 0 sockets free", TOPO_DUAL_SOCKET_HT, "0,2-9,11", []),
    ("dual socket, multi numa per socket, HT, 2 sockets free", MULTI_NUMA, "0-79", [0, 1]),
    ("dual socket, multi numa per socket, HT, 1 sockets free", MULTI_NUMA, "1-79", [1]),
    ("dual socket, multi numa per socket, HT, 0 sockets free", MULTI_NUMA, "1-78", []),
    (
        "dual numa, multi socket per per socket, HT, 4 sockets free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "0-79",
        [0, 1, 2, 3],
    ),
    (
        "dual numa, multi socket per per socket, HT, 3 sockets free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "0-19,21-79",
        [0, 1, 3],
    ),
    (
        "dual numa, multi socket per per socket, HT, 2 sockets free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "0-59,61-78",
        [0, 1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 1 sockets free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "1-19,21-38,41-60,61-78",
        [1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 0 sockets free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "0-40,42-49,51-68,71-79",
        [],
    ),
]


@pytest.mark.parametrize(("desc", "topo", "avail", "expect"), FREE_SOCKETS, ids=ids(FREE_SOCKETS))
def test_free_sockets(desc: str, topo: CPUTopology, avail: str, expect: list[int]) -> None:
    acc = CPUAccumulator(topo, cs(avail), 0, PACKED)
    assert sorted(acc.free_sockets()) == expect


# -- TestCPUAccumulatorFreeNUMANodes (order matters) ---------------------------------
FREE_NUMA: list[tuple[str, CPUTopology, str, list[int]]] = [
    ("single socket HT, 1 NUMA node free", TOPO_SINGLE_SOCKET_HT, "0-7", [0]),
    ("single socket HT, 0 NUMA Node free", TOPO_SINGLE_SOCKET_HT, "1-7", []),
    ("dual socket HT, 2 NUMA Node free", TOPO_DUAL_SOCKET_HT, "0-11", [0, 1]),
    ("dual socket HT, 1 NUMA Node free", TOPO_DUAL_SOCKET_HT, "0-9,11", [1]),
    ("dual socket HT, 0 NUMA node free", TOPO_DUAL_SOCKET_HT, "0,2-9,11", []),
    ("dual socket, multi numa per socket, HT, 4 NUMA Node free", MULTI_NUMA, "0-79", [0, 1, 2, 3]),
    ("dual socket, multi numa per socket, HT, 3 NUMA node free", MULTI_NUMA, "1-79", [1, 2, 3]),
    ("dual socket, multi numa per socket, HT, 2 NUMA node free", MULTI_NUMA, "1-9,11-79", [2, 3]),
    (
        "dual socket, multi numa per socket, HT, 1 NUMA node free",
        MULTI_NUMA,
        "1-9,11-59,61-79",
        [3],
    ),
    ("dual socket, multi numa per socket, HT, 0 NUMA node free", MULTI_NUMA, "1-9,11-59,61-78", []),
    (
        "dual numa, multi socket per per socket, HT, 2 NUMA node free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "0-79",
        [0, 1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 1 NUMA node free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "0-9,11-79",
        [1],
    ),
    (
        "dual numa, multi socket per per socket, HT, 0 sockets free",
        FAKE_MULTI_SOCKET_PER_NUMA,
        "0-9,11-59,61-79",
        [],
    ),
]


@pytest.mark.parametrize(("desc", "topo", "avail", "expect"), FREE_NUMA, ids=ids(FREE_NUMA))
def test_free_numa_nodes(desc: str, topo: CPUTopology, avail: str, expect: list[int]) -> None:
    acc = CPUAccumulator(topo, cs(avail), 0, PACKED)
    assert acc.free_numa_nodes() == expect


# -- TestCPUAccumulatorFreeSocketsAndNUMANodes ---------------------------------------
FREE_SOCKETS_AND_NUMA: list[tuple[str, CPUTopology, str, list[int], list[int]]] = [
    (
        "dual socket, multi numa per socket, HT, 2 Socket/4 NUMA Node free",
        MULTI_NUMA,
        "0-79",
        [0, 1],
        [0, 1, 2, 3],
    ),
    (
        "dual socket, multi numa per socket, HT, 1 Socket/3 NUMA node free",
        MULTI_NUMA,
        "1-79",
        [1],
        [1, 2, 3],
    ),
    (
        "dual socket, multi numa per socket, HT, 1 Socket/ 2 NUMA node free",
        MULTI_NUMA,
        "1-9,11-79",
        [1],
        [2, 3],
    ),
    (
        "dual socket, multi numa per socket, HT, 0 Socket/ 2 NUMA node free",
        MULTI_NUMA,
        "1-59,61-79",
        [],
        [1, 3],
    ),
]


@pytest.mark.parametrize(
    ("desc", "topo", "avail", "sockets", "numas"),
    FREE_SOCKETS_AND_NUMA,
    ids=ids(FREE_SOCKETS_AND_NUMA),
)
def test_free_sockets_and_numa_nodes(
    desc: str, topo: CPUTopology, avail: str, sockets: list[int], numas: list[int]
) -> None:
    acc = CPUAccumulator(topo, cs(avail), 0, PACKED)
    assert acc.free_numa_nodes() == numas
    assert acc.free_sockets() == sockets


# -- TestCPUAccumulatorFreeCores ---------------------------------------------------------
FREE_CORES: list[tuple[str, CPUTopology, str, list[int]]] = [
    ("single socket HT, 4 cores free", TOPO_SINGLE_SOCKET_HT, "0-7", [0, 1, 2, 3]),
    ("single socket HT, 3 cores free", TOPO_SINGLE_SOCKET_HT, "0-2,4-6", [0, 1, 2]),
    (
        "single socket HT, 3 cores free (1 partially consumed)",
        TOPO_SINGLE_SOCKET_HT,
        "0-6",
        [0, 1, 2],
    ),
    ("single socket HT, 0 cores free", TOPO_SINGLE_SOCKET_HT, "", []),
    ("single socket HT, 0 cores free (4 partially consumed)", TOPO_SINGLE_SOCKET_HT, "0-3", []),
    ("dual socket HT, 6 cores free", TOPO_DUAL_SOCKET_HT, "0-11", [0, 2, 4, 1, 3, 5]),
    (
        "dual socket HT, 5 cores free (1 consumed from socket 0)",
        TOPO_DUAL_SOCKET_HT,
        "1-5,7-11",
        [2, 4, 1, 3, 5],
    ),
    (
        "dual socket HT, 4 cores free (1 consumed from each socket)",
        TOPO_DUAL_SOCKET_HT,
        "2-5,8-11",
        [2, 4, 3, 5],
    ),
]


@pytest.mark.parametrize(("desc", "topo", "avail", "expect"), FREE_CORES, ids=ids(FREE_CORES))
def test_free_cores(desc: str, topo: CPUTopology, avail: str, expect: list[int]) -> None:
    acc = CPUAccumulator(topo, cs(avail), 0, PACKED)
    assert acc.free_cores() == expect


# -- TestCPUAccumulatorFreeCPUs -----------------------------------------------------------
FREE_CPUS: list[tuple[str, CPUTopology, str, list[int]]] = [
    ("single socket HT, 8 cpus free", TOPO_SINGLE_SOCKET_HT, "0-7", [0, 4, 1, 5, 2, 6, 3, 7]),
    ("single socket HT, 5 cpus free", TOPO_SINGLE_SOCKET_HT, "3-7", [4, 5, 6, 3, 7]),
    (
        "dual socket HT, 12 cpus free",
        TOPO_DUAL_SOCKET_HT,
        "0-11",
        [0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11],
    ),
    (
        "dual socket HT, 11 cpus free",
        TOPO_DUAL_SOCKET_HT,
        "1-11",
        [6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11],
    ),
    (
        "dual socket HT, 10 cpus free",
        TOPO_DUAL_SOCKET_HT,
        "1-5,7-11",
        [2, 8, 4, 10, 1, 7, 3, 9, 5, 11],
    ),
    (
        "triple socket HT, 12 cpus free",
        TOPO_TRIPLE_SOCKET_HT,
        "0-3,6-13",
        [12, 13, 0, 1, 2, 3, 6, 7, 8, 9, 10, 11],
    ),
]


@pytest.mark.parametrize(("desc", "topo", "avail", "expect"), FREE_CPUS, ids=ids(FREE_CPUS))
def test_free_cpus(desc: str, topo: CPUTopology, avail: str, expect: list[int]) -> None:
    acc = CPUAccumulator(topo, cs(avail), 0, PACKED)
    assert acc.free_cpus() == expect


# -- TestCPUAccumulatorTake -------------------------------------------------------------------
TAKE: list[tuple[str, CPUTopology, str, list[str], int, bool, bool]] = [
    (
        "take 0 cpus from a single socket HT, require 1",
        TOPO_SINGLE_SOCKET_HT,
        "0-7",
        [""],
        1,
        False,
        False,
    ),
    (
        "take 0 cpus from a single socket HT, require 1, none available",
        TOPO_SINGLE_SOCKET_HT,
        "",
        [""],
        1,
        False,
        True,
    ),
    (
        "take 1 cpu from a single socket HT, require 1",
        TOPO_SINGLE_SOCKET_HT,
        "0-7",
        ["0"],
        1,
        True,
        False,
    ),
    (
        "take 1 cpu from a single socket HT, require 2",
        TOPO_SINGLE_SOCKET_HT,
        "0-7",
        ["0"],
        2,
        False,
        False,
    ),
    (
        "take 2 cpu from a single socket HT, require 4, expect failed",
        TOPO_SINGLE_SOCKET_HT,
        "0-2",
        ["0", "1"],
        4,
        False,
        True,
    ),
    (
        "take all cpus one at a time from a single socket HT, require 8",
        TOPO_SINGLE_SOCKET_HT,
        "0-7",
        ["0", "1", "2", "3", "4", "5", "6", "7"],
        8,
        True,
        False,
    ),
]


@pytest.mark.parametrize(
    ("desc", "topo", "avail", "takes", "num_cpus", "satisfied", "failed"), TAKE, ids=ids(TAKE)
)
def test_take(
    desc: str,
    topo: CPUTopology,
    avail: str,
    takes: list[str],
    num_cpus: int,
    satisfied: bool,
    failed: bool,
) -> None:
    acc = CPUAccumulator(topo, cs(avail), num_cpus, PACKED)
    total = 0
    for t in takes:
        acc.take(cs(t))
        total += cs(t).size()
    assert acc.is_satisfied() is satisfied
    assert acc.is_failed() is failed
    for t in takes:
        assert (cs(t) & acc.details.cpus()).is_empty()
        assert cs(t).is_subset_of(acc.result)
    assert acc.num_cpus_needed == num_cpus - total


# -- commonTakeByTopologyTestCases ------------------------------------------------------------
# (description, topology, available, request, expected error, expected CPUs)
Case = tuple[str, CPUTopology, str, int, str, str]
COMMON: list[Case] = [
    (
        "take more cpus than are available from single socket with HT",
        TOPO_SINGLE_SOCKET_HT,
        "0,2,4,6",
        5,
        "not enough cpus available to satisfy request: requested=5, available=4",
        "",
    ),
    ("take zero cpus from single socket with HT", TOPO_SINGLE_SOCKET_HT, "0-7", 0, "", ""),
    ("take one cpu from single socket with HT", TOPO_SINGLE_SOCKET_HT, "0-7", 1, "", "0"),
    (
        "take one cpu from single socket with HT, some cpus are taken",
        TOPO_SINGLE_SOCKET_HT,
        "1,3,5,6,7",
        1,
        "",
        "6",
    ),
    ("take two cpus from single socket with HT", TOPO_SINGLE_SOCKET_HT, "0-7", 2, "", "0,4"),
    ("take all cpus from single socket with HT", TOPO_SINGLE_SOCKET_HT, "0-7", 8, "", "0-7"),
    (
        "take two cpus from single socket with HT, only one core totally free",
        TOPO_SINGLE_SOCKET_HT,
        "0-3,6",
        2,
        "",
        "2,6",
    ),
    (
        "take a socket of cpus from dual socket with HT",
        TOPO_DUAL_SOCKET_HT,
        "0-11",
        6,
        "",
        "0,2,4,6,8,10",
    ),
    (
        "take a socket of cpus from dual socket with multi-numa-per-socket with HT",
        MULTI_NUMA,
        "0-79",
        40,
        "",
        "0-19,40-59",
    ),
    (
        "take a NUMA node of cpus from dual socket with multi-numa-per-socket with HT",
        MULTI_NUMA,
        "0-79",
        20,
        "",
        "0-9,40-49",
    ),
    (
        "take a NUMA node of cpus from dual socket with multi-numa-per-socket with HT, "
        "with 1 NUMA node already taken",
        MULTI_NUMA,
        "10-39,50-79",
        20,
        "",
        "10-19,50-59",
    ),
    (
        "take a socket and a NUMA node of cpus from dual socket with multi-numa-per-socket with HT",
        MULTI_NUMA,
        "0-79",
        60,
        "",
        "0-29,40-69",
    ),
    (
        "take a socket and a NUMA node of cpus from dual socket with multi-numa-per-socket with HT, "
        "a core taken",
        MULTI_NUMA,
        "1-39,41-79",
        60,
        "",
        "10-39,50-79",
    ),
]

# (description, topology, prefer uncore alignment, available, request, error, expected)
PackedCase = tuple[str, CPUTopology, bool, str, int, str, str]
PACKED_CASES: list[PackedCase] = [(d, t, False, a, n, e, r) for d, t, a, n, e, r in COMMON] + [
    (
        "take one cpu from dual socket with HT - core from Socket 0",
        TOPO_DUAL_SOCKET_HT,
        False,
        "1-5,7-11",
        1,
        "",
        "2",
    ),
    (
        "allocate 4 full cores with 3 coming from the first NUMA node (filling it up) and 1 coming "
        "from the second NUMA node",
        TOPO_DUAL_SOCKET_HT,
        False,
        "0-11",
        8,
        "",
        "0,6,2,8,4,10,1,7",
    ),
    (
        "allocate 32 full cores with 30 coming from the first 3 NUMA nodes (filling them up) and 2 "
        "coming from the fourth NUMA node",
        MULTI_NUMA,
        False,
        "0-79",
        64,
        "",
        "0-29,40-69,30,31,70,71",
    ),
    # PreferAlignByUncoreCache
    (
        "take cpus from two full UncoreCaches and partial from a single UncoreCache",
        TOPO_UNCORE_SINGLE_SOCKET_NO_SMT,
        True,
        "1-15",
        10,
        "",
        "1,2,4,5,6,7,8,9,10,11",
    ),
    (
        "take one cpu from dual socket with HT - core from Socket 0 (uncore)",
        TOPO_DUAL_SOCKET_HT,
        True,
        "1-5,7-11",
        1,
        "",
        "1",
    ),
    (
        "take first available UncoreCache from first socket",
        TOPO_UNCORE_DUAL_SOCKET_NO_SMT,
        True,
        "0-15",
        4,
        "",
        "0-3",
    ),
    (
        "take all available UncoreCache from first socket",
        TOPO_UNCORE_DUAL_SOCKET_NO_SMT,
        True,
        "2-15",
        6,
        "",
        "2-7",
    ),
    (
        "take first available UncoreCache from second socket",
        TOPO_UNCORE_DUAL_SOCKET_NO_SMT,
        True,
        "8-15",
        4,
        "",
        "8-11",
    ),
    (
        "take first available UncoreCache from available NUMA",
        TOPO_UNCORE_SINGLE_SOCKET_MULTI_NUMA,
        True,
        "3,4-8,12",
        2,
        "",
        "4,5",
    ),
    (
        "take cpus from best available UncoreCache group of multi uncore cache single socket - "
        "SMT enabled",
        TOPO_UNCORE_SINGLE_SOCKET_SMT,
        True,
        "2-3,10-11,4-7,12-15",
        6,
        "",
        "4,5,6,12,13,14",
    ),
    (
        "take cpus from multiple UncoreCache of single socket - SMT enabled",
        TOPO_UNCORE_SINGLE_SOCKET_SMT,
        True,
        "1-7,9-15",
        10,
        "",
        "4-7,12-15,1,9",
    ),
]


def _check(result: CPUSet | None, err: str | None, exp_err: str, exp: str) -> None:
    if exp_err:
        assert err == exp_err
        assert result is None
    else:
        assert err is None
        assert result == cs(exp)


@pytest.mark.parametrize(
    ("desc", "topo", "uncore", "avail", "num_cpus", "exp_err", "exp"),
    PACKED_CASES,
    ids=ids(PACKED_CASES),
)
def test_take_by_topology_numa_packed(
    desc: str, topo: CPUTopology, uncore: bool, avail: str, num_cpus: int, exp_err: str, exp: str
) -> None:
    result: CPUSet | None = None
    err: str | None = None
    try:
        result = take_by_topology_numa_packed(topo, cs(avail), num_cpus, PACKED, uncore)
    except CPUAllocationError as e:
        err = str(e)
    _check(result, err, exp_err, exp)


# -- TestTakeByTopologyWithSpreadPhysicalCPUsPreferredOption ----------------------------------
SPREAD_CASES: list[Case] = [
    (
        "take a socket of cpus from single socket with HT, 3 cpus",
        TOPO_SINGLE_SOCKET_HT,
        "0-7",
        3,
        "",
        "0-2",
    ),
    (
        "take a socket of cpus from dual socket with HT, 2 cpus",
        TOPO_DUAL_SOCKET_HT,
        "0-11",
        2,
        "",
        "0,2",
    ),
    (
        "take a socket of cpus from dual socket with HT, 3 cpus",
        TOPO_DUAL_SOCKET_HT,
        "0-11",
        3,
        "",
        "0,2,4",
    ),
    (
        "take a socket of cpus from dual socket with HT, 6 cpus",
        TOPO_DUAL_SOCKET_HT,
        "0-11",
        6,
        "",
        "0,2,4,6,8,10",
    ),
    (
        "take cpus from dual socket with HT, 8 cpus",
        TOPO_DUAL_SOCKET_HT,
        "0-11",
        8,
        "",
        "0,2,4,6,8,10,1,3",
    ),
    (
        "take a socket of cpus from dual socket without HT, 2 cpus",
        TOPO_DUAL_SOCKET_NO_HT,
        "0-7",
        2,
        "",
        "0,1",
    ),
    (
        "take a socket of cpus from dual socket with multi numa per socket and HT, 12 cpus",
        MULTI_NUMA,
        "0-79",
        8,
        "",
        "0-7",
    ),
    (
        "take a socket of cpus from quad socket four way with HT, 12 cpus",
        TOPO_QUAD_SOCKET_FOUR_WAY_HT,
        "0-287",
        12,
        "",
        "0-2,9-10,13-14,21-22,25-26,33",
    ),
]


@pytest.mark.parametrize(
    ("desc", "topo", "avail", "num_cpus", "exp_err", "exp"), SPREAD_CASES, ids=ids(SPREAD_CASES)
)
def test_take_by_topology_spread(
    desc: str, topo: CPUTopology, avail: str, num_cpus: int, exp_err: str, exp: str
) -> None:
    result: CPUSet | None = None
    err: str | None = None
    try:
        result = take_by_topology_numa_packed(topo, cs(avail), num_cpus, SPREAD, False)
    except CPUAllocationError as e:
        err = str(e)
    _check(result, err, exp_err, exp)


# -- commonTakeByTopologyExtendedTestCases + TestTakeByTopologyNUMADistributed -----------------
# (description, topology, available, request, group size, error, expected)
DistCase = tuple[str, CPUTopology, str, int, int, str, str]
DISTRIBUTED: list[DistCase] = [(d, t, a, n, 1, e, r) for d, t, a, n, e, r in COMMON] + [
    (
        "allocate 4 full cores with 2 distributed across each NUMA node",
        TOPO_DUAL_SOCKET_HT,
        "0-11",
        8,
        1,
        "",
        "0,6,2,8,1,7,3,9",
    ),
    (
        "allocate 32 full cores with 8 distributed across each NUMA node",
        MULTI_NUMA,
        "0-79",
        64,
        1,
        "",
        "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77",
    ),
    (
        "allocate 24 full cores with 8 distributed across the first 3 NUMA nodes",
        MULTI_NUMA,
        "0-79",
        48,
        1,
        "",
        "0-7,10-17,20-27,40-47,50-57,60-67",
    ),
    (
        "allocate 24 full cores with 8 distributed across the first 3 NUMA nodes (taking all but 2 "
        "from the first NUMA node)",
        MULTI_NUMA,
        "1-29,32-39,41-69,72-79",
        48,
        1,
        "",
        "1-8,10-17,20-27,41-48,50-57,60-67",
    ),
    (
        "allocate 24 full cores with 8 distributed across the last 3 NUMA nodes (even though all 8 "
        "could be allocated from the first NUMA node)",
        MULTI_NUMA,
        "2-29,31-39,42-69,71-79",
        48,
        1,
        "",
        "10-17,20-27,31-38,50-57,60-67,71-78",
    ),
    (
        "allocate 8 full cores with 2 distributed across each NUMA node",
        MULTI_NUMA,
        "0-2,10-12,20-22,30-32,40-41,50-51,60-61,70-71",
        16,
        1,
        "",
        "0-1,10-11,20-21,30-31,40-41,50-51,60-61,70-71",
    ),
    (
        "allocate 8 full cores with 2 distributed across each NUMA node (repeated upstream)",
        MULTI_NUMA,
        "0-2,10-12,20-22,30-32,40-41,50-51,60-61,70-71",
        16,
        1,
        "",
        "0-1,10-11,20-21,30-31,40-41,50-51,60-61,70-71",
    ),
    # TestTakeByTopologyNUMADistributed's own cases
    (
        "take one cpu from dual socket with HT - core from Socket 0",
        TOPO_DUAL_SOCKET_HT,
        "1-5,7-11",
        1,
        1,
        "",
        "1",
    ),
    (
        "take one cpu from dual socket with HT - core from Socket 0 - cpuGroupSize 2",
        TOPO_DUAL_SOCKET_HT,
        "1-5,7-11",
        1,
        2,
        "",
        "2",
    ),
    (
        "allocate 13 full cores distributed across the first 2 NUMA nodes",
        MULTI_NUMA,
        "0-79",
        26,
        1,
        "",
        "0-6,10-16,40-45,50-55",
    ),
    (
        "allocate 13 full cores distributed across the first 2 NUMA nodes (cpuGroupSize 2)",
        MULTI_NUMA,
        "0-79",
        26,
        2,
        "",
        "0-6,10-15,40-46,50-55",
    ),
    (
        "allocate 31 full cores with 15 CPUs distributed across each NUMA node and 1 CPU spilling "
        "over to each of NUMA 0, 1",
        MULTI_NUMA,
        "0-79",
        62,
        1,
        "",
        "0-7,10-17,20-27,30-37,40-47,50-57,60-66,70-76",
    ),
    (
        "allocate 31 full cores with 14 CPUs distributed across each NUMA node and 2 CPUs spilling "
        "over to each of NUMA 0, 1, 2 (cpuGroupSize 2)",
        MULTI_NUMA,
        "0-79",
        62,
        2,
        "",
        "0-7,10-17,20-27,30-36,40-47,50-57,60-67,70-76",
    ),
    (
        "allocate 31 full cores with 15 CPUs distributed across each NUMA node and 1 CPU spilling "
        "over to each of NUMA 2, 3 (to keep balance)",
        MULTI_NUMA,
        "0-8,10-18,20-39,40-48,50-58,60-79",
        62,
        1,
        "",
        "0-7,10-17,20-27,30-37,40-46,50-56,60-67,70-77",
    ),
    (
        "allocate 31 full cores with 14 CPUs distributed across each NUMA node and 2 CPUs spilling "
        "over to each of NUMA 0, 2, 3 (to keep balance with cpuGroupSize 2)",
        MULTI_NUMA,
        "0-8,10-18,20-39,40-48,50-58,60-79",
        62,
        2,
        "",
        "0-7,10-16,20-27,30-37,40-47,50-56,60-67,70-77",
    ),
    (
        "ensure bestRemainder chosen with NUMA nodes that have enough CPUs to satisfy the request",
        MULTI_NUMA,
        "0-3,10-13,20-23,30-36,40-43,50-53,60-63,70-76",
        34,
        1,
        "",
        "0-3,10-13,20-23,30-34,40-43,50-53,60-63,70-74",
    ),
    (
        "ensure previous failure encountered on live machine has been fixed (1/1)",
        TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE,
        "0,128,30,31,158,159,43-47,171-175,62,63,190,191,75-79,203-207,94,96,222,223,101-111,"
        "229-239,126,127,254,255",
        28,
        1,
        "",
        "43-47,75-79,96,101-105,171-174,203-206,229-232",
    ),
]


@pytest.mark.parametrize(
    ("desc", "topo", "avail", "num_cpus", "group", "exp_err", "exp"),
    DISTRIBUTED,
    ids=ids(DISTRIBUTED),
)
def test_take_by_topology_numa_distributed(
    desc: str, topo: CPUTopology, avail: str, num_cpus: int, group: int, exp_err: str, exp: str
) -> None:
    result: CPUSet | None = None
    err: str | None = None
    try:
        result = take_by_topology_numa_distributed(topo, cs(avail), num_cpus, group, PACKED)
    except CPUAllocationError as e:
        err = str(e)
    _check(result, err, exp_err, exp)


# -- iteration order and Go slice sharing (checked against a Go 1.19 run) ------------------
def _stored_combos(items: list[int], k: int, stop_after: int = 0) -> list[list[int]]:
    """Keep every view handed out (as upstream keeps its best combo) and read
    them after the walk; ``stop_after`` > 0 breaks at that call."""
    kept = []
    calls = 0

    def visit(view: _GoSlice) -> bool:
        nonlocal calls
        calls += 1
        if stop_after and calls > stop_after:
            return True
        kept.append(view)
        return False

    iterate_combinations(items, k, visit)
    return [v.values() for v in kept]


def test_iterate_combinations_order() -> None:
    seen: list[list[int]] = []

    def visit(view: _GoSlice) -> bool:
        seen.append(list(view.values()))
        return False

    iterate_combinations([0, 1, 2, 3], 2, visit)
    assert seen == [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    assert _stored_combos([0, 1, 2], 0) == []


def test_iterate_combinations_views_alias_like_go_slices() -> None:
    n = [10, 11, 12, 13, 14, 15, 16, 17, 18]
    # up to 3 elements every subset has its own array
    assert _stored_combos(n, 3)[:3] == [[10, 11, 12], [10, 11, 13], [10, 11, 14]]
    # 4-element subsets share their parent's array: a kept view shows the last
    # sibling written (Go prints the same for this walk)
    assert _stored_combos(n, 4, stop_after=14) == (
        [[10, 11, 12, 18]] * 6 + [[10, 11, 13, 18]] * 5 + [[10, 11, 14, 18]] * 3
    )
    # breaking leaves the view with the value written for the call that broke
    assert _stored_combos(n, 4, stop_after=2) == [[10, 11, 12, 15]] * 2


def test_standard_deviation_rounding() -> None:
    # mean and result are both rounded to 3 decimals, halves away from zero
    assert standard_deviation([0, 0, 0, 0]) == 0.0
    assert standard_deviation([1, 2]) == 0.5
    assert standard_deviation([0, 0, 1]) == 0.471
    assert standard_deviation([1, 1, 1, 2, 2, 2, 2]) == 0.495


# -- behaviours beyond upstream's tables ---------------------------------------------------
def test_distributed_keeps_the_aliased_best_combo() -> None:
    # 8 equal NUMA nodes, 100 CPUs -> 4 nodes of 25. Every 4-combination
    # scores the same, so [0,1,2,3] (the first) stays best, but the kept view
    # shares its array with the later siblings [0,1,2,4..7]: upstream then
    # allocates from NUMA 0, 1, 2 and 7.
    topo = TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE
    result = take_by_topology_numa_distributed(topo, topo.cpus(), 100, 1, PACKED)
    assert result == cs("0-12,16-28,32-44,112-124,128-139,144-155,160-171,240-251")


def test_distributed_align_by_socket_prefers_one_socket() -> None:
    # NUMA 0/1 (socket 0) have 30 free CPUs, NUMA 2 (socket 1) 20: without
    # alignment the best-balanced pair spans sockets; with it, socket 0 wins.
    avail = cs("0-14,20-29,40-54,60-69")
    spread = take_by_topology_numa_distributed(MULTI_NUMA, avail, 24, 2, PACKED)
    assert spread == cs("0-5,20-25,40-45,60-65")
    aligned = take_by_topology_numa_distributed(MULTI_NUMA, avail, 24, 2, PACKED, True)
    assert aligned == cs("0-6,10-14,40-46,50-54")
    assert aligned.is_subset_of(MULTI_NUMA.details.cpus_in_sockets(0))


def test_distributed_remainder_capacity_counts_raw_cpus() -> None:
    # v1.37.2 tests a remainder subset's capacity in raw CPUs. Every NUMA
    # node has 5 free CPUs (two cores and a lone thread): 14 CPUs in pairs
    # need all four nodes (2 each, remainder 6, 3 CPUs left on each). The
    # two-node subsets pass the raw test (3 + 3 >= 6) but can only hand out
    # 4 CPUs in pairs, and the kubelet spins forever there; podnuma stops
    # with an error instead.
    avail = cs("0-2,40-41,10-12,50-51,20-22,60-61,30-32,70-71")
    with pytest.raises(CPUAllocationError, match="loops forever"):
        take_by_topology_numa_distributed(MULTI_NUMA, avail, 14, 2, PACKED)


def test_distributed_uneven_groups_fall_back_to_packed() -> None:
    avail = cs("0-79")
    got = take_by_topology_numa_distributed(MULTI_NUMA, avail, 5, 2, PACKED)
    assert got == take_by_topology_numa_packed(MULTI_NUMA, avail, 5, PACKED, False)


def test_distributed_not_enough_cpus() -> None:
    with pytest.raises(CPUAllocationError) as e:
        take_by_topology_numa_distributed(MULTI_NUMA, cs("0-3"), 6, 2, PACKED)
    assert str(e.value) == "not enough cpus available to satisfy request: requested=6, available=4"


def test_partial_uncore_drops_highest_cpu_for_odd_requests() -> None:
    # 3 CPUs in an SMT cache: the two lowest cores give 4 CPUs, the last is dropped
    got = take_by_topology_numa_packed(
        TOPO_UNCORE_SINGLE_SOCKET_SMT, cs("0-15"), 3, PACKED, prefer_align_by_uncore_cache=True
    )
    assert got == cs("0,1,8")


def test_hybrid_machine_quirk_takes_an_unavailable_sibling() -> None:
    """Upstream quirk, reproduced: on a hybrid machine (4 hyper-threaded
    P-cores, 8 single-thread E-cores; 16 CPUs / 12 cores) CPUsPerCore() is
    16 // 12 == 1, so a P-core with one available thread counts as "free", and
    takeFullCores takes the topology's CPUs of that core, the unavailable
    sibling included (here the reserved CPU 0)."""
    from podnuma.machine.topology import CPUInfo, CPUTopology

    info = {}
    for cpu in range(8):  # P-cores: (0,1) (2,3) (4,5) (6,7)
        info[cpu] = CPUInfo(numa_node=0, socket=0, core=cpu - cpu % 2, uncore_cache=0)
    for cpu in range(8, 16):  # E-cores, one thread each
        info[cpu] = CPUInfo(numa_node=0, socket=0, core=cpu, uncore_cache=0)
    topo = CPUTopology(info)
    assert topo.cpus_per_core() == 1
    got = take_by_topology_numa_packed(
        topo, CPUSet.parse("1-15"), 4, CPUSortingStrategy.PACKED, False
    )
    assert got == CPUSet.parse("0-1,8-9")
