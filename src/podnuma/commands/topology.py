"""``podnuma topology SCENARIO``: the machine as lstopo draws it, each CPU
coloured by its owner after a step of the scenario.

Thin: loads and runs the scenario, picks the step's ownership
(:func:`podnuma.render.picture.ownership_after`), renders and writes.
Invalid input (the scenario, ``--step``, an output file that cannot be
written) exits 2 with an ``error:`` message, as ``podnuma simulate`` does.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from podnuma.errors import InputError, KubeletStartupError

__all__ = ["topology_command", "FORMATS"]

FORMATS = ("text", "svg", "png")
EXIT_BUG = 1
EXIT_INPUT = 2
_SUFFIXES = {".svg": "svg", ".png": "png", ".txt": "text"}


def _fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def _render(scenario: Path, step: int | None, fmt: str, color: bool) -> str | bytes:
    from podnuma.render.picture import ownership_after, render_png, render_svg, render_text
    from podnuma.scenario.load import load_scenario
    from podnuma.scenario.run import run_scenario

    result = run_scenario(load_scenario(scenario))
    own = ownership_after(result, step)
    if fmt == "svg":
        return render_svg(result.machine, own)
    if fmt == "png":
        return render_png(result.machine, own)
    return render_text(result.machine, own, color=color)


def _run(scenario: Path, step: int | None, fmt: str, color: bool) -> str | bytes:
    from podnuma.cm.checkpoint import CheckpointError
    from podnuma.scenario.run import StartupFailure

    try:
        return _render(scenario, step, fmt, color)
    except InputError as e:
        _fail(str(e))
    except CheckpointError as e:  # a KubeletStartupError: catch it first
        _fail(f"invalid checkpoint: {e}")
    except KubeletStartupError as e:
        where = e.location() if isinstance(e, StartupFailure) else ""
        _fail(f"kubelet would not start: {e}" + (f" ({where})" if where else ""))
    except Exception as e:
        if os.environ.get("PODNUMA_DEBUG") == "1":
            raise
        _fail(
            f"internal error: {type(e).__name__}: {e} (set PODNUMA_DEBUG=1 for a traceback)",
            EXIT_BUG,
        )


def _write_output(path: Path, data: bytes) -> None:
    """Write the picture: atomically (a temporary file renamed over the
    target, never a half-written file) when the target is, or will be, a
    regular file; straight into anything else (``/dev/stdout``, a FIFO),
    which must not be replaced."""
    from podnuma.fileio import atomic_write

    if path.exists() and not path.is_file():
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        with path.open("wb") as fh:
            fh.write(data)
        return
    atomic_write(path, data)


@click.command("topology")
@click.argument("scenario", type=click.Path(path_type=Path, dir_okay=True))
@click.option(
    "--step", "-s", type=int, default=None,
    help="Show the CPUs after this step (index from 0; default: the last step).",
)
@click.option(
    "--format", "-f", "fmt", type=click.Choice(FORMATS), default=None,
    help="text (terminal), svg or png. Default: from the -o file's suffix, else text.",
)
@click.option(
    "--output", "-o", "output", type=click.Path(path_type=Path, dir_okay=True), default=None,
    help="Write to FILE instead of standard output.",
)
def topology_command(scenario: Path, step: int | None, fmt: str | None, output: Path | None) -> None:
    """Draw the machine of SCENARIO like lstopo, each CPU coloured by owner.

    Owners: reserved CPUs, the node shared pool, pod shared pools (pod-level
    resources) and containers' exclusive CPUs, after step --step.
    """
    if fmt is None:
        fmt = _SUFFIXES.get(output.suffix.lower(), "text") if output is not None else "text"
    out = sys.stdout
    color = (
        fmt == "text" and output is None and out.isatty() and "NO_COLOR" not in os.environ
    )
    if fmt == "png" and output is None and out.isatty():
        _fail("will not write PNG bytes to a terminal: use -o FILE or redirect the output")
    data = _run(scenario, step, fmt, color)
    if output is not None:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        try:
            _write_output(output, raw)
        except OSError as e:
            _fail(f"cannot write {output}: {e.strerror or e}")
        return
    if isinstance(data, bytes):
        with click.open_file("-", "wb") as stream:
            stream.write(data)
    else:
        click.echo(data, nl=False)
