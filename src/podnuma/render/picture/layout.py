"""The drawing model: boxes, their sizes and places, and the legend
(:func:`build_picture`), from which the SVG and PNG renderers draw."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.render.picture.machine_tree import _machine_lines, _numa_lines, _numa_sockets, _tree
from podnuma.render.picture.ownership import Owner, Ownership

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
    swatch: float = 16.0  # the legend swatches' height
    swatch_w: float = 16.0  # and width: wider for keys of several letters


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
    numa_sockets = _numa_sockets(tree)
    root = _Node("machine", _machine_lines(machine, own))
    # Every PU as wide as the widest label (bold text: a wider estimate).
    widest = max(machine.topology.cpu_info, default=0)
    pu_w = _text_w(f"PU {widest}") * 1.15 + 8
    pu_w = max(pu_w, max((_text_w(o.key, FONT - 1) for o in own.owners), default=0) + 8)  # and its key
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
    # the swatch holds the key: as wide as the longest, with a margin
    swatch_w = max(16.0, math.ceil(max((_text_w(o.key, FONT - 1) for o in own.owners), default=0) + 6))
    cpus_x = MARGIN + swatch_w + 8 + max((_text_w(o.name) for o in own.owners), default=0) + 16
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
        swatch_w=swatch_w,
    )


def _ink(fill: str) -> str:
    """Black or white text, whichever reads better on ``fill``."""
    r, g, b = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 110 else "#ffffff"


def _cpus_text(cpus: CPUSet) -> str:
    n = cpus.size()
    return f"CPUs {cpus} ({n} CPU{'s' if n != 1 else ''})" if n != 1 else f"CPU {cpus}"
