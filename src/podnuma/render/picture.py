"""``podnuma topology``: a picture of the machine, every CPU coloured by owner.

Like hwloc's ``lstopo``: Machine ⊃ Package (socket) ⊃ NUMANode (memory,
huge pages, memory pinned by pods) ⊃ L3 (uncore cache) ⊃ Core ⊃ PU (logical
CPU). Each PU box carries its CPU id and is filled with the colour of the
CPU's owner after a step of the run:

* ``reserved`` — the node's reserved CPUs (``reservedSystemCPUs`` or what the
  kubelet derived from ``kubeReserved``/``systemReserved``);
* ``node shared pool`` — the default CPU set minus the reserved CPUs (every
  CPU with the ``none`` policy, whose default set is empty);
* ``pod shared pool of NS/NAME`` — the CPUs of a pod's pod-level reservation
  (``podAllocation``) not held exclusively by one of its containers;
* ``exclusive: NS/NAME/CONTAINER`` — CPUs of a container with isolation
  ``container``. An init container's CPUs handed on to a later container
  show under the later container (the current owner);
* ``held outside the shared pool`` — anything else out of the default set
  (checkpoint entries of pods no step names, or leftovers of a rejected pod
  waiting for the kubelet's stale-state clean-up).

Pure: :func:`ownership_after` replays the step results, :func:`build_picture`
lays out a drawing model, and the renderers turn it into SVG, PNG (drawn with
Pillow, no system libraries needed) or text. No I/O here: the command in
``podnuma.cli.topology`` reads the scenario and writes the output.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from podnuma.cm.results import ContainerResult, MemoryBlock, PodAllocation, StepResult
from podnuma.errors import InputError
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.scenario.run import RunResult
from podnuma.units import format_bytes

__all__ = [
    "Owner",
    "OwnerKind",
    "ownership_document",
    "Ownership",
    "ownership_after",
    "Box",
    "LegendItem",
    "Picture",
    "build_picture",
    "render_svg",
    "render_png",
    "render_text",
    "RESERVED",
    "NODE_SHARED",
    "HELD",
]

OwnerKind = Literal["reserved", "shared", "pod", "exclusive", "other"]

RESERVED = "reserved"
NODE_SHARED = "node shared pool"
HELD = "held outside the shared pool"

# --------------------------------------------------------------------------
# Ownership
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Owner:
    """One owner of CPUs: ``name`` is the legend text and the SVG
    ``data-owner`` value; ``key`` the one-character mark of the text form;
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

_KEYS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
RESERVED_KEY = "#"
SHARED_KEY = "."
HELD_KEY = "!"


def _replay(steps: Sequence[StepResult]) -> dict[str, _Running]:
    """Running pods (by UID, in order of first admission) after ``steps``."""
    running: dict[str, _Running] = {}
    for s in steps:
        if s.op == "addPod":
            if s.admitted:
                running[s.pod_uid] = _Running(s.pod, s.containers, s.pod_allocation)
            else:
                # A rejected re-admission ends the pod (it is no longer active).
                running.pop(s.pod_uid, None)
        elif s.op == "removePod":
            running.pop(s.pod_uid, None)
        else:  # removeContainer: the pod runs on with what is left
            running[s.pod_uid] = _Running(s.pod, s.containers, s.pod_allocation)
    return running


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
    of ``result`` (a :class:`podnuma.scenario.run.RunResult`).

    Raises :class:`InputError` when ``step`` is not a step index of the run.
    """
    all_steps = result.steps
    n = len(all_steps)
    if step is None:
        idx = n - 1
    elif not 0 <= step < n:
        span = f"0-{n - 1}" if n else "none"
        raise InputError(f"--step {step}: no such step (the scenario's steps: {span})")
    else:
        idx = step
    machine = result.machine
    node = result.node
    cur = all_steps[idx] if idx >= 0 else None
    running = _replay(all_steps[: idx + 1])
    all_cpus = machine.topology.cpus()
    reserved = node.reserved_cpus & all_cpus
    if cur is None:
        default = all_cpus  # before any step: nothing handed out
    elif cur.default_cpuset.is_empty():
        default = all_cpus  # policy none: every CPU is shared
    else:
        default = cur.default_cpuset

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
            key = _KEYS[palette_i] if palette_i < len(_KEYS) else "?"
            color = PALETTE[palette_i % len(PALETTE)]
            palette_i += 1
        for cpu in cpus.list():
            cpu_owner[cpu] = len(owners)
        owners.append(Owner(kind, name, cpus, key, color, pod, container))
    pinned = {g: dict(v) for g, v in _pinned(running.values()).items()}
    return Ownership(
        node=node.name, step=cur, owners=tuple(owners), cpu_owner=cpu_owner, pinned=pinned
    )


# --------------------------------------------------------------------------
# The machine as a tree (socket > NUMA node > uncore cache > core > PU)
# --------------------------------------------------------------------------

_Tree = dict[int, dict[int, dict[int, dict[int, list[int]]]]]


def _tree(machine: Machine) -> _Tree:
    tree: _Tree = {}
    info = machine.topology.cpu_info
    for cpu in sorted(info):
        i = info[cpu]
        (
            tree.setdefault(i.socket, {})
            .setdefault(i.numa_node, {})
            .setdefault(i.uncore_cache, {})
            .setdefault(i.core, [])
            .append(cpu)
        )
    return {
        s: {
            n: {u: dict(sorted(cores.items())) for u, cores in sorted(caches.items())}
            for n, caches in sorted(numas.items())
        }
        for s, numas in sorted(tree.items())
    }


def _size(n: int) -> str:
    return format_bytes(n, approximate=True)


def _devices(machine: Machine, nid: int) -> str:
    parts = []
    for resource, devs in sorted(machine.devices.items()):
        ids = [d.id for d in devs if nid in d.numa_nodes]
        if ids:
            parts.append(
                f"{resource} {', '.join(ids)}" if len(ids) <= 3 else f"{resource} x{len(ids)}"
            )
    return "; ".join(parts)


def _pinned_text(per: Mapping[str, int]) -> str:
    return ", ".join(
        _size(v) if k == "memory" else f"{_size(v)} of {k.removeprefix('hugepages-')} pages"
        for k, v in sorted(per.items())
    )


def _numa_lines(machine: Machine, nid: int, own: Ownership, sockets: int) -> list[str]:
    try:
        node = machine.numa_node(nid)
    except KeyError:
        return [f"NUMANode {nid}"]
    lines = [f"NUMANode {nid} ({_size(node.memory)})"]
    pools = [f"{_size(t)} of {_size(p)}" for p, t in sorted(node.hugepages.items()) if t]
    if pools:
        lines.append("hugepages: " + ", ".join(pools))
    pinned = own.pinned.get((nid,), {})
    if pinned:
        lines.append("pinned by pods: " + _pinned_text(pinned))
    devices = _devices(machine, nid)
    if devices:
        lines.append("devices: " + devices)
    if sockets > 1:
        lines.append(f"(spans {sockets} packages)")
    return lines


def _spanning_pinned(own: Ownership) -> list[str]:
    out = []
    for group, per in sorted(own.pinned.items()):
        if len(group) > 1:
            nodes = ",".join(map(str, group))
            out.append(f"pinned by pods across NUMA nodes {nodes}: {_pinned_text(per)}")
    return out


def _machine_lines(machine: Machine, own: Ownership) -> list[str]:
    n = machine.topology.cpus().size()
    head = f"Machine {own.node} ({_size(machine.memory_capacity())} total, {n} CPUs)"
    return [head, own.caption(), *_spanning_pinned(own)]


# --------------------------------------------------------------------------
# Drawing model
# --------------------------------------------------------------------------

BoxKind = Literal["machine", "package", "numa", "cache", "core", "pu"]

FONT = 12
LINE = 15
PAD = 6
GAP = 6
PU_W = 48
PU_H = 36
CHAR = 0.62  # estimated glyph width, in em

# lstopo's colours for the containers.
_FILLS: dict[str, str] = {
    "machine": "#ffffff",
    "package": "#dedede",
    "numa": "#eff6e0",
    "cache": "#ffffff",
    "core": "#bebebe",
}
NUMA_BAR = "#d2e7a4"


@dataclass(frozen=True, slots=True)
class Box:
    """One rectangle of the picture, in pixels; parents come before their
    children in :attr:`Picture.boxes`. PU boxes carry ``cpu``, ``owner``
    and ``key``; the NUMA box's label sits on a bar ``bar_h`` tall."""

    kind: BoxKind
    x: float
    y: float
    w: float
    h: float
    fill: str
    lines: tuple[str, ...]
    cpu: int | None = None
    owner: str | None = None
    key: str | None = None
    bar_h: float = 0.0


@dataclass(frozen=True, slots=True)
class LegendItem:
    key: str
    owner: str
    color: str
    cpus: CPUSet
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Picture:
    width: float
    height: float
    title: str
    boxes: tuple[Box, ...]
    legend: tuple[LegendItem, ...]
    legend_title: tuple[float, float]
    cpus_x: float  # where the legend's CPU-list column starts
    swatch: float = 16.0


def _text_w(s: str, size: float = FONT) -> float:
    return len(s) * size * CHAR


@dataclass
class _Node:
    kind: BoxKind
    lines: list[str]
    children: list[_Node] = field(default_factory=list)
    cpu: int | None = None
    owner: Owner | None = None
    w: float = 0.0
    h: float = 0.0
    min_w: float = 0.0
    offsets: list[tuple[float, float]] = field(default_factory=list)


def _grid(kind: BoxKind, sizes: Sequence[tuple[float, float]]) -> int:
    """How many columns to lay ``sizes`` out in."""
    n = len(sizes)
    if n <= 1:
        return 1
    if kind == "core":
        return n if n <= 4 else math.ceil(math.sqrt(n))
    if kind in ("machine", "package"):
        return min(n, 2)
    # caches and NUMA nodes: aim at a wide-ish block without ragged rows.
    target = 2.5 if kind == "cache" else 3.0
    cw = max(w for w, _ in sizes)
    ch = max(h for _, h in sizes)
    best, best_score = 1, math.inf
    for cols in range(1, n + 1):
        rows = math.ceil(n / cols)
        width = cols * cw + (cols - 1) * GAP
        height = rows * ch + (rows - 1) * GAP
        empty = rows * cols - n
        score = abs(math.log(width / height / target)) + 0.5 * empty / cols
        if score < best_score - 1e-9:
            best, best_score = cols, score
    return best


def _measure(node: _Node) -> None:
    if node.kind == "pu":
        node.w = max(PU_W, node.min_w)
        node.h = PU_H
        return
    for child in node.children:
        _measure(child)
    head = len(node.lines) * LINE + (4 if node.kind == "numa" else 2)
    sizes = [(child.w, child.h) for child in node.children]
    cols = _grid(node.kind, sizes)
    col_w = [0.0] * cols
    row_h: list[float] = []
    for i, (w, h) in enumerate(sizes):
        r, c = divmod(i, cols)
        col_w[c] = max(col_w[c], w)
        if r == len(row_h):
            row_h.append(0.0)
        row_h[r] = max(row_h[r], h)
    node.offsets = []
    for i in range(len(sizes)):
        r, c = divmod(i, cols)
        node.offsets.append((PAD + sum(col_w[:c]) + GAP * c, head + PAD + sum(row_h[:r]) + GAP * r))
    inner_w = sum(col_w) + GAP * max(0, cols - 1)
    inner_h = sum(row_h) + GAP * max(0, len(row_h) - 1)
    label_w = max((_text_w(s, FONT + (2 if node.kind == "machine" else 0)) for s in node.lines), default=0)
    node.w = max(inner_w, label_w) + 2 * PAD
    node.h = head + PAD + inner_h + PAD


def _emit(node: _Node, x: float, y: float, out: list[Box]) -> None:
    if node.kind == "pu":
        assert node.owner is not None and node.cpu is not None
        out.append(
            Box("pu", x, y, node.w, node.h, node.owner.color, tuple(node.lines),
                cpu=node.cpu, owner=node.owner.name, key=node.owner.key)
        )
        return
    bar = len(node.lines) * LINE + 4 if node.kind == "numa" else 0.0
    out.append(Box(node.kind, x, y, node.w, node.h, _FILLS[node.kind], tuple(node.lines), bar_h=bar))
    for child, (dx, dy) in zip(node.children, node.offsets, strict=True):
        _emit(child, x + dx, y + dy, out)


def _layout_tree(machine: Machine, own: Ownership) -> _Node:
    tree = _tree(machine)
    numa_sockets: dict[int, int] = {}
    for numas in tree.values():
        for nid in numas:
            numa_sockets[nid] = numa_sockets.get(nid, 0) + 1
    root = _Node("machine", _machine_lines(machine, own))
    # Every PU as wide as the widest label (bold text: a wider estimate).
    widest = max(machine.topology.cpu_info, default=0)
    pu_w = _text_w(f"PU {widest}") * 1.15 + 8
    for sid, numas in tree.items():
        pkg = _Node("package", [f"Package {sid}"])
        root.children.append(pkg)
        for nid, caches in numas.items():
            numa = _Node("numa", _numa_lines(machine, nid, own, numa_sockets[nid]))
            pkg.children.append(numa)
            for uid, cores in caches.items():
                cache = _Node("cache", [f"L3 {uid}"])
                numa.children.append(cache)
                for core_id, cpus in cores.items():
                    core = _Node("core", [f"Core {core_id}"])
                    cache.children.append(core)
                    for cpu in cpus:
                        o = own.owner_of(cpu)
                        core.children.append(
                            _Node("pu", [f"PU {cpu}", o.key], cpu=cpu, owner=o, min_w=pu_w)
                        )
    return root


MARGIN = 10.0
LEGEND_ROW = 20.0


def build_picture(machine: Machine, own: Ownership) -> Picture:
    """Lay out the machine and the legend (pixels, origin top left)."""
    root = _layout_tree(machine, own)
    _measure(root)
    boxes: list[Box] = []
    _emit(root, MARGIN, MARGIN, boxes)
    ly = MARGIN + root.h + 14
    title_pos = (MARGIN, ly)
    legend: list[LegendItem] = []
    y = ly + 10
    cpus_x = MARGIN + 16 + 8 + max((_text_w(o.name) for o in own.owners), default=0) + 16
    widest = 0.0
    for o in own.owners:
        legend.append(LegendItem(o.key, o.name, o.color, o.cpus, MARGIN, y))
        widest = max(widest, cpus_x - MARGIN + _text_w(_cpus_text(o.cpus)))
        y += LEGEND_ROW
    width = max(root.w, widest) + 2 * MARGIN
    height = y + MARGIN
    return Picture(
        width=math.ceil(width),
        height=math.ceil(height),
        title=f"{own.node}: {own.caption()}",
        boxes=tuple(boxes),
        legend=tuple(legend),
        legend_title=title_pos,
        cpus_x=cpus_x,
    )


def _ink(fill: str) -> str:
    """Black or white text, whichever reads better on ``fill``."""
    r, g, b = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 110 else "#ffffff"


def _cpus_text(cpus: CPUSet) -> str:
    n = cpus.size()
    return f"CPUs {cpus} ({n} CPU{'s' if n != 1 else ''})" if n != 1 else f"CPU {cpus}"


# --------------------------------------------------------------------------
# SVG
# --------------------------------------------------------------------------


def _f(v: float) -> str:
    return f"{v:g}"


def escape(text: str) -> str:
    """XML character data: ``&``, ``<`` and ``>`` escaped. (``html`` rather
    than ``xml.sax.saxutils``, whose import pulls in ``urllib.request`` and
    with it http, email and ssl: a cost every command start would pay.)"""
    return html.escape(text, quote=False)


def quoteattr(text: str) -> str:
    """An XML attribute value, quotes included."""
    return '"' + html.escape(text, quote=True) + '"'


def render_svg(machine: Machine, own: Ownership) -> str:
    """A stand-alone SVG document. PU ``<rect>`` elements carry ``data-cpu``
    and ``data-owner``; legend entries (``<g class="legend-entry">`` and
    their swatch) carry ``data-owner``."""
    pic = build_picture(machine, own)
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(pic.width)}" height="{_f(pic.height)}" '
        f'viewBox="0 0 {_f(pic.width)} {_f(pic.height)}" '
        f'font-family="DejaVu Sans, Verdana, Helvetica, Arial, sans-serif" font-size="{FONT}">',
        f"<title>{escape(pic.title)}</title>",
        f'<rect x="0" y="0" width="{_f(pic.width)}" height="{_f(pic.height)}" fill="#ffffff"/>',
    ]
    for b in pic.boxes:
        geo = f'x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.w)}" height="{_f(b.h)}"'
        if b.kind == "pu":
            assert b.owner is not None and b.cpu is not None
            ink = _ink(b.fill)
            out.append(
                f'<rect class="pu" data-cpu="{b.cpu}" data-owner={quoteattr(b.owner)} {geo} '
                f'fill="{b.fill}" stroke="#000000" stroke-width="1">'
                f"<title>CPU {b.cpu}: {escape(b.owner)}</title></rect>"
            )
            cx = b.x + b.w / 2
            out.append(
                f'<text x="{_f(cx)}" y="{_f(b.y + 15)}" text-anchor="middle" fill="{ink}" '
                f'font-weight="bold">{escape(b.lines[0])}</text>'
            )
            out.append(
                f'<text x="{_f(cx)}" y="{_f(b.y + 30)}" text-anchor="middle" fill="{ink}" '
                f'font-size="{FONT - 1}">{escape(b.lines[1])}</text>'
            )
            continue
        out.append(
            f'<rect class="{b.kind}" {geo} fill="{b.fill}" stroke="#000000" stroke-width="1"/>'
        )
        if b.bar_h:
            out.append(
                f'<rect class="numa-bar" x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.w)}" '
                f'height="{_f(b.bar_h)}" fill="{NUMA_BAR}" stroke="#000000" stroke-width="1"/>'
            )
        for i, line in enumerate(b.lines):
            size = FONT + 2 if b.kind == "machine" and i == 0 else FONT
            weight = ' font-weight="bold"' if i == 0 else ""
            out.append(
                f'<text x="{_f(b.x + PAD)}" y="{_f(b.y + 13 + i * LINE)}" font-size="{size}"{weight}>'
                f"{escape(line)}</text>"
            )
    tx, ty = pic.legend_title
    out.append(
        f'<text x="{_f(tx)}" y="{_f(ty)}" font-weight="bold">'
        f"CPU owners, {escape(own.caption())}</text>"
    )
    sw = pic.swatch
    for item in pic.legend:
        out.append(f'<g class="legend-entry" data-owner={quoteattr(item.owner)}>')
        out.append(
            f'<rect class="swatch" data-owner={quoteattr(item.owner)} x="{_f(item.x)}" '
            f'y="{_f(item.y)}" width="{_f(sw)}" height="{_f(sw)}" fill="{item.color}" '
            f'stroke="#000000" stroke-width="1"/>'
        )
        out.append(
            f'<text x="{_f(item.x + sw / 2)}" y="{_f(item.y + 12)}" text-anchor="middle" '
            f'fill="{_ink(item.color)}" font-size="{FONT - 1}">{escape(item.key)}</text>'
        )
        out.append(
            f'<text x="{_f(item.x + sw + 8)}" y="{_f(item.y + 12)}">{escape(item.owner)}</text>'
        )
        out.append(
            f'<text x="{_f(pic.cpus_x)}" y="{_f(item.y + 12)}">{escape(_cpus_text(item.cpus))}</text>'
        )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# PNG (Pillow)
# --------------------------------------------------------------------------


def _rgb(color: str) -> tuple[int, int, int]:
    return (int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16))


def render_png(machine: Machine, own: Ownership, *, scale: float = 1.5) -> bytes:
    """The same picture as :func:`render_svg`, drawn with Pillow (its own
    bundled font: no system fonts or libraries needed), as PNG bytes."""
    from PIL import Image, ImageDraw, ImageFont

    pic = build_picture(machine, own)
    k = scale
    img = Image.new("RGB", (math.ceil(pic.width * k), math.ceil(pic.height * k)), "#ffffff")
    draw = ImageDraw.Draw(img)
    fonts: dict[int, ImageFont.FreeTypeFont | ImageFont.ImageFont] = {}

    def font(size: float) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
        px = round(size * k)
        if px not in fonts:
            fonts[px] = ImageFont.load_default(size=px)
        return fonts[px]

    def rect(x: float, y: float, w: float, h: float, fill: str) -> None:
        draw.rectangle(
            (round(x * k), round(y * k), round((x + w) * k), round((y + h) * k)),
            fill=_rgb(fill), outline=(0, 0, 0), width=max(1, round(k)),
        )

    def text(x: float, y: float, s: str, size: float, ink: str = "#000000",
             anchor: str = "ls") -> None:
        draw.text((x * k, y * k), s, fill=_rgb(ink), font=font(size), anchor=anchor)

    for b in pic.boxes:
        rect(b.x, b.y, b.w, b.h, b.fill)
        if b.kind == "pu":
            ink = _ink(b.fill)
            text(b.x + b.w / 2, b.y + 15, b.lines[0], FONT, ink, "ms")
            text(b.x + b.w / 2, b.y + 30, b.lines[1], FONT - 1, ink, "ms")
            continue
        if b.bar_h:
            rect(b.x, b.y, b.w, b.bar_h, NUMA_BAR)
        for i, line in enumerate(b.lines):
            size = FONT + 2 if b.kind == "machine" and i == 0 else FONT
            text(b.x + PAD, b.y + 13 + i * LINE, line, size)
    tx, ty = pic.legend_title
    text(tx, ty, f"CPU owners, {own.caption()}", FONT)
    sw = pic.swatch
    for item in pic.legend:
        rect(item.x, item.y, sw, sw, item.color)
        text(item.x + sw / 2, item.y + 12, item.key, FONT - 1, _ink(item.color), "ms")
        text(item.x + sw + 8, item.y + 12, item.owner, FONT)
        text(pic.cpus_x, item.y + 12, _cpus_text(item.cpus), FONT)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


# --------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------

TEXT_WIDTH = 100


def _ansi(fill: str) -> Callable[[str], str]:
    r, g, b = _rgb(fill)
    fr, fg, fb = _rgb(_ink(fill))

    def paint(s: str) -> str:
        return f"\x1b[48;2;{r};{g};{b}m\x1b[38;2;{fr};{fg};{fb}m{s}\x1b[0m"

    return paint


def _per_row(n: int, fit: int) -> int:
    """Cores per line: ``fit`` at most, an even split of ``n`` when one
    is close to it (8 cores as 4+4 rather than 5+3)."""
    if n <= fit:
        return n
    for k in range(fit, (fit + 1) // 2 - 1, -1):
        if n % k == 0:
            return k
    return fit


def render_text(
    machine: Machine, own: Ownership, *, color: bool = False, width: int = TEXT_WIDTH
) -> str:
    """An indented tree (Machine > Package > NUMANode > L3 > cores), one
    cell per CPU: its id and its owner's key (``[ 2a  18a]`` is a core of
    two threads owned by ``a``), then the legend. Plain ASCII unless
    ``color`` (a terminal), which adds the owners' colours."""
    tree = _tree(machine)
    idw = len(str(max(machine.topology.cpu_info, default=0)))
    paints = {o.key: _ansi(o.color) for o in own.owners} if color else {}
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)

    def cell(cpu: int) -> str:
        o = own.owner_of(cpu)
        s = f"{cpu:>{idw}}{o.key}"
        return paints[o.key](s) if color else s

    numa_sockets: dict[int, int] = {}
    for numas in tree.values():
        for nid in numas:
            numa_sockets[nid] = numa_sockets.get(nid, 0) + 1
    lines: list[str] = []
    ml = _machine_lines(machine, own)
    lines.append(bold(ml[0]))
    lines.extend("  " + s for s in ml[1:])
    for sid, numas in tree.items():
        lines.append("  " + bold(f"Package {sid}"))
        for nid, caches in numas.items():
            nl = _numa_lines(machine, nid, own, numa_sockets[nid])
            joined = "    " + nl[0] + "".join("  " + d for d in nl[1:])
            if len(joined) <= width:
                lines.append("    " + bold(nl[0]) + "".join("  " + d for d in nl[1:]))
            else:
                lines.append("    " + bold(nl[0]))
                lines.extend("      " + d for d in nl[1:])
            for uid, cores in caches.items():
                lines.append("      " + f"L3 {uid}")
                indent = "        "
                core_w = max(len(str(c)) for c in cores)
                threads = max(len(cpus) for cpus in cores.values())
                item_w = len(f"Core {'0' * core_w} [") + threads * (idw + 2)
                per_row = _per_row(len(cores), max(1, (width - len(indent) + 2) // (item_w + 2)))
                items = [
                    f"Core {core_id:>{core_w}} [" + " ".join(cell(c) for c in cpus) + "]"
                    for core_id, cpus in cores.items()
                ]
                for i in range(0, len(items), per_row):
                    lines.append(indent + "  ".join(items[i : i + per_row]))
    lines.append("")
    lines.append(bold(f"CPU owners, {own.caption()}"))
    name_w = min(max((len(o.name) for o in own.owners), default=0), 48)
    for o in own.owners:
        key = paints[o.key](f" {o.key} ") if color else f" {o.key} "
        lines.append(f"  {key} {o.name:<{name_w}}  {_cpus_text(o.cpus)}")
    return "\n".join(lines) + "\n"


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
