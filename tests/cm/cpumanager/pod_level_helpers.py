"""Pods with pod-level resources for the CPU manager tests (the counterparts of
upstream's makePodWithContainersAndPodLevelResources and
makeMultiContainerPodWithOptionsAndPodLevelResources) and the topologies of
upstream's pod-level restore tests."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from podnuma.api.pod import Container, Pod, PodLevelResources
from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.machine.topology import CPUInfo, CPUTopology
from tests.cm.cpumanager.cpu_policy_helpers import Gates

# PodLevelResources + PodLevelResourceManagers on / managers off / both off
GATES_ON = Gates(PodLevelResources=True, PodLevelResourceManagers=True)
GATES_PLRM_OFF = Gates(PodLevelResources=True, PodLevelResourceManagers=False)
GATES_OFF = Gates(PodLevelResources=False, PodLevelResourceManagers=False)


@dataclass(frozen=True)
class C:
    """A container: cpu request/limit (``None`` = not set), sidecar or not.
    ``lim`` defaults to ``req``."""

    name: str
    req: str | None = None
    lim: str | None = "same"
    sidecar: bool = False


def shared(name: str, sidecar: bool = False) -> C:
    """A container without cpu resources."""
    return C(name, None, None, sidecar)


def _container(spec: C, kind_if_init: bool, index: int, memory: str) -> Container:
    lim = spec.req if spec.lim == "same" else spec.lim
    req: dict[str, Quantity] = {"memory": parse_quantity(memory)}
    limits: dict[str, Quantity] = {"memory": parse_quantity(memory)}
    if spec.req is not None:
        req["cpu"] = parse_quantity(spec.req)
    if lim is not None:
        limits["cpu"] = parse_quantity(lim)
    kind = ("sidecar" if spec.sidecar else "init") if kind_if_init else "app"
    return Container(
        name=spec.name,
        kind=kind,
        requests=req,
        limits=limits,
        restart_policy="Always" if kind == "sidecar" else None,
        index=index,
    )


def pod_level_pod(
    name: str,
    pod_req: str | None,
    pod_lim: str | None,
    inits: Iterable[C] = (),
    apps: Iterable[C] = (),
) -> Pod:
    """makePodWithContainersAndPodLevelResources: UID = name; every container
    has memory 100Mi/100Mi plus its cpu; the pod has memory 300Mi/300Mi plus
    the given cpu (no pod-level resources when both are ``None``)."""
    resources = None
    if pod_req is not None or pod_lim is not None:
        preq: dict[str, Quantity] = {"memory": parse_quantity("300Mi")}
        plim: dict[str, Quantity] = {"memory": parse_quantity("300Mi")}
        if pod_req is not None:
            preq["cpu"] = parse_quantity(pod_req)
        if pod_lim is not None:
            plim["cpu"] = parse_quantity(pod_lim)
        resources = PodLevelResources(requests=preq, limits=plim)
    return Pod(
        uid=name,
        name=name,
        init_containers=tuple(_container(c, True, i, "100Mi") for i, c in enumerate(inits)),
        containers=tuple(_container(c, False, i, "100Mi") for i, c in enumerate(apps)),
        resources=resources,
    )


def classic_pod(name: str, apps: Iterable[C], inits: Iterable[C] = ()) -> Pod:
    """A pod without pod-level resources."""
    return pod_level_pod(name, None, None, inits, apps)


def single_numa_no_smt(num_cpus: int, *, numa_nodes: int = 0) -> CPUTopology:
    """One socket, core i = CPU i, NUMA node 0 (upstream's
    topoRestoreUniformSingleSocket for 8 CPUs: counts it leaves out are 0)."""
    return CPUTopology(
        {c: CPUInfo(numa_node=0, socket=0, core=c, uncore_cache=0) for c in range(num_cpus)},
        num_cpus=num_cpus,
        num_sockets=1,
        num_cores=num_cpus,
        num_numa_nodes=numa_nodes,
    )


# topoRestoreUniformSingleSocket
TOPO_RESTORE_UNIFORM = single_numa_no_smt(8)

# topoRestoreDualNUMA: CPUs 0-3 on NUMA node 0, 4-7 on NUMA node 1, no SMT
TOPO_RESTORE_DUAL_NUMA = CPUTopology(
    {c: CPUInfo(numa_node=c // 4, socket=0, core=c, uncore_cache=0) for c in range(8)},
    num_cpus=8,
    num_sockets=1,
    num_cores=8,
    num_numa_nodes=2,
)
