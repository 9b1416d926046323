"""Defaulting of the Pod fields podnuma reads.

Mirrors ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_ResourceList``: every
quantity rounded up to milli scale; ``SetDefaults_Pod``: a container's missing
request defaults to its limit, and the legacy pod-level defaulting) and the
pod-level resource defaulting of ``pkg/api/pod/util.go`` that the pod
registry strategy's ``PrepareForCreate`` runs behind
``PodLevelResourcesFixDefaulting``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from podnuma.api.pod import Container
from podnuma.api.quantity import Quantity
from podnuma.api.resources import (
    is_hugepage_resource,
    is_overcommit_allowed,
    is_supported_pod_level_resource,
)

__all__ = ["round_up_milli", "default_container_requests", "default_pod_level_resources"]


def round_up_milli(q: Quantity) -> Quantity:
    """``SetDefaults_ResourceList``: every quantity is rounded up to milli
    scale (``RoundUp(-3)``, which also sets apimachinery's internal form)."""
    return q.round_up(-3)


def default_container_requests(requests: dict[str, Quantity], limits: Mapping[str, Quantity]) -> None:
    """``SetDefaults_Pod``: a container's missing request defaults to its limit."""
    for key, qty in limits.items():
        requests.setdefault(key, qty)


def default_pod_level_resources(
    req: dict[str, Quantity],
    lim: dict[str, Quantity],
    aggr_req: Mapping[str, Quantity],
    aggr_lim: Mapping[str, Quantity],
    containers: Sequence[Container],
    *,
    fix_defaulting: bool,
) -> None:
    """Fill the pod-level requests ``req`` and limits ``lim`` in place from
    the containers' aggregated requests and limits (``containers``: init
    containers, then app containers)."""
    if not (req or lim):
        return
    if fix_defaulting:
        # v1.37 (PodLevelResourcesFixDefaulting): defaulted after admission as soon
        # as any pod-level request or limit is set; limits are defaulted too.
        _default_hugepage_pod_limits(req, lim, aggr_lim)
        _default_pod_requests(req, lim, aggr_req)
        _default_pod_limits(req, lim, aggr_lim, containers)
    else:
        # Legacy SetDefaults_Pod: requests are defaulted only when pod-level
        # limits exist (defaulted hugepage limits count).
        _default_hugepage_pod_limits(req, lim, aggr_lim)
        if lim:
            _default_pod_requests(req, lim, aggr_req)



def _default_hugepage_pod_limits(
    req: dict[str, Quantity], lim: dict[str, Quantity], aggr_limits: Mapping[str, Quantity]
) -> None:
    """Pod-level hugepage limits from the containers' aggregated hugepage limits,
    unless the pod sets a request or limit for that size."""
    for name, qty in aggr_limits.items():
        if not is_hugepage_resource(name) or name in req:
            continue
        lim.setdefault(name, qty)


def _default_pod_requests(
    req: dict[str, Quantity], lim: Mapping[str, Quantity], aggr_requests: Mapping[str, Quantity]
) -> None:
    """Pod-level requests: aggregated container requests for cpu/memory, then
    the pod-level limit for what is still missing."""
    for name, qty in aggr_requests.items():
        if (name not in req and is_supported_pod_level_resource(name)
                and is_overcommit_allowed(name)):
            req[name] = qty
    for name, qty in lim.items():
        if name not in req and is_supported_pod_level_resource(name):
            req[name] = qty


def _default_pod_limits(
    req: Mapping[str, Quantity],
    lim: dict[str, Quantity],
    aggr_limits: Mapping[str, Quantity],
    containers: Sequence[Container],
) -> None:
    """Pod-level cpu/memory limits when every container has a limit for the
    resource: max(pod-level request, aggregated container limits)."""
    for name, qty in aggr_limits.items():
        if name in lim or not is_supported_pod_level_resource(name):
            continue
        if not is_overcommit_allowed(name):
            continue
        if not all(name in c.limits for c in containers):
            continue
        pod_req = req.get(name)
        lim[name] = pod_req if pod_req is not None and pod_req > qty else qty
