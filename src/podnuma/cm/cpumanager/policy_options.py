"""Static CPU manager policy options.

Mirrors ``pkg/kubelet/cm/cpumanager/policy_options.go`` (v1.37): the option
names, their maturity (GA / beta / alpha) and the feature gate each needs,
``strconv.ParseBool`` value parsing, the mutual-exclusion rules, and the
machine-dependent checks of ``ValidateStaticPolicyOptions``. Every failure is
a :class:`~podnuma.errors.KubeletStartupError` carrying the kubelet's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from podnuma.api.featuregates import FeatureGateReader
from podnuma.cm.topologymanager.policy import POLICY_SINGLE_NUMA_NODE
from podnuma.errors import KubeletStartupError
from podnuma.golang.strconv import go_quote, parse_go_bool
from podnuma.machine.topology import CPUTopology

__all__ = [
    "FULL_PCPUS_ONLY_OPTION",
    "DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION",
    "ALIGN_BY_SOCKET_OPTION",
    "DISTRIBUTE_CPUS_ACROSS_CORES_OPTION",
    "STRICT_CPU_RESERVATION_OPTION",
    "PREFER_ALIGN_BY_UNCORE_CACHE_OPTION",
    "ALPHA_OPTIONS",
    "BETA_OPTIONS",
    "STABLE_OPTIONS",
    "StaticPolicyOptions",
    "check_policy_option_available",
    "new_static_policy_options",
    "validate_static_policy_options",
    "parse_go_bool",
    "go_quote",
]

FULL_PCPUS_ONLY_OPTION: Final = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: Final = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET_OPTION: Final = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: Final = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION_OPTION: Final = "strict-cpu-reservation"
PREFER_ALIGN_BY_UNCORE_CACHE_OPTION: Final = "prefer-align-cpus-by-uncorecache"

# Maturity at v1.37.2.
ALPHA_OPTIONS: Final = frozenset({ALIGN_BY_SOCKET_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION})
BETA_OPTIONS: Final = frozenset({DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION})
STABLE_OPTIONS: Final = frozenset(
    {
        FULL_PCPUS_ONLY_OPTION,
        STRICT_CPU_RESERVATION_OPTION,
        PREFER_ALIGN_BY_UNCORE_CACHE_OPTION,
    }
)

ALPHA_GATE: Final = "CPUManagerPolicyAlphaOptions"
BETA_GATE: Final = "CPUManagerPolicyBetaOptions"

# Topology manager policy name (topologymanager.PolicySingleNumaNode).



class StaticPolicyOptions:
    """``StaticPolicyOptions``: the parsed option values (all off by default)."""

    full_physical_cpus_only: bool
    distribute_cpus_across_numa: bool
    align_by_socket: bool
    distribute_cpus_across_cores: bool
    strict_cpu_reservation: bool
    prefer_align_by_uncore_cache: bool
    __slots__ = ('full_physical_cpus_only', 'distribute_cpus_across_numa', 'align_by_socket', 'distribute_cpus_across_cores', 'strict_cpu_reservation', 'prefer_align_by_uncore_cache')

    def __init__(
        self,
        full_physical_cpus_only: bool = False,
        distribute_cpus_across_numa: bool = False,
        align_by_socket: bool = False,
        distribute_cpus_across_cores: bool = False,
        strict_cpu_reservation: bool = False,
        prefer_align_by_uncore_cache: bool = False,
    ) -> None:
        self.full_physical_cpus_only = full_physical_cpus_only
        self.distribute_cpus_across_numa = distribute_cpus_across_numa
        self.align_by_socket = align_by_socket
        self.distribute_cpus_across_cores = distribute_cpus_across_cores
        self.strict_cpu_reservation = strict_cpu_reservation
        self.prefer_align_by_uncore_cache = prefer_align_by_uncore_cache

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(full_physical_cpus_only={self.full_physical_cpus_only!r}, distribute_cpus_across_numa={self.distribute_cpus_across_numa!r}, align_by_socket={self.align_by_socket!r}, distribute_cpus_across_cores={self.distribute_cpus_across_cores!r}, strict_cpu_reservation={self.strict_cpu_reservation!r}, prefer_align_by_uncore_cache={self.prefer_align_by_uncore_cache!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StaticPolicyOptions) or other.__class__ is not self.__class__:
            return False
        return (self.full_physical_cpus_only, self.distribute_cpus_across_numa, self.align_by_socket, self.distribute_cpus_across_cores, self.strict_cpu_reservation, self.prefer_align_by_uncore_cache) == (other.full_physical_cpus_only, other.distribute_cpus_across_numa, other.align_by_socket, other.distribute_cpus_across_cores, other.strict_cpu_reservation, other.prefer_align_by_uncore_cache)

    def __hash__(self) -> int:
        return hash((self.full_physical_cpus_only, self.distribute_cpus_across_numa, self.align_by_socket, self.distribute_cpus_across_cores, self.strict_cpu_reservation, self.prefer_align_by_uncore_cache))

    def __deepcopy__(self, memo: dict[int, object]) -> StaticPolicyOptions:
        return self  # immutable


_FIELD_OF: Final[dict[str, str]] = {
    FULL_PCPUS_ONLY_OPTION: "full_physical_cpus_only",
    DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "distribute_cpus_across_numa",
    ALIGN_BY_SOCKET_OPTION: "align_by_socket",
    DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "distribute_cpus_across_cores",
    STRICT_CPU_RESERVATION_OPTION: "strict_cpu_reservation",
    PREFER_ALIGN_BY_UNCORE_CACHE_OPTION: "prefer_align_by_uncore_cache",
}


def check_policy_option_available(option: str, gates: FeatureGateReader) -> None:
    """``CheckPolicyOptionAvailable``: unknown options and options whose
    maturity gate is off are refused."""
    if option not in ALPHA_OPTIONS and option not in BETA_OPTIONS and option not in STABLE_OPTIONS:
        raise KubeletStartupError(f"unknown CPU Manager Policy option: {go_quote(option)}")
    if option in ALPHA_OPTIONS and not gates.enabled(ALPHA_GATE):
        raise KubeletStartupError(
            f"CPU Manager Policy Alpha-level Options not enabled, but option {go_quote(option)} provided"
        )
    if option in BETA_OPTIONS and not gates.enabled(BETA_GATE):
        raise KubeletStartupError(
            f"CPU Manager Policy Beta-level Options not enabled, but option {go_quote(option)} provided"
        )


def _exclusive(a: str, b: str) -> KubeletStartupError:
    return KubeletStartupError(f"static policy options {a} and {b} can not be used at the same time")


def new_static_policy_options(
    opts: Mapping[str, str] | None, gates: FeatureGateReader
) -> StaticPolicyOptions:
    """``NewStaticPolicyOptions``.

    Upstream walks a Go map, so with several bad options the one reported is
    random; here options are checked in name order (deterministic).
    """
    values: dict[str, bool] = {}
    for name in sorted(opts or {}):
        value = (opts or {})[name]
        check_policy_option_available(name, gates)
        try:
            values[_FIELD_OF[name]] = parse_go_bool(value)
        except ValueError as exc:
            raise KubeletStartupError(f"bad value for option {go_quote(name)}: {exc}") from None
    result = StaticPolicyOptions(**values)

    if result.full_physical_cpus_only and result.distribute_cpus_across_cores:
        raise _exclusive(FULL_PCPUS_ONLY_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION)
    if result.distribute_cpus_across_numa and result.distribute_cpus_across_cores:
        raise _exclusive(DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION)
    if result.prefer_align_by_uncore_cache and result.distribute_cpus_across_cores:
        raise _exclusive(PREFER_ALIGN_BY_UNCORE_CACHE_OPTION, DISTRIBUTE_CPUS_ACROSS_CORES_OPTION)
    if result.prefer_align_by_uncore_cache and result.distribute_cpus_across_numa:
        raise _exclusive(PREFER_ALIGN_BY_UNCORE_CACHE_OPTION, DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION)
    return result


def validate_static_policy_options(
    opts: StaticPolicyOptions, topology: CPUTopology, topology_manager_policy: str
) -> None:
    """``ValidateStaticPolicyOptions``: checks that need the machine and the
    topology manager policy name (``none``, ``best-effort``, ``restricted``,
    ``single-numa-node``)."""
    if opts.align_by_socket:
        if topology_manager_policy == POLICY_SINGLE_NUMA_NODE:
            # "Topolgy" is upstream's spelling, reproduced.
            raise KubeletStartupError(
                f"Topolgy manager {POLICY_SINGLE_NUMA_NODE} policy is incompatible with "
                f"CPUManager {ALIGN_BY_SOCKET_OPTION} policy option"
            )
        if topology.num_sockets > topology.num_numa_nodes:
            raise KubeletStartupError(
                "Align by socket is not compatible with hardware where number of sockets "
                "are more than number of NUMA"
            )
