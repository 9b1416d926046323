"""``podnuma cgroups plan|apply``: the cgroup tree and values the kubelet
and containerd + runc write for a scenario's pods, and writing them under a
cgroup root."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from podnuma.cgroups.plan import plan_document
from podnuma.cli.app import guard
from podnuma.cli.options import NamedPath, echo, file_argument, note, output_option, set_option
from podnuma.inputs.overrides import parse_overrides
from podnuma.inputs.text import TextInput
from podnuma.render.cgroups import PLAN_COLOURS, render_plan_text
from podnuma.render.colour import painted
from podnuma.render.output import render_output
from podnuma.service import cgroups as service

__all__ = ["cgroups_group"]


@click.group("cgroups")
def cgroups_group() -> None:
    """Cgroups the kubelet and the container runtime write for the pods."""


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--cgroup-root",
        default=None,
        help="The kubelet's --cgroup-root, in place of the kubelet configuration's cgroupRoot as the "
        "kubelet's flag overrides its file (default: the configuration's; '/' when it sets none). "
        "Components joined by '/'; an empty one, as in 'a//b', is dropped with the cgroupfs driver and "
        "refused with systemd, where the kubelet panics on it.",
    )(fn)
    fn = click.option(
        "--cgroup-version",
        type=click.Choice(("2", "1")),
        required=True,
        help="cgroup v2 (unified) or v1 (one hierarchy per controller).",
    )(fn)
    fn = click.option(
        "--driver", type=click.Choice(("systemd", "cgroupfs")), required=True, help="cgroup driver."
    )(fn)
    fn = click.option(
        "--step", type=int, default=None, help="Plan after this step (0-based; default the last)."
    )(fn)
    fn = file_argument("scenario")(fn)
    fn = set_option(fn)
    return fn


@cgroups_group.command("plan")
@_common
@output_option("cgroups plan", "table: the tree; json or yaml: the plan's document.")
def plan_command(
    scenario: str, step: int | None, driver: str, cgroup_version: str, cgroup_root: str | None, output: str,
    set_values: tuple[str, ...],
) -> None:
    """Print the cgroup tree and values after a step of SCENARIO ('-': standard input)."""

    def go() -> str:
        overrides = parse_overrides(set_values)
        src = TextInput.read(scenario, what="scenario")
        doc = plan_document(service.plan(src, step=step, driver=driver,  # type: ignore[arg-type]
                                         version=int(cgroup_version), cgroup_root=cgroup_root,
                                         overrides=overrides))
        return render_output(output, lambda: doc, {"table": lambda: painted(render_plan_text(doc), PLAN_COLOURS)})

    text = guard(go)
    guard(lambda: echo(text))


@cgroups_group.command("apply")
@_common
@click.option("--root", type=NamedPath(path_type=Path, file_okay=False, exists=True), required=True,
              help="The cgroup mount (v2) or the directory of v1 hierarchies.")  # fmt: skip
@click.option("--dry-run", is_flag=True,
              help="Only print what would be written; fails (exit 2) as the apply would on what is in the "
              "way (a symlink, a file for a cgroup, a FIFO for a file).")  # fmt: skip
@click.option("--keep-stale", is_flag=True,
              help="Only report cgroups of pods no longer in the plan (default: remove them).")  # fmt: skip
@output_option("cgroups apply", "table: one operation a line; json or yaml: a document of "
               "what was written (or, with --dry-run, would be).")
def apply_command(
    scenario: str,
    step: int | None,
    driver: str,
    cgroup_version: str,
    cgroup_root: str | None,
    root: Path,
    dry_run: bool,
    keep_stale: bool,
    output: str,
    set_values: tuple[str, ...],
) -> None:
    """Write the plan of SCENARIO ('-': standard input) under --root, in the
    kernel's order; print each operation.

    Cgroups of pods (and containers) under the plan's kubepods tree that the
    plan no longer has are removed first, leaves first; one that cannot be
    removed (still holding processes, or on a plain directory holding files
    podnuma did not write: only its own are deleted) is printed as 'stale'
    with the CPUs it keeps. Every name is checked before the first write; a
    failed write removes what this apply created. --dry-run writes nothing,
    but fails with the same error where the apply would fail on what is in
    its way (a cgroup listing a process, on a plain directory too, is
    'stale' in both)."""

    def go() -> Any:
        overrides = parse_overrides(set_values)
        src = TextInput.read(scenario, what="scenario")
        return service.apply(src, root, step=step, driver=driver,  # type: ignore[arg-type]
                             version=int(cgroup_version), cgroup_root=cgroup_root, dry_run=dry_run,
                             keep_stale=keep_stale, overrides=overrides)

    report = guard(go)
    doc = service.apply_document(report)
    text = guard(lambda: render_output(
        output, lambda: doc, {"table": lambda: "".join(f"{op}\n" for op in report.operations)}))
    guard(lambda: echo(text))
    counts: dict[str, int] = doc["counts"]  # type: ignore[assignment]
    if output == "table":
        # the summary for people: a note (not with --quiet); -o json|yaml
        # prints the document, which has the counts
        kind = "cgroup file system" if report.cgroupfs else "plain directory"
        done = "would write" if dry_run else "wrote"
        gone = "would remove" if dry_run else "removed"
        note(f"{done} {counts['written']} files, {counts['created']} new cgroups under {root} ({kind}); "
             f"{gone} {counts['removed']} cgroups of pods no longer in the plan")
    if counts["stale"]:
        # (a warning: printed with --quiet too)
        where = "the 'stale' lines" if output == "table" else "the 'stale' operations"
        click.echo(
            f"warning: {counts['stale']} cgroups of pods no longer in the plan are left (see {where})",
            err=True,
        )
