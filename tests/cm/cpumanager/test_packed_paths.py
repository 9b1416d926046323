"""The packed picker's shortcuts pick what its general walk picks.

``take_by_topology_numa_packed`` has three ways to find free cores: the
general walk (any topology), a walk for regular topologies (every core of
``CPUsPerCore()`` CPUs inside one NUMA node, every NUMA node inside one
socket) and a mask-only walk for regular machines whose cores are sibling
pairs {c, c + k} (or single CPUs). The two shortcuts are chosen from the
topology; here each topology is also run with the shortcuts switched off
and every pick must be the same CPU set (or the same error).
"""

from __future__ import annotations

import random

import pytest

from podnuma.cm.cpumanager.cpu_assignment import (
    CPUAllocationError,
    CPUSortingStrategy,
    _Tables,
    take_by_topology_numa_packed,
)
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUInfo, CPUTopology
from tests.cm.cpumanager.topologies import ALL_TOPOLOGIES


def _machine(
    sockets: int, numa_per_socket: int, cores_per_numa: int, threads: int, layout: str
) -> CPUTopology:
    """A synthetic topology. ``layout``: ``shifted`` (core c is CPUs c and
    c + cores), ``adjacent`` (2c and 2c + 1), ``reversed`` (core ids run
    against CPU order), ``hybrid`` (every other core has one thread)."""
    cores = sockets * numa_per_socket * cores_per_numa
    info: dict[int, CPUInfo] = {}
    for core in range(cores):
        numa = core // cores_per_numa
        socket = numa // numa_per_socket
        core_id = cores - 1 - core if layout == "reversed" else core
        n_threads = 1 if layout == "hybrid" and core % 2 else threads
        for t in range(n_threads):
            cpu = core * threads + t if layout == "adjacent" else core + t * cores
            info[cpu] = CPUInfo(numa_node=numa, socket=socket, core=core_id, uncore_cache=numa)
    return CPUTopology(
        info,
        num_cpus=len(info),
        num_sockets=sockets,
        num_cores=cores,
        num_numa_nodes=sockets * numa_per_socket,
        num_uncore_caches=sockets * numa_per_socket,
    )


# machine -> (topology, the walk it must use: 2 sibling masks, 1 the regular
# walk, 0 the general walk)
SYNTHETIC = {
    "shifted 2x4x16x2": (_machine(2, 4, 16, 2, "shifted"), 2),
    "adjacent 2x2x6x2": (_machine(2, 2, 6, 2, "adjacent"), 2),
    "no SMT 2x2x8x1": (_machine(2, 2, 8, 1, "shifted"), 2),
    "one NUMA node per socket": (_machine(2, 1, 6, 2, "shifted"), 2),
    "reversed core ids": (_machine(2, 2, 4, 2, "reversed"), 1),
    "hybrid": (_machine(1, 2, 6, 2, "hybrid"), 0),
}
def _level(tables: _Tables) -> int:
    return 2 if tables.sibling >= 0 else 1 if tables.regular else 0


def _variants(topo: CPUTopology) -> list[_Tables]:
    """The topology's own tables, then with the sibling masks off, then with
    every shortcut off."""
    own = _Tables(topo)
    no_sibling = _Tables(topo)
    no_sibling.sibling = -1
    general = _Tables(topo)
    general.sibling = -1
    general.regular = False
    return [own, no_sibling, general]


def _pick(topo: CPUTopology, tables: _Tables, avail: int, n: int) -> str:
    topo.picker_tables = tables
    try:
        got = take_by_topology_numa_packed(
            topo, CPUSet.from_mask(avail), n, CPUSortingStrategy.PACKED, False
        )
    except CPUAllocationError as e:
        return f"error: {e}"
    finally:
        topo.picker_tables = None
    return str(got)


def _random_masks(topo: CPUTopology, rng: random.Random, count: int) -> list[int]:
    cpus = sorted(topo.cpu_info)
    masks = []
    for _ in range(count):
        keep = rng.random()
        mask = 0
        for cpu in cpus:
            if rng.random() < keep:
                mask |= 1 << cpu
        masks.append(mask)
    return masks


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_machines_take_the_expected_walk(name: str) -> None:
    topo, level = SYNTHETIC[name]
    assert _level(_Tables(topo)) == level


@pytest.mark.parametrize(
    "topo",
    [t for _, t in sorted(ALL_TOPOLOGIES.items())] + [t for t, _ in SYNTHETIC.values()],
    ids=sorted(ALL_TOPOLOGIES) + sorted(SYNTHETIC, key=list(SYNTHETIC).index),
)
def test_shortcuts_pick_what_the_general_walk_picks(topo: CPUTopology) -> None:
    rng = random.Random(topo.num_cpus * 7919 + topo.num_cores)
    variants = _variants(topo)
    for avail in _random_masks(topo, rng, 40):
        free = avail.bit_count()
        sizes = {1, 2, 3, max(1, free // 2), free, free + 1, rng.randint(1, max(1, free))}
        for n in sorted(sizes):
            picks = [_pick(topo, t, avail, n) for t in variants]
            assert picks[0] == picks[1] == picks[2], (str(CPUSet.from_mask(avail)), n, picks)
