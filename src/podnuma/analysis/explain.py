"""The decision trail of each admission (``podnuma explain``), as data.

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
change at a time, smallest change first (the container at fault's own
resources, one policy option off, the pod-level rewrite, a looser topology
policy or the other scope, fewer CPUs, one running pod removed first: see
:mod:`podnuma.analysis.nearest`), and each outcome is reported from the
re-run's own records; every change tried is listed in order with the
engine's verdict, and the first admitted one is the nearest.
The search is capped (``MAX_RERUNS`` runs per rejection, a few running pods
tried for removal, optionally a time budget) and says so: each rejected
admission's ``search`` entry lists the cuts made and the changes not tried.
For one step or one pod (``--step`` / ``--pod``), :func:`run_for_explain`
keeps a copy of the node just before each of its steps while the scenario
runs, so the search starts from there instead of replaying the scenario.

Pure functions build a JSON-able document (``explain_run`` /
``explain_step``); :mod:`podnuma.render.explain` prints it and
:mod:`podnuma.cli.explain` is the command. The search itself is
:mod:`podnuma.analysis.nearest`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podnuma.analysis.nearest import (
    MAX_RERUNS,
    NodeSnapshot,
    Search,
    SearchReport,
    candidate_variations,
    numa_of_cpus,
    outcome_summary,
    planned_runs,
    position,
    search_nearest,
    shared_objects,
    snapshot_steps,
)
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity
from podnuma.api.resources import is_pod_level_resources_set
from podnuma.cm.container_manager import Node
from podnuma.cm.cpumanager.policy_static import POLICY_STATIC as CPU_POLICY_STATIC
from podnuma.cm.results import ContainerResult, HintRecord, MemoryBlock, MergedHint, StepResult
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy import POLICY_NONE, POLICY_SINGLE_NUMA_NODE
from podnuma.cm.topologymanager.policy_options import PolicyOptions
from podnuma.errors import KubeletStartupError
from podnuma.inputs.scenario import Scenario
from podnuma.machine.cpuset import CPUSet
from podnuma.machine.topology import Machine
from podnuma.scenario.document import node_document
from podnuma.scenario.run import RunResult, run_scenario
from podnuma.units import format_nodes as _nodes

__all__ = [
    "PROVIDERS",
    "PreparedRun",
    "run_for_explain",
    "explain_run",
    "explain_step",
    "explain_qos",
    "explain_topology",
    "explain_containers",
    "explain_rejection",
    "select_steps",
]

# The hint providers in the order the kubelet registers them.
PROVIDERS = ("device", "cpu", "memory")

_QOS_RESOURCES = ("cpu", "memory")
_POOL_NAMES = {"container": "exclusive slice", "pod": "pod shared pool", "host": "node shared pool"}


# --------------------------------------------------------------------------
# small formatting helpers
# --------------------------------------------------------------------------


def _hint_json(hint: TopologyHint | None) -> dict[str, Any] | None:
    return None if hint is None else hint.to_json()


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


def _merge_why(
    group: str | None,
    records: Sequence[HintRecord],
    merge: MergedHint,
    config: KubeletConfig,
    machine: Machine,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The rules behind the recorded merge, in words, and the average
    distances of the equal-width candidates when prefer-closest is on. The
    filtered hint lists, the candidates and the target width are those the
    topology manager recorded (``merge.trace``)."""
    merged, admit, trace = merge.hint, merge.admit, merge.trace
    policy = config.topology_manager_policy
    who = "the pod" if group is None else f"container {group}"
    why: list[str] = []
    distances: list[dict[str, Any]] = []
    default = BitMask(machine.numa_ids())
    lists: Sequence[Sequence[TopologyHint]] = trace.filtered if trace is not None else ()
    if policy == POLICY_SINGLE_NUMA_NODE:
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
    candidates = [
        h.numa_node_affinity for h in (trace.candidates if trace is not None else ())
        if h.preferred and h.numa_node_affinity is not None
    ]
    no_combination = any(not lst for lst in lists)
    if no_combination:
        why.append(
            "a resource has no hint left"
            + (" after filtering" if policy == POLICY_SINGLE_NUMA_NODE else "")
            + ": there is no combination to merge, so the result is every NUMA node, not preferred"
        )
    use_closest = trace.use_closest if trace is not None else False
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
        target = trace.target_width if trace is not None else 0
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
    if policy == POLICY_SINGLE_NUMA_NODE and aff is None:
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
    if policy == POLICY_NONE:
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
            entry["why"], entry["distances"] = _merge_why(group, records, m, config, machine)
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
    if config.cpu_manager_policy != CPU_POLICY_STATIC:
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
        cpu_numa = numa_of_cpus(machine, c.cpus)
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
    "podFeatures": "pod features check (the pod sets spec.resources; the kubelet's PodLevelResources gate is off)",
}

_REASON_TEXT = {
    "TopologyAffinityError": "the topology manager could not align the resources as the policy requires",
    "SMTAlignmentError": "full-pcpus-only: exclusive CPUs must fill whole physical cores",
    "EmptyPodSharedPoolError": "the pod's exclusive containers would leave its shared containers no CPUs",
    "UnexpectedAdmissionError": "a manager's allocation failed with a plain error",
    "PodLevelResourcesNotSupported": "the kubelet does not admit pod-level resources with its PodLevelResources gate off",
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


def explain_step(
    scenario: Scenario,
    result: RunResult,
    step: StepResult,
    *,
    search: bool = True,
    max_runs: int = MAX_RERUNS,
    searcher: Search | None = None,
    time_budget: float | None = None,
    tick: Callable[[], None] | None = None,
    reports: dict[int, SearchReport] | None = None,
) -> dict[str, Any]:
    """Everything about one admission, as a JSON-able mapping. For a
    rejection, ``search`` says how far the nearest-admissible search went
    (``None`` when it did not run), every change tried in order
    (``candidates``) and the nearest admitted one; ``tick`` is called after
    each change the search runs; ``reports`` (step index -> the search's
    report, with the changes themselves) is filled when given."""
    config = scenario.config
    machine = result.machine
    pod = scenario.steps[position(scenario, step.index)].pod
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
            "cpuNumaNodes": numa_of_cpus(machine, alloc.cpus),
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
        "search": None,
    }
    if step.admitted is False and search:
        report = search_nearest(
            scenario, result, step, max_runs=max_runs, search=searcher,
            time_budget=time_budget, tick=tick,
        )
        outcomes = report.outcomes
        doc["alternatives"] = [o.to_json() for o in outcomes]
        doc["suggestions"] = [outcome_summary(o) for o in outcomes if o.admitted]
        doc["search"] = report.to_json()
        if reports is not None:
            reports[step.index] = report
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


@dataclass(frozen=True)
class PreparedRun:
    """A scenario run, with a copy of the node just before each step an
    explanation of one step or pod may search from (step index -> node)."""

    run: RunResult
    snapshots: Mapping[int, NodeSnapshot]


def run_for_explain(
    scenario: Scenario, *, step: int | None = None, pod: str | None = None
) -> PreparedRun:
    """Run the scenario for :func:`explain_run` with the same ``step`` and
    ``pod``: the node is copied just before each step they select, so the
    search needs no second pass over the scenario. (The run's checkpoints
    and each step's PodResources list are left out: an explanation does not
    show them.)"""
    wanted = snapshot_steps(scenario, step=step, pod=pod)
    snapshots: dict[int, NodeSnapshot] = {}
    shared: dict[int, Any] = {}

    def keep(node: Node, s: Any) -> None:
        if s.index in wanted:
            if not shared:
                shared.update(shared_objects(scenario.machine, scenario.config))
            snapshots[s.index] = NodeSnapshot(node, shared)

    run = run_scenario(
        scenario, before_step=keep if wanted else None, checkpoints=False, step_pod_resources=False
    )
    return PreparedRun(run, snapshots)


def explain_run(
    scenario: Scenario,
    result: RunResult,
    *,
    step: int | None = None,
    pod: str | None = None,
    search: bool = True,
    max_runs: int = MAX_RERUNS,
    progress: Callable[[int, int], None] | None = None,
    snapshots: Mapping[int, NodeSnapshot] | None = None,
    time_budget: float | None = None,
    reports: dict[int, SearchReport] | None = None,
) -> dict[str, Any]:
    """The explanation document for a run (the ``-o json`` output).

    ``progress(done, total)`` is called as the work goes on: one unit per
    admission explained and one per change the nearest-admissible search
    runs (``total`` counts the most it may run). ``snapshots`` are the node
    copies of :func:`run_for_explain`; ``time_budget`` caps each rejection's
    search in seconds (reported in its ``search`` entry when it cuts);
    ``reports`` receives each rejection's search report (see
    :func:`explain_step`)."""
    node = result.node
    chosen = select_steps(result, step=step, pod=pod)
    searcher = Search(scenario, result, snapshots) if search else None
    rejected = [s for s in chosen if s.admitted is False]
    if searcher is not None and rejected:
        searcher.prepare(s.index for s in rejected)
    plans: dict[int, int] = {}
    if search and progress is not None:
        plans = {
            s.index: planned_runs(candidate_variations(scenario, result, s), max_runs)
            for s in rejected
        }
    total = len(chosen) + sum(plans.values())
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    admissions = []
    for s in chosen:
        before = done
        admissions.append(
            explain_step(
                scenario, result, s, search=search, max_runs=max_runs, searcher=searcher,
                time_budget=time_budget, tick=tick, reports=reports,
            )
        )
        # the changes planned but not run (the search stopped early) count as done
        done = before + plans.get(s.index, done - before)
        tick()
    return {
        "scenario": result.scenario,
        "node": node_document(node),
        "config": _config_doc(scenario.config),
        "admissions": admissions,
    }


