"""Cell text that wraps only where a reader expects it.

Rich wraps table cells at spaces and folds anything longer mid-token: a CPU
list ``0-7,16-23,24-31`` folds as ``0-7,16-23,24-3`` / ``1``. A
:class:`Breakable` knows its break points instead: after the commas of a CPU
list, after the separators of a name (``-``, ``/``, ``.``, ``_``) or at
spaces. Lines are filled greedily; only a single piece wider than the
column is cut (nothing else can be done with it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

__all__ = ["Breakable", "cpu_list", "name", "pieces", "plain_lines", "text_lines"]

#: names longer than this without a break may be cut to fit a column
NAME_PIECE_MAX = 16

_CPU_BREAK = re.compile(r"[^,]*,|[^,]+$")
_NAME_BREAK = re.compile(r"[^-/._ ]*[-/._ ]|[^-/._ ]+$")


def pieces(text: str, pattern: re.Pattern[str]) -> list[str]:
    """``text`` cut after each break character (the pieces join back to it)."""
    return [m.group(0) for m in pattern.finditer(text) if m.group(0)]


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


class Breakable:
    """A table cell of one or more lines, each wrapped at its own breaks."""

    def __init__(
        self, lines: Iterable[Text], pattern: re.Pattern[str], *, longest_piece: int = 1 << 16
    ) -> None:
        self.lines = list(lines)
        self.pattern = pattern
        # a piece longer than this may be cut (a 63-character name with no
        # break must not claim 63 columns of a narrow table)
        self.longest_piece = longest_piece

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest_piece = max(
            (len(p.rstrip()) for line in self.lines for p in pieces(line.plain, self.pattern)),
            default=0,
        )
        widest_piece = min(widest_piece, self.longest_piece)
        widest_line = max((len(line.plain) for line in self.lines), default=0)
        return Measurement(min(widest_piece, options.max_width), min(widest_line, options.max_width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width)
        for line in self.lines:
            offsets = _breaks(pieces(line.plain, self.pattern), width)
            for part in line.divide(offsets):
                part.rstrip()
                yield from part.render(console, end="")
                yield Segment.line()

    def plain_lines(self, width: int) -> list[str]:
        """The lines :meth:`__rich_console__` draws at ``width``, as plain
        text (each line cut at the same offsets, its trailing spaces taken
        off)."""
        return plain_lines([line.plain for line in self.lines], self.pattern, width)

    @property
    def plain(self) -> str:
        return "\n".join(line.plain for line in self.lines)


def plain_lines(lines: list[str], pattern: re.Pattern[str], width: int) -> list[str]:
    """The lines a :class:`Breakable` of these lines (their text) and break
    ``pattern`` draws at ``width``, as plain text."""
    out: list[str] = []
    for text in lines:
        bounds = [0, *_breaks(pieces(text, pattern), max(1, width)), len(text)]
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
