"""The ``none`` policy.

Mirrors ``pkg/kubelet/cm/topologymanager/policy_none.go`` (v1.37): no
alignment; ``Merge`` returns the zero hint (nil affinity, not preferred) and
always admits.
"""

from __future__ import annotations

from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.cm.topologymanager.policy import POLICY_NONE, ProvidersHints

__all__ = ["NonePolicy"]


class NonePolicy:
    """``nonePolicy``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return POLICY_NONE

    def can_admit_pod_result(self, hint: TopologyHint | None) -> bool:
        return True

    def merge(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]:
        return EMPTY_HINT, self.can_admit_pod_result(None)
