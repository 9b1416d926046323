"""The memory manager policy interface and its errors.

Mirrors ``pkg/kubelet/cm/memorymanager/policy.go`` (the ``Policy``
interface). The static policy reports allocation failures as plain Go
errors (``fmt.Errorf``); the topology manager turns them into
``UnexpectedAdmissionError`` ("Allocate failed due to <err>, which is
unexpected"), so :class:`MemoryManagerError` carries no admission reason.
"""

from __future__ import annotations

from podnuma.api.pod import Container, Pod
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.memorymanager.state import Block, MemoryManagerState
from podnuma.cm.topologymanager.hint import TopologyHint
from podnuma.errors import PodnumaError

__all__ = ["MemoryManagerError", "Policy", "TopologyHints"]

# resource name -> hints; ``None`` from a provider is Go's nil map
# ("no preference"), an empty list under a resource is "no NUMA node fits".
TopologyHints = dict[str, list[TopologyHint] | None]



class MemoryManagerError(PodnumaError):
    """A memory manager error (the Go error text is ``str(exc)``).

    Deliberately without ``reason``: admission reports it as
    ``UnexpectedAdmissionError``, as the kubelet does.
    """


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class Policy:
    """``memorymanager.Policy``. A base class rather than a ``Protocol``: the compiled
    engine then calls the policy through its method table instead of a
    Python-level method lookup."""

    def name(self) -> str:
        raise NotImplementedError

    def start(self, state: MemoryManagerState) -> None:
        """Validate (and initialise) the state; ``KubeletStartupError`` if invalid."""
        raise NotImplementedError

    def allocate(self, state: MemoryManagerState, pod: Pod, container: Container) -> None:
        """Pin the container's memory; ``MemoryManagerError`` on failure."""
        raise NotImplementedError

    def allocate_pod(self, state: MemoryManagerState, pod: Pod) -> None:
        """Pin a pod-level pod's budget (``AllocatePod``, KEP-5526); raises
        ``EmptyPodSharedPoolError`` or ``MemoryManagerError``."""
        raise NotImplementedError

    def remove_container(self, state: MemoryManagerState, pod_uid: str, container_name: str) -> None:
        raise NotImplementedError

    def get_topology_hints(
        self, state: MemoryManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None:
        raise NotImplementedError

    def get_pod_topology_hints(self, state: MemoryManagerState, pod: Pod) -> TopologyHints | None:
        raise NotImplementedError

    def get_allocatable_memory(self, state: MemoryManagerState) -> list[Block]:
        raise NotImplementedError
