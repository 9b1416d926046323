"""Cgroups: what the kubelet and containerd + runc write for the pods of a
scenario, and writing it under a cgroup root.

Python API (used by ``podnuma cgroups`` and by the node agent's
``--cgroup-root``)::

    from podnuma.cgroups import plan_cgroups, apply_plan, attach, remove_plan

    plan = plan_cgroups(scenario, run, step=None, driver="systemd", version=2,
                        cgroup_root=None)
    report = apply_plan(plan, Path("/sys/fs/cgroup"), dry_run=True)
    for op in report.operations: print(op)

- :func:`plan_cgroups` (pure): ``scenario`` is a loaded
  :class:`~podnuma.inputs.scenario.Scenario`, ``run`` its
  :class:`~podnuma.scenario.run.RunResult` (run here when ``None``);
  ``step`` is the 0-based step after which to plan (default: the last);
  ``cgroup_root`` the kubelet's cgroup root: ``None`` for the kubelet
  configuration's ``cgroupRoot``, a string for its ``--cgroup-root`` flag
  (in place of the field), or components (``()`` for ``/``); the
  configuration's ``cgroupsPerQOS`` and ``enforceNodeAllocatable`` decide
  the rest (``from_run.cgroup_layout``). Returns a :class:`CgroupPlan`: ``nodes`` parents first, each a
  :class:`CgroupNode` with ``path`` (relative, no leading ``/``), ``kind``
  (root, node, qos, pod, sandbox, container), ``writer`` (kubelet or
  runtime), ``files`` (:class:`CgroupFile` name/value in write order),
  ``cpus``/``mems``. Raises :class:`~podnuma.errors.InputError`.
- :func:`plan_from_pods`: the same from pods and node facts directly.
- :func:`apply_plan` (``apply.py``, the only writer): validates every name,
  removes the cgroups of pods the plan no longer has (``keep_stale``: only
  reports them), then creates and writes in the kernel's order, through
  descriptors that never follow a symlink out of the root; ``dry_run`` lists
  the operations only. Raises :class:`CgroupWriteError` (an ``InputError``)
  naming file, value and errno.
- :func:`attach` moves a PID into a planned cgroup; :func:`remove_plan`
  removes the planned cgroups, leaves first.
"""

from __future__ import annotations

from podnuma.cgroups.apply import (
    ApplyReport,
    CgroupWriteError,
    Operation,
    apply_plan,
    attach,
    remove_plan,
)
from podnuma.cgroups.from_run import node_facts, plan_cgroups
from podnuma.cgroups.plan import (
    CgroupFile,
    CgroupNode,
    CgroupPlan,
    NodeFacts,
    PlannedPod,
    plan_from_pods,
    running_pods,
)

__all__ = [
    "ApplyReport",
    "CgroupFile",
    "CgroupNode",
    "CgroupPlan",
    "CgroupWriteError",
    "NodeFacts",
    "Operation",
    "PlannedPod",
    "apply_plan",
    "attach",
    "node_facts",
    "plan_cgroups",
    "plan_from_pods",
    "remove_plan",
    "running_pods",
]
