"""The output document of ``podnuma simulate --output json|yaml``.

Field names, shapes and key order follow the public contract (scenario.md,
"Output document"). Removal steps keep the keys of an ``addPod`` step
(``admitted``, ``reason`` and ``message`` are null) and a
``removeContainer`` step adds the ``container`` it names; their
``containers`` are that pod's containers still running.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.cm.results import (
    ContainerResult,
    HintRecord,
    MemoryBlock,
    NodeSummary,
    PodAllocation,
    StepResult,
)
from podnuma.cm.topologymanager.hint import EMPTY_HINT
from podnuma.scenario.run import RunResult

__all__ = [
    "build_document",
    "build_checkpoints",
    "hint_record",
    "node_document",
    "ordered_checkpoints",
    "step_document",
]

_CHECKPOINT_KEYS = ("cpuManager", "memoryManager")


def node_document(node: NodeSummary) -> dict[str, Any]:
    return {
        "name": node.name,
        "cpus": str(node.cpus),
        "numaNodes": list(node.numa_nodes),
        "reservedCpus": str(node.reserved_cpus),
    }


def _memory(blocks: tuple[MemoryBlock, ...]) -> list[dict[str, Any]]:
    return [{"type": b.type, "numaNodes": list(b.numa_nodes), "size": b.size} for b in blocks]


def _pod_allocation(alloc: PodAllocation | None) -> dict[str, Any] | None:
    if alloc is None:
        return None
    return {"cpus": str(alloc.cpus), "memory": _memory(alloc.memory)}


def _container(c: ContainerResult) -> dict[str, Any]:
    hint = c.topology_hint if c.topology_hint is not None else EMPTY_HINT
    return {
        "name": c.name,
        "type": c.type,
        "cpus": str(c.cpus),
        "mems": list(c.mems),
        "isolation": c.isolation,
        "memory": _memory(c.memory),
        "devices": {res: list(ids) for res, ids in sorted(c.devices.items())},
        "topologyHint": hint.to_json(),
        "cpuQuotaDisabled": c.cpu_quota_disabled,
    }


def step_document(step: StepResult, *, detail: bool = True) -> dict[str, Any]:
    """One step of the document; without ``detail``, the bulky per-step
    extensions (every provider's hints, the whole PodResources list) are
    left out."""
    out: dict[str, Any] = {
        "index": step.index,
        "op": step.op,
        "pod": step.pod,
        "podUID": step.pod_uid,
    }
    if step.op == "removeContainer":
        out["container"] = step.container
    removal = step.op != "addPod"
    out["admitted"] = None if removal else step.admitted
    out["reason"] = None if removal else step.reason
    out["message"] = None if removal else step.message
    out["qosClass"] = step.qos_class
    out["podAllocation"] = _pod_allocation(step.pod_allocation)
    out["containers"] = [_container(c) for c in step.containers]
    out["defaultCpuSet"] = str(step.default_cpuset)
    if detail:
        out["providerHints"] = [hint_record(h) for h in step.hints]
    out["mergedHints"] = [
        {"container": m.container, "hint": m.hint.to_json(), "admit": m.admit} for m in step.merged
    ]
    out["rejectedAt"] = (
        None
        if step.failed_stage is None
        else {"stage": step.failed_stage, "container": step.failed_container}
    )
    if detail:
        out["podResources"] = [p.to_json() for p in step.pod_resources]
    return out


def hint_record(h: HintRecord) -> dict[str, Any]:
    """One hint provider's answer as the topology manager received it:
    ``hints`` is ``null`` for Go's nil (no preference), ``[]`` for an empty
    list (no placement possible)."""
    return {
        "container": h.container,
        "provider": h.provider,
        "resource": h.resource or None,
        "hints": None if h.hints is None else [x.to_json() for x in h.hints],
    }


def build_document(result: RunResult, *, detail: bool = True) -> dict[str, Any]:
    """The contract's output document for a run (see :func:`step_document`
    for ``detail``)."""
    checkpoints = build_checkpoints(result)
    return {
        "node": node_document(result.node),
        "steps": [step_document(s, detail=detail) for s in result.steps],
        "checkpoints": checkpoints,
    }


def build_checkpoints(result: RunResult) -> dict[str, Any]:
    return ordered_checkpoints(result.checkpoints)


def ordered_checkpoints(objects: Mapping[str, Any]) -> dict[str, Any]:
    """The document's ``checkpoints``: the CPU and memory managers' first."""
    checkpoints: dict[str, Any] = {k: objects.get(k) for k in _CHECKPOINT_KEYS}
    for k, v in objects.items():
        if k not in checkpoints:
            checkpoints[k] = v
    return checkpoints
