"""Pods, feature gates and a topology-manager store for the CPU policy tests
(the counterparts of upstream's makePod / makeMultiContainerPod /
NewFakeManagerWithHint)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from podnuma.api.pod import Container, ContainerKind, Pod
from podnuma.api.quantity import parse_quantity
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.topologymanager.bitmask import BitMask
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.machine.cpuset import CPUSet

# v1.37 defaults of the gates the CPU manager reads
DEFAULT_GATES = {
    "CPUManagerPolicyAlphaOptions": False,
    "CPUManagerPolicyBetaOptions": True,
    "PodLevelResources": True,
    "PodLevelResourceManagers": False,
}


class Gates:
    def __init__(self, **overrides: bool) -> None:
        self.values = {**DEFAULT_GATES, **overrides}

    def enabled(self, name: str) -> bool:
        return self.values[name]


ALPHA = Gates(CPUManagerPolicyAlphaOptions=True)
DEFAULTS = Gates()


@dataclass
class FakeAffinity:
    """topologymanager.NewFakeManager / NewFakeManagerWithHint."""

    hint: TopologyHint | None = None

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hint if self.hint is not None else EMPTY_HINT


def numa(*bits: int) -> BitMask:
    return BitMask(bits)


def hint(bits: Iterable[int], preferred: bool) -> TopologyHint:
    return TopologyHint(BitMask(bits), preferred)


def cs(*cpus: int) -> CPUSet:
    return CPUSet(cpus)


def container(
    name: str, kind: ContainerKind, request: str | None, limit: str | None, index: int = 0
) -> Container:
    req = {"memory": parse_quantity("1G")}
    lim = {"memory": parse_quantity("1G")}
    if request is not None:
        req["cpu"] = parse_quantity(request)
    if limit is not None:
        lim["cpu"] = parse_quantity(limit)
    return Container(
        name=name,
        kind=kind,
        requests=req,
        limits=lim,
        restart_policy="Always" if kind == "sidecar" else None,
        index=index,
    )


def make_pod(pod_uid: str, container_name: str, request: str, limit: str) -> Pod:
    """makePod: one app container with the given CPU and 1G of memory."""
    return Pod(uid=pod_uid, name=pod_uid, containers=(container(container_name, "app", request, limit),))


# (request, limit) or (request, limit, sidecar?)
Spec = tuple[str, str] | tuple[str, str, bool]


def make_multi_container_pod(
    init: Iterable[Spec], app: Iterable[Spec], uid: str = "podUID"
) -> Pod:
    """makeMultiContainerPod(WithOptions): initContainer-i / appContainer-i."""
    inits = tuple(
        container(
            f"initContainer-{i}", "sidecar" if len(s) == 3 and s[2] else "init", s[0], s[1], i
        )
        for i, s in enumerate(init)
    )
    apps = tuple(container(f"appContainer-{i}", "app", s[0], s[1], i) for i, s in enumerate(app))
    return Pod(uid=uid, name="pod", init_containers=inits, containers=apps)


def make_state(
    default: CPUSet, assignments: Mapping[str, Mapping[str, CPUSet]] | None = None
) -> CPUManagerState:
    return CPUManagerState(
        default, {p: dict(c) for p, c in (assignments or {}).items()}
    )
