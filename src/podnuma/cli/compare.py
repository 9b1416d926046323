"""``podnuma compare POD``: a pod as written vs its other form (KEP-5526)."""

from __future__ import annotations

from collections.abc import Mapping

import click

from podnuma.analysis.advise import node_config_document
from podnuma.analysis.compare import Comparison, compare_pod, comparison_document
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.cli.app import guard, is_quiet
from podnuma.cli.options import (
    config_option,
    echo,
    file_argument,
    node_option,
    note_not_modelled,
    output_option,
    stdin_used_once,
)
from podnuma.errors import InputError
from podnuma.inputs.documents import input_name, read_text
from podnuma.inputs.pods import load_pod_sources, node_and_config
from podnuma.machine.topology import Machine
from podnuma.render.compare import comparison_renderable
from podnuma.render.table import to_text
from podnuma.scenario.document import dump_json, dump_yaml

__all__ = ["compare_command"]


def _run(
    pod_file: str, node_file: str | None, config_file: str | None
) -> tuple[list[Comparison], list[str], str, str, Machine, KubeletConfig]:
    """Load everything and compare every Pod of the file; other kinds of
    objects are skipped (listed in the second result)."""
    machine, config, node_from, cfg_from = node_and_config(node_file, config_file)
    note_not_modelled(config, cfg_from, prefix="")
    name = input_name(pod_file)
    sources = load_pod_sources(read_text(pod_file, what="pod"), name=name)
    out: list[Comparison] = []
    skipped: list[str] = []
    for src in sources:
        prefix = ""
        if len(sources) > 1 or src.item is not None:
            prefix = f"documents[{src.document}]" + ("" if src.item is None else f".items[{src.item}]")
        kind = src.data.get("kind") if isinstance(src.data, Mapping) else None
        if kind is not None and kind != "Pod":
            skipped.append(f"{src.where}: not a Pod (kind {kind}), skipped")
            continue
        try:
            out.append(compare_pod(src.data, machine, config))
        except InputError as e:
            if e.file is not None:
                raise
            raise InputError(e.message, path=e.path, file=name).at(prefix) from None
    if not out:
        raise InputError("no Pod in the file", file=name)
    return out, skipped, node_from, cfg_from, machine, config


@click.command("compare")
@file_argument("pod_file", metavar="POD")
@node_option
@config_option
@output_option(("table", "json", "yaml"), "table", "table for people; json or yaml for programs.")
def compare_command(
    pod_file: str, node_file: str | None, config_file: str | None, output: str
) -> None:
    """What pod-level resources (KEP-5526) change for POD ('-': standard
    input): the pod as written vs its other form (pod-level <->
    per-container), under topology scope pod and container, each on an empty
    node."""
    stdin_used_once(pod_file, node_file, config_file)

    def go() -> tuple[str, list[str]]:
        comparisons, skipped, node_from, cfg_from, machine, config = _run(
            pod_file, node_file, config_file
        )
        if output in ("json", "yaml"):
            doc = node_config_document(machine, config, node_from, cfg_from)
            doc["node"]["numaNodes"] = list(machine.numa_ids())
            doc["pods"] = [comparison_document(c) for c in comparisons]
            if output == "json":
                return dump_json(doc), skipped
            return dump_yaml(doc), skipped
        text = "\n".join(
            to_text(comparison_renderable(c, node=node_from, config=cfg_from)) for c in comparisons
        )
        return text, skipped

    text, skipped = guard(go)
    if not is_quiet():
        for line in skipped:
            click.echo(line, err=True)
    guard(lambda: echo(text))
