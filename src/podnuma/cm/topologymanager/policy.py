"""Topology Manager policy interface and hint merging.

Mirrors ``pkg/kubelet/cm/topologymanager/policy.go`` (v1.37): the ``Policy``
interface, ``mergePermutation``, ``filterProvidersHints``, ``narrowestHint``,
``maxOfMinAffinityCounts``, ``HintMerger`` (``compare`` / ``Merge``) and
``iterateAllProviderTopologyHints``. The four policies live in ``policy_none.py``,
``policy_best_effort.py``, ``policy_restricted.py`` and
``policy_single_numa_node.py``; ``new_manager.py`` picks one as
``NewManager`` does.

Hints: a provider returns ``resource -> hints``; ``None`` for the whole map
or for one resource's list (Go nil) means "no preference", an empty list
means "no possible placement" — they merge differently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy_options import (
    PolicyOptions,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "POLICY_NONE",
    "POLICY_BEST_EFFORT",
    "POLICY_RESTRICTED",
    "POLICY_SINGLE_NUMA_NODE",
    "ProviderHints",
    "ProvidersHints",
    "Policy",
    "HintMerger",
    "MergeTrace",
    "merge_traced",
    "merge_permutation",
    "filter_providers_hints",
    "narrowest_hint",
    "max_of_min_affinity_counts",
    "iterate_all_provider_topology_hints",
    "POLICY_NAMES",
    "validate_policy_name",
]

POLICY_NONE = "none"
POLICY_BEST_EFFORT = "best-effort"
POLICY_RESTRICTED = "restricted"
POLICY_SINGLE_NUMA_NODE = "single-numa-node"

POLICY_NAMES = (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)

# One provider's answer: resource name -> hints. ``None`` (the whole map or
# one list) is Go's nil; an empty list is Go's empty non-nil slice.
ProviderHints = Mapping[str, Sequence[TopologyHint] | None] | None
ProvidersHints = Sequence[ProviderHints]


@dataclass(frozen=True, slots=True)
class MergeTrace:
    """What a policy's ``Merge`` worked on, recorded for explanations (the
    kubelet keeps none of it): the hint lists after filtering (one per
    provider and resource, ``filterProvidersHints`` and, for
    single-numa-node, ``filterSingleNumaHints``), the distinct merged hints
    the permutations produced (the candidates ``compare`` chose among, best
    first), the target width of non-preferred merges
    (``maxOfMinAffinityCounts``) and whether ties went to the closest NUMA
    nodes."""

    filtered: tuple[tuple[TopologyHint, ...], ...]
    candidates: tuple[TopologyHint, ...]
    target_width: int
    use_closest: bool


class Policy(Protocol):
    """``Policy``: a name and ``Merge`` -> (merged hint, admit)."""

    @property
    def name(self) -> str: ...

    def merge(self, providers_hints: ProvidersHints) -> tuple[TopologyHint, bool]: ...


def merge_permutation(default_affinity: BitMask, permutation: Sequence[TopologyHint]) -> TopologyHint:
    """``mergePermutation``: AND of the non-nil affinities (starting from the
    default mask). Preferred only if every hint is preferred *and* every
    non-nil affinity equals the first non-nil one."""
    preferred = True
    mask = default_affinity.value
    first: int | None = None
    for hint in permutation:
        aff = hint.numa_node_affinity
        if aff is not None:
            v = aff.value
            if first is None:
                first = v
            elif v != first:
                preferred = False
            mask &= v
        if not hint.preferred:
            preferred = False
    return TopologyHint(BitMask.from_int(mask), preferred)


_NO_PREFERENCE = (TopologyHint(None, True),)
_NO_PLACEMENT = (TopologyHint(None, False),)


def filter_providers_hints(providers_hints: ProvidersHints) -> list[Sequence[TopologyHint]]:
    """``filterProvidersHints``: one hint list per (provider, resource).

    A provider with a nil or empty map, and a resource with a nil list,
    become ``[{nil, preferred}]``; a resource with an empty list becomes
    ``[{nil, not preferred}]``. Go walks each provider's map in random order;
    the merge result does not depend on that order, and here it is the
    mapping's own order.
    """
    out: list[Sequence[TopologyHint]] = []
    for hints in providers_hints:
        if not hints:
            out.append(_NO_PREFERENCE)
            continue
        for resource_hints in hints.values():
            if resource_hints is None:
                out.append(_NO_PREFERENCE)
            elif len(resource_hints) == 0:
                out.append(_NO_PLACEMENT)
            else:
                out.append(resource_hints)
    return out


def narrowest_hint(hints: Sequence[TopologyHint]) -> TopologyHint | None:
    """``narrowestHint``: the narrowest non-nil affinity (first wins ties,
    which cannot happen between distinct masks); ``None`` if there is none."""
    best: TopologyHint | None = None
    for hint in hints:
        aff = hint.numa_node_affinity
        if aff is None:
            continue
        if best is None:
            best = hint
            continue
        assert best.numa_node_affinity is not None
        if aff.is_narrower_than(best.numa_node_affinity):
            best = hint
    return best


def max_of_min_affinity_counts(filtered_hints: Sequence[Sequence[TopologyHint]]) -> int:
    """``maxOfMinAffinityCounts``: the widest of the per-resource narrowest
    hints (0 if no resource has a non-nil hint)."""
    result = 0
    for resource_hints in filtered_hints:
        best = narrowest_hint(resource_hints)
        if best is None:
            continue
        assert best.numa_node_affinity is not None
        result = max(result, best.numa_node_affinity.count())
    return result


def iterate_all_provider_topology_hints(
    all_provider_hints: Sequence[Sequence[TopologyHint]],
    callback: Callable[[list[TopologyHint]], None],
) -> None:
    """``iterateAllProviderTopologyHints``: the cartesian product, first
    provider outermost. No providers -> one empty permutation; a provider
    with no hints -> no permutation at all."""
    n = len(all_provider_hints)
    accum: list[TopologyHint] = []

    def rec(i: int) -> None:
        if i == n:
            callback(list(accum))
            return
        for hint in all_provider_hints[i]:
            accum.append(hint)
            rec(i + 1)
            accum.pop()

    rec(0)


class HintMerger:
    """``HintMerger``: finds the best merged hint over all permutations."""

    __slots__ = (
        "numa_info", "hints", "best_non_preferred_affinity_count", "_use_closest", "candidates",
    )

    def __init__(
        self,
        numa_info: NUMAInfo,
        hints: Sequence[Sequence[TopologyHint]],
        policy_name: str,
        opts: PolicyOptions,
    ) -> None:
        self.numa_info = numa_info
        self.hints = hints
        # Among non-preferred hints, aim for this width: the largest of the
        # resources' narrowest widths.
        self.best_non_preferred_affinity_count = max_of_min_affinity_counts(hints)
        # prefer-closest-numa-nodes is ignored by single-numa-node.
        self._use_closest = policy_name != POLICY_SINGLE_NUMA_NODE and opts.prefer_closest_numa
        # The distinct merged hints of the last merge, best first (a record
        # for explanations; the result does not depend on it).
        self.candidates: tuple[TopologyHint, ...] = ()

    def compare_numa_affinity_masks(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        """``CompareNUMAAffinityMasks``: equal masks keep ``current``; else
        ``Closest`` (prefer-closest, not single-numa-node) or ``Narrowest``."""
        cur = current.numa_node_affinity
        cand = candidate.numa_node_affinity
        assert cur is not None and cand is not None
        if cand == cur:
            return current
        if self._use_closest:
            best = self.numa_info.closest(cur, cand)
        else:
            best = self.numa_info.narrowest(cur, cand)
        return current if best == cur else candidate

    def compare(self, current: TopologyHint | None, candidate: TopologyHint) -> TopologyHint | None:
        """``HintMerger.compare``: returns ``current`` or ``candidate`` (the
        same object)."""
        cand_aff = candidate.numa_node_affinity
        assert cand_aff is not None
        cand_count = cand_aff.count()
        # An empty merged mask never replaces anything.
        if cand_count == 0:
            return current
        if current is None:
            return candidate
        if not current.preferred and candidate.preferred:
            return candidate
        if current.preferred and not candidate.preferred:
            return current
        if current.preferred and candidate.preferred:
            return self.compare_numa_affinity_masks(current, candidate)

        # Both non-preferred: get as close as possible to (not above) the
        # target width.
        cur_aff = current.numa_node_affinity
        assert cur_aff is not None
        cur_count = cur_aff.count()
        target = self.best_non_preferred_affinity_count
        if cur_count > target:
            return self.compare_numa_affinity_masks(current, candidate)
        if cur_count == target:
            if cand_count != target:
                return current
            return self.compare_numa_affinity_masks(current, candidate)
        if cand_count > target:
            return current
        if cand_count == target:
            return candidate
        if cand_count > cur_count:
            return candidate
        if cand_count < cur_count:
            return current
        return self.compare_numa_affinity_masks(current, candidate)

    def merge(self) -> TopologyHint:
        """``HintMerger.Merge``: best merged permutation, or
        ``{default mask, not preferred}`` when nothing qualifies.

        Upstream folds ``compare`` over every permutation of the providers'
        hints. ``compare`` is a total order on (mask, preferred): preferred
        hints first (by mask: narrowest, or closest); then non-preferred ones
        whose width equals the target width, those narrower than it (wider
        first), and those wider than it (narrower first), each ordered by
        mask. Equal hints keep the earlier one and empty masks never win. So
        the fold returns the best of the *distinct* merged hints, and these
        are computed provider by provider as sets of summaries: "all
        preferred, one common mask m" or "not preferred, AND-mask m". Eight
        NUMA nodes and three providers offering every mask take milliseconds
        instead of a walk over 16.6 million permutations; ``merge_naive`` is
        the literal walk, and the tests check both agree.
        """
        default = self.numa_info.default_affinity_mask()
        dmask = default.value
        lists = [
            [
                (None if h.numa_node_affinity is None else h.numa_node_affinity.value, h.preferred)
                for h in hints
            ]
            for hints in self.hints
        ]
        self.candidates = ()
        if any(not lst for lst in lists):
            return TopologyHint(default, False)  # a provider without hints: no permutation
        none_yet = True  # every hint so far nil and preferred
        common: set[int] = set()  # all preferred, every non-nil mask == m
        masks: set[int] = set()  # not preferred, AND of the masks (default included)
        for lst in lists:
            n_none_yet = False
            n_common: set[int] = set()
            n_masks: set[int] = set()
            affs_pref = {a for a, p in lst if a is not None and p}
            affs = {a for a, _ in lst if a is not None}
            nil_pref = any(a is None and p for a, p in lst)
            nil_nonpref = any(a is None and not p for a, p in lst)
            nonpref_affs = {a for a, p in lst if a is not None and not p}
            if none_yet:
                n_none_yet = n_none_yet or nil_pref
                if nil_nonpref:
                    n_masks.add(dmask)
                n_common |= affs_pref
                n_masks |= {dmask & a for a in nonpref_affs}
            for m in common:
                if nil_pref:
                    n_common.add(m)
                if nil_nonpref:
                    n_masks.add(dmask & m)
                if m in affs_pref:
                    n_common.add(m)
                n_masks |= {dmask & m & a for a in affs if a != m or a in nonpref_affs}
            if masks:
                if nil_pref or nil_nonpref:
                    n_masks |= masks
                n_masks |= {m & a for m in masks for a in affs}
            none_yet, common, masks = n_none_yet, n_common, n_masks

        candidates: list[tuple[int, bool]] = []
        if none_yet:
            candidates.append((dmask, True))
        candidates += [(dmask & m, True) for m in common]
        candidates += [(m, False) for m in masks]
        best: TopologyHint | None = None
        seen: list[TopologyHint] = []
        for mask, preferred in sorted(set(candidates)):
            hint = TopologyHint(BitMask.from_int(mask), preferred)
            seen.append(hint)
            best = self.compare(best, hint)
        self.candidates = tuple(self._ranked(seen))
        if best is None:
            return TopologyHint(default, False)
        return best

    def _ranked(self, hints: list[TopologyHint]) -> list[TopologyHint]:
        """``hints`` without empty masks, best first by ``compare``."""
        rest = [h for h in hints if h.numa_node_affinity is not None and h.numa_node_affinity.count()]
        out: list[TopologyHint] = []
        while rest:
            best: TopologyHint | None = None
            for h in rest:
                best = self.compare(best, h)
            assert best is not None
            out.append(best)
            rest = [h for h in rest if h is not best]
        return out

    def trace(self) -> MergeTrace:
        """The record of the last :meth:`merge`."""
        return MergeTrace(
            filtered=tuple(tuple(lst) for lst in self.hints),
            candidates=self.candidates,
            target_width=self.best_non_preferred_affinity_count,
            use_closest=self._use_closest,
        )

    def merge_naive(self) -> TopologyHint:
        """The literal permutation walk (reference for tests)."""
        default = self.numa_info.default_affinity_mask()
        best: list[TopologyHint | None] = [None]

        def visit(permutation: list[TopologyHint]) -> None:
            merged = merge_permutation(default, permutation)
            best[0] = self.compare(best[0], merged)

        iterate_all_provider_topology_hints(self.hints, visit)
        result = best[0]
        if result is None:
            return TopologyHint(default, False)
        return result


def merge_traced(
    policy: Policy, providers_hints: ProvidersHints
) -> tuple[TopologyHint, bool, MergeTrace | None]:
    """``policy.Merge`` plus its record, for policies that keep one."""
    traced = getattr(policy, "merge_traced", None)
    if traced is not None:
        result: tuple[TopologyHint, bool, MergeTrace | None] = traced(providers_hints)
        return result
    best, admit = policy.merge(providers_hints)
    return best, admit, None


def validate_policy_name(name: str) -> str | None:
    """KubeletConfiguration validation (``ValidateKubeletConfiguration``),
    which runs before ``NewManager``: ``None`` if valid, else the error text.
    The kubelet aggregates it with its other validation errors."""
    if name in POLICY_NAMES:
        return None
    names = " ".join(f'"{n}"' for n in POLICY_NAMES)
    return (
        "invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
        f'"{name}" must be one of: [{names}]'
    )
