"""``podnuma advise FILE...``: search the pod-level rewrite (KEP-5526) of
each pod that the kubelet admits on the node, and measure what it saves and
what it changes."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from functools import partial
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
from podnuma.inputs.pathcheck import write_problem
from podnuma.inputs.text import TextInput
from podnuma.render.advice import advice_header, render_diff, render_yaml
from podnuma.render.output import render_output
from podnuma.render.serialize import dump_scenario_json, dump_yaml
from podnuma.service import outputs, whatif
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


def _write_all(path: str, contents: Sequence[bytes], inputs: Sequence[str | None],
               read: Mapping[tuple[int, int], str]) -> list[str]:
    """Write the scenario at ``path`` (``contents[0]``) and each other node
    shape's beside it (``contents[k]``: ``.shape-k``), with their record,
    and remove the earlier run's shape files this one no longer writes
    (:func:`~podnuma.service.outputs.scenario_files`), or do none of it:
    each path checked first (:func:`check_output_file`, :func:`_check_names`,
    none of them an input: :func:`~podnuma.service.outputs.check_not_inputs`),
    then published by :func:`~podnuma.fileio.publish_files` (every content
    written and synced to a temporary file before any rename, the
    termination signals held through the renames, and a failure midway
    putting back every file already replaced or removed). The lines
    returned: what an earlier write killed midway left, and was put back."""
    files, removals = outputs.scenario_files(path, contents)
    for target, _ in files:
        check_output_file(target, "--as-scenario")
    _check_names([target for target, _ in files])
    outputs.check_not_inputs([target for target, _ in files], inputs, read)
    try:
        return publish_files(files, mode=0o644, remove=removals)
    except OSError as e:
        where = e.filename if isinstance(e.filename, str) else (files[0][0] if files else None)
        kept = getattr(e, "unrestored", ())
        after = ("nothing written: every file is as it was" if not kept else
                 "some files could not be put back: their previous versions are kept as " + ", ".join(kept))
        why = write_problem(where, e) if where is not None else f"{e.strerror or e}"
        raise InputError(f"--as-scenario: cannot write: {why} ({after})", file=where) from None


def _check_names(paths: Sequence[str]) -> None:
    """``InputError`` naming the first of ``paths`` whose name (or whose
    temporary files' beside it) is too long for its directory."""
    problem = check_publish_names(paths)
    if problem is not None:
        # (a file beside the scenario: the scenario of another node shape, when one is proposed)
        other = " (another node shape's scenario goes there)" if paths and problem[0] != paths[0] else ""
        raise InputError(f"--as-scenario: cannot write: {problem[1]}{other}", file=problem[0])


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
    node_read, config_read = read_input(node_file, "node"), read_input(config_file, "kubelet configuration")
    node_input: whatif.Source | None = node_read
    config_input: whatif.Source | None = config_read
    named: dict[tuple[int, int], str] = {}
    if as_scenario is not None:
        # before any work: the scenario's path, its name and the name of
        # its first other shape's file (with their temporary files), and
        # neither it nor any shape's file beside it an input: a file named
        # on the command line, or one an input names (a scenario's
        # kubeletConfigFile: the node and the configuration are read now
        # for it, and given to the search as read); the shapes' files are
        # checked again once they are known
        scenario_path = as_scenario
        guard(lambda: check_output_file(scenario_path, "--as-scenario"))
        guard(lambda: _check_names([scenario_path, outputs.shape_path(scenario_path, 1)]))
        node_text = None if node_read is None else guard(node_read)
        config_text = None if config_read is None else guard(config_read)
        node_input, config_input = node_text, config_text
        named = outputs.files_named(node_text, config_text)
        guard(lambda: outputs.check_scenario_not_input(scenario_path, inputs, named))
    pods = [partial(TextInput.read, path, what="pod") for path in files]
    pool = shared_pool_cpus
    with progress_bar("advising pods") as advance, files_read() as read:
        got = guard(lambda: whatif.advise(
            pods, node_input, config_input,
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
        contents = [_scenario_text(as_scenario, got.scenario)] + [
            _scenario_text(outputs.shape_path(as_scenario, k), shape)
            for k, shape in enumerate(got.shape_scenarios, start=1)]
        shape_notes: list[str] = []
        labels = pod_labels(got.advices)
        for r in got.replay:
            k = r.get("shape")
            if k is None:
                continue
            target = outputs.shape_path(as_scenario, k)
            a = got.advices[r["podIndex"]]
            change = a.shape.change if a.shape is not None else "another node shape"
            shape_notes.append(f"{target}: {replay_label(labels, r)} on the other node shape ({change}): "
                               + _steps_words(r))
        scenario_path = as_scenario
        recovered = guard(lambda: _write_all(scenario_path, contents, inputs, {**named, **read}))
        for line in [*recovered, *_replay_notes(as_scenario, got.advices, got.replay), *shape_notes]:
            note(line)
    guard(lambda: echo(text))


#: (kept for the callers that name it here)
_shape_path = outputs.shape_path


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
