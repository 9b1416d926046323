"""The merge tables of upstream ``policy_test.go`` (and the per-policy
``mergeTestCases``), as data: ``(name, providers_hints, expected)``.

Functions of ``all_nodes`` take the machine's NUMA ids for the cases whose
expectation is "every NUMA node".
"""

from __future__ import annotations

from typing import Any

from podnuma.cm.topologymanager.hint import TopologyHint

from .helpers import NIL, H

Case = tuple[str, list[Any], TopologyHint]


def common_cases() -> list[Case]:
    """``commonPolicyMergeTestCases``."""
    return [
        ("two providers, 1 hint each, same mask, both preferred 1/2",
         [{"resource1": [H(0)]}, {"resource2": [H(0)]}], H(0)),
        ("two providers, 1 hint each, same mask, both preferred 2/2",
         [{"resource1": [H(1)]}, {"resource2": [H(1)]}], H(1)),
        ("two providers, 1 no hints, 1 single hint preferred 1/2",
         [None, {"resource": [H(0)]}], H(0)),
        ("two providers, 1 no hints, 1 single hint preferred 2/2",
         [None, {"resource": [H(1)]}], H(1)),
        ("two providers, 1 with 2 hints, 1 with single hint matching 1/2",
         [{"resource1": [H(0), H(1)]}, {"resource2": [H(0)]}], H(0)),
        ("two providers, 1 with 2 hints, 1 with single hint matching 2/2",
         [{"resource1": [H(0), H(1)]}, {"resource2": [H(1)]}], H(1)),
        ("two providers, both with 2 hints, matching narrower preferred hint from both",
         [{"resource1": [H(0), H(1)]}, {"resource2": [H(0), H(0, 1, p=False)]}], H(0)),
        ("less narrow preferred hints are chosen over narrower non-preferred hints",
         [{"resource1": [H(1), H(0, 1, p=False)]},
          {"resource2": [H(0), H(1), H(0, 1, p=False)]}], H(1)),
        ("multiple resources, same provider",
         [{"resource1": [H(1), H(0, 1, p=False)],
           "resource2": [H(0), H(1), H(0, 1, p=False)]}], H(1)),
    ]


def best_effort_cases(all_nodes: list[int]) -> list[Case]:
    """``bestEffortPolicy.mergeTestCases`` (also run for restricted)."""
    every = H(*all_nodes)
    every_np = H(*all_nodes, p=False)
    r1_wide = [H(0, 1, 2, 3, p=False), H(0, 1, p=False)]
    return [
        ("two providers, 2 hints each, same mask (some with different bits), same preferred",
         [{"resource1": [H(0, 1), H(0, 2)]}, {"resource2": [H(0, 1), H(0, 2)]}], H(0, 1)),
        ("TopologyHint not set", [], every),
        ("HintProvider returns empty non-nil map", [{}], every),
        ("HintProvider returns nil hint list for a resource", [{"resource": None}], every),
        ("HintProvider returns empty non-nil hint list for a resource",
         [{"resource": []}], every_np),
        ("single TopologyHint with Preferred true and nil affinity",
         [{"resource": [NIL(True)]}], every),
        ("single TopologyHint with Preferred false and nil affinity",
         [{"resource": [NIL(False)]}], every_np),
        ("two providers, 1 hint each, no common mask",
         [{"resource1": [H(0)]}, {"resource2": [H(1)]}], every_np),
        ("two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
         [{"resource1": [H(0)]}, {"resource2": [H(0, p=False)]}], H(0, p=False)),
        ("two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
         [{"resource1": [H(1)]}, {"resource2": [H(1, p=False)]}], H(1, p=False)),
        ("two providers, 1 hint each, 1 wider mask, both preferred 1/2",
         [{"resource1": [H(0)]}, {"resource2": [H(0, 1)]}], H(0, p=False)),
        ("two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
         [{"resource1": [H(0), H(1)]}, {"resource2": [H(0, 1, p=False)]}], H(0, p=False)),
        ("two providers, 1 hint each, 1 wider mask, both preferred 2/2",
         [{"resource1": [H(1)]}, {"resource2": [H(0, 1)]}], H(1, p=False)),
        ("bestNonPreferredAffinityCount (1)",
         [{"resource1": r1_wide}, {"resource2": [H(0, 1, p=False)]}], H(0, 1, p=False)),
        ("bestNonPreferredAffinityCount (2)",
         [{"resource1": r1_wide}, {"resource2": [H(0, 3, p=False)]}], H(0, 3, p=False)),
        ("bestNonPreferredAffinityCount (3)",
         [{"resource1": r1_wide}, {"resource2": [H(1, 2, p=False)]}], H(1, 2, p=False)),
        ("bestNonPreferredAffinityCount (4)",
         [{"resource1": r1_wide}, {"resource2": [H(2, 3, p=False)]}], H(2, 3, p=False)),
    ]


_R1_WIDE = [H(0, 1, 2, 3, p=False), H(0, 1, p=False)]
_CASE5 = [{"resource1": _R1_WIDE}, {"resource2": [H(1, 2, p=False), H(2, 3, p=False)]}]
_CASE6 = [
    {"resource1": _R1_WIDE},
    {"resource2": [H(1, 2, 3, p=False), H(1, 2, p=False), H(1, 3, p=False), H(2, 3, p=False)]},
]


def best_effort_cases_no_policies() -> list[Case]:
    """``bestEffortPolicy.mergeTestCasesNoPolicies`` (narrowest wins)."""
    return [
        ("bestNonPreferredAffinityCount (5)", _CASE5, H(1, 2, p=False)),
        ("bestNonPreferredAffinityCount (6)", _CASE6, H(1, 2, p=False)),
    ]


def best_effort_cases_closest_numa() -> list[Case]:
    """``bestEffortPolicy.mergeTestCasesClosestNUMA`` (eight-node distances)."""
    return [
        ("two providers, 2 hints each, same mask (some with different bits), same preferred",
         [{"resource1": [H(0, 4), H(0, 2)]}, {"resource2": [H(0, 4), H(0, 2)]}], H(0, 2)),
        ("two providers, 2 hints each, different mask",
         [{"resource1": [H(4), H(0, 2)]}, {"resource2": [H(4), H(0, 2)]}], H(4)),
        ("bestNonPreferredAffinityCount (5)", _CASE5, H(2, 3, p=False)),
        ("bestNonPreferredAffinityCount (6)", _CASE6, H(2, 3, p=False)),
    ]


def single_numa_node_cases() -> list[Case]:
    """``singleNumaNodePolicy.mergeTestCases``."""
    return [
        ("TopologyHint not set", [], NIL(True)),
        ("HintProvider returns empty non-nil map", [{}], NIL(True)),
        ("HintProvider returns nil hint list for a resource", [{"resource": None}], NIL(True)),
        ("HintProvider returns empty non-nil hint list for a resource",
         [{"resource": []}], NIL(False)),
        ("single TopologyHint with Preferred true and nil affinity",
         [{"resource": [NIL(True)]}], NIL(True)),
        ("single TopologyHint with Preferred false and nil affinity",
         [{"resource": [NIL(False)]}], NIL(False)),
        ("two providers, 1 hint each, no common mask",
         [{"resource1": [H(0)]}, {"resource2": [H(1)]}], NIL(False)),
        ("two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
         [{"resource1": [H(0)]}, {"resource2": [H(0, p=False)]}], NIL(False)),
        ("two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
         [{"resource1": [H(1)]}, {"resource2": [H(1, p=False)]}], NIL(False)),
        ("two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
         [{"resource1": [H(0), H(1)]}, {"resource2": [H(0, 1, p=False)]}], NIL(False)),
        ("single NUMA hint generation",
         [{"resource1": [H(0, 1)], "resource2": [H(0), H(1), H(0, 1, p=False)]}], NIL(False)),
        ("one no-preference provider",
         [{"resource1": [H(0), H(1), H(0, 1, p=False)]}, None], H(0)),
    ]
