"""``podnuma simulate SCENARIO``: run a scenario through the kubelet's
admission and resource managers."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import IO

import click

from podnuma.cli.app import guard
from podnuma.cli.options import checkpoint_option, echo, file_argument, note, output_option
from podnuma.fileio import write_checkpoint_dir
from podnuma.inputs.text import TextInput
from podnuma.render.serialize import write_run_stream
from podnuma.render.table import render_run
from podnuma.scenario.document import ordered_checkpoints
from podnuma.scenario.run import RunResult
from podnuma.service import scenario as service

__all__ = ["simulate_command"]


@click.command("simulate")
@file_argument("scenario")
@output_option("simulate", "table (wide: every column) for people; json or yaml for the "
               "output document.")
@checkpoint_option
@click.option(
    "--detail",
    is_flag=True,
    help="json/yaml: also every provider's hints (providerHints) and the whole "
    "PodResources list (podResources) in each step.",
)
def simulate_command(
    scenario: str, output: str, checkpoint_dir: Path | None, detail: bool
) -> None:
    """Run SCENARIO (YAML or JSON; '-': standard input) through the kubelet's
    admission and resource managers."""

    if output in ("json", "yaml"):
        # streamed step by step, into a spool that is printed once the whole
        # run succeeded: neither the input's steps, their results nor the
        # document are held whole, and nothing is printed before the input
        # has been read and played to the end
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL, mode="w+", encoding="utf-8") as spool:
            guard(lambda: _stream(scenario, spool, output, detail, checkpoint_dir))
            guard(lambda: _print(spool))
        return

    def go() -> RunResult:
        _, result = service.run(TextInput.read(scenario, what="scenario"), note=note)
        if checkpoint_dir is not None:
            write_checkpoint_dir(checkpoint_dir, result.checkpoint_files)
        return result

    result = guard(go)
    text = guard(lambda: render_run(result, wide=output == "wide"))
    guard(lambda: echo(text))


#: output held in memory before the spool moves to a temporary file
_SPOOL = 16 << 20


def _stream(
    scenario: str, spool: IO[str], output: str, detail: bool, checkpoint_dir: Path | None
) -> None:
    run = service.stream(TextInput.read(scenario, what="scenario"), note=note, pod_resources=detail)
    write_run_stream(
        run.node, run.results(), lambda: ordered_checkpoints(run.checkpoints()), spool, output,
        detail=detail,
    )
    if checkpoint_dir is not None:
        write_checkpoint_dir(checkpoint_dir, run.checkpoint_files())


def _print(spool: IO[str]) -> None:
    spool.seek(0)
    out = sys.stdout
    shutil.copyfileobj(spool, out, 1 << 20)
    out.flush()
