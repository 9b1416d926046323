"""Port of upstream ``policy_none_test.go``."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.cm.topologymanager.policy_none import NonePolicy

from .helpers import NIL, H


def test_name() -> None:
    assert NonePolicy().name == "none"


@pytest.mark.parametrize("hint", [NIL(False), NIL(True)])
def test_can_admit_pod_result(hint: TopologyHint) -> None:
    assert NonePolicy().can_admit_pod_result(hint) is True


@pytest.mark.parametrize(
    ("name", "providers"),
    [
        ("merged empty providers hints", []),
        ("merge with a single provider with a single preferred resource",
         [{"resource": [H(0, 1)]}]),
        ("merge with a single provider with a single non-preferred resource",
         [{"resource": [H(0, 1, p=False)]}]),
    ],
)
def test_merge(name: str, providers: list[Any]) -> None:
    assert NonePolicy().merge(providers) == (EMPTY_HINT, True)
    assert TopologyHint(None, False) == EMPTY_HINT
