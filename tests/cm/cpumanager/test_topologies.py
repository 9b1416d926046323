"""Sanity checks of the shared upstream topology fixtures."""

from __future__ import annotations

import pytest

from podnuma.machine.topology import CPUTopology
from tests.cm.cpumanager import topologies as t

# name -> (CPUs in the table, declared NumCPUs, NumCores, NumSockets, NumNUMANodes,
#          NumUncoreCache, distinct cores in the table)
EXPECTED: dict[str, tuple[int, int, int, int, int, int, int]] = {
    "TOPO_SINGLE_SOCKET_HT": (8, 8, 4, 1, 0, 0, 4),
    "TOPO_DUAL_SOCKET_HT": (12, 12, 6, 2, 0, 0, 6),
    "TOPO_DUAL_SOCKET_NO_HT": (8, 8, 8, 2, 0, 0, 8),
    "TOPO_TRIPLE_SOCKET_HT": (18, 18, 9, 3, 0, 0, 9),
    "TOPO_QUAD_SOCKET_FOUR_WAY_HT": (288, 288, 72, 4, 0, 0, 72),
    "TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT": (80, 80, 40, 2, 4, 0, 40),
    "FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT": (80, 80, 40, 4, 2, 0, 40),
    "TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE": (256, 256, 128, 2, 8, 0, 128),
    "TOPO_UNCORE_SINGLE_SOCKET_NO_SMT": (16, 16, 16, 1, 1, 4, 16),
    "TOPO_UNCORE_DUAL_SOCKET_NO_SMT": (16, 16, 16, 2, 2, 4, 16),
    "TOPO_UNCORE_SINGLE_SOCKET_MULTI_NUMA": (16, 16, 16, 1, 2, 4, 16),
    "TOPO_UNCORE_SINGLE_SOCKET_SMT": (16, 16, 8, 1, 1, 2, 8),
    "TOPO_DUAL_SOCKET_SINGLE_NUMA_PER_SOCKET_SMT_UNCORE": (384, 384, 192, 2, 2, 24, 192),
    "TOPO_SINGLE_SOCKET_SINGLE_NUMA_PER_SOCKET_SMT_SMALL_UNCORE": (128, 128, 64, 1, 1, 16, 64),
    "TOPO_SINGLE_SOCKET_SINGLE_NUMA_PER_SOCKET_NO_SMT_SMALL_UNCORE": (64, 128, 64, 1, 1, 16, 64),
    "TOPO_SMALL_DUAL_SOCKET_SINGLE_NUMA_PER_SOCKET_SMT_UNCORE": (128, 128, 64, 2, 2, 8, 64),
    "TOPO_SMALL_DUAL_SOCKET_SINGLE_NUMA_PER_SOCKET_NO_SMT_UNCORE": (64, 64, 64, 2, 2, 8, 64),
    "TOPO_LARGE_SINGLE_SOCKET_SINGLE_NUMA_PER_SOCKET_SMT_UNCORE": (256, 256, 128, 1, 1, 16, 128),
    "TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_UNCORE": (192, 192, 192, 2, 4, 24, 96),
    "TOPO_DUAL_SOCKET_SUB_NUMA_PER_SOCKET_HT_MONOLITHIC_UNCORE": (240, 240, 120, 2, 4, 2, 120),
    "TOPO_SINGLE_SOCKET_SINGLE_NUMA_PER_SOCKET_P_CORE_HT_MONOLITHIC_UNCORE": (
        24,
        24,
        16,
        1,
        1,
        1,
        16,
    ),
    "TOPO_LARGE_SINGLE_SOCKET_SINGLE_NUMA_PER_SOCKET_UNCORE": (128, 128, 128, 1, 1, 16, 128),
    "TOPO_SINGLE_SOCKET_SINGLE_NUMA_PER_SOCKET_UNCORE": (64, 64, 64, 1, 1, 1, 64),
}


def test_every_fixture_is_checked() -> None:
    assert set(t.ALL_TOPOLOGIES) == set(EXPECTED)
    assert set(t.__all__) - {"ALL_TOPOLOGIES"} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts(name: str) -> None:
    topo: CPUTopology = t.ALL_TOPOLOGIES[name]
    cpus, num_cpus, cores, sockets, numas, uncores, distinct_cores = EXPECTED[name]
    assert len(topo.cpu_info) == cpus
    assert (topo.num_cpus, topo.num_cores, topo.num_sockets) == (num_cpus, cores, sockets)
    assert (topo.num_numa_nodes, topo.num_uncore_caches) == (numas, uncores)
    assert len(topo.core_masks) == distinct_cores


def test_spot_checks() -> None:
    quad = t.TOPO_QUAD_SOCKET_FOUR_WAY_HT.details
    assert str(quad.cpus_in_cores(64)) == "1,13,25,38"
    assert str(quad.cpus_in_sockets(3)).startswith("7-8,19-20,31-32,37,44-45")
    triple = t.TOPO_TRIPLE_SOCKET_HT.details
    assert str(triple.cpus_in_sockets(1)) == "0-5"
    assert str(t.TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT.details.cpus_in_numa_nodes(3)) == (
        "30-39,70-79"
    )
    assert str(t.TOPO_UNCORE_SINGLE_SOCKET_SMT.details.cpus_in_uncore_caches(1)) == "4-7,12-15"
