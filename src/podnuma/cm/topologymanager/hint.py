"""Topology hints.

Mirrors ``TopologyHint`` in ``pkg/kubelet/cm/topologymanager/topology_manager.go``:
a NUMA affinity (``None`` = any NUMA node, the nil mask) plus whether the
provider prefers it.
"""

from __future__ import annotations

from dataclasses import dataclass

from podnuma.cm.topologymanager.bitmask import BitMask

__all__ = ["TopologyHint", "EMPTY_HINT"]


@dataclass(frozen=True, slots=True)
class TopologyHint:
    numa_node_affinity: BitMask | None
    preferred: bool

    def __deepcopy__(self, memo: dict[int, object]) -> TopologyHint:
        return self  # immutable


    def is_equal(self, other: TopologyHint) -> bool:
        """``TopologyHint.IsEqual``: same preference and same affinity
        (two nil affinities are equal)."""
        if self.preferred != other.preferred:
            return False
        if self.numa_node_affinity is None or other.numa_node_affinity is None:
            return self.numa_node_affinity is None and other.numa_node_affinity is None
        return self.numa_node_affinity == other.numa_node_affinity

    def less_than(self, other: TopologyHint) -> bool:
        """``TopologyHint.LessThan``: preferred first, then narrower."""
        if self.preferred != other.preferred:
            return self.preferred
        assert self.numa_node_affinity is not None and other.numa_node_affinity is not None
        return self.numa_node_affinity.is_narrower_than(other.numa_node_affinity)

    def to_json(self) -> dict[str, object]:
        return {
            "numaNodes": None if self.numa_node_affinity is None else self.numa_node_affinity.bits(),
            "preferred": self.preferred,
        }

    def __str__(self) -> str:
        aff = "<nil>" if self.numa_node_affinity is None else str(self.numa_node_affinity.bits())
        return f"{{{aff} {str(self.preferred).lower()}}}"


# Go's zero value ``TopologyHint{}``: nil affinity, not preferred. The
# topology manager's store returns it for containers it holds no hint for,
# and policy ``none`` stores nothing else.
EMPTY_HINT = TopologyHint(None, False)
