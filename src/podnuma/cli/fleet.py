"""``podnuma fleet analyze`` and ``podnuma fleet generate``.

``analyze`` reads the inputs (files, directories, or a live cluster through
a kubeconfig), replays every node (in this process, on ``--workers N`` local
processes, or on Dask), and prints the report: ``-o table`` (default),
``json``, ``yaml`` or ``html``, to standard output or ``--output-file`` (written
atomically). Problems with one node's inputs are reported in the report and
on standard error, and never stop the other nodes. Exit codes: 0 it ran, 2
invalid arguments or unreadable inputs, 1 a bug.

``generate`` writes the dumps into ``--output-dir DIRECTORY``; its ``-o`` is
the format of the summary of what was written, as everywhere: ``table`` (a
note on standard error, not with ``--quiet``), ``json`` or ``yaml`` (a
document on standard output).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from podnuma.cli.app import fail, guard, is_quiet
from podnuma.cli.fleet_analyze import _progress, analyze
from podnuma.cli.options import (
    NamedPath,
    OutputFormat,
    dash_is_stdout,
    echo,
    note,
    stdin_used_once,
)
from podnuma.fleet import MAX_LOCAL_WORKERS
from podnuma.render.formats import FORMATS

__all__ = ["fleet_group"]

_fail = fail
_guard = guard


@click.group("fleet")
def fleet_group() -> None:
    """A whole cluster's pods replayed per node, as running and under what-ifs."""


@fleet_group.command("analyze")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option("--what-if", "what_ifs", multiple=True, metavar="CHANGES",
              help="gates, pod-level, shared-pool-cpus=N (with pod-level), scope=pod|container, "
                   "policy=..., cpu-policy=..., memory-policy=..., cpu-option=NAME, topology-option=NAME, "
                   "restart; comma-separated, each key once; repeatable.")
@click.option("--set", "set_values", multiple=True, metavar="PATH=VALUE",
              help="Override a field of every node's own kubelet configuration by its "
                   "KubeletConfiguration JSON path (featureGates.PodLevelResourceManagers=true, "
                   "topologyManagerScope=pod); value read as YAML; repeatable.")
@click.option("--output", "-o", "fmt", type=OutputFormat(FORMATS["fleet analyze"]), default=None,
              help="table for people (the default), json or yaml for the report document, html for a "
                   "self-contained report; default with --output-file: the format its suffix names.")
@click.option("--output-file", type=NamedPath(path_type=Path, dir_okay=True, writes=True), default=None,
              callback=dash_is_stdout,
              help="Write the report there (atomically) instead of standard output ('-': standard "
                   "output). Its suffix names the format: .json, .yaml or .yml, .html or .htm, .txt "
                   "(the table), or none (with -o).")
@click.option("--workers", type=click.IntRange(min=1, max=MAX_LOCAL_WORKERS), default=None,
              help="Replay on N local processes.")
@click.option("--dask", "dask_target", default=None, metavar="local[:N]|tcp://HOST:PORT",
              help="Replay on a Dask cluster: a LocalCluster of N worker processes, or a scheduler "
                   "(tcp://HOST:PORT, an IPv6 address in brackets; tls:// is not supported: podnuma "
                   "takes no certificates).")
@click.option("--kubeconfig", default=None, type=NamedPath(dir_okay=False),
              help="Read the cluster live (read-only) with this kubeconfig ('-': standard input).")
@click.option("--context", default=None, help="The kubeconfig context (with --kubeconfig).")
@click.option("--as-scenario", "scenario_dir", default=None,
              type=NamedPath(path_type=Path, file_okay=False),
              help="Also write each node's runs as scenarios into this directory (NODE.yaml as "
                   "running, NODE.whatif-N.yaml per what-if), for podnuma simulate and the oracle.")
def analyze_command(
    inputs: tuple[str, ...], what_ifs: tuple[str, ...], set_values: tuple[str, ...], fmt: str | None,
    output_file: Path | None, workers: int | None, dask_target: str | None,
    kubeconfig: str | None, context: str | None, scenario_dir: Path | None = None,
) -> None:
    """Replay every node's running pods (INPUT: dumps, files or directories; - for stdin)."""
    stdin_used_once(*inputs)  # (the fast path, without click, says the same line: analyze)
    # the run itself does not need click (the fast path runs it without)
    analyze(inputs, what_ifs, set_values, fmt, output_file, workers, dask_target, kubeconfig,
            context, scenario_dir, quiet=is_quiet())


#: the largest fleet ``fleet generate`` writes: nodes, and pods in all
#: (20 times Kubernetes' documented 5,000 nodes and 150,000 pods would
#: still be under it; past it the dumps run to gigabytes)
MAX_NODES = 100_000
MAX_PODS = 10_000_000


#: ``fleet generate -o``: the format of the summary of what was written
#: (the default first): a note for people, or a document
GENERATE_FORMATS = FORMATS["fleet generate"]


class _SummaryFormat(OutputFormat):
    """``fleet generate``'s ``-o`` choices; a value that is none of them
    (a directory, as the short form of ``--output-dir`` once took) is
    refused with the words that say where the directory goes."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            self.fail(f"{value!r} is not one of {', '.join(self.choices)}: -o is the output format; "
                      "the directory is given with --output-dir DIRECTORY", param, ctx)


@fleet_group.command("generate")
@click.option("--nodes", type=click.IntRange(min=1, max=MAX_NODES), required=True,
              help=f"Number of nodes (at most {MAX_NODES:,}; nodes x pods per node at most "
                   f"{MAX_PODS:,} pods).")
@click.option("--pods-per-node", type=click.IntRange(min=1, max=110), required=True,
              help="Pods per node (DaemonSet pods included; the kubelet's maxPods is 110).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--nodes-per-pods-file", type=click.IntRange(min=0), default=100, show_default=True,
              help="The pods of this many nodes in each pods dump (pods/pods-NNNN.json); 0: all "
                   "in one (pods/pods.json, as `kubectl get pods -A -o json` gives a cluster's).")
@click.option("--output-dir", "out", type=NamedPath(path_type=Path, file_okay=False),
              required=True, metavar="DIRECTORY",
              help="The directory to write the dumps into (created; must be empty; all or nothing "
                   "is written).")
@click.option("--output", "-o", "fmt", type=_SummaryFormat(GENERATE_FORMATS), default=GENERATE_FORMATS[0],
              show_default=True,
              help="table: one note on standard error (not with --quiet); json or yaml: a document of "
                   "what was written (the directory, the counts, the files) on standard output.")
def generate_command(nodes: int, pods_per_node: int, seed: int, nodes_per_pods_file: int, out: Path,
                     fmt: str) -> None:
    """Write a synthetic, realistic fleet as the dumps a real cluster gives
    into --output-dir (at most 10,000,000 pods)."""
    from podnuma.render.output import render_output
    from podnuma.service import fleet as service

    if nodes * pods_per_node > MAX_PODS:  # (checked before anything is written)
        raise click.UsageError(
            f"--nodes {nodes} x --pods-per-node {pods_per_node} is {nodes * pods_per_node:,} pods: "
            f"at most {MAX_PODS:,}")

    def go() -> str:
        with _progress(nodes, "generating nodes", is_quiet()) as progress:
            done = service.generate(out, nodes=nodes, pods_per_node=pods_per_node, seed=seed,
                                    progress=progress, nodes_per_pods_file=nodes_per_pods_file)
        if fmt == "table":
            return done.line()
        return render_output(fmt, done.document)

    text = _guard(go)
    if fmt == "table":
        note(text)  # (a note: not with --quiet; nothing on standard output)
    else:
        _guard(lambda: echo(text))
