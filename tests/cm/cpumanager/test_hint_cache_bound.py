"""The CPU hint table's kept answers are bounded by the hints they hold
(``cpu_hint_table.HINT_CACHE_HINTS``), not only by their count: a 20-NUMA
machine's answer holds up to 2^20 - 1 hints, and a fleet's replays asked for
one per admission until gigabytes were kept. Checked on an 8-NUMA machine
with the bound lowered: the answers stay those of the row-by-row filter,
and what is kept never passes the bound."""

from __future__ import annotations

import random

import pytest

from podnuma.cm.cpumanager import cpu_hint_table
from podnuma.cm.cpumanager.cpu_hint_table import new_mask_table
from podnuma.machine.cpuset import CPUSet
from tests.cm.cpumanager.topologies import TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT_LARGE as TOPO

EMPTY = CPUSet()


@pytest.mark.parametrize("bound", [100, 300, 1000])
def test_kept_hints_stay_within_the_bound_and_answers_do_not_change(
    bound: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu_hint_table, "HINT_CACHE_HINTS", bound)
    table = new_mask_table(TOPO)
    table.hints.clear()  # (the table is shared by the machines of this topology)
    table.kept = 0
    rng = random.Random(bound)
    everything = TOPO.all_mask
    cpus = [c for c in range(256) if everything >> c & 1]
    asked = 0
    for _ in range(60):
        available = CPUSet(rng.sample(cpus, rng.randint(0, len(cpus))))
        request = rng.randint(1, 80)
        width = table.min_affinity_size(request)
        for _ in range(2):  # the second time from what is kept, when kept
            got = table.fitting_hints(everything, available, EMPTY, request, width)
            rows = table.fitting_rows(everything, available, EMPTY, request)
            want = [row[6] if row[1] == width else row[7] for row in rows]
            assert got == want
            asked += len(got)
        assert table.kept == sum(len(found) for found in table.hints.values())
        assert table.kept <= bound
    assert asked > 10 * bound  # the bound was reached, more than once


def test_machines_of_one_topology_share_its_table() -> None:
    assert new_mask_table(TOPO) is new_mask_table(TOPO)
