"""``topologymanager.Store`` (``pkg/kubelet/cm/topologymanager/topology_manager.go``):
what the hint providers read back from the topology manager at allocation
time. Declared once; the CPU, memory and device managers take it."""

from __future__ import annotations

from typing import Protocol

from podnuma.cm.topologymanager.hint import TopologyHint

__all__ = ["Store"]


class Store(Protocol):
    """The merged hint the topology manager chose for a container
    (Go's zero hint, ``EMPTY_HINT``, when it holds none)."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint: ...
