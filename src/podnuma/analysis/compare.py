"""A pod as written vs its other form (KEP-5526).

For a per-container pod the other form is its pod-level form
(``spec.resources`` = the pod budget, exclusive slices kept for the main
containers, sidecars and small containers on the pod shared pool; rules in
``podnuma.analysis.rewrite``); for a pod-level pod it is the per-container
form (every container with its own share). Both forms run under topology
scope ``pod`` and ``container`` with the user's node and configuration
(topology policy kept; the pod-level form with the PodLevelResources and
PodLevelResourceManagers gates forced on, which the output says), each on
an empty node: QoS, admission, exclusive CPUs, pod shared pool, containers
on the node shared pool, CPUs only sidecars use, NUMA nodes, and density
(copies admitted until the first rejection).

The pod is taken as the kubelet receives it from the API server, every
quantity in the canonical form the API server stores
(:func:`~podnuma.analysis.rewrite.served_manifest`: ``memory: 0.5Gi`` is
``512Mi``), and so is its other form. A pod with a quantity, or a pod budget,
beyond what the kubelet counts in an int64 has no other form
(:func:`~podnuma.analysis.rewrite.other_form` refuses it).

:func:`compare_pod` is pure; :mod:`podnuma.render.compare` draws the table
and :mod:`podnuma.cli.compare` is the command.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from podnuma.analysis.measure import Measurement, copy_name, measure_manifest, variant_config
from podnuma.analysis.rewrite import (
    Rewrite,
    clean_server_fields,
    has_pod_level_resources,
    other_form,
    served_manifest,
    sidecar_names,
)
from podnuma.api.kubeletconfig import KubeletConfig
from podnuma.api.pod_manifest import parse_pod
from podnuma.cm.cpumanager.policy_static import POLICY_STATIC as CPU_POLICY_STATIC
from podnuma.cm.topologymanager.manager import SCOPE_CONTAINER, SCOPE_POD
from podnuma.cm.topologymanager.policy import POLICY_NONE
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type
from podnuma.machine.topology import Machine

__all__ = ["FORM_NAMES", "SCOPES", "Comparison", "compare_pod", "comparison_document", "run_scenario"]

#: the forms of a pod as people call them
FORM_NAMES = {"perContainer": "per-container", "podLevel": "pod-level"}

SCOPES = (SCOPE_POD, SCOPE_CONTAINER)


@dataclass(frozen=True)
class Comparison:
    """Both forms of one pod, measured under both scopes.

    ``runs`` are ordered per-container form (pod, container scope), then
    pod-level form (pod, container scope).
    """

    pod: str
    written: str  # "perContainer" or "podLevel": the form the file holds
    rewrite: Rewrite
    runs: tuple[Measurement, ...]
    notes: tuple[str, ...]
    original: Mapping[str, Any]

    def form(self, form: str) -> Mapping[str, Any]:
        """The manifest of ``form`` (``perContainer`` or ``podLevel``), as
        measured."""
        return self.original if form == self.written else self.rewrite.manifest

    def run(self, form: str, scope: str) -> Measurement:
        for m in self.runs:
            if m.label == form and m.scope == scope:
                return m
        raise KeyError((form, scope))


def compare_pod(
    doc: Mapping[str, Any], machine: Machine, config: KubeletConfig, *, cap: int = 512
) -> Comparison:
    """Measure ``doc`` and its other form under scopes pod and container,
    both as the API server stores them (``original`` is ``doc`` so).

    Raises ``InputError`` (the manifest is not a valid Pod, or it has no
    other form: a quantity or budget beyond int64; paths relative to
    ``doc``) or ``KubeletStartupError`` (the configuration cannot run).
    """
    if not isinstance(doc, Mapping):
        raise wrong_type("", "a mapping (a Pod manifest)", doc)
    kind = doc.get("kind")
    if kind is not None and kind != "Pod":
        raise InputError(f"not a Pod (kind {kind!r})", path="kind")
    doc = served_manifest(doc)
    plrm_cfg, forced = variant_config(config, scope=config.topology_manager_scope, pod_level=True)
    pod = parse_pod(doc, gates=plrm_cfg.feature_gates, sort_keys=True)
    written = "podLevel" if has_pod_level_resources(doc) else "perContainer"
    rewrite = other_form(doc, pod)
    forms: dict[str, Mapping[str, Any]] = {written: doc, rewrite.direction: rewrite.manifest}
    sidecars = sidecar_names(pod)

    notes: list[str] = []
    if forced:
        notes.append(
            "pod-level form measured with feature gate(s) "
            + ", ".join(f"{g}=true" for g in forced)
            + " forced on (PodLevelResourceManagers is off by default in v1.37)"
        )
    if config.topology_manager_policy == POLICY_NONE:
        notes.append(
            "topology policy none: the kubelet aligns nothing and the scope makes no difference"
        )
    if config.cpu_manager_policy != CPU_POLICY_STATIC:
        notes.append(f"CPU manager policy {config.cpu_manager_policy}: no exclusive CPUs at all")
    notes.append(
        f"topology policy {config.topology_manager_policy} kept; scope set to pod and to container "
        f"(configured: {config.topology_manager_scope})"
    )

    runs: list[Measurement] = []
    for form in ("perContainer", "podLevel"):
        for scope in SCOPES:
            try:
                m = measure_manifest(
                    machine, config, forms[form], label=form, scope=scope,
                    pod_level=(form == "podLevel"), sidecars=sidecars, cap=cap,
                )
            except InputError as e:
                if form == written:
                    raise
                raise InputError(f"the derived {form} form is not a valid pod: {e}") from None
            runs.append(m)
    notes.extend(rejection_notes(runs))
    return Comparison(
        pod=pod.ref,
        written=written,
        rewrite=rewrite,
        runs=tuple(runs),
        notes=tuple(notes) + rewrite.notes,
        original=doc,
    )


#: Rejections that just mean "the node is full".
CAPACITY_REASONS = frozenset({"OutOfcpu", "OutOfmemory", "OutOfpods", "TopologyAffinityError"})

def rejection_notes(runs: list[Measurement]) -> list[str]:
    """Explain rejections (of the pod or of a later copy) that are not the
    node simply being full."""
    out: list[str] = []
    for m in runs:
        if m.startup_error is not None:
            continue
        which = f"{FORM_NAMES[m.label]} / scope {m.scope}"
        reason, message = m.density_stop, m.density_stop_message
        copy = f"copy {m.density + 1}" if m.admitted else "the pod"
        if reason is None or reason in CAPACITY_REASONS and m.admitted:
            continue
        out.append(f"{which}: {copy} rejected: {reason}: {message}")
    return out


# --------------------------------------------------------------------------
# the scenario that replays a run


def _copy_manifest(manifest: Mapping[str, Any], i: int) -> dict[str, Any]:
    """The ``i``-th copy of the pod as :func:`~podnuma.analysis.measure.measure`
    adds it (the pod itself, then ``NAME-i``), without server fields: each
    takes the UID derived from its namespace and name."""
    m = copy.deepcopy(dict(manifest))
    clean_server_fields(m)
    m.setdefault("apiVersion", "v1")
    m.setdefault("kind", "Pod")
    if i:
        meta = dict(m.get("metadata") or {})
        meta["name"] = copy_name(str(meta.get("name") or "pod"), i)
        m["metadata"] = meta
    return m


def _text_keys(value: Any) -> Any:
    """``value`` with every mapping key a string (a NUMA node's ``0``:
    ``"0"``), so that the scenario is the same document in JSON and YAML."""
    if isinstance(value, Mapping):
        return {str(k): _text_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_text_keys(v) for v in value]
    return value


def run_scenario(
    c: Comparison, m: Measurement, node: Mapping[str, Any], config_doc: Mapping[str, Any]
) -> dict[str, Any]:
    """The scenario that replays the run ``m`` of ``c``: ``node`` (a
    scenario node mapping), the kubelet configuration ``config_doc`` with
    the run's topology scope (and, for the pod-level form, the gates its
    measurement forced on), and the copies of the form the run added: the
    density, then the first rejected copy (none past the cap), so that
    ``steps[0]`` is the pod's own admission and ``steps[density]`` the
    rejection the run reports."""
    config = copy.deepcopy(dict(config_doc))
    config.setdefault("apiVersion", "kubelet.config.k8s.io/v1beta1")
    config.setdefault("kind", "KubeletConfiguration")
    config["topologyManagerScope"] = m.scope
    if m.gates_forced:
        gates = dict(config.get("featureGates") or {})
        for g in m.gates_forced:
            gates[g] = True
        config["featureGates"] = gates
    count = m.density if m.density_capped else m.density + 1
    manifest = c.form(m.label)
    return {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": _text_keys(node),
        "kubeletConfig": config,
        "steps": [{"addPod": _copy_manifest(manifest, i)} for i in range(count)],
    }


# --------------------------------------------------------------------------
# output


def comparison_document(c: Comparison) -> dict[str, Any]:
    return {
        "pod": c.pod,
        "asWritten": c.written,
        "derived": {
            "form": c.rewrite.direction,
            "budget": {k: dict(v) for k, v in c.rewrite.budget.items()},
            "containers": [
                {"name": p.name, "type": p.type, "role": p.role, "why": p.why}
                for p in c.rewrite.containers
            ],
            "manifest": c.rewrite.manifest,
        },
        "runs": [m.as_dict() for m in c.runs],
        "notes": list(c.notes),
    }
