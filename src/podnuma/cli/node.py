"""``podnuma node discover``: this machine (or a copy of ``/sys``) as the
scenario's ``node`` mapping, in the ``cpus`` table form.

The machine is read by the same sysfs reader as the scenario's ``sysfs``
form, so the printed mapping, pasted into a scenario, gives ``simulate`` the
very machine the ``sysfs`` form gives.
"""

from __future__ import annotations

from pathlib import Path

import click

from podnuma.cli.app import guard
from podnuma.cli.options import NamedPath, echo, output_option
from podnuma.render.output import render_output
from podnuma.render.serialize import dump_scenario_yaml
from podnuma.service.machine import discover

__all__ = ["node_group"]

DEFAULT_SYSFS = Path("/sys")


@click.group("node")
def node_group() -> None:
    """The machine the kubelet sees."""


@node_group.command("discover")
@click.option(
    "--sysfs",
    "root",
    type=NamedPath(path_type=Path, file_okay=False, exists=True),
    default=DEFAULT_SYSFS,
    show_default=True,
    help="Root of a sysfs tree (or of a copy holding sys/).",
)
@click.option("--name", default=None, help="The node's name in the mapping (not blank).")
@output_option("node discover", "yaml to paste into a scenario, or json.")
def discover_command(root: Path, name: str | None, output: str) -> None:
    """Print this machine as a scenario ``node:`` mapping (CPUs with core,
    socket, NUMA node, uncore cache and online state; memory and hugepage
    pools per NUMA node; distances; the CPU count and memory where cadvisor
    reports other than the rows and nodes add up to)."""
    text = guard(lambda: render_output(output, lambda: discover(root, name), yaml=dump_scenario_yaml))
    guard(lambda: echo(text))
