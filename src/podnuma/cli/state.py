"""``podnuma state inspect``: what a kubelet state directory's checkpoints
say, checked for consistency, or turned into a scenario that replays it."""

from __future__ import annotations

from pathlib import Path

import click

from podnuma.analysis.state import state_document
from podnuma.cli.app import guard, is_quiet
from podnuma.cli.options import (
    READ_FILE,
    NamedPath,
    echo,
    output_option,
    set_option,
    stdin_used_once,
)
from podnuma.errors import InputError
from podnuma.inputs.overrides import parse_overrides
from podnuma.render.colour import painted
from podnuma.render.output import render_output
from podnuma.render.serialize import dump_scenario_json, dump_scenario_yaml
from podnuma.render.state import STATE_COLOURS, render_state_text
from podnuma.service import state as service

__all__ = ["state_group"]


@click.group("state")
def state_group() -> None:
    """The kubelet's resource-manager checkpoints."""


@state_group.command("inspect")
@click.argument("directory", type=NamedPath(path_type=Path, file_okay=False, exists=True))
@click.option("--pods", "pods", type=READ_FILE, default=None,
              help="A 'kubectl get pods -o json' dump ('-': standard input): names, and entries of pods it lacks.")  # fmt: skip
@click.option("--sysfs", "sysfs", type=NamedPath(path_type=Path, file_okay=False, exists=True), default=None,
              help="The machine (a sysfs root, e.g. /sys): NUMA nodes of CPUs; the node of --as-scenario.")  # fmt: skip
@click.option("--node", "node_file", type=READ_FILE, default=None,
              help="The machine as a node form file or a scenario file (its node), as --node of "
                   "simulate/compare: NUMA nodes of CPUs; the node of --as-scenario.")  # fmt: skip
@click.option("--as-scenario", is_flag=True, help="Print a scenario whose state: is this directory.")
@click.option("--kubelet-config", "config_file", type=READ_FILE, default=None,
              help="With --as-scenario: the node's KubeletConfiguration, or a scenario file (its kubeletConfig or kubeletConfigFile); '-': standard input.")  # fmt: skip
@output_option("state inspect", "table for people; json or yaml for the report (or the scenario).")
@set_option
def inspect_command(
    directory: Path,
    pods: str | None,
    sysfs: Path | None,
    node_file: str | None,
    as_scenario: bool,
    config_file: str | None,
    output: str,
    set_values: tuple[str, ...],
) -> None:
    """Read DIRECTORY's cpu_manager_state and memory_manager_state (every
    format version, checksums verified) and print per pod and container the
    CPUs, NUMA nodes and memory blocks, and every inconsistency."""
    stdin_used_once(pods, config_file, node_file)

    def go() -> tuple[str, list[str]]:
        overrides = parse_overrides(set_values)
        if overrides and not as_scenario:
            raise InputError("changes the configuration of --as-scenario: give --as-scenario too",
                             file="--set")
        if config_file is not None and not as_scenario:
            raise InputError("is the configuration of --as-scenario: give --as-scenario too",
                             file="--kubelet-config")
        if as_scenario:
            got = service.as_scenario(
                directory, pods=pods, sysfs=sysfs, kubelet_config=config_file, node=node_file,
                overrides=overrides,
            )
            scenario = got.document
            text = render_output(output, lambda: scenario, {"table": lambda: dump_scenario_yaml(scenario)},
                                 yaml=dump_scenario_yaml, json=dump_scenario_json)
            return text, got.notes
        report = service.inspect(directory, pods=pods, sysfs=sysfs, node=node_file)
        return render_output(output, lambda: state_document(report),
                             {"table": lambda: painted(render_state_text(report), STATE_COLOURS)}), []

    text, notes = guard(go)
    guard(lambda: echo(text))
    if not is_quiet():
        for line in notes:
            click.echo(f"note: {line}", err=True)
