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
:func:`proposal_scenario` writes the scenario that replays the advices'
figures on the node given (rewritten pods, and skipped pods once
measured: the pod as written, each form tried, the chosen form),
:func:`shape_scenario` the one that replays the other node shape proposed;
:mod:`podnuma.render.advice` writes the YAML and diffs, :mod:`podnuma.cli.advise`
is the command.
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
    served_manifest,
    to_pod_level,
)
from podnuma.analysis.shapes import ShapeFit, ShapeProposal, nearest_shape
from podnuma.analysis.sidecars import recognise_sidecars
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod import Container, Pod
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.qos import compute_pod_qos
from podnuma.api.quantity import QuantityError, parse_quantity
from podnuma.errors import InputError, KubeletStartupError
from podnuma.fieldkit import field_path, wrong_type
from podnuma.inputs.pods import WORKLOAD_TEMPLATES
from podnuma.machine.topology import Machine
from podnuma.units import format_bytes

__all__ = [
    "DEFAULT_STRATEGY", "STRATEGIES", "TEMPLATE_PATHS", "Advice", "Candidate", "SharedPoolTooLarge", "advise_pod",
    "advice_document", "best_pod_level_rewrite", "node_config_document", "pod_level_form",
    "workload_pod",
]

Status = Literal["rewritten", "skipped"]


class SharedPoolTooLarge(InputError):
    """The pod shared pool asked for (``asked`` CPUs) makes the pod's CPU
    budget (its exclusive slices and the pool) more than the kubelet counts
    in an int64; ``most``: the largest pool this pod's budget takes (None:
    none)."""

    def __init__(self, asked: int, most: int | None) -> None:
        most_words = (f"at most {most} CPUs for this pod" if most is not None and most >= 1
                      else "no pool fits beside this pod's exclusive CPUs")
        super().__init__(
            f"{asked}: the pod's CPU budget (its exclusive CPUs and this pool) would be more than the "
            f"kubelet counts in millicores in an int64: {most_words}")
        self.asked = asked
        self.most = most


def _most_pool(doc: Mapping[str, Any], pod: Pod, rules: Mapping[str, str], keep_limits: bool) -> int | None:
    """The largest pod shared pool (CPUs) whose budget fits an int64, from
    the budget of a pool of 1 CPU."""
    from podnuma.api.quantity import QuantityError, parse_quantity

    try:
        one = to_pod_level(doc, pod, shared_pool_cpus=1, sidecars=rules, keep_limits=keep_limits)
        milli = -(-parse_quantity(str(one.budget["requests"]["cpu"])).nanos // 1_000_000)
    except (InputError, QuantityError, KeyError):
        return None
    return ((1 << 63) - 1 - (milli - 1000)) // 1000

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


def pod_level_form(
    doc: Mapping[str, Any], pod: Pod, *, strategy: str = DEFAULT_STRATEGY,
    shared_pool_cpus: int | None = None, sidecars: Mapping[str, str] | None = None,
) -> Rewrite:
    """The pod-level form advise writes of the Pod ``doc`` (``pod``: it
    parsed) under ``strategy``, with a pod shared pool of
    ``shared_pool_cpus`` CPUs (None: the budget is the pod's own CPU
    request); ``sidecars``: container -> the rule that recognised it
    (default: the rules without user names). ``podnuma explain`` tries
    these forms too."""
    return to_pod_level(doc, pod, shared_pool_cpus=shared_pool_cpus, sidecars=sidecars,
                        keep_limits=strategy == "keep-limits")


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
    # the pod shared pool of the chosen form, as measured (0 under topology
    # scope container: no pod shared pool), and the size the search asked for
    shared_pool_cpus: int | None = None
    asked_pool_cpus: int | None = None
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
TEMPLATE_PATHS: Mapping[str, tuple[str, ...]] = WORKLOAD_TEMPLATES


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
    ``KubeletStartupError`` when the configuration itself cannot run;
    :class:`SharedPoolTooLarge` when the ``shared_pool_cpus`` asked for
    makes the pod's CPU budget pass int64 (the option's fault)."""

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
    """One pod-level form tried by the search: the pod shared pool it gives
    (the CPU budget minus the long-running containers' exclusive slices;
    none under topology scope container, where the containers that lose
    their CPUs run on the node shared pool), the CPU budget, and the verdict
    (with the kubelet's reason when it was refused). ``asked_cpus``: the
    pool size asked for (budget = exclusive slices + that many CPUs);
    ``beyond_cpus``: the budget's CPUs beyond the exclusive slices;
    ``raised``: why the budget is more than the slices plus the CPUs asked
    for (None when it is not). ``manifest`` (the form) and ``admitted``
    (the kubelet admitted it: refused for taking exclusive CPUs from a kept
    container) let the scenario replay it."""

    pool_cpus: int
    budget_cpus: str
    verdict: Literal["chosen", "refused"]
    reason: str | None = None
    density: int | None = None
    asked_cpus: int | None = None
    beyond_cpus: int | None = None
    raised: str | None = None
    admitted: bool = field(default=False, compare=False)
    manifest: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    gates_forced: tuple[str, ...] = field(default=(), compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {"sharedPoolCpus": self.pool_cpus, "budgetCpus": self.budget_cpus,
                "verdict": self.verdict, "reason": self.reason, "density": self.density,
                "askedSharedPoolCpus": self.asked_cpus, "budgetBeyondSlicesCpus": self.beyond_cpus,
                "budgetRaised": self.raised}

    def form_words(self, scope: str) -> str:
        """``shared pool N CPU(s), budget cpu=B`` (under scope container:
        the budget and that there is no pod shared pool) and, when it is
        so, why the pool is not the size asked for (``tried:`` lines)."""
        why: list[str] = []
        if scope == "container":
            text = f"budget cpu={self.budget_cpus}"
            if self.beyond_cpus is not None:
                why.append(f"exclusive slices + {self.beyond_cpus} CPU(s)")
            why.append("scope container: no pod shared pool")
        else:
            text = f"shared pool {self.pool_cpus} CPU(s), budget cpu={self.budget_cpus}"
        if self.raised is not None:
            why += [f"{self.asked_cpus} CPU(s) asked for", self.raised]
        return text + (f" ({'; '.join(why)})" if why else "")


def _whole_cpus(c: Container) -> int:
    return int(c.requests["cpu"].milli_value() // 1000)


def _budget_milli(rewrite: Rewrite) -> int | None:
    text = rewrite.budget.get("requests", {}).get("cpu")
    if text is None:
        return None
    try:
        return parse_quantity(str(text)).milli_value()
    except QuantityError:
        return None


def _slices(pod: Pod, rewrite: Rewrite) -> int:
    """The exclusive CPUs of the long-running containers (app containers and
    sidecars) that keep their slice in ``rewrite``."""
    role = {p.name: p.role for p in rewrite.containers}
    return sum(
        _whole_cpus(c) for c in (*[c for c in pod.init_containers if c.is_sidecar], *pod.containers)
        if role.get(c.name) == "exclusive" and has_whole_cpus(c)
    )


def _init_needs(pod: Pod, rewrite: Rewrite) -> list[tuple[str, int, int]]:
    """Each regular init container that keeps exclusive CPUs: (name, its
    CPUs, the CPUs the pod needs while it runs: its own plus the exclusive
    sidecars started before it)."""
    role = {p.name: p.role for p in rewrite.containers}
    out: list[tuple[str, int, int]] = []
    before = 0
    for c in pod.init_containers:
        exclusive = role.get(c.name) == "exclusive" and has_whole_cpus(c)
        if c.is_sidecar:
            before += _whole_cpus(c) if exclusive else 0
        elif exclusive:
            out.append((c.name, _whole_cpus(c), before + _whole_cpus(c)))
    return out


def _form_figures(
    pod: Pod, rewrite: Rewrite, asked: int | None, scope: str
) -> tuple[int, int | None, str | None]:
    """(the pod shared pool, the budget's CPUs beyond the exclusive slices,
    why the budget is more than the slices plus ``asked``) of a form."""
    milli = _budget_milli(rewrite)
    if milli is None:
        return 0, None, None
    slices = _slices(pod, rewrite)
    beyond_milli = milli - slices * 1000
    beyond = beyond_milli // 1000 if beyond_milli % 1000 == 0 else None
    pool = 0 if scope == "container" or beyond is None else max(0, beyond)
    if asked is None or milli <= (slices + asked) * 1000:
        return pool, beyond, None
    budget = str(rewrite.budget["requests"]["cpu"])
    why = f"budget raised from {slices + asked} (exclusive slices {slices} + {asked}) to {budget}"
    inits = [(n, own, need) for n, own, need in _init_needs(pod, rewrite) if need * 1000 == milli]
    if inits:
        name, own, need = inits[0]
        beside = f" beside the exclusive sidecars started before it ({need - own})" if need > own else ""
        why += (f": the init container {name} asks for {own} CPU(s){beside}, and a pod budget must "
                "cover its largest init container's request (API validation)")
    else:
        raises = [n for n in rewrite.notes if n.startswith(("pod-level cpu budget raised",
                                                             "pod-level CPU budget rounded"))]
        why += (": " + "; ".join(raises)) if raises else ""
    return pool, beyond, why


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


def _smaller_pool_hint(strategy: str, shared_pool_cpus: int | None) -> str:
    """What gives a smaller pod shared pool than the one a skipped rewrite
    took (its moved containers then get less CPU than they asked for)."""
    if shared_pool_cpus is not None or strategy == "max-freed":
        return ""
    return ("; --strategy max-freed searches smaller pools (the moved containers then share fewer "
            "CPUs than they asked for)")


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
    scope = config.topology_manager_scope
    plrm_cfg, _ = variant_config(config, scope=scope, pod_level=True)
    # the pod as the kubelet receives it from the API server (its quantities
    # as stored: 0.5Gi is 512Mi), what every figure below is measured on
    doc = served_manifest(doc)
    try:
        # (read as compare reads it, a pod-level pod too: one the API server
        # refuses, a container asking for more than the pod budget, is
        # invalid input, not a pod to skip)
        pod = parse_pod(doc, gates=plrm_cfg.feature_gates, sort_keys=True)
    except InputError as e:
        return skip(f"invalid pod: {e}", error=e)
    ref = pod.ref
    if has_pod_level_resources(doc):
        return skip("already pod-level (spec.resources is set)")
    rules = recognise_sidecars(pod, sidecars)
    unknown = [n for n in sidecars if not pod.has_container(n)]
    qos = compute_pod_qos(pod, pod_level_resources=True)
    if qos != "Guaranteed":
        return skip(f"not Guaranteed (QoS {qos}): the kubelet gives it no exclusive CPUs, nothing to gain",
                    sidecar_rules=rules)

    keep_limits = strategy == "keep-limits"
    try:
        first = pod_level_form(doc, pod, strategy=strategy, sidecars=rules)
    except InputError as e:  # (an amount past int64: no form can be derived from it)
        return skip(f"invalid pod: {e}", error=e)
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
    chosen: tuple[Rewrite, Measurement, Candidate] | None = None
    for size in sizes:
        try:
            rewrite = pod_level_form(doc, pod, strategy=strategy, shared_pool_cpus=size, sidecars=rules)
        except InputError:  # (the budget past int64: larger pools too)
            if shared_pool_cpus is not None:  # the size asked for: the option's fault, not the pod's
                raise SharedPoolTooLarge(size, _most_pool(doc, pod, rules, keep_limits)) from None
            break
        budget = str(rewrite.budget.get("requests", {}).get("cpu", "?"))
        if budget in tried:
            continue  # the budget was raised to one already tried
        tried.add(budget)
        pool, beyond, raised = _form_figures(pod, rewrite, size, scope)
        form = Candidate(pool, budget, "refused", asked_cpus=size, beyond_cpus=beyond, raised=raised,
                         manifest=rewrite.manifest)
        try:
            after = measure_manifest(
                machine, config, rewrite.manifest, label="podLevel", scope=scope,
                pod_level=True, sidecars=side, cap=cap,
            )
        except InputError as e:  # a bug in the rewrite: never print it
            candidates.append(dataclasses.replace(form, reason=f"not a valid pod ({e})", manifest=None))
            continue
        if after.startup_error is not None:
            raise KubeletStartupError(after.startup_error)
        form = dataclasses.replace(form, gates_forced=after.gates_forced)
        if not after.admitted:
            candidates.append(dataclasses.replace(form, reason=f"{after.reason}: {after.message}"))
            continue
        # the pool as the kubelet made it (the same figure, measured)
        form = dataclasses.replace(form, pool_cpus=after.pod_shared_cpus.size(), admitted=True,
                                   density=after.density)
        taken = _kept_check(rewrite, by_name, before, after)
        if taken is not None:
            candidates.append(dataclasses.replace(form, reason=taken))
            continue
        form = dataclasses.replace(form, verdict="chosen")
        candidates.append(form)
        chosen = (rewrite, after, form)
        break

    base_notes = [f"--sidecar {n}: no container of that name in the pod" for n in unknown]
    if chosen is None:
        last = candidates[-1].reason if candidates else "no candidate"
        if len(candidates) == 1:
            why = last if last and last.startswith("the rewrite would") else f"the rewrite would be rejected: {last}"
        else:
            why = "no rewrite is admitted: " + "; ".join(
                (f"budget {c.budget_cpus}" if scope == "container"
                 else f"shared pool {c.pool_cpus} (budget {c.budget_cpus})") + f": {c.reason}"
                for c in candidates
            )
        rw = pod_level_form(doc, pod, strategy=strategy, shared_pool_cpus=sizes[-1], sidecars=rules)

        def on(other: Machine) -> ShapeFit | str:
            last = "no candidate"
            for size in sizes:
                form = pod_level_form(doc, pod, strategy=strategy, shared_pool_cpus=size, sidecars=rules)
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
                # the pod as written on that shape too: is the bigger node alone enough?
                written = measure(other, config, pod, label="perContainer", sidecars=side, cap=cap)
                return ShapeFit(got.pod_shared_cpus.size(), budget, form.manifest, got,
                                None if written.startup_error is not None else written, size)
            return last

        shape = nearest_shape(machine_node_document(machine), on) if other_shapes else None
        return skip(why, rewrite=rw, before=before, notes=tuple(base_notes),
                    candidates=tuple(candidates), sidecar_rules=rules, shape=shape, pod_before=doc)
    rewrite, after, form = chosen
    notes = base_notes + list(rewrite.notes)
    if form.raised is not None:
        notes.append(
            f"pod shared pool of {form.pool_cpus} CPU(s), not the {form.asked_cpus} asked for: {form.raised}"
            if scope != "container" else f"{form.raised} ({form.asked_cpus} CPU(s) asked for)"
        )
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
                pod_before=doc, pod_after=rewrite.manifest,
            )
        more = after.held_cpus.size() - before.held_cpus.size()
        if more > 0 and after.density <= before.density:
            # the exclusive CPUs freed go to a pod shared pool larger than
            # them: the node loses CPUs and fits no more copies
            fewer = "fewer" if after.density < before.density else "no more"
            return skip(
                f"nothing to gain: the rewrite takes {more} more CPU(s) from the node "
                f"({before.held_cpus.size()} -> {after.held_cpus.size()}: the pod shared pool of "
                f"{after.pod_shared_cpus.size()} CPU(s) holds more than the {freed} exclusive CPU(s) freed) "
                f"and fits {fewer} copies ({before.density} -> {after.density})"
                + _smaller_pool_hint(strategy, shared_pool_cpus),
                rewrite=rewrite, before=before, after=after, notes=tuple(notes),
                candidates=tuple(candidates), sidecar_rules=rules,
                pod_before=doc, pod_after=rewrite.manifest,
            )
        if after.density < before.density:
            notes.append(
                f"density {before.density} -> {after.density} copies: the pod budget must fit as one "
                f"block ({after.density_stop}: {after.density_stop_message})"
            )
    else:
        notes.append(f"the pod as written is rejected on this node: {before.reason}: {before.message}")
    if scope == "container":
        unpinned = "" if form.beyond_cpus is None else (
            f"; the budget's {form.beyond_cpus} CPU(s) beyond the exclusive slices count against the "
            "node's allocatable CPUs but are pinned to nobody")
        notes.append(
            "topology scope container: the moved containers run on the node shared pool, "
            f"not on a pod shared pool (use scope pod for the pod bubble){unpinned}"
        )
    return Advice(
        where=where, pod=ref, status="rewritten", original=doc, rewrite=rewrite,
        before=before, after=after, notes=tuple(notes), candidates=tuple(candidates),
        strategy=strategy, shared_pool_cpus=after.pod_shared_cpus.size(), sidecar_rules=rules,
        pod_before=doc, pod_after=rewrite.manifest, asked_pool_cpus=form.asked_cpus,
    )


def advice_scope(a: Advice) -> str:
    """The topology manager scope the advice was measured under."""
    m = a.after or a.before
    return m.scope if m is not None else "pod"


def advice_document(a: Advice) -> dict[str, Any]:
    return {
        "source": a.where,
        "pod": a.pod,
        "status": a.status,
        "reason": a.reason,
        "rewrite": a.rewrite.manifest if a.rewrite is not None and a.status == "rewritten" else None,
        "strategy": a.strategy,
        "sharedPoolCpus": a.shared_pool_cpus,
        "askedSharedPoolCpus": a.asked_pool_cpus,
        "sidecars": [{"name": n, "rule": r} for n, r in a.sidecar_rules.items()],
        "candidates": [{**c.as_dict(), "form": c.form_words(advice_scope(a))} for c in a.candidates],
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
    if machine.topology.num_cpus != len(rows):  # (cadvisor's NumCores counting offline CPUs)
        doc["cpuCapacity"] = machine.topology.num_cpus
    if machine.has_distances():
        doc["distances"] = {n.id: list(n.distances or ()) for n in machine.numa_nodes}
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
    """Where an advice's figures sit in its scenario: the step of the first
    copy of the pod as written and how many copies were added (the density
    plus the first rejected copy, unless the count stopped at the cap); the
    step of each form tried (aligned with the advice's ``candidates``: one
    copy of each refused form, removed when the kubelet admitted it; the
    chosen form's first copy; None for a form that could not be replayed);
    the chosen form's copies (``after_step`` None when no form was
    admitted)."""

    pod: str | None
    before_step: int
    before_copies: int
    after_step: int | None
    after_copies: int
    status: str = "rewritten"
    tried_steps: tuple[int | None, ...] = ()
    #: the advice's index among the advices given (``pods[]`` of the
    #: report): two pods may share a name (variants of one pod)
    pod_index: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "podIndex": self.pod_index, "status": self.status,
                "beforeStep": self.before_step, "beforeCopies": self.before_copies,
                "afterStep": self.after_step, "afterCopies": self.after_copies,
                "triedSteps": list(self.tried_steps)}


def replayable(a: Advice) -> bool:
    """The advice printed figures (the pod measured as written) that a
    scenario can replay."""
    return a.before is not None and a.pod_before is not None


class _Steps:
    """The steps of a replay scenario being written: forms added as copies,
    the admitted ones removed after them, names unique."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.used: set[tuple[str, str]] = set()

    def add(self, pod_doc: Mapping[str, Any], tag: str, copies: int, admitted: int) -> int:
        """``copies`` copies of the form, then the removal of the first
        ``admitted`` of them; returns the step of the first copy."""
        first = len(self.steps)
        pods = _copies(pod_doc, tag, copies, self.used)
        self.steps.extend({"addPod": m} for m in pods)
        for m in pods[:admitted]:
            md = m["metadata"]
            self.steps.append({"removePod": f"{md.get('namespace') or 'default'}/{md['name']}"})
        return first


def _counts(m: Measurement, density: bool) -> tuple[int, int]:
    """(copies to add, copies admitted among them) that replay ``m``'s
    admission and density (one copy only when ``density`` is False)."""
    if not density:
        return 1, min(1, m.density)
    return (m.density if m.density_capped else m.density + 1), m.density


def _replay_advice(a: Advice, out: _Steps, density: bool) -> ReplayIndex:
    """The steps that replay ``a``'s figures, each form on a node emptied
    of the forms before it: the pod as written (copies until the first
    rejection), each refused form tried (one copy; ``density`` False: left
    out), the chosen form (copies until the first rejection)."""
    assert a.before is not None and a.pod_before is not None
    count, admitted = _counts(a.before, density)
    before_step = out.add(a.pod_before, "as-written", count, admitted)
    tried: list[int | None] = []
    after_step: int | None = None
    after_count = 0
    chosen_pod = a.pod_after
    for i, c in enumerate(a.candidates):
        if c.verdict == "chosen":
            tried.append(None)  # filled below
            continue
        if not density or c.manifest is None:
            tried.append(None)
            continue
        tried.append(out.add(c.manifest, f"tried{i + 1}", 1, 1 if c.admitted else 0))
    if a.after is not None and chosen_pod is not None:
        after_count, admitted = _counts(a.after, density)
        after_step = out.add(chosen_pod, "pod-level", after_count, admitted)
        tried = [after_step if c.verdict == "chosen" else t for c, t in zip(a.candidates, tried, strict=True)]
    return ReplayIndex(a.pod, before_step, count, after_step, after_count, a.status, tuple(tried))


def _scenario_config(config_doc: Mapping[str, Any], forced: Collection[str]) -> dict[str, Any]:
    config = copy.deepcopy(dict(config_doc))
    if forced:
        gates = dict(config.get("featureGates") or {})
        for g in sorted(forced):
            gates[g] = True
        config["featureGates"] = gates
    config.setdefault("apiVersion", "kubelet.config.k8s.io/v1beta1")
    config.setdefault("kind", "KubeletConfiguration")
    return config


def proposal_scenario(
    advices: Collection[Advice],
    machine: Machine,
    config_doc: Mapping[str, Any],
    *,
    density: bool = True,
) -> tuple[dict[str, Any], list[ReplayIndex]]:
    """A scenario that replays every figure of the advices on the node
    given, each form on an empty node: per advice with figures
    (:func:`replayable`: rewritten, and skipped after the pod was
    measured), the pod as written and its copies until the first rejection
    (the density), the admitted ones removed, then each refused form tried
    (one copy, rejected as reported, or removed when the kubelet admitted
    it), then the chosen form as the pod as written; the next advice after
    it. ``config_doc``: the node's KubeletConfiguration; the gates the
    pod-level forms need are turned on in it (as their measurement did).
    ``density`` False: one copy of the pod as written and of the chosen
    form only. Each index entry's ``pod_index`` is its advice's index in
    ``advices``."""
    out = _Steps()
    index: list[ReplayIndex] = []
    forced: set[str] = set()
    for i, a in enumerate(advices):
        if not replayable(a) or (not density and a.status != "rewritten"):
            continue
        if a.after is not None:
            forced.update(a.after.gates_forced)
        for c in a.candidates:
            forced.update(c.gates_forced)
        index.append(dataclasses.replace(_replay_advice(a, out, density), pod_index=i))
    doc = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": machine_node_document(machine),
        "kubeletConfig": _scenario_config(config_doc, forced),
        "steps": out.steps,
    }
    return doc, index


def shape_scenario(
    a: Advice, config_doc: Mapping[str, Any]
) -> tuple[dict[str, Any], ReplayIndex] | None:
    """The scenario that replays the other node shape proposed for ``a``
    (None when there is none): that shape's ``node``, the configuration
    with the gates the rewrite needs, the pod as written and its copies
    until the first rejection, the admitted ones removed, then the
    pod-level form the same way."""
    shape = a.shape
    if shape is None or a.pod_before is None:
        return None
    out = _Steps()
    before_step = after_step = 0
    before_count = 0
    if shape.as_written is not None:
        before_count, admitted = _counts(shape.as_written, True)
        before_step = out.add(a.pod_before, "as-written", before_count, admitted)
    after_count, admitted = _counts(shape.measured, True)
    after_step = out.add(shape.pod, "pod-level", after_count, admitted)
    doc = {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": dict(shape.node),
        "kubeletConfig": _scenario_config(config_doc, shape.measured.gates_forced),
        "steps": out.steps,
    }
    return doc, ReplayIndex(a.pod, before_step, before_count, after_step, after_count, "otherNodeShape")
