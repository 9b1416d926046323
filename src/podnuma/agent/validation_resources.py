"""A static pod's pod-level budget, overhead and resource claims, as
``ValidatePodCreate`` checks them.

Mirrors k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``:
``validatePodResourceClaims`` / ``validatePodResourceClaim`` (with
``ValidateResourceClaimName`` and ``ValidateResourceClaimTemplateName``:
DNS subdomains), ``validatePodResources`` (``validatePodResourceRequirements``:
``validateResourceRequirements`` with ``validatePodResourceName``, then
``validatePodResourceConsistency``) and ``validateOverhead`` (the overhead
as the limits of a container's resources, under ``spec.overhead``); with
``AggregateContainerRequests`` and ``AggregateContainerLimits`` of
k8s.io/component-helpers v0.37.2 ``resource/helpers.go`` (podnuma's
``podnuma.api.resources``: app containers summed, sidecars, restartable
init containers, counted with them, the init containers' peak).

The kubelet runs these on the pod its file source decoded and defaulted:
every quantity rounded up to milli (``SetDefaults_ResourceList``), a
container's missing request its limit (``SetDefaults_Pod``); pod-level
requests and limits are not defaulted (``PodLevelResourcesFixDefaulting``,
on by default in v1.37, leaves that to the API server's
``PrepareForCreate``, which a static pod never meets). ``validatePodResources``
runs only with the ``PodLevelResources`` gate (on by default since v1.34).

Go walks a resource list (a map) in no fixed order: podnuma walks its
names sorted, so the kubelet's order is matched when one name of a list
has errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.agent import validation_container as container
from podnuma.agent.validation_kit import _Errors, _get, _map, _seq, _str, options
from podnuma.api.pod import Container
from podnuma.api.pod_defaults import (
    default_container_requests,
    default_pod_level_resources,
    round_up_milli,
)
from podnuma.api.pod_validation import dns_label_errors, dns_subdomain_errors
from podnuma.api.quantity import Quantity, quantity_from_manifest
from podnuma.api.resources import aggregate_limits_of, aggregate_requests_of
from podnuma.golang.json import go_json_quote

__all__ = [
    "check_overhead",
    "check_pod_resource_claims",
    "check_pod_resources",
    "container_lists",
    "resource_list",
]

_MIRROR = "kubernetes.io/config.mirror"
_HUGEPAGES = "hugepages-"


def resource_list(raw: Mapping[str, Any]) -> dict[str, Quantity]:
    """A decoded ``ResourceList`` as ``SetDefaults_ResourceList`` leaves it
    (each quantity rounded up to milli scale; a null one is zero)."""
    return {name: round_up_milli(quantity_from_manifest(value)) for name, value in raw.items()
            if isinstance(name, str)}


def container_lists(c: Mapping[str, Any]) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """A container's limits and requests as defaulted (a missing request
    is its limit)."""
    res = _map(c, "resources")
    limits = resource_list(_map(res, "limits"))
    requests = resource_list(_map(res, "requests"))
    default_container_requests(requests, limits)
    return limits, requests


# ---------------------------------------------------------------- resourceClaims


def _claim_shown(claim: Mapping[str, Any]) -> str:
    """A pod's claim as ``field.Error`` shows it: ``json.Marshal`` of the
    internal ``core.PodResourceClaim`` (no JSON tags: the Go field names; an
    unset pointer ``null``)."""
    parts = []
    for key, go_name in (("name", "Name"), ("resourceClaimName", "ResourceClaimName"),
                         ("resourceClaimTemplateName", "ResourceClaimTemplateName")):
        value = _str(claim, key)
        if key == "name":
            value = value or ""
        parts.append(f'"{go_name}":' + ("null" if value is None else go_json_quote(value)))
    return "{" + ",".join(parts) + "}"


def check_pod_resource_claims(errs: _Errors, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    """``validatePodResourceClaims``: each claim of ``spec.resourceClaims``
    named (a DNS label, once), with exactly one of ``resourceClaimName`` and
    ``resourceClaimTemplateName``, each a DNS subdomain. A pod annotated as
    a mirror pod gets, for each claim, only ``Forbidden`` (on the root
    path, which the kubelet's message shows as ``[]``)."""
    mirror = _MIRROR in _map(meta, "annotations")
    seen: set[str] = set()
    for i, claim in enumerate(_seq(spec, "resourceClaims")):
        if not isinstance(claim, Mapping):
            continue
        if mirror:
            # (on field.NewPath(""): a root without a name, which Path.String
            # writes as an empty subscript)
            errs.forbidden("[]", "static pods do not support resource claims")
            continue
        path = f"spec.resourceClaims[{i}]"
        name = _str(claim, "name") or ""
        if not name:
            errs.required(f"{path}.name")
        elif name in seen:
            errs.duplicate(f"{path}.name", name)
        else:
            errs.each(f"{path}.name", name, dns_label_errors(name))
            seen.add(name)
        by_name, by_template = _str(claim, "resourceClaimName"), _str(claim, "resourceClaimTemplateName")
        if by_name is not None and by_template is not None:
            errs.items.append((path, f"Invalid value: {_claim_shown(claim)}: at most one of `resourceClaimName` "
                                     "or `resourceClaimTemplateName` may be specified"))
        if by_name is None and by_template is None:
            errs.items.append((path, f"Invalid value: {_claim_shown(claim)}: must specify one of: "
                                     "`resourceClaimName`, `resourceClaimTemplateName`"))
        if by_name is not None:
            errs.each(f"{path}.resourceClaimName", by_name, dns_subdomain_errors(by_name))
        if by_template is not None:
            errs.each(f"{path}.resourceClaimTemplateName", by_template, dns_subdomain_errors(by_template))


# ---------------------------------------------------------------- spec.resources


def check_pod_resources(errs: _Errors, spec: Mapping[str, Any], containers: list[Mapping[str, Any]],
                        inits: list[Mapping[str, Any]], claim_names: frozenset[str]) -> None:
    """``validatePodResources`` on ``spec.resources`` (absent or null: not
    checked): on a Windows pod only ``Forbidden``; else ``claims`` refused
    (even empty), every error of ``validatePodResourceRequirements`` (the
    names cpu, memory or a ``hugepages-`` one; quantities; requests within
    limits; hugepages with cpu or memory; the claims' names), then
    ``validatePodResourceConsistency``."""
    res = _get(spec, "resources")
    if not isinstance(res, Mapping):
        return
    path = "spec.resources"
    if _str(_get(spec, "os"), "name") == "windows":
        errs.forbidden(path, "may not be set for a windows pod")
        return
    if _get(res, "claims") is not None:
        errs.forbidden(f"{path}.claims", "claims may not be set for Resources at pod-level")
    limits, requests = pod_level_lists(spec, legacy_defaulting=options().legacy_pod_defaulting)
    container.check_container_resources(errs, limits, requests, _seq(res, "claims"), claim_names, path,
                                        name_rule=container.pod_resource_name_errors)
    _consistency(errs, limits, requests, containers, inits, path)


def _container_objects(containers: list[Mapping[str, Any]],
                       inits: list[Mapping[str, Any]]) -> tuple[list[Container], list[Container]]:
    """The app and init containers with their resources as defaulted."""
    apps = []
    for i, c in enumerate(containers):
        lim, req = container_lists(c)
        apps.append(Container(_str(c, "name") or "", "app", requests=req, limits=lim, index=i))
    init_ctrs = []
    for i, c in enumerate(inits):
        lim, req = container_lists(c)
        policy = _str(c, "restartPolicy")
        init_ctrs.append(Container(_str(c, "name") or "", "sidecar" if policy == "Always" else "init",
                                   requests=req, limits=lim, restart_policy=policy, index=i))
    return apps, init_ctrs


def pod_level_lists(spec: Mapping[str, Any], *,
                    legacy_defaulting: bool) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """``spec.resources``' limits and requests as the v1 defaults leave
    them: as written (``PodLevelResourcesFixDefaulting`` on: the defaulting
    moved to the API server's ``PrepareForCreate``, which the file source
    never runs), or with ``legacy_defaulting`` (``PodLevelResources`` on,
    ``PodLevelResourcesFixDefaulting`` off) ``SetDefaults_Pod``'s
    ``defaultHugePagePodLimits`` and ``defaultPodRequests`` applied: hugepage
    limits from the containers' aggregate, then, with pod-level limits,
    requests from the containers' aggregate (cpu, memory) and the limits."""
    res = _get(spec, "resources")
    limits = resource_list(_map(res, "limits"))
    requests = resource_list(_map(res, "requests"))
    if legacy_defaulting and (limits or requests):
        apps, inits = _container_objects([c for c in _seq(spec, "containers") if isinstance(c, Mapping)],
                                         [c for c in _seq(spec, "initContainers") if isinstance(c, Mapping)])
        default_pod_level_resources(requests, limits, aggregate_requests_of(inits, apps),
                                    aggregate_limits_of(inits, apps), (*inits, *apps), fix_defaulting=False)
    return limits, requests


def _consistency(errs: _Errors, limits: Mapping[str, Quantity], requests: Mapping[str, Quantity],
                 containers: list[Mapping[str, Any]], inits: list[Mapping[str, Any]], path: str) -> None:
    """``validatePodResourceConsistency``: each pod-level request at least
    the containers' aggregated request of its name (whatever the name), each
    pod-level hugepages limit at least their aggregated limit, and no app
    container's limit above the pod-level limit of its name (the path Go
    builds: ``spec.resources.containers[I][NAME].limits``)."""
    apps, init_ctrs = _container_objects(containers, inits)
    aggregate = aggregate_requests_of(init_ctrs, apps)
    for name in sorted(aggregate):
        pod_req = requests.get(name)
        if pod_req is not None and aggregate[name] > pod_req:
            errs.invalid(f"{path}.requests[{name}]", str(pod_req),
                         f"must be greater than or equal to aggregate container requests of {aggregate[name]}")
    aggregate = aggregate_limits_of(init_ctrs, apps)
    for name in sorted(aggregate):
        pod_lim = limits.get(name)
        if name.startswith(_HUGEPAGES) and pod_lim is not None and aggregate[name] > pod_lim:
            errs.invalid(f"{path}.limits[{name}]", str(pod_lim),
                         f"must be greater than or equal to aggregate container limits of {aggregate[name]}")
    for ctr in apps:
        for name in sorted(ctr.limits):
            pod_lim = limits.get(name)
            if pod_lim is not None and ctr.limits[name] > pod_lim:
                errs.invalid(f"{path}.containers[{ctr.index}][{name}].limits", str(ctr.limits[name]),
                             f"must be less than or equal to pod limits of {pod_lim}")


# ---------------------------------------------------------------- spec.overhead


def check_overhead(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validateOverhead``: ``spec.overhead`` (absent or null: not checked)
    as a container's limits without requests, every error of
    ``ValidateContainerResourceRequirements`` under ``spec.overhead``
    (``spec.overhead.limits[NAME]``)."""
    raw = _get(spec, "overhead")
    if not isinstance(raw, Mapping):
        return
    container.check_container_resources(errs, resource_list(raw), {}, [], frozenset(), "spec.overhead")
