"""Colour for the views written as plain text (``restart``, ``state
inspect``, ``cgroups plan``): the text is laid out first, then styles are
put on the parts that rules (a regular expression and a rich style) match,
when colour is wanted: on a terminal or with ``FORCE_COLOR``, never with
``NO_COLOR`` or under ``TERM=dumb`` (as :func:`~podnuma.render.table.make_console` decides for
the tables of ``simulate``). The characters are the same either way: the
styles add escape codes only, so the columns stay aligned."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from typing import IO

__all__ = ["HEADER_RULES", "painted", "wants_colour"]

#: the header of a :func:`~podnuma.render.state.fitted_table` (the line above
#: its rule) in bold, the rule dim
HEADER_RULES: tuple[tuple[str, str], ...] = (
    (r"(?m)^[^\S\n]*+\S.*$(?=\n─)", "bold"),
    (r"(?m)^─[─ ]*$", "dim"),
)


def wants_colour(file: IO[str] | None = None) -> bool:
    """Whether the view written to ``file`` (default: standard output) is
    coloured: a terminal, or ``FORCE_COLOR``; never with ``NO_COLOR``, nor
    on a terminal without colours (``TERM=dumb``: rich gives it no colour
    system, so ``simulate``'s tables have none there either)."""
    if os.environ.get("NO_COLOR"):
        return False
    from rich.console import Console

    probe = Console(file=file)
    return probe.is_terminal and probe.color_system is not None


def painted(text: str, rules: Sequence[tuple[str, str]], file: IO[str] | None = None) -> str:
    """``text`` with the style of each rule on what its pattern matches
    (later rules over earlier ones), as escape codes, when colour is wanted
    on ``file`` (:func:`wants_colour`); else ``text`` as it is."""
    if not text or not wants_colour(file):
        return text
    from rich.console import Console
    from rich.text import Text

    probe = Console(file=file)
    styled = Text(text)
    for pattern, style in rules:
        styled.highlight_regex(re.compile(pattern), style)
    out = io.StringIO()
    system = probe.color_system
    console = Console(file=out, force_terminal=True,
                      color_system="truecolor" if system == "truecolor" else "256" if system == "256" else "standard",
                      highlight=False, emoji=False, markup=False, width=max(80, len(text)))
    console.print(styled, end="", soft_wrap=True)
    return out.getvalue()
