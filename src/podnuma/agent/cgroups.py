"""Where the agent hands allocations to cgroups.

The agent calls a :class:`CgroupApplier` after every admission (the pod's
containers with the CPUs and NUMA nodes they run on) and removal. Without
``--cgroup-root`` nothing is applied (:class:`NoCgroups`). With it, the
applier comes from :mod:`podnuma.cgroups` (the cgroup-v2 writer); a build
without that package refuses ``--cgroup-root`` at start rather than
pretending to apply.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from podnuma.errors import InputError
from podnuma.machine.cpuset import CPUSet

__all__ = ["ContainerCgroup", "CgroupApplier", "NoCgroups", "cgroup_applier"]


@dataclass(frozen=True)
class ContainerCgroup:
    """What a container's cgroup gets: ``cpuset.cpus``, ``cpuset.mems`` and
    whether its CFS quota is lifted (exclusive CPUs)."""

    cpus: CPUSet
    mems: tuple[int, ...]
    cpu_quota_disabled: bool


class CgroupApplier(Protocol):
    def apply_pod(
        self, pod_uid: str, qos_class: str, containers: Mapping[str, ContainerCgroup]
    ) -> None: ...

    def remove_pod(self, pod_uid: str) -> None: ...


class NoCgroups:
    """No ``--cgroup-root``: allocations stay in the checkpoints."""

    def apply_pod(
        self, pod_uid: str, qos_class: str, containers: Mapping[str, ContainerCgroup]
    ) -> None:
        return None

    def remove_pod(self, pod_uid: str) -> None:
        return None


def cgroup_applier(root: Path | None) -> CgroupApplier:
    """The applier for ``--cgroup-root`` (``None``: none)."""
    if root is None:
        return NoCgroups()
    try:
        module = importlib.import_module("podnuma.cgroups")
    except ImportError:
        module = None
    factory = getattr(module, "agent_applier", None) if module is not None else None
    if factory is None:
        raise InputError(
            "--cgroup-root: applying allocations to cgroups is not available in this build "
            "(podnuma.cgroups provides no agent_applier)",
            file=str(root),
        )
    applier = factory(root)
    assert hasattr(applier, "apply_pod") and hasattr(applier, "remove_pod")
    return applier  # type: ignore[no-any-return]
