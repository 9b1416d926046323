"""Port of upstream ``policy_best_effort_test.go`` (with the shared tables
of ``policy_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.policy_best_effort import BestEffortPolicy
from podnuma.cm.topologymanager.policy_options import PolicyOptions

from .helpers import EIGHT_NODES, FOUR_NODES, NIL, TWO_NODES
from .merge_cases import (
    best_effort_cases,
    best_effort_cases_closest_numa,
    best_effort_cases_no_policies,
    common_cases,
)


def test_name() -> None:
    assert BestEffortPolicy(TWO_NODES).name == "best-effort"


@pytest.mark.parametrize("hint", [NIL(False), NIL(True)])
def test_can_admit_pod_result(hint: TopologyHint) -> None:
    assert BestEffortPolicy(TWO_NODES).can_admit_pod_result(hint) is True


MERGE = (
    common_cases()
    + best_effort_cases(list(FOUR_NODES.nodes))
    + best_effort_cases_no_policies()
)


@pytest.mark.parametrize(("name", "providers", "expected"), MERGE, ids=[c[0] for c in MERGE])
def test_merge(name: str, providers: list[Any], expected: TopologyHint) -> None:
    hint, admit = BestEffortPolicy(FOUR_NODES, PolicyOptions()).merge(providers)
    assert hint == expected
    assert admit is True


MERGE_CLOSEST = (
    common_cases()
    + best_effort_cases(list(EIGHT_NODES.nodes))
    + best_effort_cases_closest_numa()
)


@pytest.mark.parametrize(
    ("name", "providers", "expected"), MERGE_CLOSEST, ids=[c[0] for c in MERGE_CLOSEST]
)
def test_merge_closest_numa(name: str, providers: list[Any], expected: TopologyHint) -> None:
    policy = BestEffortPolicy(EIGHT_NODES, PolicyOptions(prefer_closest_numa=True))
    hint, admit = policy.merge(providers)
    assert hint == expected
    assert admit is True
