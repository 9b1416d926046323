"""The topology manager's hint merge, computed without walking permutations.

``HintMerger.Merge`` (``policy.go``, mirrored in ``policy.py``) folds
``compare`` over the merged hint of every permutation of the providers'
hints: the product of their list lengths, 65,535^3 on a 16-NUMA machine
with three providers. ``compare`` is a total order on (mask, preferred)
and empty masks never win, so the fold returns the best of the *distinct*
merged hints; :class:`FastMerge` computes that best directly (set
intersections for the preferred hints; for the others, the achievable AND
masks by a set fold while small, then by a subset-sum (zeta/Moebius)
transform over the 2^N masks of the default affinity, in numpy), and the
distinct merged hints themselves for explanations.
``docs/topology-merge.md`` says why it is exact;
``tests/cm/topologymanager/test_merge_equivalence.py`` compares every path
with the literal walk (``HintMerger.merge_naive``), and the oracle's
differential test with the kubelet's own ``Merge``.

Not upstream code. Where the compiled build and pure Python want different
loops, the bodies come from ``native_twins.py``; the three choices made
here at run time (``ENGINE_COMPILED``: the array path, the one-pass best,
the mask-indexed fold) are forced either way by the tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import reduce
from operator import or_
from typing import TYPE_CHECKING, cast

from podnuma.buildinfo import ENGINE_COMPILED
from podnuma.cm.topologymanager import native_twins as twins
from podnuma.cm.topologymanager.bitmask import BitMask, mask_value
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.native_twins import SMALL_MASKS, bit_count
from podnuma.cm.topologymanager.numa_info import NUMAInfo, distance_average

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    _Array = npt.NDArray[np.uint64]

__all__ = ["FastMerge", "FOLD_LIMIT"]

#: Past this many (mask, hint) pairs in one provider step, the set fold
#: hands over to the subset-sum transform (both exact).
FOLD_LIMIT = 1 << 14


class FastMerge:
    """One merge of ``hints`` (the filtered lists, one per provider and
    resource) on a machine: :meth:`merge` gives ``HintMerger.Merge``'s
    result, :meth:`candidates` the distinct merged hints, best first.
    ``target``: the target width of non-preferred merges
    (``maxOfMinAffinityCounts``) when known; :meth:`merge` sets it when it
    computes it on the way."""

    __slots__ = ("numa_info", "hints", "_use_closest", "target")

    def __init__(
        self,
        numa_info: NUMAInfo,
        hints: Sequence[Sequence[TopologyHint]],
        use_closest: bool,
        target: int | None,
    ) -> None:
        self.numa_info = numa_info
        self.hints = hints
        self._use_closest = use_closest
        self.target = target

    def target_width(self) -> int:
        assert self.target is not None, "the target width is computed by HintMerger"
        return self.target

    def merge(self) -> TopologyHint:
        """``HintMerger.Merge``'s result: best merged permutation, or
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

        ``HintMerger.merge_naive`` is the literal walk; the tests check both agree.
        """
        default = self.numa_info.default_affinity_mask()
        dmask = default.value
        if not all(self.hints):
            return TopologyHint(default, False)  # a provider without hints: no permutation

        # -- preferred candidates ---------------------------------------------
        all_nil_pref = True  # every list offers a preferred nil hint
        common: set[int | None] | None = None  # offered by every list without nil-preferred
        offered: set[int | None] = set()  # preferred masks any list offers
        for hints in self.hints:
            pref = twins.preferred_masks(hints)
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
        for hints in self.hints:
            affinities = twins.affinities(hints)
            if not ENGINE_COMPILED and len(hints) > FOLD_LIMIT:
                # a list this long goes to the subset-sum transform, which
                # takes it as an array (duplicates and all): no set of it
                fewest, arr = _mask_array(affinities, dmask)
                if fewest >= 0:
                    narrowest.append(fewest)
                # (nil hints shrink to one mask: a short array joins the fold as a set)
                sets.append(arr if len(arr) > FOLD_LIMIT else set(arr.tolist()))
                continue
            distinct = twins.all_masks(hints, affinities)
            nil = None in distinct
            distinct.discard(None)
            masks: set[int] = distinct  # type: ignore[assignment]
            if masks:
                narrowest.append(_narrowest(masks, singles))
            sets.append(_masks_within(masks, nil, dmask))
        if self.target is None:
            self.target = max(narrowest) if narrowest else 0  # maxOfMinAffinityCounts
        achievable = _and_masks(sets, dmask, self.numa_info.nodes, FOLD_LIMIT)
        target = self.target
        best = self._best_of(achievable, target)
        if best == 0:
            return TopologyHint(default, False)
        return TopologyHint(BitMask.from_int(best), False)

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
        # (a comprehension: on CPython 3.11 ``map(width.__eq__, ...)`` pays a
        # slot wrapper call per mask)
        group = [m for m, c in zip(masks, counts, strict=True) if c == width]
        if not self._use_closest or len(group) == 1:
            return min(group)
        # ``Closest``: the lower average (Go's float64), ties to the lower mask
        return min(group, key=lambda m: (self._average(m), m))

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

    def _rank_key(self, hint: tuple[int, bool]) -> tuple[float, ...]:
        """Sort key of a (mask, preferred) merged hint in ``compare``'s
        total order (docs/topology-merge.md)."""
        mask, preferred = hint
        width = mask.bit_count()
        dist = self._average(mask) if self._use_closest else 0.0
        if preferred:
            return (0, width, dist, mask)
        target = self.target_width()
        if width == target:
            return (1, 0, 0, dist, mask)
        if width < target:
            return (1, 1, -width, dist, mask)
        return (1, 2, width, dist, mask)

    def _average(self, mask: int) -> float:
        """``CalculateAverageFor``: the average distance over all ordered
        pairs of the mask's nodes, summed as Go's float64s."""
        return distance_average(self.numa_info.distances, BitMask.from_int(mask).bits())


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
    return twins.fewest_bits(masks)


def _best_ranked(masks: Iterable[int], target: int) -> int:
    """:meth:`FastMerge._best_of` without prefer-closest, in one pass (the
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
        c = bit_count(m)
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
    if ENGINE_COMPILED and 0 <= dmask < SMALL_MASKS:
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
