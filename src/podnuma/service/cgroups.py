"""``podnuma cgroups plan|apply``: the cgroup tree and values the kubelet
and containerd + runc write for a scenario's pods, and writing them under
a cgroup root."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from podnuma.cgroups import CgroupPlan, apply_plan, plan_cgroups
from podnuma.cgroups.apply import ApplyReport
from podnuma.inputs.overrides import Override
from podnuma.inputs.text import TextInput
from podnuma.service.scenario import load

__all__ = ["apply", "plan"]


def plan(
    src: TextInput, *, step: int | None, driver: Literal["systemd", "cgroupfs"], version: int,
    cgroup_root: str = "/", overrides: tuple[Override, ...] = (),
) -> CgroupPlan:
    """The cgroups after ``step`` (default: the last); ``cgroup_root``: the
    kubelet's ``--cgroup-root`` (components joined by ``/``); ``overrides``:
    ``--set`` on the scenario's kubelet configuration."""
    components = tuple(c for c in cgroup_root.split("/") if c)
    return plan_cgroups(load(src, overrides=overrides), step=step, driver=driver, version=version,
                        cgroup_root=components)


def apply(
    src: TextInput, root: Path, *, step: int | None, driver: Literal["systemd", "cgroupfs"],
    version: int, cgroup_root: str = "/", dry_run: bool = False, keep_stale: bool = False,
    overrides: tuple[Override, ...] = (),
) -> ApplyReport:
    """Write the plan under ``root`` in the kernel's order (``dry_run``:
    only list the operations; ``keep_stale``: leave the cgroups of pods the
    plan no longer has; ``overrides``: ``--set``)."""
    return apply_plan(
        plan(src, step=step, driver=driver, version=version, cgroup_root=cgroup_root, overrides=overrides),
        root, dry_run=dry_run, keep_stale=keep_stale,
    )
