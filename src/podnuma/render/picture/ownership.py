"""Who owns each CPU after a step of a run (:func:`ownership_after`), and the
``podnuma topology -o json`` document of it.

Every owner has a key, unique in the picture, that marks its CPUs in the
text picture (written right after the CPU id: ``26b``), on the PU boxes and
legend swatches of the SVG and PNG pictures, and in the document's ``key``:

* ``#`` the reserved CPUs, ``.`` the node shared pool, ``!`` the CPUs held
  outside the shared pool;
* the pods' shared pools and the containers, in legend order, letters only
  (:func:`owner_key`): ``a``-``z`` then ``A``-``Z`` (49 single letters:
  without ``l``, ``I`` and ``O``, which read as the digits 1 and 0), then
  two letters (``aa``, ``ab``, ... ``ZZ``), then three, as many as there
  are owners.

A key never holds a digit, so it cannot run into the CPU id before it: in
``26ab`` the CPU is 26 and the owner ``ab``. The text picture pads every
key to the longest one, so the cells stay aligned.

The pods a run restored from its scenario's starting checkpoints
(``state:``, :attr:`RunResult.restored`) run from the start: they own their
CPUs and memory before any step and until a step removes them, as in
``podnuma simulate``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from podnuma.cm.results import ContainerResult, MemoryBlock, PodAllocation, StepResult
from podnuma.errors import step_out_of_range
from podnuma.machine.cpuset import CPUSet, parse_go_cpuset
from podnuma.machine.topology import Machine
from podnuma.scenario.run import RestoredPod, RunResult

OwnerKind = Literal["reserved", "shared", "pod", "exclusive", "other"]

RESERVED = "reserved"
NODE_SHARED = "node shared pool"
HELD = "held outside the shared pool"


@dataclass(frozen=True, slots=True)
class Owner:
    """One owner of CPUs: ``name`` is the legend text and the SVG
    ``data-owner`` value; ``key`` its mark in the pictures, unique among the
    owners and without digits (see the module's docstring);
    ``color`` its ``#rrggbb`` fill."""

    kind: OwnerKind
    name: str
    cpus: CPUSet
    key: str
    color: str
    pod: str | None = None
    container: str | None = None


@dataclass(frozen=True)
class Ownership:
    """Who owns each CPU after one step (``step`` is ``None`` before any).

    ``owners`` are in legend order (reserved, node shared pool, then the
    pods in the order they were admitted, each pod's shared pool before its
    exclusive containers); owners with no CPUs are left out. ``pinned``
    is the memory pinned by running pods, by NUMA-node group and resource
    (``memory``, ``hugepages-2Mi``...), in bytes.
    """

    node: str
    step: StepResult | None
    owners: tuple[Owner, ...]
    cpu_owner: Mapping[int, int]
    pinned: Mapping[tuple[int, ...], Mapping[str, int]] = field(default_factory=dict)

    def owner_of(self, cpu: int) -> Owner:
        return self.owners[self.cpu_owner[cpu]]

    def by_name(self, name: str) -> Owner:
        for o in self.owners:
            if o.name == name:
                return o
        raise KeyError(name)

    def caption(self) -> str:
        s = self.step
        if s is None:
            return "before any step"
        what = f"{s.op} {s.pod}"
        if s.op == "removeContainer" and s.container:
            what += f"/{s.container}"
        if s.op == "addPod" and s.admitted is False:
            what += f" (rejected: {s.reason})"
        return f"after step {s.index}: {what}"


@dataclass
class _Running:
    pod: str
    containers: tuple[ContainerResult, ...]
    allocation: PodAllocation | None


# Qualitative palette for pod and container owners, light enough for dark
# text (ColorBrewer Set3 and Set2 without their greys), used in legend order.
PALETTE: tuple[str, ...] = (
    "#8dd3c7", "#fdb462", "#bebada", "#fb8072", "#80b1d3", "#b3de69",
    "#fccde5", "#ffed6f", "#bc80bd", "#ccebc5", "#ffffb3",
    "#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f", "#e5c494",
)
RESERVED_COLOR = "#a6a6a6"
SHARED_COLOR = "#ffffff"
HELD_COLOR = "#595959"

#: the letters of the pods' and containers' keys: no digits (a key follows a
#: CPU id in the text picture) and none that reads as one (l, I, O)
_KEYS = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"
RESERVED_KEY = "#"
SHARED_KEY = "."
HELD_KEY = "!"


def owner_key(i: int) -> str:
    """The key of the ``i``-th pod or container owner (from 0), in legend
    order: the letters of ``_KEYS`` one by one, then every pair of them,
    then every triple... (bijective base ``len(_KEYS)``): a different key
    for every ``i``, made of letters only."""
    if i < 0:
        raise ValueError(f"owner index {i} < 0")
    n = len(_KEYS)
    key = ""
    i += 1
    while i:
        i, r = divmod(i - 1, n)
        key = _KEYS[r] + key
    return key


def _replay(restored: Sequence[RestoredPod], steps: Sequence[StepResult]) -> dict[str, _Running]:
    """Running pods (by UID, in order of first admission: the pods restored
    from the starting checkpoints first) after ``steps``."""
    running: dict[str, _Running] = {
        rp.uid: _Running(rp.pod, rp.containers, rp.allocation) for rp in restored
    }
    for s in steps:
        if s.op == "addPod":
            if s.admitted:
                running[s.pod_uid] = _Running(s.pod, s.containers, s.pod_allocation)
            else:
                # A rejected re-admission ends the pod (it is no longer active).
                running.pop(s.pod_uid, None)
        elif s.op == "removePod":
            running.pop(s.pod_uid, None)
        elif s.op == "reconcile":
            continue  # no pod of its own
        else:  # removeContainer: the pod runs on with what is left
            running[s.pod_uid] = _Running(s.pod, s.containers, s.pod_allocation)
    return running


def _start_default(result: RunResult) -> CPUSet:
    """The default CPU set (shared pool) the node started with, for a run
    without steps: empty for the ``none`` policy (every CPU shared).

    The CPU manager's checkpoint after such a run is the one it started
    from (its ``defaultCpuSet``, exactly). A run kept without checkpoints
    falls back on the restored pods: a container outside any exclusive set
    runs on the shared pool as it was; else the static policy's start-up
    check (the default set and the assignments make up the CPUs) leaves
    every CPU no restored container holds.
    """
    cp = result.checkpoints.get("cpuManager")
    text = cp.get("defaultCpuSet") if isinstance(cp, Mapping) else None
    if isinstance(text, str):
        try:
            return parse_go_cpuset(text)
        except ValueError:
            pass  # (the kubelet read it at start: not expected)
    held = CPUSet()
    for rp in result.restored:
        for c in rp.containers:
            if c.isolation == "host":
                return c.cpus
            held |= c.cpus
    return result.machine.topology.cpus() - held


def _pinned(running: Iterable[_Running]) -> dict[tuple[int, ...], dict[str, int]]:
    out: dict[tuple[int, ...], dict[str, int]] = {}

    def add(blocks: Iterable[MemoryBlock]) -> None:
        for b in blocks:
            if b.size:
                per = out.setdefault(tuple(b.numa_nodes), {})
                per[b.type] = per.get(b.type, 0) + b.size

    for rp in running:
        if rp.allocation is not None and rp.allocation.memory:
            add(rp.allocation.memory)  # the containers' blocks come out of it
        else:
            # Init containers' blocks already show only what later
            # containers did not reuse.
            for c in rp.containers:
                add(c.memory)
    return out


def ownership_after(result: RunResult, step: int | None = None) -> Ownership:
    """The owner of every CPU after step ``step`` (default: the last step)
    of ``result`` (a :class:`podnuma.scenario.run.RunResult`); with no
    step (a run without steps), the state the node started with: the pods
    restored from the starting checkpoints and the shared pool left.

    Raises :class:`InputError` when ``step`` is not a step index of the run.
    """
    all_steps = result.steps
    n = len(all_steps)
    if step is None:
        idx = n - 1
    elif not 0 <= step < n:
        raise step_out_of_range(step, n)
    else:
        idx = step
    machine = result.machine
    node = result.node
    cur = all_steps[idx] if idx >= 0 else None
    running = _replay(result.restored, all_steps[: idx + 1])
    all_cpus = machine.topology.cpus()
    reserved = node.reserved_cpus & all_cpus
    # no step: what the node started with (restored pods' CPUs out of it)
    default = _start_default(result) if cur is None else cur.default_cpuset
    if default.is_empty():
        default = all_cpus  # policy none: every CPU is shared

    # (kind, name, cpus, pod, container), in legend order; claimed CPUs go to
    # the first claim: exclusive app/sidecar containers, then init
    # containers, then pod shared pools, then reserved and the shared pool.
    pod_claims: list[tuple[OwnerKind, str, CPUSet, str, str | None]] = []
    exclusive = CPUSet()
    for rp in running.values():
        for c in rp.containers:
            if c.isolation == "container" and c.type != "init":
                exclusive |= c.cpus
    init_taken = CPUSet()
    for rp in running.values():
        for c in rp.containers:
            if c.isolation == "container" and c.type == "init":
                init_taken |= c.cpus - exclusive
    held_by_containers = exclusive | init_taken
    for rp in running.values():
        pod_excl = CPUSet()
        claims: list[tuple[OwnerKind, str, CPUSet, str, str | None]] = []
        for c in rp.containers:
            if c.isolation != "container":
                continue
            mine = c.cpus if c.type != "init" else c.cpus - exclusive
            pod_excl |= c.cpus
            claims.append(("exclusive", f"exclusive: {rp.pod}/{c.name}", mine, rp.pod, c.name))
        if rp.allocation is not None:
            pool = rp.allocation.cpus - pod_excl - held_by_containers
            pod_claims.append(("pod", f"pod shared pool of {rp.pod}", pool, rp.pod, None))
        pod_claims.extend(claims)

    taken = CPUSet()
    for _, _, cpus, _, _ in pod_claims:
        taken |= cpus
    reserved_own = reserved - taken
    shared_own = default - taken - reserved
    held = all_cpus - default - taken - reserved

    raw: list[tuple[OwnerKind, str, CPUSet, str | None, str | None]] = [
        ("reserved", RESERVED, reserved_own, None, None),
        ("shared", NODE_SHARED, shared_own, None, None),
        *pod_claims,
        ("other", HELD, held, None, None),
    ]
    owners: list[Owner] = []
    cpu_owner: dict[int, int] = {}
    seen: set[str] = set()
    assigned = CPUSet()
    palette_i = 0
    for kind, name, claimed, pod, container in raw:
        cpus = claimed - assigned
        if cpus.is_empty() or name in seen:
            continue
        seen.add(name)
        assigned |= cpus
        if kind == "reserved":
            key, color = RESERVED_KEY, RESERVED_COLOR
        elif kind == "shared":
            key, color = SHARED_KEY, SHARED_COLOR
        elif kind == "other":
            key, color = HELD_KEY, HELD_COLOR
        else:
            key = owner_key(palette_i)
            color = PALETTE[palette_i % len(PALETTE)]
            palette_i += 1
        for cpu in cpus.list():
            cpu_owner[cpu] = len(owners)
        owners.append(Owner(kind, name, cpus, key, color, pod, container))
    pinned = {g: dict(v) for g, v in _pinned(running.values()).items()}
    return Ownership(
        node=node.name, step=cur, owners=tuple(owners), cpu_owner=cpu_owner, pinned=pinned
    )


def ownership_document(machine: Machine, own: Ownership) -> dict[str, object]:
    """The picture's data for ``-o json``: who owns which CPUs after the
    step, and the memory pinned by running pods."""
    return {
        "node": own.node,
        "after": own.caption(),
        "step": None if own.step is None else own.step.index,
        "cpus": str(CPUSet(machine.topology.cpu_info)),
        "owners": [
            {
                "kind": o.kind,
                "name": o.name,
                "key": o.key,
                "cpus": str(o.cpus),
                **({"pod": o.pod} if o.pod is not None else {}),
                **({"container": o.container} if o.container is not None else {}),
            }
            for o in own.owners
        ],
        "pinnedMemory": [
            {"numaNodes": list(group), "bytes": dict(per)} for group, per in sorted(own.pinned.items())
        ],
    }
