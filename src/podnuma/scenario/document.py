"""The output document of ``podnuma simulate --output json|yaml``.

Field names, shapes and key order follow the public contract (scenario.md,
"Output document"). Removal steps keep the keys of an ``addPod`` step
(``admitted``, ``reason`` and ``message`` are null) and a
``removeContainer`` step adds the ``container`` it names; their
``containers`` are that pod's containers still running.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

import yaml

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
    "node_document",
    "step_document",
    "write_document",
    "dump_json",
    "dump_yaml",
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
        out["providerHints"] = [_hint_record(h) for h in step.hints]
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


def _hint_record(h: HintRecord) -> dict[str, Any]:
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


def dump_json(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


class _Dumper(yaml.SafeDumper):
    """Safe dumper that indents lists under their key (kubectl style)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def dump_yaml(doc: Any) -> str:
    out: str = yaml.dump(
        doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True
    )
    return out


def write_document(result: RunResult, out: TextIO, fmt: str, *, detail: bool = True) -> None:
    """Write the document of :func:`build_document` as ``json`` or ``yaml``
    to ``out`` step by step: the same text as dumping the whole document,
    without holding more than one step's document (and its text) at once."""
    head = node_document(result.node)
    tail = build_checkpoints(result)
    steps = (step_document(s, detail=detail) for s in result.steps)
    if fmt == "json":
        _write_json(out, head, steps, tail)
    else:
        _write_yaml(out, head, steps, tail)


def build_checkpoints(result: RunResult) -> dict[str, Any]:
    checkpoints: dict[str, Any] = {k: result.checkpoints.get(k) for k in _CHECKPOINT_KEYS}
    for k, v in result.checkpoints.items():
        if k not in checkpoints:
            checkpoints[k] = v
    return checkpoints


def _json_at(value: Any, indent: str) -> str:
    """``value`` as ``json.dumps(indent=2)`` writes it nested ``indent``
    deep (JSON strings hold no raw newline, so re-indenting is exact)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _write_json(out: TextIO, node: Any, steps: Iterator[dict[str, Any]], checkpoints: Any) -> None:
    out.write('{\n  "node": ' + _json_at(node, "  ") + ',\n  "steps": [')
    first = True
    for step in steps:
        out.write(("\n    " if first else ",\n    ") + _json_at(step, "    "))
        first = False
    out.write(']' if first else "\n  ]")
    out.write(',\n  "checkpoints": ' + _json_at(checkpoints, "  ") + "\n}\n")


def _write_yaml(out: TextIO, node: Any, steps: Iterator[dict[str, Any]], checkpoints: Any) -> None:
    """The document through one emitter, step by step: the top-level
    mapping's events are emitted by hand and each step is represented and
    serialized on its own (no object is shared between steps, so no anchor
    spans two of them)."""
    dumper = _Dumper(
        out, default_flow_style=False, sort_keys=False, allow_unicode=True
    )
    try:
        dumper.open()
        dumper.emit(yaml.DocumentStartEvent(explicit=False))
        dumper.emit(yaml.MappingStartEvent(anchor=None, tag=None, implicit=True, flow_style=False))

        def put(value: Any) -> None:
            root = dumper.represent_data(value)
            dumper.anchor_node(root)
            dumper.serialize_node(root, None, None)
            dumper.represented_objects = {}
            dumper.object_keeper = []
            dumper.alias_key = None
            dumper.serialized_nodes = {}
            dumper.anchors = {}

        put("node")
        put(node)
        put("steps")
        first = next(steps, None)
        if first is None:
            put([])
        else:
            dumper.emit(yaml.SequenceStartEvent(anchor=None, tag=None, implicit=True, flow_style=False))
            put(first)
            for step in steps:
                put(step)
            dumper.emit(yaml.SequenceEndEvent())
        put("checkpoints")
        put(checkpoints)
        dumper.emit(yaml.MappingEndEvent())
        dumper.emit(yaml.DocumentEndEvent(explicit=False))
        dumper.close()
    finally:
        dumper.dispose()
