"""Pod admission results and the node-allocatable predicate.

Mirrors three upstream places:

* ``pkg/kubelet/cm/admission/errors.go`` -- ``GetPodAdmitResult``: an error
  that carries its own type becomes (reason = type, message = error text);
  any other error becomes ``UnexpectedAdmissionError`` with the message
  "Allocate failed due to <err>, which is unexpected".
* ``pkg/kubelet/lifecycle/predicate.go`` -- the predicate admit handler:
  ``noderesources.Fits`` against node allocatable, first failure wins,
  reason ``OutOf<resource>`` and message "Node didn't have enough
  resource: ...".
* ``pkg/kubelet/kubelet.go`` -- ``rejectPod``: the pod status message is the
  handler's message prefixed with "Pod was rejected: ".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from podnuma.api.quantity import Quantity, wrap_int64
from podnuma.api.resources import is_native_resource

__all__ = [
    "AdmissionError",
    "AdmitResult",
    "ADMITTED",
    "REASON_UNEXPECTED",
    "REASON_TOPOLOGY_AFFINITY",
    "TopologyAffinityError",
    "PodLevelTopologyAffinityError",
    "EmptyPodSharedPoolError",
    "KUBELET_PANICS",
    "NIL_DEREFERENCE",
    "KubeletPanic",
    "get_pod_admit_result",
    "pod_status_message",
    "fits_node_allocatable",
    "fits_node_allocatable_amounts",
    "request_amounts",
    "allocatable_amounts",
    "DEFAULT_MAX_PODS",
]

REASON_UNEXPECTED = "UnexpectedAdmissionError"
REASON_TOPOLOGY_AFFINITY = "TopologyAffinityError"
#: the pod features handler's reason (lifecycle ``PodLevelResourcesNotAdmittedReason``)
REASON_POD_LEVEL_NOT_SUPPORTED: Final = "PodLevelResourcesNotSupported"
DEFAULT_MAX_PODS = 110  # KubeletConfiguration default for maxPods


class AdmissionError(Exception):
    """An error with a kubelet admission type (``admission.Error``)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        # an instance attribute, never a class-level default a subclass
        # overrides (the mypyc-compiled build keeps no such override)
        self.reason = REASON_UNEXPECTED if reason is None else reason

    def __str__(self) -> str:
        return self.message


class TopologyAffinityError(AdmissionError):
    """``topologymanager.TopologyAffinityError``."""

    def __init__(self, message: str = "Resources cannot be allocated with Topology locality") -> None:
        super().__init__(message, REASON_TOPOLOGY_AFFINITY)


class PodLevelTopologyAffinityError(TopologyAffinityError):
    """The pod-level variant: the kubelet prefixes the scope to the text
    ("Pod Scope <text>")."""

    def __init__(self, text: str) -> None:
        super().__init__(f"Pod Scope {text}")


class EmptyPodSharedPoolError(AdmissionError):
    """``admission.NewEmptyPodSharedPoolError``: a pod-level pod whose
    exclusive containers would leave its shared containers no resources."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "EmptyPodSharedPoolError")


#: The words a rejection carries where kubelet v1.37's own code panics.
KUBELET_PANICS = "kubelet v1.37 panics here"

#: What Go prints for a method called on a nil pointer or nil interface.
NIL_DEREFERENCE = "runtime error: invalid memory address or nil pointer dereference"


class KubeletPanic(AdmissionError):
    """A place where kubelet v1.37's own code panics (a Go runtime error:
    the kubelet process dies while admitting the pod, and again at every
    restart while the pod is bound to the node). podnuma cannot die with
    it, so it rejects the pod with ``UnexpectedAdmissionError`` and a
    message naming the upstream function, what went wrong, the panic's
    value as Go prints it (:data:`NIL_DEREFERENCE` by default) and
    :data:`KUBELET_PANICS`; nothing after that step is what a kubelet would
    do. ``where`` is the upstream function (``calculateHints``)."""

    def __init__(self, where: str, detail: str, panic_value: str = NIL_DEREFERENCE) -> None:
        super().__init__(f"{where}: {detail}: {panic_value} ({KUBELET_PANICS})")
        self.where = where


class AdmitResult:
    admit: bool
    reason: str | None
    message: str | None
    __slots__ = ('admit', 'reason', 'message')

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(admit={self.admit!r}, reason={self.reason!r}, message={self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AdmitResult) or other.__class__ is not self.__class__:
            return False
        return (self.admit, self.reason, self.message) == (other.admit, other.reason, other.message)

    def __hash__(self) -> int:
        return hash((self.admit, self.reason, self.message))

    def __init__(
        self,
        admit: bool,
        reason: str | None = None,
        message: str | None = None,
    ) -> None:
        # written out (not generated by dataclass): a compiled build
        # runs it natively; plain stores (the record defines no __setattr__),
        # the cheapest in pure Python too
        self.admit = admit
        self.reason = reason
        self.message = message


ADMITTED: Final = AdmitResult(True)

_CPU_MEMORY: Final[frozenset[str]] = frozenset({"cpu", "memory"})


def get_pod_admit_result(err: BaseException | None) -> AdmitResult:
    """``admission.GetPodAdmitResult``."""
    if err is None:
        return ADMITTED
    reason = getattr(err, "reason", None)
    if isinstance(reason, str) and reason:
        message = getattr(err, "message", None)
        return AdmitResult(False, reason, message if isinstance(message, str) else str(err))
    return AdmitResult(
        False, REASON_UNEXPECTED, f"Allocate failed due to {err}, which is unexpected"
    )


def pod_status_message(message: str) -> str:
    """The pod-status message ``rejectPod`` writes."""
    return "Pod was rejected: " + message


def _int_amount(resource: str, q: Quantity) -> int:
    # The scheduler framework keeps CPU in millicores and everything else as
    # integer values (Value() rounds up).
    return q.milli_value() if resource == "cpu" else q.value()


def fits_node_allocatable(
    pod_requests: Mapping[str, Quantity],
    other_pods_requests: Iterable[Mapping[str, Quantity]],
    allocatable: Mapping[str, Quantity],
    *,
    max_pods: int = DEFAULT_MAX_PODS,
) -> AdmitResult:
    """The predicate handler's resource fit (``noderesources.Fits``).

    Order of checks as upstream: pod count, cpu, memory, ephemeral-storage,
    then the scalar resources (hugepages, extended resources). Extended
    resources the node does not know are dropped first
    (``removeMissingExtendedResources``). Upstream walks scalar resources in
    Go map order, which is random; here they go by name so the first reported
    failure is stable.
    """
    others = list(other_pods_requests)
    used: dict[str, int] = {}
    for other in others:
        for name, q in other.items():
            used[name] = used.get(name, 0) + _int_amount(name, q)
    return fits_node_allocatable_amounts(
        request_amounts(pod_requests),
        used,
        len(others),
        allocatable_amounts(allocatable),
        max_pods=max_pods,
    )


def request_amounts(requests: Mapping[str, Quantity]) -> dict[str, int]:
    """Requests as the scheduler framework counts them: CPU in millicores,
    everything else as integer values (``Value()`` rounds up)."""
    if isinstance(requests, dict):  # (compiled: walked as a dict, natively)
        return {name: _int_amount(name, q) for name, q in requests.items()}
    return {name: _int_amount(name, q) for name, q in requests.items()}


def allocatable_amounts(allocatable: Mapping[str, Quantity]) -> dict[str, int]:
    return request_amounts(allocatable)


def _fit_failure(resource: str, requested: int, used: int, capacity: int) -> AdmitResult:
    return AdmitResult(
        False,
        f"OutOf{resource}",
        f"Node didn't have enough resource: {resource}, requested: {requested}, "
        f"used: {used}, capacity: {capacity}",
    )


def fits_node_allocatable_amounts(
    pod_request: dict[str, int],
    used: dict[str, int],
    other_pods: int,
    allocatable: dict[str, int],
    *,
    max_pods: int = DEFAULT_MAX_PODS,
) -> AdmitResult:
    """:func:`fits_node_allocatable` on integer amounts: ``used`` is the sum
    of the other pods' amounts (kept up to date by the caller instead of
    summed again for every pod), ``other_pods`` their number.

    The scheduler framework holds every amount in an int64: the node's
    requested sums wrap around (taken modulo 2^64 here), the pod's own
    request is ``max(0, amount)`` (``Resource.SetMaxResource`` starts from
    zero), and ``allocatable - used`` wraps too. Extreme quantities whose
    ``MilliValue``/``Value`` overflowed therefore fit or fail exactly as in
    the kubelet.
    """
    if other_pods + 1 > max_pods:
        return _fit_failure("pods", 1, other_pods, max_pods)

    if pod_request.keys() <= _CPU_MEMORY:
        # The usual pod (cpu and memory only): the same checks as below,
        # without building the filtered request.
        for name in ("cpu", "memory"):
            req = pod_request.get(name, 0)
            if req > 0:
                in_use = wrap_int64(used.get(name, 0))
                capacity = allocatable.get(name, 0)
                if req > wrap_int64(capacity - in_use):
                    return _fit_failure(name, req, in_use, capacity)
        return ADMITTED

    request = {
        name: max(0, v)
        for name, v in pod_request.items()
        if not (_is_extended(name) and name not in allocatable)
    }
    if all(v == 0 for v in request.values()):
        return ADMITTED

    for name in ("cpu", "memory", "ephemeral-storage"):
        req = request.get(name, 0)
        if name == "ephemeral-storage" and name not in allocatable:
            # podnuma does not model the node's root filesystem: an
            # ephemeral-storage request is not checked.
            continue
        in_use = wrap_int64(used.get(name, 0))
        if req > 0 and req > wrap_int64(allocatable.get(name, 0) - in_use):
            return _fit_failure(name, req, in_use, allocatable.get(name, 0))
    for name in sorted(request):
        if name in ("cpu", "memory", "ephemeral-storage", "pods"):
            continue
        req = request[name]
        if req == 0:
            continue
        in_use = wrap_int64(used.get(name, 0))
        if req > wrap_int64(allocatable.get(name, 0) - in_use):
            return _fit_failure(name, req, in_use, allocatable.get(name, 0))
    return ADMITTED


def _is_extended(name: str) -> bool:
    """``IsExtendedResourceName`` for names that passed API validation: not
    native (``IsNativeResource``: no ``/``, or ``kubernetes.io/`` anywhere in
    the name) and not ``requests.``-prefixed."""
    return not is_native_resource(name) and not name.startswith("requests.")
