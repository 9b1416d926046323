"""The static CPU policy's NUMA mask table: its topology hints in bulk.

``generateCPUTopologyHints`` (``policy_static.go``, mirrored in
``policy_static.py``) walks every NUMA combination for every hint request
and counts the free CPUs of each. Here every combination of a machine is
tabled once (its width, CPUs, their count, whether it holds node 0, its
subset-sum index and its two hints), the narrowest width that fits is kept
per request, and the free CPUs of all the combinations come from subset
sums of the per-node counts: for the usual request (nothing reusable) all
2^N sums at once in one integer with a byte-aligned lane per subset
(:class:`Lanes`), the fitting hints picked by the lanes' top bits, and the
answer kept per (counts, need, width). Not upstream code;
``tests/cm/cpumanager/test_subset_lanes.py`` checks the lanes against
subset-by-subset sums, and the upstream hint tables run through it.
"""

from __future__ import annotations

from functools import partial

from podnuma.cm.cpumanager.native_twins import BytePicker, byte_picker, selected_hints
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.mask_tables import (
    built_without_collector,
    check_mask_nodes,
    mask_combinations,
    mask_hint_pairs,
    subset_sums,
)
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import CPUTopology

__all__ = ["MaskRow", "MaskTable", "Lanes", "HINT_CACHE_SIZE", "HINT_CACHE_HINTS", "new_mask_table"]


# (mask, width, its CPUs, their count, holds node 0, subset-sum index,
#  preferred hint, non-preferred hint)
MaskRow = tuple[BitMask, int, int, int, bool, int, TopologyHint, TopologyHint]


class MaskTable:
    """The NUMA masks of a topology (:func:`new_mask_table`), each node's
    CPUs in node order, and per request the narrowest width that fits."""

    __slots__ = (
        "rows", "node_masks", "min_width", "hints", "kept", "compact", "_by_width", "_lanes"
    )

    def __deepcopy__(self, memo: dict[int, object]) -> MaskTable:
        # derived from the topology, which never changes, and min_width is a
        # memo of a pure function: a copy of the policy shares the table
        return self

    def __init__(self, rows: list[MaskRow], node_masks: list[int]) -> None:
        self.rows = rows
        self.node_masks = node_masks
        self.min_width: dict[int, int] = {}
        # (free CPUs per node, need, narrowest width) -> hints, recent ones
        self.hints: dict[tuple[tuple[int, ...], int, int], list[TopologyHint]] = {}
        # the hints ``self.hints`` holds, all lists together (HINT_CACHE_HINTS)
        self.kept = 0
        self.compact = [row[5] for row in rows]
        self._by_width: dict[int, list[TopologyHint]] = {}
        self._lanes: Lanes | None = None

    def min_affinity_size(self, request: int) -> int:
        """The narrowest width of a combination whose CPUs (free or not)
        number ``request`` or more; all the nodes when none does."""
        found = self.min_width.get(request)
        if found is None:
            found = len(self.node_masks)
            for row in self.rows:
                if row[3] >= request and row[1] < found:
                    found = row[1]
            self.min_width[request] = found
        return found

    def fitting_rows(
        self, all_mask: int, available: CPUSet, reusable: CPUSet, request: int
    ) -> list[MaskRow]:
        """The rows whose combination can hold the request: every reusable
        CPU inside it, and its available plus reusable CPUs reaching
        ``request``. CPUs outside ``all_mask`` (unknown to the topology)
        read as NUMA node 0 (Go's zero value); reusable and available CPUs
        are counted separately (an overlap counts twice, as upstream)."""
        unknown = ~all_mask
        reusable_unknown = reusable.mask & unknown
        available_unknown = (available.mask & unknown).bit_count()
        reuse_known = reusable.mask & ~unknown
        counts = [(available.mask & m).bit_count() for m in self.node_masks]
        need = request - reusable.size()
        # free CPUs per combination: subset sums of the per-node counts
        sums = subset_sums(counts)
        if not reuse_known and not reusable_unknown and not available_unknown:
            return [row for row in self.rows if sums[row[5]] >= need]
        candidates: list[MaskRow] = []
        for row in self.rows:
            # every reusable CPU must lie inside the mask
            if reuse_known & ~row[2]:
                continue
            if reusable_unknown and not row[4]:
                continue
            matching = sums[row[5]] + (available_unknown if row[4] else 0)
            if matching < need:
                continue
            candidates.append(row)
        return candidates

    def fitting_hints(
        self, all_mask: int, available: CPUSet, reusable: CPUSet, request: int, min_width: int
    ) -> list[TopologyHint]:
        """The hints of :meth:`fitting_rows`, preferred when ``min_width``
        wide. With nothing reusable and every CPU known to the topology,
        they depend only on the per-node counts, the need and the width:
        computed by :meth:`fitting` and kept for the combinations seen
        recently."""
        if reusable.mask or available.mask & ~all_mask:
            rows = self.fitting_rows(all_mask, available, reusable, request)
            return [row[6] if row[1] == min_width else row[7] for row in rows]
        avail_mask = available.mask
        counts = tuple([(avail_mask & m).bit_count() for m in self.node_masks])
        need = request - reusable.size()
        key = (counts, need, min_width)
        found = self.hints.get(key)
        if found is None:
            found = self.fitting(counts, need, min_width)
            if len(self.hints) >= HINT_CACHE_SIZE or self.kept + len(found) > HINT_CACHE_HINTS:
                self.hints.clear()
                self.kept = 0
            if len(found) <= HINT_CACHE_HINTS:
                self.hints[key] = found
                self.kept += len(found)
        return list(found)

    def fitting(self, counts: tuple[int, ...], need: int, min_width: int) -> list[TopologyHint]:
        """Every combination's hint (preferred when ``min_width`` wide) whose
        free CPUs (the sum of ``counts`` over its nodes) reach ``need``, in
        table order.

        All 2^N subset sums are computed at once in one integer with a
        lane of bits per subset (``Lanes``): per node, its count times the
        pattern of the subsets holding it. Adding 2^(L-1) - need to every
        lane sets a lane's top bit exactly when its sum reaches ``need`` (no
        lane overflows into the next: sums stay below 2^(L-1))."""
        hints = self.hints_for(min_width)
        if need <= 0:
            return list(hints)  # every sum (>= 0) reaches it
        if need > sum(counts):
            return []  # not even all the nodes together
        lanes = self._lanes
        if lanes is None:
            capacity = sum([m.bit_count() for m in self.node_masks])
            lanes = self._lanes = Lanes(len(self.node_masks), capacity, self.compact)
        acc = 0
        multiples = lanes.multiples
        for j, c in enumerate(counts):
            if c:
                row = multiples[j]
                m = row.get(c)
                if m is None:
                    m = c * lanes.patterns[j]
                    if lanes.keep:
                        row[c] = m
                acc += m
        tops = (acc + ((1 << (lanes.width - 1)) - need) * lanes.ones) & lanes.top_bits
        return selected_hints(
            hints, tops.to_bytes(lanes.size, "little"), lanes.positions, lanes.pick
        )

    def hints_for(self, min_width: int) -> list[TopologyHint]:
        """Every mask's hint, preferred when the mask is ``min_width`` wide."""
        found = self._by_width.get(min_width)
        if found is None:
            found = self._by_width[min_width] = [
                row[6] if row[1] == min_width else row[7] for row in self.rows
            ]
        return found


#: the most answers :meth:`MaskTable.fitting_hints` keeps, and the most
#: hints they hold together: a 20-NUMA machine's answer holds up to 2^20 - 1
#: hints (8 MiB of references), so a count of answers alone let a fleet's
#: replays keep gigabytes (one answer per admission)
HINT_CACHE_SIZE = 4096
HINT_CACHE_HINTS = 1 << 21
# the most memory the lanes' kept multiples may take (``Lanes.multiples``)
_MULTIPLES_BYTES = 8 << 20


class Lanes:
    """The subset-sum lanes of a mask table over ``n`` nodes: subset ``s``
    (bit j for node j) owns bits [L*s, L*s + L) of one integer. Built once
    per table with big-integer arithmetic, no loop over the subsets."""

    __slots__ = (
        "width", "patterns", "ones", "top_bits", "size", "positions", "pick", "multiples", "keep"
    )

    def __init__(self, n: int, capacity: int, compact: list[int]) -> None:
        # L bits per lane, a multiple of 8 (a lane's top bit is the top bit
        # of one byte), with every sum (at most ``capacity``, the CPUs of all
        # the nodes) below 2^(L-1)
        width = 16
        while capacity >= 1 << (width - 1):
            width *= 2
        lanes = 1 << n
        nbytes = width // 8
        zero = bytes(nbytes)
        one = b"\x01" + bytes(nbytes - 1)

        def lane_int(pattern: bytes) -> int:
            return int.from_bytes(pattern, "little")

        self.width = width
        self.ones = lane_int(one * lanes)
        # node j: the subsets holding it are runs of 2^j lanes every 2^(j+1)
        # lanes, after 2^j lanes without it (built as repeated bytes)
        self.patterns = [
            lane_int((zero * (1 << j) + one * (1 << j)) * (lanes >> (j + 1))) for j in range(n)
        ]
        self.top_bits = lane_int((bytes(nbytes - 1) + b"\x80") * lanes)
        self.size = lanes * nbytes
        # the byte holding each table row's lane top bit (0 or 0x80 after masking)
        self.positions = [c * nbytes + nbytes - 1 for c in compact]
        self.pick: BytePicker = byte_picker(self.positions)
        # per node, its pattern times each count met so far (a big-integer
        # product costs more than the lookup); kept only while all of them
        # together stay within _MULTIPLES_BYTES, else multiplied each time
        self.multiples: list[dict[int, int]] = [{} for _ in range(n)]
        self.keep = (capacity + n) * self.size <= _MULTIPLES_BYTES


#: the tables of the last few machines (by their NUMA nodes' CPUs), shared
#: by every policy on them: a 20-NUMA machine's table is hundreds of MB, and
#: a fleet's replays (baseline, densities, what-ifs) each make a policy
_TABLES: dict[tuple[tuple[int, ...], tuple[int, ...]], MaskTable] = {}
_TABLES_KEPT = 2


def new_mask_table(topology: CPUTopology) -> MaskTable:
    """Every NUMA mask of ``topology`` in ``IterateBitMasks`` order with
    its width, its CPUs and their count, whether it holds node 0, its
    position in the subset-sum table, and its two hints (preferred or not);
    built with the collector paused (``built_without_collector``). The table
    (a pure function of the nodes and their CPUs, its memos too) is shared
    by the machines with the same NUMA nodes and CPUs, the last few kept."""
    nodes = topology.details.numa_nodes().list()
    key = (tuple(nodes), tuple([topology.numa_masks.get(nid, 0) for nid in nodes]))
    table = _TABLES.pop(key, None)
    if table is None:
        check_mask_nodes(len(nodes))
        while len(_TABLES) >= _TABLES_KEPT:
            del _TABLES[next(iter(_TABLES))]  # the oldest, before the new one is built
        table = built_without_collector(partial(_build_mask_table, topology))
    _TABLES[key] = table  # (the newest last)
    return table


def _build_mask_table(topo: CPUTopology) -> MaskTable:
    nodes = topo.details.numa_nodes().list()
    check_mask_nodes(len(nodes))
    node_masks = [topo.numa_masks.get(nid, 0) for nid in nodes]
    # the CPUs of every combination, by subset (one node added to a smaller one)
    cpus_of = [0] * (1 << len(nodes))
    for c in range(1, len(cpus_of)):
        low = c & -c
        cpus_of[c] = cpus_of[c ^ low] | node_masks[low.bit_length() - 1]
    # the rows column by column, then zipped (65,535 of them on a
    # 16-NUMA machine: no per-row Python work)
    combos = mask_combinations(nodes)
    pairs = mask_hint_pairs(nodes)
    masks = [c[0] for c in combos]
    compacts = [c[2] for c in combos]
    cpus = [cpus_of[c] for c in compacts]
    rows: list[MaskRow] = list(
        zip(
            masks,
            [len(c[1]) for c in combos],
            cpus,
            [c.bit_count() for c in cpus],
            [m.value & 1 == 1 for m in masks],
            compacts,
            [p[0] for p in pairs],
            [p[1] for p in pairs],
            strict=True,
        )
    )
    return MaskTable(rows, node_masks)
