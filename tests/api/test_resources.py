"""Effective pod requests/limits.

Tables ported from k8s.io/component-helpers/resource/helpers_test.go (v1.37):
TestPodRequestsAndLimits, TestPodRequestsAndLimitsWithoutOverhead,
TestPodResourceRequests, TestPodResourceLimits, TestIsPodLevelResourcesSet,
TestIsPodLevelLimitsSet, TestPodLevelResourceRequests,
TestAggregateContainerRequestsAndLimits, TestIsSupportedPodLevelResource
(spec-only cases; the in-place-resize and DRA status cases do not apply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from podnuma.api.pod import Container, Pod, PodLevelResources
from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.api.resources import (
    aggregate_container_limits,
    aggregate_container_requests,
    is_pod_level_limits_set,
    is_pod_level_requests_set,
    is_pod_level_resources_set,
    is_supported_pod_level_resource,
    pod_limits,
    pod_requests,
)

RL = Mapping[str, str]


def q(d: RL) -> dict[str, Quantity]:
    return {k: parse_quantity(v) for k, v in d.items()}


def ctr(name: str, req: RL | None = None, lim: RL | None = None, *, kind: str = "app",
        index: int = 0) -> Container:
    return Container(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        requests=q(req or {}),
        limits=q(lim or {}),
        restart_policy="Always" if kind == "sidecar" else None,
        index=index,
    )


def init(name: str, req: RL | None = None, lim: RL | None = None) -> Container:
    return ctr(name, req, lim, kind="init")


def side(name: str, req: RL | None = None, lim: RL | None = None) -> Container:
    return ctr(name, req, lim, kind="sidecar")


def pod(containers: Sequence[Container] = (), init_containers: Sequence[Container] = (),
        overhead: RL | None = None, resources: tuple[RL, RL] | None = None) -> Pod:
    return Pod(
        uid="uid",
        name="p",
        init_containers=tuple(init_containers),
        containers=tuple(containers),
        overhead=q(overhead or {}),
        resources=None if resources is None else PodLevelResources(q(resources[0]), q(resources[1])),
    )


def same(got: Mapping[str, Quantity], want: RL) -> bool:
    return dict(got) == q(want)


# ---- TestPodRequestsAndLimits: getPod puts the same resources on one app and one init container


def _get_pod(req: RL, lim: RL, overhead: RL) -> Pod:
    return pod([ctr("foo", req, lim)], [init("init-foo", req, lim)], overhead=overhead)


REQUESTS_AND_LIMITS: list[tuple[str, RL, RL, RL, RL, RL]] = [
    # name, requests, limits, overhead, expected requests, expected limits
    ("just-limit-no-overhead", {}, {"cpu": "9"}, {}, {}, {"cpu": "9"}),
    ("just-overhead", {}, {}, {"cpu": "5", "memory": "5"}, {"cpu": "5", "memory": "5"}, {}),
    ("req-and-overhead", {"cpu": "1", "memory": "10"}, {}, {"cpu": "5", "memory": "5"},
     {"cpu": "6", "memory": "15"}, {}),
    ("all-req-lim-and-overhead", {"cpu": "1", "memory": "10"}, {"cpu": "2", "memory": "12"},
     {"cpu": "5", "memory": "5"}, {"cpu": "6", "memory": "15"}, {"cpu": "7", "memory": "17"}),
    ("req-some-lim-and-overhead", {"cpu": "1", "memory": "10"}, {"cpu": "2"},
     {"cpu": "5", "memory": "5"}, {"cpu": "6", "memory": "15"}, {"cpu": "7"}),
]


@pytest.mark.parametrize("name,req,lim,overhead,want_req,want_lim", REQUESTS_AND_LIMITS,
                         ids=[c[0] for c in REQUESTS_AND_LIMITS])
def test_pod_requests_and_limits(name: str, req: RL, lim: RL, overhead: RL, want_req: RL,
                                 want_lim: RL) -> None:
    p = _get_pod(req, lim, overhead)
    assert same(pod_requests(p, pod_level_resources=True), want_req)
    assert same(pod_limits(p, pod_level_resources=True), want_lim)


# ---- TestPodRequestsAndLimitsWithoutOverhead

_TWO = [ctr("foobar", {"cpu": "1", "memory": "5"}, {"cpu": "2", "memory": "10"}),
        ctr("foobar2", {"cpu": "4", "memory": "12"}, {"cpu": "8", "memory": "24"})]

WITHOUT_OVERHEAD: list[tuple[str, Pod, RL, RL]] = [
    ("two container no overhead - should just be sum of containers", pod(_TWO),
     {"cpu": "5", "memory": "17"}, {"cpu": "10", "memory": "34"}),
    ("two container with overhead - shouldn't consider overhead",
     pod(_TWO, overhead={"cpu": "3", "memory": "8"}),
     {"cpu": "5", "memory": "17"}, {"cpu": "10", "memory": "34"}),
    ("two container with overhead, massive init - should just be the largest init",
     pod(_TWO, [init("small-init", {"cpu": "1", "memory": "5"}, {"cpu": "1", "memory": "5"}),
                init("big-init", {"cpu": "40", "memory": "120"}, {"cpu": "80", "memory": "240"})],
         overhead={"cpu": "3", "memory": "8"}),
     {"cpu": "40", "memory": "120"}, {"cpu": "80", "memory": "240"}),
]


@pytest.mark.parametrize("name,p,want_req,want_lim", WITHOUT_OVERHEAD,
                         ids=[c[0] for c in WITHOUT_OVERHEAD])
def test_pod_requests_and_limits_without_overhead(name: str, p: Pod, want_req: RL,
                                                  want_lim: RL) -> None:
    assert same(pod_requests(p, pod_level_resources=True, exclude_overhead=True), want_req)
    assert same(pod_limits(p, pod_level_resources=True, exclude_overhead=True), want_lim)


# ---- TestPodResourceRequests (spec-only cases)

POD_RESOURCE_REQUESTS: list[tuple[str, dict[str, Any], Pod, RL]] = [
    ("nil options, larger init container", {},
     pod([ctr("c", {"cpu": "1"})], [init("i", {"cpu": "4"})]), {"cpu": "4"}),
    ("nil options, larger containers", {},
     pod([ctr("c1", {"cpu": "2"}), ctr("c2", {"cpu": "3"})], [init("i", {"cpu": "2"})]),
     {"cpu": "5"}),
    ("pod overhead excluded", {"exclude_overhead": True},
     pod([ctr("c1", {"cpu": "2"}), ctr("c2", {"cpu": "3"})], [init("i", {"cpu": "2"})],
         overhead={"cpu": "1"}),
     {"cpu": "5"}),
    ("pod overhead included", {},
     pod([ctr("c1", {"cpu": "2"}), ctr("c2", {"cpu": "3"})],
         [init("i", {"cpu": "2"}, {"cpu": "2"})], overhead={"cpu": "1", "memory": "1Gi"}),
     {"cpu": "6", "memory": "1Gi"}),
    ("restartable init container", {},
     pod([ctr("container-1", {"cpu": "1"})], [side("restartable-init-1", {"cpu": "1"})]),
     {"cpu": "2"}),
    # max(5, restartable init containers(3+2+1) + regular(1)) = 7
    ("multiple restartable init containers", {},
     pod([ctr("container-1", {"cpu": "1"})],
         [init("init-1", {"cpu": "5"}), side("restartable-init-1", {"cpu": "1"}),
          side("restartable-init-2", {"cpu": "2"}), side("restartable-init-3", {"cpu": "3"})]),
     {"cpu": "7"}),
    # init-2 needs 5 + the sidecars started before it (1+2) = 8
    ("multiple restartable and regular init containers", {},
     pod([ctr("container-1", {"cpu": "1"})],
         [init("init-1", {"cpu": "5"}), side("restartable-init-1", {"cpu": "1"}),
          side("restartable-init-2", {"cpu": "2"}), init("init-2", {"cpu": "5"}),
          side("restartable-init-3", {"cpu": "3"})]),
     {"cpu": "8"}),
    ("restartable-init, init and regular", {},
     pod([ctr("container-1", {"cpu": "100"})],
         [side("restartable-init-1", {"cpu": "10"}), init("init-1", {"cpu": "200"})]),
     {"cpu": "210"}),
]


@pytest.mark.parametrize("name,opts,p,want", POD_RESOURCE_REQUESTS,
                         ids=[c[0] for c in POD_RESOURCE_REQUESTS])
def test_pod_resource_requests(name: str, opts: dict[str, Any], p: Pod, want: RL) -> None:
    assert same(pod_requests(p, pod_level_resources=True, **opts), want)


# ---- TestPodResourceLimits (spec-only cases)

POD_RESOURCE_LIMITS: list[tuple[str, dict[str, Any], Pod, RL]] = [
    ("nil options, larger init container", {},
     pod([ctr("c", lim={"cpu": "1"})], [init("i", lim={"cpu": "4"})]), {"cpu": "4"}),
    ("nil options, larger containers", {},
     pod([ctr("c1", lim={"cpu": "2"}), ctr("c2", lim={"cpu": "3"})],
         [init("i", lim={"cpu": "2"})]),
     {"cpu": "5"}),
    ("pod overhead excluded", {"exclude_overhead": True},
     pod([ctr("c1", lim={"cpu": "2"}), ctr("c2", lim={"cpu": "3"})],
         [init("i", lim={"cpu": "2"})], overhead={"cpu": "1"}),
     {"cpu": "5"}),
    # overhead is only added to non-zero limits: no memory limit appears
    ("pod overhead included", {},
     pod([ctr("c1", lim={"cpu": "2"}), ctr("c2", lim={"cpu": "3"})],
         [init("i", lim={"cpu": "2"})], overhead={"cpu": "1", "memory": "1Gi"}),
     {"cpu": "6"}),
    ("no limited containers should result in no limits for the pod", {},
     pod([ctr("c")]), {}),
    ("one limited and one unlimited container should result in the limited container's limits",
     {}, pod([ctr("c1", lim={"cpu": "2", "memory": "2Gi"}), ctr("c2")]),
     {"cpu": "2", "memory": "2Gi"}),
    ("one limited and one unlimited init container", {},
     pod([ctr("c1", lim={"cpu": "1", "memory": "1Gi"})],
         [init("i1", lim={"cpu": "2", "memory": "2Gi"}), init("i2")]),
     {"cpu": "2", "memory": "2Gi"}),
    ("restartable init container", {},
     pod([ctr("container-1", lim={"cpu": "1"})], [side("restartable-init-1", lim={"cpu": "1"})]),
     {"cpu": "2"}),
    ("multiple restartable init containers", {},
     pod([ctr("container-1", lim={"cpu": "1"})],
         [init("init-1", lim={"cpu": "5"}), side("r1", lim={"cpu": "1"}),
          side("r2", lim={"cpu": "2"}), side("r3", lim={"cpu": "3"})]),
     {"cpu": "7"}),
    ("multiple restartable and regular init containers", {},
     pod([ctr("container-1", lim={"cpu": "1"})],
         [init("init-1", lim={"cpu": "5"}), side("r1", lim={"cpu": "1"}),
          side("r2", lim={"cpu": "2"}), init("init-2", lim={"cpu": "5"}),
          side("r3", lim={"cpu": "3"})]),
     {"cpu": "8"}),
    ("restartable-init, init and regular", {},
     pod([ctr("container-1", lim={"cpu": "100"})],
         [side("r1", lim={"cpu": "10"}), init("init-1", lim={"cpu": "200"})]),
     {"cpu": "210"}),
]


@pytest.mark.parametrize("name,opts,p,want", POD_RESOURCE_LIMITS,
                         ids=[c[0] for c in POD_RESOURCE_LIMITS])
def test_pod_resource_limits(name: str, opts: dict[str, Any], p: Pod, want: RL) -> None:
    assert same(pod_limits(p, pod_level_resources=True, **opts), want)


# ---- TestIsPodLevelResourcesSet / TestIsPodLevelLimitsSet

PLR_SET: list[tuple[str, tuple[RL, RL] | None, bool, bool, bool]] = [
    # name, (requests, limits), resources set, requests set, limits set
    ("nil resources struct", None, False, False, False),
    ("empty resources struct", ({}, {}), False, False, False),
    ("only unsupported resource requests set", ({"ephemeral-storage": "1Mi"}, {}),
     False, False, False),
    ("only unsupported resource limits set", ({}, {"ephemeral-storage": "1Mi"}),
     False, False, False),
    ("unsupported and supported resources requests set",
     ({"ephemeral-storage": "1Mi", "cpu": "1m"}, {}), True, True, False),
    ("unsupported and supported resources limits set",
     ({}, {"ephemeral-storage": "1Mi", "cpu": "1m"}), True, False, True),
    ("only resource requests set", ({"memory": "100Mi"}, {}), True, True, False),
]


@pytest.mark.parametrize("name,res,want_set,want_req,want_lim", PLR_SET,
                         ids=[c[0] for c in PLR_SET])
def test_is_pod_level_set(name: str, res: tuple[RL, RL] | None, want_set: bool, want_req: bool,
                          want_lim: bool) -> None:
    p = pod([ctr("c")], resources=res)
    assert is_pod_level_resources_set(p) is want_set
    assert is_pod_level_requests_set(p) is want_req
    assert is_pod_level_limits_set(p) is want_lim


# ---- TestPodLevelResourceRequests

HP2 = "hugepages-2Mi"
HP1G = "hugepages-1Gi"

POD_LEVEL_REQUESTS: list[tuple[str, bool, Pod, RL]] = [
    # name, PodLevelResources gate (i.e. !SkipPodLevelResources), pod, expected
    ("nil", True, pod(resources=({}, {})), {}),
    ("pod level memory resource with SkipPodLevelResources true", False,
     pod(resources=({"memory": "2Mi"}, {})), {}),
    ("pod level memory resource with SkipPodLevelResources false", True,
     pod(resources=({"memory": "2Mi"}, {})), {"memory": "2Mi"}),
    ("pod level memory and container level cpu resources", True,
     pod([ctr("c", {"cpu": "2m"})], resources=({"memory": "2Mi"}, {})),
     {"memory": "2Mi", "cpu": "2m"}),
    ("pod level unsupported resources set at both pod-level and container-level", True,
     pod([ctr("c", {"storage": "3Mi"})], resources=({"storage": "2Mi"}, {})),
     {"storage": "3Mi"}),
    ("pod level unsupported resources set at pod-level", True,
     pod([ctr("c", {"memory": "3Mi"})], resources=({"storage": "2Mi"}, {})),
     {"memory": "3Mi"}),
    ("only container level resources set", True,
     pod([ctr("c", {"memory": "3Mi", "cpu": "2m"})], resources=({}, {})),
     {"memory": "3Mi", "cpu": "2m"}),
    ("both container-level and pod-level resources set", True,
     pod([ctr("c", {"memory": "3Mi", "cpu": "2m"})],
         resources=({"memory": "6Mi", "cpu": "8m"}, {})),
     {"memory": "6Mi", "cpu": "8m"}),
    ("container-level resources and init container set", True,
     pod([ctr("c", {"memory": "3Mi", "cpu": "2m"})], [init("i", {"memory": "5Mi", "cpu": "4m"})],
         resources=({}, {})),
     {"memory": "5Mi", "cpu": "4m"}),
    ("container-level resources and init container set, skip pod level", False,
     pod([ctr("c", {"memory": "3Mi", "cpu": "2m"})], [init("i", {"memory": "5Mi", "cpu": "4m"})],
         resources=({}, {})),
     {"memory": "5Mi", "cpu": "4m"}),
    ("container-level resources and sidecar container set", True,
     pod([ctr("c", {"memory": "3Mi", "cpu": "2m"})], [side("s", {"memory": "5Mi", "cpu": "4m"})],
         resources=({}, {})),
     {"memory": "8Mi", "cpu": "6m"}),
    ("container-level resources, init and sidecar container set", True,
     pod([ctr("c", {"memory": "3Mi", "cpu": "2m"})],
         [side("s", {"memory": "5Mi", "cpu": "4m"}), init("i", {"memory": "6Mi", "cpu": "8m"})],
         resources=({}, {})),
     {"memory": "11Mi", "cpu": "12m"}),
    ("pod-level resources, container-level resources, init and sidecar container set", True,
     pod([ctr("c", {"memory": "3Mi", "cpu": "2m"})],
         [side("s", {"memory": "5Mi", "cpu": "4m"}), init("i", {"memory": "6Mi", "cpu": "8m"})],
         resources=({"memory": "15Mi", "cpu": "18m"}, {})),
     {"memory": "15Mi", "cpu": "18m"}),
    ("pod-level resources, hugepage request/limit single page size", True,
     pod(resources=({"memory": "10Mi", HP2: "2Mi"}, {HP2: "2Mi"})),
     {"memory": "10Mi", HP2: "2Mi"}),
    ("pod-level resources, hugepage request/limit multiple page sizes", True,
     pod(resources=({"cpu": "1", HP2: "2Mi", HP1G: "1Gi"}, {HP2: "2Mi", HP1G: "1Gi"})),
     {"cpu": "1", HP2: "2Mi", HP1G: "1Gi"}),
    ("pod-level resources, container-level resources, hugepage single page size", True,
     pod([ctr("c", {HP2: "6Mi"}, {HP2: "6Mi"})],
         resources=({"cpu": "1", HP2: "10Mi"}, {HP2: "10Mi"})),
     {"cpu": "1", HP2: "10Mi"}),
    ("pod-level resources, container-level resources, hugepage multiple page sizes", True,
     pod([ctr("c", {"cpu": "1", HP1G: "2Gi"}, {HP1G: "2Gi"})],
         resources=({"cpu": "1", HP2: "10Mi", HP1G: "2Gi"}, {HP2: "10Mi", HP1G: "2Gi"})),
     {"cpu": "1", HP2: "10Mi", HP1G: "2Gi"}),
    ("hugepage page sizes split between pod-level and container-level", True,
     pod([ctr("c", {"memory": "4Mi", HP1G: "1Gi"}, {HP1G: "1Gi"})],
         resources=({"cpu": "1", HP2: "10Mi"}, {HP2: "10Mi"})),
     {"cpu": "1", "memory": "4Mi", HP2: "10Mi", HP1G: "1Gi"}),
]


@pytest.mark.parametrize("name,gate,p,want", POD_LEVEL_REQUESTS,
                         ids=[c[0] for c in POD_LEVEL_REQUESTS])
def test_pod_level_resource_requests(name: str, gate: bool, p: Pod, want: RL) -> None:
    assert same(pod_requests(p, pod_level_resources=gate), want)


# ---- TestAggregateContainerRequestsAndLimits (spec-only cases)

AGGREGATE: list[tuple[str, Pod, RL, RL]] = [
    ("one container with limits", pod([ctr("a", lim={"cpu": "9"})]), {}, {"cpu": "9"}),
    ("two containers with limits",
     pod([ctr("a", lim={"cpu": "9"}), ctr("b", lim={"cpu": "9"})]), {}, {"cpu": "18"}),
    ("one container with requests", pod([ctr("a", {"cpu": "9"})]), {"cpu": "9"}, {}),
    ("two containers with requests",
     pod([ctr("a", {"cpu": "9"}), ctr("b", {"cpu": "9"})]), {"cpu": "18"}, {}),
    ("regular and init containers with requests",
     pod([ctr("a", {"cpu": "9"})], [init("i", {"cpu": "9"})]), {"cpu": "9"}, {}),
    ("regular, init and sidecar containers with requests",
     pod([ctr("a", {"cpu": "9"})], [side("s", {"cpu": "8"}), init("i", {"cpu": "6"})]),
     {"cpu": "17"}, {}),
    ("regular and init containers with limits",
     pod([ctr("a", lim={"cpu": "9"})], [init("i", lim={"cpu": "9"})]), {}, {"cpu": "9"}),
    ("regular, init and sidecar containers with limits",
     pod([ctr("a", lim={"cpu": "9"})], [side("s", lim={"cpu": "8"}), init("i", lim={"cpu": "6"})]),
     {}, {"cpu": "17"}),
]


@pytest.mark.parametrize("name,p,want_req,want_lim", AGGREGATE, ids=[c[0] for c in AGGREGATE])
def test_aggregate_container_requests_and_limits(name: str, p: Pod, want_req: RL,
                                                 want_lim: RL) -> None:
    assert same(aggregate_container_requests(p), want_req)
    assert same(aggregate_container_limits(p), want_lim)


# ---- TestIsSupportedPodLevelResource


@pytest.mark.parametrize("name,want", [
    ("cpu", True), ("memory", True), ("hugepages-2Mi", True), ("hugepages-1Gi", True),
    ("ephemeral-storage", False), ("storage", False), ("example.com/gpu", False),
])
def test_is_supported_pod_level_resource(name: str, want: bool) -> None:
    assert is_supported_pod_level_resource(name) is want


# ---- pod-level limits, overhead with pod-level values, non-missing requests


def test_pod_limits_use_pod_level_limits_when_only_requests_set() -> None:
    # IsPodLevelResourcesSet (not IsPodLevelLimitsSet) gates the override: with
    # only pod-level requests, the containers' limits still come through.
    p = pod([ctr("a", {"cpu": "1"}, {"cpu": "2"})], resources=({"cpu": "3"}, {}))
    assert same(pod_limits(p, pod_level_resources=True), {"cpu": "2"})
    p = pod([ctr("a", {"cpu": "1"}, {"cpu": "2"})], resources=({"cpu": "3"}, {"cpu": "4"}))
    assert same(pod_limits(p, pod_level_resources=True), {"cpu": "4"})
    assert same(pod_limits(p, pod_level_resources=False), {"cpu": "2"})


def test_pod_level_requests_plus_overhead() -> None:
    p = pod([ctr("a", {"cpu": "1"})], overhead={"cpu": "250m", "memory": "64Mi"},
            resources=({"cpu": "2", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}))
    assert same(pod_requests(p, pod_level_resources=True), {"cpu": "2250m", "memory": "1088Mi"})
    assert same(pod_limits(p, pod_level_resources=True), {"cpu": "2250m", "memory": "1088Mi"})
    assert same(pod_requests(p, pod_level_resources=True, exclude_overhead=True),
                {"cpu": "2", "memory": "1Gi"})


def test_non_missing_container_requests() -> None:
    # Only absent entries are replaced; an explicit zero stays zero.
    p = pod([ctr("a", {"cpu": "0"}), ctr("b", {"memory": "1Gi"})], [side("s")])
    non_missing = q({"cpu": "100m", "memory": "200Mi"})
    got = pod_requests(p, pod_level_resources=True, non_missing_container_requests=non_missing)
    assert same(got, {"cpu": "200m", "memory": "1424Mi"})
