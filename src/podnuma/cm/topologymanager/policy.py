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
from typing import Final, Protocol

from podnuma.buildinfo import mypyc_attr
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.mask_tables import NIL_MASK_CONVERSION, check_mask_bits
from podnuma.cm.topologymanager.numa_info import NUMAInfo, distances_complete
from podnuma.cm.topologymanager.policy_fastmerge import FastMerge
from podnuma.cm.topologymanager.policy_options import (
    PolicyOptions,
)

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

POLICY_NONE: Final[str] = "none"
POLICY_BEST_EFFORT: Final[str] = "best-effort"
POLICY_RESTRICTED: Final[str] = "restricted"
POLICY_SINGLE_NUMA_NODE: Final[str] = "single-numa-node"

POLICY_NAMES: Final[tuple[str, ...]] = (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)

# One provider's answer: resource name -> hints. ``None`` (the whole map or
# one list) is Go's nil; an empty list is Go's empty non-nil slice.
ProviderHints = Mapping[str, Sequence[TopologyHint] | None] | None
ProvidersHints = Sequence[ProviderHints]


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class MergeTrace:
    """What a policy's ``Merge`` worked on, recorded for explanations (the
    kubelet keeps none of it): the hint lists after filtering (one per
    provider and resource, ``filterProvidersHints`` and, for
    single-numa-node, ``filterSingleNumaHints``), the distinct merged hints
    the permutations produced (the candidates ``compare`` chose among, best
    first), the target width of non-preferred merges
    (``maxOfMinAffinityCounts``) and whether ties went to the closest NUMA
    nodes. Every admission records one; only explanations read the
    candidates, so they are enumerated when first read."""

    __slots__ = ("_merger", "_filtered", "_candidates")

    def __init__(self, merger: HintMerger) -> None:
        self._merger = merger
        self._filtered: tuple[tuple[TopologyHint, ...], ...] | None = None
        self._candidates: tuple[TopologyHint, ...] | None = None

    @property
    def filtered(self) -> tuple[tuple[TopologyHint, ...], ...]:
        if self._filtered is None:
            self._filtered = tuple(tuple(lst) for lst in self._merger.hints)
        return self._filtered

    @property
    def candidates(self) -> tuple[TopologyHint, ...]:
        if self._candidates is None:
            self._candidates = self._merger.candidates()
        return self._candidates

    @property
    def target_width(self) -> int:
        return self._merger.best_non_preferred_affinity_count

    @property
    def use_closest(self) -> bool:
        return self._merger.use_closest

    def _key(self) -> tuple[object, ...]:
        return (self.filtered, self.candidates, self.target_width, self.use_closest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MergeTrace) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"MergeTrace(filtered={self.filtered!r}, candidates={self.candidates!r}, "
            f"target_width={self.target_width!r}, use_closest={self.use_closest!r})"
        )


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
    max_of_min_count = 0
    for resource_hints in filtered_hints:
        narrowest = narrowest_hint(resource_hints)
        if narrowest is None:
            continue
        assert narrowest.numa_node_affinity is not None
        count = narrowest.numa_node_affinity.count()
        if count > max_of_min_count:
            max_of_min_count = count
    return max_of_min_count


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


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class HintMerger:
    """``HintMerger``: finds the best merged hint over all permutations."""

    __slots__ = ("numa_info", "hints", "_best_non_preferred", "_use_closest")

    def __init__(
        self,
        numa_info: NUMAInfo,
        hints: Sequence[Sequence[TopologyHint]],
        policy_name: str,
        opts: PolicyOptions,
    ) -> None:
        self.numa_info = numa_info
        self.hints = hints
        self._best_non_preferred: int | None = None
        # prefer-closest-numa-nodes is ignored by single-numa-node.
        self._use_closest = policy_name != POLICY_SINGLE_NUMA_NODE and opts.prefer_closest_numa

    @property
    def use_closest(self) -> bool:
        """Ties between equal widths go to the closest NUMA nodes."""
        return self._use_closest

    @property
    def best_non_preferred_affinity_count(self) -> int:
        """Among non-preferred hints, aim for this width: the largest of the
        resources' narrowest widths (computed when first needed)."""
        if self._best_non_preferred is None:
            self._best_non_preferred = max_of_min_affinity_counts(self.hints)
        return self._best_non_preferred

    @best_non_preferred_affinity_count.setter
    def best_non_preferred_affinity_count(self, value: int) -> None:
        self._best_non_preferred = value

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
        """``HintMerger.Merge``: ``compare`` folded over the merged hint
        of every permutation of the providers' hints; ``{default mask, not
        preferred}`` when none qualifies.

        The fold's result is computed without walking the permutations
        (``policy_fastmerge.py``); :meth:`merge_naive` is the literal walk,
        and the tests check both agree. A NUMA id outside 0-63 makes the
        default mask nil and the kubelet panic (:meth:`_check_default`);
        with prefer-closest on a distance table missing entries (see
        ``numa_info.py``) the walk runs literally, to panic where the
        kubelet does."""
        self._check_default()
        if self._use_closest and not distances_complete(self.numa_info.distances, self.numa_info.nodes):
            # a distance lookup off a row's end panics in the kubelet at the
            # first ``Closest`` that reaches it: only the walk meets it where
            # the kubelet does (such machines are small and rare)
            return self.merge_naive()
        fast = FastMerge(self.numa_info, self.hints, self._use_closest, self._best_non_preferred)
        best = fast.merge()
        self._best_non_preferred = fast.target
        return best

    def candidates(self) -> tuple[TopologyHint, ...]:
        """Every distinct non-empty merged hint of the permutations, best
        first by ``compare`` (for explanations; :meth:`merge` does not need
        them)."""
        return FastMerge(
            self.numa_info, self.hints, self._use_closest, self.best_non_preferred_affinity_count
        ).candidates()

    def trace(self) -> MergeTrace:
        """The record of the last :meth:`merge` (its candidates and target
        width are computed when first read)."""
        return MergeTrace(self)

    def _check_default(self) -> None:
        """``DefaultAffinityMask`` is nil for a NUMA id outside 0-63 (its
        ``NewBitMask`` error dropped), and ``mergePermutation`` hands it to
        ``bitmask.And``, whose type assertion panics: every permutation
        (there is at least one: a provider without hints gives the "any"
        hint) and so every pod admitted under a hint policy."""
        check_mask_bits("[topologymanager] mergePermutation", self.numa_info.nodes, NIL_MASK_CONVERSION)

    def merge_naive(self) -> TopologyHint:
        """The literal permutation walk (reference for tests)."""
        self._check_default()
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
