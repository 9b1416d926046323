"""``podnuma fleet analyze`` and ``podnuma fleet generate``.

``analyze`` reads the inputs (files, directories, or a live cluster through
a kubeconfig), replays every node (in this process, on ``--workers N`` local
processes, or on Dask), and prints the report: ``-o table`` (default),
``json`` or ``html``, to standard output or ``--output-file`` (written
atomically). Problems with one node's inputs are reported in the report and
on standard error, and never stop the other nodes. Exit codes: 0 it ran, 2
invalid arguments or unreadable inputs, 1 a bug.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from podnuma.cli.app import EXIT_INPUT, fail, guard, is_quiet
from podnuma.errors import InputError

__all__ = ["fleet_group"]

FORMATS = ("table", "json", "html")
MAX_STDERR_ISSUES = 50
#: Nodes drawn in the HTML drill-down (with their topology picture).
MAX_PICTURES = 60

_fail = fail
_guard = guard


@contextlib.contextmanager
def _progress(total: int, what: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on standard error when it is a terminal."""
    if not sys.stderr.isatty() or total < 2 or is_quiet():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=Console(stderr=True), transient=True,
    ) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)


@click.group("fleet")
def fleet_group() -> None:
    """A whole cluster's pods replayed per node, as running and under what-ifs."""


def _stdin_input(tmp: Path) -> Path:
    data = sys.stdin.buffer.read()
    text = data.lstrip()
    suffix = ".json" if text[:1] in (b"{", b"[") else ".yaml"
    p = tmp / f"stdin{suffix}"
    p.write_bytes(data)
    return p


def _load(inputs: Sequence[str], kubeconfig: str | None, context: str | None, tmp: Path) -> Any:
    from podnuma.fleet.inputs import load_fleet

    if kubeconfig is not None:
        from podnuma.fleet.live import load_live

        extra = [Path(p) for p in inputs if p != "-"]
        return load_live(kubeconfig, context=context, extra=extra)
    if not inputs:
        raise InputError("give the dumps (files or directories) or --kubeconfig")
    paths = [(_stdin_input(tmp) if p == "-" else Path(p)) for p in inputs]
    return load_fleet(paths)


def _report_issues(issues: Sequence[dict[str, Any]]) -> None:
    if is_quiet():
        return
    shown = [i for i in issues if i["severity"] != "info"]
    for i in shown[:MAX_STDERR_ISSUES]:
        where = ": ".join(p for p in (i.get("file"), i.get("path")) if p)
        node = f"node {i['node']}: " if i.get("node") else ""
        click.echo(f"{i['severity']}: {node}{where + ': ' if where else ''}{i['message']}", err=True)
    if len(shown) > MAX_STDERR_ISSUES:
        click.echo(f"... and {len(shown) - MAX_STDERR_ISSUES} more issue(s) in the report", err=True)


def _pictures(inputs: Any, report: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Drill-down nodes (all of a small fleet; else the nodes with issues
    and those with the most sidecar-pinned CPUs) and their pictures."""
    from podnuma.fleet.replay import node_run_result
    from podnuma.render.fleet import top_nodes
    from podnuma.render.picture import ownership_after, render_svg

    nodes = report["nodes"]
    if len(nodes) <= MAX_PICTURES:
        drill = [str(n["name"]) for n in nodes]
    else:
        chosen = [str(n["name"]) for n in top_nodes(report, MAX_PICTURES // 2)]
        chosen += [str(n["name"]) for n in nodes if n["status"] == "error"][: MAX_PICTURES // 4]
        chosen += [str(n["name"]) for n in nodes if n["status"] == "warning"][: MAX_PICTURES // 4]
        drill = sorted(set(chosen))
    specs = {s.name: s for s in inputs.nodes}
    pics: dict[str, str] = {}
    for name in drill:
        spec = specs.get(name)
        if spec is None:
            continue
        result = node_run_result(spec)
        if result is None or not result.steps:
            continue
        pics[name] = render_svg(result.machine, ownership_after(result))
    return pics, drill


def _write(output_file: Path | None, text: str) -> None:
    if output_file is None:
        click.echo(text, nl=False)
        return
    from podnuma.fileio import atomic_write

    try:
        atomic_write(output_file, text.encode("utf-8"))
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", file=str(output_file)) from None


@fleet_group.command("analyze")
@click.argument("inputs", nargs=-1)
@click.option("--what-if", "what_ifs", multiple=True, metavar="CHANGES",
              help="pod-level, scope=pod|container, policy=..., cpu-policy=..., memory-policy=..., "
                   "cpu-option=NAME, topology-option=NAME; comma-separated; repeatable.")
@click.option("-o", "--output", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for people, json for the report document, html for a self-contained report.")
@click.option("--output-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Write the report there (atomically) instead of standard output.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Replay on N local processes.")
@click.option("--dask", "dask_target", default=None, metavar="local[:N]|tcp://HOST:PORT",
              help="Replay on a Dask cluster: a LocalCluster of N worker processes, or a scheduler.")
@click.option("--kubeconfig", default=None, type=click.Path(dir_okay=False),
              help="Read the cluster live (read-only) with this kubeconfig.")
@click.option("--context", default=None, help="The kubeconfig context (with --kubeconfig).")
def analyze_command(
    inputs: tuple[str, ...], what_ifs: tuple[str, ...], fmt: str, output_file: Path | None,
    workers: int | None, dask_target: str | None, kubeconfig: str | None, context: str | None,
) -> None:
    """Replay every node's running pods (INPUT: dumps, files or directories; - for stdin)."""
    from podnuma.fleet.execute import parse_dask_target
    from podnuma.fleet.whatif import parse_what_if

    if workers is not None and dask_target is not None:
        _fail("give --workers or --dask, not both", EXIT_INPUT)
    parsed = _guard(lambda: [parse_what_if(w) for w in what_ifs])
    if len({w.label for w in parsed}) != len(parsed):
        _fail("--what-if: the same what-if is given twice", EXIT_INPUT)
    if dask_target is not None:
        try:
            parse_dask_target(dask_target)
        except ValueError as e:
            _fail(str(e), EXIT_INPUT)
    if fmt == "html":
        _guard(lambda: importlib.import_module("plotly"))  # the fleet extra, before any work
    if dask_target is not None:
        _guard(lambda: importlib.import_module("distributed"))
    with tempfile.TemporaryDirectory(prefix="podnuma-fleet-") as tmp:
        fleet = _guard(lambda: _load(inputs, kubeconfig, context, Path(tmp)))
        _guard(lambda: _analyze(fleet, parsed, fmt, output_file, workers, dask_target))


def _analyze(
    fleet: Any, what_ifs: Sequence[Any], fmt: str, output_file: Path | None,
    workers: int | None, dask_target: str | None,
) -> None:
    from podnuma.fleet.execute import dask_client, run_dask, run_processes, run_serial
    from podnuma.fleet.report import fleet_report

    nodes = fleet.nodes
    with _progress(len(nodes), "replaying nodes") as progress:
        if dask_target is not None:
            client, cluster = dask_client(dask_target)
            try:
                results = run_dask(nodes, what_ifs, client, progress)
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
        elif workers is not None and workers > 1:
            results = run_processes(nodes, what_ifs, workers, progress)
        else:
            results = run_serial(nodes, what_ifs, progress)
    report = fleet_report(fleet, results, [w.label for w in what_ifs])
    _report_issues(report["issues"])
    if fmt == "json":
        from podnuma.scenario.document import dump_json

        _write(output_file, dump_json(report))
    elif fmt == "html":
        from podnuma.render.fleet_html import render_html

        pics, drill = _pictures(fleet, report)
        _write(output_file, render_html(report, pics, drill=drill))
    else:
        from rich.console import Console

        from podnuma.render.fleet import fleet_tables

        if output_file is None and sys.stdout.isatty():
            Console(file=sys.stdout, soft_wrap=False).print(fleet_tables(report))
            return
        console = Console(record=True, width=220, file=open(os.devnull, "w"))  # noqa: SIM115
        console.print(fleet_tables(report))
        text = "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"
        _write(output_file, text)


@fleet_group.command("generate")
@click.option("--nodes", type=click.IntRange(min=1), required=True, help="Number of nodes.")
@click.option("--pods-per-node", type=click.IntRange(min=1, max=110), required=True,
              help="Pods per node (DaemonSet pods included; the kubelet's maxPods is 110).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--output-dir", "-o", "out", type=click.Path(path_type=Path, file_okay=False),
              required=True, help="The directory to write the dumps into (created).")
def generate_command(nodes: int, pods_per_node: int, seed: int, out: Path) -> None:
    """Write a synthetic, realistic fleet as the dumps a real cluster gives."""
    from podnuma.fleet.generate import generate_fleet

    if out.exists() and any(out.iterdir()):
        _fail(f"{out}: the output directory is not empty", EXIT_INPUT)

    def go() -> None:
        with _progress(nodes, "generating nodes") as progress:
            g = generate_fleet(out, nodes=nodes, pods_per_node=pods_per_node, seed=seed,
                               progress=progress)
        click.echo(f"wrote {g.nodes} nodes, {g.pods} pods in {g.files} files to {g.directory}", err=True)

    _guard(go)
