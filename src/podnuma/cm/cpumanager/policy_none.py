"""The ``none`` CPU manager policy.

Mirrors ``pkg/kubelet/cm/cpumanager/policy_none.go``: no exclusive CPUs, no
hints (nil), nothing allocatable, no state validation at start. It accepts
no policy options.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from podnuma.api.pod import Container, Pod
from podnuma.cm.cpumanager.policy import Policy, TopologyHints
from podnuma.cm.cpumanager.state import CPUManagerState
from podnuma.errors import KubeletStartupError
from podnuma.machine.cpuset import EMPTY, CPUSet

__all__ = ["POLICY_NONE", "NonePolicy", "new_none_policy"]

POLICY_NONE: Final = "none"


def _go_map_repr(opts: Mapping[str, str]) -> str:
    """Go's ``%v`` of a ``map[string]string`` (keys sorted)."""
    return "map[" + " ".join(f"{k}:{opts[k]}" for k in sorted(opts)) + "]"


class NonePolicy(Policy):
    """``nonePolicy``."""

    def name(self) -> str:
        return POLICY_NONE

    def start(self, state: CPUManagerState) -> None:
        return None

    def allocate(self, state: CPUManagerState, pod: Pod, container: Container) -> None:
        return None

    def allocate_pod(self, state: CPUManagerState, pod: Pod) -> None:
        """``AllocatePod``: nothing to do."""
        return None

    def remove_container(self, state: CPUManagerState, pod_uid: str, container_name: str) -> None:
        return None

    def get_topology_hints(
        self, state: CPUManagerState, pod: Pod, container: Container
    ) -> TopologyHints | None:
        return None

    def get_pod_topology_hints(self, state: CPUManagerState, pod: Pod) -> TopologyHints | None:
        return None

    def get_allocatable_cpus(self, state: CPUManagerState) -> CPUSet:
        """No CPU can be exclusively allocated under this policy."""
        return EMPTY


def new_none_policy(options: Mapping[str, str] | None = None) -> NonePolicy:
    """``NewNonePolicy``: any option is refused."""
    if options:
        raise KubeletStartupError(f"None policy: received unsupported options={_go_map_repr(options)}")
    return NonePolicy()
