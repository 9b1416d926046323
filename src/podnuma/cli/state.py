"""``podnuma state inspect``: what a kubelet state directory's checkpoints
say, checked for consistency, or turned into a scenario that replays it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["state_group"]


@click.group("state")
def state_group() -> None:
    """The kubelet's resource-manager checkpoints."""


def _load_config(path: Path) -> dict[str, Any]:
    import yaml

    from podnuma.errors import InputError

    name = "<stdin>" if str(path) == "-" else str(path)
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
        doc = yaml.safe_load(text)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", file=name) from None
    except yaml.YAMLError as err:
        raise InputError(f"invalid YAML: {err}", file=name) from None
    if not isinstance(doc, dict):
        raise InputError("expected a KubeletConfiguration mapping", file=name)
    return doc


@state_group.command("inspect")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@click.option("--pods", "pods", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
              default=None, help="A 'kubectl get pods -o json' dump ('-' for stdin): names, and entries of pods it lacks.")  # fmt: skip
@click.option("--sysfs", "sysfs", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The machine (a sysfs root, e.g. /sys): NUMA nodes of CPUs; the node of --as-scenario.")  # fmt: skip
@click.option("--as-scenario", is_flag=True, help="Print a scenario whose state: is this directory.")
@click.option("--kubelet-config", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
              default=None, help="With --as-scenario: the node's KubeletConfiguration.")  # fmt: skip
@click.option("--output", "-o", type=click.Choice(("table", "json", "yaml")), default="table", show_default=True)
def inspect_command(
    directory: Path,
    pods: Path | None,
    sysfs: Path | None,
    as_scenario: bool,
    kubelet_config: Path | None,
    output: str,
) -> None:
    """Read DIRECTORY's cpu_manager_state and memory_manager_state (every
    format version, checksums verified) and print per pod and container the
    CPUs, NUMA nodes and memory blocks, and every inconsistency."""
    from podnuma.analysis.state import inspect_state, scenario_document, state_document
    from podnuma.cli.app import _guard
    from podnuma.inputs.state import read_pods_dump, read_state_dir
    from podnuma.render.scenario_yaml import dump_scenario_yaml

    def go() -> tuple[str, list[str]]:
        files = read_state_dir(directory)
        dump = read_pods_dump(pods) if pods is not None else None
        node_map: dict[str, Any] | None = None
        machine = None
        if sysfs is not None:
            from podnuma.cli.node import discover_document
            from podnuma.inputs.discover import load_node

            node_doc = discover_document(sysfs, None)["node"]
            assert isinstance(node_doc, dict)
            node_map = node_doc
            machine = load_node(node_doc, base_dir=Path.cwd())
        if as_scenario:
            config = _load_config(kubelet_config) if kubelet_config is not None else None
            doc, notes = scenario_document(files, node=node_map, kubelet_config=config)
            text = json.dumps(doc, indent=2) + "\n" if output == "json" else dump_scenario_yaml(doc)
            return text, notes
        report = inspect_state(files, pods_dump=dump, machine=machine)
        if output == "table":
            from podnuma.render.state import render_state_text

            return render_state_text(report), []
        sdoc = state_document(report)
        if output == "json":
            return json.dumps(sdoc, indent=2) + "\n", []
        from podnuma.scenario.document import dump_yaml

        return dump_yaml(sdoc), []

    text, notes = _guard(go)
    click.echo(text, nl=False)
    for note in notes:
        click.echo(f"note: {note}", err=True)
