"""Shared notation and fixtures for the topology-manager tests.

``H(0, 1)`` is a preferred hint on NUMA {0,1}; ``H(0, 1, p=False)`` a
non-preferred one; ``NIL(True)`` a "don't care" hint. A provider's answer is
a dict ``resource -> hints`` (``None`` = Go's nil slice) or ``None`` (nil map).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo


def H(*bits: int, p: bool = True) -> TopologyHint:  # noqa: N802 - table notation
    return TopologyHint(BitMask(bits), p)


def NIL(p: bool) -> TopologyHint:  # noqa: N802 - table notation
    return TopologyHint(None, p)


def M(*bits: int) -> BitMask:  # noqa: N802 - table notation
    return BitMask(bits)


class Gates:
    """A minimal feature-gate reader (v1.37 defaults: alpha off, beta on)."""

    def __init__(self, overrides: Mapping[str, bool] | None = None) -> None:
        self._values = {
            "TopologyManagerPolicyAlphaOptions": False,
            "TopologyManagerPolicyBetaOptions": True,
            "TopologyManagerPolicyOptions": True,
        }
        self._values.update(overrides or {})

    def enabled(self, name: str) -> bool:
        return self._values[name]


def numa_info(rows: Sequence[Sequence[int]]) -> NUMAInfo:
    return NUMAInfo.of(range(len(rows)), {i: tuple(r) for i, r in enumerate(rows)})


# Upstream's commonNUMAInfoTwoNodes / FourNodes / EightNodes (policy_test.go).
TWO_NODES = numa_info([[10, 11], [11, 10]])
FOUR_NODES = numa_info(
    [
        [10, 11, 12, 12],
        [11, 10, 12, 12],
        [12, 12, 10, 11],
        [12, 12, 11, 10],
    ]
)
EIGHT_NODES = numa_info(
    [
        [10, 11, 12, 12, 30, 30, 30, 30],
        [11, 10, 12, 12, 30, 30, 30, 30],
        [12, 12, 10, 11, 30, 30, 30, 30],
        [12, 12, 11, 10, 30, 30, 30, 30],
        [30, 30, 30, 30, 10, 11, 12, 12],
        [30, 30, 30, 30, 11, 10, 12, 12],
        [30, 30, 30, 30, 12, 12, 10, 11],
        [30, 30, 30, 30, 12, 12, 13, 10],  # asymmetric upstream, kept as is
    ]
)
