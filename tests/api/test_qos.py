"""Pod QoS class.

Tables ported from pkg/apis/core/v1/helper/qos/qos_test.go (TestComputePodQOS,
TestCollectPodLevelResources, TestCollectContainerLevelResources) and
qos_container_test.go (IsContainerEquivalentQOSGuaranteed), plus the
PodLevelResourcesFixKubeletQOSClass cases (kubernetes#135082 / #137150).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from podnuma.api.pod import Container, Pod, PodLevelResources
from podnuma.api.qos import compute_pod_qos, is_container_equivalent_qos_guaranteed
from podnuma.api.quantity import Quantity, parse_quantity

RL = Mapping[str, str]


def rl(cpu: str = "", memory: str = "", **extra: str) -> dict[str, str]:
    out = {k.replace("_", "-"): v for k, v in extra.items()}
    if cpu:
        out["cpu"] = cpu
    if memory:
        out["memory"] = memory
    return out


def q(d: RL) -> dict[str, Quantity]:
    return {k: parse_quantity(v) for k, v in d.items()}


def c(name: str, req: RL, lim: RL, kind: str = "app") -> Container:
    return Container(name=name, kind=kind, requests=q(req), limits=q(lim),  # type: ignore[arg-type]
                     restart_policy="Always" if kind == "sidecar" else None)


def pod(containers: Sequence[Container], init: Sequence[Container] = (),
        resources: tuple[RL, RL] | None = None) -> Pod:
    return Pod(uid="u", name="p", containers=tuple(containers), init_containers=tuple(init),
               resources=None if resources is None else PodLevelResources(q(resources[0]),
                                                                     q(resources[1])))


G, B, BE = "Guaranteed", "Burstable", "BestEffort"

COMPUTE_POD_QOS: list[tuple[str, Pod, str, bool]] = [
    # name, pod, expected, PodLevelResources gate
    ("guaranteed", pod([c("guaranteed", rl("100m", "100Mi"), rl("100m", "100Mi"))]), G, False),
    ("guaranteed-guaranteed",
     pod([c("g1", rl("100m", "100Mi"), rl("100m", "100Mi")),
          c("g2", rl("100m", "100Mi"), rl("100m", "100Mi"))]), G, False),
    ("best-effort-best-effort", pod([c("b1", {}, {}), c("b2", {}, {})]), BE, False),
    ("best-effort", pod([c("b", {}, {})]), BE, False),
    ("best-effort-burstable",
     pod([c("be", {}, {}), c("bu", rl("1"), rl("2"))]), B, False),
    ("best-effort-guaranteed",
     pod([c("be", {}, {}), c("g", rl("10m", "100Mi"), rl("10m", "100Mi"))]), B, False),
    ("burstable-cpu-guaranteed-memory", pod([c("b", rl(memory="100Mi"), rl(memory="100Mi"))]),
     B, False),
    ("burstable-no-limits", pod([c("b", rl("100m", "100Mi"), {})]), B, False),
    ("burstable-guaranteed",
     pod([c("b", rl("1", "100Mi"), rl("2", "100Mi")),
          c("g", rl("100m", "100Mi"), rl("100m", "100Mi"))]), B, False),
    ("burstable-unbounded-but-requests-match-limits",
     pod([c("b", rl("100m", "100Mi"), rl("200m", "200Mi")),
          c("u", rl("100m", "100Mi"), {})]), B, False),
    ("burstable-1", pod([c("b", rl("10m", "100Mi"), rl("100m", "200Mi"))]), B, False),
    ("burstable-2", pod([c("b", rl("0", "0"), rl("100m", "200Mi"))]), B, False),
    ("best-effort-hugepages",
     pod([c("b", rl("0", "0", hugepages_2Mi="1Gi"), rl("0", "0", hugepages_2Mi="1Gi"))]),
     BE, False),
    ("init-container",
     pod([c("be", {}, {})], init=[c("b", rl("10m", "100Mi"), rl("100m", "200Mi"), "init")]),
     B, False),
    ("guaranteed-with-pod-level-resources",
     pod([c("be", {}, {})], resources=(rl("10m", "100Mi"), rl("10m", "100Mi"))), G, True),
    ("guaranteed-with-pod-and-container-level-resources",
     pod([c("b", rl("3m", "10Mi"), rl("5m", "20Mi"))],
         resources=(rl("10m", "100Mi"), rl("10m", "100Mi"))), G, True),
    ("burstable-with-pod-level-resources",
     pod([c("be", {}, {})], resources=(rl("10m", "10Mi"), rl("20m", "50Mi"))), B, True),
    ("burstable-with-pod-and-container-level-resources",
     pod([c("b", rl("5m", "10Mi"), rl("5m", "10Mi"))],
         resources=(rl("10m", "10Mi"), rl("20m", "50Mi"))), B, True),
    ("burstable-with-pod-and-container-level-requests",
     pod([c("b", rl("5m", "10Mi"), {})], resources=(rl("10m", "10Mi"), {})), B, True),
    ("burstable-with-pod-and-container-level-resources-2",
     pod([c("b", rl("5m", "10Mi"), {}), c("g", rl("5m", "10Mi"), rl("5m", "10Mi"))],
         resources=(rl("10m", "10Mi"), rl("5m"))), B, True),
    # The pod-level values are ignored without the gate.
    ("pod-level-guaranteed-gate-off",
     pod([c("be", {}, {})], resources=(rl("10m", "100Mi"), rl("10m", "100Mi"))), BE, False),
    ("pod-level-besteffort-containers-guaranteed-gate-off",
     pod([c("g", rl("1", "1Gi"), rl("1", "1Gi"))], resources=(rl("2", "2Gi"), {})), G, False),
    # Sidecars count like any other container.
    ("guaranteed-with-sidecar",
     pod([c("g", rl("1", "1Gi"), rl("1", "1Gi"))],
         init=[c("s", rl("1", "1Gi"), rl("1", "1Gi"), "sidecar")]), G, False),
    ("burstable-sidecar",
     pod([c("g", rl("1", "1Gi"), rl("1", "1Gi"))],
         init=[c("s", rl("500m", "1Gi"), rl("1", "1Gi"), "sidecar")]), B, False),
    # Pod-level hugepages alone do not make a pod anything but BestEffort.
    ("pod-level-hugepages-only",
     pod([c("be", {}, {})], resources=({"hugepages-2Mi": "2Mi"}, {"hugepages-2Mi": "2Mi"})),
     BE, True),
]


@pytest.mark.parametrize("name,p,want,gate", COMPUTE_POD_QOS, ids=[t[0] for t in COMPUTE_POD_QOS])
def test_compute_pod_qos(name: str, p: Pod, want: str, gate: bool) -> None:
    assert compute_pod_qos(p, pod_level_resources=gate) == want


# PodLevelResourcesFixKubeletQOSClass: empty pod-level resources
EMPTY_PLR: list[tuple[str, tuple[RL, RL], str, str]] = [
    # name, pod-level (requests, limits), with fix, without fix
    ("empty-struct", ({}, {}), G, BE),
    ("unsupported-only", ({"ephemeral-storage": "1Gi"}, {}), G, BE),
]


@pytest.mark.parametrize("name,res,with_fix,without_fix", EMPTY_PLR,
                         ids=[t[0] for t in EMPTY_PLR])
def test_empty_pod_level_resources(name: str, res: tuple[RL, RL], with_fix: str,
                                   without_fix: str) -> None:
    p = pod([c("pause", rl("100m", "50Mi"), rl("100m", "50Mi"))], resources=res)
    assert compute_pod_qos(p, pod_level_resources=True, fix_kubelet_qos_class=True) == with_fix
    assert compute_pod_qos(p, pod_level_resources=True, fix_kubelet_qos_class=False) == without_fix
    # With PodLevelResources off the pod-level stanza never matters.
    assert compute_pod_qos(p, pod_level_resources=False, fix_kubelet_qos_class=False) == G


# TestCollectPodLevelResources, through ComputePodQOS: requests 100m/128Mi.
COLLECT_POD_LEVEL: list[tuple[str, RL, str]] = [
    ("cpu+mem limits present", rl("750m", "512Mi"), B),
    ("cpu+mem limits equal to requests", rl("100m", "128Mi"), G),
    ("only cpu limit", rl("750m"), B),
    ("only memory limit", rl(memory="512Mi"), B),
    ("no limits", {}, B),
]


@pytest.mark.parametrize("name,lims,want", COLLECT_POD_LEVEL, ids=[t[0] for t in COLLECT_POD_LEVEL])
def test_collect_pod_level_resources(name: str, lims: RL, want: str) -> None:
    p = pod([c("c", {}, {})], resources=(rl("100m", "128Mi"), lims))
    assert compute_pod_qos(p, pod_level_resources=True) == want


# TestCollectContainerLevelResources, through ComputePodQOS.
COLLECT_CONTAINER_LEVEL: list[tuple[str, Pod, str]] = [
    ("single container: full CPU+Mem limits, requests below",
     pod([c("c1", rl("100m", "200Mi"), rl("200m", "400Mi"))]), B),
    ("two containers and init container with CPU+Mem limits",
     pod([c("c1", rl("100m", "100Mi"), rl("200m", "200Mi")),
          c("c2", rl("300m", "400Mi"), rl("800m", "1000Mi"))],
         init=[c("init", rl("50m", "50Mi"), rl("100m", "100Mi"), "init")]), B),
    ("only CPU limit, zero requests ignored", pod([c("c1", rl("0", "0"), rl("100m"))]), B),
    ("init container missing CPU limit",
     pod([c("c1", rl("100m", "100Mi"), rl("100m", "100Mi"))],
         init=[c("init1", rl("50m", "50Mi"), rl(memory="50Mi"), "init")]), B),
    ("all equal including init",
     pod([c("c1", rl("100m", "100Mi"), rl("100m", "100Mi"))],
         init=[c("init1", rl("50m", "50Mi"), rl("50m", "50Mi"), "init")]), G),
    ("zero limits count as absent", pod([c("c1", rl("0", "0"), rl("0", "0"))]), BE),
]


@pytest.mark.parametrize("name,p,want", COLLECT_CONTAINER_LEVEL,
                         ids=[t[0] for t in COLLECT_CONTAINER_LEVEL])
def test_collect_container_level_resources(name: str, p: Pod, want: str) -> None:
    assert compute_pod_qos(p, pod_level_resources=True) == want


EQUIVALENT_GUARANTEED: list[tuple[str, RL, RL, bool]] = [
    ("requests equal limits", rl("2", "1Gi"), rl("2", "1Gi"), True),
    ("fractional cpu still equivalent", rl("1500m", "1Gi"), rl("1500m", "1Gi"), True),
    ("different spelling, same value", rl("1", "1024Mi"), rl("1000m", "1Gi"), True),
    ("cpu request below limit", rl("1", "1Gi"), rl("2", "1Gi"), False),
    ("memory request below limit", rl("2", "512Mi"), rl("2", "1Gi"), False),
    ("no memory", rl("2"), rl("2"), False),
    ("no cpu", rl(memory="1Gi"), rl(memory="1Gi"), False),
    ("zero cpu", rl("0", "1Gi"), rl("0", "1Gi"), False),
    ("no limits", rl("2", "1Gi"), {}, False),
    ("nothing", {}, {}, False),
    ("extra resources do not matter", rl("2", "1Gi", hugepages_2Mi="2Mi"),
     rl("2", "1Gi", hugepages_2Mi="2Mi"), True),
]


@pytest.mark.parametrize("name,req,lim,want", EQUIVALENT_GUARANTEED,
                         ids=[t[0] for t in EQUIVALENT_GUARANTEED])
def test_is_container_equivalent_qos_guaranteed(name: str, req: RL, lim: RL, want: bool) -> None:
    assert is_container_equivalent_qos_guaranteed(c("c", req, lim)) is want
