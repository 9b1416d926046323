"""``podnuma compare POD``: a pod as written vs its other form (KEP-5526)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import click

from podnuma.cli.app import guard
from podnuma.cli.options import (
    NamedPath,
    config_option,
    echo,
    file_argument,
    node_option,
    note,
    output_option,
    read_input,
    set_option,
    stdin_used_once,
)
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.pathcheck import check_empty
from podnuma.inputs.text import TextInput
from podnuma.render.compare import comparison_renderable
from podnuma.render.output import render_output
from podnuma.render.table import to_text
from podnuma.service import whatif
from podnuma.service.restart import risk_lines

__all__ = ["compare_command"]


@click.command("compare")
@file_argument("pod_file", metavar="POD")
@node_option
@config_option
@output_option("compare", "table for people; json or yaml for programs.")
@set_option
@click.option("--as-scenario", "scenario_dir", default=None, metavar="DIR",
              type=NamedPath(path_type=Path, file_okay=False),
              help="Also write each run as a scenario into this new or empty directory "
                   "(NAMESPACE.NAME.FORM.scope-SCOPE.yaml: the pod's copies until the first "
                   "rejection), for podnuma simulate and the oracle.")
def compare_command(
    pod_file: str, node_file: str | None, config_file: str | None, output: str,
    set_values: tuple[str, ...], scenario_dir: Path | None = None,
) -> None:
    """What pod-level resources (KEP-5526) change for POD ('-': standard
    input; Pods, and the pod template of Deployments, StatefulSets,
    DaemonSets, ReplicaSets, Jobs, CronJobs; Lists of them): the pod as
    written vs its other form (pod-level <-> per-container), under topology
    scope pod and container, each on an empty node."""
    stdin_used_once(pod_file, node_file, config_file)
    made: list[Path] = []
    if scenario_dir is not None:  # (before any work: an earlier run's scenarios would stay beside)
        where = scenario_dir
        guard(lambda: check_empty(where, "--as-scenario", "the scenarios go into a new or empty directory"))
        # the directories writing into it makes (deepest first)
        made = [p for p in (scenario_dir, *scenario_dir.parents) if not os.path.lexists(p)]
    written: list[int] = []

    def go() -> tuple[str, list[str]]:
        overrides = parse_overrides(set_values)
        got = whatif.compare(
            lambda: TextInput.read(pod_file, what="pod"), read_input(node_file, "node"),
            read_input(config_file, "kubelet configuration"), note=note, overrides=overrides,
        )
        setting = got.setting

        def table() -> str:
            # each pod's own restart lines, by its place in the input: two
            # pods may have the same name (variants of one pod, compared)
            return "\n".join(
                to_text(comparison_renderable(
                    c, node=setting.node_from, config=setting.cfg_from, source=got.source_words(i),
                    restart=risk_lines(got.restart_of(i)),
                ))
                for i, c in enumerate(got.comparisons)
            )

        text = render_output(output, got.document, {"table": table})
        if scenario_dir is not None:  # (every file, or none, before anything is printed)
            written.append(whatif.write_compare_scenarios(got, scenario_dir, made))
        return text, got.skipped

    try:
        text, skipped = guard(go)
    except SystemExit:
        for d in made:  # (made for the scenarios, none written: removed when empty)
            with contextlib.suppress(OSError):
                d.rmdir()
        raise
    for line in skipped:
        note(line)  # (not with --quiet)
    if scenario_dir is not None and written:
        note(f"wrote {written[0]} scenario(s) to {scenario_dir} (podnuma simulate replays each run)")
    guard(lambda: echo(text))
