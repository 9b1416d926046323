"""``podnuma advise FILE...``: propose the pod-level rewrite (KEP-5526) of
each pod and measure what it saves."""

from __future__ import annotations

import sys
from functools import partial

import click

from podnuma.analysis.advise import Advice, advice_document, advise_pod, node_config_document
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.cli.app import EXIT_INPUT, guard
from podnuma.cli.options import (
    FILE,
    config_option,
    echo,
    node_option,
    note_not_modelled,
    output_option,
    stdin_used_once,
)
from podnuma.errors import InputError
from podnuma.inputs.documents import input_name, read_text
from podnuma.inputs.pods import PodSource, load_pod_sources, node_and_config
from podnuma.machine.topology import Machine
from podnuma.render.advice import advice_header, render_diff, render_yaml
from podnuma.scenario.document import dump_json

__all__ = ["advise_command"]


def _advise_source(
    src: PodSource, machine: Machine, config: KubeletConfig, shared_pool_cpus: int | None
) -> Advice:
    return advise_pod(src.data, machine, config, where=src.where, shared_pool_cpus=shared_pool_cpus)


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
@output_option(("yaml", "json"), "yaml", "yaml: the rewritten pods (savings as comments); "
               "json: a report for programs.")
def advise_command(
    files: tuple[str, ...], node_file: str | None, config_file: str | None,
    as_diff: bool, shared_pool_cpus: int | None, output: str,
) -> None:
    """Propose the pod-level rewrite (KEP-5526) of each Pod in FILE... (YAML
    documents, JSON, kubectl get pods lists; '-': standard input) and
    measure what it saves."""
    stdin_used_once(*files, node_file, config_file)
    machine, config, node_from, cfg_from = guard(lambda: node_and_config(node_file, config_file))
    note_not_modelled(config, cfg_from, prefix="")
    advices: list[Advice] = []
    errors: list[str] = []
    for path in files:
        name = input_name(path)
        try:
            sources: list[PodSource] = load_pod_sources(read_text(path, what="pod"), name=name)
        except InputError as e:
            errors.append(str(e))
            continue
        if not sources:
            errors.append(str(InputError("no Pod in the file", file=name)))
        for src in sources:
            advice = guard(partial(_advise_source, src, machine, config, shared_pool_cpus))
            if advice.error is not None:
                # an invalid Pod is invalid input: named by file and field path
                prefix = ""
                if len(sources) > 1 or src.item is not None:
                    prefix = f"documents[{src.document}]" + (
                        "" if src.item is None else f".items[{src.item}]"
                    )
                bad = advice.error
                errors.append(str(InputError(bad.message, path=bad.path, file=src.file).at(prefix)))
                continue
            advices.append(advice)
    header = advice_header(node_from, cfg_from, machine, config)
    if output == "json":
        doc = {
            **node_config_document(machine, config, node_from, cfg_from),
            "pods": [advice_document(a) for a in advices],
            "errors": errors,
        }
        text = dump_json(doc)
    elif as_diff:
        text = render_diff(advices, header)
    else:
        text = render_yaml(advices, header)
    guard(lambda: echo(text))
    for message in errors:
        click.echo(f"error: {message}", err=True)
    if errors:
        sys.exit(EXIT_INPUT)
