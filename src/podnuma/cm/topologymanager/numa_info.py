"""NUMA node ids and distances as the topology manager sees them.

Mirrors ``pkg/kubelet/cm/topologymanager/numa_info.go`` (v1.37): ``NUMAInfo``
(node ids in machine order + one distance row per node), ``Narrowest``,
``Closest``, ``DefaultAffinityMask`` and ``NUMADistances.CalculateAverageFor``.
Distances come from cadvisor's ``Node.Distances`` and are only recorded when
``prefer-closest-numa-nodes`` is on; without it every row is nil (``None``).

Upstream quirk: ``CalculateAverageFor`` indexes a node's row by the other
node's *id*, while the kernel's ``nodeN/distance`` lists one entry per
online node in order. On a machine with sparse NUMA ids (0 and 2) or a row
shorter than the node count, the index runs off the row and the kubelet
panics ("index out of range [i] with length n") the first time ``Closest``
weighs two equal-width masks holding such a node: raised here as
:class:`~podnuma.cm.admission.KubeletPanic`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from podnuma.cm.admission import KubeletPanic
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.errors import KubeletStartupError

if TYPE_CHECKING:
    from podnuma.cm.topologymanager.policy_options import PolicyOptions
    from podnuma.machine.topology import Machine

__all__ = [
    "NUMAInfo",
    "NUMADistances",
    "calculate_average_for",
    "distance_sum",
    "distance_average",
    "distances_complete",
    "NUMA_DISTANCES_ERROR",
    "NUMA_DISCOVERY_ERROR_PREFIX",
]

NUMADistances = Mapping[int, Sequence[int] | None]

# ``NewNUMAInfo``'s error when prefer-closest-numa-nodes is on and cadvisor
# reported no distance row for a node.
NUMA_DISTANCES_ERROR = "error getting NUMA distances from cadvisor"
# ``NewManager`` wraps every ``NewNUMAInfo`` error with this prefix.
NUMA_DISCOVERY_ERROR_PREFIX = "cannot discover NUMA topology: "


def distance_sum(distances: NUMADistances, bits: Sequence[int]) -> int:
    """The sum of ``d[a][b]`` over all ordered pairs (a, b) of the nodes
    ``bits``, self pairs included, in Go's order (``a`` outer). A missing
    row (Go's nil slice) or a column past the row's end is the kubelet's
    index panic: :class:`~podnuma.cm.admission.KubeletPanic`."""
    total = 0
    for a in bits:
        row = distances.get(a)
        length = 0 if row is None else len(row)
        for b in bits:
            if not 0 <= b < length:
                raise KubeletPanic(
                    "[topologymanager] CalculateAverageFor",
                    f"NUMA node {a}'s distance row has no entry for node {b}",
                    f"runtime error: index out of range [{b}] with length {length}",
                )
            assert row is not None
            total += row[b]
    return total


#: below this, every partial sum of non-negative integer distances is an
#: exact double, so Go's float64 running sum equals the integer sum
_EXACT_FLOAT_SUM: Final = 1 << 53


def distance_average(distances: NUMADistances, bits: Sequence[int]) -> float:
    """The mean of ``d[a][b]`` over all ordered pairs of ``bits`` as Go
    computes it: each distance converted to a float64 and added to a
    float64 running sum, ``a`` outer, then divided by the pair count (also a
    float64). With huge distances (a sum of 2^53 or more) the rounding of
    each addition is Go's, term by term; below that the integer sum is
    exact and converts to the same double. Panics as :func:`distance_sum`."""
    if not bits:
        return 0.0
    total = distance_sum(distances, bits)
    count = float(len(bits) * len(bits))
    if total < _EXACT_FLOAT_SUM:
        return float(total) / count
    acc = 0.0
    for a in bits:
        row = distances[a]
        assert row is not None  # (distance_sum checked every row and column)
        for b in bits:
            acc += float(row[b])
    return acc / count


def distances_complete(distances: NUMADistances, nodes: Sequence[int]) -> bool:
    """Every node's row has an entry at every node's id (so
    :func:`distance_sum` cannot panic on these nodes)."""
    if not nodes:
        return True
    if min(nodes) < 0:
        return False
    top = max(nodes)
    for a in nodes:
        row = distances.get(a)
        if row is None or len(row) <= top:
            return False
    return True


def calculate_average_for(distances: NUMADistances, mask: BitMask) -> float:
    """``NUMADistances.CalculateAverageFor``: the mean of ``d[a][b]`` over all
    ordered pairs (a, b) of the mask's nodes, self pairs included; 0 for an
    empty mask, float64 arithmetic in Go's order (:func:`distance_average`).
    A missing row or column fails (Go panics on the index)."""
    return distance_average(distances, mask.bits())


class NUMAInfo:
    """``NUMAInfo``: NUMA node ids (machine order) and their distance rows."""

    nodes: tuple[int, ...]
    distances: Mapping[int, Sequence[int] | None]

    def __init__(
        self,
        nodes: tuple[int, ...],
        distances: Mapping[int, Sequence[int] | None] | None = None,
    ) -> None:
        self.nodes = nodes
        self.distances = dict() if distances is None else distances

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(nodes={self.nodes!r}, distances={self.distances!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NUMAInfo) or other.__class__ is not self.__class__:
            return False
        return (self.nodes, self.distances) == (other.nodes, other.distances)

    def __hash__(self) -> int:
        return hash((self.nodes, self.distances))

    def __deepcopy__(self, memo: dict[int, object]) -> NUMAInfo:
        return self  # never changed once built

    @classmethod
    def of(cls, nodes: Sequence[int], distances: NUMADistances | None = None) -> NUMAInfo:
        return cls(tuple(nodes), dict(distances) if distances is not None else {})

    @classmethod
    def from_machine(cls, machine: Machine, opts: PolicyOptions | None = None) -> NUMAInfo:
        """``NewNUMAInfo`` (as called by ``NewManager``).

        Rows are kept only with ``prefer-closest-numa-nodes``; then a node
        without a row (``None``, cadvisor's nil slice) stops the kubelet with
        ``cannot discover NUMA topology: error getting NUMA distances from
        cadvisor``. An empty row is not nil: the kubelet starts, and panics
        on the index the first time ``Closest`` reads that row.
        """
        prefer_closest = opts is not None and opts.prefer_closest_numa
        nodes: list[int] = []
        distances: dict[int, Sequence[int] | None] = {}
        for node in machine.numa_nodes:
            nodes.append(node.id)
            row: Sequence[int] | None = None
            if prefer_closest:
                if node.distances is None:
                    raise KubeletStartupError(NUMA_DISCOVERY_ERROR_PREFIX + NUMA_DISTANCES_ERROR)
                row = tuple(node.distances)
            distances[node.id] = row
        return cls(tuple(nodes), distances)

    def default_affinity_mask(self) -> BitMask:
        """``DefaultAffinityMask``: every NUMA node of the machine."""
        return BitMask(self.nodes)

    def average_distance(self, mask: BitMask) -> float:
        return calculate_average_for(self.distances, mask)

    def narrowest(self, m1: BitMask, m2: BitMask) -> BitMask:
        """``Narrowest``: fewer bits wins, equal counts -> lower value."""
        return m1 if m1.is_narrower_than(m2) else m2

    def closest(self, m1: BitMask, m2: BitMask) -> BitMask:
        """``Closest``: different widths -> narrowest; same width -> lower
        average distance, ties to the numerically lower mask."""
        if m1.count() != m2.count():
            return self.narrowest(m1, m2)
        d1 = self.average_distance(m1)
        d2 = self.average_distance(m2)
        if d1 == d2:
            return m1 if m1.is_less_than(m2) else m2
        return m1 if d1 < d2 else m2
