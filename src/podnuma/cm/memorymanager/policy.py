"""The memory manager policy interface and its errors.

Mirrors ``pkg/kubelet/cm/memorymanager/policy.go`` (the ``Policy``
interface). The static policy reports allocation failures as plain Go
errors (``fmt.Errorf``); the topology manager turns them into
``UnexpectedAdmissionError`` ("Allocate failed due to <err>, which is
unexpected"), so :class:`MemoryManagerError` carries no admission reason.
"""

from __future__ import annotations

from typing import Protocol

from podnuma.api.pod import Container, Pod
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


class Policy(Protocol):
    """``memorymanager.Policy``."""

    def name(self) -> str: ...

    def start(self, state: MemoryManagerState) -> None:
        """Validate (and initialise) the state; ``KubeletStartupError`` if invalid."""

    def allocate(self, state: MemoryManagerState, pod: Pod, container: Container) -> None:
        """Pin the container's memory; ``MemoryManagerError`` on failure."""

    def allocate_pod(self, state: MemoryManagerState, pod: Pod) -> None:
        """Pin a pod-level pod's budget (``AllocatePod``, KEP-5526); raises
        ``EmptyPodSharedPoolError`` or ``MemoryManagerError``."""

    def remove_container(self, state: MemoryManagerState, pod_uid: str, container_name: str) -> None: ...

    def get_topology_hints(
        self, state: MemoryManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None: ...

    def get_pod_topology_hints(self, state: MemoryManagerState, pod: Pod) -> TopologyHints | None: ...

    def get_allocatable_memory(self, state: MemoryManagerState) -> list[Block]: ...
