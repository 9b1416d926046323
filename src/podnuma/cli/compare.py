"""``podnuma compare POD``: a pod as written vs its other form (KEP-5526)."""

from __future__ import annotations

import click

from podnuma.cli.app import guard, is_quiet
from podnuma.cli.options import (
    config_option,
    echo,
    file_argument,
    node_option,
    note,
    output_option,
    read_input,
    stdin_used_once,
)
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
def compare_command(
    pod_file: str, node_file: str | None, config_file: str | None, output: str
) -> None:
    """What pod-level resources (KEP-5526) change for POD ('-': standard
    input): the pod as written vs its other form (pod-level <->
    per-container), under topology scope pod and container, each on an empty
    node."""
    stdin_used_once(pod_file, node_file, config_file)

    def go() -> tuple[str, list[str]]:
        got = whatif.compare(
            lambda: TextInput.read(pod_file, what="pod"), read_input(node_file, "node"),
            read_input(config_file, "kubelet configuration"), note=note,
        )
        setting = got.setting

        def table() -> str:
            return "\n".join(
                to_text(comparison_renderable(c, node=setting.node_from, config=setting.cfg_from))
                + "".join(f"{line}\n" for line in risk_lines([r for r in got.restart if r.pod == c.pod]))
                for c in got.comparisons
            )

        return render_output(output, got.document, {"table": table}), got.skipped

    text, skipped = guard(go)
    if not is_quiet():
        for line in skipped:
            click.echo(line, err=True)
    guard(lambda: echo(text))
