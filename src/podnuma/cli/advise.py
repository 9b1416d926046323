"""``podnuma advise FILE...``: search the pod-level rewrite (KEP-5526) of
each pod that the kubelet admits on the node, and measure what it saves and
what it changes."""

from __future__ import annotations

import sys
from functools import partial

import click

from podnuma.analysis.advise import DEFAULT_STRATEGY, STRATEGIES
from podnuma.cli.app import EXIT_INPUT, guard
from podnuma.cli.guard import one_line
from podnuma.cli.options import (
    FILE,
    config_option,
    dash_refused,
    echo,
    node_option,
    note,
    output_option,
    read_input,
    set_option,
    stdin_used_once,
)
from podnuma.errors import InputError
from podnuma.fileio import atomic_write
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.text import TextInput
from podnuma.render.advice import advice_header, render_diff, render_yaml
from podnuma.render.output import render_output
from podnuma.render.serialize import dump_json, dump_yaml
from podnuma.service import whatif
from podnuma.service.restart import risk_lines

__all__ = ["advise_command"]


def _pool_size(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """``--shared-pool-cpus``: ``auto`` (None: searched) or a whole number
    of CPUs >= 1."""
    if value is None or value == "auto":
        return None
    text = value.strip()
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise click.BadParameter(f"{value!r}: expected auto or a whole number of CPUs >= 1")


def _write_scenario(path: str, scenario: object) -> None:
    # (JSON for a .json name, as restart --as-scenario writes it; else YAML)
    text = dump_json(scenario) if path.lower().endswith(".json") else dump_yaml(scenario)
    try:
        atomic_write(path, text.encode("utf-8"), mode=0o644)
    except OSError as e:
        raise InputError(f"--as-scenario: cannot write: {e.strerror or e}", file=path) from None


_STRATEGY_HELP = "; ".join(f"{k}: {v}" for k, v in STRATEGIES.items())


@click.command("advise")
@click.argument("files", metavar="FILE...", nargs=-1, required=True, type=FILE)
@node_option
@config_option
@click.option("--diff", "as_diff", is_flag=True,
              help="Print unified diffs instead of the rewritten pods (what each moved container loses is "
              "listed); with -o pods only.")
@click.option(
    "--shared-pool-cpus", type=str, callback=_pool_size, default="auto", show_default=True, metavar="auto|N",
    help="The pod shared pool: auto searches the size the kubelet admits (per --strategy); "
    "N: budget = exclusive slices + N CPUs, that size only.",
)
@click.option("--strategy", type=click.Choice(list(STRATEGIES)), default=DEFAULT_STRATEGY, show_default=True,
              help=_STRATEGY_HELP)
@click.option("--sidecar", "sidecars", multiple=True, metavar="NAME",
              help="Treat the container NAME as a sidecar (repeatable); native sidecars and "
              "well-known injectors' containers are recognised without it.")
@click.option("--as-scenario", "as_scenario", type=click.Path(dir_okay=False, allow_dash=False), default=None,
              callback=dash_refused,
              metavar="FILE", help="Also write a scenario that replays every figure (podnuma simulate FILE).")
@output_option("advise", "pods: the rewritten pods as YAML (savings as comments; --diff: unified diffs); "
               "json or yaml: the report for programs.")
@set_option
def advise_command(
    files: tuple[str, ...], node_file: str | None, config_file: str | None,
    as_diff: bool, shared_pool_cpus: int | None, strategy: str, sidecars: tuple[str, ...],
    as_scenario: str | None, output: str, set_values: tuple[str, ...],
) -> None:
    """Search the pod-level rewrite (KEP-5526) of each Pod or workload in
    FILE... (YAML documents, JSON, kubectl get lists; '-': standard input)
    that the kubelet admits on the node, and measure what it saves and
    changes."""
    stdin_used_once(*files, node_file, config_file)
    if as_diff and output != "pods":
        raise click.UsageError(f"--diff goes with -o pods (the rewritten pods), not -o {output}")
    pods = [partial(TextInput.read, path, what="pod") for path in files]
    pool = shared_pool_cpus
    got = guard(lambda: whatif.advise(
        pods, read_input(node_file, "node"), read_input(config_file, "kubelet configuration"),
        shared_pool_cpus=pool, note=note, strategy=strategy, sidecars=sidecars,
        with_scenario=as_scenario is not None, overrides=parse_overrides(set_values),
    ))
    if got.errors:  # every bad input named, one line each, and nothing else printed or written
        for message in got.errors:
            click.echo(f"error: {one_line(message)}", err=True)
        sys.exit(EXIT_INPUT)
    s = got.setting
    header = advice_header(s.node_from, s.cfg_from, s.machine, s.config)
    render = render_diff if as_diff else render_yaml

    def yaml_view() -> str:
        lines = risk_lines(got.restart)
        return render(got.advices, header, got.beyond) + "".join(
            f"# {line}\n" if line else "#\n" for line in (["", *lines] if lines else []))

    text = render_output(output, got.document, {"pods": yaml_view})
    if as_scenario is not None and got.scenario is not None:
        scenario = got.scenario
        guard(lambda: _write_scenario(as_scenario, scenario))
        for r in got.replay:
            note(f"{as_scenario}: {r['pod']}: as written at steps {r['beforeStep']}-"
                 f"{r['beforeStep'] + r['beforeCopies'] - 1}, rewritten at steps {r['afterStep']}-"
                 f"{r['afterStep'] + r['afterCopies'] - 1} (copies until the first rejection)")
    guard(lambda: echo(text))
