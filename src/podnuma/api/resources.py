"""Effective pod requests and limits.

Mirrors ``k8s.io/component-helpers/resource/helpers.go`` (v1.37):
``PodRequests``, ``PodLimits``, ``AggregateContainerRequests``,
``AggregateContainerLimits``, ``IsPodLevelResourcesSet``,
``IsPodLevelRequestsSet``, ``IsPodLevelLimitsSet`` and
``IsSupportedPodLevelResource``. Only the spec path is reproduced: podnuma
admits pods, so the in-place-resize inputs (container statuses, resize
conditions) and DRA node-allocatable claim statuses never apply.

The sidecar formula (KEP-753): app containers and restartable init
containers (sidecars) are summed; each regular init container needs its own
resources plus every sidecar declared before it; the pod needs the
per-resource maximum of the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from podnuma.api.quantity import Quantity

if TYPE_CHECKING:
    from podnuma.api.pod import Container, Pod

__all__ = [
    "HUGEPAGES_PREFIX",
    "ResourceList",
    "aggregate_container_limits",
    "aggregate_container_requests",
    "aggregate_limits_of",
    "aggregate_requests_of",
    "hugepage_resource_name",
    "is_hugepage_resource",
    "is_native_resource",
    "is_overcommit_allowed",
    "is_pod_level_limits_set",
    "is_pod_level_requests_set",
    "is_pod_level_resources_set",
    "is_supported_pod_level_resource",
    "pod_limits",
    "pod_requests",
]

ResourceList = dict[str, Quantity]

HUGEPAGES_PREFIX = "hugepages-"
_POD_LEVEL_NAMED = frozenset({"cpu", "memory"})


def is_hugepage_resource(name: str) -> bool:
    """``helper.IsHugePageResourceName``: the name starts with ``hugepages-``."""
    return name.startswith(HUGEPAGES_PREFIX)


def hugepage_resource_name(page_size_bytes: int) -> str:
    """``helper.HugePageResourceName`` of a BinarySI quantity of the page
    size (``hugepages-2Mi``), as the kubelet names cadvisor's pools."""
    return HUGEPAGES_PREFIX + Quantity.from_int(page_size_bytes, binary=True).canonical()


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and every ``hugepages-*`` size (``IsSupportedPodLevelResource``)."""
    return name in _POD_LEVEL_NAMED or name.startswith(HUGEPAGES_PREFIX)


def is_native_resource(name: str) -> bool:
    """No domain, or a ``kubernetes.io/`` domain (``helper.IsNativeResource``)."""
    return "/" not in name or "kubernetes.io/" in name


def is_overcommit_allowed(name: str) -> bool:
    """Native resources other than hugepages (``helper.IsOvercommitAllowed``)."""
    return is_native_resource(name) and not is_hugepage_resource(name)


def _has_supported(resources: Mapping[str, Quantity]) -> bool:
    return any(is_supported_pod_level_resource(name) for name in resources)


def is_pod_level_resources_set(pod: Pod) -> bool:
    """Pod-level requests or limits name at least one supported resource."""
    res = pod.resources
    if res is None:
        return False
    return _has_supported(res.requests) or _has_supported(res.limits)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """Pod-level requests name at least one supported resource."""
    return pod.resources is not None and _has_supported(pod.resources.requests)


def is_pod_level_limits_set(pod: Pod) -> bool:
    """Pod-level limits name at least one supported resource."""
    return pod.resources is not None and _has_supported(pod.resources.limits)


def _add_into(dst: ResourceList, src: Mapping[str, Quantity]) -> None:
    for name, qty in src.items():
        prev = dst.get(name)
        dst[name] = qty if prev is None else prev + qty


def _max_into(dst: ResourceList, src: Mapping[str, Quantity]) -> None:
    for name, qty in src.items():
        prev = dst.get(name)
        if prev is None:
            dst[name] = qty
        elif qty > prev:
            # upstream's Cmp turns its receiver (the copy stored here) into
            # an inf.Dec when the other side is one (reproduced quirk: it
            # changes what MilliValue/Value return beyond int64)
            dst[name] = qty.as_dec() if prev.is_dec else qty


def _apply_non_missing(
    resources: Mapping[str, Quantity], non_missing: Mapping[str, Quantity]
) -> ResourceList:
    out = dict(resources)
    for name, qty in non_missing.items():
        if name not in resources:
            out[name] = qty
    return out


def _aggregate(
    init_containers: Iterable[Container],
    containers: Iterable[Container],
    pick: Callable[[Container], Mapping[str, Quantity]],
    non_missing: Mapping[str, Quantity] | None,
) -> ResourceList:
    result: ResourceList = {}
    for ctr in containers:
        res = pick(ctr)
        if non_missing:
            res = _apply_non_missing(res, non_missing)
        _add_into(result, res)

    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for ctr in init_containers:
        res = pick(ctr)
        if non_missing:
            res = _apply_non_missing(res, non_missing)
        if ctr.restart_policy == "Always":
            _add_into(result, res)
            _add_into(sidecars, res)
            _max_into(init_peak, sidecars)
        else:
            running = dict(res)
            _add_into(running, sidecars)
            _max_into(init_peak, running)
    _max_into(result, init_peak)
    return result


def aggregate_requests_of(
    init_containers: Iterable[Container],
    containers: Iterable[Container],
    non_missing: Mapping[str, Quantity] | None = None,
) -> ResourceList:
    """``AggregateContainerRequests`` over explicit container lists."""
    return _aggregate(init_containers, containers, lambda c: c.requests, non_missing)


def aggregate_limits_of(
    init_containers: Iterable[Container], containers: Iterable[Container]
) -> ResourceList:
    """``AggregateContainerLimits`` over explicit container lists."""
    return _aggregate(init_containers, containers, lambda c: c.limits, None)


def aggregate_container_requests(
    pod: Pod, *, non_missing_container_requests: Mapping[str, Quantity] | None = None
) -> ResourceList:
    """Requests of all containers by the sidecar formula (no pod-level, no overhead)."""
    return aggregate_requests_of(
        pod.init_containers, pod.containers, non_missing_container_requests
    )


def aggregate_container_limits(pod: Pod) -> ResourceList:
    """Limits of all containers by the sidecar formula; absent limits add nothing."""
    return aggregate_limits_of(pod.init_containers, pod.containers)


def pod_requests(
    pod: Pod,
    *,
    pod_level_resources: bool,
    exclude_overhead: bool = False,
    non_missing_container_requests: Mapping[str, Quantity] | None = None,
) -> ResourceList:
    """``PodRequests``: aggregated container requests, pod-level override, overhead.

    ``pod_level_resources`` is the ``PodLevelResources`` gate (upstream callers
    pass ``SkipPodLevelResources = !gate``). Pod-level requests replace the
    aggregate only for the supported resources they name, and only when they
    name at least one. The result is a new mapping the caller may change
    (the pod keeps its own copy: it is immutable).
    """
    if non_missing_container_requests is None:
        memo = pod.memo()
        if pod_level_resources:
            key = "requests:plr:no-overhead" if exclude_overhead else "requests:plr"
        else:
            key = "requests:no-overhead" if exclude_overhead else "requests"
        found: ResourceList | None = memo.get(key)
        if found is None:
            found = memo[key] = _pod_requests(pod, pod_level_resources, exclude_overhead, None)
        return dict(found)
    return _pod_requests(
        pod, pod_level_resources, exclude_overhead, non_missing_container_requests
    )


def _pod_requests(
    pod: Pod,
    pod_level_resources: bool,
    exclude_overhead: bool,
    non_missing_container_requests: Mapping[str, Quantity] | None,
) -> ResourceList:
    if non_missing_container_requests is None and not pod.init_containers:
        # the usual pod: the sum of its containers' requests (the sidecar
        # formula has nothing else to add)
        reqs: ResourceList = {}
        for ctr in pod.containers:
            _add_into(reqs, ctr.requests)
    else:
        reqs = aggregate_container_requests(
            pod, non_missing_container_requests=non_missing_container_requests
        )
    if pod_level_resources and is_pod_level_requests_set(pod):
        assert pod.resources is not None
        for name, qty in pod.resources.requests.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = qty
    if not exclude_overhead and pod.overhead:
        _add_into(reqs, pod.overhead)
    return reqs


def pod_limits(
    pod: Pod, *, pod_level_resources: bool, exclude_overhead: bool = False
) -> ResourceList:
    """``PodLimits``: aggregated container limits, pod-level override, overhead.

    The pod-level limits apply as soon as pod-level requests *or* limits are
    set (``IsPodLevelResourcesSet``), unlike ``pod_requests``. Overhead is
    added only to limits that exist and are non-zero.
    """
    limits = aggregate_container_limits(pod)
    if pod_level_resources and is_pod_level_resources_set(pod):
        assert pod.resources is not None
        for name, qty in pod.resources.limits.items():
            if is_supported_pod_level_resource(name):
                limits[name] = qty
    if not exclude_overhead and pod.overhead:
        for name, qty in pod.overhead.items():
            cur = limits.get(name)
            if cur is not None and not cur.is_zero():
                limits[name] = cur + qty
    return limits
