"""``podnuma state inspect``: what a kubelet state directory's checkpoints
say, checked for consistency, or turned into a scenario that replays it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from podnuma.analysis.state import inspect_state, scenario_document, state_document
from podnuma.cli.app import guard, is_quiet
from podnuma.cli.node import discover_document
from podnuma.cli.options import FILE, echo, output_option, stdin_used_once
from podnuma.inputs.discover import load_node
from podnuma.inputs.state import read_kubelet_config_mapping, read_pods_dump, read_state_dir
from podnuma.render.scenario_yaml import dump_scenario_yaml
from podnuma.render.state import render_state_text
from podnuma.scenario.document import dump_yaml

__all__ = ["state_group"]


@click.group("state")
def state_group() -> None:
    """The kubelet's resource-manager checkpoints."""


@state_group.command("inspect")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option("--pods", "pods", type=FILE, default=None,
              help="A 'kubectl get pods -o json' dump ('-': standard input): names, and entries of pods it lacks.")  # fmt: skip
@click.option("--sysfs", "sysfs", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The machine (a sysfs root, e.g. /sys): NUMA nodes of CPUs; the node of --as-scenario.")  # fmt: skip
@click.option("--as-scenario", is_flag=True, help="Print a scenario whose state: is this directory.")
@click.option("--kubelet-config", "config_file", type=FILE, default=None,
              help="With --as-scenario: the node's KubeletConfiguration (or a scenario file; '-': standard input).")  # fmt: skip
@output_option(("table", "json", "yaml"), "table", "table for people; json or yaml for the report (or the scenario).")
def inspect_command(
    directory: Path,
    pods: str | None,
    sysfs: Path | None,
    as_scenario: bool,
    config_file: str | None,
    output: str,
) -> None:
    """Read DIRECTORY's cpu_manager_state and memory_manager_state (every
    format version, checksums verified) and print per pod and container the
    CPUs, NUMA nodes and memory blocks, and every inconsistency."""
    stdin_used_once(pods, config_file)

    def go() -> tuple[str, list[str]]:
        files = read_state_dir(directory)
        dump = read_pods_dump(pods) if pods is not None else None
        node_map: dict[str, Any] | None = None
        machine = None
        if sysfs is not None:
            node_doc = discover_document(sysfs, None)["node"]
            assert isinstance(node_doc, dict)
            node_map = node_doc
            machine = load_node(node_doc, base_dir=Path.cwd())
        if as_scenario:
            config = read_kubelet_config_mapping(config_file) if config_file is not None else None
            doc, notes = scenario_document(files, node=node_map, kubelet_config=config)
            text = json.dumps(doc, indent=2) + "\n" if output == "json" else dump_scenario_yaml(doc)
            return text, notes
        report = inspect_state(files, pods_dump=dump, machine=machine)
        if output == "table":
            return render_state_text(report), []
        sdoc = state_document(report)
        return (json.dumps(sdoc, indent=2) + "\n" if output == "json" else dump_yaml(sdoc)), []

    text, notes = guard(go)
    guard(lambda: echo(text))
    if not is_quiet():
        for note in notes:
            click.echo(f"note: {note}", err=True)
