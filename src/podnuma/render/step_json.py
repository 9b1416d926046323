"""One step of the run document written straight to JSON text.

The very text that ``json.dumps(step_document(step), indent=2,
ensure_ascii=False)`` gives for a step nested in the document's ``steps``
list, without building the step's dictionaries first: the step's schema
is fixed (:mod:`podnuma.scenario.document`), so its keys and their layout
are written here in order, and only the values are encoded (strings by
the standard library's C string encoder, the one ``json.dumps`` uses).
The parts whose shape is open (devices, ``--detail``'s provider hints and
PodResources list) go through ``json.dumps`` itself.

A speed module: ``json.dumps`` with an indent runs the standard library's
pure-Python encoder, which took most of ``simulate -o json``'s time.
``tests/scenario/test_step_json.py`` holds it to the generic path's text
on every example scenario.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from podnuma.cm.results import ContainerResult, MemoryBlock, StepResult
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.machine.cpuset import CPUSet
from podnuma.scenario.document import hint_record

__all__ = ["cpu_list", "json_at", "step_json"]

_string: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]

#: the JSON string of each CPU set written lately, by its mask: a run
#: writes the same few sets (each container's, the shared pool) step after
#: step, and listing a fragmented set's ranges costs more than the rest of
#: a container's text
_CPUS: dict[int, str] = {}
_CPUS_KEPT = 4096


_RUN = re.compile("1+")


def cpu_list(mask: int) -> str:
    """The CPU set of ``mask`` in the Linux list format, as ``str(CPUSet)``
    writes it, from the mask's binary digits (the runs of ones found by the
    C regular-expression engine rather than bit by bit)."""
    bits = bin(mask)[:1:-1]  # lowest CPU first
    return ",".join([
        f"{m.start()}-{m.end() - 1}" if m.end() - m.start() > 1 else str(m.start())
        for m in _RUN.finditer(bits)
    ])


def _cpus(cpus: CPUSet) -> str:
    """``cpus`` in the Linux list format, as a JSON string."""
    mask = cpus.mask
    text = _CPUS.get(mask)
    if text is None:
        if len(_CPUS) >= _CPUS_KEPT:
            _CPUS.clear()
        text = _CPUS[mask] = '"' + cpu_list(mask) + '"'
    return text


def json_at(value: Any, indent: str) -> str:
    """``value`` as ``json.dumps(indent=2)`` writes it nested ``indent``
    deep (JSON strings hold no raw newline, so re-indenting is exact)."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def _opt(value: str | None) -> str:
    return "null" if value is None else _string(value)


def _bool(value: bool | None) -> str:
    return "null" if value is None else ("true" if value else "false")


#: the text of each list of NUMA nodes and of each hint written lately (a
#: run writes the same few again and again), by value and indent
_INTS: dict[tuple[tuple[int, ...], str], str] = {}
_HINTS: dict[tuple[int | None, bool, str], str] = {}


def _ints(values: tuple[int, ...], ind: str) -> str:
    """A list of ints nested ``ind`` deep."""
    if not values:
        return "[]"
    key = (values, ind)
    text = _INTS.get(key)
    if text is None:
        if len(_INTS) >= _CPUS_KEPT:
            _INTS.clear()
        inner = "\n" + ind + "  "
        text = _INTS[key] = (
            "[" + inner + ("," + inner).join([str(v) for v in values]) + "\n" + ind + "]"
        )
    return text


def _hint(hint: TopologyHint, ind: str) -> str:
    aff = hint.numa_node_affinity
    key = (None if aff is None else aff.value, hint.preferred, ind)
    text = _HINTS.get(key)
    if text is None:
        if len(_HINTS) >= _CPUS_KEPT:
            _HINTS.clear()
        inner = "\n" + ind + "  "
        text = _HINTS[key] = (
            "{" + inner + '"numaNodes": '
            + ("null" if aff is None else _ints(tuple(aff.bits()), ind + "  "))
            + "," + inner + '"preferred": ' + ("true" if hint.preferred else "false")
            + "\n" + ind + "}"
        )
    return text


def _memory(blocks: tuple[MemoryBlock, ...], ind: str) -> str:
    if not blocks:
        return "[]"
    i1 = ind + "  "
    i2 = i1 + "  "
    parts = [
        "{\n" + i2 + '"type": ' + _string(b.type)
        + ",\n" + i2 + '"numaNodes": ' + _ints(b.numa_nodes, i2)
        + ",\n" + i2 + '"size": ' + str(b.size)
        + "\n" + i1 + "}"
        for b in blocks
    ]
    return "[\n" + i1 + (",\n" + i1).join(parts) + "\n" + ind + "]"


def _container(c: ContainerResult, ind: str) -> str:
    """One container (``ind``: the indent of its braces)."""
    k = ",\n" + ind + "  "
    hint = c.topology_hint if c.topology_hint is not None else EMPTY_HINT
    devices = c.devices
    ki = ind + "  "
    return (
        "{\n" + ki + '"name": ' + _string(c.name)
        + k + '"type": ' + _string(c.type)
        + k + '"cpus": ' + _cpus(c.cpus)
        + k + '"mems": ' + _ints(c.mems, ki)
        + k + '"isolation": ' + _string(c.isolation)
        + k + '"memory": ' + _memory(c.memory, ki)
        + k + '"devices": ' + (
            "{}" if not devices
            else json_at({res: list(ids) for res, ids in sorted(devices.items())}, ki)
        )
        + k + '"topologyHint": ' + _hint(hint, ki)
        + k + '"cpuQuotaDisabled": ' + ("true" if c.cpu_quota_disabled else "false")
        + "\n" + ind + "}"
    )


def _list(parts: list[str], ind: str) -> str:
    if not parts:
        return "[]"
    inner = "\n" + ind + "  "
    return "[" + inner + ("," + inner).join(parts) + "\n" + ind + "]"


def step_json(step: StepResult, ind: str, *, detail: bool = True) -> str:
    """The step's document (``step_document(step, detail=detail)``) as
    JSON nested ``ind`` deep."""
    ki = ind + "  "
    k = ",\n" + ki
    removal = step.op != "addPod"
    alloc = step.pod_allocation
    out = [
        "{\n" + ki + '"index": ' + str(step.index)
        + k + '"op": ' + _string(step.op)
        + k + '"pod": ' + _string(step.pod)
        + k + '"podUID": ' + _string(step.pod_uid)
    ]
    if step.op == "removeContainer":
        out.append(k + '"container": ' + _opt(step.container))
    out.append(
        k + '"admitted": ' + ("null" if removal else _bool(step.admitted))
        + k + '"reason": ' + ("null" if removal else _opt(step.reason))
        + k + '"message": ' + ("null" if removal else _opt(step.message))
        + k + '"qosClass": ' + _opt(step.qos_class)
        + k + '"podAllocation": ' + (
            "null" if alloc is None
            else "{\n" + ki + '  "cpus": ' + _cpus(alloc.cpus)
            + ",\n" + ki + '  "memory": ' + _memory(alloc.memory, ki + "  ")
            + "\n" + ki + "}"
        )
        + k + '"containers": '
        + _list([_container(c, ki + "  ") for c in step.containers], ki)
        + k + '"defaultCpuSet": ' + _cpus(step.default_cpuset)
    )
    if detail:
        out.append(k + '"providerHints": ' + json_at([hint_record(h) for h in step.hints], ki))
    i2 = ki + "  "
    i3 = i2 + "  "
    merged = [
        "{\n" + i3 + '"container": ' + _opt(m.container)
        + ",\n" + i3 + '"hint": ' + _hint(m.hint, i3)
        + ",\n" + i3 + '"admit": ' + ("true" if m.admit else "false")
        + "\n" + i2 + "}"
        for m in step.merged
    ]
    out.append(k + '"mergedHints": ' + _list(merged, ki))
    out.append(
        k + '"rejectedAt": ' + (
            "null" if step.failed_stage is None
            else "{\n" + i2 + '"stage": ' + _string(step.failed_stage)
            + ",\n" + i2 + '"container": ' + _opt(step.failed_container)
            + "\n" + ki + "}"
        )
    )
    if detail:
        out.append(k + '"podResources": ' + json_at([p.to_json() for p in step.pod_resources], ki))
    out.append("\n" + ind + "}")
    return "".join(out)
