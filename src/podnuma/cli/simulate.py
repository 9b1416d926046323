"""``podnuma simulate SCENARIO``: run a scenario through the kubelet's
admission and resource managers."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from podnuma.cli.app import guard
from podnuma.cli.options import checkpoint_option, echo, file_argument, note, output_option
from podnuma.fileio import write_checkpoint_dir
from podnuma.inputs.text import TextInput
from podnuma.render.serialize import write_run_document
from podnuma.render.table import render_run
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

    def go() -> RunResult:
        _, result = service.run(TextInput.read(scenario, what="scenario"), note=note)
        if checkpoint_dir is not None:
            write_checkpoint_dir(checkpoint_dir, result.checkpoint_files)
        return result

    result = guard(go)
    if output in ("json", "yaml"):
        # streamed step by step: the document is never held whole
        guard(lambda: _stream(result, output, detail))
        return
    text = guard(lambda: render_run(result, wide=output == "wide"))
    guard(lambda: echo(text))


def _stream(result: RunResult, output: str, detail: bool) -> None:
    out = sys.stdout
    write_run_document(result, out, output, detail=detail)
    out.flush()
