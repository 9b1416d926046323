"""A :class:`~podnuma.grpc.server.PodResourcesProvider` over a node.

The kubelet's server asks its pod manager for pods (``List``: the active
ones; ``Get``: any pod it knows, so a pod that admission rejected is found
too, with nothing allocated to it) and its container manager for what each
holds. Here the node (:class:`podnuma.cm.container_manager.Node`) is both; ``known`` adds
the pods the node was asked to admit. Every read takes ``lock``, the lock
whoever changes the node holds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from podnuma.api.pod import Pod
from podnuma.cm.container_manager import Node
from podnuma.cm.podresources_view import AllocatableResources, ContainerDevices, PodResources

__all__ = ["NodeProvider", "PodDevices"]


@dataclass(frozen=True)
class PodDevices:
    """A pod as the v1alpha1 API lists it: app containers and their devices."""

    name: str
    namespace: str
    containers: tuple[tuple[str, tuple[ContainerDevices, ...]], ...]


class NodeProvider:
    """PodResources answers from ``node`` (``node_fn`` when the node can be
    replaced) and the pods in ``known_fn()``."""

    def __init__(
        self,
        node_fn: Callable[[], Node],
        known_fn: Callable[[], Sequence[Pod]],
        lock: AbstractContextManager[object] | None = None,
    ) -> None:
        self._node_fn = node_fn
        self._known_fn = known_fn
        self._lock: AbstractContextManager[object] = lock if lock is not None else threading.RLock()

    @classmethod
    def of(cls, node: Node, known: Sequence[Pod] = ()) -> NodeProvider:
        pods = tuple(known)
        return cls(lambda: node, lambda: pods)

    def list_pod_resources(self) -> Sequence[PodResources]:
        """``List``: the active pods (``GetActivePods``); with the deprecated
        gate ``KubeletPodResourcesListUseActivePods`` off, every pod the pod
        manager knows (``GetPods``: rejected pods too, with nothing
        allocated)."""
        with self._lock:
            node = self._node_fn()
            if node.config.feature_gates.enabled("KubeletPodResourcesListUseActivePods"):
                return node.pod_resources()
            known = {p.uid: p for p in self._known_fn()}
            return tuple(node.pod_resources_of(p) for p in known.values())

    def get_pod_resources(self, namespace: str, name: str) -> PodResources | None:
        with self._lock:
            node = self._node_fn()
            for entry in node.pod_resources():
                if entry.namespace == namespace and entry.name == name:
                    return entry
            for pod in self._known_fn():
                if pod.namespace == namespace and pod.name == name:
                    return node.pod_resources_of(pod)
            return None

    def list_all_pod_devices(self) -> Sequence[PodDevices]:
        """The legacy v1alpha1 ``List``: every pod the node knows (``GetPods``,
        not only active ones), its app containers and their devices."""
        with self._lock:
            node = self._node_fn()
            running = {p.uid for p in node.pod_resources()}
            known = {p.uid: p for p in self._known_fn()}
            pods = [p for p in known.values() if p.uid in running] + [
                p for p in known.values() if p.uid not in running
            ]
            return [
                PodDevices(
                    p.name,
                    p.namespace,
                    tuple((c.name, node.container_devices(p.uid, c.name)) for c in p.containers),
                )
                for p in pods
            ]

    def allocatable_resources(self) -> AllocatableResources:
        with self._lock:
            return self._node_fn().allocatable_resources()
