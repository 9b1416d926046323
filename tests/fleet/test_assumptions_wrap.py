"""fleet analyze's contradictions on nodes past 2^63 bytes: the memory and
huge page capacities are the kubelet's int64s (``CapacityFromMachineInfo``
wraps cadvisor's uint64 bytes), and allocatable memory is what the
kubelet's quantity arithmetic makes of them (tests/oracle/test_sysfs_wrap.py
checks the same against the kubelet's own figures)."""

from __future__ import annotations

import pytest

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.fleet.assumptions import contradictions

DEFAULTS = load_kubelet_config({})
NO_MEMORY_EVICTION = load_kubelet_config({"evictionHard": {"nodefs.available": "10%"}})


@pytest.mark.parametrize("pool", ["-9223372036854775808", "-8Ei"])
def test_a_pool_of_2_to_the_63_bytes_leaves_no_allocatable_memory(pool: str) -> None:
    """A pool of 2^63 bytes is ``math.MinInt64`` in the kubelet, which
    prints it ``-9223372036854775808`` (``-8Ei`` by hand: the same int64):
    memory minus it is negative in Go's int64 (the negation wraps), so
    allocatable memory is 0, not 8 GiB + 8 EiB."""
    capacity = {"memory": "8Gi", "hugepages-1Gi": pool}
    assert contradictions(DEFAULTS, 4, allocatable={"memory": "0"}, capacity=capacity, nrt_attributes={}) == []
    (said,) = contradictions(DEFAULTS, 4, allocatable={"memory": "8092Mi"}, capacity=capacity, nrt_attributes={})
    assert said.startswith("status.allocatable memory is 8092Mi, the configuration gives 0Mi ")


def test_a_capacity_in_bytes_past_an_int64_is_wrapped_as_the_kubelet_wraps_it() -> None:
    # 2^64 - 1024 bytes (cadvisor's uint64 of 2^54 - 1 kB): the kubelet's int64 is -1024
    capacity = {"memory": "18446744073709550592"}
    assert contradictions(NO_MEMORY_EVICTION, 4, allocatable={"memory": "0"}, capacity=capacity,
                          nrt_attributes={}) == []
    # 2^64 + 8 GiB wraps to 8 GiB
    capacity = {"memory": str((1 << 64) + (8 << 30))}
    assert contradictions(NO_MEMORY_EVICTION, 4, allocatable={"memory": "8Gi"}, capacity=capacity,
                          nrt_attributes={}) == []
    (said,) = contradictions(NO_MEMORY_EVICTION, 4, allocatable={"memory": "0"}, capacity=capacity,
                             nrt_attributes={})
    assert "the configuration gives 8192Mi (capacity 8192Mi" in said


def test_ordinary_capacities_are_unchanged() -> None:
    capacity = {"memory": "8Gi", "hugepages-2Mi": "1Gi"}
    assert contradictions(DEFAULTS, 4, allocatable={"memory": "7068Mi"}, capacity=capacity, nrt_attributes={}) == []
