"""Null items and values decode as encoding/json decodes them into the Go
types: the element's zero value ("" in a []string or map[string]string,
false in a map[string]bool, the zero MemoryReservation, a zero Quantity),
and validation then judges that value as the kubelet does."""

from __future__ import annotations

import pytest

from podnuma.api.kubeletconfig import load_kubelet_config, validate_kubelet_config
from podnuma.api.quantity import Quantity
from podnuma.errors import KubeletStartupError


def test_a_null_enforcement_is_the_empty_option() -> None:
    cfg = load_kubelet_config({"enforceNodeAllocatable": ["pods", None]})
    assert cfg.cgroups.enforce_node_allocatable == ("pods", "")
    with pytest.raises(KubeletStartupError, match='option "" specified for enforceNodeAllocatable'):
        validate_kubelet_config(cfg)


def test_null_map_values_and_list_items_are_zero_values() -> None:
    cfg = load_kubelet_config({
        "cpuManagerPolicyOptions": {"full-pcpus-only": None},
        "featureGates": {"MemoryQoS": None},
        "reservedMemory": [None, {"numaNode": 1, "limits": {"memory": None}}],
    })
    assert cfg.cpu_manager_policy_options == {"full-pcpus-only": ""}
    assert not cfg.feature_gates.enabled("MemoryQoS")
    assert cfg.reserved_memory[0].numa_node == 0 and dict(cfg.reserved_memory[0].limits) == {}
    assert cfg.reserved_memory[1].limits["memory"] == Quantity.zero()


def test_system_cgroups_needs_cgroup_root_and_comes_first() -> None:
    cfg = load_kubelet_config({"systemCgroups": "/system.slice", "maxPods": -1})
    with pytest.raises(KubeletStartupError) as got:
        validate_kubelet_config(cfg)
    assert str(got.value).startswith("[invalid configuration: systemCgroups (--system-cgroups) was specified "
                                     "and cgroupRoot (--cgroup-root) was not specified, "
                                     "invalid configuration: maxPods (--max-pods) -1")
    validate_kubelet_config(load_kubelet_config({"systemCgroups": "/system.slice", "cgroupRoot": "/"}))
