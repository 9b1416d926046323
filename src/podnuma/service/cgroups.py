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

__all__ = ["apply", "apply_document", "plan"]


def plan(
    src: TextInput, *, step: int | None, driver: Literal["systemd", "cgroupfs"], version: int,
    cgroup_root: str | None = None, overrides: tuple[Override, ...] = (),
) -> CgroupPlan:
    """The cgroups after ``step`` (default: the last); ``cgroup_root``: the
    kubelet's ``--cgroup-root`` (components joined by ``/``, read as the
    kubelet reads it: :func:`~podnuma.cgroups.plan.parse_cgroup_root`), in
    place of the configuration's ``cgroupRoot`` as the kubelet's flag
    overrides its file (``None``: the configuration's, ``/`` when unset);
    ``overrides``: ``--set`` on the scenario's kubelet configuration."""
    # (the option's value is read with the scenario's cgroupsPerQOS: an
    # error names --cgroup-root)
    return plan_cgroups(load(src, overrides=overrides), step=step, driver=driver, version=version,
                        cgroup_root=cgroup_root)


def apply(
    src: TextInput, root: Path, *, step: int | None, driver: Literal["systemd", "cgroupfs"],
    version: int, cgroup_root: str | None = None, dry_run: bool = False, keep_stale: bool = False,
    overrides: tuple[Override, ...] = (),
) -> ApplyReport:
    """Write the plan under ``root`` in the kernel's order (``dry_run``:
    only list the operations; ``keep_stale``: leave the cgroups of pods the
    plan no longer has; ``overrides``: ``--set``)."""
    return apply_plan(
        plan(src, step=step, driver=driver, version=version, cgroup_root=cgroup_root, overrides=overrides),
        root, dry_run=dry_run, keep_stale=keep_stale,
    )


#: the actions of an apply, as :func:`apply_document` counts them
_COUNTED = (("write", "written"), ("mkdir", "created"), ("rmdir", "removed"), ("skip", "skipped"),
            ("stale", "stale"))


def apply_document(report: ApplyReport) -> dict[str, object]:
    """What an apply wrote (or, with ``dry_run``, would write) as JSON-ready
    data (``podnuma cgroups apply -o json|yaml``): the root, whether it is
    a cgroup file system, each operation in order and their counts."""
    operations: list[dict[str, object]] = []
    for op in report.operations:
        entry: dict[str, object] = {"action": op.action, "path": op.path}
        if op.value is not None:
            entry["value"] = op.value
        if op.detail:
            entry["detail"] = op.detail
        operations.append(entry)
    return {
        "root": str(report.root),
        "dryRun": report.dry_run,
        "cgroupFileSystem": report.cgroupfs,
        "operations": operations,
        "counts": {name: sum(1 for op in report.operations if op.action == action)
                   for action, name in _COUNTED},
    }
