"""What the core reports after each step.

Plain immutable records produced by ``podnuma.node.Node`` as it decides, so
that every renderer (JSON/YAML document, tables, explanations) reads the
same facts and never re-derives them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.policy import MergeTrace
from podnuma.machine.cpuset import CPUSet
from podnuma.podresources import PodResources

__all__ = [
    "MemoryBlock",
    "ContainerResult",
    "PodAllocation",
    "HintRecord",
    "MergedHint",
    "StepResult",
    "NodeSummary",
]

Isolation = Literal["container", "pod", "host"]
ContainerType = Literal["init", "sidecar", "app"]
StepOp = Literal["addPod", "removeContainer", "removePod"]


@dataclass(frozen=True, slots=True)
class MemoryBlock:
    """One memory-manager block: resource type, NUMA nodes, size in bytes."""

    type: str
    numa_nodes: tuple[int, ...]
    size: int


@dataclass(frozen=True, slots=True)
class ContainerResult:
    name: str
    type: ContainerType
    cpus: CPUSet
    mems: tuple[int, ...]
    isolation: Isolation
    memory: tuple[MemoryBlock, ...] = ()
    devices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    topology_hint: TopologyHint | None = None
    cpu_quota_disabled: bool = False


@dataclass(frozen=True, slots=True)
class PodAllocation:
    """The pod-level reservation (pod scope with pod-level resources)."""

    cpus: CPUSet
    memory: tuple[MemoryBlock, ...] = ()


@dataclass(frozen=True, slots=True)
class HintRecord:
    """One step of the decision trail: a provider's hints for a container
    (or for the pod, ``container=None``), and the merged result."""

    container: str | None
    provider: str
    resource: str
    hints: tuple[TopologyHint, ...] | None


@dataclass(frozen=True, slots=True)
class MergedHint:
    """The topology manager's merge for a container (``None`` = the pod, in
    pod scope): the best hint and whether the policy admits it."""

    container: str | None
    hint: TopologyHint
    admit: bool
    # what the merge worked on (filtered hint lists, candidates), for
    # explanations; None when the policy keeps no record
    trace: MergeTrace | None = None


@dataclass(frozen=True)
class StepResult:
    index: int
    op: StepOp
    pod: str  # NAMESPACE/NAME
    pod_uid: str
    admitted: bool | None  # None for removal steps
    reason: str | None
    message: str | None
    qos_class: str | None
    pod_allocation: PodAllocation | None
    containers: tuple[ContainerResult, ...]
    default_cpuset: CPUSet
    container: str | None = None  # the container a removeContainer step names
    hints: tuple[HintRecord, ...] = ()
    pod_resources: tuple[PodResources, ...] = ()  # the PodResources API List after the step
    merged: tuple[MergedHint, ...] = ()
    # Where a rejection happened: "topology" (merged hint refused),
    # "allocate:<provider>" (a manager's allocation failed) or
    # "nodeAllocatable" (the predicate fit); None when admitted.
    failed_stage: str | None = None
    failed_container: str | None = None


@dataclass(frozen=True)
class NodeSummary:
    name: str
    cpus: CPUSet
    numa_nodes: tuple[int, ...]
    reserved_cpus: CPUSet
