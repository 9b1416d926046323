"""A node's memory past what an int64 holds, against the kubelet
(``kubelet-oracle simulate``): a quantity with a suffix is capped at 2^63-1
by the quantity parser and the node runs; a plain number of 2^63 bytes or
more is cadvisor's uint64, which the kubelet's capacity (``int64(...)``)
wraps negative, and the node allocatable check stops the kubelet. Both
must give the same document or the same error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.oracle.harness import compare, run_oracle, run_podnuma

MEMORIES = ["8Ei", "99999999999999999999999999Ki", "7Ei", "9223372036854775807", "9223372036854775808",
            "18446744073709550592", "18446744073709551615"]


@pytest.mark.parametrize("policy", ["None", "Static"])
def test_node_memory_past_an_int64_is_the_kubelets(oracle_binary: str, tmp_path: Path, policy: str) -> None:
    paths = []
    for i, memory in enumerate(MEMORIES):
        reserved = ", reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]" if policy == "Static" else ""
        text = (
            "apiVersion: podnuma.io/v1\nkind: Scenario\nnode:\n  cpus:\n"
            "  - {id: 0, core: 0, socket: 0, numaNode: 0}\n  - {id: 1, core: 1, socket: 0, numaNode: 0}\n"
            f"  memory:\n    0: {{memory: \"{memory}\"}}\n"
            f"kubeletConfig: {{cpuManagerPolicy: static, reservedSystemCPUs: \"0\", "
            f"memoryManagerPolicy: {policy}{reserved}}}\n"
            "steps:\n  - addPod:\n      metadata: {name: a, namespace: x}\n"
            "      spec: {containers: [{name: c, resources: {limits: {cpu: \"1\", memory: 1Gi}}}]}\n"
        )
        path = tmp_path / f"m{i}.yaml"
        path.write_text(text)
        paths.append(path)
    theirs = run_oracle(oracle_binary, paths)
    kinds = set()
    for path, want in zip(paths, theirs, strict=True):
        mine = run_podnuma(path)
        diffs = compare(mine, want, yaml.safe_load(path.read_text()))
        assert not diffs, (path.read_text(), diffs[:3])
        kinds.add(mine.kind)
    assert len(kinds) == 2, kinds  # (some run, some stop the kubelet)


#: nodes the kubelet starts with a wrapped capacity: two NUMA nodes whose
#: memory sums past 2^64 (a capacity of 1Gi), and one of 2^63 bytes with no
#: memory reservation (a negative capacity, allocatable 0)
WRAPPED = {
    "sum": (
        "node:\n  cpus:\n  - {id: 0, core: 0, socket: 0, numaNode: 0}\n"
        "  - {id: 1, core: 1, socket: 0, numaNode: 1}\n  - {id: 2, core: 2, socket: 0, numaNode: 1}\n"
        "  memory:\n    0: {memory: \"9223372036854775808\", hugepages-1Gi: \"0\"}\n"
        "    1: {memory: \"9223372037928517632\", hugepages-1Gi: 4Gi}\n"
        "kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: \"0\", memoryManagerPolicy: Static, "
        "topologyManagerPolicy: single-numa-node, reservedMemory: [{numaNode: 0, limits: {memory: 100Mi}}]}\n"
        "steps:\n  - addPod:\n      metadata: {name: a, namespace: x}\n"
        "      spec: {containers: [{name: c, resources: {limits: {cpu: \"1\", memory: 512Mi, "
        "hugepages-1Gi: 1Gi}}}]}\n"
    ),
    "negative": (
        "node:\n  cpus:\n  - {id: 0, core: 0, socket: 0, numaNode: 0}\n  - {id: 1, core: 1, socket: 0, numaNode: 0}\n"
        "  memory:\n    0: {memory: \"9223372036854775808\"}\n"
        "kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: \"0\", memoryManagerPolicy: None, "
        "evictionHard: {nodefs.available: \"10%\"}}\n"
        "steps:\n  - addPod:\n      metadata: {name: a, namespace: x}\n"
        "      spec: {containers: [{name: c, resources: {limits: {cpu: \"1\", memory: 1Gi}}}]}\n"
    ),
}


@pytest.mark.parametrize("case", sorted(WRAPPED))
def test_the_cgroups_of_a_wrapped_capacity_are_the_kubelets(oracle_binary: str, tmp_path: Path, case: str) -> None:
    from tests.oracle.cgroups_harness import (
        _podnuma_run,
        compare_cgroups,
        plan_oracle,
        plan_podnuma,
    )

    path = tmp_path / f"{case}.yaml"
    path.write_text("apiVersion: podnuma.io/v1\nkind: Scenario\n" + WRAPPED[case])
    scenario, run, outcome = _podnuma_run(path)
    assert scenario is not None and run is not None, outcome
    for version, driver in ((2, "systemd"), (1, "cgroupfs")):
        theirs = plan_oracle(oracle_binary, [path], version, driver)[0]
        assert compare_cgroups(plan_podnuma(scenario, run, None, version, driver), theirs) == []
