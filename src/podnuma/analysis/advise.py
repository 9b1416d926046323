"""Propose the pod-level rewrite (KEP-5526) of existing pods.

For every Pod in the input files (multi-document YAML, JSON, ``kubectl get
pods -o json|yaml`` lists), propose its pod-level form (rules in
``podnuma.analysis.rewrite``: the budget in ``spec.resources``, exclusive
slices kept for the containers that need them, sidecars and small
containers moved to the pod shared pool), run the pod as written and the
rewrite through the engine on an empty node (the given node and kubelet
configuration, or the built-in 2-socket node with static CPU / Static
memory / restricted / scope pod), and print the rewrite as Pod YAML (or a
unified diff) with the measured savings: exclusive CPUs freed, CPUs only
sidecars used, density before and after.

A pod is skipped, with its reason, when it is not a Pod, is invalid, is
already pod-level, is not Guaranteed, has no exclusive CPUs to gain, or when
the rewrite would be rejected or would take exclusive CPUs from a container
that keeps its slice (verified by simulation: such a rewrite is never
printed).

:func:`advise_pod` is pure; :mod:`podnuma.render.advice` writes the YAML
and diffs, :mod:`podnuma.cli.advise` is the command.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from podnuma.analysis.measure import Measurement, measure, measure_manifest, variant_config
from podnuma.analysis.rewrite import (
    Rewrite,
    clean_server_fields,
    has_pod_level_resources,
    has_whole_cpus,
    sidecar_names,
    to_pod_level,
)
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.qos import compute_pod_qos
from podnuma.errors import InputError, KubeletStartupError
from podnuma.fieldkit import field_path, wrong_type
from podnuma.machine.topology import Machine

__all__ = [
    "TEMPLATE_PATHS", "Advice", "advise_pod", "advice_document", "node_config_document",
    "workload_pod",
]

Status = Literal["rewritten", "skipped"]


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

    def savings(self) -> dict[str, Any]:
        b, a = self.before, self.after
        if b is None or a is None:
            return {}
        return {
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
) -> Advice:
    """Propose and verify the pod-level rewrite of one object: a Pod, or the
    pod template of a workload (:data:`TEMPLATE_PATHS`), which is rewritten
    in place. Never raises for a bad object (it is skipped with the reason);
    ``KubeletStartupError`` when the configuration itself cannot run."""
    kind = doc.get("kind") if isinstance(doc, Mapping) else None
    if not isinstance(kind, str) or kind not in TEMPLATE_PATHS:
        return _advise_pod(doc, machine, config, where=where, cap=cap,
                           shared_pool_cpus=shared_pool_cpus)
    return _advise_workload(doc, kind, machine, config, where=where, cap=cap,
                            shared_pool_cpus=shared_pool_cpus)


def _advise_workload(
    doc: Mapping[str, Any],
    kind: str,
    machine: Machine,
    config: KubeletConfig,
    *,
    where: str,
    cap: int,
    shared_pool_cpus: int | None,
) -> Advice:
    path = TEMPLATE_PATHS[kind]
    dotted = ".".join(path)
    label, pod_doc, template_error = workload_pod(doc, kind)
    if pod_doc is None:
        return Advice(
            where=where, pod=label, status="skipped", reason=f"{kind} without a pod template",
            original=doc,
            error=template_error,
        )
    advice = _advise_pod(pod_doc, machine, config, where=where, cap=cap,
                         shared_pool_cpus=shared_pool_cpus)
    error = advice.error.at(dotted) if advice.error is not None else None
    rewrite = advice.rewrite
    if rewrite is not None:
        manifest = copy.deepcopy(dict(doc))
        clean_server_fields(manifest)
        holder: Any = manifest
        for key in path:
            holder = holder[key]
        holder["spec"] = rewrite.manifest["spec"]
        rewrite = dataclasses.replace(rewrite, manifest=manifest)
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


def _advise_pod(
    doc: Any,
    machine: Machine,
    config: KubeletConfig,
    *,
    where: str = "",
    cap: int = 512,
    shared_pool_cpus: int | None = None,
) -> Advice:
    ref = _ref(doc)

    def skip(reason: str, **kw: Any) -> Advice:
        return Advice(where=where, pod=ref, status="skipped", reason=reason, original=doc
                      if isinstance(doc, Mapping) else None, **kw)

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
    qos = compute_pod_qos(pod, pod_level_resources=True)
    if qos != "Guaranteed":
        return skip(f"not Guaranteed (QoS {qos}): the kubelet gives it no exclusive CPUs, nothing to gain")

    rewrite = to_pod_level(doc, pod, shared_pool_cpus=shared_pool_cpus)
    by_name = {c.name: c for c in pod.all_containers()}
    moving = [p.name for p in rewrite.containers if p.role == "shared" and has_whole_cpus(by_name[p.name])]
    if not moving:
        return skip(
            "no exclusive CPUs to gain: no sidecar or small container holds whole CPUs",
            rewrite=rewrite,
        )
    sidecars = sidecar_names(pod)
    before = measure(machine, config, pod, label="perContainer", sidecars=sidecars, cap=cap)
    if before.startup_error is not None:
        raise KubeletStartupError(before.startup_error)
    try:
        after = measure_manifest(
            machine, config, rewrite.manifest, label="podLevel", scope=scope,
            pod_level=True, sidecars=sidecars, cap=cap,
        )
    except InputError as e:  # a bug in the rewrite: never print it
        return skip(f"the rewrite is not a valid pod ({e})", rewrite=rewrite)
    if after.startup_error is not None:
        raise KubeletStartupError(after.startup_error)
    notes = list(rewrite.notes)
    if after.gates_forced:
        notes.append(
            "measured with feature gate(s) " + ", ".join(f"{g}=true" for g in after.gates_forced)
            + " forced on: the node needs them for the rewrite to take effect"
        )
    if not after.admitted:
        return skip(
            f"the rewrite would be rejected: {after.reason}: {after.message}",
            rewrite=rewrite, before=before, after=after, notes=tuple(notes),
        )
    if before.admitted:
        freed = before.exclusive_cpus.size() - after.exclusive_cpus.size()
        if freed <= 0:
            return skip(
                f"no exclusive CPUs to gain (measured: {before.exclusive_cpus.size()} exclusive "
                f"before, {after.exclusive_cpus.size()} after)",
                rewrite=rewrite, before=before, after=after, notes=tuple(notes),
            )
    # Every container that keeps its slice must keep its exclusive CPUs (as
    # many as it had as written, or as it asks for when the pod as written
    # is rejected).
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
            return skip(
                f"the rewrite would take exclusive CPUs from {p.name} "
                f"({want} wanted, {0 if got is None else got.size()} exclusive after)",
                rewrite=rewrite, before=before, after=after, notes=tuple(notes),
            )
    if before.admitted:
        if after.density < before.density:
            notes.append(
                f"fewer copies fit after the rewrite ({before.density} -> {after.density}): "
                "the pod budget must fit as one block"
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
        before=before, after=after, notes=tuple(notes),
    )


def advice_document(a: Advice) -> dict[str, Any]:
    return {
        "source": a.where,
        "pod": a.pod,
        "status": a.status,
        "reason": a.reason,
        "rewrite": a.rewrite.manifest if a.rewrite is not None and a.status == "rewritten" else None,
        "containers": [
            {"name": p.name, "type": p.type, "role": p.role, "why": p.why}
            for p in (a.rewrite.containers if a.rewrite is not None else ())
        ],
        "savings": a.savings() if a.status == "rewritten" else None,
        "before": a.before.as_dict() if a.before is not None else None,
        "after": a.after.as_dict() if a.after is not None else None,
        "notes": list(a.notes),
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
