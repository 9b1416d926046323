"""The per-machine NUMA mask tables the CPU and memory managers share.

Not upstream code: the kubelet walks ``bitmask.IterateBitMasks`` afresh
for every hint it generates; podnuma builds every mask of a machine once,
with its bits, compact index and its two hints, and keeps the last few
tables (a 16-NUMA machine has 65,535 masks). The rows are built by the
package's native twins (``native_twins.py``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TypeVar

from podnuma.cm.admission import NIL_DEREFERENCE, KubeletPanic
from podnuma.cm.topologymanager.bitmask import BIT_RANGE_ERROR, BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.native_twins import MaskRows, hint_pairs, mask_rows, subset_sums
from podnuma.errors import InputError

__all__ = ["MAX_MASK_NODES", "NIL_MASK_CONVERSION", "check_mask_nodes", "check_mask_bits", "mask_combinations", "mask_hint_pairs", "subset_sums",
           "built_without_collector"]

_T = TypeVar("_T")

_MAX_BITS = 64

#: the most NUMA nodes whose every set podnuma goes over for topology hints
#: (2^20 - 1 sets: about 0.8 GB and 5 s for the first admission). The
#: kubelet goes over them too, for every hint, with no bound but
#: ``max-allowable-numa-nodes``; past this many that takes it minutes to
#: ages (2^40 sets), and podnuma's tables would not fit in memory.
MAX_MASK_NODES = 20


def check_mask_nodes(count: int) -> None:
    """``InputError`` when hints over ``count`` NUMA nodes would go over
    more sets than podnuma does (:data:`MAX_MASK_NODES`); raised where the
    hints are asked for (the step that admits a pod, in a scenario)."""
    if count > MAX_MASK_NODES:
        raise InputError(
            f"{count} NUMA nodes: the kubelet's topology hints go over every set of them (2^{count} - 1); "
            f"podnuma replays them on machines of at most {MAX_MASK_NODES} NUMA nodes"
        )


#: What Go prints when ``bitmask.And`` is given a nil mask (a failed type
#: assertion, not a runtime error of its own)
NIL_MASK_CONVERSION = "interface conversion: bitmask.BitMask is nil, not *bitmask.bitMask"


def check_mask_bits(where: str, nodes: Iterable[int], panic_value: str = NIL_DEREFERENCE) -> None:
    """Upstream quirk: ``bitmask.NewBitMask`` refuses a bit outside 0-63
    with an error and a nil mask, and the places that build hint masks from
    the machine's NUMA ids drop that error (``IterateBitMasks`` and
    ``NUMAInfo.DefaultAffinityMask``). A machine whose NUMA id is -1 (sysfs
    without NUMA directories, where cadvisor names each node after its
    physical package, and an arm64 kernel that writes -1 for the package)
    therefore makes the kubelet use a nil mask and panic wherever ``where``
    (the upstream function) goes over the masks: raised as
    :class:`~podnuma.cm.admission.KubeletPanic` before any mask is made."""
    for node in nodes:
        if not 0 <= node < _MAX_BITS:
            raise KubeletPanic(
                where, f"NUMA node {node} is not a bit of a hint mask (0-63), and its mask is nil", panic_value
            )


def mask_combinations(bits: list[int]) -> tuple[tuple[BitMask, tuple[int, ...], int], ...]:
    """:func:`~podnuma.cm.topologymanager.bitmask.iterate_bit_masks` in bulk: every mask with its bits (in
    ``bits`` order) and its *compact* index, the mask over positions in
    ``bits`` (bit i set when ``bits[i]`` is), for tables indexed by subset.

    The result is immutable and depends only on ``bits``: the last few are
    kept (a 16-NUMA machine has 65,535 masks, which the CPU and memory
    managers both walk)."""
    for b in bits:
        if b < 0 or b >= _MAX_BITS:
            raise ValueError(BIT_RANGE_ERROR)
    check_mask_nodes(len(bits))
    return _mask_combinations(tuple(bits))


@lru_cache(maxsize=8)
def _mask_combinations(bits: tuple[int, ...]) -> MaskRows:
    return mask_rows(bits)


def mask_hint_pairs(bits: list[int]) -> tuple[tuple[TopologyHint, TopologyHint], ...]:
    """Per mask of :func:`mask_combinations` (same order), its preferred
    and its non-preferred hint. Hints are immutable: the CPU and memory
    managers' mask tables share them; the last few are kept."""
    return _hint_pairs(tuple(bits))


@lru_cache(maxsize=8)
def _hint_pairs(bits: tuple[int, ...]) -> tuple[tuple[TopologyHint, TopologyHint], ...]:
    masks: list[BitMask] = [c[0] for c in mask_combinations(list(bits))]
    return hint_pairs(masks)


def built_without_collector(build: Callable[[], _T]) -> _T:
    """``build()`` with Python's cyclic garbage collector paused (if it was
    running), then resumed.

    The per-machine mask tables are built once and hold one tuple and a few
    objects per NUMA mask: hundreds of thousands on a 16-NUMA machine, none
    of them in a reference cycle. Allocating them set off hundreds of
    collections, each walking every object built so far, for nothing: that
    was about half the cost of a 16-NUMA machine's first admission. Only
    the collector's automatic runs wait; memory is freed by reference
    counting as usual, and the collector runs again once the build ends.
    The switch is the process's: another thread's cyclic garbage waits while
    a build runs, and a thread that turns the collector off during a build
    finds it on again afterwards."""
    if not gc.isenabled():
        return build()
    gc.disable()
    try:
        return build()
    finally:
        gc.enable()
