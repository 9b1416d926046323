"""``podnuma state inspect`` as text: the files, each pod and container with
its CPUs, NUMA nodes and memory blocks, the memory manager's per-NUMA
tables, the devices when the device manager's checkpoint is there, then
the inconsistencies (or a line saying there are none)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from podnuma.analysis.state import StateReport
from podnuma.cm.memorymanager.state import Block
from podnuma.fieldkit import inert
from podnuma.units import format_bytes

__all__ = [
    "HEADER_LINES_RULE",
    "LEFT_OUT",
    "STATE_COLOURS",
    "fitted_table",
    "output_width",
    "render_state_text",
    "shown",
    "wrapped",
]

#: a :func:`fitted_table`'s header wrapped on more than one line: the lines
#: above its last (bold too, as that one is)
HEADER_LINES_RULE = (r"(?m)^[^\S\n]*+\S.*$(?=(?:\n[^\S\n]*+\S.*){1,3}\n─)", "bold")

#: the colours of :func:`render_state_text` on a terminal
#: (:func:`~podnuma.render.colour.painted`): the headers, and the
#: inconsistencies (none: green); a wrapped line's continuation (indented
#: 4) coloured as its first
STATE_COLOURS: tuple[tuple[str, str], ...] = (
    (r"(?m)^[^\S\n]*+\S.*$(?=\n─)", "bold"),  # (a table's header: the line above its rule)
    HEADER_LINES_RULE,
    (r"(?m)^─[─ ]*$", "dim"),
    (r"(?m)^kubelet state in .*(?:\n {4}.*)*", "bold"),
    (r"(?m)^no\s+inconsistencies$", "green"),
    (r"(?m)^[0-9]+\s+inconsistenc(y|ies):$", "bold red"),
    (r"(?m)^  \[[^\]\n]+\] .*(?:\n {4}.*)*", "yellow"),
)

#: the note under a :func:`fitted_table` whose columns did not all fit (the
#: words of ``fleet analyze``'s node table)
LEFT_OUT = "(left out to fit {width} columns: {columns}; -o json has them)"

#: a cell drawn whole when it can (an outcome: ``✗ rejected``)
_WHOLE = re.compile(r"[\s\S]+")


def shown(text: object) -> str:
    """A text from a file (a pod's UID, a container's name, a directory) as
    the tables and lines show it: its control characters and line breaks
    escaped (:func:`~podnuma.fieldkit.inert`), a tab too (``\\t``), so each
    character takes the cells it is measured at."""
    return inert(str(text)).replace("\t", "\\t")


def _bytes(value: int) -> str:
    return format_bytes(value, largest="Gi")


def _blocks(blocks: tuple[Block, ...]) -> str:
    if not blocks:
        return "-"
    return ", ".join(
        f"{shown(b.type)} {_bytes(b.size)} @{','.join(map(str, b.numa_affinity))}" for b in blocks
    )


def _devices(devices: Mapping[str, tuple[str, ...]]) -> str:
    if not devices:
        return "-"
    return ", ".join(f"{shown(r)} {shown(','.join(ids))}" for r, ids in devices.items())


def output_width(width: int | None = None) -> int:
    """``width``, or the width of standard output as the other tables get
    it (:func:`~podnuma.render.table.make_console`): the terminal's
    (``COLUMNS`` first), else ``COLUMNS``, else 120 columns."""
    if width is not None:
        return width
    from podnuma.render.table import make_console

    return make_console().width


def wrapped(text: str, width: int, hang: int = 0) -> list[str]:
    """A line of prose wrapped at ``width`` (:func:`~podnuma.render.wrap.paragraph`),
    its continuation lines indented by ``hang``; what it quotes from files
    escaped (:func:`shown`)."""
    from podnuma.render.wrap import paragraph

    return paragraph(shown(text), width, hang=hang)


def fitted_table(
    rows: Sequence[Sequence[str]],
    width: int,
    *,
    drop: Sequence[str] = (),
    cpus: Collection[str] = (),
    whole: Collection[str] = (),
) -> list[str]:
    """Rows of plain text (the first the header) as aligned columns, a
    rule under the header, fitted to ``width`` terminal cells as the other tables
    are: each cell wrapped where a reader expects it (a CPU list, the
    columns named in ``cpus``, after its commas; the others at words,
    :func:`~podnuma.render.wrap.words`; a header at its spaces only; those
    in ``whole`` not at all), the columns named in ``drop`` left out in
    that order while the table cannot fit without cutting a word, and a
    note saying which (:data:`LEFT_OUT`). Only when the columns left cannot
    fit either is a piece cut, each line it is cut at marked
    (:data:`~podnuma.render.wrap.CUT_MARK`); a column is never narrower
    than its widest character and the mark, the columns at the right left
    out (and named) while those cannot fit. Every line is at most
    ``width`` cells wide, except where no layout can be (the first column
    alone wider than ``width``). The cells' control characters are
    escaped (:func:`shown`; a cell's lines stay lines)."""
    from rich.cells import cell_len
    from rich.text import Text

    from podnuma.render.wrap import Breakable, cpu_list, narrowest_cut, spread_width, words

    rows = [["\n".join(shown(line) for line in text.split("\n")) for text in r] for r in rows]
    head = list(rows[0])

    def cell(col: str, text: str) -> Breakable:
        if col in cpus:
            return cpu_list(text)
        if col in whole:
            return Breakable([Text(line) for line in text.split("\n")], _WHOLE)
        return words(text)

    header = [words(h) for h in head]
    body = [[cell(col, text) for col, text in zip(head, r, strict=True)] for r in rows[1:]]
    lo = [
        max([max((cell_len(w) for w in h.split()), default=0), *(r[i].narrowest() for r in body)])
        for i, h in enumerate(head)
    ]
    # (a column's widest cell line, and its widest line with its header)
    whole_cells = [
        max([lo[i], *(cell_len(line) for r in body for line in r[i].plain.split("\n"))]) for i in range(len(head))
    ]
    hi = [max(whole_cells[i], *(cell_len(line) for line in head[i].split("\n"))) for i in range(len(head))]

    def needed(cols: list[int], spans: list[int]) -> int:
        return sum(spans[i] for i in cols) + 2 * (len(cols) - 1)

    # (the narrowest a column can be cut to: its widest character and the mark)
    floor = [
        min(lo[i], narrowest_cut("".join([head[i], *(r[i].plain for r in body)]).replace("\n", "")))
        for i in range(len(head))
    ]
    left_out: list[str] = []
    kept = list(range(len(head)))
    for col in (c for c in drop if c in head):
        if needed(kept, lo) <= width:
            break
        left_out.append(col)
        kept = [i for i in kept if head[i] not in left_out]
    while len(kept) > 1 and needed(kept, floor) > width:  # (not even cut: the last ones left out)
        left_out.append(head[kept[-1]])
        kept = kept[:-1]
    # the room shared as explain's containers table shares it, the cells
    # made whole before the headers (a header wraps at its spaces first)
    if needed(kept, hi) <= width:
        widths = [hi[i] for i in kept]
    elif needed(kept, whole_cells) <= width:
        widths = spread_width([whole_cells[i] for i in kept], [hi[i] for i in kept], width - needed(kept, whole_cells))
    elif needed(kept, lo) <= width:
        widths = spread_width([lo[i] for i in kept], [whole_cells[i] for i in kept], width - needed(kept, lo))
    else:  # (nothing left to leave out: the widest columns narrowed, their pieces cut and marked)
        widths = [lo[i] for i in kept]
        least = [floor[i] for i in kept]
        while sum(widths) + 2 * (len(widths) - 1) > width and any(w > f for w, f in zip(widths, least, strict=True)):
            widest = max((k for k in range(len(widths)) if widths[k] > least[k]), key=lambda k: widths[k])
            widths[widest] -= 1

    def draw(cells: list[Breakable]) -> list[str]:
        parts = [c.marked_lines(w) for c, w in zip(cells, widths, strict=True)]
        height = max(len(p) for p in parts)
        return [
            "  ".join(
                (p[k] if k < len(p) else "") + " " * (w - cell_len(p[k] if k < len(p) else ""))
                for p, w in zip(parts, widths, strict=True)
            ).rstrip()
            for k in range(height)
        ]

    out = draw([header[i] for i in kept])
    out.append("  ".join("─" * w for w in widths))
    for r in body:
        out += draw([r[i] for i in kept])
    if left_out:
        out += wrapped(LEFT_OUT.format(width=width, columns=", ".join(left_out)), width, 1)
    return out


def render_state_text(report: StateReport, *, width: int | None = None) -> str:
    """The report as text ``width`` terminal cells wide (default: standard
    output's, :func:`output_width`): every line fits it, the tables'
    optional columns left out (and named) when they cannot."""
    width = output_width(width)
    files = report.files
    # (each line wrapped, its continuation under its value: the title's 4 in)
    head = [(f"kubelet state in {files.directory}", 4)]
    if files.cpu is not None:
        head.append((
            f"  cpu_manager_state     format v{files.cpu_version}, policy {files.cpu.policy_name!r}, "
            f"default CPU set {files.cpu.default_cpuset or '(empty)'}", 24,
        ))  # fmt: skip
    else:
        head.append(("  cpu_manager_state     (none)", 24))
    if files.memory is not None:
        head.append(
            (f"  memory_manager_state  format v{files.memory_version}, policy {files.memory.policy_name!r}", 24)
        )
    else:
        head.append(("  memory_manager_state  (none)", 24))
    devices = files.devices
    if devices is not None:
        registered = ", ".join(f"{r} ({len(ids)})" for r, ids in sorted(devices.registered.items()))
        head.append((
            "  kubelet_internal_checkpoint  "
            + (f"unreadable (the kubelet ignores it): {devices.error}" if devices.error is not None
               else f"registered {registered or '(none)'}"), 31,
        ))  # fmt: skip
    lines = [line for text, hang in head for line in wrapped(text, width, hang)]
    lines.append("")
    with_devices = devices is not None and devices.error is None
    rows = [["pod", "container", "CPUs", "NUMA", "memory", *(["devices"] if with_devices else [])]]
    for p in report.pods:
        label = shown(p.ref if p.ref is not None else p.uid)
        first = True
        if p.cpus is not None or p.memory:
            numa = sorted({n for b in p.memory for n in b.numa_affinity})
            rows.append([label, "(pod budget)", str(p.cpus) if p.cpus is not None else "-",
                         ",".join(map(str, numa)) or "-", _blocks(p.memory),
                         *(["-"] if with_devices else [])])  # fmt: skip
            first = False
        for c in p.containers:
            rows.append([
                label if first else "",
                shown(c.name),
                str(c.cpus) if c.cpus is not None else "-",
                ",".join(map(str, c.numa_nodes)) or "-",
                _blocks(c.memory),
                *([_devices(c.devices)] if with_devices else []),
            ])  # fmt: skip
            first = False
        if p.ref is not None:
            rows.append(["  " + shown(p.uid), "", "", "", "", *([""] if with_devices else [])])
    if len(rows) > 1:
        lines += fitted_table(rows, width, drop=("devices", "memory"), cpus=("CPUs", "NUMA"))
    else:
        lines += wrapped("no pod holds an assignment", width)
    if files.memory is not None and files.memory.machine_state:
        lines.append("")
        mrows = [["NUMA", "type", "total", "systemReserved", "allocatable", "reserved", "free", "assignments"]]
        for nid, st in sorted(files.memory.machine_state.items()):
            for name, t in sorted(st.memory_map.items()):
                mrows.append([
                    str(nid), name, _bytes(t.total), _bytes(t.system_reserved), _bytes(t.allocatable),
                    _bytes(t.reserved), _bytes(t.free), str(st.number_of_assignments),
                ])  # fmt: skip
        lines += fitted_table(
            mrows, width, drop=("assignments", "systemReserved", "allocatable", "total", "reserved"),
            cpus=("NUMA",), whole=mrows[0][1:],  # (a size, a type: never broken)
        )
    lines.append("")
    if report.issues:
        n = len(report.issues)
        lines += wrapped(f"{n} inconsistenc{'y' if n == 1 else 'ies'}:", width)
        lines += [line for i in report.issues for line in wrapped(f"  [{i.kind}] {i.message}", width, 4)]
    else:
        lines += wrapped("no inconsistencies", width)
    return "\n".join(lines) + "\n"
