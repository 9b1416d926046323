"""The ``restricted`` policy.

Mirrors ``pkg/kubelet/cm/topologymanager/policy_restricted.go`` (v1.37):
the best-effort merge, but only a preferred merged hint is admitted.
"""

from __future__ import annotations

from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.policy import POLICY_RESTRICTED
from podnuma.cm.topologymanager.policy_best_effort import BestEffortPolicy

__all__ = ["RestrictedPolicy"]


class RestrictedPolicy(BestEffortPolicy):
    """``restrictedPolicy`` (embeds ``bestEffortPolicy`` upstream)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return POLICY_RESTRICTED

    def can_admit_pod_result(self, hint: TopologyHint) -> bool:
        return hint.preferred
