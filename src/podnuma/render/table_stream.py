"""The table output of ``podnuma simulate`` written as the run is played,
on any console (``-o table`` or ``-o wide``, into a file, a pipe or on a
terminal): memory that does not grow with the run's steps.

A speed module beside :mod:`podnuma.render.table`, whose text it writes,
byte for byte. That module holds the whole run and then every row of the
steps table as rich's text objects: about 8 KB a step, 0.8 GB and half a
minute for 100,000 steps. Here each step, as it is played, becomes its rows
of plain strings (:func:`step_rows`: each cell's text as rich's ``Text``
keeps it, its control codes taken out, and its kind: text, CPU list or
name; on a terminal, where the cells keep their styles, each cell's pieces
of text and their styles: :func:`podnuma.render.table.step_parts`),
measured as rich measures those cells (:func:`measure`: the widest word or
unbreakable piece, the widest line). The rows go to a spooled file (in
memory up to a bound, then a temporary file); in memory stay only the rows
that hold some column's widest cell (what rich sizes the table by:
:func:`podnuma.render.table._extremes`) and what the text after the table
needs (the rejections, the pods running after the last step and their
pod-level memory, the last step). Once the run is over, the table is sized
by rich on those rows, with the columns left out that do not fit, as
``table.py`` sizes it. On a console that is not a terminal, when every cell
fits its column as it is, the table is written from the file as the plain
lines rich would draw (:func:`podnuma.render.table._plain_row`). Otherwise
(a terminal, a line to wrap, a character two columns wide) the rows are
read back from the file and drawn a row at a time at the column widths
rich gives the whole table, each distinct cell rendered by rich once,
or made from the lines of its shape (:func:`_through_shape`: its text
with its characters made one, drawn once per shape)
(:meth:`StreamedTable._by_rows`; with a rich without the methods that
uses, rich draws a block of rows at a time). Only where those widths
cannot be fixed (:func:`podnuma.render.table._fixed_widths`) are the rows
all held and drawn at once; a run without steps goes through ``table.py``.
"""

from __future__ import annotations

import functools
import pickle
import re
import struct
from collections.abc import Callable, Iterator
from typing import IO, Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.control import strip_control_codes
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from podnuma.cm.results import NodeSummary, StepResult
from podnuma.inputs.spool import spooled
from podnuma.machine.topology import Machine
from podnuma.render import table as tables
from podnuma.render.wrap import (
    _CPU_BREAK,
    _NAME_BREAK,
    NAME_PIECE_MAX,
    cpu_list,
    name,
    pieces,
    plain_lines,
    text_lines,
)

__all__ = ["StreamedTable", "measure", "step_rows"]

#: a cell: its kind (:data:`TEXT`, :data:`CPUS` or :data:`NAME`) followed by its text
Cell = str
#: a row: its cells, a column each, and whether a step ends with it
Row = tuple[tuple[Cell, ...], bool]

TEXT = tables.CELL_TEXT  # rich's ``Text``: wraps at spaces
CPUS = tables.CELL_CPUS  # :func:`podnuma.render.wrap.cpu_list`
NAME = tables.CELL_NAME  # :func:`podnuma.render.wrap.name`

_BLANK = (TEXT, TEXT, TEXT)
#: a CPU list without spaces, line breaks or empty parts (what the CPU set writes)
_PLAIN_CPUS = re.compile(r"[^\s,]+(?:,[^\s,]+)*")
#: the probe's width in :func:`podnuma.render.table._extremes` (a breakable
#: cell's measure is clamped to it)
_PROBE = 1 << 16
#: rows written to the spool a block at a time
_BLOCK = 2048
#: the spool's bytes held in memory before it moves to a temporary file
_SPOOL = 4 << 20
#: the most cells whose measure, or padded lines, are kept per table or column
_KNOWN = 1 << 14
#: rows drawn by rich at a time, where rich draws the steps table
_CHUNK = 1024


def step_rows(step: StepResult, machine: Machine) -> list[Row]:
    """The rows of ``step`` in the steps table (those of
    :func:`podnuma.render.table._step_rows`, as plain cells); the last one
    ends the step."""
    pod = step.pod + (f"\n{step.qos_class}" if step.qos_class else "")
    head: tuple[Cell, ...] = (TEXT + str(step.index), NAME + strip_control_codes(pod),
                              TEXT + strip_control_codes(tables._result_text(step)))
    rows: list[Row] = []
    alloc = step.pod_allocation
    if alloc is not None:
        mems = tables._numa_list(tuple(sorted({i for b in alloc.memory for i in b.numa_nodes})))
        rows.append(((*head, TEXT + "(pod budget)", CPUS + tables._cpus(alloc.cpus), TEXT + "pod",
                      TEXT + mems, TEXT + tables._memory(alloc.memory), TEXT), False))
        head = _BLANK
    for c in step.containers:
        label = c.name if c.type == "app" else f"{c.name} ({c.type})"
        for res, ids in sorted(c.devices.items()):
            label += f"\n{res}: {','.join(ids)}"
        rows.append(((*head, NAME + strip_control_codes(label), CPUS + tables._cpus(c.cpus),
                      TEXT + strip_control_codes(tables._ISOLATION_TEXT.get(c.isolation, c.isolation)),
                      TEXT + tables._numa_list(c.mems), TEXT + tables._memory(c.memory),
                      TEXT + tables._hint_text(c.topology_hint)), False))
        head = _BLANK
    shared = step.default_cpuset if not step.default_cpuset.is_empty() else machine.topology.cpus()
    rows.append(((*head, TEXT + "(shared pool)", CPUS + tables._cpus(shared), TEXT, TEXT, TEXT, TEXT),
                 True))
    return rows


def plain_cells(cells: tuple[tables.CellParts, ...]) -> tuple[Cell, ...]:
    """The plain cells (:func:`step_rows`' kind of cell) of cells given as
    their parts (:func:`podnuma.render.table.step_parts`): each one's text
    as its ``Text`` keeps it (control codes taken out: rich's are not
    printable, so a printable text has none)."""
    out: list[Cell] = []
    for kind, pieces_ in cells:
        text = pieces_[0][0] if len(pieces_) == 1 else "".join(piece for piece, _ in pieces_)
        out.append(kind + (text if text.isprintable() else strip_control_codes(text)))
    return tuple(out)


def measure(cell: Cell) -> tuple[int, int]:
    """The narrowest and widest a cell can be drawn, as rich measures it
    (``Text.__rich_measure__``; :meth:`podnuma.render.wrap.Breakable.__rich_measure__`
    on the probe of :func:`podnuma.render.table._extremes`)."""
    kind, text = cell[0], cell[1:]
    if kind == CPUS and _PLAIN_CPUS.fullmatch(text):
        # a CPU list as the CPU set writes it: its pieces are its
        # comma-separated parts, each with its comma but the last
        parts = text.split(",")
        return max(len(parts[-1]), max(map(len, parts[:-1]), default=-1) + 1), len(text)
    if kind == TEXT:
        lines = text.splitlines()
        widest = max(cell_len(line) for line in lines) if lines else 0
        words = text.split()
        return (max(cell_len(word) for word in words) if words else widest), widest
    pattern, longest = (_CPU_BREAK, 1 << 16) if kind == CPUS else (_NAME_BREAK, NAME_PIECE_MAX)
    lines = text_lines(text)
    piece = min(max((len(p.rstrip()) for line in lines for p in pieces(line, pattern)), default=0), longest)
    widest = max((len(line) for line in lines), default=0)
    return min(piece, _PROBE), min(widest, _PROBE)


def rich_cell(cell: Cell) -> RenderableType:
    """The cell as the rich object :mod:`podnuma.render.table` makes of it,
    without its styles (a console without colours draws none)."""
    kind, text = cell[0], cell[1:]
    if kind == TEXT:
        return Text(text)
    return cpu_list(text) if kind == CPUS else name(text)


def cell_lines(cell: Cell, width: int) -> list[str]:
    """The cell's lines drawn ``width`` columns wide, as plain text
    (:func:`podnuma.render.table._plain_lines`)."""
    kind, text = cell[0], cell[1:]
    if kind == TEXT:
        return text.split("\n")
    return plain_lines(text_lines(text), _CPU_BREAK if kind == CPUS else _NAME_BREAK, width)


class _Widest:
    """The rows holding, in some column, the cell that needs the most width
    at the least or at the most (the first such row: rich's order of
    :func:`podnuma.render.table._extremes`)."""

    def __init__(self) -> None:
        self.best: dict[int, tuple[int, int]] = {}  # 2 * column + (0: least, 1: most) -> (width, row)
        self.kept: dict[int, tuple[Cell, ...]] = {}
        self.count = 0
        self.known: dict[Cell, tuple[int, int]] = {}

    def add(self, cells: tuple[Cell, ...]) -> None:
        r = self.count
        self.count += 1
        best = self.best
        known = self.known
        taken = False
        for c, cell in enumerate(cells):
            # an ASCII cell no longer than its column's two widest so far
            # can hold neither (rich counts an ASCII character one column at
            # most; a name's pieces count at most NAME_PIECE_MAX)
            low_best, high_best = best.get(2 * c), best.get(2 * c + 1)
            n = len(cell) - 1
            if (low_best is not None and high_best is not None and n <= high_best[0]
                    and (n if cell[0] != NAME else min(n, NAME_PIECE_MAX)) <= low_best[0]
                    and cell.isascii()):
                continue
            got = known.get(cell)
            if got is None:
                got = measure(cell)
                if len(known) >= _KNOWN:
                    known.clear()
                known[cell] = got
            low, high = got
            for key, value in ((2 * c, low), (2 * c + 1, high)):
                prev = best.get(key)
                if prev is None or value > prev[0]:
                    best[key] = (value, r)
                    taken = True
        if taken:
            self.kept[r] = cells
            if len(self.kept) > 4 * len(best):
                held = {r for _, r in best.values()}
                self.kept = {k: v for k, v in self.kept.items() if k in held}

    def add_parts(self, cells: tuple[tables.CellParts, ...]) -> None:
        """:meth:`add` of the plain cells of ``cells`` (:func:`plain_cells`),
        made only where a cell might hold a column's widest: a row whose
        every cell, as its pieces' text, is ASCII and no longer than its
        column's two widest so far is only counted (its plain cells, that
        text without control codes, are no longer)."""
        best = self.best
        for c, (kind, pieces_) in enumerate(cells):
            text = pieces_[0][0] if len(pieces_) == 1 else "".join(piece for piece, _ in pieces_)
            low_best, high_best = best.get(2 * c), best.get(2 * c + 1)
            n = len(text)
            if (low_best is None or high_best is None or n > high_best[0]
                    or (n if kind != NAME else min(n, NAME_PIECE_MAX)) > low_best[0]
                    or not text.isascii()):
                self.add(plain_cells(cells))
                return
        self.count += 1

    def rows(self) -> list[tables._Row]:
        return [([rich_cell(cell) for cell in self.kept[r]], False)
                for r in sorted({r for _, r in self.best.values()})]


class _Head:
    """What the tables show of the run besides its steps."""

    def __init__(self, scenario: str, machine: Machine, node: NodeSummary) -> None:
        self.scenario = scenario
        self.machine = machine
        self.node = node


class StreamedTable:
    """The table output of a run whose steps come one at a time (:meth:`add`);
    :meth:`write` then writes the text :func:`podnuma.render.table.render_run`
    gives for the whole run, on any console. ``styled``: the console is a
    terminal (:func:`styled_for`), where the cells keep their styles (the
    rows are kept as their cells' parts, :func:`podnuma.render.table.step_parts`)
    and rich draws them."""

    def __init__(self, scenario: str, machine: Machine, node: NodeSummary, *,
                 styled: bool = False) -> None:
        self.head = _Head(scenario, machine, node)
        self.styled = styled
        self.widest = _Widest()
        self.tally = tables._Tally()
        self.steps = 0
        self._rows: IO[bytes] = spooled(_SPOOL, "w+b")
        self._block: list[Any] = []

    @staticmethod
    def styled_for(console: Console) -> bool:
        """Whether the rows for ``console`` keep their styles: a terminal
        (with colours, or without, such as ``TERM=dumb``: rich's padding is
        printed as it is there, never as plain lines)."""
        return console.is_terminal

    def close(self) -> None:
        self._rows.close()

    def __enter__(self) -> StreamedTable:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def add(self, step: StepResult) -> None:
        """The next step of the run."""
        self.steps += 1
        self.tally.add(step)
        block = self._block
        widest = self.widest
        if self.styled:
            for parts in tables.step_parts(step, tables._shared_pool(step, self.head)):
                widest.add_parts(parts[0])
                block.append(parts)
        else:
            for row in step_rows(step, self.head.machine):
                widest.add(row[0])
                block.append(row)
        if len(block) >= _BLOCK:
            self._flush()

    def _flush(self) -> None:
        if self._block:
            data = pickle.dumps(self._block, protocol=pickle.HIGHEST_PROTOCOL)
            self._rows.write(struct.pack("<Q", len(data)))
            self._rows.write(data)
            self._block = []

    def _read(self) -> Iterator[Any]:
        """The rows written, in order, read back from the spool (plain rows,
        or parts rows when :attr:`styled`)."""
        self._flush()
        spool = self._rows
        spool.seek(0)
        while header := spool.read(8):
            (size,) = struct.unpack("<Q", header)
            yield from pickle.loads(spool.read(size))

    def _cell(self, cell: Any) -> RenderableType:
        """A cell as rich's object (with its styles when :attr:`styled`)."""
        return tables.cell_of(cell) if self.styled else rich_cell(cell)

    def _cells(self, cells: Any) -> list[RenderableType]:
        """A row's rich cells."""
        return [self._cell(cell) for cell in cells]

    def write(self, out: IO[str], console: Console, *, wide: bool = False,
              restored: Callable[[], Any] | None = None) -> None:
        """Write the run's table output on ``out`` as ``console`` shows it
        (on a console that is not a terminal, plain text, each line's
        trailing spaces taken off); ``wide``: every column, the console
        widened as far as the lines need. A run without steps is written by
        :func:`podnuma.render.table.render_run` of ``restored()`` (the whole
        run: there is nothing to hold). The steps table is written as plain
        lines where every cell fits its column as it is (a console that is
        not a terminal), else a row at a time (or rich a block of rows at a
        time) at the column widths of the whole table; only where those
        widths cannot be fixed are all its rows held and drawn at once."""
        if not self.steps:
            if restored is None:
                raise ValueError("a run without steps needs its restored state")
            out.write(tables.render_run(restored(), wide=wide, console=console))
            return
        widest = self.widest.rows()
        hidden = tables._fitting_columns(widest, console, wide)
        sizing = tables._steps_table(widest, frozenset(hidden))
        before: list[RenderableType] = [tables._header(self.head), Text("")]
        after = [*tables._left_out(hidden, console), *tables._closing(self.head, self.tally)]
        if wide:
            needed = tables._measure(console, Group(*before, sizing, *after)).maximum
            if needed > console.width:
                console = tables.make_console(console.file, width=needed)
        out.write(tables.capture(lambda c: c.print(Group(*before)), console))
        # the column widths (and pads) of the whole table, found once; the
        # rows drawn apart at them where they join as the whole table's do
        fixed = tables._fixed_widths(sizing, console, console.options)
        apart = fixed if _blocks_join(sizing) else None
        if not (not self.styled and self._plain(out, console, sizing, hidden, fixed)
                or self._by_rows(out, console, hidden, apart)
                or self._by_blocks(out, console, hidden, apart)):
            rows = [(self._cells(cells), end) for cells, end in self._read()]
            rows[-1] = (rows[-1][0], False)
            steps = tables._StepsTable(rows, widest, frozenset(hidden))
            out.write(tables.capture(lambda c: c.print(steps), console))
        out.write(tables.capture(lambda c: c.print(Group(*after)), console))

    def _by_rows(self, out: IO[str], console: Console, hidden: list[str],
                 fixed: tuple[list[int], list[int]] | None) -> bool:
        """The steps table drawn a row at a time as rich draws each row of
        the whole table (``Table._render`` at the fixed widths of
        :func:`podnuma.render.table._fixed_widths`): each cell rendered by
        rich with its column's padding and options (``Console.render_lines``),
        made text by the console (``Console._render_buffer``: each segment's
        styles), once per distinct cell and column (cells come again and
        again: blank ones, the same NUMA nodes, hints, CPU lists), and a
        cell of a kind rich draws by its shape from its shape's lines
        (:func:`_through_shape`: a step's number, a pod's name); the
        cells' lines one space apart (the box's divider), a cell with fewer
        lines than its row padded with blank ones; the header and the blank
        line between steps drawn by rich. ``False`` (nothing written)
        without ``fixed`` widths (and pads: see :meth:`write`), or where
        this rich has not the methods used (then :meth:`_by_blocks`)."""
        if fixed is None:
            return False
        widths, pads = fixed
        probe = _at_widths([(_blank_row(), False)], hidden, fixed)

        def draw(pads: tuple[int, int], options: Any, style: Any, cell: Any) -> list[str]:
            rendered = console.render_lines(Padding(self._cell(cell), (0, pads[0], 0, pads[1])),
                                            options, style=style)
            return [render_buffer(line) for line in rendered]

        try:
            render_buffer = console._render_buffer
            # per column shown: its cells' index in a row, how a cell is
            # drawn, and its blank line (a cell with fewer lines than its row)
            columns: list[tuple[int, Callable[[Any], list[str]], str]] = []
            rooms: list[int] = []  # the width each column's cells are drawn in
            shown = [i for i, (column, _) in enumerate(tables._COLUMNS) if column not in hidden]
            for j, (column, w) in enumerate(zip(probe.columns, widths, strict=True)):
                cell = list(probe._get_cells(console, j, column))[-1]  # (the row's, after the header's)
                padding = cell.renderable
                if not isinstance(padding, Padding) or padding.top or padding.bottom:
                    return False
                style = console.get_style(cell.style)
                options = console.options.update(width=w, justify=column.justify, no_wrap=column.no_wrap,
                                                 overflow=column.overflow, height=None,
                                                 highlight=column.highlight)
                rooms.append(w - padding.left - padding.right)
                columns.append((shown[j], functools.partial(draw, (padding.right, padding.left), options, style),
                                render_buffer([Segment(" " * w, style)])))
            divider = render_buffer([Segment(probe.box.mid_vertical, Style.null())])
        except AttributeError:  # (another rich)
            return False
        terminal = console.is_terminal
        head = _drawn([], True, hidden, fixed, console)
        between = _between(hidden, fixed, console)
        known: list[dict[Any, list[str]]] = [{} for _ in columns]
        # per column: its cells' index in a row, their lines drawn so far,
        # how a cell is drawn, the shapes drawn (and the room they have)
        plan = [(i, cache, drawer, Shapes(room))
                for (i, drawer, _), cache, room in zip(columns, known, rooms, strict=True)]
        blanks = [blank for _, _, blank in columns]
        styled = self.styled
        text: list[str] = [head]
        pending = False  # a step ended: the line between steps before the next row
        for cells, end in self._read():
            if pending:
                text.append(between)
            lines: list[list[str]] = []
            height = 1
            for i, cache, drawer, shapes in plan:
                cell = cells[i]
                got = cache.get(cell)
                if got is None:
                    got = _through_shape(cell, styled, shapes, drawer)
                    if len(cache) >= _KNOWN:
                        cache.clear()
                    cache[cell] = got
                lines.append(got)
                if len(got) > height:
                    height = len(got)
            if height == 1 and all(lines):
                row = [divider.join([got[0] for got in lines]) + "\n"]
            else:
                row = [divider.join([got[n] if n < len(got) else blank
                                     for got, blank in zip(lines, blanks, strict=True)]) + "\n"
                       for n in range(height)]
            if terminal:
                text.extend(row)
            else:
                text.extend(part.rstrip() + "\n" for line in row for part in line.splitlines())
            pending = end
            _write_some(out, text)
        out.write("".join(text))
        return True

    def _by_blocks(self, out: IO[str], console: Console, hidden: list[str],
                   fixed: tuple[list[int], list[int]] | None) -> bool:
        """The steps table drawn by rich :data:`_CHUNK` rows at a time, each
        block a table of the column widths rich gives the whole table
        (:func:`podnuma.render.table._fixed_widths`): a row's lines depend
        on those widths and its own cells only, so the blocks, the first
        with the header and each followed by the blank line of a step ended
        there, are the whole table's lines. ``False`` (nothing written)
        without ``fixed`` widths (and pads: see :meth:`write`)."""
        if fixed is None:
            return False
        between = _between(hidden, fixed, console)
        block: list[tables._Row] = []
        first = True
        pending = False  # the block before ended a step: the line between steps first
        for cells, end in self._read():
            if len(block) == _CHUNK:
                if pending:
                    out.write(between)
                out.write(_drawn(block, first, hidden, fixed, console))
                first = False
                pending = block[-1][1]
                block = []
            block.append((self._cells(cells), end))
        block[-1] = (block[-1][0], False)
        if pending:
            out.write(between)
        out.write(_drawn(block, first, hidden, fixed, console))
        return True

    def _plain(self, out: IO[str], console: Console, sizing: Any, hidden: list[str],
               fixed: tuple[list[int], list[int]] | None) -> bool:
        """The steps table written on ``out`` as plain lines, at the whole
        table's ``fixed`` column widths (:func:`podnuma.render.table._fixed_widths`),
        if every cell fits its column as it is (else, or without them,
        nothing written: ``False``)."""
        options = console.options
        if fixed is None:
            return False
        widths = fixed[0]
        shapes = tables._plain_shapes(sizing, widths, console, options)
        if shapes is None:
            return False
        head = tables._plain_head(sizing, widths, shapes)
        if head is None:
            return False
        shown = [i for i, (column, _) in enumerate(tables._COLUMNS) if column not in hidden]
        text: list[str] = [line.rstrip() + "\n" for line in head]
        start = out.tell()
        out.write("".join(text))
        text.clear()
        # a cell's padded lines, by column (the same cells come again and
        # again: blank ones, the same NUMA nodes, hints, names)
        padded: list[dict[Cell, list[str]]] = [{} for _ in shown]
        columns = list(zip(shown, shapes, padded, strict=True))
        pending = False  # a step ended: a blank line before the next row
        for cells, end in self._read():
            if pending:
                text.append("\n")
            row: list[list[str]] = []
            for i, shape, known in columns:
                cell = cells[i]
                got = known.get(cell)
                if got is None:
                    got = tables._padded(cell_lines(cell, shape[0]), shape)
                    if got is None:  # (rich draws the table)
                        out.seek(start)
                        out.truncate()
                        return False
                    if len(known) >= _KNOWN:
                        known.clear()
                    known[cell] = got
                row.append(got)
            text.extend(line.rstrip() + "\n" for line in tables._joined(row, shapes))
            pending = end
            _write_some(out, text)
        out.write("".join(text))
        return True



def _blocks_join(table: Any) -> bool:
    """Whether rows of ``table``'s set-up, drawn apart at fixed widths, join
    into the whole table's lines (:meth:`StreamedTable._by_rows`,
    :meth:`StreamedTable._by_blocks`): the steps table's box without edges,
    border style, rules between rows, row styles or footer, its columns'
    cells aligned to the top."""
    return (table.box is box.SIMPLE_HEAD and not table.border_style and not table.show_edge
            and not table.show_lines
            and not table.leading and not table.row_styles and not table.show_footer
            and not table.title and not table.caption
            and all(column.vertical == "top" for column in table.columns))


#: a cell's shape: its text with each character made this one (not one of
#: the escape codes a console writes), but the line breaks and the
#: characters a CPU list or a name breaks after (:mod:`podnuma.render.wrap`)
_SHAPE_CHAR = "x"
#: per kind of cell, the characters its shape keeps (and not kept)
_KEPT = {TEXT: re.compile(r"\n"), CPUS: re.compile(r"[,\n]"), NAME: re.compile(r"[-/._\n]")}
_NOT_KEPT = {TEXT: re.compile(r"[^\n]"), CPUS: re.compile(r"[^,\n]"), NAME: re.compile(r"[^-/._\n]")}
#: the runs of :data:`_SHAPE_CHAR` in a drawn line (kept, between the text around them)
_RUNS = re.compile(f"({_SHAPE_CHAR}+)")
#: a cell's lines as drawn with its shape's text: per line, the text between
#: the runs of :data:`_SHAPE_CHAR` and, as ints, those runs' lengths
_Shape = list[list[str | int]]
#: a shape as it is kept: a cell of one line drawn as one line, its
#: characters in one run, as the text before and after that run; else the
#: lines of :data:`_Shape`
_Kept = tuple[str, str] | _Shape


class Shapes(dict[Any, "_Kept | None"]):
    """The shapes drawn for a column (:func:`_through_shape`), and the
    width its cells are drawn in (``room``: the column's width less its
    pads; ``None``: not known)."""

    def __init__(self, room: int | None = None) -> None:
        super().__init__()
        self.room = room


def _xs(text: str) -> str:
    """``text`` with each character made :data:`_SHAPE_CHAR` but its line breaks."""
    if "\n" not in text:
        return _SHAPE_CHAR * len(text)
    return "\n".join(_SHAPE_CHAR * len(line) for line in text.split("\n"))


def _shape_of(cell: Any, styled: bool, room: int | None = None) -> tuple[Any, str] | None:
    """The cell of the same kind and styles as ``cell`` whose every
    character is :data:`_SHAPE_CHAR` but those its kind keeps (:data:`_KEPT`:
    line breaks, and the break points of a CPU list or a name), and
    ``cell``'s other characters, in order;
    ``None`` for a cell with a character that is not printable ASCII, or
    with a space (rich draws such a cell by its characters: where it
    wraps, what it trims). Given the width the cell is drawn in
    (``room``), a cell whose every line fits it keeps its line breaks
    only: rich breaks none of its lines, so its break points change
    nothing (a shape of one line for all the cells of that length)."""
    if styled:
        kind, pieces_ = cell
        text = pieces_[0][0] if len(pieces_) == 1 else "".join(piece for piece, _ in pieces_)
    else:
        kind, text = cell[0], cell[1:]
    if "\n" in text:
        unbroken = text.replace("\n", "")
        lines = text.split("\n")
        fits = room is not None and max(map(len, lines)) <= room
    else:
        unbroken = text
        fits = room is not None and len(text) <= room
    if not text or " " in text or not (unbroken.isascii() and unbroken.isprintable()):
        return None
    if fits:
        if styled:
            return (kind, tuple((_xs(piece), style) for piece, style in pieces_)), unbroken
        return kind + _xs(text), unbroken
    if room is not None and kind != TEXT and unbroken is text and (not styled or len(pieces_) == 1):
        # a CPU list or a name of one line and one style that wraps: its
        # lines as it wraps them (:func:`podnuma.render.wrap.plain_lines`,
        # at the offsets it draws them), each as a line of the shape, cut
        # no further (a piece wider than the room is cut to it)
        lines = plain_lines([text], _CPU_BREAK if kind == CPUS else _NAME_BREAK, room)
        shape = "\n".join(_SHAPE_CHAR * len(line) for line in lines)
        if "".join(lines) == text and max(map(len, lines)) <= room:
            return ((kind, ((shape, pieces_[0][1]),)) if styled else kind + shape), text
    chars = _KEPT[kind].sub("", text)
    shaped = _NOT_KEPT[kind].sub
    if styled:
        return (kind, tuple((shaped(_SHAPE_CHAR, piece), style) for piece, style in pieces_)), chars
    return kind + shaped(_SHAPE_CHAR, text), chars


def _through_shape(cell: Any, styled: bool, shapes: dict[Any, _Kept | None],
                   drawn: Callable[[Any], list[str]]) -> list[str]:
    """``drawn(cell)`` (a cell's lines as the console writes them), made
    from the lines of its shape (:func:`_shape_of`; ``shapes``' ``room``,
    when it is :class:`Shapes`), drawn once per shape
    and column, with the cell's characters put back in order. Rich draws
    a cell of printable ASCII without spaces by its styles, its line
    breaks, its break points and the lengths between them alone, so long
    as none of those lengths is cut (a piece wider than the column): a
    shape whose drawn lines do not hold its runs of :data:`_SHAPE_CHAR`
    whole (one cut there, or by a style changing within it), or that
    holds an operating system command (a link's: its address may hold an
    x), is not used (``None``), and its cells are drawn by ``drawn``.
    Given the room, a shape of one style and several lines, none of them
    empty, that keeps no character but its line breaks is drawn a line at
    a time (rich draws each line of such a cell
    apart, its lines the lines of each: a shape of one line serves all
    the lines of its length)."""
    room = getattr(shapes, "room", None)
    got = _shape_of(cell, styled, room)
    if got is None:
        return drawn(cell)
    shape_cell, chars = got
    if room is not None:
        kind, pieces_ = shape_cell if styled else (shape_cell[0], ((shape_cell[1:], ""),))
        if len(pieces_) == 1 and "\n" in pieces_[0][0]:
            shape_text, style = pieces_[0]
            lines = shape_text.split("\n")
            # (every character but the line breaks made x: none kept)
            if all(lines) and len(chars) == len(shape_text) - len(lines) + 1:
                out: list[str] = []
                at = 0
                for line in lines:
                    one = _shaped((kind, ((line, style),)) if styled else kind + line,
                                  chars[at:at + len(line)], styled, shapes, drawn)
                    if one is None:
                        return drawn(cell)
                    out += one
                    at += len(line)
                return out
    made = _shaped(shape_cell, chars, styled, shapes, drawn)
    return drawn(cell) if made is None else made


def _shaped(shape_cell: Any, chars: str, styled: bool, shapes: dict[Any, _Kept | None],
            drawn: Callable[[Any], list[str]]) -> list[str] | None:
    """The lines of the cell of shape ``shape_cell`` and characters
    ``chars`` (:func:`_through_shape`), from the shape drawn once (kept in
    ``shapes``); ``None`` where the shape is not used."""
    shape = shapes.get(shape_cell, _UNKNOWN)
    if shape is _UNKNOWN:
        lines = drawn(shape_cell)
        parts = [_RUNS.split(line) for line in lines]
        runs = [len(p) for line in parts for p in line[1::2]]
        text = "".join(piece for piece, _ in shape_cell[1]) if styled else shape_cell[1:]
        whole = [len(run) for run in _KEPT[shape_cell[0]].split(text) if run]
        # (an OSC sequence, a link's, may hold an x of its own)
        shape = None
        if runs == whole and not any("\x1b]" in line for line in lines):
            shape = [[p if k % 2 == 0 else len(p) for k, p in enumerate(line)] for line in parts]
            if len(parts) == 1 and len(parts[0]) == 3:  # one line, one run
                shape = (parts[0][0], parts[0][2])
        if len(shapes) >= _KNOWN:
            shapes.clear()
        shapes[shape_cell] = shape
    if shape is None:
        return None
    if isinstance(shape, tuple):
        return [shape[0] + chars + shape[1]]
    out: list[str] = []
    at = 0
    for line in shape:
        pieces_: list[str] = []
        for part in line:
            if isinstance(part, int):
                pieces_.append(chars[at:at + part])
                at += part
            else:
                pieces_.append(part)
        out.append("".join(pieces_))
    return out


#: not yet in a column's shapes
_UNKNOWN: Any = object()


def _blank_row() -> list[RenderableType]:
    return [Text("") for _ in tables._COLUMNS]


def _at_widths(rows: list[tables._Row], hidden: list[str], fixed: tuple[list[int], list[int]]) -> Any:
    """The steps table of ``rows`` with its columns at the widths (less
    their pads) of the whole table."""
    table = tables._steps_table(rows, frozenset(hidden))
    for column, w, p in zip(table.columns, *fixed, strict=True):
        column.width = w - p
    return table


def _drawn(rows: list[tables._Row], header: bool, hidden: list[str],
           fixed: tuple[list[int], list[int]], console: Console) -> str:
    """``rows`` drawn by rich at the whole table's widths, with the header or not."""
    table = _at_widths(rows, hidden, fixed)
    table.show_header = header
    return tables.capture(lambda c: c.print(table), console)


def _between(hidden: list[str], fixed: tuple[list[int], list[int]], console: Console) -> str:
    """The line between two steps: the middle one of two blank rows drawn
    by rich, a step ended after the first."""
    rows = [(_blank_row(), True), (_blank_row(), False)]
    return _drawn(rows, False, hidden, fixed, console).splitlines(keepends=True)[1]


def _write_some(out: IO[str], lines: list[str]) -> None:
    """``lines`` written on ``out`` (and let go) once they are a few thousand."""
    if len(lines) >= 4096:
        out.write("".join(lines))
        lines.clear()
