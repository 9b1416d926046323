"""Search the pod-level rewrite (KEP-5526) of existing pods.

For every Pod in the input files (multi-document YAML, JSON, ``kubectl get
pods -o json|yaml`` lists, workload templates), propose its pod-level form
(rules in ``podnuma.analysis.rewrite``: the budget in ``spec.resources``,
exclusive slices kept for the containers that need them, sidecars —
recognised by ``podnuma.analysis.sidecars`` — and small containers moved to
the pod shared pool), and search the pod shared pool size: from the
strategy's floor (:data:`STRATEGIES`) up, each form is run through the
engine on an empty node (the given node and kubelet configuration, or the
built-in ones) until one is admitted with every kept container's exclusive
CPUs intact. Each form tried is kept (:class:`Candidate`) with the
kubelet's reason when it was refused. The pod as written is measured too
(admitted or not), with the density (copies until the first rejection).

A pod is skipped, with its reason, when it is not a Pod, is invalid, is
already pod-level, is not Guaranteed, has no exclusive CPUs to gain, or when
no form is admitted (such a rewrite is never printed).

:func:`advise_pod` (and :func:`best_pod_level_rewrite`) are pure;
:func:`proposal_scenario` writes the scenario that replays an advice's
figures; :mod:`podnuma.render.advice` writes the YAML and diffs,
:mod:`podnuma.cli.advise` is the command.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from podnuma.analysis.measure import Measurement, measure, measure_manifest, variant_config
from podnuma.analysis.rewrite import (
    Rewrite,
    clean_server_fields,
    has_pod_level_resources,
    has_whole_cpus,
    to_pod_level,
)
from podnuma.analysis.shapes import ShapeProposal, nearest_shape
from podnuma.analysis.sidecars import recognise_sidecars
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import Pod
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.qos import compute_pod_qos
from podnuma.errors import InputError, KubeletStartupError
from podnuma.fieldkit import field_path, wrong_type
from podnuma.machine.topology import Machine
from podnuma.units import format_bytes

__all__ = [
    "DEFAULT_STRATEGY", "STRATEGIES", "TEMPLATE_PATHS", "Advice", "Candidate", "advise_pod",
    "advice_document", "best_pod_level_rewrite", "node_config_document", "workload_pod",
]

Status = Literal["rewritten", "skipped"]

#: The search strategies (``advise --strategy``): what the pod shared pool
#: must at least hold, and what the moved containers keep of their own.
STRATEGIES: Mapping[str, str] = {
    "keep-limits": "the pod shared pool holds at least the CPUs the moved containers asked for "
    "together, and each moved container keeps its own memory request and limit (its memory.max)",
    "keep-cpus": "the pod shared pool holds at least the CPUs the moved containers asked for "
    "together; the moved containers lose their own resources to the pod budget",
    "max-freed": "the smallest pod shared pool the kubelet admits (from 1 CPU): the most CPUs "
    "returned to the node and the highest density; the moved containers lose their own resources",
}
DEFAULT_STRATEGY = "keep-limits"


@dataclass(frozen=True)
class Advice:
    """The outcome for one object of the input."""

    where: str  # FILE#DOC[.items[i]]
    pod: str | None  # namespace/name when known
    status: Status
    reason: str | None = None  # why skipped
    original: Mapping[str, Any] | None = None
    rewrite: Rewrite | None = None
    before: Measurement | None = None
    after: Measurement | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    error: InputError | None = None  # the pod is invalid: why (paths relative to the pod)
    candidates: tuple[Candidate, ...] = ()  # the forms tried, in order
    strategy: str = "keep-limits"
    shared_pool_cpus: int | None = None  # the pool size of the chosen form
    sidecar_rules: Mapping[str, str] = field(default_factory=dict)  # container -> rule
    pod_before: Mapping[str, Any] | None = None  # the Pod measured as written (a workload's template)
    pod_after: Mapping[str, Any] | None = None  # the Pod measured rewritten
    # no pod-level form admitted: the nearest node shape that admits one
    shape: ShapeProposal | None = None

    def savings(self) -> dict[str, Any]:
        b, a = self.before, self.after
        if b is None or a is None:
            return {}
        return {
            "cpusReturnedToNode": (b.held_cpus.size() - a.held_cpus.size()) if b.admitted else None,
            "exclusiveCpusBefore": b.exclusive_cpus.size() if b.admitted else None,
            "exclusiveCpusAfter": a.exclusive_cpus.size(),
            "exclusiveCpusFreed": (b.exclusive_cpus.size() - a.exclusive_cpus.size()) if b.admitted else None,
            "sidecarOnlyCpusBefore": b.sidecar_only_cpus.size() if b.admitted else None,
            "sidecarOnlyCpusAfter": a.sidecar_only_cpus.size(),
            "podSharedCpusAfter": a.pod_shared_cpus.size(),
            "cpusTakenFromNodeBefore": b.held_cpus.size() if b.admitted else None,
            "cpusTakenFromNodeAfter": a.held_cpus.size(),
            "densityBefore": b.density,
            "densityAfter": a.density,
            "admittedBefore": b.admitted,
            "rejectedBefore": None if b.admitted else b.reason,
        }


def _ref(doc: Any) -> str | None:
    if not isinstance(doc, Mapping):
        return None
    meta = doc.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        return None
    ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) else "default"
    return f"{ns}/{meta['name']}"


#: Where each workload kind keeps its pod template.
TEMPLATE_PATHS: Mapping[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}


def advise_pod(
    doc: Any,
    machine: Machine,
    config: KubeletConfig,
    *,
    where: str = "",
    cap: int = 512,
    shared_pool_cpus: int | None = None,
    strategy: str = DEFAULT_STRATEGY,
    sidecars: Collection[str] = (),
    other_shapes: bool = False,
) -> Advice:
    """Search, propose and verify the pod-level rewrite of one object: a
    Pod, or the pod template of a workload (:data:`TEMPLATE_PATHS`), which is
    rewritten in place. ``shared_pool_cpus``: None searches the pool size
    (``auto``: from the strategy's floor up, until the kubelet admits one),
    a number tries that size only. ``sidecars``: container names the user
    calls sidecars. ``other_shapes``: when no form is admitted, also search
    the nearest other node shape that admits one (:mod:`podnuma.analysis.shapes`).
    Never raises for a bad object (it is skipped with the reason);
    ``KubeletStartupError`` when the configuration itself cannot run."""

    def advise(pod_doc: Any) -> Advice:
        return _advise_pod(pod_doc, machine, config, where=where, cap=cap, shared_pool_cpus=shared_pool_cpus,
                           strategy=strategy, sidecars=sidecars, other_shapes=other_shapes)

    kind = doc.get("kind") if isinstance(doc, Mapping) else None
    if not isinstance(kind, str) or kind not in TEMPLATE_PATHS:
        return advise(doc)
    return _advise_workload(doc, kind, advise, where=where)


def best_pod_level_rewrite(
    doc: Mapping[str, Any],
    machine: Machine,
    config: KubeletConfig,
    *,
    strategy: str = DEFAULT_STRATEGY,
    shared_pool_cpus: int | None = None,
    sidecars: Collection[str] = (),
    cap: int = 512,
) -> Advice:
    """The best pod-level rewrite of the pod (or workload) ``doc`` on an
    empty node of ``machine`` under ``config``: the searched form the
    kubelet admits (``status == "rewritten"``, ``rewrite.manifest``), or
    the reason none is (``reason``; each form tried in ``candidates`` with
    the kubelet's reason)."""
    return advise_pod(doc, machine, config, cap=cap, shared_pool_cpus=shared_pool_cpus,
                      strategy=strategy, sidecars=sidecars)


def _advise_workload(
    doc: Mapping[str, Any], kind: str, advise: Callable[[Any], Advice], *, where: str
) -> Advice:
    """The advice on a workload: ``advise``'s on its pod template, told of
    the workload (its label, manifest and field paths)."""
    path = TEMPLATE_PATHS[kind]
    dotted = ".".join(path)
    label, pod_doc, template_error = workload_pod(doc, kind)
    if pod_doc is None:
        return Advice(
            where=where, pod=label, status="skipped", reason=f"{kind} without a pod template",
            original=doc,
            error=template_error,
        )
    advice = advise(pod_doc)
    error = advice.error.at(dotted) if advice.error is not None else None
    rewrite = advice.rewrite
    if rewrite is not None:
        manifest = copy.deepcopy(dict(doc))
        clean_server_fields(manifest)
        holder: Any = manifest
        for key in path:
            holder = holder[key]
        holder["spec"] = rewrite.manifest["spec"]
        rewrite = rewrite.replace(manifest=manifest)
    return dataclasses.replace(advice, pod=label, original=doc, rewrite=rewrite, error=error)


def workload_pod(
    doc: Mapping[str, Any], kind: str
) -> tuple[str, dict[str, Any] | None, InputError | None]:
    """The pod a workload (:data:`TEMPLATE_PATHS`) would create: how reports
    name the workload (``Deployment ns/name``), the Pod manifest made of
    its template (named after the workload; ``None`` when the template
    cannot be read) and why it cannot (paths relative to the workload)."""
    path = TEMPLATE_PATHS[kind]
    ref = _ref(doc)
    label = f"{kind} {ref}" if ref else kind
    template: Any = doc
    for key in path:
        template = template.get(key) if isinstance(template, Mapping) else None
    if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
        return label, None, _template_error(template, ".".join(path))
    raw_meta, raw_workload_meta = template.get("metadata"), doc.get("metadata")
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    workload_meta: Mapping[str, Any] = (
        raw_workload_meta if isinstance(raw_workload_meta, Mapping) else {}
    )
    pod_meta: dict[str, Any] = {k: v for k, v in dict(meta).items() if k in ("labels", "annotations")}
    pod_meta["name"] = workload_meta.get("name") or "template"
    if workload_meta.get("namespace"):
        pod_meta["namespace"] = workload_meta["namespace"]
    pod_doc = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
               "spec": copy.deepcopy(dict(template["spec"]))}
    return label, pod_doc, None


@dataclass(frozen=True)
class Candidate:
    """One pod-level form tried by the search: the pod shared pool asked
    for, the CPU budget it gave, and the verdict (with the kubelet's reason
    when it was refused)."""

    pool_cpus: int
    budget_cpus: str
    verdict: Literal["chosen", "refused"]
    reason: str | None = None
    density: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"sharedPoolCpus": self.pool_cpus, "budgetCpus": self.budget_cpus,
                "verdict": self.verdict, "reason": self.reason, "density": self.density}


def _pool_floor(pod: Pod, plan_roles: Mapping[str, str], strategy: str) -> int:
    """The smallest pod shared pool the strategy accepts: 1 CPU for
    ``max-freed``; else the CPUs the moved long-running containers asked
    for together (rounded up), so that they keep their CPU capacity."""
    if strategy == "max-freed":
        return 1
    milli = 0
    for c in (*[c for c in pod.init_containers if c.is_sidecar], *pod.containers):
        if plan_roles.get(c.name) == "shared":
            q = c.requests.get("cpu")
            milli += 0 if q is None else q.milli_value()
    return max(1, (milli + 999) // 1000)


def _kept_check(
    rewrite: Rewrite, by_name: Mapping[str, Any], before: Measurement, after: Measurement,
) -> str | None:
    """Why the rewrite is refused because a container that keeps its slice
    gets fewer exclusive CPUs than it had (or asks for, when the pod as
    written is rejected); None when every kept slice is whole."""
    had = before.exclusive_by_container() if before.admitted else None
    kept = after.exclusive_by_container()
    for p in rewrite.containers:
        c = by_name[p.name]
        if p.role != "exclusive" or not has_whole_cpus(c) or c.kind == "init":
            continue
        if had is not None:
            if p.name not in had:
                continue
            want = had[p.name].size()
        else:
            want = c.requests["cpu"].milli_value() // 1000
        got = kept.get(p.name)
        if got is None or got.size() < want:
            return (
                f"the rewrite would take exclusive CPUs from {p.name} "
                f"({want} wanted, {0 if got is None else got.size()} exclusive after)"
            )
    return None


def _advise_pod(
    doc: Any,
    machine: Machine,
    config: KubeletConfig,
    *,
    where: str,
    cap: int,
    shared_pool_cpus: int | None,
    strategy: str,
    sidecars: Collection[str],
    other_shapes: bool = False,
) -> Advice:
    """:func:`advise_pod` of a Pod (or what is not one), with its options."""
    ref = _ref(doc)

    def skip(reason: str, **kw: Any) -> Advice:
        return Advice(where=where, pod=ref, status="skipped", reason=reason, original=doc
                      if isinstance(doc, Mapping) else None, strategy=strategy, **kw)

    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    if not isinstance(doc, Mapping):
        return skip(
            "not a Pod manifest (not a mapping)",
            error=wrong_type("", "a mapping (a Kubernetes object)", doc),
        )
    kind = doc.get("kind")
    if kind is not None and kind != "Pod":
        return skip(f"not a Pod (kind {kind})")
    if has_pod_level_resources(doc):
        return skip("already pod-level (spec.resources is set)")
    scope = config.topology_manager_scope
    plrm_cfg, _ = variant_config(config, scope=scope, pod_level=True)
    try:
        pod = parse_pod(doc, gates=plrm_cfg.feature_gates)
    except InputError as e:
        return skip(f"invalid pod: {e}", error=e)
    ref = pod.ref
    rules = recognise_sidecars(pod, sidecars)
    unknown = [n for n in sidecars if not pod.has_container(n)]
    qos = compute_pod_qos(pod, pod_level_resources=True)
    if qos != "Guaranteed":
        return skip(f"not Guaranteed (QoS {qos}): the kubelet gives it no exclusive CPUs, nothing to gain",
                    sidecar_rules=rules)

    keep_limits = strategy == "keep-limits"
    first = to_pod_level(doc, pod, sidecars=rules, keep_limits=keep_limits)
    by_name = {c.name: c for c in pod.all_containers()}
    moving = [p.name for p in first.containers if p.role == "shared" and has_whole_cpus(by_name[p.name])]
    if not moving:
        return skip(
            "no exclusive CPUs to gain: no sidecar or small container holds whole CPUs",
            rewrite=first, sidecar_rules=rules,
        )
    side = frozenset(rules)
    before = measure(machine, config, pod, label="perContainer", sidecars=side, cap=cap)
    if before.startup_error is not None:
        raise KubeletStartupError(before.startup_error)

    roles = {p.name: p.role for p in first.containers}
    if shared_pool_cpus is not None:
        sizes: list[int] = [shared_pool_cpus]
    else:
        floor = _pool_floor(pod, roles, strategy)
        # enough sizes above the floor to reach a budget of whole physical
        # cores (full-pcpus-only) whatever the slices add up to
        span = max(2, machine.topology.cpus_per_core()) + 1
        sizes = list(range(floor, floor + span))
    candidates: list[Candidate] = []
    tried: set[str] = set()
    chosen: tuple[Rewrite, Measurement, int] | None = None
    for size in sizes:
        rewrite = to_pod_level(doc, pod, shared_pool_cpus=size, sidecars=rules, keep_limits=keep_limits)
        budget = str(rewrite.budget.get("requests", {}).get("cpu", "?"))
        if budget in tried:
            continue  # the budget was raised to one already tried
        tried.add(budget)
        try:
            after = measure_manifest(
                machine, config, rewrite.manifest, label="podLevel", scope=scope,
                pod_level=True, sidecars=side, cap=cap,
            )
        except InputError as e:  # a bug in the rewrite: never print it
            candidates.append(Candidate(size, budget, "refused", f"not a valid pod ({e})"))
            continue
        if after.startup_error is not None:
            raise KubeletStartupError(after.startup_error)
        if not after.admitted:
            candidates.append(Candidate(size, budget, "refused", f"{after.reason}: {after.message}"))
            continue
        taken = _kept_check(rewrite, by_name, before, after)
        if taken is not None:
            candidates.append(Candidate(size, budget, "refused", taken, after.density))
            continue
        candidates.append(Candidate(size, budget, "chosen", None, after.density))
        chosen = (rewrite, after, size)
        break

    base_notes = [f"--sidecar {n}: no container of that name in the pod" for n in unknown]
    if chosen is None:
        last = candidates[-1].reason if candidates else "no candidate"
        if len(candidates) == 1:
            why = last if last and last.startswith("the rewrite would") else f"the rewrite would be rejected: {last}"
        else:
            why = "no rewrite is admitted: " + "; ".join(
                f"shared pool {c.pool_cpus} (budget {c.budget_cpus}): {c.reason}" for c in candidates
            )
        rw = to_pod_level(doc, pod, shared_pool_cpus=sizes[-1], sidecars=rules, keep_limits=keep_limits)

        def on(other: Machine) -> tuple[int, str, Mapping[str, Any], Measurement] | str:
            last = "no candidate"
            for size in sizes:
                form = to_pod_level(doc, pod, shared_pool_cpus=size, sidecars=rules, keep_limits=keep_limits)
                budget = str(form.budget.get("requests", {}).get("cpu", "?"))
                try:
                    got = measure_manifest(other, config, form.manifest, label="podLevel", scope=scope,
                                           pod_level=True, sidecars=side, cap=cap)
                except InputError as e:
                    last = f"not a valid pod ({e})"
                    continue
                if got.startup_error is not None:
                    return f"the kubelet would not start: {got.startup_error}"
                if not got.admitted:
                    last = f"{got.reason}: {got.message}"
                    continue
                taken = _kept_check(form, by_name, before, got)
                if taken is not None:
                    last = taken
                    continue
                return size, budget, form.manifest, got
            return last

        shape = nearest_shape(machine_node_document(machine), on) if other_shapes else None
        return skip(why, rewrite=rw, before=before, notes=tuple(base_notes),
                    candidates=tuple(candidates), sidecar_rules=rules, shape=shape)
    rewrite, after, size = chosen
    notes = base_notes + list(rewrite.notes)
    if after.gates_forced:
        notes.append(
            "measured with feature gate(s) " + ", ".join(f"{g}=true" for g in after.gates_forced)
            + " forced on: the node needs them for the rewrite to take effect"
        )
    if before.admitted:
        freed = before.exclusive_cpus.size() - after.exclusive_cpus.size()
        if freed <= 0:
            return skip(
                f"no exclusive CPUs to gain (measured: {before.exclusive_cpus.size()} exclusive "
                f"before, {after.exclusive_cpus.size()} after)",
                rewrite=rewrite, before=before, after=after, notes=tuple(notes),
                candidates=tuple(candidates), sidecar_rules=rules,
            )
        if after.density < before.density:
            notes.append(
                f"density {before.density} -> {after.density} copies: the pod budget must fit as one "
                f"block ({after.density_stop}: {after.density_stop_message})"
            )
    else:
        notes.append(f"the pod as written is rejected on this node: {before.reason}: {before.message}")
    if scope == "container":
        notes.append(
            "topology scope container: the moved containers run on the node shared pool, "
            "not on a pod shared pool (use scope pod for the pod bubble)"
        )
    return Advice(
        where=where, pod=ref, status="rewritten", original=doc, rewrite=rewrite,
        before=before, after=after, notes=tuple(notes), candidates=tuple(candidates),
        strategy=strategy, shared_pool_cpus=size, sidecar_rules=rules,
        pod_before=doc, pod_after=rewrite.manifest,
    )


def advice_document(a: Advice) -> dict[str, Any]:
    return {
        "source": a.where,
        "pod": a.pod,
        "status": a.status,
        "reason": a.reason,
        "rewrite": a.rewrite.manifest if a.rewrite is not None and a.status == "rewritten" else None,
        "strategy": a.strategy,
        "sharedPoolCpus": a.shared_pool_cpus,
        "sidecars": [{"name": n, "rule": r} for n, r in a.sidecar_rules.items()],
        "candidates": [c.as_dict() for c in a.candidates],
        "containers": [
            {"name": p.name, "type": p.type, "role": p.role, "why": p.why,
             "sidecarRule": p.sidecar_rule, "kept": list(p.kept), "lost": list(p.lost)}
            for p in (a.rewrite.containers if a.rewrite is not None else ())
        ],
        "savings": a.savings() if a.status == "rewritten" else None,
        "before": a.before.as_dict() if a.before is not None else None,
        "after": a.after.as_dict() if a.after is not None else None,
        "notes": list(a.notes),
        **({"otherNodeShape": a.shape.as_dict()} if a.shape is not None else {}),
    }


def node_config_document(
    machine: Machine, config: KubeletConfig, node_from: str, cfg_from: str
) -> dict[str, Any]:
    """Where the node and the kubelet configuration came from, for reports."""
    return {
        "node": {"from": node_from, "name": machine.name, "cpus": str(machine.topology.cpus())},
        "kubeletConfig": {
            "from": cfg_from,
            "cpuManagerPolicy": config.cpu_manager_policy,
            "memoryManagerPolicy": config.memory_manager_policy,
            "topologyManagerPolicy": config.topology_manager_policy,
            "topologyManagerScope": config.topology_manager_scope,
        },
    }


def _template_error(template: object, path: str) -> InputError:
    """Why the pod template at ``path`` cannot be read."""
    if template is None:
        return InputError("required field is missing: a pod template with a spec", path=path)
    if not isinstance(template, Mapping):
        return wrong_type(path, "a mapping (a pod template)", template)
    spec = template.get("spec")
    where = field_path(path, "spec")
    if spec is None:
        return InputError("required field is missing", path=where)
    return wrong_type(where, "a mapping", spec)


# --------------------------------------------------------------------------
# the scenario that replays an advice


def machine_node_document(machine: Machine) -> dict[str, Any]:
    """The scenario ``node`` of ``machine`` in the ``cpus`` table form (CPU
    table, memory and huge page pools per NUMA node, distances, devices):
    a node that replays anywhere, whatever form it was read from."""
    rows = [
        {"id": cpu, "core": i.core, "socket": i.socket, "numaNode": i.numa_node, "uncoreCache": i.uncore_cache}
        for cpu, i in sorted(machine.topology.cpu_info.items())
    ]
    memory: dict[int, dict[str, str]] = {}
    for n in sorted(machine.numa_nodes, key=lambda n: n.id):
        entry = {"memory": format_bytes(n.memory)}
        for size, total in sorted(n.hugepages.items()):
            entry[f"hugepages-{format_bytes(size)}"] = format_bytes(total)
        memory[n.id] = entry
    doc: dict[str, Any] = {"name": machine.name, "cpus": rows, "memory": memory}
    if machine.total_memory is not None and machine.total_memory != sum(n.memory for n in machine.numa_nodes):
        doc["memoryCapacity"] = format_bytes(machine.total_memory)
    if machine.has_distances():
        doc["distances"] = {n.id: list(n.distances) for n in machine.numa_nodes}
    if machine.devices:
        doc["devices"] = {
            res: [{"id": d.id, "numaNodes": list(d.numa_nodes)} for d in devs]
            for res, devs in sorted(machine.devices.items())
        }
    return doc


def _copies(
    pod_doc: Mapping[str, Any], tag: str, count: int, used: set[tuple[str, str]]
) -> list[dict[str, Any]]:
    """``count`` copies of the Pod, named ``NAME-TAG-i`` (unique in the
    scenario), without server fields (each gets the UID derived from its
    namespace and name, as a copy in :func:`measure` does)."""
    meta = pod_doc.get("metadata") if isinstance(pod_doc.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    name = str(meta.get("name") or "pod")
    ns = str(meta.get("namespace") or "default")
    base = f"{name}-{tag}"
    k = 1
    while (ns, f"{base}-0") in used:
        k += 1
        base = f"{name}-{tag}{k}"
    out: list[dict[str, Any]] = []
    for i in range(count):
        m = copy.deepcopy(dict(pod_doc))
        clean_server_fields(m)
        md = dict(m.get("metadata") or {})
        md["name"] = f"{base}-{i}"
        md.pop("uid", None)
        m["metadata"] = md
        m.setdefault("apiVersion", "v1")
        m.setdefault("kind", "Pod")
        used.add((ns, md["name"]))
        out.append(m)
    return out


@dataclass(frozen=True)
class ReplayIndex:
    """Where an advice's two forms sit in its scenario: the step of the
    first copy of each form, and how many copies were added (the density
    plus the first rejected copy, unless the count stopped at the cap)."""

    pod: str | None
    before_step: int
    before_copies: int
    after_step: int
    after_copies: int

    def as_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "beforeStep": self.before_step, "beforeCopies": self.before_copies,
                "afterStep": self.after_step, "afterCopies": self.after_copies}


def proposal_scenario(
    advices: Collection[Advice],
    machine: Machine,
    config_doc: Mapping[str, Any],
    *,
    density: bool = True,
) -> tuple[dict[str, Any], list[ReplayIndex]]:
    """A scenario that replays every rewritten advice on an empty node: the
    pod as written and its copies until the first rejection (the density),
    all removed, then the rewrite the same way, all removed; the next
    advice after it. ``config_doc``: the node's KubeletConfiguration; the
    gates the rewrite needs are turned on in it (as the measurement did).
    ``density`` False: one copy of each form only."""
    config = copy.deepcopy(dict(config_doc))
    steps: list[dict[str, Any]] = []
    index: list[ReplayIndex] = []
    used: set[tuple[str, str]] = set()
    forced: set[str] = set()

    def add(pods: list[dict[str, Any]], admitted: int) -> None:
        for m in pods:
            steps.append({"addPod": m})
        for m in pods[:admitted]:
            md = m["metadata"]
            steps.append({"removePod": f"{md.get('namespace') or 'default'}/{md['name']}"})

    for a in advices:
        if a.status != "rewritten" or a.before is None or a.after is None:
            continue
        if a.pod_before is None or a.pod_after is None:
            continue
        forced.update(a.after.gates_forced)
        b_admitted = a.before.density
        b_count = (b_admitted if a.before.density_capped else b_admitted + 1) if density else 1
        a_admitted = a.after.density
        a_count = (a_admitted if a.after.density_capped else a_admitted + 1) if density else 1
        before_step = len(steps)
        add(_copies(a.pod_before, "as-written", b_count, used), min(b_admitted, b_count))
        after_step = len(steps)
        add(_copies(a.pod_after, "pod-level", a_count, used), min(a_admitted, a_count))
        index.append(ReplayIndex(a.pod, before_step, b_count, after_step, a_count))
    if forced:
        gates = dict(config.get("featureGates") or {})
        for g in sorted(forced):
            gates[g] = True
        config["featureGates"] = gates
    config.setdefault("apiVersion", "kubelet.config.k8s.io/v1beta1")
    config.setdefault("kind", "KubeletConfiguration")
    doc = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": machine_node_document(machine),
        "kubeletConfig": config,
        "steps": steps,
    }
    return doc, index
