"""Port of upstream ``policy_single_numa_node_test.go``."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.policy_options import PolicyOptions
from podnuma.cm.topologymanager.policy_single_numa_node import (
    SingleNumaNodePolicy,
    filter_single_numa_hints,
)

from .helpers import EIGHT_NODES, FOUR_NODES, NIL, TWO_NODES, H
from .merge_cases import common_cases, single_numa_node_cases


def test_name() -> None:
    assert SingleNumaNodePolicy(TWO_NODES).name == "single-numa-node"


@pytest.mark.parametrize(("hint", "expected"), [(NIL(False), False), (NIL(True), True)])
def test_can_admit_pod_result(hint: TopologyHint, expected: bool) -> None:
    assert SingleNumaNodePolicy(TWO_NODES).can_admit_pod_result(hint) is expected


FILTER_CASES: list[tuple[str, list[list[TopologyHint]], list[list[TopologyHint]]]] = [
    ("filter empty resources", [], []),
    ("filter hints with nil socket mask 1/2",
     [[NIL(False)], [NIL(True)]],
     [[], [NIL(True)]]),
    ("filter hints with nil socket mask 2/2",
     [[H(0), NIL(False)], [H(1), NIL(True)]],
     [[H(0)], [H(1), NIL(True)]]),
    ("filter hints with empty resource socket mask",
     [[H(1), H(0), NIL(False)], []],
     [[H(1), H(0)], []]),
    ("filter hints with wide sockemask",
     [
         [H(0), H(1), H(1, 2, p=False), H(0, 1, 2, p=False), NIL(False)],
         [H(1, 2, p=False), H(0, 1, 2, p=False), H(0, 2, p=False), H(3, p=False)],
         [H(1, 2, p=False), H(0, 1, 2, p=False), H(0, 2, p=False)],
     ],
     [[H(0), H(1)], [], []]),
]


@pytest.mark.parametrize(("name", "resources", "expected"), FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter_hints(
    name: str, resources: list[list[TopologyHint]], expected: list[list[TopologyHint]]
) -> None:
    assert filter_single_numa_hints(resources) == expected


MERGE = common_cases() + single_numa_node_cases()


@pytest.mark.parametrize(("name", "providers", "expected"), MERGE, ids=[c[0] for c in MERGE])
def test_merge(name: str, providers: list[Any], expected: TopologyHint) -> None:
    hint, admit = SingleNumaNodePolicy(FOUR_NODES, PolicyOptions()).merge(providers)
    assert hint == expected
    assert admit is expected.preferred


@pytest.mark.parametrize(("name", "providers", "expected"), MERGE, ids=[c[0] for c in MERGE])
def test_merge_ignores_prefer_closest(name: str, providers: list[Any], expected: TopologyHint) -> None:
    # Not an upstream table: the same expectations hold with the option on.
    hint, _ = SingleNumaNodePolicy(EIGHT_NODES, PolicyOptions(prefer_closest_numa=True)).merge(providers)
    assert hint == expected


def test_single_node_machine_reports_nil_affinity() -> None:
    # On a one-node machine the only single-node mask is the default mask.
    info = FOUR_NODES.of([0], {0: (10,)})
    assert SingleNumaNodePolicy(info).merge([{"cpu": [H(0)]}]) == (NIL(True), True)


def test_only_multi_node_hints_are_rejected() -> None:
    # Only a multi-node hint: nothing survives the filter -> rejected.
    providers = [{"vendor.com/dev": [H(0, 1, p=False)]}]
    assert SingleNumaNodePolicy(TWO_NODES).merge(providers) == (NIL(False), False)
