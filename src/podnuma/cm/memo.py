"""A memo that copies of its owner share.

The managers keep a few memos of pure functions of the machine (the NUMA
masks and their CPUs, the masks a request fits by allocatable memory). An
entry never goes stale, so a deep copy of a node (the nearest-admissible
search copies the node before a step to try changes on it) can share them
instead of copying every entry.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["SharedMemo"]

K = TypeVar("K")
V = TypeVar("V")


class SharedMemo(dict[K, V]):
    """A ``dict`` memo of a pure function; ``copy.deepcopy`` returns it as is."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, object]) -> SharedMemo[K, V]:
        return self  # every entry stays valid for the copy: share it
