"""The admission results: ``GetPodAdmitResult`` and the predicate handler's
node-allocatable fit (``lifecycle/predicate.go`` over the scheduler's
``noderesources.fitsRequest``).

The fit table follows upstream's order of checks: pod count first (even for
a pod that requests nothing), then cpu, memory, ephemeral-storage, then the
scalar resources; the first failure is the one the kubelet reports.
Extended resources the node does not have are dropped first
(``removeMissingExtendedResources``), but a resource under a
``kubernetes.io/`` domain is native (``IsPrefixedNativeResource`` looks for
``kubernetes.io/`` anywhere in the name) and is checked against 0.
"""

from __future__ import annotations

import pytest

from podnuma.api.quantity import Quantity, parse_quantity
from podnuma.cm.admission import (
    REASON_UNEXPECTED,
    TopologyAffinityError,
    fits_node_allocatable,
    get_pod_admit_result,
    pod_status_message,
)


def _q(values: dict[str, str]) -> dict[str, Quantity]:
    return {k: parse_quantity(v) for k, v in values.items()}


ALLOCATABLE = {
    "cpu": "4",
    "memory": "8Gi",
    "hugepages-2Mi": "1Gi",
    "example.com/gpu": "2",
}

# (name, pod requests, other pods' requests, max pods, expected (reason, message) or None)
FIT_CASES = [
    ("nothing requested", {}, [], 110, None),
    (
        "nothing requested, but the node is full of pods",
        {},
        [{}, {}],
        2,
        ("OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"),
    ),
    ("fits exactly", {"cpu": "3", "memory": "6Gi"}, [{"cpu": "1", "memory": "2Gi"}], 110, None),
    (
        "cpu in millicores, used from the other pods",
        {"cpu": "1500m"},
        [{"cpu": "3"}],
        110,
        ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 1500, used: 3000, capacity: 4000"),
    ),
    (
        "cpu reported before memory",
        {"cpu": "5", "memory": "9Gi"},
        [],
        110,
        ("OutOfcpu", "Node didn't have enough resource: cpu, requested: 5000, used: 0, capacity: 4000"),
    ),
    (
        "memory in bytes",
        {"memory": "9Gi"},
        [],
        110,
        (
            "OutOfmemory",
            "Node didn't have enough resource: memory, requested: 9663676416, used: 0, "
            "capacity: 8589934592",
        ),
    ),
    (
        "hugepages are scalar resources",
        {"hugepages-2Mi": "512Mi"},
        [{"hugepages-2Mi": "768Mi"}],
        110,
        (
            "OutOfhugepages-2Mi",
            "Node didn't have enough resource: hugepages-2Mi, requested: 536870912, "
            "used: 805306368, capacity: 1073741824",
        ),
    ),
    (
        "a hugepage size the node lacks has capacity 0",
        {"hugepages-1Gi": "1Gi"},
        [],
        110,
        (
            "OutOfhugepages-1Gi",
            "Node didn't have enough resource: hugepages-1Gi, requested: 1073741824, "
            "used: 0, capacity: 0",
        ),
    ),
    (
        "device-plugin resource",
        {"example.com/gpu": "1"},
        [{"example.com/gpu": "2"}],
        110,
        ("OutOfexample.com/gpu", "Node didn't have enough resource: example.com/gpu, requested: 1, used: 2, capacity: 2"),
    ),
    ("an extended resource the node lacks is dropped", {"example.com/fpga": "1"}, [], 110, None),
    (
        "a kubernetes.io/ resource is native, never dropped",
        {"xkubernetes.io/fpga": "1"},
        [],
        110,
        ("OutOfxkubernetes.io/fpga", "Node didn't have enough resource: xkubernetes.io/fpga, requested: 1, used: 0, capacity: 0"),
    ),
    (
        "a prefixed native resource the node lacks",
        {"foo.kubernetes.io/bar": "1"},
        [],
        110,
        ("OutOffoo.kubernetes.io/bar", "Node didn't have enough resource: foo.kubernetes.io/bar, requested: 1, used: 0, capacity: 0"),
    ),
    (
        "pods before resources",
        {"cpu": "10"},
        [{}],
        1,
        ("OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"),
    ),
]


@pytest.mark.parametrize(
    ("requests", "others", "max_pods", "expected"),
    [c[1:] for c in FIT_CASES],
    ids=[c[0] for c in FIT_CASES],
)
def test_fits_node_allocatable(
    requests: dict[str, str],
    others: list[dict[str, str]],
    max_pods: int,
    expected: tuple[str, str] | None,
) -> None:
    result = fits_node_allocatable(
        _q(requests), [_q(o) for o in others], _q(ALLOCATABLE), max_pods=max_pods
    )
    if expected is None:
        assert result.admit, result
        return
    assert not result.admit
    assert (result.reason, result.message) == expected


def test_pod_admit_result_of_a_typed_error() -> None:
    result = get_pod_admit_result(TopologyAffinityError())
    assert (result.admit, result.reason, result.message) == (
        False,
        "TopologyAffinityError",
        "Resources cannot be allocated with Topology locality",
    )


def test_pod_admit_result_of_an_untyped_error() -> None:
    result = get_pod_admit_result(RuntimeError("boom"))
    assert (result.admit, result.reason, result.message) == (
        False,
        REASON_UNEXPECTED,
        "Allocate failed due to boom, which is unexpected",
    )
    assert get_pod_admit_result(None).admit


def test_rejected_pod_status_message() -> None:
    assert pod_status_message("x") == "Pod was rejected: x"
