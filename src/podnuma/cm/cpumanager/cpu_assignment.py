"""Topology-aware CPU pickers of the static CPU manager policy.

Mirrors ``pkg/kubelet/cm/cpumanager/cpu_assignment.go`` (kubelet v1.37,
the allocation path; the in-place-resize variants are not ported):

* ``take_by_topology_numa_packed`` -- the packed best-fit picker: whole NUMA
  nodes / sockets first (whichever is higher in the hierarchy), then, with
  ``prefer-align-cpus-by-uncorecache``, whole and partial uncore caches, then
  whole cores (skipped for the ``spread`` sorting strategy of
  ``distribute-cpus-across-cores``), then single CPUs.
* ``take_by_topology_numa_distributed`` -- ``distribute-cpus-across-numa``
  (KEP-2902): spread the request evenly over the smallest set of NUMA nodes,
  choosing the combination (and the nodes getting the remainder) whose free
  CPU counts afterwards have the lowest standard deviation.

Every ordering is upstream's: groups are sorted by their number of free CPUs
(ascending) with the id as tie-break, nested NUMA-first or socket-first
depending on ``NumSockets >= NumNUMANodes``. CPU sets are bitmasks; the
accumulator keeps the free CPUs as one integer and never builds per-CPU maps.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from podnuma.buildinfo import mypyc_attr
from podnuma.machine.cpuset import CPUSet, mask_ids
from podnuma.machine.topology import CPUDetails, CPUTopology

__all__ = [
    "CPUSortingStrategy",
    "CPUAllocationError",
    "CPUAccumulator",
    "take_by_topology_numa_packed",
    "take_by_topology_numa_distributed",
    "standard_deviation",
    "iterate_combinations",
]


class CPUSortingStrategy(enum.Enum):
    """How single CPUs are ordered within the socket scope.

    ``PACKED`` walks core by core (sibling threads together); ``SPREAD``
    (``distribute-cpus-across-cores``) walks socket by socket in CPU id
    order, so consecutive picks land on different cores.
    """

    PACKED = "packed"
    SPREAD = "spread"


class CPUAllocationError(Exception):
    """The picker failed; ``str(e)`` is the kubelet's error text."""


def _go_round(x: float) -> float:
    """Go's ``math.Round``: halves away from zero (Python rounds to even)."""
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


def _mean(xs: Sequence[int]) -> float:
    return _go_round(sum(float(x) for x in xs) / len(xs) * 1000) / 1000


def standard_deviation(xs: Sequence[int]) -> float:
    """Population standard deviation, rounded to 3 decimals, computed around
    a mean that is itself rounded to 3 decimals (as upstream does)."""
    m = _mean(xs)
    total = 0.0
    for x in xs:
        total += (float(x) - m) * (float(x) - m)
    return _go_round(math.sqrt(total / len(xs)) * 1000) / 1000


# -- n-choose-k iteration with Go's slice semantics -----------------------------


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class _GoSlice:
    """A Go ``[]int`` slice header: a view (length) on a shared backing array."""

    __slots__ = ("arr", "length")

    def __init__(self, arr: list[int], length: int) -> None:
        self.arr = arr
        self.length = length

    def append(self, value: int) -> _GoSlice:
        cap = len(self.arr)
        if self.length < cap:
            # in place: every slice sharing this array sees the write
            self.arr[self.length] = value
            return _GoSlice(self.arr, self.length + 1)
        new_len = self.length + 1
        new_cap = new_len if new_len > 2 * cap else 2 * cap  # growslice, small []int
        arr = self.arr[: self.length] + [value] + [0] * (new_cap - new_len)
        return _GoSlice(arr, new_len)

    def values(self) -> list[int]:
        return self.arr[: self.length]


def iterate_combinations(items: Sequence[int], k: int, fn: Callable[[_GoSlice], bool]) -> None:
    """Call ``fn`` on every k-subset of ``items`` in lexicographic index
    order; ``fn`` returns True to stop ("Break").

    The subsets are handed out as Go slice views built by appending to the
    parent prefix, exactly like upstream's recursive helper: once a prefix's
    backing array has spare capacity (length >= 3), sibling subsets share it,
    so a view kept by ``fn`` shows the last sibling written, not the subset it
    was given. Upstream keeps such views (best combo / best remainder set),
    so this aliasing is reproduced on purpose.
    """
    if k < 1:
        return
    n = len(items)

    def helper(kk: int, start: int, accum: _GoSlice) -> bool:
        if kk == 0:
            return fn(accum)
        # any() stops at the first True, like upstream's Break
        return any(helper(kk - 1, i + 1, accum.append(items[i])) for i in range(start, n - kk + 1))

    helper(k, 0, _GoSlice([], 0))


# -- the accumulator ---------------------------------------------------------------


def _smallest(groups: Mapping[int, int]) -> int:
    """The fewest CPUs of a group (0: no group)."""
    return min((m.bit_count() for m in groups.values()), default=0)


def _cores_in(topo: CPUTopology, parents: dict[int, int]) -> dict[int, list[tuple[int, int]]]:
    """Per parent group, the cores sharing a CPU with it, (id, mask) by id."""
    return {p: sorted(topo.groups_within(topo.core_masks, parents, p).items()) for p in parents}


def _inside(groups: dict[int, int], parents: dict[int, int]) -> bool:
    """Whether every group lies within one of the parents."""
    return all(any(m & pm == m for pm in parents.values()) for m in groups.values())


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class _Tables:
    """What the pickers read of a topology, computed once per topology: the
    smallest socket, NUMA node and core (a group smaller than what is still
    needed can be taken; none smaller, none taken), and per socket and per
    NUMA node the cores sharing a CPU with it, (id, mask) by id."""

    __slots__ = (
        "min_socket",
        "min_numa",
        "min_core",
        "cores_in_socket",
        "cores_in_numa",
        "sockets",
        "socket_mask",
        "numas",
        "numa_in_socket",
        "socket_in_numa",
        "regular",
        "shift",
        "sibling",
        "lows",
        "lows_in",
    )

    def __init__(self, topo: CPUTopology) -> None:
        # module-level helpers, not nested functions: compiled, nested
        # functions and their shared environment would form a reference
        # cycle that keeps each table (and its node) for the cyclic collector
        self.min_socket = _smallest(topo.socket_masks)
        self.min_numa = _smallest(topo.numa_masks)
        self.min_core = _smallest(topo.core_masks)
        self.cores_in_socket = _cores_in(topo, topo.socket_masks)
        self.cores_in_numa = _cores_in(topo, topo.numa_masks)
        self.sockets = list(topo.socket_masks.items())
        self.socket_mask = dict(topo.socket_masks)
        self.numas = list(topo.numa_masks.items())
        self.numa_in_socket = {
            p: list(topo.groups_within(topo.numa_masks, topo.socket_masks, p).items())
            for p in topo.socket_masks
        }
        self.socket_in_numa = {
            p: list(topo.groups_within(topo.socket_masks, topo.numa_masks, p).items())
            for p in topo.numa_masks
        }
        # Regular: every core has CPUsPerCore() CPUs and lies within one NUMA
        # node, and every NUMA node within one socket. Then a group "shares a
        # CPU with" its parent exactly when it lies inside it, so the pickers
        # can test a group against the free CPUs alone (one mask operation
        # fewer per group); the orderings are the same.
        cpc = topo.cpus_per_core()
        self.regular = (
            all(m.bit_count() == cpc for m in topo.core_masks.values())
            and _inside(topo.core_masks, topo.numa_masks)
            and _inside(topo.numa_masks, topo.socket_masks)
        )
        # Groups sort by (free CPUs, id) or (free CPUs, position): packed into
        # one integer, count << shift | id, that sorts the same way.
        widest = max(
            [0, *topo.socket_masks, *topo.numa_masks, *topo.core_masks]
            + [len(v) for v in self.cores_in_socket.values()]
            + [len(v) for v in self.cores_in_numa.values()]
        )
        self.shift = max(1, widest.bit_length())
        # Sibling pairs: on a regular machine with one or two CPUs per core
        # where every core is {c, c + k} for one k (k = 0 without SMT; Linux
        # numbers most machines so) and, within every socket and NUMA node,
        # the cores by id are the cores by their first CPU, a core is named
        # by its first CPU: the set bits of ``lows`` (``lows_in``: per socket
        # and NUMA node). The pickers then find every free core of a group
        # with a few mask operations instead of testing core by core.
        # ``sibling`` is k, or -1 when the machine is not like that.
        self.sibling = -1
        self.lows = 0
        self.lows_in: dict[int, int] = {}
        if self.regular and cpc in (1, 2):
            gaps = {m.bit_length() - (m & -m).bit_length() for m in topo.core_masks.values()}
            ordered = all(
                all(a[1] & -a[1] < b[1] & -b[1] for a, b in zip(cores, cores[1:], strict=False))
                for table in (self.cores_in_socket, self.cores_in_numa)
                for cores in table.values()
            )
            if len(gaps) == 1 and ordered:
                (gap,) = gaps
                if (gap == 0) == (cpc == 1):
                    self.sibling = gap
                    for m in topo.core_masks.values():
                        self.lows |= m & -m
            # the first CPUs of the cores of each parent the pickers walk:
            # sockets when NUMA nodes are above them, else NUMA nodes
            parents = (
                topo.socket_masks if topo.num_sockets >= topo.num_numa_nodes else topo.numa_masks
            )
            self.lows_in = {p: self.lows & m for p, m in parents.items()}


def _numa_nodes_by_socket(tables: _Tables, avail: int) -> Iterator[int]:
    """``sort_available_numa_nodes`` for sockets above NUMA nodes, with the
    free CPUs ``avail``: socket by socket, each socket's nodes sorted.

    Lazy: a socket's nodes are counted and sorted only when the walk reaches
    that socket (the pickers usually stop inside the first one)."""
    shift = tables.shift
    id_bits = (1 << shift) - 1
    keys: list[int] = []
    for sid, m in tables.sockets:
        c = (avail & m).bit_count()
        if c:
            keys.append((c << shift) | sid)
    keys.sort()
    regular = tables.regular
    for key in keys:
        sid = key & id_bits
        nodes: list[int] = []
        if regular:  # a node inside the socket has free CPUs in it
            for nid, m in tables.numa_in_socket[sid]:
                c = (avail & m).bit_count()
                if c:
                    nodes.append((c << shift) | nid)
        else:
            within = avail & tables.socket_mask[sid]
            for nid, m in tables.numa_in_socket[sid]:
                if m & within:
                    nodes.append(((avail & m).bit_count() << shift) | nid)
        nodes.sort()
        for k in nodes:
            yield k & id_bits


def _tables(topo: CPUTopology) -> _Tables:
    tables = topo.picker_tables
    if tables is None:
        tables = topo.picker_tables = _Tables(topo)
    assert isinstance(tables, _Tables)
    return tables


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class CPUAccumulator:
    """``cpuAccumulator``: the free CPUs, the CPUs taken so far and the count
    still needed, plus the topology-ordered views of the free CPUs."""

    __slots__ = (
        "topo",
        "avail",
        "result_mask",
        "num_cpus_needed",
        "numa_first",
        "strategy",
    )

    def __init__(
        self,
        topo: CPUTopology,
        available: CPUSet,
        num_cpus: int,
        cpu_sorting_strategy: CPUSortingStrategy = CPUSortingStrategy.PACKED,
    ) -> None:
        self.topo = topo
        self.avail = available.mask & topo.all_mask
        self.result_mask = 0
        self.num_cpus_needed = num_cpus
        # NUMA nodes are "above" sockets when there are no more of them.
        self.numa_first = topo.num_sockets >= topo.num_numa_nodes
        self.strategy = cpu_sorting_strategy

    # -- views -------------------------------------------------------------
    @property
    def details(self) -> CPUDetails:
        return CPUDetails(self.topo, self.avail)

    @property
    def result(self) -> CPUSet:
        return CPUSet.from_mask(self.result_mask)

    def _present(self, groups: Mapping[int, int], within: int) -> list[int]:
        return [gid for gid, gmask in groups.items() if gmask & within]

    def _sorted(self, ids: list[int], groups: Mapping[int, int]) -> list[int]:
        avail = self.avail
        ids.sort(key=lambda i: ((groups[i] & avail).bit_count(), i))
        return ids

    # -- sorting (numaOrSocketsFirst) ---------------------------------------
    # Groups sort by (free CPUs, id); ids are unique, so sorting the pairs
    # gives the same order as sorting the ids by that key.
    def sort_available_numa_nodes(self) -> list[int]:
        avail = self.avail
        tables = _tables(self.topo)
        if self.numa_first:
            return [
                nid
                for _, nid in sorted(
                    [((avail & m).bit_count(), nid) for nid, m in tables.numas if m & avail]
                )
            ]
        out: list[int] = []
        socket_masks = self.topo.socket_masks
        for socket in self.sort_available_sockets():
            within = avail & socket_masks[socket]
            out += [
                nid
                for _, nid in sorted(
                    [
                        ((avail & m).bit_count(), nid)
                        for nid, m in tables.numa_in_socket[socket]
                        if m & within
                    ]
                )
            ]
        return out

    def sort_available_sockets(self) -> list[int]:
        avail = self.avail
        tables = _tables(self.topo)
        if not self.numa_first:
            return [
                sid
                for _, sid in sorted(
                    [((avail & m).bit_count(), sid) for sid, m in tables.sockets if m & avail]
                )
            ]
        out: list[int] = []
        numa_masks = self.topo.numa_masks
        # a socket spanning several NUMA nodes is listed once per node (as upstream)
        for numa in self.sort_available_numa_nodes():
            within = avail & numa_masks[numa]
            out += [
                sid
                for _, sid in sorted(
                    [
                        ((avail & m).bit_count(), sid)
                        for sid, m in tables.socket_in_numa[numa]
                        if m & within
                    ]
                )
            ]
        return out

    def sort_available_cores(self) -> list[int]:
        topo = self.topo
        if self.numa_first:
            parents, parent_masks = self.sort_available_sockets(), topo.socket_masks
        else:
            parents, parent_masks = self.sort_available_numa_nodes(), topo.numa_masks
        out: list[int] = []
        for p in parents:
            within = self.avail & parent_masks[p]
            groups = topo.groups_within(topo.core_masks, parent_masks, p)
            out += self._sorted(self._present(groups, within), topo.core_masks)
        return out

    def sort_available_uncore_caches(self) -> list[int]:
        topo = self.topo
        out: list[int] = []
        for numa in self.sort_available_numa_nodes():
            within = self.avail & topo.numa_masks[numa]
            groups = topo.groups_within(topo.uncore_masks, topo.numa_masks, numa)
            out += self._sorted(self._present(groups, within), topo.uncore_masks)
        return out

    def sort_available_cpus_packed(self) -> list[int]:
        core_masks = self.topo.core_masks
        out: list[int] = []
        for core in self.sort_available_cores():
            out += mask_ids(self.avail & core_masks[core])
        return out

    def sort_available_cpus_spread(self) -> list[int]:
        socket_masks = self.topo.socket_masks
        out: list[int] = []
        for socket in self.sort_available_sockets():
            out += mask_ids(self.avail & socket_masks[socket])
        return out

    # -- "free" (fully available) groups ------------------------------------
    def is_numa_node_free(self, numa_id: int) -> bool:
        m = self.topo.numa_masks.get(numa_id, 0)
        return (self.avail & m).bit_count() == m.bit_count()

    def is_socket_free(self, socket_id: int) -> bool:
        # compared with NumCPUs / NumSockets, not the socket's own size (upstream)
        m = self.topo.socket_masks.get(socket_id, 0)
        return (self.avail & m).bit_count() == self.topo.cpus_per_socket()

    def is_uncore_cache_free(self, uncore_id: int) -> bool:
        m = self.topo.uncore_masks.get(uncore_id, 0)
        return (self.avail & m).bit_count() == m.bit_count()

    def is_core_free(self, core_id: int) -> bool:
        m = self.topo.core_masks.get(core_id, 0)
        return (self.avail & m).bit_count() == self.topo.cpus_per_core()

    def free_numa_nodes(self) -> list[int]:
        return [n for n in self.sort_available_numa_nodes() if self.is_numa_node_free(n)]

    def free_sockets(self) -> list[int]:
        return [s for s in self.sort_available_sockets() if self.is_socket_free(s)]

    def free_uncore_caches(self) -> list[int]:
        return [u for u in self.sort_available_uncore_caches() if self.is_uncore_cache_free(u)]

    def free_cores(self) -> list[int]:
        return [c for c in self.sort_available_cores() if self.is_core_free(c)]

    def free_cpus(self) -> list[int]:
        if self.strategy is CPUSortingStrategy.PACKED:
            return self.sort_available_cpus_packed()
        return self.sort_available_cpus_spread()

    # -- state ----------------------------------------------------------------
    def take(self, cpus: CPUSet | int) -> None:
        mask = cpus if isinstance(cpus, int) else cpus.mask
        self.result_mask |= mask
        self.avail &= ~self.result_mask
        # counts the CPUs handed in, even ones already taken (upstream)
        self.num_cpus_needed -= mask.bit_count()

    def needs_at_least(self, n: int) -> bool:
        return self.num_cpus_needed >= n

    def is_satisfied(self) -> bool:
        return self.num_cpus_needed < 1

    def is_failed(self) -> bool:
        return self.num_cpus_needed > self.avail.bit_count()

    # -- taking whole groups ------------------------------------------------------
    def take_full_numa_nodes(self) -> None:
        if self.num_cpus_needed < _tables(self.topo).min_numa:
            return  # no NUMA node is small enough to be taken
        for numa in self.free_numa_nodes():
            m = self.topo.numa_masks[numa]
            if not self.needs_at_least(m.bit_count()):
                continue
            self.take(m)

    def take_full_sockets(self) -> None:
        if self.num_cpus_needed < _tables(self.topo).min_socket:
            return  # no socket is small enough to be taken
        for socket in self.free_sockets():
            m = self.topo.socket_masks[socket]
            if not self.needs_at_least(m.bit_count()):
                continue
            self.take(m)

    def take_full_first_level(self) -> None:
        if self.numa_first:
            self.take_full_numa_nodes()
        else:
            self.take_full_sockets()

    def take_full_second_level(self) -> None:
        if self.numa_first:
            self.take_full_sockets()
        else:
            self.take_full_numa_nodes()

    def take_full_uncore(self) -> None:
        for uncore in self.free_uncore_caches():
            m = self.topo.uncore_masks[uncore]
            if not self.needs_at_least(m.bit_count()):
                continue
            self.take(m)

    def take_partial_uncore(self, uncore_id: int) -> None:
        topo = self.topo
        per_core = topo.cpus_per_core()
        num_cores_needed = (self.num_cpus_needed + per_core - 1) // per_core
        in_cache = self.avail & topo.uncore_masks.get(uncore_id, 0)
        # the lowest core ids with a free CPU in this cache
        cores = sorted(self._present(topo.core_masks, in_cache))[:num_cores_needed]
        free = 0
        for core in cores:
            free |= topo.core_masks[core]
        free &= self.avail
        # odd request with SMT: leave out the highest free CPU (upstream)
        if (
            self.num_cpus_needed % 2 != 0
            and per_core > 1
            and free.bit_count() > self.num_cpus_needed
        ):
            free &= ~(1 << (free.bit_length() - 1))
        if self.num_cpus_needed != free.bit_count():
            return
        self.take(free)

    def take_uncore_cache(self) -> None:
        cpus_in_uncore = self.topo.cpus_per_uncore()
        for uncore in self.sort_available_uncore_caches():
            if self.needs_at_least(cpus_in_uncore):
                self.take_full_uncore()
            if self.is_satisfied():
                return
            self.take_partial_uncore(uncore)
            if self.is_satisfied():
                return

    def _core_parents(
        self,
    ) -> tuple[Iterable[int], dict[int, int], dict[int, list[tuple[int, int]]]]:
        """The parents of the cores as ``sort_available_cores`` walks them
        (sockets or NUMA nodes, sorted by the free CPUs now), their masks,
        and per parent its cores (id, mask) by id. NUMA nodes under sockets
        are sorted one socket at a time, as the walk reaches it."""
        topo = self.topo
        tables = _tables(topo)
        if self.numa_first:
            return self.sort_available_sockets(), topo.socket_masks, tables.cores_in_socket
        return _numa_nodes_by_socket(tables, self.avail), topo.numa_masks, tables.cores_in_numa

    def take_full_cores(self) -> None:
        """Every free core in ``free_cores`` order, taken while the request
        still needs at least its size.

        ``free_cores`` lists, parent by parent, the cores sorted by their
        free CPUs and id; the free ones all have the same count, so within a
        parent they come by id. They are walked here parent by parent and
        the walk stops once no core could still be taken."""
        tables = _tables(self.topo)
        min_core = tables.min_core
        if self.num_cpus_needed < min_core:
            return  # no core is small enough to be taken
        avail = self.avail  # the views are computed before anything is taken
        cpc = self.topo.cpus_per_core()
        parents, parent_masks, cores_in = self._core_parents()
        k = tables.sibling
        if k >= 0:
            # the free cores, named by their first CPU; whole parents' worth
            # are taken at once, else the lowest ones (the cores by id)
            free_lows = avail & (avail >> k) & tables.lows
            lows_in = tables.lows_in
            cores_wanted = self.num_cpus_needed // cpc
            for p in parents:
                cand = free_lows & lows_in[p]
                if not cand:
                    continue
                n = cand.bit_count()
                if n > cores_wanted:
                    n = 0
                    take = 0
                    while n < cores_wanted:
                        low = cand & -cand
                        cand ^= low
                        take |= low
                        n += 1
                    cand = take
                taken = cand | (cand << k)
                self.result_mask |= taken
                self.avail &= ~self.result_mask
                self.num_cpus_needed -= n * cpc
                cores_wanted -= n
                if cores_wanted == 0:
                    return
            return
        if tables.regular:
            # a free core is one whose CPUs are all free (it has cpc of them)
            for p in parents:
                within = avail & parent_masks[p]
                if within.bit_count() < cpc:
                    continue
                for _, m in cores_in[p]:
                    if (within & m) == m:
                        self.result_mask |= m
                        self.avail &= ~self.result_mask
                        self.num_cpus_needed -= cpc
                        if self.num_cpus_needed < min_core:
                            return
            return
        for p in parents:
            within = avail & parent_masks[p]
            if not within:
                continue
            for _, m in cores_in[p]:
                if not (m & within) or (avail & m).bit_count() != cpc:
                    continue
                # quirk (upstream): the topology's CPUs of the core, not only the
                # available ones; on hybrid machines CPUsPerCore() rounds down and
                # a half-available core counts as free, so an unavailable sibling
                # (even a reserved CPU) is taken.
                n = m.bit_count()
                if self.num_cpus_needed >= n:
                    self.result_mask |= m
                    self.avail &= ~self.result_mask
                    self.num_cpus_needed -= n
                    if self.num_cpus_needed < min_core:
                        return

    def take_remaining_cpus(self) -> None:
        """Single CPUs in ``free_cpus`` order until the request is met. With
        the packed strategy the order is built parent by parent, only as far
        as the walk goes."""
        if self.strategy is not CPUSortingStrategy.PACKED:
            for cpu in self.free_cpus():
                self.take(1 << cpu)
                if self.is_satisfied():
                    return
            return
        avail = self.avail  # the order is computed before anything is taken
        parents, parent_masks, cores_in = self._core_parents()
        tables = _tables(self.topo)
        k = tables.sibling
        if k >= 0:
            # per parent: the cores with one free CPU by id, then the cores
            # with two (by id); a core is named by its first CPU
            lows = tables.lows
            first_free = avail & lows
            second_free = (avail >> k) & lows
            for p in parents:
                lows_p = tables.lows_in[p]
                if k:
                    groups = (
                        (first_free ^ second_free) & lows_p,
                        first_free & second_free & lows_p,
                    )
                else:
                    groups = (first_free & lows_p, 0)
                for cand in groups:
                    while cand:
                        low = cand & -cand
                        cand ^= low
                        if self._take_singly((low | (low << k)) & avail):
                            return
            return
        regular = tables.regular
        shift = tables.shift
        id_bits = (1 << shift) - 1
        for p in parents:
            within = avail & parent_masks[p]
            if not within:
                continue
            # the parent's cores with free CPUs by (free CPUs, id): the list
            # is by id, so (count, position) sorts the same way
            in_parent = cores_in[p]
            keys: list[int] = []
            for i, (_, m) in enumerate(in_parent):
                if regular:  # the core lies inside the parent
                    c = (within & m).bit_count()
                    if c:
                        keys.append((c << shift) | i)
                elif m & within:
                    keys.append(((avail & m).bit_count() << shift) | i)
            keys.sort()
            for key in keys:
                if self._take_singly(avail & in_parent[key & id_bits][1]):
                    return

    def _take_singly(self, cpus: int) -> bool:
        """Take the CPUs of ``cpus`` one at a time, lowest first, while the
        request needs them; whether it is satisfied."""
        while cpus:
            cpu = cpus & -cpus
            cpus ^= cpu
            self.result_mask |= cpu
            self.avail &= ~self.result_mask
            self.num_cpus_needed -= 1
            if self.num_cpus_needed < 1:
                return True
        return False

    # -- distributed helpers ------------------------------------------------------
    def range_numa_nodes_needed_to_satisfy(self, cpu_group_size: int) -> tuple[int, int]:
        topo = self.topo
        num_numa_nodes = len(topo.numa_masks)
        num_numa_available = len(self._present(topo.numa_masks, self.avail))
        num_cpus = topo.all_mask.bit_count()
        num_groups = (num_cpus - 1) // cpu_group_size + 1
        groups_per_numa = (num_groups - 1) // num_numa_nodes + 1
        groups_needed = (self.num_cpus_needed - 1) // cpu_group_size + 1
        min_numas = (groups_needed - 1) // groups_per_numa + 1
        max_numas = min(groups_needed, num_numa_available)
        return min_numas, max_numas


def _not_enough(num_cpus: int, available: CPUSet) -> CPUAllocationError:
    return CPUAllocationError(
        "not enough cpus available to satisfy request: "
        f"requested={num_cpus}, available={available.size()}"
    )


def take_by_topology_numa_packed(
    topo: CPUTopology,
    available: CPUSet,
    num_cpus: int,
    cpu_sorting_strategy: CPUSortingStrategy,
    prefer_align_by_uncore_cache: bool,
) -> CPUSet:
    """``takeByTopologyNUMAPacked``; raises ``CPUAllocationError``."""
    acc = CPUAccumulator(topo, available, num_cpus, cpu_sorting_strategy)
    if acc.is_satisfied():
        return acc.result
    if acc.is_failed():
        raise _not_enough(num_cpus, available)

    acc.take_full_first_level()
    if acc.is_satisfied():
        return acc.result
    acc.take_full_second_level()
    if acc.is_satisfied():
        return acc.result

    if prefer_align_by_uncore_cache:
        acc.take_uncore_cache()
        if acc.is_satisfied():
            return acc.result

    if cpu_sorting_strategy is not CPUSortingStrategy.SPREAD:
        acc.take_full_cores()
        if acc.is_satisfied():
            return acc.result

    acc.take_remaining_cpus()
    if acc.is_satisfied():
        return acc.result
    raise CPUAllocationError("failed to allocate cpus")


def _numa_nodes_in_same_socket(topo: CPUTopology, numas: Sequence[int]) -> bool:
    mask = 0
    for numa in numas:
        mask |= topo.numa_masks.get(numa, 0)
    return sum(1 for m in topo.socket_masks.values() if m & mask) == 1


class _Best:
    """The best NUMA combination found so far for one combination size."""

    __slots__ = ("balance", "remainder", "combo", "in_one_socket")

    def __init__(self) -> None:
        self.balance = math.inf  # upstream: math.MaxFloat64
        self.remainder: _GoSlice | None = None
        self.combo: _GoSlice | None = None
        self.in_one_socket = False


def _livelock(g: int) -> CPUAllocationError:
    # upstream spins forever in this situation; a port cannot, so it fails
    return CPUAllocationError(
        f"remainder CPUs cannot be handed out in groups of {g} (kubelet v1.37 loops forever here)"
    )


def _pick_numa_combo(
    topo: CPUTopology,
    numas: list[int],
    k: int,
    free_in: dict[int, int],
    num_cpus: int,
    g: int,
    align_by_socket: bool,
    best: _Best,
) -> None:
    """Walk the k-combinations of ``numas`` and record in ``best`` the one
    (and its remainder subset) with the lowest balance score."""

    def visit(combo_view: _GoSlice) -> bool:
        if best.balance == 0 and (not align_by_socket or best.in_one_socket):
            return True
        combo = combo_view.values()
        if sum(free_in[n] for n in combo) < num_cpus:
            return False
        if sum(free_in[n] // g for n in combo) * g < num_cpus:
            return False
        distribution = (num_cpus // len(combo) // g) * g
        if align_by_socket:
            for n in combo:
                distribution = min(distribution, free_in[n] // g * g)
        for n in combo:
            if free_in[n] < distribution:
                return False
        after = dict(free_in)
        for n in combo:
            after[n] -= distribution
        remainder = num_cpus - distribution * len(combo)
        remainder_combo = [n for n in combo if after[n] >= g]

        local_best = _Best()
        if remainder == 0:
            local_best.balance = standard_deviation(list(after.values()))

        def visit_subset(subset_view: _GoSlice) -> bool:
            subset = subset_view.values()
            left = remainder
            local = dict(after)
            # the capacity test counts raw CPUs, not whole groups: with
            # groups of 2 and odd free counts a subset can pass it and still
            # be unable to hand out the remainder, where the kubelet spins
            # forever in the loop below (reproduced as an error, see _livelock)
            if sum(local[n] for n in subset) < left:
                return False
            while left > 0:
                progressed = False
                for n in subset:
                    if left == 0:
                        break
                    if local[n] < g:
                        continue
                    local[n] -= g
                    left -= g
                    progressed = True
                if not progressed:
                    raise _livelock(g)
            balance = standard_deviation(list(local.values()))
            if balance < local_best.balance:
                local_best.balance = balance
                local_best.remainder = subset_view
            return False

        kk = len(remainder_combo)
        while remainder > 0 and kk >= 1:
            iterate_combinations(remainder_combo, kk, visit_subset)
            kk -= 1

        in_same_socket = align_by_socket and _numa_nodes_in_same_socket(topo, combo)
        is_better = local_best.balance < best.balance
        if align_by_socket and in_same_socket != best.in_one_socket:
            is_better = in_same_socket
        if is_better:
            best.balance = local_best.balance
            best.remainder = local_best.remainder
            best.combo = combo_view
            if align_by_socket:
                best.in_one_socket = in_same_socket
        return False

    iterate_combinations(numas, k, visit)


def take_by_topology_numa_distributed(
    topo: CPUTopology,
    available: CPUSet,
    num_cpus: int,
    cpu_group_size: int,
    cpu_sorting_strategy: CPUSortingStrategy,
    align_by_socket: bool = False,
) -> CPUSet:
    """``takeByTopologyNUMADistributed``; raises ``CPUAllocationError``.

    ``align_by_socket`` is upstream's trailing ``alignBySocket`` argument
    (``align-by-socket`` together with ``distribute-cpus-across-numa``):
    combinations within one socket beat cross-socket ones.
    """
    g = cpu_group_size
    if num_cpus % g != 0:
        return take_by_topology_numa_packed(topo, available, num_cpus, cpu_sorting_strategy, False)

    acc = CPUAccumulator(topo, available, num_cpus, cpu_sorting_strategy)
    if acc.is_satisfied():
        return acc.result
    if acc.is_failed():
        raise _not_enough(num_cpus, available)

    numa_masks = topo.numa_masks
    numas = acc.sort_available_numa_nodes()
    min_numas, max_numas = acc.range_numa_nodes_needed_to_satisfy(g)

    for k in range(min_numas, max_numas + 1):
        avail = acc.avail
        free_in = {n: (avail & numa_masks[n]).bit_count() for n in numas}
        best = _Best()
        _pick_numa_combo(topo, numas, k, free_in, num_cpus, g, align_by_socket, best)
        if best.combo is None:
            continue

        chosen = best.combo.values()
        distribution = (num_cpus // len(chosen) // g) * g
        for n in chosen:
            distribution = min(distribution, (acc.avail & numa_masks[n]).bit_count() // g * g)
        for n in chosen:
            cpus = _take_packed_or_empty(
                topo, acc.avail & numa_masks[n], distribution, cpu_sorting_strategy
            )
            acc.take(cpus)

        remainder = num_cpus - distribution * len(chosen)
        spill = best.remainder.values() if best.remainder is not None else []
        while remainder > 0:
            progressed = False
            for n in spill:
                if remainder == 0:
                    break
                if (acc.avail & numa_masks[n]).bit_count() < g:
                    continue
                cpus = _take_packed_or_empty(
                    topo, acc.avail & numa_masks[n], g, cpu_sorting_strategy
                )
                acc.take(cpus)
                remainder -= g
                progressed = True
            if not progressed:
                raise _livelock(g)

        if acc.num_cpus_needed > 0:
            raise CPUAllocationError(
                f"accounting error, not enough CPUs allocated, remaining: {acc.num_cpus_needed}"
            )
        if acc.num_cpus_needed < 0:
            raise CPUAllocationError(
                f"accounting error, too many CPUs allocated, remaining: {acc.num_cpus_needed}"
            )
        return acc.result

    return take_by_topology_numa_packed(topo, available, num_cpus, cpu_sorting_strategy, False)


def _take_packed_or_empty(
    topo: CPUTopology, available_mask: int, num_cpus: int, strategy: CPUSortingStrategy
) -> int:
    """A nested packed pick whose error is ignored (upstream drops it and
    takes the empty set)."""
    try:
        return take_by_topology_numa_packed(
            topo, CPUSet.from_mask(available_mask), num_cpus, strategy, False
        ).mask
    except CPUAllocationError:
        return 0
