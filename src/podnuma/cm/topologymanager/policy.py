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

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import reduce
from itertools import compress
from operator import attrgetter, or_
from typing import TYPE_CHECKING, Protocol, cast

from podnuma.buildinfo import ENGINE_COMPILED, mypyc_attr
from podnuma.cm.topologymanager.bitmask import BitMask, mask_value
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy_options import (
    PolicyOptions,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    _Array = npt.NDArray[np.uint64]

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
    hints (0 if no resource has a non-nil hint). The narrowest hint has the
    fewest bits, so only the counts matter."""
    result = 0
    for resource_hints in filtered_hints:
        affs = [a for a in map(_affinity, resource_hints) if a is not None]
        if affs:
            result = max(result, min(map(int.bit_count, map(mask_value, affs))))
    return result


_affinity: Callable[[TopologyHint], BitMask | None] = attrgetter("numa_node_affinity")
_preferred: Callable[[TopologyHint], bool] = attrgetter("preferred")


if ENGINE_COMPILED:
    # compiled, plain loops over the hints beat the C-level pipelines below;
    # the affinity list is not needed (the loops read the hints)

    def _affinities(hints: Sequence[TopologyHint]) -> list[BitMask | None]:
        return []

    def _preferred_masks(
        hints: Sequence[TopologyHint], affs: list[BitMask | None]
    ) -> set[int | None]:
        out: set[int | None] = set()
        for h in hints:
            if h.preferred:
                a = h.numa_node_affinity
                out.add(None if a is None else a.value)
        return out

    def _all_masks(
        hints: Sequence[TopologyHint], affs: list[BitMask | None]
    ) -> set[int | None]:
        out: set[int | None] = set()
        for h in hints:
            a = h.numa_node_affinity
            out.add(None if a is None else a.value)
        return out

else:

    def _affinities(hints: Sequence[TopologyHint]) -> list[BitMask | None]:
        """The hints' masks, in bulk (read once per merge, used twice)."""
        return list(map(_affinity, hints))

    def _preferred_masks(
        hints: Sequence[TopologyHint], affs: list[BitMask | None]
    ) -> set[int | None]:
        """The distinct masks of the preferred hints (``None`` for nil);
        ``affs``: the hints' masks (:func:`_affinities`)."""
        return _masks_of(list(compress(affs, map(_preferred, hints))))

    def _all_masks(
        hints: Sequence[TopologyHint], affs: list[BitMask | None]
    ) -> set[int | None]:
        """The distinct masks of all hints (``None`` for nil), in bulk."""
        return _masks_of(affs)


def _masks_of(affs: list[BitMask | None]) -> set[int | None]:
    """The distinct values of ``affs`` (``None`` for nil), in bulk: a
    ``BitMask`` is always true, so ``filter(None, ...)`` drops the nils."""
    present = list(filter(None, affs))
    # (a set built from a list is sized once; from an iterator it grows step by step)
    out: set[int | None] = set(list(map(mask_value, present)))
    if len(present) != len(affs):
        out.add(None)
    return out


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
        """``HintMerger.Merge``: best merged permutation, or
        ``{default mask, not preferred}`` when nothing qualifies.

        Upstream folds ``compare`` over every permutation of the providers'
        hints. ``compare`` is a total order on (mask, preferred) and empty
        masks never win, so the fold returns the best of the *distinct*
        merged hints; this computes that best directly (docs/topology-merge.md
        explains why it is exact):

        * a preferred merged hint comes only from a permutation of preferred
          hints whose non-nil masks are all one mask ``m`` (merged:
          ``default & m``), or of preferred nil hints only (merged: the
          default mask). Those ``m`` are found by set intersection, and any
          non-empty one beats every non-preferred hint;
        * otherwise the best non-preferred hint is the best of the set of
          achievable AND masks, computed provider by provider (a set fold
          while small, a subset-sum transform over all 2^N masks beyond).

        ``merge_naive`` is the literal walk; the tests check both agree.
        """
        default = self.numa_info.default_affinity_mask()
        dmask = default.value
        if any(len(h) == 0 for h in self.hints):
            return TopologyHint(default, False)  # a provider without hints: no permutation

        # -- preferred candidates ---------------------------------------------
        all_nil_pref = True  # every list offers a preferred nil hint
        common: set[int | None] | None = None  # offered by every list without nil-preferred
        offered: set[int | None] = set()  # preferred masks any list offers
        affinities = [_affinities(hints) for hints in self.hints]
        for i, hints in enumerate(self.hints):
            pref = _preferred_masks(hints, affinities[i])
            nil_pref = None in pref
            pref.discard(None)
            offered |= pref
            if nil_pref:
                continue
            all_nil_pref = False
            common = pref if common is None else common & pref
        masks_pref = offered if common is None else common & offered
        preferred = {dmask & m for m in masks_pref if m is not None}
        if all_nil_pref:
            preferred.add(dmask)
        preferred.discard(0)
        if preferred:
            return TopologyHint(BitMask.from_int(self._best_of(preferred, None)), True)

        # -- non-preferred: the best achievable AND mask ---------------------
        sets: list[set[int] | _Array] = []
        narrowest: list[int] = []  # per list, the fewest bits of a non-nil mask
        singles = frozenset([1 << n for n in self.numa_info.nodes])
        for i, hints in enumerate(self.hints):
            if not ENGINE_COMPILED and len(hints) > self._fold_limit:
                # a list this long goes to the subset-sum transform, which
                # takes it as an array (duplicates and all): no set of it
                fewest, arr = _mask_array(affinities[i], dmask)
                if fewest >= 0:
                    narrowest.append(fewest)
                # (nil hints shrink to one mask: a short array joins the fold as a set)
                sets.append(arr if len(arr) > self._fold_limit else set(arr.tolist()))
                continue
            distinct = _all_masks(hints, affinities[i])
            nil = None in distinct
            distinct.discard(None)
            masks: set[int] = distinct  # type: ignore[assignment]
            if masks:
                narrowest.append(_narrowest(masks, singles))
            sets.append(_masks_within(masks, nil, dmask))
        if self._best_non_preferred is None:
            self._best_non_preferred = max(narrowest) if narrowest else 0  # maxOfMinAffinityCounts
        achievable = _and_masks(sets, dmask, self.numa_info.nodes, self._fold_limit)
        target = self.best_non_preferred_affinity_count
        best = self._best_of(achievable, target)
        if best == 0:
            return TopologyHint(default, False)
        return TopologyHint(BitMask.from_int(best), False)

    # Past this many (mask, hint) pairs in one provider step, the set fold
    # hands over to the subset-sum transform (both exact).
    _fold_limit = 1 << 14

    def _best_of(self, masks: Iterable[int] | _Array, target: int | None) -> int:
        """The best non-empty mask under ``compare``: preferred hints
        (``target`` None) by width, then mask; non-preferred ones by their
        distance to the target width first (``compare``'s rules). Within one
        width: lowest average distance with prefer-closest, then the lowest
        mask. 0 (the empty mask never wins) when there is none."""
        if not isinstance(masks, (list, set)):  # an array from the subset-sum transform
            return self._best_of_array(cast("_Array", masks), target)
        if ENGINE_COMPILED and not self._use_closest:
            return _best_ranked(masks, -1 if target is None else target)
        masks = [m for m in masks if m]
        if not masks:
            return 0
        counts = list(map(int.bit_count, masks))
        width = _pick_width(set(counts), target)
        group = list(compress(masks, map(width.__eq__, counts)))
        if not self._use_closest or len(group) == 1:
            return min(group)
        # same width, same divisor: the average orders as the sum does
        return min(group, key=lambda m: (self._pair_sum(m), m))

    def _best_of_array(self, masks: _Array, target: int | None) -> int:
        import numpy as np

        masks = masks[masks != 0]
        if len(masks) == 0:
            return 0
        counts = np.bitwise_count(masks)
        width = _pick_width({int(c) for c in np.unique(counts)}, target)
        group = masks[counts == width]
        if not self._use_closest:
            return int(group.min())
        return self._best_of(group.tolist(), target)

    def candidates(self) -> tuple[TopologyHint, ...]:
        """Every distinct non-empty merged hint of the permutations, best
        first by ``compare`` (for explanations; :meth:`merge` does not need
        them). Enumerated provider by provider as sets of summaries: "all
        preferred, one common mask m" or "not preferred, AND mask m"."""
        dmask = self.numa_info.default_affinity_mask().value
        lists = [
            [
                (None if h.numa_node_affinity is None else h.numa_node_affinity.value, h.preferred)
                for h in hints
            ]
            for hints in self.hints
        ]
        if any(not lst for lst in lists):
            return ()
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
                n_none_yet = nil_pref
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
        found: set[tuple[int, bool]] = {(m, False) for m in masks}
        found |= {(dmask & m, True) for m in common}
        if none_yet:
            found.add((dmask, True))
        return tuple(
            TopologyHint(BitMask.from_int(m), p)
            for m, p in sorted((x for x in found if x[0]), key=self._rank_key)
        )

    def _rank_key(self, hint: tuple[int, bool]) -> tuple[int, ...]:
        """Sort key of a (mask, preferred) merged hint in ``compare``'s
        total order (docs/topology-merge.md)."""
        mask, preferred = hint
        width = mask.bit_count()
        dist = self._pair_sum(mask) if self._use_closest else 0
        if preferred:
            return (0, width, dist, mask)
        target = self.best_non_preferred_affinity_count
        if width == target:
            return (1, 0, 0, dist, mask)
        if width < target:
            return (1, 1, -width, dist, mask)
        return (1, 2, width, dist, mask)

    def _pair_sum(self, mask: int) -> int:
        """Sum of the distances over all ordered pairs of the mask's nodes
        (for equal widths it orders masks as their average distance does)."""
        distances = self.numa_info.distances
        bits = BitMask.from_int(mask).bits()
        total = 0
        for a in bits:
            row = distances[a]
            if row is None:
                raise KeyError(f"no NUMA distances for node {a}")
            for b in bits:
                total += row[b]
        return total

    def trace(self) -> MergeTrace:
        """The record of the last :meth:`merge` (its candidates and target
        width are computed when first read)."""
        return MergeTrace(self)

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


def _pick_width(widths: set[int], target: int | None) -> int:
    """The winning width among those present: the narrowest for preferred
    hints (``target`` None); for non-preferred ones the target width, else
    the widest below it, else the narrowest above it (``compare``)."""
    if target is None:
        return min(widths)
    if target in widths:
        return target
    below = [c for c in widths if c < target]
    return max(below) if below else min(widths)


def _narrowest(masks: set[int], singles: frozenset[int]) -> int:
    """The fewest bits of a mask in ``masks`` (not empty). A one-node mask
    (``singles``) is looked up instead of counting every mask's bits, the
    usual case for CPU and memory hints; an empty mask counts 0."""
    if 0 not in masks and not masks.isdisjoint(singles):
        return 1
    if ENGINE_COMPILED:
        fewest = -1
        for m in masks:
            c = _bits(m)
            if fewest < 0 or c < fewest:
                fewest = c
        return fewest
    return min(map(int.bit_count, masks))


# Bit counts of the masks of up to 12 NUMA nodes, by value: compiled,
# ``int.bit_count`` is a generic method call, a list lookup is native.
_SMALL_MASKS = 1 << 12
_BIT_COUNTS: list[int] = [m.bit_count() for m in range(_SMALL_MASKS)]


def _bits(m: int) -> int:
    """``m.bit_count()``, looked up for small masks."""
    return _BIT_COUNTS[m] if 0 <= m < _SMALL_MASKS else m.bit_count()


def _best_ranked(masks: Iterable[int], target: int) -> int:
    """:meth:`HintMerger._best_of` without prefer-closest, in one pass (the
    compiled build's loop): the non-empty mask of the best width rank, then
    the lowest. Rank: the width itself for preferred hints (``target``
    -1); for non-preferred ones 0 at the target width, ``target - width``
    below it (closer is better) and ``target + width`` above it (narrower
    is better, and every width above ranks after every width below)."""
    best = 0
    best_rank = -1
    for m in masks:
        if m == 0:
            continue
        c = _bits(m)
        if target < 0:
            rank = c
        elif c == target:
            rank = 0
        elif c < target:
            rank = target - c
        else:
            rank = target + c
        if best_rank < 0 or rank < best_rank or (rank == best_rank and m < best):
            best = m
            best_rank = rank
    return best


def _mask_array(affs: list[BitMask | None], dmask: int) -> tuple[int, _Array]:
    """One list's masks (``affs``) as :func:`_masks_within` gives them, in
    an array that may repeat masks, and the fewest bits of a non-nil mask
    (-1 when every mask is nil), as :func:`_narrowest` counts them."""
    import numpy as np

    present = list(filter(None, affs))
    arr = np.fromiter(map(mask_value, present), dtype=np.uint64, count=len(present))
    fewest = int(np.bitwise_count(arr).min()) if len(arr) else -1
    arr &= np.uint64(dmask)
    if len(present) != len(affs):
        arr = np.append(arr, np.uint64(dmask))
    return fewest, arr


def _masks_within(masks: set[int], nil: bool, dmask: int) -> set[int]:
    """One list's distinct non-nil masks (``masks``, reused) ANDed with the
    default mask, plus the default mask itself for a nil affinity."""
    if masks:
        contiguous = dmask & (dmask + 1) == 0
        if (max(masks) > dmask) if contiguous else (reduce(or_, masks) & ~dmask):
            masks = {m & dmask for m in masks}
    if nil:
        masks.add(dmask)
    return masks


def _and_masks(
    lists: Sequence[set[int] | _Array], dmask: int, nodes: Sequence[int], limit: int
) -> list[int] | _Array:
    """Every mask some permutation ANDs to, starting from the default mask
    ``dmask`` (``lists``: each provider's masks within it): folded provider
    by provider as a set while |set| x |list| stays under ``limit``, then by
    subset-sum transforms (:func:`_and_closure`). A list longer than
    ``limit`` may come as an array: it always goes to the transform."""
    if ENGINE_COMPILED and 0 <= dmask < _SMALL_MASKS:
        return _and_masks_small(lists, dmask, nodes, limit)
    acc = {dmask}
    for i, lst in enumerate(lists):
        if len(acc) * len(lst) > limit:
            return _and_closure(acc, lists[i:], dmask, nodes)
        masks = cast("set[int]", lst)  # (an array is longer than limit: see merge)
        if len(acc) == 1:
            (only,) = acc
            acc = set(masks) if only == dmask else {only & a for a in masks}
        else:
            acc = {m & a for m in acc for a in masks}
    return list(acc)


def _and_masks_small(
    lists: Sequence[set[int] | _Array], dmask: int, nodes: Sequence[int], limit: int
) -> list[int]:
    """:func:`_and_masks` for a default mask below ``_SMALL_MASKS`` (the
    compiled build's loops): each step's distinct masks are found with a
    table indexed by mask value instead of a set."""
    seen = [False] * (dmask + 1)
    acc: list[int] = [dmask]
    for i, lst in enumerate(lists):
        if len(acc) * len(lst) > limit:
            return cast("list[int]", _and_closure(set(acc), lists[i:], dmask, nodes).tolist())
        items = list(cast("set[int]", lst))  # (an array is longer than limit)
        out: list[int] = []
        for m in acc:
            for a in items:
                x = m & a
                if not seen[x]:
                    seen[x] = True
                    out.append(x)
        for x in out:
            seen[x] = False
        acc = out
    return acc


# int64 headroom for the pair counts of :func:`_and_closure`.
_COUNT_LIMIT = 1 << 62


def _and_closure(
    start: set[int], lists: Sequence[set[int] | _Array], dmask: int, nodes: Sequence[int]
) -> _Array:
    """The AND closure of ``start`` with one element of each list, over the
    2^N subsets of the default mask's N nodes.

    g(x) = prod over the sets S of #{a in S, a >= x} counts the tuples whose
    AND contains x (each factor a superset sum, the zeta transform); the
    Moebius transform turns that into the number of tuples whose AND is
    exactly x, and x is achievable when that is positive."""
    import numpy as np

    bits = [b for b in range(64) if dmask >> b & 1]
    n = len(bits)
    size = 1 << n
    contiguous = dmask == size - 1

    def index(masks: set[int] | _Array) -> np.ndarray:
        if isinstance(masks, np.ndarray):
            arr = masks
        else:
            arr = np.fromiter(masks, dtype=np.uint64, count=len(masks))
        if contiguous:
            return arr.astype(np.int64)
        out = np.zeros(len(arr), dtype=np.int64)
        for j, b in enumerate(bits):
            out |= ((arr >> np.uint64(b)) & np.uint64(1)).astype(np.int64) << j
        return out

    def zeta(v: np.ndarray) -> np.ndarray:
        for j in range(n):
            w = v.reshape(-1, 2, 1 << j)
            w[:, 0, :] += w[:, 1, :]
        return v

    def moebius(v: np.ndarray) -> np.ndarray:
        for j in range(n):
            w = v.reshape(-1, 2, 1 << j)
            w[:, 0, :] -= w[:, 1, :]
        return v

    # Pairs counted by one product stay below the product of the list
    # sizes; the transforms' partial sums never exceed that count, so a
    # product is thresholded back to 0/1 only before it could pass 2^62.
    acc = np.zeros(size, dtype=np.int64)
    acc[index(start)] = 1
    acc = zeta(acc)
    bound = len(start)
    for lst in lists:
        if bound * len(lst) >= _COUNT_LIMIT:
            acc = zeta((moebius(acc) > 0).astype(np.int64))
            bound = int(acc[0])  # zeta at the empty mask: how many masks there are
        ind = np.zeros(size, dtype=np.int64)
        ind[index(lst)] = 1
        acc *= zeta(ind)
        bound *= len(lst)
    acc = moebius(acc)
    found = np.flatnonzero(acc).astype(np.uint64)
    if contiguous:
        return found
    real = np.zeros(len(found), dtype=np.uint64)
    for j, b in enumerate(bits):
        real |= ((found >> np.uint64(j)) & np.uint64(1)) << np.uint64(b)
    return real


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
