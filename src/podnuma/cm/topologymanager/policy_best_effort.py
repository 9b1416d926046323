"""The ``best-effort`` policy.

Mirrors ``pkg/kubelet/cm/topologymanager/policy_best_effort.go`` (v1.37):
merge every provider's hints with ``HintMerger`` and always admit, whatever
the merged hint's preference.
"""

from __future__ import annotations

from podnuma.buildinfo import mypyc_attr
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    HintMerger,
    MergeTrace,
    ProvidersHints,
    filter_providers_hints,
)
from podnuma.cm.topologymanager.policy_options import PolicyOptions

__all__ = ["BestEffortPolicy"]


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class BestEffortPolicy:
    """``bestEffortPolicy``."""

    __slots__ = ("numa_info", "opts")

    def __init__(self, numa_info: NUMAInfo, opts: PolicyOptions | None = None) -> None:
        self.numa_info = numa_info
        self.opts = opts if opts is not None else PolicyOptions()

    @property
    def name(self) -> str:
        return POLICY_BEST_EFFORT

    def can_admit_pod_result(self, hint: TopologyHint) -> bool:
        return True

    def merge(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]:
        best, admit, _ = self.merge_traced(providers_hints)
        return best, admit

    def merge_traced(
        self, providers_hints: ProvidersHints
    ) -> tuple[TopologyHint, bool, MergeTrace]:
        """``Merge`` and the record of what it worked on."""
        filtered = filter_providers_hints(providers_hints)
        merger = HintMerger(self.numa_info, filtered, self.name, self.opts)
        best = merger.merge()
        return best, self.can_admit_pod_result(best), merger.trace()
