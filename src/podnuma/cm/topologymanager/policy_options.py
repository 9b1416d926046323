"""Topology Manager policy options.

Mirrors ``pkg/kubelet/cm/topologymanager/policy_options.go`` (v1.37):
``CheckPolicyOptionAvailable`` and ``NewPolicyOptions``. At v1.37 both
options are stable (``prefer-closest-numa-nodes`` GA in v1.32,
``max-allowable-numa-nodes`` GA in v1.35), so no alpha/beta gate is
consulted for them; the maturity machinery is kept (and tested with made-up
options) because an option's maturity decides which gate it needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from podnuma.api.featuregates import FeatureGateReader
from podnuma.errors import KubeletStartupError
from podnuma.golang.strconv import go_atoi, go_quote, parse_go_bool

__all__ = [
    "PREFER_CLOSEST_NUMA_NODES",
    "MAX_ALLOWABLE_NUMA_NODES",
    "DEFAULT_MAX_ALLOWABLE_NUMA_NODES",
    "ALPHA_OPTIONS",
    "BETA_OPTIONS",
    "STABLE_OPTIONS",
    "GATE_ALPHA_OPTIONS",
    "GATE_BETA_OPTIONS",
    "PolicyOptions",
    "check_policy_option_available",
    "new_policy_options",
]

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"

# ``defaultMaxAllowableNUMANodes`` (topology_manager.go).
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8

ALPHA_OPTIONS: frozenset[str] = frozenset()
BETA_OPTIONS: frozenset[str] = frozenset()
STABLE_OPTIONS: frozenset[str] = frozenset({PREFER_CLOSEST_NUMA_NODES, MAX_ALLOWABLE_NUMA_NODES})

GATE_ALPHA_OPTIONS = "TopologyManagerPolicyAlphaOptions"
GATE_BETA_OPTIONS = "TopologyManagerPolicyBetaOptions"



class PolicyOptions:
    """``PolicyOptions``. The zero value of Go's struct has
    ``MaxAllowableNUMANodes == 0``; ``NewPolicyOptions`` always sets 8, and so
    does this default."""

    prefer_closest_numa: bool
    max_allowable_numa_nodes: int
    __slots__ = ('prefer_closest_numa', 'max_allowable_numa_nodes')

    def __init__(
        self,
        prefer_closest_numa: bool = False,
        max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES,
    ) -> None:
        self.prefer_closest_numa = prefer_closest_numa
        self.max_allowable_numa_nodes = max_allowable_numa_nodes

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(prefer_closest_numa={self.prefer_closest_numa!r}, max_allowable_numa_nodes={self.max_allowable_numa_nodes!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PolicyOptions) or other.__class__ is not self.__class__:
            return False
        return (self.prefer_closest_numa, self.max_allowable_numa_nodes) == (other.prefer_closest_numa, other.max_allowable_numa_nodes)

    def __hash__(self) -> int:
        return hash((self.prefer_closest_numa, self.max_allowable_numa_nodes))

    def __deepcopy__(self, memo: dict[int, object]) -> PolicyOptions:
        return self  # immutable


# --- option checks ----------------------------------------------------------


def check_policy_option_available(
    option: str,
    gates: FeatureGateReader,
    *,
    alpha: Set[str] = ALPHA_OPTIONS,
    beta: Set[str] = BETA_OPTIONS,
    stable: Set[str] = STABLE_OPTIONS,
) -> str | None:
    """``CheckPolicyOptionAvailable``: ``None`` if usable, else kubelet's error
    text. The option sets are parameters so tests can add options the way
    upstream's tests insert ``fancy-*-option`` into the package sets."""
    if option not in alpha and option not in beta and option not in stable:
        return f"unknown Topology Manager Policy option: {go_quote(option)}"
    if option in alpha and not gates.enabled(GATE_ALPHA_OPTIONS):
        return (
            "topology manager policy alpha-level options not enabled, "
            f"but option {go_quote(option)} provided"
        )
    if option in beta and not gates.enabled(GATE_BETA_OPTIONS):
        return (
            "topology manager policy beta-level options not enabled, "
            f"but option {go_quote(option)} provided"
        )
    return None


def new_policy_options(
    opts: Mapping[str, str] | None,
    gates: FeatureGateReader,
    *,
    alpha: Set[str] = ALPHA_OPTIONS,
    beta: Set[str] = BETA_OPTIONS,
    stable: Set[str] = STABLE_OPTIONS,
) -> PolicyOptions:
    """``NewPolicyOptions``: parse ``topologyManagerPolicyOptions``.

    Raises ``KubeletStartupError`` with the kubelet's message. Go walks the
    map in random order, so with several bad options the reported one is
    arbitrary upstream; here options are checked in sorted name order.
    An option that passes the availability check but has no parser (only
    possible with the test-only extra sets) fails with "unsupported
    topologymanager option", as upstream's fancy options do (upstream's test
    ignores that error and only compares the returned defaults).
    """
    prefer_closest = False
    max_nodes = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name in sorted(opts or {}):
        value = (opts or {})[name]
        err = check_policy_option_available(name, gates, alpha=alpha, beta=beta, stable=stable)
        if err is not None:
            raise KubeletStartupError(err)
        if name == PREFER_CLOSEST_NUMA_NODES:
            try:
                prefer_closest = parse_go_bool(value)
            except ValueError as e:
                raise KubeletStartupError(f"bad value for option {go_quote(name)}: {e}") from None
        elif name == MAX_ALLOWABLE_NUMA_NODES:
            try:
                n = go_atoi(value)
            except ValueError as e:
                raise KubeletStartupError(
                    f"unable to convert policy option to integer {go_quote(name)}: {e}"
                ) from None
            if n < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise KubeletStartupError(
                    f"the minimum value of {go_quote(name)} should not be less than "
                    f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}"
                )
            # Above 8 the kubelet only logs a warning.
            max_nodes = n
        else:
            # Reached only by options added through the test-only sets
            # (upstream's fancy options land here too).
            raise KubeletStartupError(f"unsupported topologymanager option: {go_quote(name)} ({value})")
    return PolicyOptions(prefer_closest_numa=prefer_closest, max_allowable_numa_nodes=max_nodes)
