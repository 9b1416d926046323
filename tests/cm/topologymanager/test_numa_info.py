"""Port of upstream ``numa_info_test.go`` (v1.37: distances from cadvisor).

``TestNUMAInfo`` builds NUMAInfo from a machine: without
prefer-closest-numa-nodes every distance row is nil (``None``); with it the
rows are kept, and a node without one fails.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.numa_info import NUMAInfo, calculate_average_for
from podnuma.cm.topologymanager.policy_options import PolicyOptions
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import CPUTopology, Machine, NUMANode

from .helpers import M

ROWS = {
    0: (10, 11, 12, 12),
    1: (11, 10, 12, 12),
    2: (12, 12, 10, 11),
    3: (12, 12, 11, 10),
}


def machine(nodes: Sequence[tuple[int, Sequence[int] | None]]) -> Machine:
    return Machine(
        topology=CPUTopology({}),
        numa_nodes=tuple(
            NUMANode(id=i, memory=1 << 30, distances=None if d is None else tuple(d)) for i, d in nodes
        ),
    )


CLOSEST = PolicyOptions(prefer_closest_numa=True)
PLAIN = PolicyOptions()


@pytest.mark.parametrize(
    ("name", "nodes", "opts", "expected"),
    [
        ("positive test 1 node", [(0, ())], PLAIN, NUMAInfo((0,), {0: None})),
        ("positive test 1 node, with PreferClosestNUMA", [(0, ROWS[0])], CLOSEST,
         NUMAInfo((0,), {0: ROWS[0]})),
        ("positive test 2 nodes", [(0, ()), (1, ())], PLAIN, NUMAInfo((0, 1), {0: None, 1: None})),
        ("positive test 2 nodes, with PreferClosestNUMA", [(0, ROWS[0]), (1, ROWS[1])], CLOSEST,
         NUMAInfo((0, 1), {0: ROWS[0], 1: ROWS[1]})),
        ("positive test 3 nodes", [(0, ()), (1, ()), (2, ())], PLAIN,
         NUMAInfo((0, 1, 2), {0: None, 1: None, 2: None})),
        ("positive test 3 nodes, with PreferClosestNUMA",
         [(0, ROWS[0]), (1, ROWS[1]), (2, ROWS[2])], CLOSEST,
         NUMAInfo((0, 1, 2), {0: ROWS[0], 1: ROWS[1], 2: ROWS[2]})),
        ("positive test 4 nodes", [(i, ()) for i in range(4)], PLAIN,
         NUMAInfo((0, 1, 2, 3), dict.fromkeys(range(4)))),
        ("positive test 4 nodes, with PreferClosestNUMA", [(i, ROWS[i]) for i in range(4)], CLOSEST,
         NUMAInfo((0, 1, 2, 3), dict(ROWS))),
        ("one node and its id is 1", [(1, ())], PLAIN, NUMAInfo((1,), {1: None})),
        ("one node and its id is 1, with PreferClosestNUMA", [(1, ROWS[1])], CLOSEST,
         NUMAInfo((1,), {1: ROWS[1]})),
        # Rows are dropped without the option even when the machine has them.
        ("two nodes not sequential", [(0, ROWS[0]), (2, ROWS[2])], PLAIN,
         NUMAInfo((0, 2), {0: None, 2: None})),
        ("two nodes not sequential, with PreferClosestNUMA", [(0, ROWS[0]), (2, ROWS[2])], CLOSEST,
         NUMAInfo((0, 2), {0: ROWS[0], 2: ROWS[2]})),
    ],
)
def test_numa_info(
    name: str, nodes: list[tuple[int, Sequence[int]]], opts: PolicyOptions, expected: NUMAInfo
) -> None:
    got = NUMAInfo.from_machine(machine(nodes), opts)
    assert got.nodes == expected.nodes
    assert dict(got.distances) == dict(expected.distances)


def test_numa_info_missing_distances_with_prefer_closest() -> None:
    # "negative test 1 node, no distance file with PreferClosestNUMA"
    with pytest.raises(KubeletStartupError) as e:
        NUMAInfo.from_machine(machine([(9, None)]), CLOSEST)
    assert str(e.value) == "cannot discover NUMA topology: error getting NUMA distances from cadvisor"


def test_numa_info_without_opts_ignores_distances() -> None:
    got = NUMAInfo.from_machine(machine([(0, ROWS[0]), (1, ROWS[1])]))
    assert got.nodes == (0, 1)
    assert got.default_affinity_mask() == M(0, 1)


@pytest.mark.parametrize(
    ("name", "bits", "distances", "expected"),
    [
        ("1 NUMA node", [0], {0: (10,)}, 10.0),
        ("2 NUMA node, 1 set in bitmask", [0], {0: (10, 11), 1: (11, 10)}, 10.0),
        ("2 NUMA node, 2 set in bitmask", [0, 1], {0: (10, 11), 1: (11, 10)}, 10.5),
        ("4 NUMA node, 2 set in bitmask", [0, 2], ROWS, 11.0),
        ("4 NUMA node, 3 set in bitmask", [0, 2, 3], ROWS, 11.11111111111111),
        ("0 NUMA node, 0 set in bitmask", [], {}, 0.0),
    ],
)
def test_calculate_avg_distance_for(
    name: str, bits: list[int], distances: dict[int, tuple[int, ...]], expected: float
) -> None:
    # Exact float equality, as upstream.
    assert calculate_average_for(distances, BitMask(bits)) == expected
    assert NUMAInfo.of(bits, distances).average_distance(BitMask(bits)) == expected


def test_average_uses_all_ordered_pairs() -> None:
    # Asymmetric row (upstream's eight-node fixture has one): both d[a][b]
    # and d[b][a] count, self distances too.
    d = {0: (10, 11), 1: (13, 10)}
    assert calculate_average_for(d, M(0, 1)) == (10 + 11 + 13 + 10) / 4


EQUAL3 = {0: (10, 10, 10), 1: (10, 10, 10), 2: (10, 10, 10)}
EQUAL4 = {i: (10, 10, 10, 10) for i in range(4)}


@pytest.mark.parametrize(
    ("description", "current", "candidate", "expected", "info"),
    [
        ("current and candidate length is not the same, current narrower",
         M(0), M(0, 2), "current", NUMAInfo((), {})),
        ("same length, same distance, current more lower bits set",
         M(0, 1), M(0, 2), "current", NUMAInfo((), EQUAL3)),
        ("same length, same distance, candidate more lower bits set",
         M(0, 3), M(0, 2), "candidate", NUMAInfo((), EQUAL4)),
        ("same length, candidate average distance is smaller",
         M(0, 3), M(0, 1), "candidate", NUMAInfo((), ROWS)),
        ("same length, current average distance is smaller",
         M(2, 3), M(0, 3), "current", NUMAInfo((), ROWS)),
    ],
)
def test_closest(
    description: str, current: BitMask, candidate: BitMask, expected: str, info: NUMAInfo
) -> None:
    # Upstream calls Closest(candidate, current).
    result = info.closest(candidate, current)
    assert result is (current if expected == "current" else candidate)


@pytest.mark.parametrize(
    ("m1", "m2", "expected"),
    [(M(0), M(0, 1), M(0)), (M(0, 1), M(0), M(0)), (M(1), M(0), M(0)), (M(0, 3), M(1, 2), M(1, 2))],
)
def test_narrowest(m1: BitMask, m2: BitMask, expected: BitMask) -> None:
    assert NUMAInfo((), {}).narrowest(m1, m2) == expected


def test_default_affinity_mask() -> None:
    assert NUMAInfo((0, 2, 5), {}).default_affinity_mask() == M(0, 2, 5)
