"""Where the agent hands allocations to cgroups (``--cgroup-root``).

After every reconciliation the agent gives the applier the pods running
on the node (:class:`~podnuma.cgroups.PlannedPod`: spec, QoS class, what
each container runs on now) and the pods it removed. :class:`CgroupTree`
plans the whole tree the kubelet and the runtime would write
(:func:`podnuma.cgroups.plan_from_pods`, node-level values from the node's
capacity, reservations and current shared pool), writes it with
:func:`podnuma.cgroups.apply_plan` (the kernel's write order; a failed apply
removes what it created) and removes the cgroups of removed pods
(:func:`podnuma.cgroups.remove_plan`, and the apply's own removal of pod
cgroups the plan no longer has, e.g. left by an earlier run: a tree of any
depth, without recursion). What it cannot remove (still populated, holding
what podnuma did not write, deeper than ``PATH_MAX``) is kept and returned;
the agent logs it. Without ``--cgroup-root``, :class:`NoCgroups` does
nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

from podnuma.cgroups import CgroupPlan, PlannedPod, apply_plan, plan_from_pods, remove_plan
from podnuma.cgroups.from_run import CgroupLayout, node_facts
from podnuma.cm.container_manager import Node
from podnuma.scenario.run import RunResult

__all__ = ["CgroupApplier", "CgroupTree", "NoCgroups", "detect_version", "topmost"]

Driver = Literal["systemd", "cgroupfs"]


class CgroupApplier(Protocol):
    def sync(
        self, node: Node, running: Mapping[str, PlannedPod], removed: Sequence[PlannedPod]
    ) -> list[str]:
        """Write the running pods' cgroups, remove the others'; returns the
        cgroups it could not remove (the topmost of each tree kept)."""
        ...


class NoCgroups:
    """No ``--cgroup-root``: allocations stay in the checkpoints."""

    def sync(
        self, node: Node, running: Mapping[str, PlannedPod], removed: Sequence[PlannedPod]
    ) -> list[str]:
        return []


def topmost(paths: Sequence[str]) -> list[str]:
    """The paths of ``paths`` with no ancestor among them (a kept tree is
    named by its top, not by each of its thousands of levels)."""
    tops: list[str] = []
    for path in sorted(paths, key=lambda p: p.split("/")):  # (a tree's paths follow its top)
        if not tops or not path.startswith(tops[-1] + "/"):
            tops.append(path)
    return tops


def detect_version(root: Path) -> int:
    """2 when ``root`` is a unified (v2) hierarchy, else 1."""
    return 2 if (root / "cgroup.controllers").exists() else 1


class CgroupTree:
    """The cgroups of the pods running, kept under ``root`` (a cgroup
    mount) where the kubelet would make them: under ``layout``'s root,
    with or without the kubepods and QoS levels (the configuration's
    ``cgroupRoot``, ``cgroupsPerQOS`` and ``enforceNodeAllocatable``,
    :func:`~podnuma.cgroups.from_run.config_layout`)."""

    def __init__(self, root: Path, driver: Driver, version: int, layout: CgroupLayout | None = None) -> None:
        self.root = root
        self.driver: Driver = driver
        self.version = version
        self.layout = layout if layout is not None else CgroupLayout()
        self.last: CgroupPlan | None = None
        self.left: list[str] = []  # cgroups that could not be removed (still populated)

    def _plan(self, node: Node, pods: Mapping[str, PlannedPod]) -> CgroupPlan:
        run = RunResult(
            scenario="agent",
            machine=node.machine,
            node=node.summary(),
            steps=(),
            checkpoints={},
            checkpoint_files={},
        )
        facts = dataclasses.replace(
            node_facts(node.machine, node.config, run, 0),
            default_cpuset=node.cpu.state.get_default_cpuset(),
        )
        return plan_from_pods(
            pods, facts, driver=self.driver, version=self.version, cgroup_root=self.layout.root,
            cgroups_per_qos=self.layout.per_qos, enforce_pods=self.layout.enforce_pods,
            update_root=self.layout.named,
        )

    def sync(
        self, node: Node, running: Mapping[str, PlannedPod], removed: Sequence[PlannedPod]
    ) -> list[str]:
        left: list[str] = []
        if removed:
            gone = self._plan(node, {p.pod.uid: p for p in removed})
            pod_nodes = tuple(n for n in gone.nodes if n.kind in ("pod", "sandbox", "container"))
            left = remove_plan(dataclasses.replace(gone, nodes=pod_nodes), self.root)
        plan = self._plan(node, running)
        report = apply_plan(plan, self.root, option="--cgroup-root")  # also removes cgroups of pods not running any more
        self.left = sorted(set(left) | {op.path for op in report.operations if op.action == "stale"})
        self.last = plan
        return topmost(self.left)
