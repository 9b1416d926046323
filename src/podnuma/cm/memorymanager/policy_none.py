"""The memory manager's ``None`` policy.

Mirrors ``pkg/kubelet/cm/memorymanager/policy_none.go``: it pins nothing,
offers no hints (nil: "no preference") and starts on any state.
"""

from __future__ import annotations

from typing import Final

from podnuma.api.pod import Container, Pod
from podnuma.cm.memorymanager.policy import Policy, TopologyHints
from podnuma.cm.memorymanager.state import Block, MemoryManagerState

__all__ = ["POLICY_NONE", "NonePolicy"]

POLICY_NONE: Final = "None"


class NonePolicy(Policy):
    """``policyNone``."""

    def name(self) -> str:
        return POLICY_NONE

    def start(self, state: MemoryManagerState) -> None:
        return None

    def allocate(self, state: MemoryManagerState, pod: Pod, container: Container) -> None:
        return None

    def allocate_pod(self, state: MemoryManagerState, pod: Pod) -> None:
        return None

    def remove_container(self, state: MemoryManagerState, pod_uid: str, container_name: str) -> None:
        return None

    def get_topology_hints(
        self, state: MemoryManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None:
        return None

    def get_pod_topology_hints(self, state: MemoryManagerState, pod: Pod) -> TopologyHints | None:
        return None

    def get_allocatable_memory(self, state: MemoryManagerState) -> list[Block]:
        return []
