"""The picture as text for a terminal (:func:`render_text`), in colour when
asked.

Each CPU is a cell: its id, right-aligned, and its owner's key right after
it, padded to the longest key (``[ 26b  90ab]``: CPU 26 owned by ``b``,
CPU 90 by ``ab``). Keys are letters or one of ``#``, ``.`` and ``!``, never
digits (:mod:`.ownership`), so a cell reads one way only. Every line fits
in ``width`` columns where it can: the cores of an L3 cache fill as many to
a line as fit, and the other lines (the machine's, the NUMA nodes', the
legend's) wrap at spaces, a word wider than a line at the separators of a
name (``/``, ``-``, ``.``, ``_``), cut only when a piece of it is wider
still. Only a core wider than the whole width, or a width that leaves
less than 8 columns after an indent (a very narrow terminal), goes past it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from podnuma.machine.topology import Machine
from podnuma.render.picture.layout import _cpus_text, _ink
from podnuma.render.picture.machine_tree import _machine_lines, _numa_lines, _numa_sockets, _tree
from podnuma.render.picture.ownership import Ownership
from podnuma.render.picture.png import _rgb

#: the width when none is given (``podnuma topology`` passes the terminal's,
#: or ``COLUMNS``)
TEXT_WIDTH = 100
#: the narrowest room wrapped text is given, however narrow the width
_MIN_ROOM = 8

_WORD = re.compile(r"\S+")
_NAME_PIECE = re.compile(r"[^-/._]*[-/._]|[^-/._]+$")


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


def _pieces(word: str, room: int) -> list[str]:
    """``word`` in pieces of at most ``room`` characters: cut after the
    separators of a name, filled greedily; a piece still wider is cut."""
    out: list[str] = []
    cur = ""
    for piece in _NAME_PIECE.findall(word):
        if cur and len(cur) + len(piece) > room:
            out.append(cur)
            cur = ""
        cur += piece
        while len(cur) > room:
            out.append(cur[:room])
            cur = cur[room:]
    if cur:
        out.append(cur)
    return out


def wrap(text: str, width: int, indent: str = "", hang: str | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` characters: the first starting
    with ``indent``, the others with ``hang`` (default: ``indent``). Lines
    break at spaces (a run of spaces inside a line is kept: the legend's
    columns); a word wider than a whole line breaks as :func:`_pieces`
    does."""
    hang = indent if hang is None else hang
    lines: list[str] = []
    cur = indent
    start = len(indent)  # where the text of the current line starts
    pos = 0
    for m in _WORD.finditer(text):
        gap = text[pos : m.start()]
        pos = m.end()
        word = m.group(0)
        if len(cur) > start and len(cur) + len(gap) + len(word) <= width:
            cur += gap + word
            continue
        if len(cur) > start:
            lines.append(cur)
            cur, start = hang, len(hang)
        room = max(width - start, _MIN_ROOM)
        if len(word) <= room:
            cur += word
            continue
        *full, last = _pieces(word, room)
        for piece in full:
            lines.append(cur + piece)
            cur, start = hang, len(hang)
        cur += last
    if len(cur) > start or not lines:
        lines.append(cur)
    return lines


def render_text(
    machine: Machine, own: Ownership, *, color: bool = False, width: int = TEXT_WIDTH
) -> str:
    """An indented tree (Machine > Package > NUMANode > L3 > cores), one
    cell per CPU: its id and its owner's key (``[ 2a  18a]`` is a core of
    two threads owned by ``a``), then the legend, laid out in ``width``
    columns (see the module's docstring). Plain ASCII unless ``color`` (a
    terminal), which adds the owners' colours."""
    tree = _tree(machine)
    idw = len(str(max(machine.topology.cpu_info, default=0)))
    kw = max((len(o.key) for o in own.owners), default=1)
    paints = {o.key: _ansi(o.color) for o in own.owners} if color else {}
    bold = (lambda s: f"\x1b[1m{s}\x1b[0m") if color else (lambda s: s)

    def cell(cpu: int) -> str:
        o = own.owner_of(cpu)
        s = f"{cpu:>{idw}}{o.key:<{kw}}"
        return paints[o.key](s) if color else s

    lines: list[str] = []

    def add(text: str, indent: str, hang: str, *, strong: bool = False) -> None:
        """``text`` wrapped (its words in bold when ``strong``)."""
        for i, line in enumerate(wrap(text, width, indent, hang)):
            lead = indent if i == 0 else hang
            lines.append(lead + bold(line[len(lead) :]) if strong else line)

    numa_sockets = _numa_sockets(tree)
    ml = _machine_lines(machine, own)
    add(ml[0], "", "  ", strong=True)
    for s in ml[1:]:
        add(s, "  ", "    ")
    for sid, numas in tree.items():
        lines.append("  " + bold(f"Package {sid}"))
        for nid, caches in numas.items():
            nl = _numa_lines(machine, nid, own, numa_sockets[nid])
            joined = "    " + nl[0] + "".join("  " + d for d in nl[1:])
            if len(joined) <= width:
                lines.append("    " + bold(nl[0]) + "".join("  " + d for d in nl[1:]))
            else:
                add(nl[0], "    ", "      ", strong=True)
                for d in nl[1:]:
                    add(d, "      ", "        ")
            for uid, cores in caches.items():
                lines.append("      " + f"L3 {uid}")
                indent = "        "
                core_w = max(len(str(c)) for c in cores)
                threads = max(len(cpus) for cpus in cores.values())
                item_w = len(f"Core {'0' * core_w} [") + threads * (idw + kw + 1)
                per_row = _per_row(len(cores), max(1, (width - len(indent) + 2) // (item_w + 2)))
                items = [
                    f"Core {core_id:>{core_w}} [" + " ".join(cell(c) for c in cpus) + "]"
                    for core_id, cpus in cores.items()
                ]
                for i in range(0, len(items), per_row):
                    lines.append(indent + "  ".join(items[i : i + per_row]))
    lines.append("")
    add(f"CPU owners, {own.caption()}", "", "  ", strong=True)
    hang = " " * (2 + kw + 2 + 1)  # under the owner's name
    # the CPU lists in a column, after names of up to 48 characters and as
    # long as the longest list still fits; a longer name runs on, and a line
    # too long wraps under the name
    cpus_w = max((len(_cpus_text(o.cpus)) for o in own.owners), default=0)
    name_w = min(max((len(o.name) for o in own.owners), default=0), 48,
                 max(0, width - len(hang) - 2 - cpus_w))
    for o in own.owners:
        head = f"  {' ' * (kw + 2)} "
        body = f"{o.name:<{name_w}}  {_cpus_text(o.cpus)}"
        wrapped = wrap(body, width, head, hang)
        key = f" {o.key:<{kw}} "
        lines.append("  " + (paints[o.key](key) if color else key) + wrapped[0][len(head) - 1 :])
        lines.extend(wrapped[1:])
    return "\n".join(lines) + "\n"
