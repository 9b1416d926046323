"""``podnuma restart SCENARIO | --state-dir DIR``: what a kubelet restart
does to the pods running on a node (kubelet v1.37.2, kubernetes#140989)."""

from __future__ import annotations

from pathlib import Path

import click

from podnuma.analysis.restart import RestartReport, restart_document
from podnuma.cli.app import guard
from podnuma.cli.options import (
    FILE,
    READ_FILE,
    NamedPath,
    check_output_file,
    dash_refused,
    echo,
    note,
    output_option,
    set_option,
    stdin_used_once,
)
from podnuma.fileio import atomic_write
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.pathcheck import cannot_write
from podnuma.inputs.text import TextInput
from podnuma.render.colour import painted
from podnuma.render.output import render_output
from podnuma.render.restart import RESTART_COLOURS, render_restart
from podnuma.render.serialize import dump_scenario_json, dump_scenario_yaml
from podnuma.service import restart as service
from podnuma.service.state import one_machine

__all__ = ["restart_command"]


def _write_scenario(path: Path, r: RestartReport) -> None:
    # (JSON for a .json name, as every --as-scenario writes it; else YAML)
    text = dump_scenario_json(r.scenario) if path.suffix.lower() == ".json" else dump_scenario_yaml(r.scenario)
    try:
        atomic_write(path, text.encode(), mode=0o644)
    except OSError as e:
        raise cannot_write("--as-scenario", path, e) from None


@click.command("restart")
@click.argument("scenario", type=FILE, required=False)
@click.option("--state-dir", "state_dir", type=NamedPath(path_type=Path, file_okay=False, exists=True),
              default=None,
              help="A kubelet state directory (cpu_manager_state, memory_manager_state) instead of a scenario.")  # fmt: skip
@click.option("--pods", "pods", type=READ_FILE, default=None,
              help="With --state-dir: a 'kubectl get pods -o json' dump with the specs of the pods ('-': standard input).")  # fmt: skip
@click.option("--node", "node_file", type=READ_FILE, default=None,
              help="With --state-dir: the node (a scenario 'node' mapping or a scenario). Default: --sysfs.")  # fmt: skip
@click.option("--sysfs", "sysfs", type=NamedPath(path_type=Path, file_okay=False, exists=True), default=None,
              help="With --state-dir: the machine as a sysfs root (default /sys).")  # fmt: skip
@click.option("--kubelet-config", "config_file", type=READ_FILE, default=None,
              help="With --state-dir: the node's KubeletConfiguration, or a scenario file (its kubeletConfig or kubeletConfigFile); '-': standard input. Else inferred from the checkpoints.")  # fmt: skip
@click.option("--as-scenario", "as_scenario", type=NamedPath(path_type=Path, dir_okay=False, writes=True), default=None,
              callback=dash_refused,
              help="Write the restart as a scenario (checkpoints, state.pods, one addPod per pod) that "
              "'podnuma simulate' and the kubelet oracle replay to the same figures (.json: JSON, else YAML).")  # fmt: skip
@set_option
@output_option("restart", "table (wide: creation times, steps, why) for people; json or yaml for programs.")
def restart_command(
    scenario: str | None, state_dir: Path | None, pods: str | None, node_file: str | None,
    sysfs: Path | None, config_file: str | None, as_scenario: Path | None, set_values: tuple[str, ...],
    output: str,
) -> None:
    """Restart the kubelet of a node: after SCENARIO's steps (YAML or JSON;
    '-': standard input), or from a kubelet state directory (--state-dir),
    re-admit every running pod as kubelet v1.37.2 does (oldest first) and
    say which keep their CPUs and NUMA nodes, which move (their old CPUs
    stay taken) and which are rejected, with the kubelet's reason. --set
    changes the kubelet configuration the node runs and restarts with."""
    if scenario is not None and state_dir is not None:
        raise click.UsageError("SCENARIO and --state-dir DIR both given: give one of them (a scenario "
                               "to run, or the state directory of a node)")
    if scenario is None and state_dir is None:
        raise click.UsageError("give a SCENARIO or --state-dir DIR (one of them)")
    if scenario is not None and any(v is not None for v in (pods, node_file, sysfs, config_file)):
        raise click.UsageError("--pods, --node, --sysfs and --kubelet-config go with --state-dir")
    stdin_used_once(scenario, pods, node_file, config_file)
    if as_scenario is not None:
        scenario_path = as_scenario
        guard(lambda: check_output_file(scenario_path, "--as-scenario"))  # (before the work, as advise)

    def go() -> tuple[str, RestartReport]:
        overrides = parse_overrides(set_values)
        if scenario is not None:
            report = service.restart_after_scenario(
                TextInput.read(scenario, what="scenario"), note=note, overrides=overrides
            )
        else:
            assert state_dir is not None
            one_machine(node_file, sysfs)  # (before reading either, as state inspect)
            node = TextInput.read(node_file, what="node") if node_file is not None else None
            report = service.restart_state_dir(
                state_dir, pods=pods, node=node, sysfs=sysfs, kubelet_config=config_file, overrides=overrides
            )
        text = render_output(
            output, lambda: restart_document(report),
            {"table": lambda: painted(render_restart(report), RESTART_COLOURS),
             "wide": lambda: painted(render_restart(report, wide=True), RESTART_COLOURS)},
        )
        if as_scenario is not None:
            _write_scenario(as_scenario, report)
        return text, report

    text, report = guard(go)
    guard(lambda: echo(text))
    # (nothing said of --as-scenario: the file is there, as simulate's and explain's are)
