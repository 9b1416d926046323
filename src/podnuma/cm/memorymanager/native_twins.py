"""The memory manager's native twins: one job, two bodies.

As in ``cm/topologymanager/native_twins.py``: a ``_loops`` body the
compiled (mypyc) build runs natively, a ``_bulk`` body of builtin pipelines
that is faster in pure Python; the public name is the one this build
runs. ``tests/cm/memorymanager/test_native_twins.py`` compares both
bodies. Not upstream code: the static policy's hint generation over its
mask rows calls these.
"""

from __future__ import annotations

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint

__all__ = ["MaskRow", "free_reaches", "hint_list"]

# (mask, its bits, its value, compact index over the NUMA ids, its width,
#  its preferred hint, its non-preferred hint, the positions of its bits
#  among the NUMA ids)
MaskRow = tuple[
    BitMask, tuple[int, ...], int, int, int, TopologyHint, TopologyHint, tuple[int, ...]
]

def free_reaches_loops(rows: list[MaskRow], free: list[int], size: int) -> list[MaskRow]:
    out: list[MaskRow] = []
    for row in rows:
        total = 0
        for i in row[7]:
            total += free[i]
        if total >= size:
            out.append(row)
    return out


def free_reaches_bulk(rows: list[MaskRow], free: list[int], size: int) -> list[MaskRow]:
    # (the loops: for the few rows this takes, a ``sum(map(...))`` per row
    # costs more on CPython 3.11 than adding the row's handful of nodes)
    return free_reaches_loops(rows, free, size)


def hint_list_loops(rows: list[MaskRow], width: int) -> list[TopologyHint]:
    out: list[TopologyHint] = []
    for row in rows:
        out.append(row[5] if row[4] == width else row[6])
    return out


def hint_list_bulk(rows: list[MaskRow], width: int) -> list[TopologyHint]:
    # (one comprehension: on CPython 3.11 itemgetter calls through ``map``
    # cost more than its item reads)
    return [row[5] if row[4] == width else row[6] for row in rows]


# free_reaches: the rows whose nodes' `free` amounts (by position) add up to
# `size`, summed row by row (for a few rows).
# hint_list: each row's hint, preferred when the row is `width` wide (the
# rows come ordered by width).
# Compiled, plain loops over the rows beat the builtin pipelines (which a
# compiled build reaches through generic calls).
if ENGINE_COMPILED:

    def free_reaches(rows: list[MaskRow], free: list[int], size: int) -> list[MaskRow]:
        return free_reaches_loops(rows, free, size)

    def hint_list(rows: list[MaskRow], width: int) -> list[TopologyHint]:
        return hint_list_loops(rows, width)

else:
    free_reaches = free_reaches_bulk
    hint_list = hint_list_bulk
