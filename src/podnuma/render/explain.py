"""``podnuma explain``: the decision trail of each admission, for people.

Reads what the core recorded while it decided (``StepResult``: every
provider's hints, the merged hint, the stage that rejected the pod, each
container's CPUs, memory blocks and devices) and puts it in words: the QoS
class and why, the hints as a table (nil "no preference" vs empty "no
placement possible"), why the merged hint won and whether the policy admits
it, each container's pool, and for a rejection the exact stage with the
kubelet's reason and message. Nothing the core decided is re-derived here;
the rules quoted next to the records (tie-breaks, the pickers' orderings)
come from the configuration and are stated as rules, not recomputed.

For a rejection it also searches for the **nearest admissible
configuration**: the scenario is re-run up to the rejected step with one
change at a time (a looser topology policy, the other scope, fewer CPUs for
the biggest exclusive container, a larger pod CPU budget, one running pod
removed first) and each outcome is reported from the re-run's own records.
The search is capped (``MAX_RERUNS`` runs per rejection).

Pure functions build a JSON-able document (``explain_run`` /
``explain_step``); ``render_text`` prints it with rich; ``explain_command``
is the click command (registered by ``podnuma.cli``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity
from podnuma.api.resources import is_pod_level_resources_set
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy import (
    ProviderHints,
    filter_providers_hints,
    max_of_min_affinity_counts,
)
from podnuma.cm.topologymanager.policy_options import PolicyOptions
from podnuma.cm.topologymanager.policy_single_numa_node import filter_single_numa_hints
from podnuma.errors import InputError, KubeletStartupError
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.results import ContainerResult, HintRecord, MemoryBlock, StepResult
from podnuma.scenario.load import Scenario, Step
from podnuma.scenario.run import RunResult, run_scenario

__all__ = [
    "MAX_RERUNS",
    "PROVIDERS",
    "Variation",
    "Outcome",
    "explain_run",
    "explain_step",
    "explain_qos",
    "explain_topology",
    "explain_containers",
    "explain_rejection",
    "outcome_summary",
    "select_steps",
    "apply_variation",
    "run_variation",
    "candidate_variations",
    "nearest_admissible",
    "render_text",
    "explain_command",
]

MAX_RERUNS = 20
# The hint providers in the order the kubelet registers them.
PROVIDERS = ("device", "cpu", "memory")

_QOS_RESOURCES = ("cpu", "memory")
_POOL_NAMES = {"container": "exclusive slice", "pod": "pod shared pool", "host": "node shared pool"}
_UNITS = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


# --------------------------------------------------------------------------
# small formatting helpers
# --------------------------------------------------------------------------


def _size(n: int) -> str:
    if n == 0:
        return "0"
    for suffix, unit in _UNITS:
        if n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def _nodes(nodes: Iterable[int] | None) -> str:
    if nodes is None:
        return "any"
    lst = sorted(nodes)
    return ",".join(str(n) for n in lst) if lst else "none"


def _hint_json(hint: TopologyHint | None) -> dict[str, Any] | None:
    return None if hint is None else hint.to_json()


def _hint_text(hint: Mapping[str, Any]) -> str:
    nodes = hint["numaNodes"]
    mark = "preferred" if hint["preferred"] else "not preferred"
    return f"{_nodes(nodes)} ({mark})"


def _numa_of_cpus(machine: Machine, cpus: CPUSet) -> list[int]:
    info = machine.topology.cpu_info
    return sorted({info[c].numa_node for c in cpus.list() if c in info})


def _whole_cores(machine: Machine, cpus: CPUSet) -> int:
    """How many cores of the machine lie entirely inside ``cpus``."""
    info = machine.topology.cpu_info
    by_core: dict[int, int] = {}
    for c in cpus.list():
        if c in info:
            by_core[info[c].core] = by_core.get(info[c].core, 0) + 1
    per_core = machine.topology.cpus_per_core()
    return sum(1 for n in by_core.values() if n == per_core)


# --------------------------------------------------------------------------
# QoS
# --------------------------------------------------------------------------


def _guaranteed_gap(reqs: Mapping[str, Quantity], lims: Mapping[str, Quantity]) -> str | None:
    """Why a (requests, limits) pair keeps the pod from Guaranteed, or None."""
    for name in _QOS_RESOURCES:
        lim = lims.get(name)
        if lim is None or lim.is_zero():
            return f"no {name} limit"
        req = reqs.get(name)
        if req is not None and not req.is_zero() and req != lim:
            return f"{name} request {req} != limit {lim}"
    return None


def _has_any(reqs: Mapping[str, Quantity], lims: Mapping[str, Quantity]) -> bool:
    return any(
        (m.get(n) is not None and not m[n].is_zero()) for m in (reqs, lims) for n in _QOS_RESOURCES
    )


def explain_qos(pod: Pod, qos: str | None, config: KubeletConfig) -> dict[str, Any]:
    """The QoS class the core computed, where it came from (pod-level
    ``spec.resources`` or the containers) and the deciding fact."""
    pod_level = config.feature_gates.enabled("PodLevelResources") and is_pod_level_resources_set(pod)
    if pod_level:
        assert pod.resources is not None
        source = "pod-level"
        sets: list[tuple[str, Mapping[str, Quantity], Mapping[str, Quantity]]] = [
            ("the pod's spec.resources", pod.resources.requests, pod.resources.limits)
        ]
    else:
        source = "containers"
        sets = [
            (f"container {c.name}", c.requests, c.limits)
            for c in (*pod.containers, *pod.init_containers)
        ]
    if qos == "BestEffort":
        why = (
            "spec.resources sets no cpu or memory"
            if pod_level
            else "no container sets cpu or memory requests or limits"
        )
    elif qos == "Guaranteed":
        why = (
            "spec.resources sets cpu and memory limits equal to the requests"
            if pod_level
            else "every container sets cpu and memory limits equal to its requests"
        )
    else:
        why = "requests are set but not everything is Guaranteed"
        for who, reqs, lims in sets:
            gap = _guaranteed_gap(reqs, lims)
            if gap is not None:
                why = f"{who}: {gap}"
                break
            if not _has_any(reqs, lims):
                why = f"{who}: no cpu or memory requests or limits"
                break
    return {"class": qos, "source": source, "why": why}


_SOURCE_TEXT = {"pod-level": "from the pod-level spec.resources", "containers": "from the containers' resources"}


# --------------------------------------------------------------------------
# Topology: provider hints, the merge
# --------------------------------------------------------------------------


def _groups(step: StepResult) -> list[str | None]:
    """The merge groups (containers, or ``None`` for the pod) in the order
    the topology manager handled them."""
    order: list[str | None] = []
    for m in step.merged:
        if m.container not in order:
            order.append(m.container)
    for h in step.hints:
        if h.container not in order:
            order.append(h.container)
    return order


def _provider_rows(records: Sequence[HintRecord]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for provider in PROVIDERS:
        mine = [r for r in records if r.provider == provider]
        if not mine:
            rows.append({
                "provider": provider, "resource": None, "hints": None, "kind": "none",
                "meaning": "nothing to align (empty map): no preference",
            })
            continue
        for r in mine:
            if r.hints is None:
                kind, meaning = "nil", "nil: no preference (does not constrain the merge)"
            elif len(r.hints) == 0:
                kind, meaning = "empty", "empty: no placement possible (only a non-preferred merge)"
            else:
                n_pref = sum(1 for h in r.hints if h.preferred)
                kind = "hints"
                meaning = f"{len(r.hints)} hint(s), {n_pref} preferred"
            rows.append({
                "provider": provider,
                "resource": r.resource or None,
                "hints": None if r.hints is None else [h.to_json() for h in r.hints],
                "kind": kind,
                "meaning": meaning,
            })
    for r in records:  # a provider podnuma does not know: keep it anyway
        if r.provider not in PROVIDERS:
            rows.append({
                "provider": r.provider, "resource": r.resource or None,
                "hints": None if r.hints is None else [h.to_json() for h in r.hints],
                "kind": "nil" if r.hints is None else ("empty" if not r.hints else "hints"),
                "meaning": "",
            })
    return rows


def _provider_hints(records: Sequence[HintRecord]) -> list[ProviderHints]:
    """The providers' answers as the merge received them, rebuilt from the
    records (a provider without records answered with an empty map)."""
    out: list[ProviderHints] = []
    for provider in PROVIDERS:
        mine = [r for r in records if r.provider == provider]
        if len(mine) == 1 and mine[0].hints is None and not mine[0].resource:
            out.append(None)
            continue
        out.append({r.resource: (None if r.hints is None else list(r.hints)) for r in mine})
    return out


def _prefer_closest(config: KubeletConfig) -> bool:
    value = config.topology_manager_policy_options.get("prefer-closest-numa-nodes", "false")
    return value.strip().lower() in ("1", "t", "true")


def _preferred_candidates(
    lists: Sequence[Sequence[TopologyHint]], default: BitMask
) -> list[BitMask]:
    """Masks a preferred merge can produce: every resource offers the mask as
    a preferred hint, or has a preferred "don't care" (nil) hint."""
    common: set[int] | None = None
    for lst in lists:
        if any(h.numa_node_affinity is None and h.preferred for h in lst):
            continue  # a wildcard: any mask, or nil
        masks = {
            h.numa_node_affinity.value
            for h in lst
            if h.preferred and h.numa_node_affinity is not None
        }
        common = masks if common is None else common & masks
    if common is None:
        return [default]
    return [BitMask.from_int(m & default.value) for m in sorted(common) if m & default.value]


def _merge_why(
    group: str | None,
    records: Sequence[HintRecord],
    merged: TopologyHint,
    admit: bool,
    config: KubeletConfig,
    machine: Machine,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The rules behind the recorded merge, in words, and the average
    distances of the equal-width candidates when prefer-closest is on."""
    policy = config.topology_manager_policy
    who = "the pod" if group is None else f"container {group}"
    why: list[str] = []
    distances: list[dict[str, Any]] = []
    default = BitMask(machine.numa_ids())
    lists: Sequence[Sequence[TopologyHint]] = filter_providers_hints(_provider_hints(records))
    if policy == "single-numa-node":
        lists = filter_single_numa_hints(lists)
        why.append(
            "single-numa-node: only preferred hints naming one NUMA node (or no preference) "
            "take part; prefer-closest-numa-nodes is ignored"
        )
    else:
        why.append(
            f"{policy}: every combination of one hint per provider and resource is ANDed; a "
            "combination is preferred only if all its hints are preferred and name the same NUMA nodes"
        )
    for r in records:
        if r.hints is not None and len(r.hints) == 0:
            why.append(
                f"{r.provider} ({r.resource}) returned an empty list: no placement possible, "
                "so no merge for this group can be preferred"
            )
    candidates = _preferred_candidates(lists, default)
    no_combination = any(not lst for lst in lists)
    if no_combination:
        candidates = []
        why.append(
            "a resource has no hint left"
            + (" after filtering" if policy == "single-numa-node" else "")
            + ": there is no combination to merge, so the result is every NUMA node, not preferred"
        )
    use_closest = _prefer_closest(config) and policy != "single-numa-node"
    aff = merged.numa_node_affinity
    if merged.preferred:
        cands = ", ".join("{" + _nodes(c.bits()) + "}" for c in candidates) or "-"
        why.append(f"preferred masks every provider agrees on: {cands}")
        if len(candidates) > 1:
            if use_closest:
                why.append(
                    "tie-break (prefer-closest-numa-nodes): fewer NUMA nodes first, then the "
                    "lowest average distance, then the lower-numbered nodes"
                )
            else:
                why.append("tie-break: fewer NUMA nodes first, then the lower-numbered nodes")
    else:
        if candidates:
            why.append("no preferred merge was found")  # cannot happen per upstream; be honest
        else:
            prefs = []
            for r in records:
                if r.hints:
                    masks = [h for h in r.hints if h.preferred and h.numa_node_affinity is not None]
                    shown = ", ".join(
                        "{" + _nodes(h.numa_node_affinity.bits()) + "}"
                        for h in masks
                        if h.numa_node_affinity is not None
                    )
                    prefs.append(f"{r.provider} ({r.resource}) prefers {shown or 'nothing'}")
            why.append(
                "no NUMA mask is preferred by every provider and resource"
                + (": " + "; ".join(prefs) if prefs else "")
            )
        target = max_of_min_affinity_counts(lists)
        if no_combination:
            pass
        elif target:
            why.append(
                f"among non-preferred merges the winner aims at {target} NUMA node(s), the widest "
                "of each resource's narrowest hint; then "
                + ("closest (lowest average distance)" if use_closest else "lower-numbered nodes")
            )
        else:
            why.append("nothing to merge: the result is every NUMA node, not preferred")
    if use_closest:
        info = _numa_info(machine)
        width = aff.count() if aff is not None else default.count()
        pool = candidates if merged.preferred else ([aff] if aff is not None else [])
        seen: set[int] = set()
        for c in [*pool, *([aff] if aff is not None else [])]:
            if c is None or c.count() != width or c.value in seen:
                continue
            seen.add(c.value)
            if info is not None:
                with contextlib.suppress(KeyError):
                    distances.append(
                        {"numaNodes": c.bits(), "averageDistance": info.average_distance(c)}
                    )
        if distances:
            why.append(
                "average distances: "
                + ", ".join(
                    "{" + _nodes(d["numaNodes"]) + f"}}={d['averageDistance']:g}" for d in distances
                )
                + (f"; the recorded winner {{{_nodes(aff.bits())}}} is the closest" if aff is not None and len(distances) > 1 else "")
            )
    if policy == "single-numa-node" and aff is None:
        why.append("a merge spanning every NUMA node is reported as nil (any NUMA node)")
    if merged.preferred:
        why.append(f"preferred: every policy admits it -> {who} admitted by the topology manager")
    elif admit:
        why.append("not preferred: best-effort admits it anyway (restricted/single-numa-node would reject)")
    else:
        why.append(f"not preferred: {policy} admits only a preferred hint -> {who} rejected")
    return why, distances


def _numa_info(machine: Machine) -> NUMAInfo | None:
    try:
        return NUMAInfo.from_machine(machine, PolicyOptions(prefer_closest_numa=True))
    except KubeletStartupError:
        return None


def explain_topology(step: StepResult, config: KubeletConfig, machine: Machine) -> dict[str, Any]:
    policy = config.topology_manager_policy
    doc: dict[str, Any] = {
        "policy": policy,
        "scope": config.topology_manager_scope,
        "options": dict(config.topology_manager_policy_options),
        "merges": [],
        "note": None,
    }
    if policy == "none":
        doc["note"] = (
            "topology policy none: no hints are gathered or merged; every container's stored "
            "hint is 'any NUMA node' (nil) and the managers allocate without alignment"
        )
        return doc
    merged = {m.container: m for m in step.merged}
    for group in _groups(step):
        records = [r for r in step.hints if r.container == group]
        m = merged.get(group)
        entry: dict[str, Any] = {
            "container": group,
            "providers": _provider_rows(records),
            "merged": None if m is None else m.hint.to_json(),
            "admit": None if m is None else m.admit,
            "why": [],
            "distances": [],
        }
        if m is not None:
            entry["why"], entry["distances"] = _merge_why(
                group, records, m.hint, m.admit, config, machine
            )
        doc["merges"].append(entry)
    if not doc["merges"]:
        doc["note"] = "the topology manager recorded no merge for this pod"
    return doc


# --------------------------------------------------------------------------
# Containers: pools and placement
# --------------------------------------------------------------------------


def _cpu_policy_rule(config: KubeletConfig) -> str:
    opts = {k for k, v in config.cpu_manager_policy_options.items() if v.strip().lower() in ("true", "1", "t")}
    parts: list[str] = []
    if "distribute-cpus-across-numa" in opts:
        parts.append(
            "distribute-cpus-across-numa: spread evenly over the fewest NUMA nodes needed"
        )
    elif "distribute-cpus-across-cores" in opts:
        parts.append("distribute-cpus-across-cores: one thread per core first, socket by socket")
    else:
        parts.append(
            "packed: the NUMA node/socket with fewer free CPUs first, whole sockets or NUMA "
            "nodes, then whole cores, then single threads, lowest ids first"
        )
    if "full-pcpus-only" in opts:
        parts.append("full-pcpus-only: whole physical cores only")
    if "align-by-socket" in opts:
        parts.append("align-by-socket: aligned to the hint's sockets")
    if "prefer-align-cpus-by-uncorecache" in opts:
        parts.append("prefer-align-cpus-by-uncorecache: within as few L3 caches as possible")
    if "strict-cpu-reservation" in opts:
        parts.append("strict-cpu-reservation: reserved CPUs stay out of the shared pool")
    return "static policy, " + "; ".join(parts) + "; CPUs on the hint's NUMA nodes are taken first"


def _host_reason(pod: Pod | None, spec: Container | None, qos: str | None, config: KubeletConfig) -> str:
    if config.cpu_manager_policy != "static":
        return "CPU manager policy none: every container shares the node's CPUs"
    if qos != "Guaranteed":
        return f"QoS {qos}: only Guaranteed pods get exclusive CPUs"
    if spec is None:
        return "no exclusive CPUs recorded"
    cpu = spec.requests.get("cpu")
    if cpu is None or cpu.is_zero():
        return "no cpu request: nothing to make exclusive"
    if cpu.milli_value() % 1000:
        return f"cpu request {cpu} is not a whole number of CPUs"
    return "no exclusive CPUs recorded for it"


def explain_containers(
    step: StepResult, pod: Pod | None, config: KubeletConfig, machine: Machine
) -> list[dict[str, Any]]:
    spec = {c.name: c for c in (*pod.init_containers, *pod.containers)} if pod is not None else {}
    pod_cpus = step.pod_allocation.cpus if step.pod_allocation is not None else None
    exclusive_long = CPUSet()
    for c in step.containers:
        if c.isolation == "container" and c.type != "init":
            exclusive_long = exclusive_long | c.cpus
    init_exclusive: list[ContainerResult] = [
        c for c in step.containers if c.type == "init" and c.isolation == "container"
    ]
    out: list[dict[str, Any]] = []
    for c in step.containers:
        why: list[str] = []
        cpu_numa = _numa_of_cpus(machine, c.cpus)
        if c.isolation == "container":
            cores = _whole_cores(machine, c.cpus)
            src = (
                f"an exclusive slice of the pod's CPUs {pod_cpus}"
                if pod_cpus is not None
                else "exclusive CPUs"
            )
            why.append(f"{src}: {c.cpus.size()} CPU(s), {cores} whole core(s), on NUMA {_nodes(cpu_numa)}")
            hint = c.topology_hint
            if hint is not None and hint.numa_node_affinity is not None:
                hn = set(hint.numa_node_affinity.bits())
                if set(cpu_numa) <= hn:
                    why.append(f"aligned with the merged hint (NUMA {_nodes(hn)})")
                else:
                    why.append(
                        f"not all on the hint's NUMA {_nodes(hn)}: the remainder came from other nodes"
                    )
            if c.type == "init":
                why.append("an init container: its CPUs can be reused by the containers started after it")
            else:
                for ic in init_exclusive:
                    shared = c.cpus & ic.cpus
                    if shared:
                        why.append(f"reuses CPUs {shared} of init container {ic.name}")
        elif c.isolation == "pod":
            if pod_cpus is not None and (pod_cpus - exclusive_long) == c.cpus:
                why.append(
                    f"pod shared pool = pod CPUs {pod_cpus} - exclusive slices "
                    f"{exclusive_long if exclusive_long else '(none)'} = {c.cpus or '(empty)'}"
                )
            else:
                why.append(f"the pod's shared pool {c.cpus}")
            container = spec.get(c.name)
            if container is not None:
                why.append(
                    "not eligible for an exclusive slice (needs cpu and memory requests equal to "
                    "limits and a whole number of CPUs)"
                )
        else:
            why.append(
                "node shared pool (the default CPU set: CPUs no container holds exclusively)"
            )
            why.append(_host_reason(pod, spec.get(c.name), step.qos_class, config))
        devices = {
            res: {
                "ids": list(ids),
                "numaNodes": sorted({
                    n for d in machine.devices.get(res, ()) if d.id in ids for n in d.numa_nodes
                }),
            }
            for res, ids in sorted(c.devices.items())
        }
        out.append({
            "name": c.name,
            "type": c.type,
            "pool": _POOL_NAMES.get(c.isolation, c.isolation),
            "isolation": c.isolation,
            "cpus": str(c.cpus),
            "cpuNumaNodes": cpu_numa,
            "mems": list(c.mems),
            "memory": [
                {"type": b.type, "numaNodes": list(b.numa_nodes), "size": b.size} for b in c.memory
            ],
            "devices": devices,
            "cfsQuota": "disabled" if c.cpu_quota_disabled else "enabled",
            "topologyHint": _hint_json(c.topology_hint),
            "why": why,
        })
    return out


# --------------------------------------------------------------------------
# Rejection
# --------------------------------------------------------------------------


_STAGE_TEXT = {
    "topology": "topology manager merge: the policy refused the merged hint",
    "allocate:cpu": "CPU manager allocation",
    "allocate:memory": "memory manager allocation",
    "allocate:device": "device manager allocation",
    "nodeAllocatable": "node-allocatable fit (the predicate admit handler: the pod's requests "
    "against allocatable minus the running pods)",
}

_REASON_TEXT = {
    "TopologyAffinityError": "the topology manager could not align the resources as the policy requires",
    "SMTAlignmentError": "full-pcpus-only: exclusive CPUs must fill whole physical cores",
    "EmptyPodSharedPoolError": "the pod's exclusive containers would leave its shared containers no CPUs",
    "UnexpectedAdmissionError": "a manager's allocation failed with a plain error",
}


def explain_rejection(step: StepResult, config: KubeletConfig) -> dict[str, Any] | None:
    if step.admitted is not False:
        return None
    stage = step.failed_stage
    text = _STAGE_TEXT.get(stage or "", stage or "unknown")
    if stage == "topology":
        text = f"topology manager merge: the {config.topology_manager_policy} policy refused the merged hint"
    who = "the pod" if step.failed_container is None else f"container {step.failed_container}"
    reason = step.reason or ""
    meaning = _REASON_TEXT.get(reason)
    if meaning is None and reason.startswith("OutOf"):
        meaning = f"the pod's {reason[5:]} requests do not fit the node's allocatable"
    return {
        "stage": stage,
        "stageText": text,
        "container": step.failed_container,
        "who": who,
        "reason": step.reason,
        "message": step.message,
        "meaning": meaning,
    }


# --------------------------------------------------------------------------
# Nearest admissible configuration
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Variation:
    """One change to try on the scenario, up to the rejected step.

    ``kind``: ``topologyPolicy`` (``value`` = policy), ``topologyScope``
    (``value`` = scope), ``fewerCPUs`` (``container``, ``amount`` CPUs less),
    ``podBudget`` (``amount`` CPUs more on the pod-level budget),
    ``removePod`` (``value`` = the running pod's UID, ``pod`` its ref).
    """

    kind: str
    description: str
    value: str | None = None
    container: str | None = None
    amount: int = 0
    pod: str | None = None
    base: int | None = None  # the CPU count before the change (graded kinds)
    memory: int = 0  # podBudget: bytes added to the pod's memory budget too

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "change": self.description,
            "value": self.value,
            "container": self.container,
            "amount": self.amount or None,
            "pod": self.pod,
            "originalCpus": self.base,
            "memory": self.memory or None,
        }


@dataclass(frozen=True)
class Outcome:
    variation: Variation
    admitted: bool | None  # None: the variation could not run
    reason: str | None = None
    message: str | None = None
    stage: str | None = None
    numa_nodes: tuple[int, ...] | None = None
    cpus: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = self.variation.to_json()
        out.update({
            "admitted": self.admitted,
            "reason": self.reason,
            "message": self.message,
            "stage": self.stage,
            "numaNodes": None if self.numa_nodes is None else list(self.numa_nodes),
            "cpus": self.cpus,
            "error": self.error,
            "summary": outcome_summary(self),
        })
        return out


def _position(scenario: Scenario, index: int) -> int:
    for i, s in enumerate(scenario.steps):
        if s.index == index:
            return i
    raise KeyError(index)


def _set_cpu(res: Mapping[str, Quantity], value: int) -> dict[str, Quantity]:
    out = dict(res)
    if "cpu" in out:
        out["cpu"] = Quantity.from_int(value)
    return out


def _modify_pod(pod: Pod, variation: Variation) -> Pod:
    if variation.kind == "fewerCPUs" and variation.container is not None:
        def shrink(c: Container) -> Container:
            if c.name != variation.container:
                return c
            cpu = c.requests.get("cpu") or c.limits.get("cpu")
            assert cpu is not None
            new = cpu.value() - variation.amount
            return dataclasses.replace(
                c, requests=_set_cpu(c.requests, new), limits=_set_cpu(c.limits, new)
            )

        return dataclasses.replace(
            pod,
            init_containers=tuple(shrink(c) for c in pod.init_containers),
            containers=tuple(shrink(c) for c in pod.containers),
        )
    if variation.kind in ("podBudget", "fewerPodCPUs") and pod.resources is not None:
        cpu = pod.resources.requests.get("cpu") or pod.resources.limits.get("cpu")
        assert cpu is not None
        delta = variation.amount if variation.kind == "podBudget" else -variation.amount
        new = cpu.value() + delta
        requests = _set_cpu(pod.resources.requests, new)
        limits = _set_cpu(pod.resources.limits, new)
        if variation.memory:
            extra = Quantity.from_int(variation.memory, binary=True)
            for res_map in (requests, limits):
                if "memory" in res_map:
                    res_map["memory"] = res_map["memory"] + extra
        res = dataclasses.replace(pod.resources, requests=requests, limits=limits)
        return dataclasses.replace(pod, resources=res)
    return pod


def apply_variation(scenario: Scenario, step_index: int, variation: Variation) -> Scenario:
    """The scenario up to (and including) step ``step_index`` with the
    change applied; the changed step is the last one."""
    pos = _position(scenario, step_index)
    steps = list(scenario.steps[: pos + 1])
    config = scenario.config
    target = steps[-1]
    if variation.kind == "topologyPolicy" and variation.value is not None:
        config = dataclasses.replace(config, topology_manager_policy=variation.value)
    elif variation.kind == "topologyScope" and variation.value is not None:
        config = dataclasses.replace(config, topology_manager_scope=variation.value)
    elif variation.kind in ("fewerCPUs", "podBudget", "fewerPodCPUs"):
        assert target.pod is not None
        steps[-1] = dataclasses.replace(target, pod=_modify_pod(target.pod, variation))
    elif variation.kind == "removePod" and variation.value is not None:
        removal = Step(target.index, "removePod", target.path, ref=variation.value)
        steps.insert(len(steps) - 1, removal)
    else:
        raise ValueError(f"unknown variation {variation.kind!r}")
    return dataclasses.replace(scenario, config=config, steps=tuple(steps))


def _placement(step: StepResult, machine: Machine) -> tuple[tuple[int, ...] | None, str | None]:
    """NUMA nodes the admitted pod's pinned resources landed on, and its
    exclusive/pod CPUs (``None`` when it only uses the shared pools)."""
    nodes: set[int] = set()
    cpus = CPUSet()
    if step.pod_allocation is not None:
        cpus = cpus | step.pod_allocation.cpus
    for c in step.containers:
        if c.isolation != "host":
            cpus = cpus | c.cpus
        for b in c.memory:
            nodes.update(b.numa_nodes)
        for res, ids in c.devices.items():
            for d in machine.devices.get(res, ()):
                if d.id in ids:
                    nodes.update(d.numa_nodes)
    nodes.update(_numa_of_cpus(machine, cpus))
    if not nodes:
        return None, None
    return tuple(sorted(nodes)), (str(cpus) if cpus else None)


def run_variation(scenario: Scenario, step_index: int, variation: Variation) -> Outcome:
    """Re-run the scenario up to the step with ``variation`` applied."""
    try:
        result = run_scenario(apply_variation(scenario, step_index, variation))
    except (InputError, KubeletStartupError, ValueError, AssertionError) as e:
        return Outcome(variation, None, error=str(e))
    last = result.steps[-1]
    if last.admitted:
        nodes, cpus = _placement(last, scenario.machine)
        return Outcome(variation, True, numa_nodes=nodes, cpus=cpus)
    return Outcome(
        variation, False, reason=last.reason, message=last.message, stage=last.failed_stage
    )


def _running_before(scenario: Scenario, result: RunResult, step_index: int) -> list[tuple[str, str, int]]:
    """(uid, ref, exclusive CPUs held) of the pods running when the step came."""
    running: dict[str, tuple[str, int]] = {}
    for uid in _checkpoint_uids(scenario):
        running[uid] = (uid, 0)
    for s in result.steps:
        if s.index >= step_index:
            break
        if s.op == "addPod" and s.admitted:
            held = CPUSet()
            if s.pod_allocation is not None:
                held = held | s.pod_allocation.cpus
            for c in s.containers:
                if c.isolation != "host":
                    held = held | c.cpus
            running[s.pod_uid] = (s.pod, held.size())
        elif s.op == "removePod":
            running.pop(s.pod_uid, None)
    return [(uid, ref, held) for uid, (ref, held) in running.items()]


def _checkpoint_uids(scenario: Scenario) -> list[str]:
    uids: set[str] = set()
    for ck in (scenario.cpu_checkpoint, scenario.memory_checkpoint):
        if ck is None:
            continue
        for attr in ("entries", "pod_entries"):
            value = getattr(ck, attr, None)
            if isinstance(value, Mapping):
                uids.update(str(k) for k in value)
    return sorted(uids)


def _cpu_count(res: Mapping[str, Quantity]) -> int | None:
    cpu = res.get("cpu")
    if cpu is None or cpu.is_zero() or cpu.milli_value() % 1000:
        return None
    return cpu.value()


def _biggest_exclusive(pod: Pod) -> tuple[str, int] | None:
    """The container with the most whole CPUs requested (= limit)."""
    best: tuple[str, int] | None = None
    for c in (*pod.init_containers, *pod.containers):
        n = _cpu_count(c.requests)
        lim = c.limits.get("cpu")
        if n is None or n < 2 or lim is None or lim != c.requests.get("cpu"):
            continue
        if best is None or n > best[1]:
            best = (c.name, n)
    return best


def candidate_variations(
    scenario: Scenario, result: RunResult, step: StepResult
) -> list[list[Variation]]:
    """The changes worth trying for a rejected step, in families; within a
    ``fewerCPUs`` family the first admitted one is the nearest."""
    config = scenario.config
    pod = scenario.steps[_position(scenario, step.index)].pod
    families: list[list[Variation]] = []
    policy = config.topology_manager_policy
    allocatable_only = step.failed_stage == "nodeAllocatable"
    if not allocatable_only and policy in ("restricted", "single-numa-node"):
        fam = [Variation("topologyPolicy", "topologyManagerPolicy best-effort", value="best-effort")]
        if policy == "single-numa-node":
            fam.append(Variation("topologyPolicy", "topologyManagerPolicy restricted", value="restricted"))
        families.append(fam)
    if not allocatable_only and policy != "none":
        other = "pod" if config.topology_manager_scope == "container" else "container"
        families.append([Variation("topologyScope", f"topologyManagerScope {other}", value=other)])
    if pod is not None and pod.resources is not None and _cpu_count(pod.resources.requests):
        budget = _cpu_count(pod.resources.requests) or 0
        # The empty-pod-shared-pool check also hides behind a TopologyAffinityError:
        # the CPU manager then returns no pod hints and restricted/single-numa-node
        # refuse the merge before AllocatePod can say why.
        pod_scope_merge = step.failed_stage == "topology" and step.failed_container is None
        if step.reason == "EmptyPodSharedPoolError" or pod_scope_merge:
            fam = [Variation("podBudget", f"pod CPU budget {budget + 1} (1 more)", amount=1, base=budget)]
            if "memory" in pod.resources.requests:
                # The memory manager runs the same empty-pool check on the memory budget.
                fam.append(Variation(
                    "podBudget", f"pod CPU budget {budget + 1} (1 more) and 1Gi more memory",
                    amount=1, base=budget, memory=1 << 30,
                ))
            fam.append(Variation("podBudget", f"pod CPU budget {budget + 2} (2 more)", amount=2, base=budget))
            families.append(fam)
    if pod is not None:
        big = _biggest_exclusive(pod)
        if big is not None:
            name, n = big
            families.append([
                Variation(
                    "fewerCPUs",
                    f"{k} fewer CPU(s) for container {name} ({n - k} instead of {n})",
                    container=name,
                    amount=k,
                    base=n,
                )
                for k in range(1, min(n - 1, 6) + 1)
            ])
        elif pod.resources is not None and (_cpu_count(pod.resources.requests) or 0) >= 2:
            n = _cpu_count(pod.resources.requests) or 0
            families.append([
                Variation("fewerPodCPUs", f"pod CPU budget {n - k} ({k} fewer)", amount=k, base=n)
                for k in range(1, min(n - 1, 4) + 1)
            ])
    running = _running_before(scenario, result, step.index)
    # Try the pods holding the most exclusive CPUs first.
    running.sort(key=lambda r: -r[2])
    families.append([
        Variation("removePod", f"remove running pod {ref} first", value=uid, pod=ref)
        for uid, ref, _held in running
        if uid != step.pod_uid
    ])
    return families


def nearest_admissible(
    scenario: Scenario, result: RunResult, step: StepResult, *, max_runs: int = MAX_RERUNS
) -> list[Outcome]:
    """Re-run with each candidate change (at most ``max_runs`` runs) and
    report the outcomes. In the graded families (fewer CPUs, larger budget)
    the search stops at the first change that admits the pod."""
    families = candidate_variations(scenario, result, step)
    out: list[Outcome] = []
    runs = 0
    for fam in families:
        for v in fam:
            if runs >= max_runs:
                return out
            outcome = run_variation(scenario, step.index, v)
            runs += 1
            graded = v.kind in ("fewerCPUs", "podBudget", "fewerPodCPUs")
            if graded and not outcome.admitted and v is not fam[-1]:
                continue  # only the nearest (first admitted) or the last tried is reported
            out.append(outcome)
            if graded and outcome.admitted:
                break
    return out


def _instead(v: Variation) -> str:
    """The new CPU count against the original one, e.g. " (16 instead of 20)"."""
    if v.base is None:
        return ""
    new = v.base + v.amount if v.kind == "podBudget" else v.base - v.amount
    return f" ({new} instead of {v.base})"


def outcome_summary(o: Outcome) -> str:
    v = o.variation
    if o.admitted is None:
        return f"{v.description}: could not be tried ({o.error})"
    where = f" on NUMA node(s) {_nodes(o.numa_nodes)}" if o.numa_nodes else ""
    if o.admitted:
        if v.kind == "removePod":
            return f"fits{where} if pod {v.pod} is removed"
        if v.kind == "fewerCPUs":
            return f"fits with {v.amount} fewer CPU(s) for container {v.container}{_instead(v)}{where}"
        if v.kind == "podBudget":
            more = f" and {_size(v.memory)} more memory" if v.memory else ""
            return f"fits with a pod CPU budget {v.amount} CPU(s) larger{_instead(v)}{more}{where}"
        if v.kind == "fewerPodCPUs":
            return f"fits with a pod CPU budget {v.amount} CPU(s) smaller{_instead(v)}{where}"
        return f"fits with {v.description}{where}"
    if v.kind in ("fewerCPUs", "fewerPodCPUs"):
        return f"still rejected even with {v.description} ({o.reason})"
    return f"still rejected with {v.description} ({o.reason})"


# --------------------------------------------------------------------------
# The document
# --------------------------------------------------------------------------


def _config_doc(config: KubeletConfig) -> dict[str, Any]:
    return {
        "topologyManagerPolicy": config.topology_manager_policy,
        "topologyManagerScope": config.topology_manager_scope,
        "topologyManagerPolicyOptions": dict(config.topology_manager_policy_options),
        "cpuManagerPolicy": config.cpu_manager_policy,
        "cpuManagerPolicyOptions": dict(config.cpu_manager_policy_options),
        "memoryManagerPolicy": config.memory_manager_policy,
        "podLevelResources": config.feature_gates.enabled("PodLevelResources"),
        "podLevelResourceManagers": config.feature_gates.enabled("PodLevelResourceManagers"),
    }


def _memory_doc(blocks: Sequence[MemoryBlock]) -> list[dict[str, Any]]:
    return [{"type": b.type, "numaNodes": list(b.numa_nodes), "size": b.size} for b in blocks]


def _picture(result: RunResult, step: StepResult) -> str | None:
    """The topology picture after the step, if ``podnuma.render.picture``
    is available (written separately; optional)."""
    try:
        mod = importlib.import_module("podnuma.render.picture")
    except ImportError:
        return None
    ownership_after = getattr(mod, "ownership_after", None)
    render = getattr(mod, "render_text", None)
    if not callable(ownership_after) or not callable(render):
        return None
    pos = next((i for i, s in enumerate(result.steps) if s is step), None)
    if pos is None:
        return None
    try:
        text = render(result.machine, ownership_after(result, pos))
    except Exception:  # noqa: BLE001 - the picture is decoration; never fail the explanation
        return None
    return text if isinstance(text, str) else None


def explain_step(
    scenario: Scenario,
    result: RunResult,
    step: StepResult,
    *,
    search: bool = True,
    max_runs: int = MAX_RERUNS,
    picture: bool = True,
) -> dict[str, Any]:
    """Everything about one admission, as a JSON-able mapping."""
    config = scenario.config
    machine = result.machine
    pod = scenario.steps[_position(scenario, step.index)].pod
    alloc = step.pod_allocation
    doc: dict[str, Any] = {
        "step": step.index,
        "pod": step.pod,
        "podUID": step.pod_uid,
        "admitted": step.admitted,
        "reason": step.reason,
        "message": step.message,
        "qos": explain_qos(pod, step.qos_class, config) if pod is not None else {
            "class": step.qos_class, "source": None, "why": None
        },
        "topology": explain_topology(step, config, machine),
        "podAllocation": None if alloc is None else {
            "cpus": str(alloc.cpus),
            "cpuNumaNodes": _numa_of_cpus(machine, alloc.cpus),
            "memory": _memory_doc(alloc.memory),
        },
        "containers": explain_containers(step, pod, config, machine),
        "cpuPolicyRule": (
            _cpu_policy_rule(config)
            if any(c.isolation == "container" for c in step.containers)
            else None
        ),
        "defaultCpuSet": str(step.default_cpuset),
        "rejection": explain_rejection(step, config),
        "alternatives": [],
        "suggestions": [],
        "picture": _picture(result, step) if picture else None,
    }
    if step.admitted is False and search:
        outcomes = nearest_admissible(scenario, result, step, max_runs=max_runs)
        doc["alternatives"] = [o.to_json() for o in outcomes]
        doc["suggestions"] = [outcome_summary(o) for o in outcomes if o.admitted]
    return doc


def select_steps(
    result: RunResult, *, step: int | None = None, pod: str | None = None
) -> list[StepResult]:
    """The admissions to explain: every ``addPod`` step, or the one at
    ``step``, or those of ``pod`` (``NAMESPACE/NAME`` or UID)."""
    chosen = [s for s in result.steps if s.op == "addPod"]
    if step is not None:
        chosen = [s for s in chosen if s.index == step]
    if pod is not None:
        chosen = [s for s in chosen if pod in (s.pod, s.pod_uid)]
    return chosen


def explain_run(
    scenario: Scenario,
    result: RunResult,
    *,
    step: int | None = None,
    pod: str | None = None,
    search: bool = True,
    max_runs: int = MAX_RERUNS,
) -> dict[str, Any]:
    """The explanation document for a run (the ``-o json`` output)."""
    node = result.node
    return {
        "scenario": result.scenario,
        "node": {
            "name": node.name,
            "cpus": str(node.cpus),
            "numaNodes": list(node.numa_nodes),
            "reservedCpus": str(node.reserved_cpus),
        },
        "config": _config_doc(scenario.config),
        "admissions": [
            explain_step(scenario, result, s, search=search, max_runs=max_runs)
            for s in select_steps(result, step=step, pod=pod)
        ],
    }


# --------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------


def _hints_cell(hints: list[dict[str, Any]] | None, meaning: str) -> str:
    if hints is None or not hints:
        return meaning
    return "  ".join(
        "{" + _nodes(h["numaNodes"]) + "}" + ("✓" if h["preferred"] else "✗") for h in hints
    )


def _mem_text(blocks: list[dict[str, Any]]) -> str:
    if not blocks:
        return "-"
    return ", ".join(f"{b['type']} {_size(b['size'])} @{_nodes(b['numaNodes'])}" for b in blocks)


def render_text(doc: Mapping[str, Any], console: Console, *, picture: bool | None = None) -> None:
    """Print an explanation document for people. The topology picture (when
    the document has one) is shown when ``picture`` is true, or by default
    when a single admission is explained."""
    node = doc["node"]
    cfg = doc["config"]
    console.print(
        f"node {node['name']}   CPUs {node['cpus']}   NUMA nodes {_nodes(node['numaNodes'])}   "
        f"reserved {node['reservedCpus'] or '-'}   ({doc['scenario']})"
    )
    opts = cfg["topologyManagerPolicyOptions"]
    cpu_opts = cfg["cpuManagerPolicyOptions"]
    console.print(
        f"topology manager {cfg['topologyManagerPolicy']}, scope {cfg['topologyManagerScope']}"
        + (f" ({', '.join(f'{k}={v}' for k, v in opts.items())})" if opts else "")
        + f"; CPU manager {cfg['cpuManagerPolicy']}"
        + (f" ({', '.join(f'{k}={v}' for k, v in cpu_opts.items())})" if cpu_opts else "")
        + f"; memory manager {cfg['memoryManagerPolicy']}",
        highlight=False,
    )
    if not doc["admissions"]:
        console.print("no admission matches")
    show = picture if picture is not None else len(doc["admissions"]) == 1
    for adm in doc["admissions"]:
        _render_admission(adm, console, picture=show)


def _render_admission(adm: Mapping[str, Any], console: Console, *, picture: bool) -> None:
    console.print()
    verdict = (
        Text("✓ admitted", style="green")
        if adm["admitted"]
        else Text(f"✗ rejected: {adm['reason']}", style="bold red")
    )
    head = Text(f"step {adm['step']}  {adm['pod']}  ", style="bold")
    head.append(verdict)
    console.rule(head, align="left")
    qos = adm["qos"]
    src = f" ({_SOURCE_TEXT[qos['source']]})" if qos.get("source") in _SOURCE_TEXT else ""
    console.print(f"QoS {qos['class']}{src}: {qos['why']}", highlight=False)

    topo = adm["topology"]
    if topo["note"]:
        console.print(topo["note"], highlight=False)
    for merge in topo["merges"]:
        who = "the pod (pod scope)" if merge["container"] is None else f"container {merge['container']}"
        table = Table(
            title=f"hints for {who}", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False
        )
        table.add_column("provider")
        table.add_column("resource")
        table.add_column("hints (NUMA nodes, ✓ preferred)", overflow="fold")
        for row in merge["providers"]:
            table.add_row(
                row["provider"], row["resource"] or "-", _hints_cell(row["hints"], row["meaning"])
            )
        console.print(table)
        if merge["merged"] is not None:
            verdict_text = "admitted" if merge["admit"] else "REJECTED"
            console.print(
                f"  merged: {_hint_text(merge['merged'])} -> {verdict_text}", highlight=False
            )
        for line in merge["why"]:
            console.print(f"   • {line}", highlight=False)

    if adm["podAllocation"] is not None:
        pa = adm["podAllocation"]
        console.print(
            f"pod reservation: CPUs {pa['cpus'] or '-'} (NUMA {_nodes(pa['cpuNumaNodes'])}), "
            f"memory {_mem_text(pa['memory'])}",
            highlight=False,
        )
    if adm["containers"]:
        ct = Table(box=box.SIMPLE_HEAD, show_edge=False, title="containers", title_justify="left")
        for col in ("container", "pool", "CPUs", "NUMA", "memory", "devices", "CFS quota", "hint"):
            ct.add_column(col, overflow="fold")
        for c in adm["containers"]:
            name = c["name"] if c["type"] == "app" else f"{c['name']} ({c['type']})"
            devices = ", ".join(
                f"{res}: {','.join(d['ids'])}" for res, d in c["devices"].items()
            ) or "-"
            hint = c["topologyHint"]
            ct.add_row(
                name, c["pool"], c["cpus"] or "-", _nodes(c["cpuNumaNodes"]),
                _mem_text(c["memory"]), devices, c["cfsQuota"],
                "-" if hint is None else _hint_text(hint),
            )
        console.print(ct)
        if adm["cpuPolicyRule"]:
            console.print(f"   exclusive CPUs: {adm['cpuPolicyRule']}", highlight=False)
        for c in adm["containers"]:
            for line in c["why"]:
                console.print(f"   • {c['name']}: {line}", highlight=False)
        console.print(f"node shared pool after the step: {adm['defaultCpuSet'] or '-'}", highlight=False)

    rej = adm["rejection"]
    if rej is not None:
        console.print(Text("rejection", style="bold"))
        console.print(f"   stage: {rej['stageText']} ({rej['who']})", highlight=False)
        console.print(f"   reason: {rej['reason']}" + (f" -- {rej['meaning']}" if rej["meaning"] else ""), highlight=False)
        console.print(f"   message: {rej['message']}", highlight=False)
    if adm["alternatives"]:
        console.print(Text("nearest admissible configuration", style="bold"))
        for alt in adm["alternatives"]:
            mark = "✓" if alt["admitted"] else ("?" if alt["admitted"] is None else "✗")
            console.print(f"   {mark} {alt['summary']}", highlight=False)
        if not adm["suggestions"]:
            console.print("   (no single change tried admits the pod)")
    if picture and adm.get("picture"):
        console.print(Text("after the step", style="bold"))
        console.print(Text(adm["picture"]), highlight=False)


# --------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------


@click.command("explain")
@click.argument("scenario", type=click.Path(path_type=Path, dir_okay=True))
@click.option("--step", "step_index", type=int, default=None, help="Only the addPod step with this index.")
@click.option("--pod", "pod_ref", default=None, help="Only the admissions of this pod (NAMESPACE/NAME or UID).")
@click.option(
    "--output", "-o", type=click.Choice(("text", "json")), default="text", show_default=True,
    help="text for people; json for the full decision trail.",
)
@click.option(
    "--no-search", is_flag=True, default=False,
    help="Do not re-run the scenario to find the nearest admissible configuration.",
)
@click.option(
    "--picture/--no-picture", default=None,
    help="Show the topology picture after each step (default: when one admission is explained).",
)
def explain_command(
    scenario: Path,
    step_index: int | None,
    pod_ref: str | None,
    output: str,
    no_search: bool,
    picture: bool | None,
) -> None:
    """Explain each admission of SCENARIO: hints, merge, pools, rejection and what would fit."""
    from podnuma.cli.app import _guard  # late: the CLI imports this module
    from podnuma.scenario.load import load_scenario

    def go() -> dict[str, Any]:
        loaded = load_scenario(scenario)
        result = run_scenario(loaded)
        doc = explain_run(loaded, result, step=step_index, pod=pod_ref, search=not no_search)
        if (step_index is not None or pod_ref is not None) and not doc["admissions"]:
            what = []
            if step_index is not None:
                what.append(f"step {step_index}")
            if pod_ref is not None:
                what.append(f"pod {pod_ref}")
            raise InputError(f"no addPod step matches {' and '.join(what)}", file=str(scenario))
        return doc

    doc = _guard(go)
    if output == "json":
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    from podnuma.render.table import make_console

    render_text(doc, make_console(sys.stdout), picture=picture)
