"""The fast merge (policy_fastmerge.py) behind HintMerger.merge equals the
literal permutation walk, on every path it can take."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from podnuma.cm.topologymanager import policy_fastmerge
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


# Machines whose NUMA ids are not 0..N-1 (the default mask has holes) and
# masks naming nodes the machine does not have.
NODE_SETS = ([0, 1, 2, 3, 4, 5], [0, 2, 3, 5], [1, 4], [0, 1, 2])


def _wide_hint(n_bits: int) -> st.SearchStrategy[TopologyHint]:
    mask = st.one_of(st.none(), st.integers(min_value=0, max_value=(1 << n_bits) - 1))
    return st.builds(
        lambda m, p: TopologyHint(None if m is None else BitMask.from_int(m), p),
        mask,
        st.booleans(),
    )


_FOLD_LIMITS = {
    "fold": 1 << 30,
    "mixed": 3,
    "transform": 0,
    "transform-thresholded": 0,
    "loops": 1 << 30,
}


@settings(max_examples=400, deadline=None)
@given(
    nodes=st.sampled_from(NODE_SETS),
    hints=st.lists(st.lists(_wide_hint(6), min_size=1, max_size=7), min_size=1, max_size=4),
    closest=st.booleans(),
    policy=st.sampled_from(["best-effort", "restricted", "single-numa-node"]),
    path=st.sampled_from(["fold", "mixed", "transform", "transform-thresholded", "loops"]),
)
def test_merge_paths_equal_naive(
    nodes: list[int],
    hints: list[list[TopologyHint]],
    closest: bool,
    policy: str,
    path: str,
) -> None:
    """The set fold, the subset-sum transform, the two mixed (a fold
    limit of 3: some lists fold, longer ones go to the transform, as arrays
    in pure Python, also when their nil hints shrink them back under the
    limit), the transform that has to threshold its counts between
    providers and the compiled build's loops (mask-indexed tables, one-pass
    best; forced here in either build) all return the literal walk's hint,
    on machines with non-contiguous NUMA ids too."""
    distances = {i: [10 if i == j else 10 + (i * 7 + j * 3) % 23 for j in range(6)] for i in range(6)}
    info = NUMAInfo.of(nodes, {i: distances[i] for i in nodes})
    opts = PolicyOptions(prefer_closest_numa=closest)
    merger = HintMerger(info, hints, policy, opts)
    expected = merger.merge_naive()
    limit = 1 << 62 if path != "transform-thresholded" else 2
    with (
        patch.object(policy_fastmerge, "FOLD_LIMIT", _FOLD_LIMITS[path]),
        patch.object(policy_fastmerge, "_COUNT_LIMIT", limit),
        patch.object(
            policy_fastmerge, "ENGINE_COMPILED", path == "loops" or policy_fastmerge.ENGINE_COMPILED
        ),
    ):
        assert HintMerger(info, hints, policy, opts).merge() == expected


def test_sixteen_numa_three_providers_all_masks() -> None:
    """The issue's worst case at 16 nodes: no common preferred mask (the
    device prefers pairs), so the best non-preferred AND mask of width 1
    wins, the lowest one; with prefer-closest too (one node: distance 10)."""
    n = 16
    masks = [BitMask.from_int(m) for m in range(1, 1 << n)]
    cpu = [TopologyHint(m, m.count() == 1) for m in masks]
    gpu = [TopologyHint(m, m.count() == 2) for m in masks]
    rows = {i: [10 if i == j else 20 for j in range(n)] for i in range(n)}
    for closest in (False, True):
        info = NUMAInfo.of(list(range(n)), rows)
        merger = HintMerger(info, [cpu, cpu, gpu], "best-effort", PolicyOptions(prefer_closest_numa=closest))
        assert merger.merge() == TopologyHint(BitMask.of(0), False)


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


def test_a_long_list_shrunk_by_its_nil_hints_under_the_fold_limit() -> None:
    """Longer than the fold limit, but its nil hints count once: the list
    joins the set fold (in pure Python it was an array there once)."""
    info = NUMAInfo.of([0, 1])
    limit = policy_fastmerge.FOLD_LIMIT
    hints = [TopologyHint(BitMask.of(0), False)] * (limit - 1) + [TopologyHint(None, False)] * 2
    merger = HintMerger(info, [hints, [TopologyHint(BitMask.of(0, 1), False)]], "best-effort", PolicyOptions())
    # the target width is 2 (the second list's narrowest): default AND {0,1} wins
    assert merger.merge() == merger.merge_naive() == TopologyHint(BitMask.of(0, 1), False)
