"""The ``table`` output of ``podnuma simulate``: a run, for people.

A node header, one row per container of each step (pod, QoS, admission,
CPUs, isolation, NUMA nodes, memory blocks, topology hint, shared pool),
rejections called out with the kubelet's reason and message, removal steps,
and a closing per-NUMA-node summary of the CPUs and memory after the last
step. Built with rich; when the output is not a terminal, rich writes plain
text (no colours, no cursor codes) and the width is fixed so the output is
stable.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import IO, Protocol

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from podnuma.cm.results import ContainerResult, MemoryBlock, NodeSummary, StepResult
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.fieldkit import inert
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.render.wrap import Breakable, cpu_list, name
from podnuma.scenario.run import RunResult
from podnuma.units import format_bytes

__all__ = [
    "capture",
    "format_size",
    "make_console",
    "print_renderable",
    "render_run",
    "render_table",
    "table_renderable",
    "to_text",
]

PLAIN_WIDTH = 120
POD_COLUMN_MAX = 32



def plain_width(default: int = PLAIN_WIDTH) -> int:
    """The width of plain (not terminal) output: ``COLUMNS`` when set to a
    number, else ``default`` (``PLAIN_WIDTH``)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return default
    return columns if columns > 0 else default


def make_console(file: IO[str] | None = None, *, width: int | None = None) -> Console:
    """A console writing to ``file`` (default: stdout): styles and colours on
    a terminal or with ``FORCE_COLOR`` (the terminal's width, or
    ``COLUMNS``), plain text otherwise and always with ``NO_COLOR`` (the
    terminal's width, else :func:`plain_width` columns). A ``COLUMNS`` of
    no use (0, negative, not a number) is ignored on a terminal as into a
    pipe: the terminal's own width, else :func:`plain_width`'s."""
    probe = Console(file=file)
    stream = probe.file
    tty = bool(getattr(stream, "isatty", lambda: False)())
    if width is None and tty and "COLUMNS" in os.environ and plain_width(0) == 0:
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            width = 0
        width = width if width > 0 else plain_width()
    if probe.is_terminal and not os.environ.get("NO_COLOR"):
        if width is None and not tty:  # FORCE_COLOR into a pipe: the plain width
            width = plain_width()
        return probe if width is None else Console(file=file, width=width)
    return Console(
        file=file,
        width=width or (probe.width if tty else plain_width()),
        color_system=None,
        force_terminal=False,
        no_color=True,
        emoji=False,
        highlight=False,
        soft_wrap=False,
    )


def format_size(n: int) -> str:
    """Bytes as the largest exact binary unit (``2Gi``, ``1536Mi``)."""
    return format_bytes(n)


def _cpus(s: CPUSet) -> str:
    return str(s) if not s.is_empty() else "-"


def _numa_list(ids: tuple[int, ...]) -> str:
    return ",".join(str(i) for i in ids) if ids else "-"


def _memory(blocks: tuple[MemoryBlock, ...]) -> str:
    if not blocks:
        return "-"
    return "\n".join(
        (f"{b.type} " if b.type != "memory" else "")
        + f"{format_size(b.size)} @{_numa_list(b.numa_nodes)}"
        for b in blocks
    )


def _hint_text(h: TopologyHint | None) -> str:
    """A container's topology hint as the table shows it."""
    if h is None or h.numa_node_affinity is None:
        return "any ✓" if h is not None and h.preferred else "any"
    nodes = _numa_list(tuple(h.numa_node_affinity.bits()))
    return f"{nodes} ✓" if h.preferred else f"{nodes} ✗"


def _hint_style(h: TopologyHint | None) -> str:
    if h is None or h.numa_node_affinity is None:
        return "" if h is not None and h.preferred else "dim"
    return "green" if h.preferred else "yellow"


_ISOLATION_STYLE = {"container": "bold cyan", "pod": "magenta", "host": "dim"}
_ISOLATION_TEXT = {"container": "exclusive", "pod": "pod pool", "host": "shared"}


#: how a cell of the steps table is drawn: a ``Text``, a CPU list
#: (:func:`~podnuma.render.wrap.cpu_list`) or a name (:func:`~podnuma.render.wrap.name`)
CELL_TEXT = "t"
CELL_CPUS = "c"
CELL_NAME = "n"

#: a cell of the steps table as what it is made of: how it is drawn and its
#: text in pieces, each with its style (appended in turn to one ``Text``);
#: plain strings, kept and read back cheaply where the cells themselves
#: would not be (:mod:`podnuma.render.table_stream`)
CellParts = tuple[str, tuple[tuple[str, str], ...]]

_BLANK_PARTS: CellParts = (CELL_TEXT, (("", ""),))


def _parts(kind: str, text: str, style: str = "") -> CellParts:
    return kind, ((text, style),)


def cell_of(parts: CellParts) -> RenderableType:
    """The rich cell ``parts`` describe."""
    kind, pieces = parts
    text = Text(pieces[0][0], style=pieces[0][1])
    for piece, style in pieces[1:]:
        text.append(piece, style=style)
    if kind == CELL_TEXT:
        return text
    return cpu_list(text) if kind == CELL_CPUS else name(text)


#: cells met again and again (a container's isolation, NUMA nodes, memory
#: and hint), by kind and style, then text: the same object each time, so
#: that the spool of :mod:`podnuma.render.table_stream` pickles it once a
#: block and reads it back once (at most :data:`_PARTS_KNOWN` of each)
_known_parts: dict[str, dict[str, CellParts]] = {}
_PARTS_KNOWN = 4096


def _kept_parts(kind: str, text: str, style: str = "") -> CellParts:
    """``_parts(kind, text, style)``, the same object for the same cell
    while it is kept (:data:`_known_parts`)."""
    known = _known_parts.get(kind + style)
    if known is None:
        known = _known_parts[kind + style] = {}
    got = known.get(text)
    if got is None:
        if len(known) >= _PARTS_KNOWN:
            known.clear()
        got = known[text] = (kind, ((text, style),))
    return got


def _container_parts(c: ContainerResult) -> list[CellParts]:
    if c.type == "app" and not c.devices:
        label: CellParts = (CELL_NAME, ((c.name, ""),))
    else:
        pieces = [(c.name, "")]
        if c.type != "app":
            pieces.append((f" ({c.type})", "yellow"))
        for res, ids in sorted(c.devices.items()):
            pieces.append((f"\n{res}: {','.join(ids)}", "blue"))
        label = (CELL_NAME, tuple(pieces))
    isolation = c.isolation
    hint = c.topology_hint
    return [
        label,
        (CELL_CPUS, ((_cpus(c.cpus), "bold" if isolation == "container" else ""),)),
        _kept_parts(CELL_TEXT, _ISOLATION_TEXT.get(isolation, isolation), _ISOLATION_STYLE.get(isolation, "")),
        _kept_parts(CELL_TEXT, _numa_list(c.mems)),
        _kept_parts(CELL_TEXT, _memory(c.memory)),
        _kept_parts(CELL_TEXT, _hint_text(hint), _hint_style(hint)),
    ]


def _container_cells(c: ContainerResult) -> list[RenderableType]:
    return [cell_of(p) for p in _container_parts(c)]


def _pod_parts(step: StepResult) -> CellParts:
    if step.qos_class:
        return CELL_NAME, ((step.pod, "bold"), (f"\n{step.qos_class}", "dim"))
    return CELL_NAME, ((step.pod, "bold"),)


def _result_text(step: StepResult) -> str:
    """A step's outcome as the admission column shows it."""
    if step.op == "removePod":
        return "removed"
    if step.op == "removeContainer":
        return f"removed\n{step.container}"
    if step.op == "reconcile":
        return "reconciled"
    if step.admitted:
        return "✓ admitted"
    return f"✗ rejected [{step.index}]\n{step.reason or ''}"


def _result_parts(step: StepResult) -> CellParts:
    if step.op == "addPod" and step.admitted:
        return _ADMITTED
    if step.op == "removePod":
        return _REMOVED
    text = _result_text(step)
    if step.op != "addPod":
        return _parts(CELL_TEXT, text, "yellow")
    head, _, reason = text.partition("\n")
    return CELL_TEXT, ((head + "\n", "bold red"), (reason, "red"))


_ADMITTED: CellParts = (CELL_TEXT, (("✓ admitted", "green"),))
_REMOVED: CellParts = (CELL_TEXT, (("removed", "yellow"),))
_POD_BUDGET: CellParts = (CELL_TEXT, (("(pod budget)", "italic magenta"),))
_POD_POOL: CellParts = (CELL_TEXT, (("pod", "magenta"),))
_SHARED_POOL: CellParts = (CELL_TEXT, (("(shared pool)", "dim italic"),))


class _RunInfo(Protocol):
    """What the tables show of a run besides its steps (a :class:`RunResult`
    has it; so has a run whose steps are written as they are played:
    :mod:`podnuma.render.table_stream`)."""

    @property
    def scenario(self) -> str: ...

    @property
    def machine(self) -> Machine: ...

    @property
    def node(self) -> NodeSummary: ...


#: the columns of the steps table; those marked optional are left out, in
#: this order and with a note saying so, when the table does not fit the
#: width (``-o wide`` keeps them all)
_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("#", False), ("pod", False), ("admission", False), ("container", False), ("CPUs", False),
    ("isolation", True), ("mems", True), ("memory", True), ("hint", True),
)
_DROP_ORDER = ("hint", "mems", "isolation", "memory")


def _shared_pool(step: StepResult, result: _RunInfo) -> CPUSet:
    """The CPUs of the shared pool after ``step``: the CPU manager's default
    set, or every CPU when that is empty (policy ``none`` keeps no default
    set: every container runs on every CPU). The static policy's default set
    always holds the reserved CPUs, so it is never empty."""
    default = step.default_cpuset
    return default if not default.is_empty() else result.machine.topology.cpus()


#: a row of the steps table: a cell per column of :data:`_COLUMNS`, and
#: whether a step ends with it (a section: a blank line after it)
_Row = tuple[list[RenderableType], bool]
#: a row of the steps table as its cells' parts (:data:`CellParts`)
PartsRow = tuple[tuple[CellParts, ...], bool]


def step_parts(step: StepResult, shared: CPUSet) -> list[PartsRow]:
    """The rows of ``step`` in the steps table, as their cells' parts
    (``shared``: the CPUs of the shared pool after it, :func:`_shared_pool`);
    the last one ends the step."""
    rows: list[PartsRow] = []
    head: tuple[CellParts, ...] = ((CELL_TEXT, ((str(step.index), ""),)), _pod_parts(step),
                                   _result_parts(step))
    blank = (_BLANK_PARTS, _BLANK_PARTS, _BLANK_PARTS)
    if step.pod_allocation is not None:
        alloc = step.pod_allocation
        rows.append(((
            *head,
            _POD_BUDGET,
            (CELL_CPUS, ((_cpus(alloc.cpus), "bold"),)),
            _POD_POOL,
            _kept_parts(CELL_TEXT, _numa_list(tuple(sorted({i for b in alloc.memory for i in b.numa_nodes})))),
            _kept_parts(CELL_TEXT, _memory(alloc.memory)),
            _BLANK_PARTS,
        ), False))
        head = blank
    for c in step.containers:
        rows.append(((*head, *_container_parts(c)), False))
        head = blank
    rows.append(((
        *head,
        _SHARED_POOL,
        (CELL_CPUS, ((_cpus(shared), "dim"),)),
        _BLANK_PARTS, _BLANK_PARTS, _BLANK_PARTS, _BLANK_PARTS,
    ), True))
    return rows


def _step_rows(result: RunResult) -> list[_Row]:
    """The rows of the steps table, every column's cell in each."""
    rows: list[_Row] = []
    for step in result.steps:
        rows.extend(([cell_of(p) for p in cells], end)
                    for cells, end in step_parts(step, _shared_pool(step, result)))
    if rows:  # (the last step's: no blank line after the table)
        rows[-1] = (rows[-1][0], False)
    return rows


def _steps_table(rows: list[_Row], hidden: frozenset[str] = frozenset()) -> Table:
    """The steps table of ``rows`` without the ``hidden`` columns."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    shown = [i for i, (c, _) in enumerate(_COLUMNS) if c not in hidden]
    for i in shown:
        column = _COLUMNS[i][0]
        if column == "#":
            table.add_column("#", justify="right", no_wrap=True)
        elif column == "pod":
            # Pod names run to 253 characters (namespace 63 more): wrap them
            # at word boundaries rather than let them push every other
            # column out of the output.
            table.add_column("pod", max_width=POD_COLUMN_MAX)
        elif column in ("admission", "isolation", "mems", "hint"):
            table.add_column(column, no_wrap=True)
        else:
            table.add_column(column)
    for cells, end in rows:
        table.add_row(*(cells[i] for i in shown), end_section=end)
    return table


def _extremes(rows: list[_Row]) -> list[_Row]:
    """The rows that hold, in some column, the cell that needs the most
    width at the least (its longest word or unbreakable piece) or at the
    most (its longest line): rich sizes a column by those two maxima over
    its cells (each clamped to the width there is, which does not change
    which cell holds them), so the table of these rows (and the same
    headers) measures and lays its columns out as the whole table does. A
    cell of another kind than those of :func:`_step_rows`: every row."""
    probe = Console(width=1 << 16, file=io.StringIO())
    wide = probe.options
    best: dict[int, tuple[int, int]] = {}  # (column, which) -> (width, row)
    for r, (cells, _) in enumerate(rows):
        for c, cell in enumerate(cells):
            if not isinstance(cell, Text | Breakable):
                return rows
            low, high = cell.__rich_measure__(probe, wide)
            for which, value in ((0, low), (1, high)):
                key = 2 * c + which
                if value > best.get(key, (-1, -1))[0]:
                    best[key] = (value, r)
    keep = sorted({r for _, r in best.values()})
    return [(rows[r][0], False) for r in keep]


class _StepsTable:
    """The steps table, measured and laid out on its widest rows
    (:func:`_extremes`) and drawn whole with the column widths they give:
    rich measures every cell of a table once to size it and again to draw
    it, which for a long run is most of the table output's time. The
    widths are those rich finds for the whole table (the same rules on the
    same two maxima per column); where rich would find a width of zero for
    a column (or less than the padding it counts for it), or a table wider
    than the room it has, the whole table is drawn the usual way."""

    def __init__(self, rows: list[_Row], widest: list[_Row], hidden: frozenset[str]) -> None:
        self.rows = rows
        self.hidden = hidden
        self.sizing = _steps_table(widest, hidden)

    @property
    def table(self) -> Table:
        """The whole table (made when drawn: only the last of the tables
        :func:`_fitting_steps_table` tries is)."""
        return _steps_table(self.rows, self.hidden)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.sizing)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.table
        fixed = _fixed_widths(self.sizing, console, options)
        if fixed is not None:
            widths, pads = fixed
            text = _plain_text(table, widths, console, options)
            if text is not None:
                # a segment a line, as rich's own table: one for the whole
                # text costs rich a pass over the rest of it at each line
                new_line = Segment.line()
                for line in text.splitlines():
                    yield Segment(line)
                    yield new_line
                return
            for column, w, p in zip(table.columns, widths, pads, strict=True):
                column.width = w - p
        yield table


def _fixed_widths(sizing: Table, console: Console,
                  options: ConsoleOptions) -> tuple[list[int], list[int]] | None:
    """The column widths (and each column's padding) rich gives the steps
    table of :class:`_StepsTable` (laid out on its widest rows: ``sizing``)
    in ``options``, when they can be fixed for the whole table: ``None``
    where rich would find a width of zero for a column (or less than its
    padding), a table wider than the room it has, or where this rich has
    not the methods used (the whole table is then drawn the usual way)."""
    try:
        room = options.max_width - sizing._extra_width
        widths = sizing._calculate_column_widths(console, options.update_width(room))
        pads = [sizing._get_padding_width(i) for i in range(len(sizing.columns))]
    except AttributeError:  # (another rich)
        return None
    if sum(widths) <= room and all(w >= max(1, p) for w, p in zip(widths, pads, strict=True)):
        return widths, pads
    return None


def _plain_lines(cell: RenderableType, width: int) -> list[str] | None:
    """A cell's lines as rich draws them in a column ``width`` wide, when
    it is a breakable one (:meth:`~podnuma.render.wrap.Breakable.plain_lines`)
    or a plain text (its lines as they are: they must fit), ``None`` for a
    cell of another kind."""
    if isinstance(cell, Breakable):
        return cell.plain_lines(width)
    if isinstance(cell, Text) and cell.justify is None and cell.overflow is None:
        return cell.plain.split("\n")
    return None


#: a column of a table written as plain lines: its content width, the
#: spaces after it, and whether its cells are set to the right
_Shape = tuple[int, int, bool]


def _plain_shapes(table: Table, widths: list[int], console: Console,
                  options: ConsoleOptions) -> list[_Shape] | None:
    """The columns of the steps table ``table`` (the whole table, or one of
    its widest rows with the same columns) written as plain lines at
    ``widths`` (see :func:`_plain_text`), or ``None`` where rich must draw
    it: a console with colours, a table or a column set up otherwise than
    the steps table, a header that is not one plain line."""
    if (console.color_system is not None or options.ascii_only or options.legacy_windows
            or table.box is not box.SIMPLE_HEAD or table.show_edge or table.pad_edge
            or not table.collapse_padding or table.padding != (0, 1, 0, 1) or not table.show_header
            or table.show_footer or table.show_lines or table.leading or table.row_styles
            or table.title or table.caption or table.expand):
        return None
    columns = table.columns
    shapes: list[_Shape] = []
    for i, (column, w) in enumerate(zip(columns, widths, strict=True)):
        if column.justify not in ("left", "right") or column.vertical != "top":
            return None
        # each cell's padding as rich gives it (no space to the left of any
        # column, once the padding collapses and the edges have none; one
        # to the right of all but the last), not ``_get_padding_width``'s
        # figure (the same in rich 15; rich 13 leaves the edges out of it)
        right = 0 if i == len(columns) - 1 else 1
        shapes.append((w - right, right, column.justify == "right"))
    if not all(isinstance(column.header, str) and "\n" not in column.header for column in columns):
        return None
    return shapes


def _padded(lines: list[str], shape: _Shape) -> list[str] | None:
    """A cell's lines padded to its column (``shape``), or ``None`` when
    one does not fit it as it is (longer, or not printable characters of
    one column each)."""
    width, pad, right = shape
    out: list[str] = []
    for line in lines:
        if len(line) > width or not line.isprintable() or (
                not line.isascii() and cell_len(line) != len(line)):
            return None
        out.append((line.rstrip().rjust(width) if right else line.ljust(width)) + " " * pad)
    return out


def _joined(cells: list[list[str]], shapes: list[_Shape]) -> list[str]:
    """A row's lines (each ending with a line break) of its cells' padded
    lines (:func:`_padded`), the columns one space apart; a cell with fewer
    lines than the row is padded with blank ones."""
    height = max(len(lines) for lines in cells)
    if height == 1:
        return [" ".join(lines[0] for lines in cells) + "\n"]
    blank = [" " * (width + pad) for width, pad, _ in shapes]
    return [" ".join(lines[i] if i < len(lines) else b for lines, b in zip(cells, blank, strict=True)) + "\n"
            for i in range(height)]


def _plain_row(cells: list[list[str]], shapes: list[_Shape]) -> list[str] | None:
    """A row's lines (each ending with a line break): each cell's lines
    (``cells``, a list a column) padded to its column, the columns one
    space apart; ``None`` when a line does not fit its column as it is
    (longer, or not printable characters of one column each)."""
    padded: list[list[str]] = []
    for lines, shape in zip(cells, shapes, strict=True):
        got = _padded(lines or [""], shape)
        if got is None:
            return None
        padded.append(got)
    return _joined(padded, shapes)


def _plain_head(table: Table, widths: list[int], shapes: list[_Shape]) -> list[str] | None:
    """The header's line and its rule (see :func:`_plain_text`)."""
    head = _plain_row([[str(column.header)] for column in table.columns], shapes)
    if head is None:
        return None
    return [*head, "─" * (sum(widths) + len(widths) - 1) + "\n"]


def _plain_text(table: Table, widths: list[int], console: Console,
                options: ConsoleOptions) -> str | None:
    """The steps table as rich draws it on a console without colours, when
    every line of every cell fits its column (a breakable cell's once
    wrapped at its own breaks; nothing to wrap otherwise, crop or expand:
    printable characters of one column each): each cell's lines padded to
    its column (the ``#`` column's to the right), the
    columns one space apart, the header underlined across the table, a
    blank line after each step; ``None`` otherwise (rich draws it)."""
    shapes = _plain_shapes(table, widths, console, options)
    if shapes is None:
        return None
    out = _plain_head(table, widths, shapes)
    if out is None:
        return None
    separator = " " * (sum(widths) + len(widths) - 1) + "\n"
    cells_by_column = [list(column.cells) for column in table.columns]
    last = len(table.rows) - 1
    for r, row in enumerate(table.rows):
        cells: list[list[str]] = []
        for column_cells, (width, _, _) in zip(cells_by_column, shapes, strict=True):
            lines = _plain_lines(column_cells[r], width)
            if lines is None:
                return None
            cells.append(lines)
        put = _plain_row(cells, shapes)
        if put is None:
            return None
        out.extend(put)
        if row.end_section and r != last:
            out.append(separator)
    return "".join(out)


def _restored_table(result: RunResult) -> Table:
    """The pods running when the node started (restored from the scenario's
    checkpoints): each container's CPUs, isolation, NUMA nodes and memory."""
    table = Table(
        title="running at start (restored state)", title_justify="left", box=box.SIMPLE_HEAD,
        show_edge=False, pad_edge=False, collapse_padding=True,
    )
    table.add_column("pod", max_width=POD_COLUMN_MAX)
    table.add_column("container")
    table.add_column("CPUs")
    table.add_column("isolation", no_wrap=True)
    table.add_column("mems", no_wrap=True)
    table.add_column("memory")
    for rp in result.restored:
        for i, c in enumerate(rp.containers):
            cells = _container_cells(c)[:-1]  # no hint: nothing was admitted
            table.add_row(name(Text(rp.pod, style="bold")) if i == 0 else Text(""), *cells)
        if not rp.containers:
            table.add_row(name(Text(rp.pod, style="bold")), Text("-", style="dim"))
    return table


def _measure(console: Console, renderable: RenderableType) -> Measurement:
    """The width ``renderable`` needs, not clamped to the console's."""
    return Measurement.get(console, console.options.update_width(1 << 16), renderable)


def _fitting_steps_table(
    result: RunResult, console: Console, wide: bool
) -> tuple[_StepsTable, list[str]]:
    """The steps table, with optional columns left out (named in the second
    result) until its narrowest layout fits the console; all with ``wide``."""
    rows = _step_rows(result)
    widest = _extremes(rows)  # (a column left out leaves the others' widest rows as they are)
    hidden = _fitting_columns(widest, console, wide)
    return _StepsTable(rows, widest, frozenset(hidden)), hidden


def _fitting_columns(widest: list[_Row], console: Console, wide: bool) -> list[str]:
    """The optional columns left out (none with ``wide``) so that the
    narrowest layout of the steps table whose widest rows are ``widest``
    (:func:`_extremes`) fits the console."""
    hidden: list[str] = []
    if wide:
        return hidden
    for column in _DROP_ORDER:
        if _measure(console, _steps_table(widest, frozenset(hidden))).minimum <= console.width:
            break
        hidden.append(column)
    return hidden


def _header(result: _RunInfo) -> Text:
    node = result.node
    t = Text()
    t.append("node ", style="dim")
    t.append(inert(node.name), style="bold")
    t.append("   CPUs ", style="dim")
    t.append(f"{_cpus(node.cpus)} ({node.cpus.size()})")
    t.append("   NUMA nodes ", style="dim")
    t.append(_numa_list(node.numa_nodes))
    t.append("   reserved ", style="dim")
    t.append(_cpus(node.reserved_cpus) if not node.reserved_cpus.is_empty() else "none")
    t.append(f"   ({inert(result.scenario)})", style="dim")
    return t


class _Tally:
    """What the text after the steps table needs of a run's steps, taken a
    step at a time (:meth:`add`, in order): the rejected pods (index, pod,
    reason, message), the containers running after the last step and the
    pod-level memory reservation of each pod (by pod uid, as its last step
    reports them), and the last step."""

    def __init__(self) -> None:
        self.rejected: list[tuple[int, str, str | None, str | None]] = []
        self.running: dict[str, tuple[ContainerResult, ...]] = {}
        self.pod_blocks: dict[str, tuple[MemoryBlock, ...]] = {}
        self.last: StepResult | None = None

    @classmethod
    def of(cls, steps: tuple[StepResult, ...]) -> _Tally:
        tally = cls()
        for s in steps:
            tally.add(s)
        return tally

    def add(self, s: StepResult) -> None:
        self.last = s
        uid = s.pod_uid
        if s.op == "addPod":
            if s.admitted:
                self.running[uid] = s.containers
            else:
                self.rejected.append((s.index, s.pod, s.reason, s.message))
        elif s.containers:
            self.running[uid] = s.containers
        else:
            self.running.pop(uid, None)
        alloc = s.pod_allocation
        if alloc is not None and alloc.memory:
            self.pod_blocks[uid] = alloc.memory
        elif s.op != "addPod" or s.admitted:
            self.pod_blocks.pop(uid, None)


def _rejections(tally: _Tally) -> Text | None:
    if not tally.rejected:
        return None
    t = Text()
    for i, (index, pod, reason, message) in enumerate(tally.rejected):
        if i:
            t.append("\n")
        t.append(f"[{index}] ", style="bold red")
        t.append(f"{pod} rejected: ", style="bold")
        t.append(f"{reason}", style="red")
        if message:
            t.append(f": {message}")
    return t


def _numa_summary(result: _RunInfo, tally: _Tally) -> Table | None:
    """The NUMA nodes after the last step (``tally``: of the run's steps)."""
    if tally.last is None:
        return None
    machine = result.machine
    details = machine.topology.details
    shared = _shared_pool(tally.last, result)
    reserved = result.node.reserved_cpus
    # Memory pinned by the memory manager to exactly one NUMA node, per node;
    # blocks spanning several nodes are shown as a group.
    pinned: dict[tuple[int, ...], int] = {}
    pod_blocks = tally.pod_blocks
    for uid, containers in tally.running.items():
        if uid in pod_blocks:
            # a pod-level reservation is charged once, with the pod budget:
            # its containers' blocks are slices of it (the shared ones repeat
            # the same pod shared pool)
            blocks = pod_blocks[uid]
        else:
            blocks = tuple(b for c in containers if c.type != "init" for b in c.memory)
            # (init blocks are reused by the app containers)
        for b in blocks:
            if b.type == "memory":
                pinned[b.numa_nodes] = pinned.get(b.numa_nodes, 0) + b.size

    table = Table(
        title="after the last step", title_justify="left", box=box.SIMPLE_HEAD,
        show_edge=False, pad_edge=False,
    )
    table.add_column("NUMA", justify="right")
    table.add_column("CPUs")
    table.add_column("reserved")
    table.add_column("exclusive / pod pools")
    table.add_column("shared, free")
    table.add_column("memory")
    show_pinned = bool(pinned)
    if show_pinned:
        table.add_column("pinned memory")
    for nid in machine.numa_ids():
        cpus = details.cpus_in_numa_nodes(nid)
        taken = cpus - shared
        free = (shared & cpus) - reserved
        node = machine.numa_node(nid)
        table.add_row(
            str(nid),
            cpu_list(f"{_cpus(cpus)} ({cpus.size()})"),
            cpu_list(_cpus(reserved & cpus)),
            cpu_list(f"{_cpus(taken)} ({taken.size()})", style="bold cyan" if taken.size() else "dim"),
            cpu_list(f"{_cpus(free)} ({free.size()})", style="green"),
            format_size(node.memory),
            *([format_size(pinned.get((nid,), 0))] if show_pinned else []),
        )
    for group, size in sorted(pinned.items()):
        if len(group) > 1:
            table.add_row(_numa_list(group), "", "", "", "", "", format_size(size))
    return table


def table_renderable(
    result: RunResult, *, wide: bool = False, console: Console | None = None
) -> RenderableType:
    """The run as tables for ``console`` (default: stdout's): the optional
    columns that do not fit its width are left out and named in a note,
    unless ``wide``."""
    console = console or make_console()
    parts: list[RenderableType] = [_header(result), Text("")]
    if result.steps:
        table, hidden = _fitting_steps_table(result, console, wide)
        parts.append(table)
        parts += _left_out(hidden, console)
    elif result.restored:
        parts.append(_restored_table(result))
        parts.append(Text("(no steps: the state restored from the starting checkpoints)", style="dim"))
    else:
        parts.append(Text("(no steps)", style="dim"))
    return Group(*parts, *_closing(result, _Tally.of(result.steps)))


def _left_out(hidden: list[str], console: Console) -> list[RenderableType]:
    """The note naming the optional columns left out, if any."""
    if not hidden:
        return []
    return [Text(
        f"(columns {', '.join(hidden)} left out to fit {console.width} columns: -o wide "
        "shows them all)", style="dim",
    )]


def _closing(result: _RunInfo, tally: _Tally) -> list[RenderableType]:
    """What follows the steps: the rejections, then the NUMA nodes after
    the last step."""
    parts: list[RenderableType] = []
    rej = _rejections(tally)
    if rej is not None:
        parts += [Text(""), rej]
    parts.append(Text(""))
    summary = _numa_summary(result, tally)
    if summary is not None:
        parts.append(summary)
    return parts


def print_renderable(console: Console, renderable: RenderableType) -> None:
    """Print on a terminal as is; as plain text without trailing padding."""
    if console.is_terminal:
        console.print(renderable)
        return
    with console.capture() as capture:
        console.print(renderable)
    text = "\n".join(line.rstrip() for line in capture.get().splitlines())
    console.file.write(text + "\n")


def render_table(result: RunResult, console: Console | None = None) -> None:
    """Print the run as tables on ``console`` (default: stdout)."""
    console = console or make_console()
    print_renderable(console, table_renderable(result, console=console))


def to_text(renderable: RenderableType, console: Console | None = None) -> str:
    """``renderable`` as the text :func:`print_renderable` would write on
    ``console`` (default: one for stdout): with colour codes on a terminal,
    plain and without trailing padding otherwise."""
    return capture(lambda c: c.print(renderable), console)


def capture(draw: Callable[[Console], None], console: Console | None = None) -> str:
    """What ``draw`` prints on ``console`` (default: one for stdout), as
    text: with colour codes on a terminal, plain and without trailing
    padding otherwise."""
    console = console or make_console()
    with console.capture() as captured:
        draw(console)
    text = captured.get()
    if console.is_terminal:
        return text
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


def render_run(result: RunResult, *, wide: bool = False, console: Console | None = None) -> str:
    """The run as tables, as text for ``console`` (default: stdout's); with
    ``wide`` every column, however wide the lines get."""
    console = console or make_console()
    table = table_renderable(result, wide=wide, console=console)
    if wide:
        needed = _measure(console, table).maximum
        if needed > console.width:
            console = make_console(console.file, width=needed)
    return to_text(table, console)
