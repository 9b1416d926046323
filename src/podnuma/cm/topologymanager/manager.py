"""The Topology Manager: scopes, the hint store, the admit handler.

Mirrors ``pkg/kubelet/cm/topologymanager/topology_manager.go`` and the
scopes ``scope.go``, ``scope_none.go``, ``scope_container.go``,
``scope_pod.go``:

* policy ``none`` always uses the none scope, whatever scope is configured:
  every container of the pod (init containers first) is handed to every hint
  provider's ``Allocate``; no hint is computed or stored.
* scope ``container``: per container, the providers' hints are merged by the
  policy; a refusal is a ``TopologyAffinityError`` (for a pod with pod-level
  resources under the ``PodLevelResourceManagers`` gate, the pod-level
  variant saying the topology manager is container-level); otherwise the
  merged hint is stored for the container and the providers allocate.
* scope ``pod``: the providers' pod-level hints are merged once; the same
  hint is stored for every container, then each container is allocated.
  For a pod with pod-level resources under the ``PodLevelResourceManagers``
  gate (``admitUsingPodResources``), the providers instead allocate the whole
  pod at once (``AllocatePod``), and a refusal carries the pod-level
  affinity message.

The merge itself (the policies) lives in ``policy.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from podnuma.api.pod import Container, Pod
from podnuma.api.resources import is_pod_level_resources_set
from podnuma.buildinfo import mypyc_attr
from podnuma.cm.admission import (
    ADMITTED,
    AdmitResult,
    PodLevelTopologyAffinityError,
    TopologyAffinityError,
    get_pod_admit_result,
)
from podnuma.cm.topologymanager.hint import EMPTY_HINT, TopologyHint
from podnuma.cm.topologymanager.policy import MergeTrace, Policy, merge_traced

__all__ = [
    "HintProvider",
    "ProviderHints",
    "TopologyManager",
    "HintTrail",
    "SCOPE_CONTAINER",
    "SCOPE_POD",
    "POLICY_NONE",
]

SCOPE_CONTAINER = "container"
SCOPE_POD = "pod"
POLICY_NONE = "none"

# resource name -> hints; ``None`` (a nil slice) and ``[]`` differ upstream.
ProviderHints = Mapping[str, Sequence[TopologyHint] | None] | None


class HintProvider(Protocol):
    """``topologymanager.HintProvider``."""

    @property
    def provider_name(self) -> str: ...

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints: ...

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints: ...

    def allocate(self, pod: Pod, container: Container) -> None: ...

    def allocate_pod(self, pod: Pod) -> None: ...


@dataclass
class HintTrail:
    """What the topology manager saw and decided for one admission: per
    container (``None`` = the pod in pod scope), each provider's hints and the
    merged hint."""

    provider_hints: list[tuple[str | None, str, ProviderHints]] = field(default_factory=list)
    merged: list[tuple[str | None, TopologyHint, bool]] = field(default_factory=list)
    # the record of each merge (same order as ``merged``; None for a policy
    # that keeps none)
    traces: list[MergeTrace | None] = field(default_factory=list)
    # Where admission stopped: ("topology", container) when the policy
    # refused the merged hint, ("allocate:<provider>", container) when a
    # provider's Allocate/AllocatePod failed (container None = the pod).
    failed: tuple[str, str | None] | None = None


def _all_containers(pod: Pod) -> Sequence[Container]:
    return (*pod.init_containers, *pod.containers)


@mypyc_attr(serializable=True, allow_interpreted_subclasses=True)
class TopologyManager:
    """The topology manager with its hint store.

    ``policy`` is ``None`` for policy ``none`` (the none scope), else a merge
    policy; ``scope`` is ``container`` or ``pod``.
    """

    def __init__(
        self,
        policy: Policy | None,
        scope: str = SCOPE_CONTAINER,
        *,
        pod_level_resource_managers: bool = False,
    ) -> None:
        self.policy = policy
        self.scope = SCOPE_CONTAINER if policy is None else scope
        self.pod_level_resource_managers = pod_level_resource_managers
        self.providers: list[HintProvider] = []
        self._hints: dict[str, dict[str, TopologyHint]] = {}

    @property
    def policy_name(self) -> str:
        return POLICY_NONE if self.policy is None else self.policy.name

    def add_hint_provider(self, provider: HintProvider) -> None:
        self.providers.append(provider)

    # -- the store ----------------------------------------------------------
    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """``Store.GetAffinity``: Go's zero hint when nothing is stored."""
        return self._hints.get(pod_uid, {}).get(container_name, EMPTY_HINT)

    def _set_hint(self, pod_uid: str, container_name: str, hint: TopologyHint) -> None:
        self._hints.setdefault(pod_uid, {})[container_name] = hint

    def remove_container(self, pod_uid: str, container_name: str) -> None:
        hints = self._hints.get(pod_uid)
        if hints is None:
            return
        hints.pop(container_name, None)
        if not hints:
            del self._hints[pod_uid]

    def remove_pod(self, pod_uid: str) -> None:
        self._hints.pop(pod_uid, None)

    # -- admission ------------------------------------------------------------
    def admit(self, pod: Pod, trail: HintTrail | None = None) -> AdmitResult:
        """The resource-allocation admit handler (``manager.Admit``)."""
        trail = trail if trail is not None else HintTrail()
        if self.policy is None:
            return self._admit_none(pod, trail)
        if self.scope == SCOPE_POD:
            if self.pod_level_resource_managers and is_pod_level_resources_set(pod):
                return self._admit_pod_level(pod, self.policy, trail)
            return self._admit_pod_scope(pod, self.policy, trail)
        return self._admit_container_scope(pod, self.policy, trail)

    def _allocate(self, pod: Pod, container: Container, trail: HintTrail) -> BaseException | None:
        for provider in self.providers:
            try:
                provider.allocate(pod, container)
            except Exception as err:  # noqa: BLE001 - every provider error is an admission result
                trail.failed = (f"allocate:{provider.provider_name}", container.name)
                return err
        return None

    def _admit_none(self, pod: Pod, trail: HintTrail) -> AdmitResult:
        for container in _all_containers(pod):
            err = self._allocate(pod, container, trail)
            if err is not None:
                return get_pod_admit_result(err)
        return ADMITTED

    def _admit_container_scope(self, pod: Pod, policy: Policy, trail: HintTrail) -> AdmitResult:
        for container in _all_containers(pod):

            def container_hints(p: HintProvider, c: Container = container) -> ProviderHints:
                return p.get_topology_hints(pod, c)

            hints = self._collect(container_hints, container.name, trail)
            best, admit, trace = merge_traced(policy, hints)
            trail.merged.append((container.name, best, admit))
            trail.traces.append(trace)
            if not admit:
                trail.failed = ("topology", container.name)
                if self.pod_level_resource_managers and is_pod_level_resources_set(pod):
                    # container scope names the pod-level case in its own words
                    return get_pod_admit_result(
                        PodLevelTopologyAffinityError(
                            "pod with pod-level resources failed admission with a container-level "
                            "topology manager"
                        )
                    )
                return get_pod_admit_result(TopologyAffinityError())
            self._set_hint(pod.uid, container.name, best)
            err = self._allocate(pod, container, trail)
            if err is not None:
                return get_pod_admit_result(err)
        return ADMITTED

    def _admit_pod_scope(self, pod: Pod, policy: Policy, trail: HintTrail) -> AdmitResult:
        hints = self._collect(lambda p: p.get_pod_topology_hints(pod), None, trail)
        best, admit, trace = merge_traced(policy, hints)
        trail.merged.append((None, best, admit))
        trail.traces.append(trace)
        if not admit:
            trail.failed = ("topology", None)
            return get_pod_admit_result(TopologyAffinityError())
        for container in _all_containers(pod):
            self._set_hint(pod.uid, container.name, best)
            err = self._allocate(pod, container, trail)
            if err is not None:
                return get_pod_admit_result(err)
        return ADMITTED

    def _admit_pod_level(self, pod: Pod, policy: Policy, trail: HintTrail) -> AdmitResult:
        """``admitUsingPodResources``: one merge for the pod budget, the hint
        stored for every container, then every provider's ``AllocatePod`` in
        registration order (the first error wins)."""
        hints = self._collect(lambda p: p.get_pod_topology_hints(pod), None, trail)
        best, admit, trace = merge_traced(policy, hints)
        trail.merged.append((None, best, admit))
        trail.traces.append(trace)
        if not admit:
            trail.failed = ("topology", None)
            return get_pod_admit_result(
                PodLevelTopologyAffinityError(
                    "pod with pod-level resources failed admission under pod-scope topology manager"
                )
            )
        for container in _all_containers(pod):
            self._set_hint(pod.uid, container.name, best)
        for provider in self.providers:
            try:
                provider.allocate_pod(pod)
            except Exception as err:  # noqa: BLE001 - every provider error is an admission result
                trail.failed = (f"allocate:{provider.provider_name}", None)
                return get_pod_admit_result(err)
        return ADMITTED

    def _collect(
        self,
        get: Callable[[HintProvider], ProviderHints],
        container: str | None,
        trail: HintTrail,
    ) -> list[ProviderHints]:
        out: list[ProviderHints] = []
        for provider in self.providers:
            hints = get(provider)
            trail.provider_hints.append((container, provider.provider_name, hints))
            out.append(hints)
        return out
