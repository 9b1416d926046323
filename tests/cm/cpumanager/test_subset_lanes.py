"""The CPU hint generator's subset-sum lanes (``cpu_hint_table.Lanes``): every subset's
free CPUs summed at once in one integer. Checked against the sums taken
subset by subset, for lane widths of 16 and 32 bits."""

from __future__ import annotations

import random

import pytest

from podnuma.cm.cpumanager.cpu_hint_table import Lanes


@pytest.mark.parametrize("capacity", [8, 300, 40_000])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 10])
def test_lane_top_bits_mark_the_subsets_whose_sum_reaches_the_need(n: int, capacity: int) -> None:
    rng = random.Random(n * 1000 + capacity)
    compact = list(range(1, 1 << n))
    rng.shuffle(compact)
    lanes = Lanes(n, capacity, compact)
    assert lanes.width == (16 if capacity < 1 << 15 else 32)
    for _ in range(30):
        counts = [rng.randint(0, capacity // n) for _ in range(n)]
        total = sum(counts)
        for need in {1, max(1, total // 2), max(1, total), rng.randint(1, max(1, total))}:
            acc = sum(c * lanes.patterns[j] for j, c in enumerate(counts))
            tops = (acc + ((1 << (lanes.width - 1)) - need) * lanes.ones) & lanes.top_bits
            marks = tops.to_bytes(lanes.size, "little")
            for i, subset in enumerate(compact):
                subset_sum = sum(counts[j] for j in range(n) if subset >> j & 1)
                assert bool(marks[lanes.positions[i]]) == (subset_sum >= need), (
                    counts, need, subset
                )
