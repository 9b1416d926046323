"""``podnuma simulate SCENARIO``: run a scenario through the kubelet's
admission and resource managers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from podnuma.cli.app import guard
from podnuma.cli.options import (
    as_scenario_option,
    check_output_file,
    checkpoint_option,
    echo,
    file_argument,
    note,
    output_option,
    set_option,
    write_scenario_file,
)
from podnuma.cli.simulate_stream import simulate_streamed
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.text import TextInput
from podnuma.render.serialize import write_run_document
from podnuma.service import scenario as service

if TYPE_CHECKING:
    from podnuma.scenario.run import RunResult

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
@set_option
@as_scenario_option
def simulate_command(
    scenario: str, output: str, checkpoint_dir: Path | None, detail: bool,
    set_values: tuple[str, ...], as_scenario: Path | None,
) -> None:
    """Run SCENARIO (YAML or JSON; '-': standard input) through the kubelet's
    admission and resource managers."""
    if detail and output not in ("json", "yaml"):
        raise click.UsageError(f"--detail adds to the json/yaml document; -o {output} has none (give -o json or -o yaml)")

    if as_scenario is None:
        # streamed step by step (the fast path runs the same function)
        simulate_streamed(scenario, output, detail, checkpoint_dir, set_values, note, echo)
        return
    scenario_path = as_scenario
    guard(lambda: check_output_file(scenario_path, "--as-scenario"))  # (before the work, as advise)

    def go() -> tuple[RunResult, dict[str, Any]]:
        overrides = parse_overrides(set_values)
        loaded, result = service.run(
            TextInput.read(scenario, what="scenario"), note=note, overrides=overrides
        )
        if checkpoint_dir is not None:
            from podnuma.fileio import write_checkpoint_dir

            write_checkpoint_dir(checkpoint_dir, result.checkpoint_files)
        if as_scenario is not None:
            write_scenario_file(as_scenario, service.effective_scenario(loaded), loaded.overrides)
        return result, service.config_record(loaded)

    result, record = guard(go)
    if output in ("json", "yaml"):
        # streamed step by step: the document is never held whole
        guard(lambda: _stream(result, output, detail, record))
        return
    from podnuma.render.table import render_run  # the table's libraries: only for it

    text = guard(lambda: render_run(result, wide=output == "wide"))
    guard(lambda: echo(text))


def _stream(result: RunResult, output: str, detail: bool, record: dict[str, Any]) -> None:
    out = sys.stdout
    if out is None:  # closed when the command started: nowhere to write (as click, nothing)
        return
    write_run_document(result, out, output, detail=detail, extra=record)
    out.flush()
