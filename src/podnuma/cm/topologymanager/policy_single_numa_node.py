"""The ``single-numa-node`` policy.

Mirrors ``pkg/kubelet/cm/topologymanager/policy_single_numa_node.go``
(v1.37): keep only preferred hints that are "don't care" (nil affinity) or
name exactly one NUMA node, merge those (prefer-closest-numa-nodes is
ignored), report a merged mask equal to all NUMA nodes as nil, and admit
only a preferred result.
"""

from __future__ import annotations

from collections.abc import Sequence

from podnuma.buildinfo import mypyc_attr
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy import (
    POLICY_SINGLE_NUMA_NODE,
    HintMerger,
    MergeTrace,
    ProvidersHints,
    filter_providers_hints,
)
from podnuma.cm.topologymanager.policy_options import PolicyOptions

__all__ = ["SingleNumaNodePolicy", "filter_single_numa_hints"]

def filter_single_numa_hints(
    all_resources_hints: Sequence[Sequence[TopologyHint]],
) -> list[list[TopologyHint]]:
    """``filterSingleNumaHints``: per resource, the preferred hints with a nil
    affinity or exactly one NUMA node (a resource may end up with none)."""
    out: list[list[TopologyHint]] = []
    for resource_hints in all_resources_hints:
        kept: list[TopologyHint] = []
        for hint in resource_hints:
            if not hint.preferred:
                continue
            aff = hint.numa_node_affinity
            if aff is None or aff.count() == 1:
                kept.append(hint)
        out.append(kept)
    return out


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class SingleNumaNodePolicy:
    """``singleNumaNodePolicy``."""

    __slots__ = ("numa_info", "opts")

    def __init__(self, numa_info: NUMAInfo, opts: PolicyOptions | None = None) -> None:
        self.numa_info = numa_info
        self.opts = opts if opts is not None else PolicyOptions()

    @property
    def name(self) -> str:
        return POLICY_SINGLE_NUMA_NODE

    def can_admit_pod_result(self, hint: TopologyHint) -> bool:
        return hint.preferred

    def merge(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]:
        best, admit, _ = self.merge_traced(providers_hints)
        return best, admit

    def merge_traced(
        self, providers_hints: ProvidersHints
    ) -> tuple[TopologyHint, bool, MergeTrace]:
        """``Merge`` and the record of what it worked on."""
        filtered = filter_providers_hints(providers_hints)
        single = filter_single_numa_hints(filtered)
        merger = HintMerger(self.numa_info, single, self.name, self.opts)
        best = merger.merge()
        # A merged mask covering every NUMA node (the "don't care" default)
        # is reported as a nil affinity.
        if best.numa_node_affinity == self.numa_info.default_affinity_mask():
            best = TopologyHint(None, best.preferred)
        return best, self.can_admit_pod_result(best), merger.trace()
