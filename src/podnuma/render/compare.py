"""``podnuma compare`` for people: the two forms side by side."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement as Width
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from podnuma.analysis.compare import FORM_NAMES, Comparison
from podnuma.analysis.measure import Measurement
from podnuma.machine.cpuset import CPUSet
from podnuma.render.wrap import Breakable, cpu_list, pieces, words
from podnuma.units import format_bytes as format_size

__all__ = ["comparison_renderable"]


def _cpus(count_set: CPUSet) -> str:
    n = count_set.size()
    return "0" if n == 0 else f"{n} ({count_set})"


#: cells of names and reasons: wrapped at word boundaries only (a CamelCase
#: reason wider than its column between its words), never mid-word
_WORDS = frozenset({"qos", "admitted", "nodeshared", "density", "stop", "hugepages"})
#: cells of a CPU count and its list (``11 (1-6,17,19-22)``): wrapped after
#: the count or a comma of the list, never inside a range
_COUNTED = frozenset({"exclusive", "podshared", "sidecar", "held"})
_COUNT_BREAK = re.compile(r"[^, ]*[, ]+|[^, ]+$")


def _cell(m: Measurement, what: str) -> Breakable:
    text = _text_cell(m, what)
    if m.startup_error is not None or what in _WORDS:
        return words(text)
    if what in _COUNTED:
        return Breakable(text.split("\n"), _COUNT_BREAK)
    return cpu_list(text)  # memory, NUMA nodes: one word, or a list of numbers


def _text_cell(m: Measurement, what: str) -> Text:
    if m.startup_error is not None:
        return Text("kubelet would not start" if what == "admitted" else "-", style="red")
    if what == "qos":
        return Text(m.qos_class or "-")
    if what == "admitted":
        if m.admitted:
            return Text("yes", style="green")
        t = Text(f"no: {m.reason}", style="bold red")
        return t
    if not m.admitted:
        if what == "density":
            return Text("0", style="bold")
        return Text("-", style="dim")
    if what == "exclusive":
        return Text(_cpus(m.exclusive_cpus))
    if what == "podshared":
        return Text(_cpus(m.pod_shared_cpus))
    if what == "nodeshared":
        return Text(", ".join(m.node_shared_containers) if m.node_shared_containers else "-")
    if what == "sidecar":
        style = "yellow" if m.sidecar_only_cpus.size() else ""
        return Text(_cpus(m.sidecar_only_cpus), style=style)
    if what == "held":
        return Text(_cpus(m.held_cpus))
    if what == "memory":
        return Text(format_size(m.memory_bytes) if m.memory_bytes else "0")
    if what == "hugepages":  # (each size apart: a pool of its own on the node)
        return Text(", ".join(f"{res} {format_size(n)}" for res, n in m.hugepages_bytes) or "0")
    if what == "numa":
        return Text(",".join(str(n) for n in m.numa_nodes) if m.numa_nodes else "-")
    if what == "density":
        return Text(f"{m.density}" + (" (cap)" if m.density_capped else ""), style="bold")
    if what == "stop":
        return Text(m.density_stop or "-")
    raise KeyError(what)


_ROWS = (
    ("QoS class", "qos"),
    ("admitted", "admitted"),
    ("exclusive CPUs", "exclusive"),
    ("pod shared pool CPUs", "podshared"),
    ("on node shared pool", "nodeshared"),
    ("sidecar-only CPUs", "sidecar"),
    ("CPUs taken from node", "held"),
    ("memory pinned", "memory"),
    ("huge pages pinned", "hugepages"),
    ("NUMA nodes", "numa"),
    ("density (copies)", "density"),
    ("next copy rejected", "stop"),
)



def _budget_text(budget: Mapping[str, Mapping[str, str]]) -> str:
    """The pod budget: its requests (``cpu=5, memory=4608Mi``), and its
    limits too when they are not the same."""
    requests = dict(budget.get("requests", {}))
    limits = dict(budget.get("limits", {}))

    def listed(values: Mapping[str, str]) -> str:
        return ", ".join(f"{k}={v}" for k, v in values.items()) or "-"

    if not limits or limits == requests:
        return listed(requests)
    return f"requests {listed(requests)}; limits {listed(limits)}"


def _fill(lo: list[int], hi: list[int], room: int) -> list[int]:
    """Column widths within ``room``: each column its widest line when they
    all fit, else the widest narrowed first (as rich does), none below its
    ``lo``, the room left given out a column at a time."""
    if sum(hi) <= room:
        return list(hi)
    level = max(hi)
    widths = list(hi)
    while level > 0:
        widths = [min(h, max(low, level)) for low, h in zip(lo, hi, strict=True)]
        if sum(widths) <= room:
            break
        level -= 1
    left = room - sum(widths)
    while left > 0 and any(w < h for w, h in zip(widths, hi, strict=True)):
        for i, h in enumerate(hi):
            if left > 0 and widths[i] < h:
                widths[i] += 1
                left -= 1
    return widths


class _RunsTable:
    """The table of the runs: the four side by side when their words fit
    the width there is (the row titles on one line if they can, else
    wrapped at words), else two tables of one form each, else a table a
    run; each cell wrapped where a reader expects it (:mod:`podnuma.render.wrap`),
    cut only where one word or range alone is wider than the console."""

    def __init__(self, c: Comparison) -> None:
        self.c = c
        self.headers = [
            words(Text(f"{FORM_NAMES[m.label]}{' *' if m.label == c.written else ''}\nscope {m.scope}"))
            for m in c.runs
        ]
        # (the huge pages row only for a pod that has huge pages pinned)
        pages = any(m.hugepages_bytes for m in c.runs)
        self.rows = [(title, key) for title, key in _ROWS if key != "hugepages" or pages]
        self.titles = [words(Text(title, style="bold")) for title, _ in self.rows]
        self.cells = [[_cell(m, key) for _, key in self.rows] for m in c.runs]

    def _table(self, runs: Sequence[int], widths: Sequence[int] | None) -> Table:
        table = Table(box=box.SIMPLE_HEAD, show_lines=False)
        table.add_column("", width=None if widths is None else widths[0])
        for k, i in enumerate(runs):
            table.add_column(self.headers[i], width=None if widths is None else widths[k + 1])
        for r in range(len(self.rows)):
            table.add_row(self.titles[r], *(self.cells[i][r] for i in runs))
        return table

    def _bounds(self, console: Console, options: ConsoleOptions, runs: Sequence[int]) -> list[tuple[int, int]]:
        wide = options.update_width(1 << 16)
        out = []
        for column in ([*self.titles], *([self.headers[i], *self.cells[i]] for i in runs)):
            sizes = [Width.get(console, wide, cell) for cell in column]
            out.append((max(s.minimum for s in sizes), max(s.maximum for s in sizes)))
        return out

    def _overhead(self, console: Console, options: ConsoleOptions, n: int) -> int:
        """The borders and padding of a table of ``n`` runs."""
        probe = self._table(range(n), [1] * (n + 1))
        return Width.get(console, options.update_width(1 << 16), probe).maximum - (n + 1)

    def layout(self, console: Console, options: ConsoleOptions) -> list[Table]:
        width = options.max_width
        n = len(self.c.runs)
        tries: list[tuple[int, bool]] = []
        for size in (n, 2, 1):
            if size <= n and all(s != size for s, _ in tries):
                tries += [(size, False), (size, True)]
        last: list[Table] = []
        for size, wrap_titles in tries:
            groups = [list(range(a, min(a + size, n))) for a in range(0, n, size)]
            tables = []
            fits = True
            for runs in groups:
                bounds = self._bounds(console, options, runs)
                lo = [b[0] for b in bounds]
                hi = [b[1] for b in bounds]
                if not wrap_titles:
                    lo[0] = hi[0]
                room = width - self._overhead(console, options, len(runs))
                if sum(lo) > room:
                    fits = False
                    lo = [1] * len(lo)  # (the last resort: cut what must be)
                tables.append(self._table(runs, _fill(lo, hi, max(room, len(lo)))))
            if fits:
                return tables
            last = tables
        return last

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Width:
        return Width.get(console, options, self._table(range(len(self.c.runs)), None))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.layout(console, options)


_WORD = re.compile(r"\s*\S+\s*")


class _Lines:
    """Lines of text, each wrapped at its spaces with the lines after its
    first indented two more than it (a piece wider than the line alone is
    cut)."""

    def __init__(self, lines: Iterable[Text]) -> None:
        self.lines = list(lines)

    @staticmethod
    def _offsets(plain: str, width: int, indent: int) -> list[int]:
        offsets: list[int] = []
        pos = line = 0
        room = width
        for piece in pieces(plain, _WORD):  # (each but the first starts with its word)
            if line and line + len(piece.rstrip()) > room:
                offsets.append(pos)
                line, room = 0, max(1, width - indent)
            while len(piece.rstrip()) > room - line:  # one piece wider than the line: cut
                # after the last separator of a name or list that fits, else where it must be
                fits = piece[: max(1, room - line)]
                cut = max((fits.rfind(c) + 1 for c in "-/._,"), default=0) or len(fits)
                pos += cut
                piece = piece[cut:]
                offsets.append(pos)
                line, room = 0, max(1, width - indent)
            pos += len(piece)
            line += len(piece)
        return offsets

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Width:
        widest = max((len(p.strip()) for t in self.lines for p in pieces(t.plain, _WORD)), default=0)
        longest = max((len(t.plain) for t in self.lines), default=0)
        return Width(min(widest, options.max_width), min(longest, options.max_width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        for text in self.lines:
            indent = min(len(text.plain) - len(text.plain.lstrip(" ")) + 2, width // 2)
            for k, part in enumerate(text.divide(self._offsets(text.plain, width, indent))):
                part.rstrip()
                if k:
                    yield Segment(" " * indent)
                yield from part.render(console, end="")
                yield Segment.line()


def comparison_renderable(
    c: Comparison, *, node: str, config: str, source: str | None = None, restart: Sequence[str] = (),
) -> RenderableType:
    """One pod's comparison for people: the runs side by side, the derived
    form, the notes, and the ``restart`` lines (:func:`podnuma.service.restart.risk_lines`).
    ``source``: where the pod is in its input, to tell it from another of
    the same name."""
    title = Text()
    title.append(c.pod if " " in c.pod else f"Pod {c.pod}", style="bold")  # a workload: "Deployment ml/trainer"
    if source is not None:
        title.append(f" ({source})", style="bold")
    title.append(f"  (as written: {FORM_NAMES[c.written]}; derived: {FORM_NAMES[c.rewrite.direction]})")
    head = _Lines([title, Text(f"node: {node}"), Text(f"kubelet config: {config}")])
    parts: list[RenderableType] = [head, _RunsTable(c), Text("* = as written", style="dim")]

    first = Text()
    first.append(f"{FORM_NAMES[c.rewrite.direction]} form: ", style="bold")
    budget = _budget_text(c.rewrite.budget)
    if c.rewrite.direction == "podLevel":
        first.append("spec.resources " + budget)
    else:
        first.append("spec.resources removed (was " + budget + ")")
    plan = [first, *(Text(f"  {p.name} ({p.type}): {p.role} - {p.why}") for p in c.rewrite.containers)]
    parts.append(_Lines(plan))
    errors = [
        Text(f"{FORM_NAMES[m.label]} / scope {m.scope}: kubelet would not start: {m.startup_error}", style="red")
        for m in c.runs if m.startup_error is not None
    ]
    if errors:
        parts.append(_Lines(errors))
    if c.notes:
        parts.append(_Lines([Text("notes:", style="bold"), *(Text(f"  - {n}") for n in c.notes)]))
    if restart:
        parts.append(_Lines(Text(line) for line in restart))
    return Group(*parts)
