"""``podnuma advise FILE...``: search the pod-level rewrite (KEP-5526) of
each pod that the kubelet admits on the node, and measure what it saves and
what it changes."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import PurePath
from typing import Any

import click

from podnuma.analysis.advise import DEFAULT_STRATEGY, STRATEGIES, Advice, replayable
from podnuma.cli.app import EXIT_INPUT, guard
from podnuma.cli.guard import one_line
from podnuma.cli.options import (
    FILE,
    NamedPath,
    check_output_file,
    config_option,
    dash_refused,
    echo,
    node_option,
    note,
    output_option,
    progress_bar,
    read_input,
    set_option,
    stdin_used_once,
)
from podnuma.errors import InputError
from podnuma.fileio import check_publish_names, publish_files
from podnuma.inputs.documents import files_read
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.text import TextInput
from podnuma.render.advice import advice_header, render_diff, render_yaml
from podnuma.render.output import render_output
from podnuma.render.serialize import dump_scenario_json, dump_yaml
from podnuma.service import whatif
from podnuma.service.advise import labelled_restart, pod_labels, replay_label
from podnuma.service.restart import risk_lines

__all__ = ["advise_command"]


def _pool_size(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """``--shared-pool-cpus``: ``auto`` (None: searched) or a whole number
    of CPUs from 1 to the most a pod's CPU budget may hold (the service's
    bound, as ``sharedPoolCpus`` has it)."""
    if value is None or value == "auto":
        return None
    text = value.strip()
    if not (text.isascii() and text.isdigit()):
        shown = value if len(value) <= 60 else f"{value[:60]}..."
        raise click.BadParameter(f"{shown!r}: expected auto or a whole number of CPUs >= 1")
    try:
        return whatif.parse_shared_pool(text)
    except InputError as e:
        raise click.BadParameter(e.message) from None


def _scenario_text(path: str, scenario: object) -> bytes:
    # (JSON for a .json name, as restart --as-scenario writes it; else YAML)
    text = dump_scenario_json(scenario) if path.lower().endswith(".json") else dump_yaml(scenario)
    return text.encode("utf-8")


def _write_all(files: Sequence[tuple[str, bytes]], inputs: Sequence[str | None],
               read: Mapping[tuple[int, int], str]) -> None:
    """Write every file of ``files`` (path, content), or none: each path
    checked first (:func:`check_output_file`, :func:`_check_names`, none
    of them an input: :func:`_check_not_inputs`), then published by
    :func:`~podnuma.fileio.publish_files` (every content written and synced
    to a temporary file before any rename, the termination signals held
    through the renames, and a failure midway putting back every file
    already replaced)."""
    for path, _ in files:
        check_output_file(path, "--as-scenario")
    _check_names([path for path, _ in files])
    _check_not_inputs([path for path, _ in files], inputs)
    for path, _ in files:  # (nor a file the inputs named and the command read: a kubeletConfigFile...)
        given = read.get(_identity(path) or (-1, -1))
        if given is not None:
            raise InputError(f"--as-scenario: cannot write: it is the input file {given} (an output never "
                             "replaces an input: write the scenario elsewhere)", file=path)
    try:
        publish_files(files, mode=0o644)
    except OSError as e:
        where = e.filename if isinstance(e.filename, str) else (files[0][0] if files else None)
        kept = getattr(e, "unrestored", ())
        after = ("nothing written: every file is as it was" if not kept else
                 "some files could not be put back: their previous versions are kept as " + ", ".join(kept))
        raise InputError(f"--as-scenario: cannot write: {e.strerror or e} ({after})", file=where) from None


def _check_names(paths: Sequence[str]) -> None:
    """``InputError`` naming the first of ``paths`` whose name (or whose
    temporary files' beside it) is too long for its directory."""
    problem = check_publish_names(paths)
    if problem is not None:
        # (a file beside the scenario: the scenario of another node shape, when one is proposed)
        other = " (another node shape's scenario goes there)" if paths and problem[0] != paths[0] else ""
        raise InputError(f"--as-scenario: cannot write: {problem[1]}{other}", file=problem[0])


def _identity(path: str) -> tuple[int, int] | None:
    """The ``(st_dev, st_ino)`` of the file at ``path`` (``-``: standard
    input's, when it is a file), or ``None``."""
    try:
        st = os.fstat(0) if path == "-" else os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _input_named(out: str, inputs: Sequence[str | None]) -> str | None:
    """The input of ``inputs`` that is the file at ``out`` (the same
    device and inode, or, with nothing at ``out`` yet, the same path once
    resolved), or ``None``."""
    mine = _identity(out)
    for given in inputs:
        if given is None:
            continue
        if mine is not None and _identity(given) == mine:
            return given
        if mine is None and given != "-" and os.path.realpath(given) == os.path.realpath(out):
            return given
    return None


def _check_not_inputs(outputs: Sequence[str], inputs: Sequence[str | None]) -> None:
    """``InputError`` naming an output of ``outputs`` that is one of the
    files read (``inputs``), and that input: an output never replaces an input."""
    for out in outputs:
        given = _input_named(out, inputs)
        if given is not None:
            given = "standard input (-)" if given == "-" else given
            raise InputError(f"--as-scenario: cannot write: it is the input file {given} (an output never "
                             "replaces an input: write the scenario elsewhere)", file=out)


def _check_shapes_not_inputs(path: str, inputs: Sequence[str | None]) -> None:
    """:func:`_check_not_inputs` of the scenario at ``path`` and of every
    other node shape's file beside it (``replay.shape-K.yaml``, whatever
    K: their count is known only once the search is done): those there
    now, and any input named like one in the same directory."""
    outputs = [path]
    p = PurePath(path)
    stem, suffix = (p.stem, p.suffix) if p.suffix else (p.name, "")
    shaped = re.compile(re.escape(stem) + r"\.shape-([1-9][0-9]{0,17})" + re.escape(suffix))
    directory = os.path.dirname(path) or "."
    with contextlib.suppress(OSError):
        outputs += [_shape_path(path, int(m.group(1))) for m in map(shaped.fullmatch, os.listdir(directory))
                    if m is not None]
    for given in inputs:
        if given is None or given == "-":
            continue
        m = shaped.fullmatch(os.path.basename(given))
        if m is None:
            continue
        with contextlib.suppress(OSError):
            if os.path.samefile(os.path.dirname(given) or ".", directory):
                outputs.append(_shape_path(path, int(m.group(1))))
    _check_not_inputs(list(dict.fromkeys(outputs)), inputs)


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
    "N: budget = exclusive slices + N CPUs, that size only (the budget is raised, and the report says "
    "so, when an init container needs more: a pod budget covers its largest init container's request).",
)
@click.option("--strategy", type=click.Choice(list(STRATEGIES)), default=DEFAULT_STRATEGY, show_default=True,
              help=_STRATEGY_HELP)
@click.option("--sidecar", "sidecars", multiple=True, metavar="NAME",
              help="Treat the container NAME as a sidecar (repeatable; a NAME no pod read has a "
              "container of is refused); native sidecars and well-known injectors' containers are "
              "recognised without it.")
@click.option("--as-scenario", "as_scenario", type=NamedPath(dir_okay=False, allow_dash=False, writes=True), default=None,
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
    inputs = [*files, node_file, config_file]
    if as_scenario is not None:
        # before any work: the scenario's path, its name and the name of
        # its first other shape's file (with their temporary files), and
        # neither it nor any shape's file beside it an input (the shapes'
        # files are checked again once they are known)
        scenario_path = as_scenario
        guard(lambda: check_output_file(scenario_path, "--as-scenario"))
        guard(lambda: _check_names([scenario_path, _shape_path(scenario_path, 1)]))
        guard(lambda: _check_shapes_not_inputs(scenario_path, inputs))
    pods = [partial(TextInput.read, path, what="pod") for path in files]
    pool = shared_pool_cpus
    with progress_bar("advising pods") as advance, files_read() as read:
        got = guard(lambda: whatif.advise(
            pods, read_input(node_file, "node"), read_input(config_file, "kubelet configuration"),
            shared_pool_cpus=pool, note=note, strategy=strategy, sidecars=sidecars,
            with_scenario=as_scenario is not None, overrides=parse_overrides(set_values),
            progress=advance,
        ))
    if got.errors:  # every bad input named, one line each, and nothing else printed or written
        for message in got.errors:
            click.echo(f"error: {one_line(message)}", err=True)
        sys.exit(EXIT_INPUT)
    s = got.setting
    header = advice_header(s.node_from, s.cfg_from, s.machine, s.config)
    render = render_diff if as_diff else render_yaml

    def yaml_view() -> str:
        # each line names its pod, and where it is when another pod has
        # its name (variants of one pod): matched by position, not by name
        lines = risk_lines(labelled_restart(got), name_pods=True)
        return render(got.advices, header, got.beyond) + "".join(
            f"# {line}\n" if line else "#\n" for line in (["", *lines] if lines else []))

    text = render_output(output, got.document, {"pods": yaml_view})
    if as_scenario is not None and got.scenario is not None:
        # the scenario and each other node shape's, every path checked and
        # every file written (or none) before anything is noted or printed
        writes = [(as_scenario, _scenario_text(as_scenario, got.scenario))]
        shape_notes: list[str] = []
        labels = pod_labels(got.advices)
        for r in got.replay:
            k = r.get("shape")
            if k is None:
                continue
            target = _shape_path(as_scenario, k)
            writes.append((target, _scenario_text(target, got.shape_scenarios[k - 1])))
            a = got.advices[r["podIndex"]]
            change = a.shape.change if a.shape is not None else "another node shape"
            shape_notes.append(f"{target}: {replay_label(labels, r)} on the other node shape ({change}): "
                               + _steps_words(r))
        guard(lambda: _write_all(writes, inputs, read))
        for line in [*_replay_notes(as_scenario, got.advices, got.replay), *shape_notes]:
            note(line)
    guard(lambda: echo(text))


def _shape_path(path: str, k: int) -> str:
    """Where the scenario of the ``k``-th other node shape goes, beside
    ``path``: ``replay.yaml`` -> ``replay.shape-1.yaml``."""
    p = PurePath(path)
    return str(p.with_name(f"{p.stem}.shape-{k}{p.suffix}")) if p.suffix else f"{path}.shape-{k}"


def _span(first: int, count: int) -> str:
    return f"step {first}" if count <= 1 else f"steps {first}-{first + count - 1}"


def _steps_words(r: Mapping[str, Any]) -> str:
    """Where an advice's forms sit in its scenario, in words."""
    parts: list[str] = []
    if r["beforeCopies"]:
        parts.append(f"as written at {_span(r['beforeStep'], r['beforeCopies'])}")
    tried = [t for t in r.get("triedSteps") or () if t is not None and t != r["afterStep"]]
    if tried:
        parts.append(f"the refused forms tried at step(s) {', '.join(str(t) for t in tried)}")
    if r["afterStep"] is not None:
        what = "rewritten" if r["status"] == "rewritten" else "the pod-level form"
        parts.append(f"{what} at {_span(r['afterStep'], r['afterCopies'])}")
    return ", ".join(parts) + " (copies until the first rejection; each form on an emptied node)"


def _replay_notes(path: str, advices: Sequence[Advice], replay: Sequence[Mapping[str, Any]]) -> list[str]:
    """The notes of ``--as-scenario``: where each advice's figures sit in the
    scenario, and why an advice has none there. Each names its pod, and
    where it is when another pod has the same name (a replay entry is of
    the advice its ``podIndex`` says)."""
    labels = pod_labels(advices)
    replay = [r for r in replay if r.get("shape") is None]  # (the other shapes: their own files)
    out = [f"{path}: {replay_label(labels, r)}: {_steps_words(r)}" for r in replay]
    for a, label in zip(advices, labels, strict=True):
        if replayable(a):
            continue
        out.append(f"{path}: {label}: nothing to replay: skipped before anything was measured "
                   f"({a.reason})")
    if not replay:
        out.append(f"{path}: nothing printed is replayable: the scenario has no steps")
    return out
