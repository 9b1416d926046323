"""The memory manager's fit and group memos are bounded by the mask rows
they hold together (``policy_static._CACHE_ROWS``), not only by their
entries: a 20-NUMA machine's entry holds up to 2^20 - 1 rows. With the
bound at one row (the memos emptied at every new entry) the hints stay
the upstream ones, asked for once and again."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from podnuma.api.pod import Pod
from podnuma.cm.memorymanager import policy_static
from podnuma.cm.memorymanager.state import Block, NUMANodeState
from podnuma.cm.topologymanager.hint import TopologyHint
from tests.cm.memorymanager.test_policy_static import _HINT_CASES, make_policy, make_state


@pytest.mark.parametrize(
    ("name", "pod", "state", "assignments", "system_reserved", "expected"), _HINT_CASES, ids=[c[0] for c in _HINT_CASES]
)
def test_hints_stay_the_same_with_the_memos_emptied_at_every_entry(
    name: str,
    pod: Pod,
    state: dict[int, NUMANodeState],
    assignments: dict[str, dict[str, list[Block]]],
    system_reserved: Mapping[int, Mapping[str, int]],
    expected: dict[str, list[TopologyHint]] | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(policy_static, "_CACHE_ROWS", 1)
    p = make_policy(system_reserved)
    s = make_state(state, assignments)
    for _ in range(3):
        assert p.get_topology_hints(s, pod, pod.containers[0]) == expected
        assert len(p._fit_cache) <= 1
