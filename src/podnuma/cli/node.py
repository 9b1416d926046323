"""``podnuma node discover``: this machine (or a copy of ``/sys``) as the
scenario's ``node`` mapping, in the ``cpus`` table form.

The machine is read by the same sysfs reader as the scenario's ``sysfs``
form, so the printed mapping, pasted into a scenario, gives ``simulate`` the
very machine the ``sysfs`` form gives.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from podnuma.cli.app import guard
from podnuma.cli.options import echo, output_option
from podnuma.errors import InputError
from podnuma.inputs.discover.export import node_document
from podnuma.inputs.discover.machineinfo import build_machine
from podnuma.inputs.discover.sysfs import offline_cpus, read_sysfs
from podnuma.render.scenario_yaml import dump_scenario_yaml

__all__ = ["discover_document", "node_group"]

DEFAULT_SYSFS = Path("/sys")


@click.group("node")
def node_group() -> None:
    """The machine the kubelet sees."""


def discover_document(root: Path, name: str | None) -> dict[str, object]:
    """``{"node": {...}}`` for the sysfs tree at ``root``."""
    try:
        info = read_sysfs(root)
        build_machine(info)  # the kubelet's own checks (e.g. no online CPU)
        offline = offline_cpus(root)
    except InputError as err:
        raise err if err.file else err.in_file(str(root)) from None
    return {"node": node_document(info, offline=offline, name=name)}


@node_group.command("discover")
@click.option(
    "--sysfs",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_SYSFS,
    show_default=True,
    help="Root of a sysfs tree (or of a copy holding sys/).",
)
@click.option("--name", default=None, help="The node's name in the mapping.")
@output_option(("yaml", "json"), "yaml", "yaml to paste into a scenario, or json.")
def discover_command(root: Path, name: str | None, output: str) -> None:
    """Print this machine as a scenario ``node:`` mapping (CPUs with core,
    socket, NUMA node, uncore cache and online state; memory and hugepage
    pools per NUMA node; distances)."""

    def go() -> str:
        doc = discover_document(root, name)
        return json.dumps(doc, indent=2) + "\n" if output == "json" else dump_scenario_yaml(doc)

    text = guard(go)
    guard(lambda: echo(text))
