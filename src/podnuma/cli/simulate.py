"""``podnuma simulate SCENARIO``: run a scenario through the kubelet's
admission and resource managers."""

from __future__ import annotations

from pathlib import Path

import click

from podnuma.cli.app import guard
from podnuma.cli.options import (
    checkpoint_option,
    echo,
    file_argument,
    output_option,
)
from podnuma.fileio import write_checkpoint_dir
from podnuma.inputs.scenario import load_scenario
from podnuma.render.table import render_run
from podnuma.scenario.document import build_document, dump_json, dump_yaml
from podnuma.scenario.run import RunResult, run_scenario

__all__ = ["OUTPUTS", "format_run", "simulate_command"]

OUTPUTS = ("table", "wide", "json", "yaml")


def format_run(result: RunResult, output: str) -> str:
    """The run in format ``output`` (``table``, ``wide``, ``json``, ``yaml``)."""
    if output in ("table", "wide"):
        return render_run(result, wide=output == "wide")
    doc = build_document(result)
    return dump_json(doc) if output == "json" else dump_yaml(doc)


@click.command("simulate")
@file_argument("scenario")
@output_option(OUTPUTS, "table", "table (wide: every column) for people; json or yaml for the "
               "output document.")
@checkpoint_option
def simulate_command(scenario: str, output: str, checkpoint_dir: Path | None) -> None:
    """Run SCENARIO (YAML or JSON; '-': standard input) through the kubelet's
    admission and resource managers."""

    def go() -> str:
        result = run_scenario(load_scenario(scenario))
        text = format_run(result, output)
        if checkpoint_dir is not None:
            write_checkpoint_dir(checkpoint_dir, result.checkpoint_files)
        return text

    text = guard(go)
    guard(lambda: echo(text))
