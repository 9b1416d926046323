"""Where in the input a "kubelet would not start" error comes from.

The kubelet's start-up errors name no file and, mostly, no configuration
field (``unknown policy: "Static"`` does not say which manager's). The CLI
must name both, so this module maps the kubelet's message back to the
input: the scenario file (or the kubelet configuration file) and the field
path of the most likely cause (``kubeletConfig.cpuManagerPolicy``,
``state.cpuManagerFile``, ...). Edge code only: the message itself is never
changed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from podnuma.api.kubeletconfig import (
    CPU_MANAGER_POLICIES,
    MEMORY_MANAGER_POLICIES,
    TOPOLOGY_MANAGER_POLICIES,
    KubeletConfig,
)
from podnuma.errors import KubeletStartupError
from podnuma.fieldkit import field_path
from podnuma.inputs.overrides import OPTION, Override, set_by

__all__ = ["StartupFailure", "config_field", "startup_failure"]


class StartupFailure(KubeletStartupError):
    """The kubelet would not start with this input: the kubelet's message,
    plus where in the input the cause most likely is (``file``, ``path``;
    the path is empty when the message names no configuration field)."""

    def __init__(self, message: str, *, file: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.path = path

    def location(self) -> str:
        return ": ".join(p for p in (self.file, self.path) if p)


# Words in the kubelet's start-up messages -> the configuration field they
# are about, most specific first (matched case-insensitively).
_FIELD_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("reservedSystemCPUs", "reserved-cpus", "reserved CPU resources"), "reservedSystemCPUs"),
    (
        ("reservedMemory", "reserved memory", "reserved-memory", "determined by Node Allocatable"),
        "reservedMemory",
    ),
    (("kubeReserved", "kube-reserved"), "kubeReserved"),
    (("systemReserved", "system-reserved"), "systemReserved"),
    (("evictionHard", "eviction-hard", "eviction"), "evictionHard"),
    (
        ("topologyManagerPolicyOptions", "topology manager policy option", "topologymanager option",
         "max-allowable-numa-nodes", "prefer-closest-numa-nodes"),
        "topologyManagerPolicyOptions",
    ),
    (("topologyManagerScope", "topology-manager-scope"), "topologyManagerScope"),
    (("topologyManagerPolicy", "topology-manager-policy", "NUMA Nodes"), "topologyManagerPolicy"),
    (
        ("cpuManagerPolicyOptions", "cpu-manager-policy-options", "CPU Manager policy option",
         "static policy options", "unsupported options"),
        "cpuManagerPolicyOptions",
    ),
    (("memoryManagerPolicy", "memory-manager-policy"), "memoryManagerPolicy"),
    (("cpuManagerPolicy", "cpu-manager-policy"), "cpuManagerPolicy"),
    (("feature gate", "featureGates", "feature-gates"), "featureGates"),
)

# (patterns, compiled by ``re`` when first used: only a refusal needs them)
_UNKNOWN_POLICY = r'unknown policy: "([^"]*)"'
_OPTION = r'option:? "([^"]+)"'

# Words of the kubelet's errors about restoring a checkpoint.
_STATE_WORDS = ("checkpoint", "in state", "overlaps with default cpuset", "state file")


def config_field(message: str, config: KubeletConfig | None = None) -> str:
    """The KubeletConfiguration field a start-up message is about, or ``""``."""
    if config is not None:
        m = re.search(_UNKNOWN_POLICY, message)
        if m is not None:
            name = m.group(1)
            # the field holding that name and not a valid policy of its manager
            for field, value, valid in (
                ("cpuManagerPolicy", config.cpu_manager_policy, CPU_MANAGER_POLICIES),
                ("memoryManagerPolicy", config.memory_manager_policy, MEMORY_MANAGER_POLICIES),
                ("topologyManagerPolicy", config.topology_manager_policy, TOPOLOGY_MANAGER_POLICIES),
            ):
                if name == value and name not in valid:
                    return field
        m = re.search(_OPTION, message)
        if m is not None:
            option = m.group(1)
            if option in config.cpu_manager_policy_options:
                return "cpuManagerPolicyOptions"
            if option in config.topology_manager_policy_options:
                return "topologyManagerPolicyOptions"
    low = message.lower()
    for words, name in _FIELD_HINTS:
        if any(w.lower() in low for w in words):
            return name
    return ""


def _state_field(message: str, cpu_state: str | None, memory_state: str | None) -> str:
    low = message.lower()
    if not any(w in low for w in _STATE_WORDS):
        return ""
    if "memorymanager" in low or "memory manager" in low:
        return memory_state or ""
    return cpu_state or ""


def _set_within(name: str, message: str, overrides: Sequence[Override]) -> str | None:
    """The path of the last ``--set`` that changed a field inside ``name``
    (a gate of ``featureGates``, a key of ``kubeReserved``) whose key the
    kubelet's reason names (``... depends on features that are disabled:
    [PodLevelResources]``): that value is what the start refused."""
    for o in reversed(overrides):
        path = functools.reduce(field_path, o.keys, "")
        if path.startswith((name + ".", name + "[")) and isinstance(o.keys[-1], str) \
                and re.search(rf"\b{re.escape(o.keys[-1])}\b", message):
            return path
    return None


def startup_failure(
    err: KubeletStartupError,
    *,
    file: str,
    config: KubeletConfig | None = None,
    kubelet_config_file: str | None = None,
    cpu_state: str | None = None,
    memory_state: str | None = None,
    overrides: Sequence[Override] = (),
) -> StartupFailure:
    """``err`` located in the input.

    ``file`` is the scenario; ``kubelet_config_file`` the configuration file
    when the configuration came from one (its fields are then top-level);
    ``cpu_state`` / ``memory_state`` the scenario's field paths of the
    starting checkpoints, when given; ``overrides``: the ``--set`` applied
    to the configuration (a field one of them set is named on ``--set``).
    """
    if isinstance(err, StartupFailure):
        return err
    message = str(err)
    state = _state_field(message, cpu_state, memory_state)
    if state:
        return StartupFailure(message, file=file, path=state)
    name = config_field(message, config)
    if name and set_by(name, overrides) is not None:  # the value came from --set
        return StartupFailure(message, file=OPTION, path=name)
    inner = _set_within(name, message, overrides) if name else None
    if inner is not None:  # a field inside the one refused, set by --set and named in the reason
        return StartupFailure(message, file=OPTION, path=inner)
    if kubelet_config_file is not None:
        return StartupFailure(message, file=kubelet_config_file, path=name)
    return StartupFailure(message, file=file, path=f"kubeletConfig.{name}" if name else "")
