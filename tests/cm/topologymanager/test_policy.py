"""Port of upstream ``policy_test.go`` (the merger machinery; the shared
merge tables are in ``merge_cases.py`` and run per policy), plus the policy
selection half of ``NewManager`` (``topology_manager_test.go``
``TestNewManager``) and prefer-closest-numa-nodes merges on realistic
distance tables.
"""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.cm.topologymanager.new_manager import check_numa_count, new_policy, new_topology_policy
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy import (
    HintMerger,
    filter_providers_hints,
    iterate_all_provider_topology_hints,
    max_of_min_affinity_counts,
    merge_permutation,
    narrowest_hint,
    validate_policy_name,
)
from podnuma.cm.topologymanager.policy_best_effort import BestEffortPolicy
from podnuma.cm.topologymanager.policy_none import NonePolicy
from podnuma.cm.topologymanager.policy_options import PolicyOptions
from podnuma.cm.topologymanager.policy_restricted import RestrictedPolicy
from podnuma.cm.topologymanager.policy_single_numa_node import SingleNumaNodePolicy
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import CPUTopology, Machine, NUMANode

from .helpers import EIGHT_NODES, NIL, TWO_NODES, Gates, H, M, numa_info

# --- TestMaxOfMinAffinityCounts ----------------------------------------------


@pytest.mark.parametrize(
    ("hints", "expected"),
    [
        ([], 0),
        ([[H()]], 0),
        ([[H(0)]], 1),
        ([[H(0, 1)]], 2),
        ([[H(0, 1), H(0, 1, 2)]], 2),
        ([[H(0, 1), H(0, 1, 2)], [H(0, 1, 2)]], 3),
        ([[H(0, 1), H(0, 1, 2)], [H(0, 1, 2), H(0, 1, 2, 3)]], 3),
    ],
)
def test_max_of_min_affinity_counts(hints: list[list[TopologyHint]], expected: int) -> None:
    assert max_of_min_affinity_counts(hints) == expected


def test_max_of_min_affinity_counts_skips_nil_affinities() -> None:
    assert max_of_min_affinity_counts([[NIL(True)], [NIL(False), H(0, 1)]]) == 2
    assert narrowest_hint([NIL(True)]) is None
    assert narrowest_hint([]) is None


# --- TestCompareHintsNarrowest -----------------------------------------------

NP = False
COMPARE_CASES: list[tuple[str, int, TopologyHint | None, TopologyHint, str]] = [
    ("candidate.NUMANodeAffinity.Count() == 0 (1)", -1, None, H(p=False), "current"),
    ("candidate.NUMANodeAffinity.Count() == 0 (2)", -1, H(), H(p=False), "current"),
    ("current == nil (1)", -1, None, H(0), "candidate"),
    ("current == nil (2)", -1, None, H(0, p=False), "candidate"),
    ("!current.Preferred && candidate.Preferred", -1, H(0, p=NP), H(0), "candidate"),
    ("current.Preferred && !candidate.Preferred", -1, H(0), H(0, p=NP), "current"),
    ("current.Preferred && candidate.Preferred (1)", -1, H(0), H(0), "current"),
    ("current.Preferred && candidate.Preferred (2)", -1, H(0, 1), H(0), "candidate"),
    ("current.Preferred && candidate.Preferred (3)", -1, H(0), H(0, 1), "current"),
    ("!current.Preferred && !candidate.Preferred (1.1)", 1, H(0, 1, p=NP), H(0, 1, p=NP), "current"),
    ("!current.Preferred && !candidate.Preferred (1.2)", 1, H(1, 2, p=NP), H(0, 1, p=NP), "candidate"),
    ("!current.Preferred && !candidate.Preferred (1.3)", 1, H(0, 1, p=NP), H(1, 2, p=NP), "current"),
    ("!current.Preferred && !candidate.Preferred (2.1)", 2, H(0, 1, p=NP), H(0, p=NP), "current"),
    ("!current.Preferred && !candidate.Preferred (2.2)", 2, H(0, 1, p=NP), H(0, 1, p=NP), "current"),
    ("!current.Preferred && !candidate.Preferred (2.3)", 2, H(1, 2, p=NP), H(0, 1, p=NP), "candidate"),
    ("!current.Preferred && !candidate.Preferred (2.4)", 2, H(0, 1, p=NP), H(1, 2, p=NP), "current"),
    ("!current.Preferred && !candidate.Preferred (3a)", 2, H(0, p=NP), H(0, 1, 2, p=NP), "current"),
    ("!current.Preferred && !candidate.Preferred (3b)", 2, H(0, p=NP), H(0, 1, p=NP), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.1)", 3, H(0, p=NP), H(0, 1, p=NP), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.2)", 3, H(0, p=NP), H(1, 2, p=NP), "candidate"),
    ("!current.Preferred && !candidate.Preferred (3ca.3)", 4, H(0, 1, p=NP), H(1, 2, 3, p=NP),
     "candidate"),
    ("!current.Preferred && !candidate.Preferred (3cb)", 4, H(1, 2, 3, p=NP), H(0, 1, p=NP), "current"),
    ("!current.Preferred && !candidate.Preferred (3cc.1)", 4, H(0, 1, 2, p=NP), H(0, 1, 2, p=NP),
     "current"),
    ("!current.Preferred && !candidate.Preferred (3cc.2)", 4, H(0, 1, 2, p=NP), H(1, 2, 3, p=NP),
     "current"),
    ("!current.Preferred && !candidate.Preferred (3cc.3)", 4, H(1, 2, 3, p=NP), H(0, 1, 2, p=NP),
     "candidate"),
]


@pytest.mark.parametrize(
    ("description", "best_count", "current", "candidate", "expected"),
    COMPARE_CASES,
    ids=[c[0] for c in COMPARE_CASES],
)
def test_compare_hints_narrowest(
    description: str,
    best_count: int,
    current: TopologyHint | None,
    candidate: TopologyHint,
    expected: str,
) -> None:
    merger = HintMerger(NUMAInfo((), {}), [], "best-effort", PolicyOptions())
    merger.best_non_preferred_affinity_count = best_count
    result = merger.compare(current, candidate)
    # Identity, as upstream compares pointers.
    assert result is (current if expected == "current" else candidate)


# --- filterProvidersHints / mergePermutation / iteration ---------------------


def test_filter_providers_hints_nil_vs_empty() -> None:
    hints = [H(0), H(1)]
    got = filter_providers_hints(
        [None, {}, {"a": None, "b": [], "c": hints}],
    )
    assert [list(x) for x in got] == [[NIL(True)], [NIL(True)], [NIL(True)], [NIL(False)], hints]
    assert filter_providers_hints([]) == []


@pytest.mark.parametrize(
    ("permutation", "expected"),
    [
        ([], H(0, 1)),
        ([H(0), H(0)], H(0)),
        # preferred only if all non-nil affinities are the same mask
        ([H(0), H(0, 1)], H(0, p=False)),
        ([H(0), NIL(True)], H(0)),
        ([NIL(True), H(1), NIL(True)], H(1)),
        ([H(0), NIL(False)], H(0, p=False)),
        ([NIL(True), NIL(True)], H(0, 1)),
        ([H(0), H(1)], H(p=False)),
    ],
)
def test_merge_permutation(permutation: list[TopologyHint], expected: TopologyHint) -> None:
    assert merge_permutation(M(0, 1), permutation) == expected


def test_iterate_all_provider_topology_hints() -> None:
    seen: list[list[TopologyHint]] = []
    iterate_all_provider_topology_hints([[H(0), H(1)], [H(2), H(3)]], seen.append)
    assert seen == [[H(0), H(2)], [H(0), H(3)], [H(1), H(2)], [H(1), H(3)]]
    seen.clear()
    iterate_all_provider_topology_hints([], seen.append)
    assert seen == [[]]
    seen.clear()
    iterate_all_provider_topology_hints([[H(0)], []], seen.append)
    assert seen == []


def test_merger_without_permutations_returns_default_non_preferred() -> None:
    merger = HintMerger(TWO_NODES, [[H(0)], []], "best-effort", PolicyOptions())
    assert merger.merge() == H(0, 1, p=False)


# --- prefer-closest-numa-nodes on realistic distance tables -----------------

# Two sockets with sub-NUMA clustering (SNC2) as Linux numbers them: nodes 0
# and 2 on socket 0, nodes 1 and 3 on socket 1 (remote distance 21).
SNC2_INTERLEAVED = numa_info(
    [
        [10, 21, 11, 21],
        [21, 10, 21, 11],
        [11, 21, 10, 21],
        [21, 11, 21, 10],
    ]
)
# Two-socket EPYC in NPS4 mode: nodes 0-3 on socket 0, 4-7 on socket 1.
EPYC_NPS4 = numa_info(
    [[10 if i == j else 12 if i // 4 == j // 4 else 32 for j in range(8)] for i in range(8)]
)
# Synthetic: node 0 reports a self distance of 11 (a one-node mask's
# distance is its self distance).
SELF_DISTANCE = numa_info([[11, 20], [20, 10]])

CLOSEST = PolicyOptions(prefer_closest_numa=True)
PLAIN = PolicyOptions()

ClosestCase = tuple[str, NUMAInfo, list[Any], TopologyHint, TopologyHint]
CLOSEST_CASES: list[ClosestCase] = [
    # name, numa info, providers, with prefer-closest, without
    ("same-socket pair beats the lower-numbered cross-socket pair", SNC2_INTERLEAVED,
     [{"cpu": [H(0, 1), H(0, 2)]}, {"dev": [H(0, 1), H(0, 2)]}], H(0, 2), H(0, 1)),
    ("equal distances tie to the lower mask", SNC2_INTERLEAVED,
     [{"cpu": [H(1, 3), H(0, 2)]}, {"dev": [H(1, 3), H(0, 2)]}], H(0, 2), H(0, 2)),
    ("a narrower mask wins even when a wider one is closer on average", SNC2_INTERLEAVED,
     [{"cpu": [H(0, 2, 3), H(0, 1)]}, {"dev": [H(0, 2, 3), H(0, 1)]}], H(0, 1), H(0, 1)),
    ("the rule also decides between non-preferred hints", SNC2_INTERLEAVED,
     [{"cpu": [H(0, 1, p=False), H(0, 2, p=False)]}, {"mem": [H(0, 1, 2, 3, p=False)]}],
     H(0, 2, p=False), H(0, 1, p=False)),
    ("GPU pair on the second socket", EPYC_NPS4,
     [{"cpu": [H(0, 4), H(4, 5), H(0, 1)]}, {"gpu": [H(0, 4), H(4, 5)]}], H(4, 5), H(0, 4)),
    ("mixed widths: a preferred single node wins", EPYC_NPS4,
     [{"cpu": [H(5), H(0, 1)]}, {"gpu": [H(5), H(0, 1)]}], H(5), H(5)),
    ("asymmetric rows: all ordered pairs are averaged, tie to the lower mask", EIGHT_NODES,
     [{"cpu": [H(6, 7), H(4, 6)]}, {"dev": [H(6, 7), H(4, 6)]}], H(4, 6), H(4, 6)),
    ("asymmetric rows: a symmetric pair at 10.5 beats 11", EIGHT_NODES,
     [{"cpu": [H(6, 7), H(4, 5)]}, {"dev": [H(6, 7), H(4, 5)]}], H(4, 5), H(4, 5)),
    ("cross-socket non-preferred pair loses to a same-socket one", EIGHT_NODES,
     [{"cpu": [H(3, 4, p=False), H(4, 5, p=False)]}, {"dev": [H(3, 4, 5, 6, p=False)]}],
     H(4, 5, p=False), H(3, 4, p=False)),
    ("single-node masks compare by self distance", SELF_DISTANCE,
     [{"cpu": [H(0), H(1)]}], H(1), H(0)),
]


@pytest.mark.parametrize(
    ("name", "info", "providers", "with_closest", "without"),
    CLOSEST_CASES,
    ids=[c[0] for c in CLOSEST_CASES],
)
@pytest.mark.parametrize("policy_cls", [BestEffortPolicy, RestrictedPolicy])
def test_prefer_closest_numa_merge(
    policy_cls: type[BestEffortPolicy],
    name: str,
    info: NUMAInfo,
    providers: list[Any],
    with_closest: TopologyHint,
    without: TopologyHint,
) -> None:
    hint, admit = policy_cls(info, CLOSEST).merge(providers)
    assert hint == with_closest
    assert admit is (True if policy_cls is BestEffortPolicy else with_closest.preferred)
    assert policy_cls(info, PLAIN).merge(providers)[0] == without


def test_prefer_closest_ignored_by_single_numa_node() -> None:
    providers = [{"cpu": [H(0), H(1)]}]
    assert BestEffortPolicy(SELF_DISTANCE, CLOSEST).merge(providers) == (H(1), True)
    assert SingleNumaNodePolicy(SELF_DISTANCE, CLOSEST).merge(providers) == (H(0), True)


# --- NewManager: policy choice, NUMA-count limit -----------------------------


def _machine(n: int, with_distances: bool = True) -> Machine:
    rows = [tuple(10 if i == j else 20 for j in range(n)) for i in range(n)]
    return Machine(
        topology=CPUTopology({}),
        numa_nodes=tuple(
            NUMANode(id=i, memory=1 << 30, distances=rows[i] if with_distances else None)
            for i in range(n)
        ),
    )


@pytest.mark.parametrize(
    ("description", "policy_name", "expected_name"),
    [
        ("Policy is set to none", "none", "none"),
        ("Policy is set to best-effort", "best-effort", "best-effort"),
        ("Policy is set to restricted", "restricted", "restricted"),
        ("Policy is set to single-numa-node", "single-numa-node", "single-numa-node"),
    ],
)
def test_new_manager_policy(description: str, policy_name: str, expected_name: str) -> None:
    policy, info, _ = new_topology_policy(policy_name, _machine(2), None, Gates())
    assert policy.name == expected_name
    assert info.nodes == (0, 1)
    assert new_policy(policy_name, info, PolicyOptions()).name == expected_name


NewManagerError = tuple[str, str, int, bool, dict[str, str] | None, str]
NEW_MANAGER_ERRORS: list[NewManagerError] = [
    ("Policy is set to unknown", "unknown", 2, True, None, 'unknown policy: "unknown"'),
    ("policy names are case-sensitive", "Best-Effort", 2, True, None, 'unknown policy: "Best-Effort"'),
    ("Unknown policy option, best-effort policy", "best-effort", 2, True, {"unknown-option": "true"},
     'unknown Topology Manager Policy option: "unknown-option"'),
    ("Unknown policy option, restricted policy", "restricted", 2, True, {"unknown-option": "true"},
     'unknown Topology Manager Policy option: "unknown-option"'),
    ("can't get NUMA distances", "best-effort", 1, False, {"prefer-closest-numa-nodes": "true"},
     "cannot discover NUMA topology: error getting NUMA distances from cadvisor"),
    ("more than 8 NUMA nodes", "best-effort", 9, True, None,
     "unsupported on machines with more than 8 NUMA Nodes"),
    ("the NUMA limit is checked before the policy name", "unknown", 9, True, None,
     "unsupported on machines with more than 8 NUMA Nodes"),
    ("options are parsed before the NUMA limit", "restricted", 9, True,
     {"max-allowable-numa-nodes": "7"},
     'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    ("raised limit still applies", "single-numa-node", 16, True, {"max-allowable-numa-nodes": "12"},
     "unsupported on machines with more than 12 NUMA Nodes"),
    ("unknown policy name after options are parsed", "unknown", 2, True, {"unknown-option": "x"},
     'unknown Topology Manager Policy option: "unknown-option"'),
]


@pytest.mark.parametrize(
    ("description", "policy_name", "nodes", "distances", "options", "message"),
    NEW_MANAGER_ERRORS,
    ids=[c[0] for c in NEW_MANAGER_ERRORS],
)
def test_new_manager_errors(
    description: str,
    policy_name: str,
    nodes: int,
    distances: bool,
    options: dict[str, str] | None,
    message: str,
) -> None:
    with pytest.raises(KubeletStartupError) as e:
        new_topology_policy(policy_name, _machine(nodes, distances), options, Gates())
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("policy_name", "nodes", "options"),
    [
        # policy none short-circuits: no option parsing, no NUMA limit
        ("none", 9, None),
        ("none", 64, {"unknown-option": "x", "prefer-closest-numa-nodes": "maybe"}),
        ("best-effort", 8, None),
        ("best-effort", 9, {"max-allowable-numa-nodes": "9"}),
        ("single-numa-node", 16, {"max-allowable-numa-nodes": "16"}),
        ("restricted", 4, {"prefer-closest-numa-nodes": "true"}),
    ],
)
def test_new_manager_accepts(policy_name: str, nodes: int, options: dict[str, str] | None) -> None:
    policy, info, _ = new_topology_policy(policy_name, _machine(nodes), options, Gates())
    assert policy.name == policy_name
    assert len(info.nodes) == nodes


def test_new_manager_none_policy_merges_nothing() -> None:
    policy, _, _ = new_topology_policy("none", _machine(2), None, Gates())
    assert isinstance(policy, NonePolicy)
    assert policy.merge([{"cpu": [H(0)]}]) == (EMPTY_HINT, True)


def test_new_manager_prefer_closest_keeps_distances() -> None:
    _, info, opts = new_topology_policy(
        "best-effort", _machine(2), {"prefer-closest-numa-nodes": "true"}, Gates()
    )
    assert opts.prefer_closest_numa
    assert dict(info.distances) == {0: (10, 20), 1: (20, 10)}


@pytest.mark.parametrize(
    ("policy_name", "nodes", "limit", "fails"),
    [
        ("best-effort", 8, 8, False),
        ("best-effort", 9, 8, True),
        ("none", 9, 8, False),
        ("restricted", 10, 10, False),
        ("restricted", 11, 10, True),
    ],
)
def test_check_numa_count(policy_name: str, nodes: int, limit: int, fails: bool) -> None:
    info = NUMAInfo(tuple(range(nodes)), {})
    opts = PolicyOptions(max_allowable_numa_nodes=limit)
    if fails:
        with pytest.raises(KubeletStartupError, match=f"^unsupported on machines with more than {limit} NUMA Nodes$"):
            check_numa_count(policy_name, info, opts)
    else:
        check_numa_count(policy_name, info, opts)


@pytest.mark.parametrize("name", ["none", "best-effort", "restricted", "single-numa-node"])
def test_validate_policy_name_ok(name: str) -> None:
    assert validate_policy_name(name) is None


def test_validate_policy_name_invalid() -> None:
    # pkg/kubelet/apis/config/validation: "invalid TopologyManagerPolicy"
    assert validate_policy_name("invalid-policy") == (
        'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "invalid-policy" '
        'must be one of: ["none" "best-effort" "restricted" "single-numa-node"]'
    )
