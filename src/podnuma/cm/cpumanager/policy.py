"""The CPU manager policy interface and its admission errors.

Mirrors ``pkg/kubelet/cm/cpumanager/policy.go`` (the ``Policy`` interface)
and the error types the policies hand to the admission layer
(``SMTAlignmentError`` in ``policy_static.go``; the wrapping of any other
allocation error done by ``admission.GetPodAdmitResult`` in
``pkg/kubelet/cm/admission/errors.go``).
"""

from __future__ import annotations

from typing import Final

from podnuma.api.pod import Container, Pod
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.errors import PodnumaError
from podnuma.machine.cpuset import CPUSet

__all__ = [
    "Policy",
    "TopologyHints",
    "CPUManagerAdmissionError",
    "SMTAlignmentError",
    "UnexpectedAdmissionError",
    "ERROR_REASON_UNEXPECTED",
    "ERROR_SMT_ALIGNMENT",
    "RESOURCE_CPU",
]

ERROR_REASON_UNEXPECTED: Final = "UnexpectedAdmissionError"
ERROR_SMT_ALIGNMENT: Final = "SMTAlignmentError"
RESOURCE_CPU: Final = "cpu"

# resource name -> hints; ``None`` is Go's nil map (no preference), an empty
# list under "cpu" is "no hint can satisfy the request".
TopologyHints = dict[str, list[TopologyHint]]



class CPUManagerAdmissionError(PodnumaError):
    """A CPU allocation failure that rejects the pod.

    ``reason``/``message`` are what the pod status shows (the admission
    result); ``str(exc)`` / ``error`` is the Go error text the policy itself
    returned.
    """

    def __init__(self, reason: str, message: str, error: str) -> None:
        super().__init__(error)
        self.reason = reason
        self.message = message
        self.error = error


class SMTAlignmentError(CPUManagerAdmissionError):
    """``SMTAlignmentError`` (full-pcpus-only violations)."""

    def __init__(
        self,
        requested_cpus: int,
        cpus_per_core: int,
        available_physical_cpus: int = 0,
        caused_by_physical_cpus: bool = False,
    ) -> None:
        self.requested_cpus = requested_cpus
        self.cpus_per_core = cpus_per_core
        self.available_physical_cpus = available_physical_cpus
        self.caused_by_physical_cpus = caused_by_physical_cpus
        if caused_by_physical_cpus:
            text = (
                "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = "
                f"{available_physical_cpus}, requested CPUs = {requested_cpus}, CPUs per core = {cpus_per_core}"
            )
        else:
            text = (
                f"SMT Alignment Error: requested {requested_cpus} cpus not multiple cpus per core = "
                f"{cpus_per_core}"
            )
        super().__init__(ERROR_SMT_ALIGNMENT, text, text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SMTAlignmentError) and (
            self.requested_cpus,
            self.cpus_per_core,
            self.available_physical_cpus,
            self.caused_by_physical_cpus,
        ) == (
            other.requested_cpus,
            other.cpus_per_core,
            other.available_physical_cpus,
            other.caused_by_physical_cpus,
        )

    def __hash__(self) -> int:
        return hash((self.requested_cpus, self.cpus_per_core, self.available_physical_cpus))


class UnexpectedAdmissionError(CPUManagerAdmissionError):
    """Any other allocation error, as ``GetPodAdmitResult`` wraps it."""

    def __init__(self, error: str) -> None:
        super().__init__(
            ERROR_REASON_UNEXPECTED, f"Allocate failed due to {error}, which is unexpected", error
        )


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Policy:
    """``cpumanager.Policy``. A base class rather than a ``Protocol``: the compiled
    engine then calls the policy through its method table instead of a
    Python-level method lookup."""

    def name(self) -> str:
        raise NotImplementedError

    def start(self, state: CPUManagerState) -> None:
        """Validate (and initialise) the state; ``KubeletStartupError`` if invalid."""
        raise NotImplementedError

    def allocate(self, state: CPUManagerState, pod: Pod, container: Container) -> None:
        """Assign CPUs to a container; ``CPUManagerAdmissionError`` on failure."""
        raise NotImplementedError

    def allocate_pod(self, state: CPUManagerState, pod: Pod) -> None:
        """Pod-level allocation (``AllocatePod``); raises
        ``CPUManagerAdmissionError`` or
        ``podnuma.cm.admission.EmptyPodSharedPoolError`` on failure."""
        raise NotImplementedError

    def remove_container(self, state: CPUManagerState, pod_uid: str, container_name: str) -> None:
        raise NotImplementedError

    def get_topology_hints(
        self, state: CPUManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None:
        raise NotImplementedError

    def get_pod_topology_hints(self, state: CPUManagerState, pod: Pod) -> TopologyHints | None:
        raise NotImplementedError

    def get_allocatable_cpus(self, state: CPUManagerState) -> CPUSet:
        raise NotImplementedError
