"""``podnuma cgroups plan`` against the kubelet's own cgroup code
(``kubelet-oracle cgroups``), cgroup v2 (systemd driver) and v1 (cgroupfs
driver): every example scenario and seeded random scenarios
(``PODNUMA_ORACLE_SEED``; ``PODNUMA_ORACLE_CGROUPS_COUNT``, default 300),
some with a ``cgroupRoot`` or ``cgroupsPerQOS: false``.
See tests/oracle/cgroups_harness.py for what is compared."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import generate
from tests.oracle.cgroups_harness import cgroup_differences
from tests.oracle.harness import env_int, random_settings, write_scenario
from tests.oracle.test_differential import EXAMPLES, ROOT, _load

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_ORACLE_CGROUPS_COUNT", 300)
CHUNK = 100


def _fail(diffs: list[tuple[str, list[str]]], total: int) -> None:
    lines = [f"{name}:\n  " + "\n  ".join(d[:12]) for name, d in diffs[:10]]
    pytest.fail(f"{len(diffs)} of {total} cgroup plans differ from the kubelet's:\n" + "\n".join(lines), pytrace=False)


def test_examples(oracle_binary: str) -> None:
    items = [(str(p.relative_to(ROOT)), _load(p), p) for p in EXAMPLES]
    stats: dict[str, int] = {}
    diffs = cgroup_differences(oracle_binary, items, stats)
    print(f"cgroups, examples: {stats}")
    if diffs:
        _fail(diffs, stats.get("compared", 0))
    # every example is compared in both versions (or refused by both engines)
    assert not stats.get("engines_differ") and not stats.get("not_sent"), stats
    assert stats.get("compared", 0) == 2 * (len(EXAMPLES) - stats.get("failed_alike", 0)) > 0, stats


#: Every third random scenario gets a pod pids limit (the generator leaves
#: ``podPidsLimit`` unset), so pod ``pids.max`` is compared on them too.
PIDS_LIMITS = (64, 1024, 4096)

#: The cgroup v2 files the random scenarios must have compared (equal in
#: both engines) at least once per chunk: container cpuset, memory, CPU
#: quota and weight, huge page limits; pod pids; the node and QoS tiers.
V2_COVERAGE = (
    "container cpuset.cpus", "container cpuset.mems", "container memory.max", "container cpu.max",
    "container cpu.weight", "container hugetlb.2MB.max", "pod pids.max", "pod cpu.max", "pod memory.max",
    "pod hugetlb.2MB.max", "node cpu.weight", "node memory.max", "node hugetlb.2MB.max", "qos cpu.weight",
    "qos hugetlb.2MB.max",
)  # fmt: skip


def _vary_layout(index: int, doc: dict[str, Any]) -> None:
    """Every fifth random scenario gets a cgroup root of its own, every
    seventh ``cgroupsPerQOS: false`` (with no enforcement, as the kubelet
    requires), so the tree's place is compared on mixed pods too."""
    if index % 5 == 1:
        doc.setdefault("kubeletConfig", {})["cgroupRoot"] = f"/r/n-{index % 3}"
    if index % 7 == 2:
        kc = doc.setdefault("kubeletConfig", {})
        kc.update({"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "/nq"})


@pytest.mark.parametrize("chunk", range((COUNT + CHUNK - 1) // CHUNK), ids=lambda c: f"seed{SEED}-chunk{c}")
def test_random(chunk: int, oracle_binary: str, tmp_path: Path) -> None:
    start = chunk * CHUNK
    n = min(CHUNK, COUNT - start)
    scenarios = generate.scenarios(SEED, n, tmp_path, start=start)
    for k, (_, doc) in enumerate(scenarios):
        if (start + k) % 3 == 0:
            kc = doc.setdefault("kubeletConfig", {})
            kc["podPidsLimit"] = PIDS_LIMITS[(start + k) // 3 % len(PIDS_LIMITS)]
        _vary_layout(start + k, doc)
    items = [(name, doc, write_scenario(doc, tmp_path / f"{i:05d}.json")) for i, (name, doc) in enumerate(scenarios)]
    stats: dict[str, int] = {}
    coverage: dict[int, dict[str, int]] = {}
    diffs = cgroup_differences(oracle_binary, items, stats, coverage)
    print(f"cgroups, seed {SEED}, scenarios {start}..{start + n - 1}: {stats}")
    print(f"cgroup v2 files compared equal: {dict(sorted(coverage.get(2, {}).items()))}")
    if diffs:
        _fail(diffs, stats.get("compared", 0))
    # most random scenarios reach a comparison, two plans each (the rest fail
    # alike, or the engines already differ: tests/oracle/test_differential.py
    # reports that)
    assert stats.get("compared", 0) >= n, stats
    if n >= 50:  # a full chunk exercises every v2 file
        missing = [f for f in V2_COVERAGE if not coverage.get(2, {}).get(f)]
        assert not missing, f"cgroup v2 files never compared: {missing}"


#: The kubelet settings that shape cgroup values, each applied to every
#: example (the random scenarios leave them at their defaults).
SETTINGS: dict[str, dict[str, object]] = {
    "no-cfs-quota": {"cpuCFSQuota": False},
    "period-50ms": {"cpuCFSQuotaPeriod": "50ms"},  # CustomCPUCFSQuotaPeriod: GA, on
    "pids": {"podPidsLimit": 1024},
    "memory-qos-tiered": {
        "featureGates": {"MemoryQoS": True},
        "memoryReservationPolicy": "TieredReservation",
        "memoryThrottlingFactor": 0.9,
    },
    "memory-qos-throttling": {"featureGates": {"MemoryQoS": True}, "memoryThrottlingFactor": 0.8},
    "memory-qos-off": {"featureGates": {"MemoryQoS": False}},
    "single-process-oom-kill": {"singleProcessOOMKill": True},
    # refused alike: the gate is locked on in v1.37
    "quota-with-exclusive-cpus": {"featureGates": {"DisableCPUQuotaWithExclusiveCPUs": False}},
    # refused alike: the kubelet's validation
    "period-without-gate": {"cpuCFSQuotaPeriod": "50ms", "featureGates": {"CustomCPUCFSQuotaPeriod": False}},
    "period-too-long": {"cpuCFSQuotaPeriod": "1.5s"},
    "factor-out-of-range": {"featureGates": {"MemoryQoS": True}, "memoryThrottlingFactor": 1.5},
    "tiered-without-gate": {"featureGates": {"MemoryQoS": False}, "memoryReservationPolicy": "TieredReservation"},
}


def _with_settings(doc: dict[str, object], settings: dict[str, object]) -> dict[str, object]:
    out = copy.deepcopy(doc)
    kc = out.setdefault("kubeletConfig", {})
    assert isinstance(kc, dict)
    for key, value in settings.items():
        if key == "featureGates":
            assert isinstance(value, dict)
            kc.setdefault("featureGates", {}).update(value)
        else:
            kc[key] = value
    return out


def test_kubelet_settings(oracle_binary: str, tmp_path: Path) -> None:
    items = []
    for p in EXAMPLES:
        for name, settings in SETTINGS.items():
            doc = _with_settings(dict(_load(p)), settings)
            items.append((f"{p.relative_to(ROOT)} [{name}]", doc, write_scenario(doc, tmp_path / f"{p.stem}-{name}.yaml")))
    stats: dict[str, int] = {}
    diffs = cgroup_differences(oracle_binary, items, stats)
    print(f"cgroups, examples x kubelet settings: {stats}")
    if diffs:
        _fail(diffs, stats.get("compared", 0))
    assert not stats.get("engines_differ"), stats  # refusals are the kubelet's too
    assert stats.get("compared", 0) == 2 * len(EXAMPLES) * 7, stats
    assert stats.get("failed_alike", 0) == len(EXAMPLES) * (len(SETTINGS) - 7), stats


def test_every_cpu_reserved(oracle_binary: str, tmp_path: Path) -> None:
    """A one-CPU node under the static policy with a CPU reservation: the CPU
    manager has no allocatable CPUs, so kubepods gets a cpuset (every CPU),
    as under the ``none`` policy; two CPUs with one reserved get none."""
    items = []
    for cores, reserved in ((1, "500m"), (1, "1"), (2, "1")):
        doc: dict[str, object] = {
            "apiVersion": "podnuma.io/v1",
            "kind": "Scenario",
            "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": cores,
                                   "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}},
            "kubeletConfig": {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": reserved}},
            "steps": [{"addPod": {"metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"}, "spec": {
                "containers": [{"name": "c", "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}}]}}}],
        }  # fmt: skip
        name = f"{cores}-cpu-{reserved}"
        items.append((name, doc, write_scenario(doc, tmp_path / f"{name}.json")))
    stats: dict[str, int] = {}
    coverage: dict[int, dict[str, int]] = {}
    diffs = cgroup_differences(oracle_binary, items, stats, coverage)
    if diffs:
        _fail(diffs, stats.get("compared", 0))
    assert stats.get("compared", 0) == 2 * len(items), stats
    assert coverage[2].get("node cpuset.cpus") == 2, coverage  # the one-CPU nodes only
