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

from podnuma.api._kubeletconfig_v137 import SCHEMA
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
# are about, most specific first (matched case-insensitively). Consulted
# when the message names no field by its JSON name (see _named_field).
_FIELD_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("reservedSystemCPUs", "reserved-cpus", "reserved CPU resources"), "reservedSystemCPUs"),
    (
        ("reservedMemory", "reserved memory", "reserved-memory", "determined by Node Allocatable",
         "the limit type"),
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

# Messages of ValidateKubeletConfiguration that speak of a field in other
# words than its name, checked before the names: the taint printed in
# "invalid taint: {...}" or the path in "pod logs path ..." could hold a
# field's name.
_INDIRECT: tuple[tuple[str, str], ...] = (
    # setting the gates: the gate named may spell a field's name
    # (CPUManagerPolicyOptions), the refused value is a gate's
    ("failed to set feature gates", "featureGates"),
    ("failed to merge global and in-flight KubeletConfiguration", "featureGates"),
    ("invalid taint:", "registerWithTaints"),
    ("taint.TimeAdded", "registerWithTaints"),
    ("pod logs path", "podLogsDir"),
)

# (patterns, compiled by ``re`` when first used: only a refusal needs them)
_UNKNOWN_POLICY = r'unknown policy: "([^"]*)"'
_OPTION = r'option:? "([^"]+)"'
# a Go %q text: a value, never a field name (`option "port" specified ...`)
_QUOTED = r'"(?:[^"\\]|\\.)*"'
# a command-line flag: --max-pods (a field's other name)
_FLAG = r"--([A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)"
# a name, or a dotted path (memorySwap.swapBehavior, logging.format, and Go's
# CrashLoopBackOff.MaxContainerRestartPeriod)
_NAME = r"[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*"


def _resolve(name: str) -> str:
    """The longest leading part of the dotted ``name`` that is a field of
    the v1beta1 KubeletConfiguration, through its structs (``""``: none).
    A dotted name may spell its parts as Go field names
    (``CrashLoopBackOff.MaxContainerRestartPeriod``)."""
    parts = name.split(".")
    schema = SCHEMA
    found: list[str] = []
    for part in parts:
        if not (isinstance(schema, tuple) and schema[0] == "struct"):
            break
        fields = schema[1]
        key = part if part in fields else part[:1].lower() + part[1:] if len(parts) > 1 else part
        if key not in fields:
            break
        found.append(key)
        schema = fields[key]
    return ".".join(found)


def _named_field(message: str) -> str:
    """The first KubeletConfiguration field the message names, by its JSON
    name or path, else by its flag; ``""`` when it names none. Every
    message of ``ValidateKubeletConfiguration``
    (``pkg/kubelet/apis/config/validation/validation.go``) that is about a
    field names it so: ``maxPods (--max-pods) -5 must not be a negative
    number``, ``option "Foo" specified for memoryReservationPolicy``,
    ``memorySwap.swapBehavior ...``, ``logging.format: Unsupported value``."""
    for words, name in _INDIRECT:
        if words in message:
            return name
    text = re.sub(_QUOTED, '""', message)
    flags = [m.group(1) for m in re.finditer(_FLAG, text)]
    text = re.sub(_FLAG, " ", text)
    for m in re.finditer(_NAME, text):
        name = _resolve(m.group(0))
        if name:
            return name
    by_flag: dict[str, str] = {str(field).lower(): str(field) for field in SCHEMA[1]}
    for flag in flags:
        named = by_flag.get(flag.replace("-", "").lower())
        if named is not None:
            return named
    return ""

# The feature gates that set a whole stage of gates at once
# (k8s.io/component-base/featuregate/feature_gate.go: allAlphaGate, allBetaGate).
_ALL_GATES = ("AllAlpha", "AllBeta")

# ValidateKubeletConfiguration's own "option %q specified for FIELD" (the
# option is the field's value, not a policy option)
# (matched once quoted texts are emptied)
_SPECIFIED_FOR = r'option "" specified for ([A-Za-z][A-Za-z0-9]*)'
# a field named by its JSON name with its flag: maxPods (--max-pods)
_NAME_WITH_FLAG = r"([A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*) \(--[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\)"


def _flagged_field(message: str) -> str:
    """The first field the message names by its JSON name followed by its
    flag (``enforceNodeAllocatable (--enforce-node-allocatable)``) or as
    the field of ``option "x" specified for FIELD``, ``""`` when none:
    validation.go's way to name the field it refuses, which no policy
    option's name or value in the message can override."""
    text = re.sub(_QUOTED, '""', message)
    for pattern in (_NAME_WITH_FLAG, _SPECIFIED_FOR):
        m = re.search(pattern, text)
        if m is not None:
            name = _resolve(m.group(1))
            if name:
                return name
    return ""


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
        flagged = _flagged_field(message)
        if flagged:
            return flagged
        m = re.search(_OPTION, message)
        if m is not None:
            option = m.group(1)
            if option in config.cpu_manager_policy_options:
                return "cpuManagerPolicyOptions"
            if option in config.topology_manager_policy_options:
                return "topologyManagerPolicyOptions"
    named = _named_field(message)
    if named:
        return named
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
        key = o.keys[-1]
        if not path.startswith((name + ".", name + "[")) or not isinstance(key, str):
            continue
        # AllAlpha / AllBeta set every alpha / beta gate: the reason then
        # names the gates they turned on, not themselves
        if (name == "featureGates" and key in _ALL_GATES) or re.search(rf"\b{re.escape(key)}\b", message):
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
