"""``KubeletConfiguration`` (kubelet.config.k8s.io/v1beta1) as the kubelet reads it.

Mirrors, for the fields podnuma honours:

- ``pkg/kubelet/kubeletconfig/util/codec`` ``DecodeKubeletConfiguration``:
  strict decoding first (``sigs.k8s.io/json``: a field the
  ``staging/src/k8s.io/kubelet/config/v1beta1/types.go`` types do not have,
  exact case, or a field given twice, fails it); when that fails only for
  such fields the kubelet decodes leniently (those fields ignored, the last
  of duplicates kept) and logs the strict error as a warning, which
  podnuma keeps as :attr:`KubeletConfig.decode_warning`. A value of the
  wrong type fails both. The field table is ``_kubeletconfig_v137.py``;
- Go's ``encoding/json/decode.go`` (through ``sigs.k8s.io/json``) for a
  file's values of the wrong type: the first one noted, unless a type with
  a decoder of its own fails (``k8s.io/apimachinery`` ``duration.go``,
  ``time.go``, ``resource/quantity.go``; ``k8s.io/component-base/logs/api/v1``
  ``types.go``); the Go types' names are ``_kubeletconfig_gotypes_v137.py``;
- ``pkg/kubelet/apis/config/v1beta1/defaults.go`` (defaults apply to unset/empty fields only;
  ``evictionHard`` is defaulted only when nil, or merged key by key under
  ``mergeDefaultEvictionSettings``);
- ``pkg/kubelet/apis/config/validation/validation.go`` and
  ``validation_reserved_memory.go`` (start-up validation);
- ``cmd/kubelet/app/server.go`` (``getReservedCPUs``, the
  ``reservedSystemCPUs`` override of kube/system reserved CPU,
  ``parseResourceList``);
- ``pkg/kubelet/eviction/helpers.go`` (``parseThresholdStatement``) and
  ``pkg/kubelet/cm/node_container_manager_linux.go``
  (``GetNodeAllocatableReservation``, ``hardEvictionReservation``);
- the policy-name checks of ``cpumanager.NewManager`` and
  ``memorymanager.NewManager``.

Every other v1beta1 field is accepted and ignored (its content is not
checked), except that a ``metav1.Duration`` field must hold a text Go's
``time.ParseDuration`` reads, as the codec requires (``DURATION_FIELDS``).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import struct
from collections.abc import Mapping
from typing import Any, Final

from podnuma.api._kubeletconfig_gotypes_v137 import GO_COMPOSITES as _GO_COMPOSITES
from podnuma.api._kubeletconfig_gotypes_v137 import GO_FIELDS as _GO_FIELDS
from podnuma.api._kubeletconfig_v137 import DURATION_FIELDS as _DURATION_FIELDS
from podnuma.api._kubeletconfig_v137 import SCHEMA as _SCHEMA
from podnuma.api.featuregates import FeatureGates, aggregate_message
from podnuma.api.quantity import (
    _MAX_EXPONENT,
    ERR_FORMAT_WRONG,
    Format,
    Quantity,
    QuantityError,
    _go_trim_space,
    _interpret,
    _split,
    parse_quantity,
    quantity_from_manifest,
)
from podnuma.api.resources import is_hugepage_resource
from podnuma.cm.cpumanager import policy_none as cpumanager_none
from podnuma.cm.cpumanager import policy_static as cpumanager_static
from podnuma.cm.memorymanager import policy_none as memorymanager_none
from podnuma.cm.memorymanager import policy_static as memorymanager_static
from podnuma.cm.topologymanager import manager as topologymanager
from podnuma.cm.topologymanager import policy as topologymanager_policy
from podnuma.errors import InputError, KubeletStartupError
from podnuma.fieldkit import expect_bool, expect_mapping, expect_str, wrong_type
from podnuma.golang import rfc3339
from podnuma.golang.duration import (
    MICROSECOND,
    MILLISECOND,
    SECOND,
    format_duration,
    parse_duration,
)
from podnuma.golang.json import go_json_quote
from podnuma.golang.jsonnumbers import JSONFloat, JSONNegativeZero
from podnuma.golang.jsonsyntax import json_value_texts, json_value_texts_every
from podnuma.golang.strconv import go_format_float_v, go_json_format_float, go_quote
from podnuma.golang.types import go_json_kind
from podnuma.machine.cpuset import CPUSet, parse_go_cpuset

__all__ = [
    "API_VERSION",
    "KIND",
    "GATES_FLAGS",
    "GATES_PANIC",
    "KubeletConfig",
    "ReservedMemory",
    "Threshold",
    "DEFAULT_EVICTION_HARD",
    "check_config_file_type",
    "load_kubelet_config",
    "LENIENT_DECODING",
    "JSONObject",
    "json_object_pairs",
    "json_object_pairs_merged",
    "not_a_config_object",
    "strict_decoding_error",
    "validate_kubelet_config",
    "yaml_object",
    "YAMLObject",
    "go_json_decode_error",
    "check_reserved_system_cpus",
    "effective_reserved",
    "hard_eviction_thresholds",
    "node_allocatable_reservation",
    "reserved_cpu_millis",
    "parse_go_cpuset",
    "NOT_MODELLED",
    "check_node_allocatable",
    "max_pods",
    "not_modelled",
]

API_VERSION: Final = "kubelet.config.k8s.io/v1beta1"
KIND: Final = "KubeletConfiguration"

# DefaultEvictionHard (Linux) in pkg/kubelet/eviction/defaults_linux.go.
DEFAULT_EVICTION_HARD: Final[Mapping[str, str]] = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}

# the values of the policy and scope fields, as each manager names them
TOPOLOGY_MANAGER_POLICIES: Final[tuple[str, ...]] = topologymanager_policy.POLICY_NAMES
TOPOLOGY_MANAGER_SCOPES: Final[tuple[str, ...]] = (
    topologymanager.SCOPE_CONTAINER,
    topologymanager.SCOPE_POD,
)
CPU_MANAGER_POLICIES: Final[tuple[str, ...]] = (
    cpumanager_none.POLICY_NONE,
    cpumanager_static.POLICY_STATIC,
)
MEMORY_MANAGER_POLICIES: Final[tuple[str, ...]] = (
    memorymanager_none.POLICY_NONE,
    memorymanager_static.POLICY_STATIC,
)

# Eviction signals the kubelet knows (signalToResource).
EVICTION_SIGNALS: Final = frozenset({
    "memory.available", "allocatableMemory.available", "nodefs.available",
    "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree",
    "containerfs.available", "containerfs.inodesFree", "pid.available",
})

# parseResourceList accepts these names in kubeReserved / systemReserved.
RESERVABLE_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage", "pid"})

_HONOURED_FIELDS: Final = frozenset({
    "apiVersion", "kind", "featureGates", "cpuManagerPolicy", "cpuManagerPolicyOptions",
    "reservedSystemCPUs", "kubeReserved", "systemReserved", "evictionHard",
    "mergeDefaultEvictionSettings", "memoryManagerPolicy", "reservedMemory",
    "topologyManagerPolicy", "topologyManagerScope", "topologyManagerPolicyOptions",
    "systemReservedCgroup", "kubeReservedCgroup", "maxPods", "podsPerCore",
    "memoryReservationPolicy", "cgroupsPerQOS", "cgroupRoot", "enforceNodeAllocatable",
    "systemCgroups",
})

# JSON field names of KubeletConfiguration v1beta1 that podnuma ignores.
IGNORED_FIELDS: Final[frozenset[str]] = frozenset(_SCHEMA[1]) - _HONOURED_FIELDS

#: Ignored fields that change which pods the kubelet admits, and how. When
#: one is set, podnuma says so (:func:`not_modelled`) rather than pretend.
NOT_MODELLED: Final[Mapping[str, str]] = {
    "registerWithTaints": "NoExecute taints make the kubelet reject pods that do not tolerate them",
    "allowedUnsafeSysctls": "the sysctl admit handler checks pods' sysctls against it",
}

#: ``enforceNodeAllocatable``'s values (``pkg/kubelet/types/constants.go``)
ENFORCE_PODS: Final = "pods"
ENFORCE_SYSTEM: Final = "system-reserved"
ENFORCE_SYSTEM_COMPRESSIBLE: Final = "system-reserved-compressible"
ENFORCE_KUBE: Final = "kube-reserved"
ENFORCE_KUBE_COMPRESSIBLE: Final = "kube-reserved-compressible"
ENFORCE_NONE: Final = "none"

_INT32_MIN: Final = -(1 << 31)
_INT32_MAX: Final = (1 << 31) - 1


class ReservedMemory:
    """``MemoryReservation``: memory (and hugepages) reserved on one NUMA node."""

    numa_node: int
    limits: Mapping[str, Quantity]
    __slots__ = ('numa_node', 'limits')

    def __init__(self, numa_node: int, limits: Mapping[str, Quantity]) -> None:
        self.numa_node = numa_node
        self.limits = limits

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(numa_node={self.numa_node!r}, limits={self.limits!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReservedMemory) or other.__class__ is not self.__class__:
            return False
        return (self.numa_node, self.limits) == (other.numa_node, other.limits)

    def __hash__(self) -> int:
        return hash((self.numa_node, self.limits))


class Threshold:
    """A parsed hard eviction threshold (operator is always LessThan)."""

    signal: str
    quantity: Quantity | None
    percentage: float | None
    __slots__ = ('signal', 'quantity', 'percentage')

    def __init__(
        self,
        signal: str,
        quantity: Quantity | None = None,
        percentage: float | None = None,
    ) -> None:
        self.signal = signal
        self.quantity = quantity
        self.percentage = percentage

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(signal={self.signal!r}, quantity={self.quantity!r}, percentage={self.percentage!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Threshold) or other.__class__ is not self.__class__:
            return False
        return (self.signal, self.quantity, self.percentage) == (other.signal, other.quantity, other.percentage)

    def __hash__(self) -> int:
        return hash((self.signal, self.quantity, self.percentage))


#: the fields of :class:`CgroupSettings`, in order
_CGROUPSETTINGS_FIELDS = ('cpu_cfs_quota', 'cpu_cfs_quota_period', 'pod_pids_limit', 'single_process_oom_kill', 'memory_throttling_factor', 'memory_reservation_policy', 'cgroups_per_qos', 'cgroup_root', 'enforce_node_allocatable', 'system_cgroups',)


class CgroupSettings:
    """The fields that shape the pod and container cgroup values
    (``cpuCFSQuota``, ``cpuCFSQuotaPeriod``, ``podPidsLimit``,
    ``singleProcessOOMKill``) and the hierarchy (``cgroupsPerQOS``,
    ``cgroupRoot``, ``enforceNodeAllocatable``), v1beta1 defaults applied;
    they change no admission decision (the kubelet refuses to start on some
    combinations: :func:`validate_kubelet_config`)."""

    cpu_cfs_quota: bool
    cpu_cfs_quota_period: int
    pod_pids_limit: int
    single_process_oom_kill: bool | None
    # MemoryQoS (cgroup v2): memory.high from requests and limits; memory.min
    # / memory.low from requests under TieredReservation
    memory_throttling_factor: float | None
    memory_reservation_policy: str
    #: the kubelet manages the kubepods, QoS and pod cgroups (default true)
    cgroups_per_qos: bool
    #: ``cgroupRoot`` as written ("": not set; server.go makes it "/" when
    #: ``cgroups_per_qos``)
    cgroup_root: str
    #: ``enforceNodeAllocatable`` (default ``[pods]``; an empty list stays empty)
    enforce_node_allocatable: tuple[str, ...]
    #: ``systemCgroups`` as written (only validated: it needs ``cgroupRoot``)
    system_cgroups: str

    def __init__(
        self,
        cpu_cfs_quota: bool = True,
        cpu_cfs_quota_period: int = 100 * MILLISECOND,
        pod_pids_limit: int = -1,
        single_process_oom_kill: bool | None = None,
        memory_throttling_factor: float | None = None,
        memory_reservation_policy: str = "None",
        cgroups_per_qos: bool = True,
        cgroup_root: str = "",
        enforce_node_allocatable: tuple[str, ...] = (ENFORCE_PODS,),
        system_cgroups: str = "",
    ) -> None:
        self.cpu_cfs_quota = cpu_cfs_quota
        self.cpu_cfs_quota_period = cpu_cfs_quota_period
        self.pod_pids_limit = pod_pids_limit
        self.single_process_oom_kill = single_process_oom_kill
        self.memory_throttling_factor = memory_throttling_factor
        self.memory_reservation_policy = memory_reservation_policy
        self.cgroups_per_qos = cgroups_per_qos
        self.cgroup_root = cgroup_root
        self.enforce_node_allocatable = enforce_node_allocatable
        self.system_cgroups = system_cgroups

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(cpu_cfs_quota={self.cpu_cfs_quota!r}, cpu_cfs_quota_period={self.cpu_cfs_quota_period!r}, pod_pids_limit={self.pod_pids_limit!r}, single_process_oom_kill={self.single_process_oom_kill!r}, memory_throttling_factor={self.memory_throttling_factor!r}, memory_reservation_policy={self.memory_reservation_policy!r}, cgroups_per_qos={self.cgroups_per_qos!r}, cgroup_root={self.cgroup_root!r}, enforce_node_allocatable={self.enforce_node_allocatable!r}, system_cgroups={self.system_cgroups!r})"

    def _key(self) -> tuple[object, ...]:
        return (self.cpu_cfs_quota, self.cpu_cfs_quota_period, self.pod_pids_limit, self.single_process_oom_kill,
                self.memory_throttling_factor, self.memory_reservation_policy, self.cgroups_per_qos,
                self.cgroup_root, self.enforce_node_allocatable, self.system_cgroups)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CgroupSettings) or other.__class__ is not self.__class__:
            return False
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def replace(self, **changes: Any) -> CgroupSettings:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values = {name: getattr(self, name) for name in _CGROUPSETTINGS_FIELDS}
        values.update(changes)
        return CgroupSettings(**values)

    @property
    def cpu_cfs_quota_period_us(self) -> int:
        return self.cpu_cfs_quota_period // MICROSECOND


#: the fields of :class:`KubeletConfig`, in order
_KUBELETCONFIG_FIELDS = ('feature_gates', 'cpu_manager_policy', 'cpu_manager_policy_options', 'reserved_system_cpus', 'kube_reserved', 'system_reserved', 'eviction_hard', 'memory_manager_policy', 'reserved_memory', 'topology_manager_policy', 'topology_manager_scope', 'topology_manager_policy_options', 'merge_default_eviction_settings', 'reserved_system_cpus_text', 'kube_reserved_text', 'system_reserved_text', 'system_reserved_cgroup', 'kube_reserved_cgroup', 'max_pods', 'pods_per_core', 'not_modelled_fields', 'decode_warning', 'cgroups',)


class KubeletConfig:
    """The kubelet configuration fields podnuma honours, defaults applied."""

    feature_gates: FeatureGates
    cpu_manager_policy: str
    cpu_manager_policy_options: Mapping[str, str]
    # None when unset (or unparsable: then validation fails with the raw text).
    reserved_system_cpus: CPUSet | None
    kube_reserved: Mapping[str, Quantity]
    system_reserved: Mapping[str, Quantity]
    # The v1beta1 map of signal -> "quantity" or "N%", defaults applied;
    # parse it with hard_eviction_thresholds().
    eviction_hard: Mapping[str, str]
    memory_manager_policy: str
    reserved_memory: tuple[ReservedMemory, ...]
    topology_manager_policy: str
    topology_manager_scope: str
    topology_manager_policy_options: Mapping[str, str]
    merge_default_eviction_settings: bool
    # Raw texts kept for the kubelet's messages.
    reserved_system_cpus_text: str
    kube_reserved_text: Mapping[str, str]
    system_reserved_text: Mapping[str, str]
    system_reserved_cgroup: str
    kube_reserved_cgroup: str
    # maxPods (0 -> 110 by the v1beta1 defaults) and podsPerCore (0: off)
    max_pods: int
    pods_per_core: int
    # the ignored fields of NOT_MODELLED that the document sets
    not_modelled_fields: tuple[str, ...]
    # the strict decoding error the kubelet logs when it decodes the
    # document leniently (unknown or duplicate fields), "" when none
    decode_warning: str
    # fields that shape cgroup values only (not admission)
    cgroups: CgroupSettings

    def __init__(
        self,
        feature_gates: FeatureGates | None = None,
        cpu_manager_policy: str = "none",
        cpu_manager_policy_options: Mapping[str, str] | None = None,
        reserved_system_cpus: CPUSet | None = None,
        kube_reserved: Mapping[str, Quantity] | None = None,
        system_reserved: Mapping[str, Quantity] | None = None,
        eviction_hard: Mapping[str, str] | None = None,
        memory_manager_policy: str = "None",
        reserved_memory: tuple[ReservedMemory, ...] = (),
        topology_manager_policy: str = "none",
        topology_manager_scope: str = "container",
        topology_manager_policy_options: Mapping[str, str] | None = None,
        merge_default_eviction_settings: bool = False,
        reserved_system_cpus_text: str = "",
        kube_reserved_text: Mapping[str, str] | None = None,
        system_reserved_text: Mapping[str, str] | None = None,
        system_reserved_cgroup: str = "",
        kube_reserved_cgroup: str = "",
        max_pods: int = 110,
        pods_per_core: int = 0,
        not_modelled_fields: tuple[str, ...] = (),
        decode_warning: str = "",
        cgroups: CgroupSettings | None = None,
    ) -> None:
        self.feature_gates = FeatureGates.defaults() if feature_gates is None else feature_gates
        self.cpu_manager_policy = cpu_manager_policy
        self.cpu_manager_policy_options = dict() if cpu_manager_policy_options is None else cpu_manager_policy_options
        self.reserved_system_cpus = reserved_system_cpus
        self.kube_reserved = dict() if kube_reserved is None else kube_reserved
        self.system_reserved = dict() if system_reserved is None else system_reserved
        self.eviction_hard = dict(DEFAULT_EVICTION_HARD) if eviction_hard is None else eviction_hard
        self.memory_manager_policy = memory_manager_policy
        self.reserved_memory = reserved_memory
        self.topology_manager_policy = topology_manager_policy
        self.topology_manager_scope = topology_manager_scope
        self.topology_manager_policy_options = dict() if topology_manager_policy_options is None else topology_manager_policy_options
        self.merge_default_eviction_settings = merge_default_eviction_settings
        self.reserved_system_cpus_text = reserved_system_cpus_text
        self.kube_reserved_text = dict() if kube_reserved_text is None else kube_reserved_text
        self.system_reserved_text = dict() if system_reserved_text is None else system_reserved_text
        self.system_reserved_cgroup = system_reserved_cgroup
        self.kube_reserved_cgroup = kube_reserved_cgroup
        self.max_pods = max_pods
        self.pods_per_core = pods_per_core
        self.not_modelled_fields = not_modelled_fields
        self.decode_warning = decode_warning
        self.cgroups = CgroupSettings() if cgroups is None else cgroups

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(feature_gates={self.feature_gates!r}, cpu_manager_policy={self.cpu_manager_policy!r}, cpu_manager_policy_options={self.cpu_manager_policy_options!r}, reserved_system_cpus={self.reserved_system_cpus!r}, kube_reserved={self.kube_reserved!r}, system_reserved={self.system_reserved!r}, eviction_hard={self.eviction_hard!r}, memory_manager_policy={self.memory_manager_policy!r}, reserved_memory={self.reserved_memory!r}, topology_manager_policy={self.topology_manager_policy!r}, topology_manager_scope={self.topology_manager_scope!r}, topology_manager_policy_options={self.topology_manager_policy_options!r}, merge_default_eviction_settings={self.merge_default_eviction_settings!r}, reserved_system_cpus_text={self.reserved_system_cpus_text!r}, kube_reserved_text={self.kube_reserved_text!r}, system_reserved_text={self.system_reserved_text!r}, system_reserved_cgroup={self.system_reserved_cgroup!r}, kube_reserved_cgroup={self.kube_reserved_cgroup!r}, max_pods={self.max_pods!r}, pods_per_core={self.pods_per_core!r}, not_modelled_fields={self.not_modelled_fields!r}, decode_warning={self.decode_warning!r}, cgroups={self.cgroups!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KubeletConfig) or other.__class__ is not self.__class__:
            return False
        return (self.feature_gates, self.cpu_manager_policy, self.cpu_manager_policy_options, self.reserved_system_cpus, self.kube_reserved, self.system_reserved, self.eviction_hard, self.memory_manager_policy, self.reserved_memory, self.topology_manager_policy, self.topology_manager_scope, self.topology_manager_policy_options, self.merge_default_eviction_settings, self.reserved_system_cpus_text, self.system_reserved_cgroup, self.kube_reserved_cgroup, self.max_pods, self.pods_per_core, self.cgroups) == (other.feature_gates, other.cpu_manager_policy, other.cpu_manager_policy_options, other.reserved_system_cpus, other.kube_reserved, other.system_reserved, other.eviction_hard, other.memory_manager_policy, other.reserved_memory, other.topology_manager_policy, other.topology_manager_scope, other.topology_manager_policy_options, other.merge_default_eviction_settings, other.reserved_system_cpus_text, other.system_reserved_cgroup, other.kube_reserved_cgroup, other.max_pods, other.pods_per_core, other.cgroups)

    def __hash__(self) -> int:
        return hash((self.feature_gates, self.cpu_manager_policy, self.cpu_manager_policy_options, self.reserved_system_cpus, self.kube_reserved, self.system_reserved, self.eviction_hard, self.memory_manager_policy, self.reserved_memory, self.topology_manager_policy, self.topology_manager_scope, self.topology_manager_policy_options, self.merge_default_eviction_settings, self.reserved_system_cpus_text, self.system_reserved_cgroup, self.kube_reserved_cgroup, self.max_pods, self.pods_per_core, self.cgroups))

    def replace(self, **changes: Any) -> KubeletConfig:
        """A copy with ``changes`` (fields by name) applied, as
        ``dataclasses.replace`` makes one."""
        values = {name: getattr(self, name) for name in _KUBELETCONFIG_FIELDS}
        values.update(changes)
        return KubeletConfig(**values)


def not_modelled(cfg: KubeletConfig) -> list[tuple[str, str]]:
    """The fields set in the configuration that change admission but that
    podnuma does not model: (field, what it would change)."""
    return [(name, NOT_MODELLED[name]) for name in cfg.not_modelled_fields]


def max_pods(cfg: KubeletConfig, num_cpus: int) -> int:
    """The node's pod capacity (``nodestatus.MachineInfo``): ``maxPods``, or
    ``min(NumCores * podsPerCore, maxPods)`` when ``podsPerCore`` is set
    (``NumCores`` is the logical CPU count)."""
    if cfg.pods_per_core > 0:
        return min(num_cpus * cfg.pods_per_core, cfg.max_pods)
    return cfg.max_pods


# --------------------------------------------------------------------------
# Loading (strict v1beta1 decoding)


def _key_path(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _string_map(value: object, path: str) -> dict[str, str] | None:
    """A ``map[string]string`` field; ``None`` when null (Go's nil map). A
    null value is the empty string (encoding/json stores the zero value)."""
    if value is None:
        return None
    raw = expect_mapping(value, path)
    out: dict[str, str] = {}
    for k, v in raw.items():
        key = expect_str(k, path)
        out[key] = "" if v is None else expect_str(v, _key_path(path, key))
    return out


def _reserved_map(value: object, path: str) -> tuple[dict[str, Quantity], dict[str, str]]:
    texts = _string_map(value, path) or {}
    parsed: dict[str, Quantity] = {}
    for k, v in texts.items():
        try:
            parsed[k] = parse_quantity(v)
        except QuantityError as e:
            raise InputError(
                f"failed to parse quantity {go_quote(v)} for {go_quote(k)} resource: {e}",
                path=_key_path(path, k),
            ) from None
    return parsed, texts


#: how podnuma refuses a quantity whose exponent it does not compute
_HUGE_EXPONENT: Final = "quantity exponent "


def _decimal_places(value: object) -> tuple[str, int, bool] | None:
    """(the text, how many decimal places ``resource.ParseQuantity`` holds
    it at, whether it is zero) of the manifest quantity ``value`` when the
    parser reads it into an ``inf.Dec`` (more digits than its int64 fast
    path takes, or a scale below nano); ``None`` otherwise, or when it is
    no quantity."""
    if isinstance(value, str):
        text = _go_trim_space(value)
    elif isinstance(value, JSONFloat):
        text = value.text
    elif isinstance(value, float):
        text = repr(value)
    else:
        return None  # (an integer has no decimal places)
    try:
        _positive, num, denom, suffix = _split(text)
        base, exponent, _fmt = _interpret(suffix)
    except QuantityError:
        return None
    places = len(denom) - exponent
    if base != 10 or places <= 9 and len(num) + len(denom) <= 18:
        return None
    return text, places, not (num + denom).strip("0")


def _too_many_places(value: object, path: str) -> tuple[InputError, bool] | None:
    """podnuma's refusal of a quantity with more decimal places than
    ``_MAX_EXPONENT`` (``1e-999999999``), and whether it is zero:
    ParseQuantity holds it as an ``inf.Dec`` at that scale and rounds it up
    to nano units, computing 10 to the power of its places, which does not
    finish (a zero is not rounded, but the first sum or comparison aligns
    it with another scale, at the same cost); podnuma's bound is the one
    it keeps on a positive exponent. ``None``: not refused."""
    found = _decimal_places(value)
    if found is None or found[1] <= _MAX_EXPONENT:
        return None
    text, places, zero = found
    return InputError(f"quantity {go_quote(text)} has {places} decimal places: the kubelet would compute "
                      f"10^{places - 9} decoding it and not finish (podnuma accepts up to {_MAX_EXPONENT})",
                      path=path), zero


def _load_reserved_memory(value: object, path: str, policy: str) -> tuple[ReservedMemory, ...]:
    """``reservedMemory``; ``policy``: the memory manager's. A limit whose
    decimal exponent podnuma does not compute (``1e999999999``) the
    kubelet decodes and validates (it is not zero) without computing it;
    only a memory manager policy other than None compares it with the
    node's reservation, which does not finish: podnuma refuses it then,
    and otherwise holds a stand-in of the same sign, never compared."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise wrong_type(path, "a list", value)
    out: list[ReservedMemory] = []
    for i, item in enumerate(value):
        ipath = f"{path}[{i}]"
        # a null element is the zero MemoryReservation (NUMA node 0, no limits)
        raw = expect_mapping({} if item is None else item, ipath)
        numa = 0
        limits: dict[str, Quantity] = {}
        for k, v in raw.items():
            key = expect_str(k, ipath)
            fpath = _key_path(ipath, key)
            if key == "numaNode":
                if v is None:
                    continue
                if isinstance(v, bool) or not isinstance(v, int):
                    raise wrong_type(fpath, "an integer", v)
                if not _INT32_MIN <= v <= _INT32_MAX:
                    raise InputError(f"value {v} out of range for int32", path=fpath)
                numa = v
            elif key == "limits":
                if v is None:
                    continue
                lim = expect_mapping(v, fpath)
                for rk, rv in lim.items():
                    rname = expect_str(rk, fpath)
                    if rv is None:  # Quantity.UnmarshalJSON: null is zero
                        limits[rname] = Quantity.zero()
                        continue
                    tiny = _too_many_places(rv, _key_path(fpath, rname))
                    if tiny is not None:
                        raise tiny[0]
                    try:
                        limits[rname] = quantity_from_manifest(rv)
                    except QuantityError as e:
                        if not str(e).startswith(_HUGE_EXPONENT) or policy != "None":
                            raise InputError(str(e), path=_key_path(fpath, rname)) from None
                        negative = str(rv).lstrip(" \t\r\n").startswith("-")
                        limits[rname] = parse_quantity("-1" if negative else "1")
            # other keys: unknown fields, decoded leniently (strict_decoding_error)
        out.append(ReservedMemory(numa_node=numa, limits=limits))
    return tuple(out)


#: What the kubelet logs when it falls back to lenient decoding (its
#: ``err`` value is the strict decoding error).
LENIENT_DECODING: Final = "Using lenient decoding as strict decoding failed"


class JSONObject(dict[str, Any]):
    """A decoded JSON object that keeps its key/value pairs as written,
    duplicates included (``pairs``); as a mapping the last value of a
    duplicated key wins, as in Go's decoder. ``source``: a file's JSON
    text, kept on the document (the top-level object) when read from one
    (a type that decodes itself may quote a value's text as written)."""

    pairs: list[tuple[str, Any]]
    source: str


class YAMLObject(dict[str, Any]):
    """A kubelet configuration file's document read from YAML, which the
    codec turns into JSON with ``sigs.k8s.io/yaml`` (every object's keys
    sorted, a key given twice keeping its last value); ``duplicates``: the
    keys given twice, as go-yaml v2's strict decoding words them
    (:func:`podnuma.inputs.goyaml.construct`), which the codec's strict
    decoding reports before the JSON's unknown fields."""

    duplicates: list[str]


def yaml_object(doc: Mapping[str, Any], duplicates: list[str]) -> YAMLObject:
    """``doc`` (a YAML file's top-level mapping) as a :class:`YAMLObject`."""
    obj = YAMLObject(doc)
    obj.duplicates = list(duplicates)
    return obj


def json_object_pairs(pairs: list[tuple[str, Any]]) -> JSONObject:
    """``object_pairs_hook`` for ``json.loads`` that keeps duplicates for
    :func:`strict_decoding_error`."""
    obj = JSONObject(pairs)
    obj.pairs = pairs
    return obj


def json_object_pairs_merged(pairs: list[tuple[str, Any]]) -> JSONObject:
    """:func:`json_object_pairs` as encoding/json decodes a key given twice
    into a struct or a map (every object of a kubelet configuration is
    one): into the value the first made, so two objects merge, key by key
    and at every depth (``"featureGates": {"A": true}, "featureGates": {}``
    keeps ``A``); any other value replaces the earlier one."""
    obj = JSONObject()
    for key, value in pairs:
        earlier = obj.get(key)
        obj[key] = _merged(earlier, value) if isinstance(earlier, dict) and isinstance(value, dict) else value
    obj.pairs = pairs
    return obj


def _merged(earlier: dict[str, Any], later: dict[str, Any]) -> JSONObject:
    out = JSONObject(earlier)
    for key, value in later.items():
        before = out.get(key)
        out[key] = _merged(before, value) if isinstance(before, dict) and isinstance(value, dict) else value
    out.pairs = [*getattr(earlier, "pairs", earlier.items()),
                 *((k, v) for k, v in getattr(later, "pairs", later.items()) if k not in earlier)]
    return out


_INT_RANGES: Final = {
    "int32": (_INT32_MIN, _INT32_MAX),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "uint32": (0, (1 << 32) - 1),
    "uint64": (0, (1 << 64) - 1),
}


#: the Go type of a schema kind in encoding/json's words
_GO_KIND_TYPES: Final = {"float": "float64", "any": "string"}


class _GoNumbers:
    """How the numbers of a configuration file reach Go's decoder, for the
    words of one it refuses: ``json``, as the JSON text has them (an int
    field takes only an integer literal in its range, ``1e2`` and ``1.0``
    are not, a float field only one within the float64 range); else as
    ``sigs.k8s.io/yaml`` writes go-yaml's values into the JSON it decodes
    (a float by Go's encoding/json: ``100``, ``1e+21``)."""

    def __init__(self, json_text: bool) -> None:
        self.json_text = json_text

    def text(self, value: int | float) -> str:
        """The number's text as the decoder meets it."""
        if type(value) is JSONNegativeZero:  # (asked before narrowing: compiled, an int is unboxed)
            return "-0"
        if isinstance(value, int):
            return str(value)
        if self.json_text:
            return value.text if isinstance(value, JSONFloat) else repr(value)
        return go_json_format_float(value)

    def refuse(self, value: int | float, gopath: str, kind: str, path: str, *, text: bool) -> InputError:
        """encoding/json's error for the number ``value`` in the field at
        ``gopath`` (its schema path; ``kind``, its schema kind), the number
        named when ``text`` (what strconv cannot read as the field's type)."""
        struct, where, gotype = _GO_FIELDS.get(
            gopath, ("KubeletConfiguration", gopath, _GO_KIND_TYPES.get(kind, kind)))
        number = f"number {self.text(value)}" if text else "number"
        return InputError(f"failed to decode: json: cannot unmarshal {number} into Go struct field "
                          f"{struct}.{where} of type {gotype}", path=path)

    def check(self, value: object, kind: str, gopath: str, path: str) -> bool:
        """Refuse a number the field of ``kind`` does not take; ``False``:
        ``value`` is not a number (the caller checks it)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        # (asked before narrowing: compiled, an int is unboxed, its subclass lost)
        negative_zero = type(value) is JSONNegativeZero
        if kind in _INT_RANGES:
            low, high = _INT_RANGES[kind]
            whole = value if isinstance(value, int) else None
            if isinstance(value, float) and not self.json_text and value.is_integer() and abs(value) < 1e21:
                whole = int(value)  # written as an integer literal
            if whole is None or not low <= whole <= high or low == 0 and negative_zero:
                raise self.refuse(value, gopath, kind, path, text=True)
        elif kind == "float":
            try:
                finite = math.isfinite(float(value))
            except OverflowError:
                finite = False
            if not finite:
                raise self.refuse(value, gopath, kind, path, text=True)
        elif kind != "any" or gopath in _GO_FIELDS:
            # a string, a bool, a metav1.Time: any number is refused
            raise self.refuse(value, gopath, kind, path, text=False)
        return True


def _check_scalar(value: object, kind: str, path: str, go: _GoNumbers | None = None, gopath: str = "") -> None:
    """The JSON value decodes into a Go field of ``kind`` (else the kubelet
    fails to decode the document, strictly or not). ``go``: a number is
    refused as the kubelet's decoder refuses it, in its words (see
    :class:`_GoNumbers`), ``gopath`` the field's schema path."""
    if go is not None and go.check(value, kind, gopath, path):
        return
    if kind == "any":
        return
    if kind == "string":
        expect_str(value, path)
    elif kind == "bool":
        expect_bool(value, path)
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong_type(path, "a number", value)
    else:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong_type(path, "an integer", value)
        low, high = _INT_RANGES[kind]
        if not low <= value <= high:
            raise InputError(f"value {value} out of range for {kind}", path=path)


def _check_duration(
    value: object, how: str, path: str, go: _GoNumbers | None = None, gopath: str = ""
) -> None:
    """A ``metav1.Duration`` field (``how``: see ``DURATION_FIELDS``) decodes
    as ``metav1.Duration.UnmarshalJSON`` does it
    (``k8s.io/apimachinery/pkg/apis/meta/v1/duration.go``): the JSON string
    through Go's ``time.ParseDuration``, whose error (Go's words, e.g.
    ``time: invalid duration "abc"``) ends the decoding. A null reaches a
    non-pointer field's decoder as the empty text; the logging flush
    frequency (``TimeOrMetaDuration.UnmarshalJSON``) also takes a number of
    nanoseconds."""
    if value is None:
        if how != "value":
            return  # a pointer left nil, or an integer left as it was
        value = ""
    if how == "flush" and go is not None and not isinstance(value, bool) and isinstance(value, (int, float)):
        # a number of nanoseconds: an int64 literal, else the decoder's
        # error as the duration's
        if not (isinstance(value, int) or not go.json_text and value.is_integer() and abs(value) < 1e21) \
                or not _INT_RANGES["int64"][0] <= int(value) <= _INT_RANGES["int64"][1]:
            number = go.text(value)
            raise InputError(f'failed to decode: invalid duration {go_quote(number)}: json: cannot unmarshal '
                             f'number {number} '
                             "into Go value of type time.Duration", path=path)
        return
    if how != "flush" and go is not None and not isinstance(value, bool) and isinstance(value, (int, float)):
        raise go.refuse(value, gopath, "string", path, text=False)
    if how == "flush" and not isinstance(value, str):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong_type(path, 'a duration ("5s") or a number of nanoseconds', value)
        low, high = _INT_RANGES["int64"]
        if not low <= value <= high:
            raise InputError(f"value {value} out of range for int64", path=path)
        return
    text = expect_str(value, path)
    try:
        parse_duration(text)
    except ValueError as e:
        raise InputError(str(e), path=path) from None


def strict_decoding_error(doc: Mapping[str, Any], schema: Any = _SCHEMA, *, sort_keys: bool = False) -> str:
    """The error of the kubelet's strict decoding of ``doc`` ("" when it
    decodes strictly): every field the v1beta1 types do not have (names
    match exactly: another case is another field) and every field or map
    key given twice (when ``doc`` was read with :func:`json_object_pairs`),
    each path once, in document order. Raises ``InputError`` for a value
    of the wrong type or a duration Go cannot parse (``DURATION_FIELDS``),
    which no decoding accepts. ``schema``: the type decoded (by default
    the v1beta1 ``KubeletConfiguration``); ``sort_keys``: the document was
    YAML, which the codec turns into JSON with the keys of every object
    sorted (``sigs.k8s.io/yaml``), so the fields are met in that order.

    A file's document (a :class:`JSONObject` or :class:`YAMLObject`) is
    refused in the decoder's words (:class:`_GoDecode`): a value of the
    wrong type is encoding/json's ``failed to decode: json: cannot
    unmarshal ...``, the first one met, unless a field with a decoder of
    its own (a duration, a quantity, a time) fails, which ends the decoding
    at once with its own error; any other document in podnuma's words, at
    the first wrong value."""
    problems: list[str] = []
    reported: set[str] = set()
    pending: list[InputError] = []  # (a zero quantity of a document that is no file's, see walk)
    # a file's numbers are refused in the decoder's words (the JSON text's
    # number, or the one the YAML's value is written as)
    go = _GoNumbers(isinstance(doc, JSONObject)) if isinstance(doc, (JSONObject, YAMLObject)) else None
    decode = _GoDecode(go, getattr(doc, "source", "")) if go is not None and schema is _SCHEMA else None
    if isinstance(doc, YAMLObject):
        sort_keys = True
        if doc.duplicates:
            problems.append("yaml: unmarshal errors:\n  " + "\n  ".join(doc.duplicates))

    def report(kind: str, path: str) -> None:
        text = f"{kind} field {go_quote(path)}"
        if text not in reported:
            reported.add(text)
            problems.append(text)

    def walk(value: object, schema: Any, path: str, gopath: str, node: str) -> None:
        how = _DURATION_FIELDS.get(path) if isinstance(schema, str) else None
        if how is not None:
            if decode is not None:
                decode.duration(value, how, path, gopath)
            else:
                _check_duration(value, how, path, go, gopath)
            return
        if decode is not None and isinstance(schema, str) and gopath in _GO_CUSTOM:
            decode.custom(value, _GO_CUSTOM[gopath], path, gopath)
            return
        if decode is None and _GO_CUSTOM.get(gopath) == "quantity":
            # a document that is no file's (a value --set gave, a node's
            # configz, a scenario's kubeletConfig): a quantity ParseQuantity
            # would not finish, in the words a file's gets (a zero: once the
            # rest is checked, as the file's decoder finishes with it)
            tiny = _too_many_places(value, path)
            if tiny is not None:
                if not tiny[1]:
                    raise tiny[0]
                if not pending:
                    pending.append(tiny[0])
        if value is None:
            return  # null leaves the Go field as it is
        if isinstance(schema, str):
            if decode is not None:
                decode.scalar(value, schema, path, gopath)
            else:
                _check_scalar(value, schema, path, go, gopath)
            return
        kind, inner = schema
        if kind == "list":
            if not isinstance(value, (list, tuple)):
                if decode is None:
                    raise wrong_type(path, "a list", value)
                decode.wrong(value, node, path)
                return
            plain = inner == "string" and gopath not in _GO_CUSTOM
            for i, item in enumerate(value):
                if plain and (item is None or isinstance(item, str)):
                    continue  # (what a list of strings mostly holds: nothing to check)
                walk(item, inner, f"{path}[{i}]", gopath, node + "[]")
            return
        if decode is not None and not isinstance(value, Mapping):
            decode.wrong(value, node, path)
            return
        obj = expect_mapping(value, path)
        pairs = obj.pairs if isinstance(obj, JSONObject) else list(obj.items())
        if sort_keys:
            pairs = sorted(pairs, key=lambda kv: str(kv[0]))
        seen: set[str] = set()
        for key, item in pairs:
            if not isinstance(key, str):
                raise wrong_type(path, "a string key", key)
            where = _key_path(path, key)
            if kind == "struct":
                if key not in inner:
                    report("unknown", where)
                    continue
                sub = inner[key]
                subpath = f"{gopath}.{key}" if gopath else key
                subnode = f"{node}.{key}" if node else key
            else:
                sub, subpath, subnode = inner, gopath, node + "{}"
            if key in seen:
                report("duplicate", where)
            seen.add(key)
            walk(item, sub, where, subpath, subnode)

    try:
        walk(doc, schema, "", "", "")
    except _Fatal:
        assert decode is not None and decode.noted
        raise decode.noted[0] from None
    if decode is not None and decode.noted:
        raise decode.noted[0]
    if decode is not None and decode.pending is not None:
        raise decode.pending
    if pending:
        raise pending[0]
    return "strict decoding error: " + ", ".join(problems) if problems else ""


#: the fields whose Go type decodes itself (other than the durations of
#: ``DURATION_FIELDS``), by schema path: a ``resource.Quantity`` (the raw
#: JSON text, quotes taken off, through ``ParseQuantity``), a
#: ``metav1.Time`` (a JSON string through ``time.Parse(time.RFC3339)``)
_GO_CUSTOM: Final = {
    "logging.options.json.infoBufferSize": "quantity",
    "logging.options.text.infoBufferSize": "quantity",
    "reservedMemory.limits": "quantity",
    "registerWithTaints.timeAdded": "time",
}


class _GoDecode:
    """Go's encoding/json decoding a kubelet configuration file's document
    into the v1beta1 types (``encoding/json/decode.go`` through
    ``sigs.k8s.io/json``), for the error it ends with: a value of the wrong
    JSON type is noted (the innermost struct, the field path of JSON names
    without list indices or map keys, the Go type:
    ``_kubeletconfig_gotypes_v137``) and decoding goes on, the first one
    noted being the error; a type that decodes itself (a duration, a
    quantity, a time) returns its error, which ends the decoding at once
    (:class:`_Fatal`) and is the error whatever was noted before."""

    def __init__(self, go: _GoNumbers, source: str) -> None:
        self.go = go
        self.noted: list[InputError] = []
        self.source = source  # (the JSON file's text, or "")
        self.flushes = 0  # (the logging flush frequencies met so far)
        self.flush_texts: list[str] | None = None  # (their texts, read when one is needed)
        self.met: dict[str, int] = {}  # (how many times a quantity's path was met)
        self.pending: InputError | None = None  # (a zero quantity the kubelet never finishes with)
        # (the quantities' texts in the file, by key path: one walk over the
        # file for each schema path's pattern, read when one is first met)
        self.quantity_texts: dict[tuple[str | None, ...], dict[tuple[str | int, ...], list[str]]] = {}

    def wrong(self, value: object, node: str, path: str) -> None:
        """A value of the wrong JSON type for the struct, list or map at
        ``node`` (its ``GO_COMPOSITES`` key)."""
        struct, where, gotype = _GO_COMPOSITES[node]
        self.noted.append(_cannot_unmarshal(value, struct, where, gotype, path))

    def scalar(self, value: object, kind: str, path: str, gopath: str) -> None:
        """A scalar field of schema ``kind`` (not null)."""
        try:
            if self.go.check(value, kind, gopath, path):
                return
        except InputError as e:  # (a number: noted, as encoding/json notes it)
            self.noted.append(e)
            return
        if isinstance(value, str) and kind in ("string", "any") or isinstance(value, bool) and kind == "bool":
            return
        struct, where, gotype = _GO_FIELDS.get(gopath, ("KubeletConfiguration", gopath,
                                                        _GO_KIND_TYPES.get(kind, kind)))
        self.noted.append(_cannot_unmarshal(value, struct, where, gotype, path))

    def fatal(self, message: str, path: str) -> None:
        """An error that ends the decoding."""
        self.noted.insert(0, InputError(f"failed to decode: {message}", path=path))
        raise _Fatal

    def duration(self, value: object, how: str, path: str, gopath: str) -> None:
        """A ``metav1.Duration`` field (``how``: see ``DURATION_FIELDS``):
        every error it meets ends the decoding."""
        if how == "flush":
            self.flushes += 1
        if isinstance(value, bool) or value is not None and not isinstance(value, (str, int, float)):
            if how == "flush":
                # TimeOrMetaDuration: what is not a string goes to a
                # time.Duration (an int64), its JSON text quoted in the error
                if self.flush_texts is None:
                    self.flush_texts = json_value_texts(self.source, ("logging", "flushFrequency")) \
                        if self.source else []
                texts = self.flush_texts
                raw = texts[self.flushes - 1] if len(texts) >= self.flushes else _go_json_text(value, self.go)
                self.fatal(f"invalid duration {_go_quote_bytes(raw)}: json: cannot "
                           f"unmarshal {_go_json_kind(value)} into Go value of type time.Duration", path)
            # metav1.Duration reads a JSON string first
            struct, where, gotype = _GO_FIELDS.get(gopath, ("KubeletConfiguration", gopath, "string"))
            self.noted.insert(0, _cannot_unmarshal(value, struct, where, gotype, path))
            raise _Fatal
        try:
            _check_duration(value, how, path, self.go, gopath)
        except InputError as e:
            self.noted.insert(0, e if e.message.startswith("failed to decode: ")
                              else InputError(f"failed to decode: {e.message}", path=path))
            raise _Fatal from None

    def custom(self, value: object, kind: str, path: str, gopath: str) -> None:
        """A field whose type decodes itself (``_GO_CUSTOM``)."""
        raw: str | None = None
        if kind == "quantity" and self.source:
            # the value's text in the file, the one met now of a key given twice
            nth = self.met.get(path, 0)
            self.met[path] = nth + 1
            keys = _path_keys(path, gopath)
            # (every list index and a map's key stand for any: one walk
            # finds them all, so a file of many items costs linear time)
            pattern = _path_pattern(path, gopath)
            found = self.quantity_texts.get(pattern)
            if found is None:
                found = self.quantity_texts[pattern] = json_value_texts_every(self.source, pattern)
            texts = found.get(tuple(keys), [])
            raw = texts[nth] if nth < len(texts) else None
        if value is None:
            return  # (both take null as the zero value)
        if kind == "time":
            if not isinstance(value, str):
                struct, where, gotype = _GO_FIELDS.get(gopath, ("KubeletConfiguration", gopath, "string"))
                self.noted.insert(0, _cannot_unmarshal(value, struct, where, gotype, path))
                raise _Fatal
            problem = rfc3339.parse_error(value)
            if problem:
                self.fatal(problem, path)
            return
        tiny = _too_many_places(value, path)
        if tiny is not None and not (raw is not None and raw.startswith('"') and "\\" in raw):
            if not tiny[1]:
                raise tiny[0]  # (ParseQuantity does not return: podnuma's words at once)
            if self.pending is None:
                self.pending = tiny[0]  # (a zero: decoded, but not finished with later)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return  # (a number: its text, read where the field is used)
        try:
            if isinstance(value, str):
                # Quantity.UnmarshalJSON parses the JSON text between the
                # quotes as it is, escapes not read: any escape (a JSON
                # file's as written, "\u0031Gi" too; a character JSON
                # must escape, a control character, a quote, a backslash;
                # what json.Marshal escapes when sigs.k8s.io/yaml writes a
                # YAML file's string: < > & U+2028 U+2029) leaves a
                # backslash in it, which no quantity holds
                if raw is not None and raw.startswith('"') and "\\" in raw \
                        or any(c < " " or c in _JSON_ESCAPED for c in value):
                    raise QuantityError(ERR_FORMAT_WRONG)
                quantity_from_manifest(value)
            else:  # true, false, an array, an object: no quantity's text
                raise QuantityError(ERR_FORMAT_WRONG)
        except QuantityError as e:
            if str(e).startswith(_HUGE_EXPONENT):
                return  # (ParseQuantity reads it, keeping the exponent: see _load_reserved_memory)
            self.fatal(str(e), path)


#: characters a JSON string never holds as they are (Go's json.Marshal's
#: escapes beyond the control characters)
_JSON_ESCAPED = frozenset('"\\<>&\u2028\u2029')


def _cannot_unmarshal(value: object, struct: str, where: str, gotype: str, path: str) -> InputError:
    """encoding/json's words for ``value`` in a field of the wrong type
    (a number not named: the numbers a field refuses for their text are
    :meth:`_GoNumbers.refuse`'s)."""
    return InputError(f"failed to decode: json: cannot unmarshal {_go_json_kind(value)} into Go struct field "
                      f"{struct}.{where} of type {gotype}", path=path)


#: a byte that is not UTF-8, as a file's text holds it (a lone surrogate
#: U+DC80-U+DCFF; written with ``chr``, as the compiled build takes no
#: surrogate in a literal)
_NOT_UTF8_BYTE = re.compile("([" + chr(0xDC80) + "-" + chr(0xDCFF) + "])")
#: any surrogate code point
_SURROGATE = re.compile("[" + chr(0xD800) + "-" + chr(0xDFFF) + "]")


def _go_quote_bytes(text: str) -> str:
    """Go's ``%q`` of a file's text (a byte that is not UTF-8 held as a
    lone surrogate, as the file was read): such a byte is ``\\xff``."""
    if _NOT_UTF8_BYTE.search(text) is None:
        return go_quote(text)
    parts = _NOT_UTF8_BYTE.split(text)
    return '"' + "".join(f"\\x{ord(p) - 0xDC00:02x}" if len(p) == 1 and _NOT_UTF8_BYTE.match(p)
                         else go_quote(p)[1:-1] for p in parts) + '"'


def _path_keys(path: str, gopath: str) -> list[str | int]:
    """The object keys and list indices of the field path ``path`` of the
    field at schema path ``gopath`` (``reservedMemory[0].limits.memory``
    of ``reservedMemory.limits``: a map's key, dots and all, last)."""
    keys: list[str | int] = []
    rest = path
    for name in gopath.split("."):
        rest = rest.removeprefix(name)
        keys.append(name)
        while rest.startswith("["):
            close = rest.index("]")
            keys.append(int(rest[1:close]))
            rest = rest[close + 1:]
        rest = rest.removeprefix(".")
    if rest:
        keys.append(rest)
    return keys


def _path_pattern(path: str, gopath: str) -> tuple[str | None, ...]:
    """:func:`_path_keys` with each list index and the map's key as
    ``None`` (any), for :func:`json_value_texts_every`."""
    names = gopath.count(".") + 1  # (the keys' first strings; a string after them is a map's key)
    out: list[str | None] = []
    for k in _path_keys(path, gopath):
        if isinstance(k, str) and names:
            names -= 1
            out.append(k)
        else:
            out.append(None)
    return tuple(out)


def _go_json_text(value: object, go: _GoNumbers) -> str:
    """The JSON text of a decoded value as the decoder meets it: compact,
    as ``sigs.k8s.io/yaml`` writes a YAML document's values (every
    object's keys sorted, ``<``, ``>`` and ``&`` escaped as encoding/json
    escapes them); a JSON file's text as written when written compactly
    (its spacing and its strings' escapes are not kept: docs/limits.md)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return go.text(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if go.json_text else go_json_quote(value)
    if isinstance(value, Mapping):
        pairs = value.pairs if isinstance(value, JSONObject) else list(value.items())
        if not go.json_text:
            pairs = sorted(pairs, key=lambda kv: str(kv[0]))
        return "{" + ",".join(f"{go_json_quote(str(k))}:{_go_json_text(v, go)}" for k, v in pairs) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_go_json_text(v, go) for v in value) + "]"
    return go_json_quote(str(value))


#: the kinds the kubelet's config scheme knows, by (group, version)
#: (``pkg/kubelet/apis/config/scheme/scheme.go``: the internal types,
#: ``k8s.io/kubelet/config/v1beta1`` and ``k8s.io/kubelet/config/v1``,
#: their ``register.go``)
_SCHEME_KINDS: Final[dict[tuple[str, str], frozenset[str]]] = {
    ("kubelet.config.k8s.io", version): frozenset(kinds)
    for version, kinds in (
        ("v1beta1", (KIND, "SerializedNodeConfigSource", "CredentialProviderConfig", "ImagePullIntent",
                     "ImagePulledRecord")),
        ("__internal", (KIND, "SerializedNodeConfigSource", "CredentialProviderConfig", "ImagePullIntent",
                        "ImagePulledRecord")),
        ("v1", ("CredentialProviderConfig",)),
    )
}
#: ``CredentialProviderConfig`` of ``k8s.io/kubelet/config/v1/types.go``
#: (v1.37.2), the one kind of kubelet.config.k8s.io/v1: a schema as
#: ``_kubeletconfig_v137.SCHEMA`` (``any``: metav1.Duration)
_CREDENTIAL_PROVIDER_V1: Final[Any] = ("struct", {
    "apiVersion": "string",
    "kind": "string",
    "providers": ("list", ("struct", {
        "name": "string",
        "matchImages": ("list", "string"),
        "defaultCacheDuration": "any",
        "apiVersion": "string",
        "args": ("list", "string"),
        "env": ("list", ("struct", {"name": "string", "value": "string"})),
        "tokenAttributes": ("struct", {
            "serviceAccountTokenAudience": "string",
            "cacheType": "string",
            "requireServiceAccount": "bool",
            "requiredServiceAccountAnnotationKeys": ("list", "string"),
            "optionalServiceAccountAnnotationKeys": ("list", "string"),
        }),
    })),
})
#: The Go types of ``_CREDENTIAL_PROVIDER_V1``, for the words of a value of
#: the wrong type: a struct is ``("struct", its name, the type an error
#: names, {field: type})``, a list ``("list", the type an error names,
#: item type)``, a scalar ``("scalar", the type an error names, the JSON
#: kind it takes)``, a metav1.Duration ``("duration",)`` (a JSON string that
#: time.ParseDuration reads). Pointers are named by the type they point to
#: (encoding/json reports the value it stores into).
_CPC_GO_STRING: Final[Any] = ("scalar", "string", str)
_CPC_GO_STRINGS: Final[Any] = ("list", "[]string", _CPC_GO_STRING)
_CREDENTIAL_PROVIDER_V1_GO: Final[Any] = ("struct", "CredentialProviderConfig", "v1.CredentialProviderConfig", {
    "apiVersion": _CPC_GO_STRING,
    "kind": _CPC_GO_STRING,
    "providers": ("list", "[]v1.CredentialProvider", ("struct", "CredentialProvider", "v1.CredentialProvider", {
        "name": _CPC_GO_STRING,
        "matchImages": _CPC_GO_STRINGS,
        "defaultCacheDuration": ("duration",),
        "apiVersion": _CPC_GO_STRING,
        "args": _CPC_GO_STRINGS,
        "env": ("list", "[]v1.ExecEnvVar", ("struct", "ExecEnvVar", "v1.ExecEnvVar", {
            "name": _CPC_GO_STRING,
            "value": _CPC_GO_STRING,
        })),
        "tokenAttributes": ("struct", "ServiceAccountTokenAttributes", "v1.ServiceAccountTokenAttributes", {
            "serviceAccountTokenAudience": _CPC_GO_STRING,
            "cacheType": ("scalar", "v1.ServiceAccountTokenCacheType", str),
            "requireServiceAccount": ("scalar", "bool", bool),
            "requiredServiceAccountAnnotationKeys": _CPC_GO_STRINGS,
            "optionalServiceAccountAnnotationKeys": _CPC_GO_STRINGS,
        }),
    })),
})


def _go_json_kind(value: object) -> str:
    """How encoding/json names a JSON value in "cannot unmarshal X"
    (:func:`~podnuma.golang.types.go_json_kind`; ``value`` for another)."""
    return go_json_kind(value) or "value"


class _Fatal(Exception):
    """:func:`go_json_decode_error`: an error that ends decoding at once."""


def go_json_decode_error(doc: Mapping[str, Any], schema: Any, *, sort_keys: bool = False) -> str:
    """The error of decoding ``doc`` into the Go type ``schema`` (as
    ``_CREDENTIAL_PROVIDER_V1_GO``) with encoding/json (the kubelet's
    sigs.k8s.io/json), ``""`` when it decodes. A value of the wrong type is
    noted and decoding goes on: the first one noted is the error (``json:
    cannot unmarshal string into Go struct field ExecEnvVar.providers.env.value
    of type string``: the innermost struct, the path of JSON names without
    list indices, the Go type). A metav1.Duration decodes itself and its
    error ends decoding at once, whatever was noted before it: a value that
    is not a string is named as a string field's, a string that is not a
    duration has time.ParseDuration's words. Fields are met in the
    document's order (``sort_keys``: the document was YAML, which the
    codec makes JSON with every object's keys sorted); unknown fields are
    skipped; null leaves a field as it is."""
    noted: list[str] = []

    def wrong(value: object, gotype: str, struct: str, path: str) -> str:
        return f"json: cannot unmarshal {_go_json_kind(value)} into Go struct field {struct}.{path} of type {gotype}"

    def walk(value: object, schema: Any, struct: str, path: str) -> None:
        if value is None:
            return
        kind = schema[0]
        if kind == "duration":
            if not isinstance(value, str):
                noted.insert(0, wrong(value, "string", struct, path))
                raise _Fatal
            try:
                parse_duration(value)
            except ValueError as e:
                noted.insert(0, str(e))
                raise _Fatal from None
            return
        if kind == "scalar":
            if not isinstance(value, schema[2]):  # (a str, or a bool: no number is either)
                noted.append(wrong(value, schema[1], struct, path))
            return
        if kind == "list":
            if not isinstance(value, (list, tuple)):
                noted.append(wrong(value, schema[1], struct, path))
                return
            for item in value:
                walk(item, schema[2], struct, path)
            return
        _, name, gotype, fields = schema
        if not isinstance(value, Mapping):
            noted.append(wrong(value, gotype, struct, path))
            return
        pairs = value.pairs if isinstance(value, JSONObject) else list(value.items())
        if sort_keys:
            pairs = sorted(pairs, key=lambda kv: str(kv[0]))
        for key, item in pairs:
            sub = fields.get(key) if isinstance(key, str) else None
            if sub is not None:
                walk(item, sub, name, f"{path}.{key}" if path else key)

    with contextlib.suppress(_Fatal):
        walk(doc, schema, "", "")
    return noted[0] if noted else ""


#: the name of the scheme in the kubelet's "no kind is registered" message
#: (where runtime.NewScheme was called: a quirk the message carries)
_SCHEME_NAME: Final = "pkg/runtime/scheme.go:111"


#: how much of a document an error quotes
_QUOTED_MAX: Final = 2000


def _one_line(text: str) -> str:
    """A file's text as an error quotes it, on one line: its line breaks
    written ``\\n`` and ``\\r``, a byte that is not UTF-8 as U+FFFD, cut after
    ``_QUOTED_MAX`` characters."""
    more = len(text) - _QUOTED_MAX
    cut = text[:_QUOTED_MAX] if more > 0 else text
    shown = _SURROGATE.sub("\ufffd", cut).replace("\r", "\\r").replace("\n", "\\n")
    return shown + (f"... ({more} more characters)" if more > 0 else "")


#: how the codec's first step (the type of the document) refuses a
#: document that is not an object: encoding/json's words for the struct it
#: decodes ``apiVersion`` and ``kind`` into
_NO_TYPE_STRUCT: Final = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
                          'Kind string "json:\\"kind,omitempty\\"" }')


def not_a_config_object(value: object) -> InputError:
    """The kubelet's loader's error for a file whose document is not an
    object (a list, a string, a number, a boolean)."""
    return InputError("failed to decode: couldn't get version/kind; json parse error: json: cannot unmarshal "
                      f"{_go_json_kind(value)} into Go value of type {_NO_TYPE_STRUCT}")


def check_config_file_type(doc: Mapping[str, Any], *, from_yaml: bool = False, text: str | None = None) -> None:
    """Refuse a configuration file the kubelet's loader refuses for its
    ``apiVersion`` and ``kind`` (``InputError``, the message the kubelet's
    without the document it quotes).

    The kubelet's ``--config`` file (``cmd/kubelet/app/server.go``
    ``loadConfigFile``; ``pkg/kubelet/kubeletconfig/configfiles``;
    ``pkg/kubelet/kubeletconfig/util/codec`` ``DecodeKubeletConfiguration``)
    goes through the codec's universal decoder
    (``k8s.io/apimachinery/pkg/runtime/serializer/json/json.go`` with the
    ``SimpleMetaFactory`` of ``meta.go``), which takes the type from the
    document alone: no default group, version or kind. In its order:
    ``apiVersion``/``kind`` that are not strings (``null`` is an empty
    string); an ``apiVersion`` with two slashes or more; an empty kind;
    an empty version (``kubelet.config.k8s.io/``, ``/``); a kind the scheme
    does not know for that version; and a kind it knows that is not a
    ``KubeletConfiguration``, which decodes and is then refused. Quirk kept:
    ``kubelet.config.k8s.io/__internal`` is a version the scheme knows (the
    kubelet would decode the internal form); podnuma does not read that form
    and says so. A ``kubelet.config.k8s.io/v1`` ``CredentialProviderConfig``
    with an unknown or duplicate field fails the strict decoding, and the
    lenient decoder (v1beta1 only) cannot decode it: ``failed lenient
    decoding: strict decoding error: ...`` (``from_yaml``: the file was
    YAML, not JSON, so its fields are met in sorted order). An inline ``kubeletConfig`` of a scenario, and the file a
    scenario's ``kubeletConfigFile`` names, are not the kubelet's file: the
    scenario contract gives them the v1beta1 apiVersion and kind when absent.
    ``text``: the file's text, which the kubelet quotes whole when the kind
    or the version is missing (``Object 'Kind' is missing in '...'``; here
    on one line, see :func:`_one_line`).
    """
    values: dict[str, str] = {}
    for field in ("apiVersion", "kind"):
        value = doc.get(field)
        if value is not None and not isinstance(value, str):
            kind = _go_json_kind(value)
            raise InputError(
                "failed to decode: couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{kind} into Go struct field .{field} of type string", path=field)
        values[field] = value or ""
    api, kind = values["apiVersion"], values["kind"]
    if api.count("/") > 1:
        raise InputError(f"failed to decode: unexpected GroupVersion string: {api}", path="apiVersion")
    group, _, version = api.rpartition("/") if api != "/" else ("", "", "")
    needs = f"a kubelet configuration file gives apiVersion: {API_VERSION} and kind: {KIND}"
    quoted = "" if text is None else f" in '{_one_line(text)}'"
    if not kind:
        raise InputError(f"failed to decode: Object 'Kind' is missing{quoted} ({needs})")
    if not version:
        raise InputError(f"failed to decode: Object 'apiVersion' is missing{quoted} ({needs})")
    gv = f"{group}/{version}" if group else version
    if kind not in _SCHEME_KINDS.get((group, version), ()):
        raise InputError(
            f'failed to decode: no kind "{kind}" is registered for version "{gv}" in scheme "{_SCHEME_NAME}"',
            path="kind")
    if kind != KIND and (group, version) == ("kubelet.config.k8s.io", "v1"):
        # strict decoding fails on an unknown or duplicate field; the
        # lenient decoder has only v1beta1 and the internal version, so
        # the kubelet gives the strict error
        # a value of the wrong type ends the strict decoding before its
        # strict errors count, and fails the lenient one alike
        wrong = go_json_decode_error(doc, _CREDENTIAL_PROVIDER_V1_GO, sort_keys=from_yaml)
        if wrong:
            raise InputError(f"failed to decode: {wrong}")
        strict = strict_decoding_error(doc, _CREDENTIAL_PROVIDER_V1, sort_keys=from_yaml)
        if strict:
            # (one line: go-yaml's list of duplicate keys is on lines of its own)
            raise InputError(f"failed lenient decoding: {strict}".replace("\n  ", " "))
    if kind != KIND:
        raise InputError(f"failed to cast object to KubeletConfiguration, unexpected type: {gv}, Kind={kind}",
                         path="kind")
    if version == "__internal":
        raise InputError(f"apiVersion {api}: the kubelet's internal form, which podnuma does not read; "
                         f"give apiVersion: {API_VERSION}", path="apiVersion")


#: how the kubelet refuses a feature gate of its configuration file: the
#: v1beta1 defaulting (``pkg/kubelet/apis/config/v1beta1/defaults.go``)
#: merges the file's gates into a copy of the process's and panics when
#: one cannot be set; the process dies with Go's "panic: " before the text
GATES_PANIC: Final = "panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error"
#: how the kubelet refuses a feature gate given by a flag (and how podnuma
#: words a scenario's configuration, whose gates the scenario contract
#: sets first): ``cmd/kubelet/app/server.go``
GATES_FLAGS: Final = "failed to set feature gates from initial flags-based config"


def load_kubelet_config(doc: Mapping[str, Any], *, gates_words: str = GATES_FLAGS) -> KubeletConfig:
    """Decode a ``KubeletConfiguration`` document as the kubelet's codec
    does and apply the v1beta1 defaults.

    Unknown and duplicate fields decode leniently, with the kubelet's
    warning in ``decode_warning``. Raises ``InputError`` (with the field
    path) for values of the wrong type and unparsable quantities, and
    ``KubeletStartupError`` when the feature gates cannot be set (the
    kubelet's first start-up step), in ``gates_words`` (:data:`GATES_FLAGS`,
    or :data:`GATES_PANIC` for the kubelet's own file) before the reason.
    """
    raw = expect_mapping(doc, "")
    warning = strict_decoding_error(raw)

    if raw.get("apiVersion") is not None:
        api = expect_str(raw["apiVersion"], "apiVersion")
        if api != API_VERSION:
            raise InputError(f"apiVersion must be {API_VERSION}, got {api!r}", path="apiVersion")
    if raw.get("kind") is not None:
        kind = expect_str(raw["kind"], "kind")
        if kind != KIND:
            raise InputError(f"kind must be {KIND}, got {kind!r}", path="kind")

    def string_field(name: str, default: str) -> str:
        value = raw.get(name)
        if value is None:
            return default
        text = expect_str(value, name)
        return text or default  # defaults.go fills empty strings too

    def options_field(name: str) -> dict[str, str]:
        return _string_map(raw.get(name), name) or {}

    gates = FeatureGates.defaults()
    if raw.get("featureGates") is not None:
        fg_raw = expect_mapping(raw["featureGates"], "featureGates")
        settings: dict[str, bool] = {}
        for k, v in fg_raw.items():
            key = expect_str(k, "featureGates")
            # a null value is false (the zero value encoding/json stores)
            settings[key] = False if v is None else expect_bool(v, _key_path("featureGates", key))
        try:
            gates = FeatureGates.from_mapping(settings)
        except KubeletStartupError as e:
            raise KubeletStartupError(f"{gates_words}: {e}") from None

    cpus_text = string_field("reservedSystemCPUs", "")
    reserved_cpus: CPUSet | None = None
    if cpus_text:
        try:
            reserved_cpus = parse_go_cpuset(cpus_text)
        except ValueError:
            reserved_cpus = None  # reported by validate_kubelet_config

    kube_reserved, kube_texts = _reserved_map(raw.get("kubeReserved"), "kubeReserved")
    system_reserved, system_texts = _reserved_map(raw.get("systemReserved"), "systemReserved")

    merge = False
    if raw.get("mergeDefaultEvictionSettings") is not None:
        merge = expect_bool(raw["mergeDefaultEvictionSettings"], "mergeDefaultEvictionSettings")
    eviction = _string_map(raw.get("evictionHard"), "evictionHard")
    if eviction is None:
        eviction = dict(DEFAULT_EVICTION_HARD)
    elif merge:
        for k, v in DEFAULT_EVICTION_HARD.items():
            eviction.setdefault(k, v)

    def int32_field(name: str) -> int:
        value = raw.get(name)
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise wrong_type(name, "an integer", value)
        if not _INT32_MIN <= value <= _INT32_MAX:
            raise InputError(f"value {value} out of range for int32", path=name)
        return int(value)

    set_not_modelled = tuple(
        name for name in NOT_MODELLED
        if raw.get(name) not in (None, "", [], {}, 0, "0s")
    )

    return KubeletConfig(
        max_pods=int32_field("maxPods") or 110,  # defaults.go: 0 -> 110
        pods_per_core=int32_field("podsPerCore"),
        not_modelled_fields=set_not_modelled,
        decode_warning=warning,
        feature_gates=gates,
        cpu_manager_policy=string_field("cpuManagerPolicy", "none"),
        cpu_manager_policy_options=options_field("cpuManagerPolicyOptions"),
        reserved_system_cpus=reserved_cpus,
        kube_reserved=kube_reserved,
        system_reserved=system_reserved,
        eviction_hard=eviction,
        memory_manager_policy=string_field("memoryManagerPolicy", "None"),
        reserved_memory=_load_reserved_memory(raw.get("reservedMemory"), "reservedMemory",
                                              string_field("memoryManagerPolicy", "None")),
        topology_manager_policy=string_field("topologyManagerPolicy", "none"),
        topology_manager_scope=string_field("topologyManagerScope", "container"),
        topology_manager_policy_options=options_field("topologyManagerPolicyOptions"),
        merge_default_eviction_settings=merge,
        reserved_system_cpus_text=cpus_text,
        kube_reserved_text=kube_texts,
        system_reserved_text=system_texts,
        system_reserved_cgroup=string_field("systemReservedCgroup", ""),
        kube_reserved_cgroup=string_field("kubeReservedCgroup", ""),
        cgroups=_cgroup_settings(raw),
    )


def _cgroup_settings(raw: Mapping[str, Any]) -> CgroupSettings:
    """The cgroup-shaping fields of a decoded document (see :class:`CgroupSettings`)."""
    out = CgroupSettings()
    if raw.get("memoryThrottlingFactor") is not None:
        factor = raw["memoryThrottlingFactor"]
        if isinstance(factor, bool) or not isinstance(factor, (int, float)):
            raise wrong_type("memoryThrottlingFactor", "a number", factor)
        out = out.replace(memory_throttling_factor=float(factor))
    if raw.get("memoryReservationPolicy") is not None:
        policy = expect_str(raw["memoryReservationPolicy"], "memoryReservationPolicy")
        out = out.replace(memory_reservation_policy=policy or "None")
    if raw.get("cpuCFSQuota") is not None:
        out = out.replace(cpu_cfs_quota=expect_bool(raw["cpuCFSQuota"], "cpuCFSQuota"))
    if raw.get("cpuCFSQuotaPeriod") is not None:
        text = expect_str(raw["cpuCFSQuotaPeriod"], "cpuCFSQuotaPeriod")
        try:
            out = out.replace(cpu_cfs_quota_period=parse_duration(text))
        except ValueError as e:
            raise InputError(str(e), path="cpuCFSQuotaPeriod") from None
    if raw.get("podPidsLimit") is not None:
        value = raw["podPidsLimit"]
        if isinstance(value, bool) or not isinstance(value, int) or not -(1 << 63) <= value < (1 << 63):
            raise wrong_type("podPidsLimit", "an int64", value)
        out = out.replace(pod_pids_limit=value if value >= 0 else -1)
    if raw.get("singleProcessOOMKill") is not None:
        out = out.replace(single_process_oom_kill=expect_bool(raw["singleProcessOOMKill"], "singleProcessOOMKill"))
    if raw.get("cgroupsPerQOS") is not None:
        out = out.replace(cgroups_per_qos=expect_bool(raw["cgroupsPerQOS"], "cgroupsPerQOS"))
    if raw.get("cgroupRoot") is not None:
        out = out.replace(cgroup_root=expect_str(raw["cgroupRoot"], "cgroupRoot"))
    if raw.get("systemCgroups") is not None:
        out = out.replace(system_cgroups=expect_str(raw["systemCgroups"], "systemCgroups"))
    enforced = raw.get("enforceNodeAllocatable")
    if enforced is not None:  # (null: the default; [] stays empty)
        if not isinstance(enforced, list):
            raise wrong_type("enforceNodeAllocatable", "a list of strings", enforced)
        # encoding/json sets a null element of a []string to "" (the zero
        # value), which validation then refuses as an unknown option
        out = out.replace(enforce_node_allocatable=tuple(
            "" if v is None else expect_str(v, f"enforceNodeAllocatable[{i}]") for i, v in enumerate(enforced)))
    return out


# --------------------------------------------------------------------------
# Go formatting / parsing helpers


_GO_FLOAT_RE: Final = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
    re.IGNORECASE,
)


def _float32(value: float) -> float:
    try:
        result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        result = math.copysign(math.inf, value)
    return result


def _parse_percentage(text: str) -> float:
    """``parsePercentage``: ``float32(ParseFloat(trimmed, 32)) / 100``."""
    number = text.rstrip("%")
    if not _GO_FLOAT_RE.fullmatch(number):
        raise ValueError(f"strconv.ParseFloat: parsing {go_quote(number)}: invalid syntax")
    value = _float32(float(number))
    if math.isinf(value) and not math.isinf(float(number)):
        raise ValueError(f"strconv.ParseFloat: parsing {go_quote(number)}: value out of range")
    return _float32(value / 100)


def _parse_threshold(signal: str, value: str) -> Threshold | None:
    """``parseThresholdStatement``; ``None`` for the ignored 0% and 100%."""
    if signal not in EVICTION_SIGNALS:
        raise KubeletStartupError(f"unsupported eviction signal {signal}")
    if value.endswith("%"):
        if value in ("0%", "100%"):
            return None
        try:
            percentage = _parse_percentage(value)
        except ValueError as e:
            raise KubeletStartupError(str(e)) from None
        if percentage < 0:
            raise KubeletStartupError(
                f"eviction percentage threshold {signal} must be >= 0%: {value}"
            )
        if percentage > 1:
            raise KubeletStartupError(
                f"eviction percentage threshold {signal} must be <= 100%: {value}"
            )
        return Threshold(signal=signal, percentage=percentage)
    try:
        quantity = parse_quantity(value)
    except QuantityError as e:
        raise KubeletStartupError(str(e)) from None
    if quantity.sign() <= 0:
        raise KubeletStartupError(f"eviction threshold {signal} must be positive: {quantity}")
    return Threshold(signal=signal, quantity=quantity)


def hard_eviction_thresholds(cfg: KubeletConfig) -> tuple[Threshold, ...]:
    """``ParseThresholdConfig`` for ``evictionHard`` (signals visited by name;
    Go visits the map in random order, so only the first error may differ)."""
    out: list[Threshold] = []
    for signal in sorted(cfg.eviction_hard):
        threshold = _parse_threshold(signal, cfg.eviction_hard[signal])
        if threshold is not None:
            out.append(threshold)
    return tuple(out)


# --------------------------------------------------------------------------
# Start-up validation


def _validation_errors(cfg: KubeletConfig) -> list[str]:
    """``ValidateKubeletConfiguration``, for the fields podnuma reads, in
    the order of ``validation.go`` (systemCgroups, cpuCFSQuotaPeriod,
    maxPods, podsPerCore, topologyManagerPolicy/Scope,
    enforceNodeAllocatable, reservedSystemCPUs, reservedMemory,
    memoryThrottlingFactor, memoryReservationPolicy)."""
    errors: list[str] = []
    if cfg.cgroups.system_cgroups and not cfg.cgroups.cgroup_root:
        errors.append(
            "invalid configuration: systemCgroups (--system-cgroups) was specified and cgroupRoot "
            "(--cgroup-root) was not specified"
        )
    # the kubelet prints the metav1.Duration struct with %v: "{50ms}"
    period = cfg.cgroups.cpu_cfs_quota_period
    if not cfg.feature_gates.enabled("CustomCPUCFSQuotaPeriod") and period != 100 * MILLISECOND:
        errors.append(
            f"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {{{format_duration(period)}}} "
            "requires feature gate CustomCPUCFSQuotaPeriod"
        )
    if cfg.feature_gates.enabled("CustomCPUCFSQuotaPeriod") and not MILLISECOND <= period <= SECOND:
        errors.append(
            f"invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) {{{format_duration(period)}}} "
            "must be between 1ms and 1sec, inclusive"
        )
    if cfg.max_pods < 0:
        errors.append(
            f"invalid configuration: maxPods (--max-pods) {cfg.max_pods} must not be a negative number"
        )
    if cfg.pods_per_core < 0:
        errors.append(
            "invalid configuration: podsPerCore (--pods-per-core) "
            f"{cfg.pods_per_core} must not be a negative number"
        )
    if cfg.topology_manager_policy not in TOPOLOGY_MANAGER_POLICIES:
        choices = " ".join(go_quote(p) for p in TOPOLOGY_MANAGER_POLICIES)
        errors.append(
            "invalid configuration: topologyManagerPolicy (--topology-manager-policy) "
            f"{go_quote(cfg.topology_manager_policy)} must be one of: [{choices}]"
        )
    if cfg.topology_manager_scope not in TOPOLOGY_MANAGER_SCOPES:
        errors.append(
            "invalid configuration: topologyManagerScope (--topology-manager-scope) "
            f"{go_quote(cfg.topology_manager_scope)} must be one of: "
            '"container", or "pod"'
        )
    errors += _enforcement_errors(cfg)
    if cfg.reserved_system_cpus_text:
        if cfg.system_reserved_cgroup or cfg.kube_reserved_cgroup:
            errors.append(
                "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
                "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
                "(--kube-reserved-cgroup)"
            )
        try:
            parse_go_cpuset(cfg.reserved_system_cpus_text)
        except ValueError as e:
            errors.append(
                "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
                f"{cfg.reserved_system_cpus_text}, error: {e}"
            )
    # validateReservedMemoryConfiguration (limits visited by name).
    seen: dict[int, set[str]] = {}
    for reservation in cfg.reserved_memory:
        numa = reservation.numa_node
        names = seen.setdefault(numa, set())
        for name in sorted(reservation.limits):
            quantity = reservation.limits[name]
            if not (name == "memory" or is_hugepage_resource(name)):
                errors.append(
                    f"invalid configuration: the limit type {go_quote(name)} for NUMA node {numa} is not supported, "
                    "only [memory hugepages-<HugePageSize>] is accepted"
                )
            if quantity.is_zero():
                errors.append(
                    f"invalid configuration: reserved memory may not be zero for NUMA node {numa} and resource "
                    f"{go_quote(name)}"
                )
            if name in names:
                errors.append(
                    "invalid configuration: the reserved memory has a duplicate value for NUMA node "
                    f"{numa} and resource {go_quote(name)}"
                )
            names.add(name)
    memory_qos = cfg.feature_gates.enabled("MemoryQoS")
    factor = cfg.cgroups.memory_throttling_factor
    if not memory_qos and factor is not None and factor != 0.9:
        errors.append(
            "invalid configuration: memoryThrottlingFactor must not be set when MemoryQoS feature gate is disabled"
        )
    if factor is not None and (factor <= 0 or factor > 1.0):
        errors.append(
            f"invalid configuration: memoryThrottlingFactor {go_format_float_v(factor)} must be greater "
            "than 0 and less than or equal to 1.0"
        )
    policy = cfg.cgroups.memory_reservation_policy
    if not memory_qos and policy == "TieredReservation":
        errors.append(
            f"invalid configuration: memoryReservationPolicy {go_quote(policy)} requires MemoryQoS "
            "feature gate to be enabled"
        )
    if policy not in ("None", "TieredReservation"):
        errors.append(
            f"invalid configuration: option {go_quote(policy)} specified for memoryReservationPolicy. "
            'Valid options are "None" or "TieredReservation"'
        )
    return errors


def _enforcement_errors(cfg: KubeletConfig) -> list[str]:
    """``ValidateKubeletConfiguration`` on ``enforceNodeAllocatable``, in
    its order: a reserved value beside its compressible form; then value by
    value, a repeat once said and skipped, the reserved cgroup a reserved
    value needs, ``none`` beside anything, an unknown value (both skip the
    last check), and ``cgroupsPerQOS`` for every other value."""
    flag = "enforceNodeAllocatable (--enforce-node-allocatable)"
    values = cfg.cgroups.enforce_node_allocatable
    errors: list[str] = []
    for plain, compressible in ((ENFORCE_SYSTEM, ENFORCE_SYSTEM_COMPRESSIBLE), (ENFORCE_KUBE, ENFORCE_KUBE_COMPRESSIBLE)):
        if plain in values and compressible in values:
            errors.append(f"invalid configuration: both {go_quote(plain)} and {go_quote(compressible)} cannot be "
                          f"specified together in {flag}")
    seen: set[str] = set()
    for value in values:
        if value in seen:
            errors.append(f"invalid configuration: duplicated enforcements {go_quote(value)} in {flag}")
            continue
        seen.add(value)
        if value in (ENFORCE_SYSTEM, ENFORCE_SYSTEM_COMPRESSIBLE):
            if not cfg.system_reserved_cgroup:
                errors.append("invalid configuration: systemReservedCgroup (--system-reserved-cgroup) must be "
                              f"specified when {go_quote(ENFORCE_SYSTEM)} or {go_quote(ENFORCE_SYSTEM_COMPRESSIBLE)} "
                              f"included in {flag}")
        elif value in (ENFORCE_KUBE, ENFORCE_KUBE_COMPRESSIBLE):
            if not cfg.kube_reserved_cgroup:
                errors.append("invalid configuration: kubeReservedCgroup (--kube-reserved-cgroup) must be "
                              f"specified when {go_quote(ENFORCE_KUBE)} or {go_quote(ENFORCE_KUBE_COMPRESSIBLE)} "
                              f"included in {flag}")
        elif value == ENFORCE_NONE:
            if len(values) > 1:
                errors.append(f"invalid configuration: {flag} may not contain additional enforcements when "
                              f"{go_quote(ENFORCE_NONE)} is specified")
            continue
        elif value != ENFORCE_PODS:
            valid = ", ".join(go_quote(v) for v in (ENFORCE_PODS, ENFORCE_SYSTEM, ENFORCE_SYSTEM_COMPRESSIBLE,
                                                    ENFORCE_KUBE, ENFORCE_KUBE_COMPRESSIBLE))
            errors.append(f"invalid configuration: option {go_quote(value)} specified for {flag}. "
                          f"Valid options are {valid} or {go_quote(ENFORCE_NONE)}")
            continue
        if not cfg.cgroups.cgroups_per_qos:
            errors.append("invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when "
                          f"{go_quote(value)} contained in {flag}")
    return errors


def check_reserved_system_cpus(cfg: KubeletConfig, online_cpus: CPUSet) -> None:
    """``getReservedCPUs``: the list must be a subset of the online CPUs."""
    cpus = cfg.reserved_system_cpus
    if cpus is None or cpus.is_empty():
        return
    if not cpus.is_subset_of(online_cpus):
        raise KubeletStartupError(
            f"reserved-cpus: {cfg.reserved_system_cpus_text} is not a subset of "
            f"online-cpus: {online_cpus}"
        )


def effective_reserved(
    cfg: KubeletConfig,
) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """(kubeReserved, systemReserved) after the ``reservedSystemCPUs`` override
    of server.go: with a non-empty list, kubeReserved loses ``cpu`` and
    systemReserved ``cpu`` becomes the list's size. Also checks what
    ``parseResourceList`` checks (``KubeletStartupError``)."""
    kube = dict(cfg.kube_reserved)
    system = dict(cfg.system_reserved)
    kube_text = dict(cfg.kube_reserved_text)
    system_text = dict(cfg.system_reserved_text)
    cpus = cfg.reserved_system_cpus
    if cpus is not None and not cpus.is_empty():
        kube.pop("cpu", None)
        kube_text.pop("cpu", None)
        system["cpu"] = Quantity.from_int(cpus.size())
        system_text["cpu"] = str(cpus.size())
    for flag, parsed, texts in (
        ("--kube-reserved", kube, kube_text),
        ("--system-reserved", system, system_text),
    ):
        for name in sorted(parsed):
            if name not in RESERVABLE_RESOURCES:
                raise KubeletStartupError(
                    f"{flag} value failed to parse: cannot reserve {go_quote(name)} resource"
                )
            if parsed[name].sign() < 0:
                raise KubeletStartupError(
                    f"{flag} value failed to parse: resource quantity for {go_quote(name)} "
                    f"cannot be negative: {texts.get(name, str(parsed[name]))}"
                )
        cpu = parsed.get("cpu")
        if cpu is not None:
            # parseResourceList rounds cpu to millicores (SetMilli): the
            # quantity then holds (millis, -3), as start-up messages show
            millis = (cpu.scaled_value(-6) + 500) // 1000
            parsed["cpu"] = Quantity(millis * 10**6, cpu.format, _rep=(False, millis, -3))
    return kube, system


def validate_kubelet_config(cfg: KubeletConfig, online_cpus: CPUSet | None = None) -> None:
    """The checks the kubelet makes at start-up, in its order, before the
    resource managers' own ones: configuration validation (all errors
    aggregated), ``reservedSystemCPUs`` against the online CPUs (when
    ``online_cpus`` is given), kube/system reserved, ``evictionHard``, then
    the CPU and memory manager policy names. Raises ``KubeletStartupError``.

    The CPU/memory/topology policy *options* and the memory manager's
    ``reservedMemory`` consistency are checked by their managers.
    """
    errors = _validation_errors(cfg)
    if errors:
        raise KubeletStartupError(aggregate_message(errors))
    if online_cpus is not None:
        check_reserved_system_cpus(cfg, online_cpus)
    effective_reserved(cfg)
    hard_eviction_thresholds(cfg)
    # Policy names are the managers' own checks (their NewManager, in the
    # container manager's order: topology, CPU, memory), not the
    # configuration's: an unknown CPU policy is reported after the topology
    # manager's errors, an unknown memory policy after the CPU manager's.


# --------------------------------------------------------------------------
# Node allocatable


def _threshold_quantity(threshold: Threshold, capacity: Quantity) -> Quantity:
    """``GetThresholdQuantity``: the quantity, or int64(capacity * percentage)."""
    if threshold.quantity is not None:
        return threshold.quantity
    percentage = threshold.percentage or 0.0
    product = float(capacity.value()) * percentage
    amount = 0 if math.isnan(product) or math.isinf(product) else int(product)
    return Quantity.from_nanos(amount * 10**9, Format.BINARY_SI)


def node_allocatable_reservation(
    cfg: KubeletConfig, capacity: Mapping[str, Quantity]
) -> dict[str, Quantity]:
    """``GetNodeAllocatableReservation``: per capacity resource,
    systemReserved + kubeReserved + the hard eviction reservation
    (``memory.available`` -> memory, ``nodefs.available`` ->
    ephemeral-storage, percentages of capacity); zero sums are omitted."""
    kube, system = effective_reserved(cfg)
    eviction: dict[str, Quantity] = {}
    for threshold in hard_eviction_thresholds(cfg):
        if threshold.signal == "memory.available":
            resource = "memory"
        elif threshold.signal == "nodefs.available":
            resource = "ephemeral-storage"
        else:
            continue
        cap = capacity.get(resource, Quantity.zero())
        eviction[resource] = _threshold_quantity(threshold, cap)
    result: dict[str, Quantity] = {}
    for name in capacity:
        value = Quantity.zero()
        for source in (system, kube, eviction):
            if name in source:
                value = value + source[name]
        if not value.is_zero():
            result[name] = value
    return result


def check_node_allocatable(
    capacity: Mapping[str, Quantity], reservation: Mapping[str, Quantity]
) -> None:
    """``validateNodeAllocatable`` (``ContainerManager.Start``, after the CPU
    and memory managers started): a reservation larger than the capacity of
    its resource stops the kubelet. Upstream walks the reservation map in Go
    order (random); here by resource name, so the message is stable. The
    quantities print as Go's ``%v`` prints a ``resource.Quantity`` value:
    the struct, not the number (an upstream quirk reproduced)."""
    errors = []
    for name in sorted(reservation):
        reserved = reservation[name]
        cap = capacity.get(name, Quantity.zero())
        if (cap - reserved).sign() < 0:
            errors.append(
                f"Resource {go_quote(name)} has a reservation of {reserved.go_value_text()} but "
                f"capacity of {cap.go_value_text()}. Expected capacity >= reservation."
            )
    if errors:
        raise KubeletStartupError(
            "invalid Node Allocatable configuration. " + " ".join(errors)
        )


def reserved_cpu_millis(cfg: KubeletConfig) -> int:
    """kubeReserved + systemReserved CPU in millicores, after the
    ``reservedSystemCPUs`` override (0 when nothing is reserved)."""
    kube, system = effective_reserved(cfg)
    total = Quantity.zero()
    for source in (system, kube):
        if "cpu" in source:
            total = total + source["cpu"]
    return total.milli_value()
