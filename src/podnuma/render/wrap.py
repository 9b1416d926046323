"""Cell text that wraps only where a reader expects it.

Rich wraps table cells at spaces and folds anything longer mid-token: a CPU
list ``0-7,16-23,24-31`` folds as ``0-7,16-23,24-3`` / ``1``. A
:class:`Breakable` knows its break points instead: after the commas of a CPU
list, after the separators of a name (``-``, ``/``, ``.``, ``_``) or at
spaces. Lines are filled greedily; only a single piece wider than the
column is cut (nothing else can be done with it). :func:`words` also breaks
a piece wider than the column between the words of a CamelCase name
(``UnexpectedAdmissionError`` -> ``UnexpectedAdmission`` / ``Error``), and
only then.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

__all__ = [
    "CUT_MARK",
    "Breakable",
    "cpu_list",
    "marked_lines",
    "name",
    "narrowest_cut",
    "paragraph",
    "spread_width",
    "pieces",
    "plain_lines",
    "text_lines",
    "words",
]

#: names longer than this without a break may be cut to fit a column
NAME_PIECE_MAX = 16

_CPU_BREAK = re.compile(r"[^,]*,|[^,]+$")
_NAME_BREAK = re.compile(r"[^-/._ ]*[-/._ ]|[^-/._ ]+$")
#: the words of a CamelCase name (an acronym is one: ``SMT|Alignment|Error``)
_CAMEL_BREAK = re.compile(r"(?:[A-Z]+(?=[A-Z][a-z])|[A-Z]*[^-/._ A-Z]+|[A-Z]+)[-/._ ]*|[-/._ ]+")
#: the words of a sentence: broken at spaces (:func:`paragraph`)
_SPACE_BREAK = re.compile(r"[^ ]* |[^ ]+$")

#: what ends a line of :func:`marked_lines` (and :func:`paragraph`) where a
#: piece wider than the line is cut, the rest of it on the next line: no
#: word is cut without it
CUT_MARK = "\u21a9"  # ↩


def pieces(text: str, pattern: re.Pattern[str]) -> list[str]:
    """``text`` cut after each break character (the pieces join back to it)."""
    return [m.group(0) for m in pattern.finditer(text) if m.group(0)]


def _inner_pieces(chunks: list[str], inner: re.Pattern[str] | None) -> list[str]:
    """``chunks`` cut at ``inner``'s break points too (the narrowest a line
    can be made without cutting a word)."""
    if inner is None:
        return chunks
    return [p for chunk in chunks for p in pieces(chunk, inner)]


def _breaks(chunks: list[str], width: int) -> list[int]:
    """Offsets where lines start (after the first), filling greedily."""
    offsets: list[int] = []
    pos = 0
    line = 0  # length of the current line
    for chunk in chunks:
        if line and line + len(chunk.rstrip()) > width:
            offsets.append(pos)
            line = 0
        while len(chunk.rstrip()) > width:  # one piece wider than the column
            pos += width
            chunk = chunk[width:]
            offsets.append(pos)
        pos += len(chunk)
        line += len(chunk)
    return offsets


def _offsets(chunks: list[str], width: int, inner: re.Pattern[str] | None) -> list[int]:
    """:func:`_breaks`, but a chunk wider than the column starts a line of
    its own and is broken at ``inner``'s break points (cut only where one
    of those pieces is still wider)."""
    if inner is None:
        return _breaks(chunks, width)
    offsets: list[int] = []
    pos = 0
    line = 0  # length of the current line
    for chunk in chunks:
        if len(chunk.rstrip()) > width:
            if line:
                offsets.append(pos)
            sub = _breaks(pieces(chunk, inner), width)
            offsets.extend(pos + o for o in sub)
            line = len(chunk) - (sub[-1] if sub else 0)
        elif line and line + len(chunk.rstrip()) > width:
            offsets.append(pos)
            line = len(chunk)
        else:
            line += len(chunk)
        pos += len(chunk)
    return offsets


class Breakable:
    """A table cell of one or more lines, each wrapped at its own breaks."""

    def __init__(
        self, lines: Iterable[Text], pattern: re.Pattern[str], *, longest_piece: int = 1 << 16,
        inner: re.Pattern[str] | None = None,
    ) -> None:
        self.lines = list(lines)
        self.pattern = pattern
        # where a piece wider than the column may be broken before it is cut
        self.inner = inner
        # a piece longer than this may be cut (a 63-character name with no
        # break must not claim 63 columns of a narrow table)
        self.longest_piece = longest_piece

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest_piece = max(
            (len(p.rstrip()) for line in self.lines
             for p in _inner_pieces(pieces(line.plain, self.pattern), self.inner)),
            default=0,
        )
        widest_piece = min(widest_piece, self.longest_piece)
        widest_line = max((len(line.plain) for line in self.lines), default=0)
        return Measurement(min(widest_piece, options.max_width), min(widest_line, options.max_width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        for line in self.lines:
            offsets = _offsets(pieces(line.plain, self.pattern), width, self.inner)
            for part in line.divide(offsets):
                part.rstrip()
                yield from part.render(console, end="")
                yield Segment.line()

    def plain_lines(self, width: int) -> list[str]:
        """The lines :meth:`__rich_console__` draws at ``width``, as plain
        text (each line cut at the same offsets, its trailing spaces taken
        off)."""
        return plain_lines([line.plain for line in self.lines], self.pattern, width, inner=self.inner)

    @property
    def plain(self) -> str:
        return "\n".join(line.plain for line in self.lines)

    def narrowest(self) -> int:
        """The narrowest the cell's lines can be made without cutting a
        piece: its widest piece (``inner``'s pieces when there is an
        ``inner``), in terminal cells, however long."""
        return max(
            (cell_len(p.rstrip()) for line in self.lines
             for p in _inner_pieces(pieces(line.plain, self.pattern), self.inner)),
            default=0,
        )

    def marked_lines(self, width: int) -> list[str]:
        """The cell's lines at ``width`` columns as plain text
        (:func:`marked_lines`): a piece wider than the column cut with
        :data:`CUT_MARK` at the end of each line it is cut at."""
        return marked_lines([line.plain for line in self.lines], self.pattern, width, inner=self.inner)


def plain_lines(
    lines: list[str], pattern: re.Pattern[str], width: int, *, inner: re.Pattern[str] | None = None
) -> list[str]:
    """The lines a :class:`Breakable` of these lines (their text) and break
    ``pattern`` (and ``inner``: :class:`Breakable`) draws at ``width``, as
    plain text."""
    out: list[str] = []
    width = max(1, width)
    for text in lines:
        bounds = [0, *_offsets(pieces(text, pattern), width, inner), len(text)]
        out.extend(text[a:b].rstrip() for a, b in zip(bounds, bounds[1:], strict=False))
    return out


def text_lines(text: str) -> list[str]:
    """The lines of ``text`` as rich's ``Text.split("\\n")`` gives them (the
    lines of :func:`cpu_list` and :func:`name`): a line break at the end
    starts no line of its own."""
    lines = text.split("\n")
    if len(lines) > 1 and text.endswith("\n"):
        lines.pop()
    return lines


def _lines(text: Text | str, style: str | Style) -> list[Text]:
    if isinstance(text, str):
        text = Text(text, style=style)
    return list(text.split("\n"))


def cpu_list(text: Text | str, style: str | Style = "") -> Breakable:
    """A CPU list (``0-3,8``) that wraps only after its commas."""
    return Breakable(_lines(text, style), _CPU_BREAK)


def name(text: Text | str, style: str | Style = "") -> Breakable:
    """A name (or a few lines of names) that wraps only at word boundaries."""
    return Breakable(_lines(text, style), _NAME_BREAK, longest_piece=NAME_PIECE_MAX)


def words(text: Text | str, style: str | Style = "") -> Breakable:
    """Words and names (a kubelet's reason: ``no: UnexpectedAdmissionError``)
    that wrap at spaces and separators, and a CamelCase name wider than the
    column between its words."""
    return Breakable(_lines(text, style), _NAME_BREAK, longest_piece=NAME_PIECE_MAX, inner=_CAMEL_BREAK)


def _fill(text: str, pattern: re.Pattern[str], inner: re.Pattern[str] | None, first: int, rest: int) -> list[str]:
    """``text`` (one line) filled greedily into lines of ``first`` terminal
    cells (the first line) and ``rest`` (the others), broken after
    ``pattern``'s pieces; a piece wider than a line starts a line of its
    own and is broken at ``inner``'s break points, and one of those still
    wider is cut, each line it is cut at ended by :data:`CUT_MARK`. A line
    after the first starts at a word (the spaces of the break left out);
    trailing spaces are taken off. A line is wider than its width only
    where no layout can be narrower: one character (2 cells when it is
    wide) and the mark."""
    lines: list[str] = []
    cur = ""
    width = max(2, first)

    def fits(s: str) -> bool:
        return cell_len(s.rstrip()) <= width

    def emit() -> None:
        nonlocal cur, width
        lines.append(cur.rstrip())
        cur, width = "", max(2, rest)

    def add(piece: str, inner: re.Pattern[str] | None) -> None:
        nonlocal cur
        if lines and not cur and piece.isspace():
            return
        if fits(cur + piece):
            cur += piece
            return
        if cur.strip():
            emit()
            if piece.isspace():
                return
            if fits(piece):
                cur = piece
                return
        if inner is not None:  # (wider than a line: at its inner breaks)
            for sub in pieces(piece, inner):
                add(sub, None)
            return
        while not fits(cur + piece):  # (the last resort: cut, and say so)
            room = width - cell_len(cur) - cell_len(CUT_MARK)
            n, used = 0, 0
            while n < len(piece) and used + cell_len(piece[n]) <= room:
                used += cell_len(piece[n])
                n += 1
            if n == 0 and cur:  # (not even one character and the mark after it: a line of its own)
                if cur.strip():
                    emit()
                else:
                    cur = ""
                continue
            n = max(n, 1)  # (no layout can: one character and the mark wider than the line)
            cur += piece[:n] + CUT_MARK
            piece = piece[n:]
            emit()
        cur += piece

    for chunk in pieces(text, pattern):
        add(chunk, inner)
    if cur or not lines:
        lines.append(cur.rstrip())
    return lines


def marked_lines(
    lines: list[str], pattern: re.Pattern[str], width: int, *, inner: re.Pattern[str] | None = None
) -> list[str]:
    """``lines`` (a cell's, as a :class:`Breakable` of that ``pattern`` and
    ``inner`` holds them) at ``width`` terminal cells: filled greedily at
    the same break points, a piece wider than the column broken at
    ``inner``'s, and only a piece still wider cut, every line it is cut at
    ended by :data:`CUT_MARK` (never cut silently). Plain text, without
    trailing spaces; no line is wider than ``width`` (2 at least)."""
    out: list[str] = []
    for text in lines:
        out.extend(_fill(text, pattern, inner, width, width))
    return out


def narrowest_cut(text: str) -> int:
    """The narrowest line ``text`` can be cut into: its widest character
    and :data:`CUT_MARK` (2 cells at least)."""
    return max(2, max((cell_len(c) for c in set(text)), default=1) + cell_len(CUT_MARK))


def paragraph(text: str, width: int, *, hang: int = 0) -> list[str]:
    """A line of prose at ``width`` terminal cells: broken at spaces, a word
    wider than the line at a name's separators (``-``, ``/``, ``.``,
    ``_``), and cut (:data:`CUT_MARK`) only when one of those pieces is
    wider still; the lines after the first indented by ``hang`` spaces (by
    4 when ``hang`` is more than half the width, and by at most half)."""
    hang = max(0, min(hang if hang <= width // 2 else 4, width // 2, width - narrowest_cut(text)))
    lines = _fill(text, _SPACE_BREAK, _NAME_BREAK, width, width - hang)
    return lines[:1] + [" " * hang + line if line else line for line in lines[1:]]


def spread_width(lo: list[int], hi: list[int], room: int) -> list[int]:
    """Column widths from their narrowest (``lo``) and widest (``hi``) when
    ``room`` more cells than the narrowest are there, but not enough for
    all at their widest: as ``explain``'s containers table shares it, the
    columns that need the least more to be whole first, the rest in
    proportion (the rounding's remainder to the first of them): no word is
    cut when the table fits. The tables of ``explain``, ``restart`` and
    ``state inspect``."""
    widths = list(lo)
    order = sorted(range(len(lo)), key=lambda i: hi[i] - lo[i])
    left = room
    for i in order:  # whole columns first, the narrowest needs first
        need = hi[i] - lo[i]
        if need > left:
            break
        widths[i], left = hi[i], left - need
    rest = [i for i in order if widths[i] < hi[i]]
    wanted = sum(hi[i] - widths[i] for i in rest)
    for i in rest:
        widths[i] += (hi[i] - widths[i]) * left // wanted if wanted else 0
    if rest:
        widths[rest[0]] += room - sum(w - low for w, low in zip(widths, lo, strict=True))
    return widths
