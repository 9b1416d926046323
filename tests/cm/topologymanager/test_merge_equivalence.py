"""The memoised HintMerger.merge equals the literal permutation walk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy import HintMerger
from podnuma.cm.topologymanager.policy_options import PolicyOptions

NODES = 4


def _hint() -> st.SearchStrategy[TopologyHint]:
    mask = st.one_of(st.none(), st.integers(min_value=0, max_value=(1 << NODES) - 1))
    return st.builds(
        lambda m, p: TopologyHint(None if m is None else BitMask.from_int(m), p),
        mask,
        st.booleans(),
    )


def _distances() -> st.SearchStrategy[dict[int, list[int]]]:
    row = st.lists(st.integers(min_value=11, max_value=40), min_size=NODES, max_size=NODES)
    return st.lists(row, min_size=NODES, max_size=NODES).map(
        lambda rows: {i: [10 if j == i else rows[i][j] for j in range(NODES)] for i in range(NODES)}
    )


@settings(max_examples=500, deadline=None)
@given(
    hints=st.lists(st.lists(_hint(), min_size=0, max_size=5), min_size=0, max_size=4),
    distances=_distances(),
    closest=st.booleans(),
    policy=st.sampled_from(["best-effort", "restricted", "single-numa-node"]),
)
def test_memoised_merge_equals_naive(
    hints: list[list[TopologyHint]],
    distances: dict[int, list[int]],
    closest: bool,
    policy: str,
) -> None:
    info = NUMAInfo.of(list(range(NODES)), distances)
    opts = PolicyOptions(prefer_closest_numa=closest)
    merger = HintMerger(info, hints, policy, opts)
    assert merger.merge() == merger.merge_naive()


def test_eight_numa_three_providers_all_hints() -> None:
    """Every mask from three providers on eight nodes: the narrowest common
    preferred mask wins (a single node, the lowest)."""
    masks = [BitMask.from_int(m) for m in range(1, 256)]
    provider = [TopologyHint(m, m.count() == 1) for m in masks]
    info = NUMAInfo.of(list(range(8)))
    merged = HintMerger(info, [provider, provider, provider], "best-effort", PolicyOptions()).merge()
    assert merged == TopologyHint(BitMask.of(0), True)


@settings(max_examples=300, deadline=None)
@given(
    hints=st.lists(st.lists(_hint(), min_size=0, max_size=4), min_size=0, max_size=3),
    distances=_distances(),
    closest=st.booleans(),
)
def test_recorded_candidates_are_the_permutations_merges_best_first(
    hints: list[list[TopologyHint]], distances: dict[int, list[int]], closest: bool
) -> None:
    """The trace holds the distinct non-empty merged hints of every
    permutation (as the literal walk computes them), the winner first."""
    from itertools import product

    from podnuma.cm.topologymanager.policy import merge_permutation

    info = NUMAInfo.of(list(range(NODES)), distances)
    merger = HintMerger(info, hints, "best-effort", PolicyOptions(prefer_closest_numa=closest))
    best = merger.merge()
    default = info.default_affinity_mask()
    walked = {
        merge_permutation(default, list(p)) for p in product(*hints)
    } if all(hints) else set()
    walked = {h for h in walked if h.numa_node_affinity is not None and h.numa_node_affinity.count()}
    trace = merger.trace()
    assert set(trace.candidates) == walked
    assert trace.filtered == tuple(tuple(lst) for lst in hints)
    if trace.candidates:
        assert trace.candidates[0] == best
