"""The CPU manager's native twins: one job, two bodies.

As in ``cm/topologymanager/native_twins.py``: a ``_loops`` body the
compiled (mypyc) build runs natively, a ``_bulk`` body of builtin pipelines
that is faster in pure Python; the public name is the one this build
runs. ``tests/cm/cpumanager/test_native_twins.py`` compares both bodies.
Not upstream code: the static policy's hint table (``cpu_hint_table.py``)
calls these.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from itertools import compress
from operator import itemgetter

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.cm.topologymanager.hint import TopologyHint

__all__ = ["BytePicker", "byte_picker", "selected_hints"]

#: the bytes at some positions of a byte string, in the positions' order
BytePicker = Callable[[bytes], Sequence[int]]


def byte_picker(positions: list[int]) -> BytePicker:
    """The bytes at ``positions`` in one C call (an ``itemgetter``: on
    CPython 3.11 a ``map`` over ``bytes.__getitem__`` pays a slot wrapper
    call, and a tuple, per byte)."""
    if len(positions) > 1:
        return itemgetter(*positions)
    # (an itemgetter of one position gives that byte, not a 1-tuple; a
    # partial, unlike a lambda, pickles with the node)
    return partial(_bytes_at, tuple(positions))


def _bytes_at(positions: tuple[int, ...], tops: bytes) -> list[int]:
    return [tops[p] for p in positions]


def selected_hints_loops(
    hints: list[TopologyHint], tops: bytes, positions: list[int], pick: BytePicker
) -> list[TopologyHint]:
    out: list[TopologyHint] = []
    for i in range(len(hints)):
        if tops[positions[i]]:
            out.append(hints[i])
    return out


def selected_hints_bulk(
    hints: list[TopologyHint], tops: bytes, positions: list[int], pick: BytePicker
) -> list[TopologyHint]:
    return list(compress(hints, pick(tops)))


# selected_hints: the hints whose byte in `tops` (at their entry of
# `positions`; `pick`: the byte_picker of `positions`) is set. Compiled, the loop (the pipeline measured 4x slower
# there).
if ENGINE_COMPILED:

    def selected_hints(
        hints: list[TopologyHint], tops: bytes, positions: list[int], pick: BytePicker
    ) -> list[TopologyHint]:
        return selected_hints_loops(hints, tops, positions, pick)

else:
    selected_hints = selected_hints_bulk
