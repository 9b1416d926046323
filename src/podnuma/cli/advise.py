"""``podnuma advise FILE...``: propose the pod-level rewrite (KEP-5526) of
each pod and measure what it saves."""

from __future__ import annotations

import sys
from functools import partial

import click

from podnuma.cli.app import EXIT_INPUT, guard
from podnuma.cli.options import (
    FILE,
    config_option,
    echo,
    node_option,
    note,
    output_option,
    read_input,
    set_option,
    stdin_used_once,
)
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.text import TextInput
from podnuma.render.advice import advice_header, render_diff, render_yaml
from podnuma.render.output import render_output
from podnuma.service import whatif

__all__ = ["advise_command"]


@click.command("advise")
@click.argument("files", metavar="FILE...", nargs=-1, required=True, type=FILE)
@node_option
@config_option
@click.option("--diff", "as_diff", is_flag=True, help="Print unified diffs instead of the rewritten pods.")
@click.option(
    "--shared-pool-cpus", type=click.IntRange(min=1), default=None, metavar="N",
    help="Size the pod shared pool: budget = exclusive slices + N CPUs "
    "(default: keep the pod's CPU request as the budget).",
)
@output_option("advise", "yaml: the rewritten pods (savings as comments); json: a report for programs.")
@set_option
def advise_command(
    files: tuple[str, ...], node_file: str | None, config_file: str | None,
    as_diff: bool, shared_pool_cpus: int | None, output: str, set_values: tuple[str, ...],
) -> None:
    """Propose the pod-level rewrite (KEP-5526) of each Pod in FILE... (YAML
    documents, JSON, kubectl get pods lists; '-': standard input) and
    measure what it saves."""
    stdin_used_once(*files, node_file, config_file)
    pods = [partial(TextInput.read, path, what="pod") for path in files]
    got = guard(lambda: whatif.advise(
        pods, read_input(node_file, "node"), read_input(config_file, "kubelet configuration"),
        shared_pool_cpus=shared_pool_cpus, note=note, overrides=parse_overrides(set_values),
    ))
    s = got.setting
    header = advice_header(s.node_from, s.cfg_from, s.machine, s.config)
    render = render_diff if as_diff else render_yaml
    text = render_output(output, got.document, {"yaml": lambda: render(got.advices, header)})
    guard(lambda: echo(text))
    for message in got.errors:
        click.echo(f"error: {message}", err=True)
    if got.errors:
        sys.exit(EXIT_INPUT)
