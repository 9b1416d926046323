"""``podnuma cgroups plan|apply``: the cgroup tree and values the kubelet
and containerd + runc write for a scenario's pods, and writing them under a
cgroup root."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = ["cgroups_group"]


@click.group("cgroups")
def cgroups_group() -> None:
    """Cgroups the kubelet and the container runtime write for the pods."""


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--cgroup-root",
        default="/",
        show_default=True,
        help="The kubelet's --cgroup-root (components joined by '/').",
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
    fn = click.argument("scenario", type=click.Path(path_type=Path, dir_okay=True, allow_dash=True))(fn)
    return fn


def _plan(scenario: Path, step: int | None, driver: str, version: str, cgroup_root: str) -> Any:
    from podnuma.cgroups import plan_cgroups
    from podnuma.inputs.scenario import load_scenario

    if str(scenario) == "-":
        import sys

        from podnuma.inputs.scenario import load_scenario_text

        loaded = load_scenario_text(sys.stdin.read(), name="<stdin>", base_dir=Path.cwd())
    else:
        loaded = load_scenario(scenario)
    components = tuple(c for c in cgroup_root.split("/") if c)
    return plan_cgroups(
        loaded, step=step, driver=driver, version=int(version), cgroup_root=components  # type: ignore[arg-type]
    )


@cgroups_group.command("plan")
@_common
@click.option("--output", "-o", type=click.Choice(("table", "json", "yaml")), default="table",
              show_default=True)  # fmt: skip
def plan_command(
    scenario: Path, step: int | None, driver: str, cgroup_version: str, cgroup_root: str, output: str
) -> None:
    """Print the cgroup tree and values after a step of SCENARIO."""
    from podnuma.cgroups.plan import plan_document
    from podnuma.cgroups.text import render_plan_text
    from podnuma.cli.app import _guard

    plan = _guard(lambda: _plan(scenario, step, driver, cgroup_version, cgroup_root))
    if output == "table":
        click.echo(render_plan_text(plan), nl=False)
        return
    doc = plan_document(plan)
    if output == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        from podnuma.scenario.document import dump_yaml

        click.echo(dump_yaml(doc), nl=False)


@cgroups_group.command("apply")
@_common
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="The cgroup mount (v2) or the directory of v1 hierarchies.")  # fmt: skip
@click.option("--dry-run", is_flag=True, help="Only print what would be written.")
def apply_command(
    scenario: Path,
    step: int | None,
    driver: str,
    cgroup_version: str,
    cgroup_root: str,
    root: Path,
    dry_run: bool,
) -> None:
    """Write the plan of SCENARIO under --root, in the kernel's order."""
    from podnuma.cgroups import apply_plan
    from podnuma.cli.app import _guard

    def go() -> Any:
        plan = _plan(scenario, step, driver, cgroup_version, cgroup_root)
        return apply_plan(plan, root, dry_run=dry_run)

    report = _guard(go)
    for op in report.operations:
        click.echo(str(op))
    done = "would write" if dry_run else "wrote"
    writes = sum(1 for op in report.operations if op.action == "write")
    dirs = sum(1 for op in report.operations if op.action == "mkdir")
    kind = "cgroup file system" if report.cgroupfs else "plain directory"
    click.echo(f"{done} {writes} files, {dirs} new cgroups under {root} ({kind})", err=True)
