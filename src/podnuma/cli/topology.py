"""``podnuma topology SCENARIO``: the machine as lstopo draws it, each CPU
coloured by its owner after a step of the scenario.

``-o table|svg|png|json|yaml`` is the format (``text``: ``table``; default: from ``--output-file``'s
suffix, else table); ``--output-file FILE`` writes the picture atomically
instead of to standard output.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import click

from podnuma.cli.app import fail, guard
from podnuma.cli.guard import is_terminal
from podnuma.cli.options import dash_is_stdout, echo, echo_bytes, file_argument, note, set_option
from podnuma.errors import InputError
from podnuma.fileio import atomic_write
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.text import TextInput
from podnuma.render.output import FORMATS, render_output
from podnuma.render.picture import render_png, render_svg, render_text
from podnuma.service import scenario as service

__all__ = ["topology_command"]

_SUFFIXES = {".svg": "svg", ".png": "png", ".txt": "text", ".json": "json", ".yaml": "yaml", ".yml": "yaml"}


def _render(
    scenario: str, step: int | None, fmt: str, color: bool, set_values: tuple[str, ...] = ()
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
        "text": lambda: render_text(machine, own, color=color),
    })


def _write_output(path: Path, data: bytes) -> None:
    """Write the picture: atomically (a temporary file renamed over the
    target, never a half-written file) when the target is, or will be, a
    regular file; straight into anything else (``/dev/stdout``, a FIFO),
    which must not be replaced."""
    try:
        if path.exists() and not path.is_file():
            if path.is_dir():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
            with path.open("wb") as fh:
                fh.write(data)
            return
        atomic_write(path, data, mode=0o644)  # (a picture is for sharing: as the reports are written)
    except OSError as e:
        raise InputError(f"--output-file: cannot write: {e.strerror or e}", file=str(path)) from None


def _color(fmt: str, to_file: bool) -> bool:
    if fmt != "text" or to_file:
        return False
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or is_terminal(sys.stdout)


@click.command("topology")
@file_argument("scenario")
@click.option(
    "--step", "-s", type=int, default=None,
    help="Show the CPUs after this step (index from 0; default: the last step).",
)
@click.option(
    "--output", "-o", "fmt", type=click.Choice(FORMATS["topology"]), default=None,
    help="table (text: the same; the terminal's picture), svg, png, or json or yaml (the owners). "
    "Default: from --output-file's suffix, else table.",
)
@click.option(
    "--output-file", "output_file", type=click.Path(path_type=Path, dir_okay=True),
    default=None, callback=dash_is_stdout,
    help="Write to FILE (atomically) instead of standard output ('-': standard output).",
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
    if fmt is None:
        fmt = _SUFFIXES.get(output_file.suffix.lower(), "text") if output_file else "text"
    elif fmt == "table":  # (the name every command gives its view for people)
        fmt = "text"
    if fmt == "png" and output_file is None and is_terminal(sys.stdout):
        fail("will not write PNG bytes to a terminal: use --output-file FILE or redirect")
    color = _color(fmt, output_file is not None)
    data = guard(lambda: _render(scenario, step, fmt, color, set_values))
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if output_file is not None:
        out = output_file
        guard(lambda: _write_output(out, raw))
        return
    if isinstance(data, bytes):
        guard(lambda: echo_bytes(raw))
    else:
        text = data
        guard(lambda: echo(text))
