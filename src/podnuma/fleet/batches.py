"""Cutting ordered work into consecutive batches of about the same weight
(a fleet's nodes into partitions, its pod dumps into scan batches)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

__all__ = ["consecutive_batches"]

_T = TypeVar("_T")


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
