"""The picture as text for a terminal (:func:`render_text`), in colour when
asked."""

from __future__ import annotations

from collections.abc import Callable

from podnuma.machine.topology import Machine
from podnuma.render.picture.layout import _cpus_text, _ink
from podnuma.render.picture.machine_tree import _machine_lines, _numa_lines, _numa_sockets, _tree
from podnuma.render.picture.ownership import Ownership
from podnuma.render.picture.png import _rgb

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

    numa_sockets = _numa_sockets(tree)
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
