"""``podnuma simulate SCENARIO``: run a scenario through the kubelet's
admission and resource managers."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from podnuma.cli.app import guard
from podnuma.cli.options import (
    checkpoint_option,
    echo,
    file_argument,
    note_not_modelled,
    output_option,
)
from podnuma.fileio import write_checkpoint_dir
from podnuma.inputs.scenario import load_scenario
from podnuma.render.table import render_run
from podnuma.scenario.document import build_document, dump_json, dump_yaml, write_document
from podnuma.scenario.run import RunResult, run_scenario

__all__ = ["OUTPUTS", "format_run", "simulate_command"]

OUTPUTS = ("table", "wide", "json", "yaml")


def format_run(result: RunResult, output: str, *, detail: bool = True) -> str:
    """The run in format ``output`` (``table``, ``wide``, ``json``, ``yaml``)."""
    if output in ("table", "wide"):
        return render_run(result, wide=output == "wide")
    doc = build_document(result, detail=detail)
    return dump_json(doc) if output == "json" else dump_yaml(doc)


@click.command("simulate")
@file_argument("scenario")
@output_option(OUTPUTS, "table", "table (wide: every column) for people; json or yaml for the "
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
        loaded = load_scenario(scenario)
        note_not_modelled(loaded.config, loaded.name)
        result = run_scenario(loaded)
        if checkpoint_dir is not None:
            write_checkpoint_dir(checkpoint_dir, result.checkpoint_files)
        return result

    result = guard(go)
    if output in ("json", "yaml"):
        # streamed step by step: the document is never held whole
        guard(lambda: _stream(result, output, detail))
        return
    text = guard(lambda: format_run(result, output))
    guard(lambda: echo(text))


def _stream(result: RunResult, output: str, detail: bool) -> None:
    out = sys.stdout
    write_document(result, out, output, detail=detail)
    out.flush()
