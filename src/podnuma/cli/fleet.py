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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from podnuma.cli.app import fail, guard, is_quiet
from podnuma.errors import InputError
from podnuma.render.formats import FORMATS

__all__ = ["fleet_group"]

MAX_STDERR_ISSUES = 50

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


class _Scratch:
    """A temporary directory made when first asked for (for standard
    input's copy: ``tempfile`` is not even imported otherwise), removed by
    :meth:`close`."""

    def __init__(self) -> None:
        self._dir: Any = None

    def path(self) -> Path:
        if self._dir is None:
            import tempfile

            self._dir = tempfile.TemporaryDirectory(prefix="podnuma-fleet-")
        return Path(self._dir.name)

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()


def _stdin_input(tmp: Path) -> Path:
    data = sys.stdin.buffer.read()
    text = data.lstrip()
    suffix = ".json" if text[:1] in (b"{", b"[") else ".yaml"
    p = tmp / f"stdin{suffix}"
    p.write_bytes(data)
    return p


def _paths(inputs: Sequence[str], kubeconfig: str | None, tmp: _Scratch) -> list[Path]:
    """The input paths; standard input (``-``) saved to a file in ``tmp``
    (not read at all with ``--kubeconfig``)."""
    if kubeconfig is not None:
        return [Path(p) for p in inputs if p != "-"]
    return [(_stdin_input(tmp.path()) if p == "-" else Path(p)) for p in inputs]


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


def _write(output_file: Path | None, text: str) -> None:
    if output_file is None:
        click.echo(text, nl=False)
        return
    from podnuma.fileio import atomic_write

    try:
        # a report is for sharing: world-readable, as a shell redirection writes it
        atomic_write(output_file, text.encode("utf-8"), mode=0o644)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", file=str(output_file)) from None


@fleet_group.command("analyze")
@click.argument("inputs", nargs=-1)
@click.option("--what-if", "what_ifs", multiple=True, metavar="CHANGES",
              help="gates, pod-level, scope=pod|container, policy=..., cpu-policy=..., memory-policy=..., "
                   "cpu-option=NAME, topology-option=NAME; comma-separated; repeatable.")
@click.option("--set", "set_values", multiple=True, metavar="PATH=VALUE",
              help="Override a field of every node's own kubelet configuration by its "
                   "KubeletConfiguration JSON path (featureGates.PodLevelResourceManagers=true, "
                   "topologyManagerScope=pod); value read as YAML; repeatable.")
@click.option("-o", "--output", "fmt", type=click.Choice(FORMATS["fleet analyze"]), default="table", show_default=True,
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
@click.option("--as-scenario", "scenario_dir", default=None,
              type=click.Path(path_type=Path, file_okay=False),
              help="Also write each node's runs as scenarios into this directory (NODE.yaml as "
                   "running, NODE.whatif-N.yaml per what-if), for podnuma simulate and the oracle.")
def analyze_command(
    inputs: tuple[str, ...], what_ifs: tuple[str, ...], set_values: tuple[str, ...], fmt: str,
    output_file: Path | None, workers: int | None, dask_target: str | None,
    kubeconfig: str | None, context: str | None, scenario_dir: Path | None = None,
) -> None:
    """Replay every node's running pods (INPUT: dumps, files or directories; - for stdin)."""
    from podnuma.inputs.overrides import parse_overrides
    from podnuma.service import fleet as service

    parsed = _guard(lambda: service.what_ifs(what_ifs, workers=workers, dask_target=dask_target))
    overrides = _guard(lambda: parse_overrides(set_values))
    if fmt == "html":
        _guard(lambda: importlib.import_module("plotly"))  # the fleet extra, before any work
    if dask_target is not None:  # found, not imported: the Dask client may run in a process of its own
        _guard(lambda: _installed("distributed"))
    with contextlib.ExitStack() as stack:
        tmp = _Scratch()
        stack.callback(tmp.close)  # (last: after the executor has ended)
        # the dumps are read where the replay runs: the executor first
        ex = _guard(lambda: stack.enter_context(
            service.executor(workers=workers, dask_target=dask_target)))
        fleet = _guard(lambda: service.with_overrides(
            service.load(_paths(inputs, kubeconfig, tmp), kubeconfig=kubeconfig, context=context,
                         executor=ex),
            overrides,
        ))
        if scenario_dir is not None:
            _guard(lambda: service.check_scenario_names(fleet, scenario_dir))
        _guard(lambda: _analyze(fleet, parsed, fmt, output_file, ex, overrides))
        if scenario_dir is not None:
            count = _guard(lambda: service.write_scenarios(fleet, parsed, scenario_dir))
            if not is_quiet():
                click.echo(f"wrote {count} scenario(s) to {scenario_dir}", err=True)


def _installed(module: str) -> None:
    """An optional module is there (:class:`ModuleNotFoundError` if not),
    without importing it."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}", name=module)


def _analyze(
    fleet: Any, what_ifs: Sequence[Any], fmt: str, output_file: Path | None, executor: Any,
    overrides: Sequence[Any] = (),
) -> None:
    from podnuma.render.output import render_output
    from podnuma.service import fleet as service

    with _progress(len(fleet.nodes), "replaying nodes") as progress:
        report = service.analyze(fleet, what_ifs, executor=executor, progress=progress)
    if overrides:
        report["set"] = [str(o) for o in overrides]
    _report_issues(report["issues"])
    if fmt == "table" and output_file is None and sys.stdout.isatty():
        from rich.console import Console

        from podnuma.render.fleet import fleet_tables

        Console(file=sys.stdout, soft_wrap=False).print(fleet_tables(report))
        return
    _write(output_file, render_output(fmt, lambda: report, {
        "html": lambda: service.report_html(fleet, report),
        "table": lambda: _table_text(report),
    }))


def _table_text(report: dict[str, Any]) -> str:
    from rich.console import Console

    from podnuma.render.fleet import fleet_tables

    console = Console(record=True, width=220, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(fleet_tables(report))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


@fleet_group.command("generate")
@click.option("--nodes", type=click.IntRange(min=1), required=True, help="Number of nodes.")
@click.option("--pods-per-node", type=click.IntRange(min=1, max=110), required=True,
              help="Pods per node (DaemonSet pods included; the kubelet's maxPods is 110).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--output-dir", "-o", "out", type=click.Path(path_type=Path, file_okay=False),
              required=True, help="The directory to write the dumps into (created).")
def generate_command(nodes: int, pods_per_node: int, seed: int, out: Path) -> None:
    """Write a synthetic, realistic fleet as the dumps a real cluster gives."""
    from podnuma.service import fleet as service

    def go() -> None:
        with _progress(nodes, "generating nodes") as progress:
            line = service.generate(out, nodes=nodes, pods_per_node=pods_per_node, seed=seed,
                                    progress=progress)
        click.echo(line, err=True)

    _guard(go)
