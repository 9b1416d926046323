"""The ``gates`` what-if of ``podnuma fleet analyze``: which running pods
behave otherwise once the pod-level gates are on.

``--what-if gates`` replays each node with its own configuration and the
feature gates PodLevelResources and PodLevelResourceManagers on, the pods
unchanged. Only pods that already set ``spec.resources`` can change: with
PodLevelResourceManagers off the kubelet's managers ignore the pod budget
(the containers run on the node's shared pool, and devices are allocated
at admission), with it on the pod is aligned as one unit, its Guaranteed
containers get exclusive CPUs and the others the pod's shared pool, and
device allocation waits for the container to start. This module compares a
pod's admission in the two runs and says what changed, container by
container.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from podnuma.cm.results import ContainerResult, StepResult

__all__ = ["POOLS", "gate_changes"]

#: how reports name where a container's CPUs come from (its isolation)
POOLS = {
    "container": "exclusive CPUs",
    "pod": "the pod's shared pool",
    "host": "the node's shared pool",
}


def _pool(c: ContainerResult) -> str:
    return POOLS.get(c.isolation, c.isolation)


def _cpus(c: ContainerResult) -> str:
    n = c.cpus.size()
    return f"{n} CPU{'s' if n != 1 else ''}"


def _container_changes(before: StepResult, after: StepResult) -> list[str]:
    out: list[str] = []
    old = {c.name: c for c in before.containers}
    for c in after.containers:
        b = old.get(c.name)
        if b is None:
            continue
        if b.isolation != c.isolation:
            out.append(
                f"container {c.name}: {_pool(b)} -> {_pool(c)}"
                + (f" ({_cpus(c)})" if c.isolation == "container" else "")
            )
        elif c.isolation == "container" and b.cpus.size() != c.cpus.size():
            out.append(f"container {c.name}: exclusive CPUs {b.cpus.size()} -> {c.cpus.size()}")
        had = {r: ids for r, ids in b.devices.items() if ids}
        has = {r: ids for r, ids in c.devices.items() if ids}
        if had and not has:
            out.append(
                f"container {c.name}: devices {', '.join(sorted(had))} no longer allocated at "
                "admission (deferred to container start)"
            )
        elif had != has:
            out.append(f"container {c.name}: devices {dict(sorted(had.items()))} -> {dict(sorted(has.items()))}")
    return out


def gate_changes(before: Sequence[StepResult], after: Sequence[StepResult]) -> list[dict[str, Any]]:
    """The pods whose admission differs between the node's run as it is
    (``before``) and with the gates on (``after``): for each, the pod, what
    it was, what it becomes, and the changes in words (``changes``)."""
    old = {s.pod_uid: s for s in before if s.op == "addPod"}
    out: list[dict[str, Any]] = []
    for s in after:
        if s.op != "addPod":
            continue
        b = old.get(s.pod_uid)
        if b is None:
            continue
        changes: list[str] = []
        if bool(b.admitted) != bool(s.admitted):
            changes.append(
                "admitted -> rejected" + (f" ({s.reason}: {s.message})" if s.reason else "")
                if b.admitted else f"rejected ({b.reason}) -> admitted"
            )
        elif s.admitted:
            if b.qos_class != s.qos_class:
                changes.append(f"QoS {b.qos_class} -> {s.qos_class}")
            changes.extend(_container_changes(b, s))
            before_pod = b.pod_allocation.cpus.size() if b.pod_allocation is not None else 0
            after_pod = s.pod_allocation.cpus.size() if s.pod_allocation is not None else 0
            if before_pod != after_pod:
                changes.append(f"CPUs reserved for the pod (its budget) {before_pod} -> {after_pod}")
        if changes:
            out.append({
                "pod": s.pod,
                "admittedBefore": bool(b.admitted),
                "admittedAfter": bool(s.admitted),
                "changes": changes,
            })
    return out
