"""Extreme resource quantities against the real kubelet code (``kubelet-oracle``).

Quantities whose ``Value()``/``MilliValue()`` leave int64 do not give the
kubelet their exact value: apimachinery's int64 form returns 0, its inf.Dec
form wraps around (and multiplies by ``int64(math.Pow10(n))``, which is
math.MinInt64 on amd64 for n >= 19), the scheduler framework sums wrap and a
pod's own request counts as ``max(0, amount)``. Each row of the table runs
one pod through both engines, with the CPU and memory managers ``None`` and
``Static``, and must give the same admission, reason, message and
allocations. Pods the API server refuses are set aside by ``compare`` (the
oracle only defaults pods); see docs/oracle.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.oracle.harness import compare, run_oracle, run_podnuma, write_scenario

EXTREME = [
    "1e30", "1e400", "1e18", "1e19", "1e16", "9E", "10E", "999E",
    "9223372036854775807", "9223372036854775808", "9223372036854776", "9223372036854775",
    "123456789012345678901234567890", "1" * 60, "0." + "0" * 40 + "1",
    "100Ei", "8Ei", "7Ei", "1Ei", "1Pi", "5000Pi", "8191Pi", "8192Pi", "1.5Gi", "1.5Ei", "0.5Ei",
    "1n", "0.5n", "1e-20", "1e-3", "2e-3", "1.5", "0.0001", "5e-05", "9.223372036854775807e18",
    "1e4294967297",  # the exponent is truncated to int32: 1e1
]
NODE = {
    "name": "n",
    "synthetic": {
        "sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2, "threadsPerCore": 1,
        "memoryPerNumaNode": "4Gi", "hugepagesPerNumaNode": {"hugepages-2Mi": "64Mi"},
    },
    "devices": {"example.com/gpu": [{"id": "g0", "numaNodes": [0]}, {"id": "g1", "numaNodes": [1]}]},
}
STATIC = {
    "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
    "cpuManagerPolicy": "static",
    "reservedSystemCPUs": "0",
    "memoryManagerPolicy": "Static",
    "kubeReserved": {"memory": "924Mi"},
    "evictionHard": {"memory.available": "100Mi"},
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
    "topologyManagerPolicy": "best-effort",
}
NONE = {"featureGates": {"PodLevelResources": True}}


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"addPod": {"metadata": {"name": name}, "spec": spec}}


def _ctr(name: str, requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": name, "resources": res}


def _ask(resource: str, qty: str, guaranteed: bool = False) -> dict[str, Any]:
    """A container asking ``qty`` of ``resource``. Hugepages and extended
    resources cannot be overcommitted: their requests must equal their
    limits (and hugepages need cpu or memory beside them)."""
    if resource in ("cpu", "memory") and not guaranteed:
        return {"requests": {resource: qty}}
    rest = {"cpu": "1", "memory": "64Mi"} if guaranteed else {"memory": "64Mi"}
    rest.pop(resource, None)
    amounts = {resource: qty, **rest}
    if guaranteed:
        return {"requests": amounts, "limits": amounts}
    return {"requests": amounts, "limits": {resource: qty}}


# Rows the API server refuses (podnuma must refuse them with a pod field
# error; the oracle only defaults pods). Worked out from apimachinery: after
# the defaults round to milli (RoundUp(-3)), extended resources need
# ``MilliValue() % 1000 == 0`` and hugepages ``Value() % pageSize == 0`` --
# both on the int64 apimachinery returns, so some huge values pass (1e30:
# Value() is 0) and some whole ones fail (7Ei: MilliValue() wraps to
# math.MinInt64).
_FRACTIONAL = {
    "0." + "0" * 40 + "1", "1n", "0.5n", "1e-20", "1e-3", "2e-3", "1.5", "0.0001", "5e-05",
}
EXTENDED_REFUSED = _FRACTIONAL | {
    "9223372036854776", "123456789012345678901234567890", "1" * 60,
    "7Ei", "1Ei", "5000Pi", "1.5Ei", "0.5Ei",
}
HUGEPAGES_REFUSED = _FRACTIONAL | {
    "1e18", "1e16", "9E", "9223372036854775807", "9223372036854776", "9223372036854775",
    "123456789012345678901234567890", "1" * 60, "100Ei", "8Ei", "8192Pi",
    "9.223372036854775807e18", "1e4294967297",
}


def _refused(resource: str, qty: str) -> bool:
    if resource.startswith("hugepages-"):
        return qty in HUGEPAGES_REFUSED
    if "/" in resource:
        return qty in EXTENDED_REFUSED
    return False


def _steps(resource: str, qty: str) -> list[dict[str, Any]]:
    """The pods one quantity is tried in: requests only (Burstable), requests
    = limits (Guaranteed, with whole CPUs and memory beside it), two
    containers and an init container (sums and maxima), pod-level
    resources, and a small pod after them (the node's requested sums)."""
    one = _ask(resource, "2Mi" if resource.startswith("hugepages-") else "1")
    steps = [
        _pod("burstable", {"containers": [{"name": "c", "resources": _ask(resource, qty)}]}),
        _pod("guaranteed", {"containers": [{"name": "c", "resources": _ask(resource, qty, True)}]}),
        _pod("sum", {
            "initContainers": [{"name": "init", "resources": _ask(resource, qty)}],
            "containers": [{"name": "a", "resources": _ask(resource, qty)}, {"name": "b", "resources": one}],
        }),
        _pod("small", {"containers": [_ctr("c", requests={"cpu": "100m", "memory": "16Mi"})]}),
    ]
    if resource in ("cpu", "memory") or resource.startswith("hugepages-"):
        pod_level = {"requests": {resource: qty}, "limits": {resource: qty}}
        if resource.startswith("hugepages-"):
            pod_level["requests"]["memory"] = pod_level["limits"]["memory"] = "64Mi"
        steps.insert(3, _pod("podlevel", {"resources": pod_level, "containers": [_ctr("c")]}))
    return steps


def _scenario(resource: str, qty: str, config: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "podnuma.io/v1",
        "kind": "Scenario",
        "node": NODE,
        "kubeletConfig": config,
        "steps": _steps(resource, qty),
    }


CASES = [
    (resource, qty, policy)
    for resource in ("cpu", "memory", "hugepages-2Mi", "example.com/gpu", "example.com/widget")
    for qty in EXTREME
    for policy in ("none", "static")
]


@pytest.fixture(scope="module")
def extreme_outcomes(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, str], Any]:
    d = tmp_path_factory.mktemp("extreme")
    paths: list[Path] = []
    docs = []
    for i, (resource, qty, policy) in enumerate(CASES):
        doc = _scenario(resource, qty, STATIC if policy == "static" else NONE)
        docs.append(doc)
        paths.append(write_scenario(doc, d / f"extreme-{i}.json"))
    theirs = run_oracle(oracle_binary, paths)
    return {case: (doc, path, o) for case, doc, path, o in zip(CASES, docs, paths, theirs, strict=True)}


@pytest.mark.parametrize(("resource", "qty", "policy"), CASES)
def test_extreme_quantity(
    resource: str, qty: str, policy: str, extreme_outcomes: dict[tuple[str, str, str], Any]
) -> None:
    doc, path, theirs = extreme_outcomes[(resource, qty, policy)]
    assert theirs.kind != "hang", theirs.message
    mine = run_podnuma(path)
    if _refused(resource, qty):
        assert mine.kind == "input" and "Invalid value" in mine.message, mine.message
        assert "addPod.spec.containers[0].resources" in mine.message, mine.message
    else:
        assert mine.kind != "input", mine.message
    diffs = compare(mine, theirs, doc)
    assert not diffs, f"{resource}={qty} ({policy}): podnuma differs from kubelet v1.37.2:\n  " + "\n  ".join(diffs)


# reservedMemory goes through Quantity.AsInt64, which fails for an inf.Dec
# (1.0Gi) or a fractional scale (1073741824000m) whatever the value: the
# kubelet then does not start.
RESERVED = ["1Gi", "1.0Gi", "1.5Gi", "1073741824000m", "1073741824", "1.073741824G", "1024Mi", "1e9"]


def test_reserved_memory_quantities(oracle_binary: str, tmp_path: Path) -> None:
    docs, paths = [], []
    for i, qty in enumerate(RESERVED):
        config = {**STATIC, "reservedMemory": [{"numaNode": 0, "limits": {"memory": qty}}]}
        doc = {
            "apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "kubeletConfig": config,
            "steps": [_pod("p", {"containers": [_ctr("c", limits={"cpu": "1", "memory": "1Gi"})]})],
        }
        docs.append(doc)
        paths.append(write_scenario(doc, tmp_path / f"reserved-{i}.json"))
    kinds = []
    for qty, doc, path, theirs in zip(RESERVED, docs, paths, run_oracle(oracle_binary, paths), strict=True):
        mine = run_podnuma(path)
        diffs = compare(mine, theirs, doc)
        assert not diffs, f"reservedMemory {qty}: podnuma differs from kubelet v1.37.2:\n  " + "\n  ".join(diffs)
        kinds.append(mine.kind)
    assert kinds.count("startup") >= 3 and kinds.count("ok") >= 3  # both sides of AsInt64 are covered
