"""Cutting ordered work into consecutive batches of about the same weight
(a fleet's nodes into partitions, its pod dumps into scan batches)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

__all__ = ["consecutive_batches", "guided_batches", "file_weight", "FILE_COST_BYTES"]

_T = TypeVar("_T")

#: what opening and reading a file costs beside its bytes, in bytes of a
#: pods dump read in the same time (a few hundred microseconds): a batch of
#: a thousand small configz files costs about as much as a large dump, not
#: as little as its bytes say
FILE_COST_BYTES = 64 * 1024


def file_weight(size: int) -> int:
    """The work of reading a file of ``size`` bytes, in bytes."""
    return max(0, size) + FILE_COST_BYTES


def consecutive_batches(items: Sequence[_T], weights: Iterable[int], target: int) -> list[list[_T]]:
    """``items`` in their order, cut after each item where the batch's
    weight (the sum of ``weights``, one per item) reaches ``target``; the
    last batch may weigh less."""
    out: list[list[_T]] = []
    cur: list[_T] = []
    acc = 0
    for item, weight in zip(items, weights, strict=True):
        cur.append(item)
        acc += weight
        if acc >= target:
            out.append(cur)
            cur, acc = [], 0
    if cur:
        out.append(cur)
    return out


def guided_batches(items: Sequence[_T], weights: Sequence[int], *, runners: int,
                   largest: int, smallest: int) -> list[list[_T]]:
    """``items`` in their order, cut into consecutive batches that shrink
    towards the end: each weighs about what is left divided by twice the
    ``runners`` (at most ``largest``, at least ``smallest``). Handed out in
    order to ``runners`` that each take the next batch when free, the big
    batches keep the task count low and the small last ones let the runners
    finish together (guided self-scheduling)."""
    assert len(items) == len(weights)
    smallest = max(1, min(smallest, largest))
    left = sum(weights)
    out: list[list[_T]] = []
    cur: list[_T] = []
    acc = 0
    target = 0
    for item, weight in zip(items, weights, strict=True):
        if not cur:
            target = max(smallest, min(largest, -(-left // (2 * max(1, runners)))))
        cur.append(item)
        acc += weight
        if acc >= target:
            out.append(cur)
            left -= acc
            cur, acc = [], 0
    if cur:
        out.append(cur)
    return out
