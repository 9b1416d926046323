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
from collections.abc import Callable
from types import FunctionType
from typing import Any, Final

from podnuma.cm.results import ContainerResult, MemoryBlock, StepResult
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.machine.cpuset import CPUSet
from podnuma.scenario.document import hint_record

__all__ = ["cpu_list", "json_at", "step_json"]

_string: Final[Callable[[str], str]] = json.encoder.encode_basestring  # type: ignore[attr-defined]

#: the JSON string of each CPU set written lately, by its mask: a run
#: writes the same few sets (each container's, the shared pool) step after
#: step, and listing a fragmented set's ranges costs more than the rest of
#: a container's text
_CPUS: Final[dict[int, str]] = {}
_CPUS_KEPT: Final = 4096


#: the decimal text of each CPU number (grown on demand)
_NUMBERS: Final[list[str]] = [str(i) for i in range(1024)]


def _probe() -> None:
    """A Python function when this module runs as Python, a builtin one
    when it is compiled (the full build)."""


#: whether this module runs compiled: :func:`cpu_list` then reads the mask a
#: byte at a time (each byte a machine integer), which pure Python does
#: slower than going through the whole mask a run at a time
_COMPILED: Final = not isinstance(_probe, FunctionType)


def cpu_list(mask: int) -> str:
    """The CPU set of ``mask`` in the Linux list format, as ``str(CPUSet)``
    writes it."""
    numbers = _NUMBERS
    if mask.bit_length() > len(numbers):
        numbers.extend(str(i) for i in range(len(numbers), mask.bit_length()))
    if _COMPILED:
        return _cpu_list_bytes(mask, numbers)
    return _cpu_list_runs(mask, numbers)


def _cpu_list_runs(mask: int, numbers: list[str]) -> str:
    """:func:`cpu_list` a run of ones at a time, lowest first: the run
    starts at the lowest one; adding that one carries through the run into
    the zero above its end, the lowest one of the sum, which is then taken
    off with the run (``mask & ~(mask << 1)`` and ``mask & ~(mask >> 1)``,
    every start and every end first, cost more: four operations over the
    whole mask before the first run)."""
    out = []
    while mask:
        low = mask & -mask
        lo = low.bit_length() - 1
        mask += low
        top = mask & -mask
        hi = top.bit_length() - 2
        mask ^= top
        out.append(numbers[lo] if lo == hi else numbers[lo] + "-" + numbers[hi])
    return ",".join(out)


def _cpu_list_bytes(mask: int, numbers: list[str]) -> str:
    """:func:`cpu_list` a byte of the mask at a time, lowest first (the
    mask turned into bytes once; a byte of all ones or all zeros goes on
    with the open run or the gap, any other byte is read bit by bit):
    ``lo`` is where the open run started, -1 in a gap. The text is built as
    pieces joined once (no string made per range)."""
    data = mask.to_bytes((mask.bit_length() + 7) >> 3, "little")
    out: list[str] = []
    lo = -1
    base = 0
    for i in range(len(data)):
        b = data[i]
        if b == 255:
            if lo < 0:
                lo = base
        elif b == 0:
            if lo >= 0:
                _close_run(out, numbers, lo, base - 1)
                lo = -1
        else:
            for bit in range(8):
                if (b >> bit) & 1:
                    if lo < 0:
                        lo = base + bit
                elif lo >= 0:
                    _close_run(out, numbers, lo, base + bit - 1)
                    lo = -1
        base += 8
    if lo >= 0:
        _close_run(out, numbers, lo, base - 1)
    return "".join(out)


def _close_run(out: list[str], numbers: list[str], lo: int, hi: int) -> None:
    """The pieces of the run of CPUs ``lo``..``hi`` after those of the runs
    below it."""
    if out:
        out.append(",")
    out.append(numbers[lo])
    if hi != lo:
        out.append("-")
        out.append(numbers[hi])


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
_INTS: Final[dict[tuple[tuple[int, ...], str], str]] = {}
_HINTS: Final[dict[tuple[int | None, bool, str], str]] = {}


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


class _Layout:
    """The fixed text of a step nested ``ind`` deep: each key with the
    line break and indent before it, and the parts that are constants."""

    def __init__(self, ind: str) -> None:
        ki = ind + "  "  # the step's keys
        k = ",\n" + ki
        ci = ki + "    "  # a container's keys
        c = ",\n" + ci
        self.ind, self.ki, self.i2, self.ci = ind, ki, ki + "  ", ci
        self.index = "{\n" + ki + '"index": '
        self.op = k + '"op": '
        self.pod = k + '"pod": '
        self.pod_uid = k + '"podUID": '
        self.container = k + '"container": '
        self.admitted = k + '"admitted": '
        self.reason = k + '"reason": '
        self.message = k + '"message": '
        self.removal = k + '"admitted": null' + k + '"reason": null' + k + '"message": null'
        self.qos = k + '"qosClass": '
        self.no_alloc = k + '"podAllocation": null'
        self.alloc = k + '"podAllocation": {\n' + ki + '  "cpus": '
        self.alloc_memory = ",\n" + ki + '  "memory": '
        self.alloc_end = "\n" + ki + "}"
        self.containers = k + '"containers": '
        self.no_containers = k + '"containers": []'
        self.list_open = "[\n" + ki + "  "
        self.list_sep = ",\n" + ki + "  "
        self.list_close = "\n" + ki + "]"
        self.default = k + '"defaultCpuSet": '
        self.provider_hints = k + '"providerHints": '
        self.merged = k + '"mergedHints": '
        self.no_merged = k + '"mergedHints": []'
        self.rejected = k + '"rejectedAt": '
        self.no_rejected = k + '"rejectedAt": null'
        self.pod_resources = k + '"podResources": '
        self.close = "\n" + ind + "}"
        self.c_name = "{\n" + ci + '"name": '
        self.c_type = c + '"type": '
        self.c_cpus = c + '"cpus": '
        self.c_mems = c + '"mems": '
        self.c_isolation = c + '"isolation": '
        self.c_memory = c + '"memory": '
        self.c_no_devices = c + '"devices": {}'
        self.c_devices = c + '"devices": '
        self.c_hint = c + '"topologyHint": '
        self.c_quota_off = c + '"cpuQuotaDisabled": true\n' + ki + "  }"
        self.c_quota_on = c + '"cpuQuotaDisabled": false\n' + ki + "  }"


_LAYOUTS: Final[dict[str, _Layout]] = {}


def _container(c: ContainerResult, lay: _Layout) -> str:
    """One container, an item of the step's ``containers`` list."""
    hint = c.topology_hint if c.topology_hint is not None else EMPTY_HINT
    devices = c.devices
    ci = lay.ci
    return "".join([
        lay.c_name, _string(c.name),
        lay.c_type, _string(c.type),
        lay.c_cpus, _cpus(c.cpus),
        lay.c_mems, _ints(c.mems, ci),
        lay.c_isolation, _string(c.isolation),
        lay.c_memory, _memory(c.memory, ci),
        lay.c_no_devices if not devices else lay.c_devices + json_at(
            {res: list(ids) for res, ids in sorted(devices.items())}, ci
        ),
        lay.c_hint, _hint(hint, ci),
        lay.c_quota_off if c.cpu_quota_disabled else lay.c_quota_on,
    ])


def _list(parts: list[str], ind: str) -> str:
    if not parts:
        return "[]"
    inner = "\n" + ind + "  "
    return "[" + inner + ("," + inner).join(parts) + "\n" + ind + "]"


def step_json(step: StepResult, ind: str, *, detail: bool = True) -> str:
    """The step's document (``step_document(step, detail=detail)``) as
    JSON nested ``ind`` deep."""
    lay = _LAYOUTS.get(ind)
    if lay is None:
        lay = _LAYOUTS[ind] = _Layout(ind)
    op = step.op
    out = [
        lay.index, str(step.index),
        lay.op, _string(op),
        lay.pod, _string(step.pod),
        lay.pod_uid, _string(step.pod_uid),
    ]
    if op == "removeContainer":
        out += (lay.container, _opt(step.container))
    if op != "addPod":
        out.append(lay.removal)
    else:
        out += (
            lay.admitted, _bool(step.admitted),
            lay.reason, _opt(step.reason),
            lay.message, _opt(step.message),
        )
    out += (lay.qos, _opt(step.qos_class))
    alloc = step.pod_allocation
    if alloc is None:
        out.append(lay.no_alloc)
    else:
        out += (
            lay.alloc, _cpus(alloc.cpus), lay.alloc_memory, _memory(alloc.memory, lay.i2),
            lay.alloc_end,
        )
    containers = step.containers
    if not containers:
        out.append(lay.no_containers)
    else:
        out += (
            lay.containers, lay.list_open,
            lay.list_sep.join([_container(c, lay) for c in containers]),
            lay.list_close,
        )
    out += (lay.default, _cpus(step.default_cpuset))
    ki = lay.ki
    if detail:
        out += (lay.provider_hints, json_at([hint_record(h) for h in step.hints], ki))
    if not step.merged:
        out.append(lay.no_merged)
    else:
        i2 = lay.i2
        i3 = i2 + "  "
        merged = [
            "{\n" + i3 + '"container": ' + _opt(m.container)
            + ",\n" + i3 + '"hint": ' + _hint(m.hint, i3)
            + ",\n" + i3 + '"admit": ' + ("true" if m.admit else "false")
            + "\n" + i2 + "}"
            for m in step.merged
        ]
        out += (lay.merged, _list(merged, ki))
    if step.failed_stage is None:
        out.append(lay.no_rejected)
    else:
        i2 = lay.i2
        out += (
            lay.rejected,
            "{\n" + i2 + '"stage": ' + _string(step.failed_stage)
            + ",\n" + i2 + '"container": ' + _opt(step.failed_container)
            + "\n" + ki + "}",
        )
    if detail:
        out += (lay.pod_resources, json_at([p.to_json() for p in step.pod_resources], ki))
    out.append(lay.close)
    return "".join(out)
