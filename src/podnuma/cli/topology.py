"""``podnuma topology SCENARIO``: the machine as lstopo draws it, each CPU
coloured by its owner after a step of the scenario.

``-o table|svg|png|json|yaml`` is the format (``text``: ``table``; default: from ``--output-file``'s
suffix, else table); ``--output-file FILE`` writes the picture atomically
instead of to standard output. A suffix of ``--output-file`` names a format
(:data:`_SUFFIXES`); one that names another than ``-o``'s, or none that is
known, is a usage error (nothing written): a file without a suffix takes
``-o``'s format.

The text picture is coloured and laid out as ``simulate``'s table is:
:func:`podnuma.render.table.make_console` decides (colour on a terminal
that has colours, or with ``FORCE_COLOR``; never with ``NO_COLOR`` or
``TERM=dumb``; ``COLUMNS`` when set, else the terminal's width, else 100
columns).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import click

from podnuma.cli.app import fail, guard
from podnuma.cli.guard import is_terminal
from podnuma.cli.options import (
    NamedPath,
    OutputFormat,
    check_output_file,
    dash_is_stdout,
    echo,
    echo_bytes,
    file_argument,
    note,
    set_option,
)
from podnuma.cli.outputfile import format_from_suffix
from podnuma.fileio import atomic_write
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.pathcheck import cannot_write
from podnuma.inputs.text import TextInput
from podnuma.render.output import FORMATS, render_output
from podnuma.render.picture import render_png, render_svg, render_text
from podnuma.render.picture.text import TEXT_WIDTH
from podnuma.service import scenario as service

__all__ = ["topology_command"]

_SUFFIXES = {".svg": "svg", ".png": "png", ".txt": "text", ".json": "json", ".yaml": "yaml", ".yml": "yaml"}


def _format(fmt: str | None, output_file: Path | None) -> str:
    """The format: ``-o``'s (``table`` is ``text``), else the one
    ``--output-file``'s suffix names, else ``text``
    (:func:`~podnuma.cli.outputfile.format_from_suffix`: a usage error when
    the suffix is not one of :data:`_SUFFIXES` or names another format than
    ``-o``)."""
    return format_from_suffix(fmt, output_file, _SUFFIXES, "text", aliases={"table": "text"})


def _text_layout(to_file: bool) -> tuple[bool, int]:
    """Whether the text picture is coloured, and its width: as
    ``simulate``'s table decides (:func:`podnuma.render.table.make_console`:
    colour on a terminal with colours or with ``FORCE_COLOR``, none with
    ``NO_COLOR`` or ``TERM=dumb``); ``COLUMNS`` columns when set, else the
    terminal's width, else :data:`TEXT_WIDTH`; a file: no colour,
    ``COLUMNS`` or :data:`TEXT_WIDTH` columns."""
    from podnuma.render.table import make_console, plain_width  # (only for the text picture)

    if to_file or sys.stdout is None:
        return False, plain_width(TEXT_WIDTH)
    tty = is_terminal(sys.stdout)
    console = make_console(sys.stdout, width=None if tty else plain_width(TEXT_WIDTH))
    # (COLUMNS first: rich gives a dumb terminal 80 columns whatever it says)
    return console.color_system is not None, plain_width(console.width)


def _render(
    scenario: str, step: int | None, fmt: str, color: bool, set_values: tuple[str, ...] = (),
    width: int = TEXT_WIDTH,
) -> str | bytes:
    overrides = parse_overrides(set_values)
    topo = service.topology(
        TextInput.read(scenario, what="scenario"), step=step, note=note, overrides=overrides
    )
    machine, own = topo.run.machine, topo.ownership
    if fmt == "png":
        return render_png(machine, own)
    return render_output(fmt, topo.document, {
        "svg": lambda: render_svg(machine, own),
        "text": lambda: render_text(machine, own, color=color, width=width),
    })


def _write_output(path: Path, data: bytes) -> None:
    """Write the picture atomically (a temporary file renamed over the
    target, never a half-written file), as every result is written: never
    into a device, a named pipe or a socket, nor through a link to one
    (``-`` is standard output)."""
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        atomic_write(path, data, mode=0o644)  # (a picture is for sharing: as the reports are written)
    except OSError as e:
        raise cannot_write("--output-file", path, e) from None


@click.command("topology")
@file_argument("scenario")
@click.option(
    "--step", "-s", type=int, default=None,
    help="Show the CPUs after this step (index from 0; default: the last step).",
)
@click.option(
    "--output", "-o", "fmt", type=OutputFormat(FORMATS["topology"]), default=None,
    help="table (text: the same; the terminal's picture), svg, png, or json or yaml (the owners). "
    "Default: from --output-file's suffix, else table; a suffix naming another format is an error.",
)
@click.option(
    "--output-file", "output_file", type=NamedPath(path_type=Path, dir_okay=True, writes=True),
    default=None, callback=dash_is_stdout,
    help="Write to FILE (atomically) instead of standard output ('-': standard output). "
    "Its suffix names the format: .svg, .png, .txt, .json, .yaml or .yml (or none, with -o).",
)
@set_option
def topology_command(
    scenario: str, step: int | None, fmt: str | None, output_file: Path | None,
    set_values: tuple[str, ...],
) -> None:
    """Draw the machine of SCENARIO ('-': standard input) like lstopo, each
    CPU coloured by owner.

    Owners: reserved CPUs, the node shared pool, pod shared pools (pod-level
    resources) and containers' exclusive CPUs, after step --step.
    """
    form = _format(fmt, output_file)
    if form == "png" and output_file is None and is_terminal(sys.stdout):
        fail("will not write PNG bytes to a terminal: use --output-file FILE or redirect")
    if output_file is not None:
        target = output_file
        guard(lambda: check_output_file(target, "--output-file"))  # (before the drawing, as fleet analyze)
    color, width = _text_layout(output_file is not None) if form == "text" else (False, TEXT_WIDTH)
    data = guard(lambda: _render(scenario, step, form, color, set_values, width))
    # (encoded inside the guard: text with no UTF-8 is an error message, never a traceback)
    raw = guard(lambda: data.encode("utf-8") if isinstance(data, str) else data)
    if output_file is not None:
        out = output_file
        guard(lambda: _write_output(out, raw))
        return
    if isinstance(data, bytes):
        guard(lambda: echo_bytes(raw))
    else:
        text = data
        guard(lambda: echo(text))
