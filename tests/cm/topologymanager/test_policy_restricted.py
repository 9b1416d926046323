"""Port of upstream ``policy_restricted_test.go``: the best-effort merge
tables (restricted embeds best-effort), admitting only preferred hints."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.policy_options import PolicyOptions
from podnuma.cm.topologymanager.policy_restricted import RestrictedPolicy

from .helpers import EIGHT_NODES, FOUR_NODES, NIL, TWO_NODES, H
from .merge_cases import (
    best_effort_cases,
    best_effort_cases_closest_numa,
    best_effort_cases_no_policies,
    common_cases,
)


def test_name() -> None:
    assert RestrictedPolicy(TWO_NODES).name == "restricted"


@pytest.mark.parametrize(("hint", "expected"), [(NIL(False), False), (NIL(True), True)])
def test_can_admit_pod_result(hint: TopologyHint, expected: bool) -> None:
    assert RestrictedPolicy(TWO_NODES).can_admit_pod_result(hint) is expected


MERGE = (
    common_cases()
    + best_effort_cases(list(FOUR_NODES.nodes))
    + best_effort_cases_no_policies()
)


@pytest.mark.parametrize(("name", "providers", "expected"), MERGE, ids=[c[0] for c in MERGE])
def test_merge(name: str, providers: list[Any], expected: TopologyHint) -> None:
    hint, admit = RestrictedPolicy(FOUR_NODES, PolicyOptions()).merge(providers)
    assert hint == expected
    assert admit is expected.preferred


MERGE_CLOSEST = (
    common_cases()
    + best_effort_cases(list(EIGHT_NODES.nodes))
    + best_effort_cases_closest_numa()
)


@pytest.mark.parametrize(
    ("name", "providers", "expected"), MERGE_CLOSEST, ids=[c[0] for c in MERGE_CLOSEST]
)
def test_merge_closest_numa(name: str, providers: list[Any], expected: TopologyHint) -> None:
    policy = RestrictedPolicy(EIGHT_NODES, PolicyOptions(prefer_closest_numa=True))
    hint, admit = policy.merge(providers)
    assert hint == expected
    assert admit is expected.preferred


def test_cpu_on_node0_and_device_on_node1_is_rejected() -> None:
    # upstream quirk: preferred hints with different masks never merge to
    # a preferred hint, so restricted refuses the pod.
    providers = [{"cpu": [H(0)]}, {"vendor.com/dev": [H(1)]}]
    assert RestrictedPolicy(TWO_NODES).merge(providers) == (H(0, 1, p=False), False)


def test_non_preferred_merge_can_omit_the_device_node() -> None:
    # With the wide fallbacks the providers also offer, the winner is the
    # non-preferred mask closest to the target width (1): {0}, which does
    # not even contain the device's node.
    providers = [
        {"cpu": [H(0), H(0, 1, p=False)]},
        {"vendor.com/dev": [H(1), H(0, 1, p=False)]},
    ]
    assert RestrictedPolicy(TWO_NODES).merge(providers) == (H(0, p=False), False)


def test_matching_preferred_hints_are_admitted() -> None:
    providers = [
        {"cpu": [H(0), H(1), H(0, 1, p=False)]},
        {"vendor.com/dev": [H(1), H(0, 1, p=False)]},
    ]
    assert RestrictedPolicy(TWO_NODES).merge(providers) == (H(1), True)
