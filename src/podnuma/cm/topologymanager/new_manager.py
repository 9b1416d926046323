"""The part of ``NewManager`` (``pkg/kubelet/cm/topologymanager/topology_manager.go``)
that picks the policy: the options, the NUMA-count limit and the "unknown
policy" error, in upstream order."""

from __future__ import annotations

from collections.abc import Mapping

from podnuma.api.featuregates import FeatureGateReader
from podnuma.cm.topologymanager.numa_info import NUMAInfo
from podnuma.cm.topologymanager.policy import (
    POLICY_BEST_EFFORT,
    POLICY_NONE,
    POLICY_RESTRICTED,
    POLICY_SINGLE_NUMA_NODE,
    Policy,
)
from podnuma.cm.topologymanager.policy_best_effort import BestEffortPolicy
from podnuma.cm.topologymanager.policy_none import NonePolicy
from podnuma.cm.topologymanager.policy_options import PolicyOptions, new_policy_options
from podnuma.cm.topologymanager.policy_restricted import RestrictedPolicy
from podnuma.cm.topologymanager.policy_single_numa_node import SingleNumaNodePolicy
from podnuma.errors import KubeletStartupError
from podnuma.machine.topology import Machine

__all__ = ["check_numa_count", "new_policy", "new_topology_policy"]


def new_policy(name: str, numa_info: NUMAInfo, opts: PolicyOptions) -> Policy:
    """The policy switch of ``NewManager``. Unknown names fail with the
    kubelet's ``unknown policy: "<name>"``."""
    if name == POLICY_NONE:
        return NonePolicy()
    if name == POLICY_BEST_EFFORT:
        return BestEffortPolicy(numa_info, opts)
    if name == POLICY_RESTRICTED:
        return RestrictedPolicy(numa_info, opts)
    if name == POLICY_SINGLE_NUMA_NODE:
        return SingleNumaNodePolicy(numa_info, opts)
    # Plain %s inside literal quotes upstream (not %q).
    raise KubeletStartupError(f'unknown policy: "{name}"')


def check_numa_count(policy_name: str, numa_info: NUMAInfo, opts: PolicyOptions) -> None:
    """``NewManager``'s NUMA-node limit: any policy but ``none`` fails when
    the machine has more NUMA nodes than ``max-allowable-numa-nodes``
    (default 8). Checked before the policy name is validated."""
    if policy_name != POLICY_NONE and len(numa_info.nodes) > opts.max_allowable_numa_nodes:
        raise KubeletStartupError(
            f"unsupported on machines with more than {opts.max_allowable_numa_nodes} NUMA Nodes"
        )


def new_topology_policy(
    policy_name: str,
    machine: Machine,
    policy_options: Mapping[str, str] | None,
    gates: FeatureGateReader,
) -> tuple[Policy, NUMAInfo, PolicyOptions]:
    """``NewManager``'s policy half, in upstream order: ``none``
    short-circuits (options not even parsed), then options, NUMA info
    (distances needed by prefer-closest-numa-nodes), the NUMA-count limit,
    and last the policy name. Scope selection is the caller's."""
    if policy_name == POLICY_NONE:

        return NonePolicy(), NUMAInfo.from_machine(machine), PolicyOptions()
    opts = new_policy_options(policy_options, gates)
    numa_info = NUMAInfo.from_machine(machine, opts)
    check_numa_count(policy_name, numa_info, opts)
    return new_policy(policy_name, numa_info, opts), numa_info, opts
