"""Pod QoS class.

Mirrors ``pkg/apis/core/v1/helper/qos/qos.go`` (v1.37): ``GetPodQOS`` (a
pod's ``status.qosClass`` when set: :func:`with_status_qos`), ``ComputePodQOS``
with its pod-level (KEP-2837) and container-level collectors, and
``IsContainerEquivalentQOSGuaranteed`` (``qos_container.go``), the
eligibility test of the pod-level resource managers.

Only cpu and memory count; zero quantities count as absent; init containers
(sidecars included) count like app containers; ephemeral containers cannot
carry resources and are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal

from podnuma.api.pod import Container, Pod
from podnuma.api.quantity import Quantity
from podnuma.api.resources import is_pod_level_resources_set

__all__ = [
    "QOSClass",
    "GUARANTEED",
    "BURSTABLE",
    "BEST_EFFORT",
    "compute_pod_qos",
    "is_container_equivalent_qos_guaranteed",
    "served_qos_class",
    "with_status_qos",
]

QOSClass = Literal["Guaranteed", "Burstable", "BestEffort"]
GUARANTEED: Final[QOSClass] = "Guaranteed"
BURSTABLE: QOSClass = "Burstable"
BEST_EFFORT: QOSClass = "BestEffort"

_QOS_RESOURCES: Final = ("cpu", "memory")
# the memo keys, one per gate combination (strings: their hash is cached,
# and a dict whose keys are all strings is looked up on its fastest path)
_KEY_TT: Final = "qos:plr:fix"
_KEY_TF: Final = "qos:plr"
_KEY_FT: Final = "qos:fix"
_KEY_FF: Final = "qos"
#: the QoS class the API server wrote into the pod's status, when the pod
#: went through an API server of other gates than the kubelet's
_KEY_STATUS: Final = "qos:status"


def _add_positive(into: dict[str, Quantity], amounts: Mapping[str, Quantity]) -> int:
    """Add the positive cpu and memory quantities of ``amounts`` to ``into``;
    return how many of the two were there and positive."""
    found = 0
    if amounts:
        # (``in`` and ``[]`` go straight to the mapping's slots: cheaper than
        # a method call, compiled or not)
        for name in _QOS_RESOURCES:
            if name in amounts:
                q = amounts[name]
                if q.nanos > 0:
                    found += 1
                    prev = into.get(name)
                    into[name] = q if prev is None else prev + q
    return found


def _collect(
    resource_sets: Iterable[tuple[Mapping[str, Quantity], Mapping[str, Quantity]]],
) -> tuple[dict[str, Quantity], dict[str, Quantity], bool]:
    """Sum the positive cpu/memory requests and limits of each (requests, limits)
    pair; guaranteed stays possible only while every pair has positive cpu and
    memory limits (``collectPodLevelResources`` / ``collectContainerLevelResources``)."""
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    for reqs, lims in resource_sets:
        _add_positive(requests, reqs)
        if _add_positive(limits, lims) != len(_QOS_RESOURCES):
            guaranteed = False
    return requests, limits, guaranteed


def compute_pod_qos(
    pod: Pod, *, pod_level_resources: bool, fix_kubelet_qos_class: bool = True
) -> QOSClass:
    """``ComputePodQOS``.

    ``pod_level_resources`` is the ``PodLevelResources`` gate;
    ``fix_kubelet_qos_class`` the ``PodLevelResourcesFixKubeletQOSClass`` gate
    (beta, on by default): with it, an empty ``spec.resources`` (``{}``,
    ``{requests: {}}``) no longer takes the pod-level path; without it any
    present ``spec.resources`` does (so ``resources: {}`` made a pod
    BestEffort whatever its containers asked for, kubernetes#135082).
    """
    memo = pod.memo()
    status: QOSClass | None = memo.get(_KEY_STATUS)
    if status is not None:
        # GetPodQOS: the kubelet takes status.qosClass when it is set
        return status
    if pod_level_resources:
        key = _KEY_TT if fix_kubelet_qos_class else _KEY_TF
    else:
        key = _KEY_FT if fix_kubelet_qos_class else _KEY_FF
    found: QOSClass | None = memo.get(key)
    if found is None:
        found = memo[key] = _compute_pod_qos(pod, pod_level_resources, fix_kubelet_qos_class)
    return found


def _compute_pod_qos(pod: Pod, pod_level_resources: bool, fix_kubelet_qos_class: bool) -> QOSClass:
    use_pod_level = pod_level_resources and pod.resources is not None
    if use_pod_level and fix_kubelet_qos_class:
        use_pod_level = is_pod_level_resources_set(pod)
    if use_pod_level:
        assert pod.resources is not None
        sets = [(pod.resources.requests, pod.resources.limits)]
    else:
        sets = [(c.requests, c.limits) for c in pod.containers]
        for c in pod.init_containers:
            sets.append((c.requests, c.limits))
    requests, limits, guaranteed = _collect(sets)

    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed:
        for name, req in requests.items():
            lim = limits.get(name)
            if lim is None or lim != req:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE


def is_container_equivalent_qos_guaranteed(container: Container) -> bool:
    """cpu and memory requests are non-zero and equal to the limits, as written
    on the container (pod-level values play no part)."""
    memo = container.memo()
    found: bool | None = memo.get("equivalent-guaranteed")
    if found is None:
        found = memo["equivalent-guaranteed"] = _equivalent_guaranteed(container)
    return found


def _equivalent_guaranteed(container: Container) -> bool:
    for name in _QOS_RESOURCES:
        req = container.requests.get(name)
        lim = container.limits.get(name)
        if req is None or req.is_zero():
            return False
        if lim is None or lim != req:
            return False
    return True


def set_status_qos(pod: Pod, *, pod_level_resources: bool, fix_kubelet_qos_class: bool) -> None:
    """Record the QoS class an API server with these gates writes into the
    pod's ``status.qosClass`` (``PrepareForCreate``), so that every later
    :func:`compute_pod_qos` answers it, as the kubelet's ``GetPodQOS`` does
    for a pod with a status: used when the API server's gates differ from
    the kubelet's."""
    qos = _compute_pod_qos(pod, pod_level_resources, fix_kubelet_qos_class)
    pod.memo()[_KEY_STATUS] = qos


def served_qos_class(value: object) -> QOSClass | None:
    """The QoS class the kubelet reads of a pod whose ``status.qosClass``
    holds ``value`` (``GetPodQOS``: the status whenever it is not empty);
    ``None`` for no class there (absent, empty, not a string: the class is
    then computed from the spec).

    A string other than the three classes (``Platinum``, ``guaranteed``: an
    API server never writes one, a hand-edited dump may) is returned by
    ``GetPodQOS`` as it is, and the kubelet's managers then take the pod as
    not Guaranteed (the static CPU and memory managers give it nothing of
    its own, no hints). It stands here as :data:`BEST_EFFORT`, the class
    whose pod cgroup settings it gets (``ResourceConfigForPod``: the least
    CPU shares, no limits; its pod cgroup is put under no QoS cgroup,
    ``GetPodContainerName``, which is not modelled)."""
    if value == GUARANTEED:
        return GUARANTEED
    if value == BURSTABLE:
        return BURSTABLE
    if value == BEST_EFFORT:
        return BEST_EFFORT
    if type(value) is str and value:
        return BEST_EFFORT
    return None


def with_status_qos(pod: Pod, qos: QOSClass) -> Pod:
    """A copy of ``pod`` carrying ``qos`` as its ``status.qosClass``: the
    kubelet's ``GetPodQOS`` answers a set status before computing anything,
    so every :func:`compute_pod_qos` of the copy (whatever the gates) gives
    ``qos``. The copy has a memo of its own: the spec's derived values are
    computed again for it, never taken from a pod of another class."""
    copy = pod.replace()
    copy.memo()[_KEY_STATUS] = qos
    return copy
