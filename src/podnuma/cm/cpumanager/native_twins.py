"""The CPU manager's native twins: one job, two bodies.

As in ``cm/topologymanager/native_twins.py``: a ``_loops`` body the
compiled (mypyc) build runs natively, a ``_bulk`` body of builtin pipelines
that is faster in pure Python; the public name is the one this build
runs. ``tests/cm/cpumanager/test_native_twins.py`` compares both bodies.
Not upstream code: the static policy's hint table (``cpu_hint_table.py``)
calls these.
"""

from __future__ import annotations

from itertools import compress

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.cm.topologymanager.hint import TopologyHint

__all__ = ["selected_hints"]


def selected_hints_loops(
    hints: list[TopologyHint], tops: bytes, positions: list[int]
) -> list[TopologyHint]:
    out: list[TopologyHint] = []
    for i in range(len(hints)):
        if tops[positions[i]]:
            out.append(hints[i])
    return out


def selected_hints_bulk(
    hints: list[TopologyHint], tops: bytes, positions: list[int]
) -> list[TopologyHint]:
    return list(compress(hints, map(tops.__getitem__, positions)))


# selected_hints: the hints whose byte in `tops` (at their entry of
# `positions`) is set. Compiled, the loop (the pipeline measured 4x slower
# there).
if ENGINE_COMPILED:

    def selected_hints(
        hints: list[TopologyHint], tops: bytes, positions: list[int]
    ) -> list[TopologyHint]:
        return selected_hints_loops(hints, tops, positions)

else:
    selected_hints = selected_hints_bulk
