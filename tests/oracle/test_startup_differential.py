"""Start-up refusals against the real kubelet code: starting checkpoints the
kubelet cannot restore or validate, in each manager, and the order in which
the kubelet meets them (topology, CPU and memory NewManager, then the CPU
manager's start, then the memory manager's). The message and the kind of
failure (the kubelet not starting, not invalid input) must be the kubelet's."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.harness import compare, run_oracle, run_podnuma, write_scenario

BASE: dict[str, Any] = {
    "apiVersion": "podnuma.io/v1", "kind": "Scenario",
    "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2,
                           "threadsPerCore": 1, "memoryPerNumaNode": "4Gi"}},
    "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
    "steps": [{"addPod": {"metadata": {"name": "a"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "100Mi"}}}]}}}],
}
MEM_STATIC = {"memoryManagerPolicy": "Static", "kubeReserved": {"memory": "256Mi"},
              "evictionHard": {"memory.available": "100Mi"},
              "reservedMemory": [{"numaNode": 0, "limits": {"memory": "356Mi"}}]}
CPU_NONE = {"policyName": "none", "defaultCpuSet": "", "checksum": 0}
MEM_STATIC_EMPTY = {"policyName": "Static", "machineState": {}, "checksum": 0}

CASES: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    "cpu-policy-mismatch": ({}, {"cpuManager": CPU_NONE}, "start cpu manager error: could not restore"),
    "cpu-v4-bad-data": ({}, {"cpuManager": {"policyName": "static", "defaultCpuSet": "0-3", "checksum": 0,
                                           "data": "{bad", "dataChecksum": 5}}, "could not load v4 checkpoint"),
    "cpu-overlap": ({}, {"cpuManager": {"policyName": "static", "defaultCpuSet": "0-3",
                                        "entries": {"u": {"c": "1"}}, "checksum": 0}}, "overlaps with default cpuset"),
    "cpu-reserved-missing": ({}, {"cpuManager": {"policyName": "static", "defaultCpuSet": "1-3", "checksum": 0}},
                             "not all reserved cpus"),
    "cpu-not-all-cpus": ({}, {"cpuManager": {"policyName": "static", "defaultCpuSet": "0-2", "checksum": 0}},
                         "current set of available CPUs"),
    "cpu-empty-default-with-entries": ({}, {"cpuManager": {"policyName": "static", "defaultCpuSet": "",
                                                           "entries": {"u": {"c": "1"}}, "checksum": 0}},
                                       "default cpuset cannot be empty"),
    "cpu-bad-cpuset": ({}, {"cpuManager": {"policyName": "static", "defaultCpuSet": "0-x", "checksum": 0}},
                       "could not parse default CPU set"),
    "cpu-bad-checksum": ({}, {"cpuManager": {"policyName": "static", "defaultCpuSet": "0-3", "checksum": 7}},
                         "checkpoint is corrupted"),
    "memory-policy-mismatch": ({}, {"memoryManager": MEM_STATIC_EMPTY}, "start memory manager error: could not restore"),
    "memory-empty-state-with-entries": (MEM_STATIC, {"memoryManager": {
        "policyName": "Static", "machineState": {}, "checksum": 0,
        "entries": {"u": {"c": [{"numaAffinity": [0], "type": "memory", "size": 1}]}}}},
        "machine state can not be empty"),
    "memory-v3-bad-data": ({}, {"memoryManager": {"policyName": "None", "machineState": {}, "checksum": 0,
                                                  "data": "{", "dataChecksum": 1}}, "could not load v3 checkpoint"),
    "memory-corrupt": ({}, {"memoryManager": {"policyName": "None", "machineState": {}, "checksum": 12}},
                       "checkpoint is corrupted"),
    "cpu-before-memory": ({}, {"cpuManager": CPU_NONE, "memoryManager": MEM_STATIC_EMPTY}, "start cpu manager error"),
    "new-manager-before-start": ({"memoryManagerPolicy": "static"}, {"cpuManager": CPU_NONE}, 'unknown policy: "static"'),
    "memory-best-effort": ({"memoryManagerPolicy": "BestEffort"}, {}, 'is not available for platform "linux"'),
    "cpu-new-manager-before-memory": ({"reservedSystemCPUs": "", "memoryManagerPolicy": "static"}, {},
                                      "unable to determine reserved CPU resources"),
    "cpu-policy-before-memory-policy": ({"cpuManagerPolicy": "dynamic", "memoryManagerPolicy": "BestEffort"}, {},
                                        'unknown policy: "dynamic"'),
    "reserved-memory-hugepages": ({**MEM_STATIC, "reservedMemory": [
        {"numaNode": 0, "limits": {"memory": "356Mi", "hugepages-2Mi": "2Mi"}}]}, {}, 'of type "hugepages-2Mi"'),
    "reserved-memory-zero": ({**MEM_STATIC, "reservedMemory": [{"numaNode": 0, "limits": {"memory": "0"}}]}, {},
                             "invalid configuration: reserved memory may not be zero"),
    "reservation-above-capacity": ({"kubeReserved": {"cpu": "500m", "memory": "9Gi"}, "reservedSystemCPUs": ""}, {},
                                   "invalid Node Allocatable configuration"),
    # enforceNodeAllocatable (ValidateKubeletConfiguration): every command
    # refuses these, not only the cgroup plan
    "no-qos-default-enforcement": ({"cgroupsPerQOS": False}, {}, "cgroupsPerQOS (--cgroups-per-qos) must be set"),
    "no-qos-system-reserved": ({"cgroupsPerQOS": False, "enforceNodeAllocatable": ["system-reserved"],
                                "systemReservedCgroup": "/sys", "reservedSystemCPUs": ""}, {},
                               'must be set to true when "system-reserved" contained'),
    "enforcement-both-forms": ({"enforceNodeAllocatable": ["kube-reserved", "kube-reserved-compressible", "pods"],
                                "kubeReservedCgroup": "/kube", "reservedSystemCPUs": ""}, {},
                               'both "kube-reserved" and "kube-reserved-compressible" cannot be specified together'),
    "enforcement-both-system-forms": ({"enforceNodeAllocatable": ["system-reserved-compressible", "system-reserved",
                                                                  "system-reserved"]}, {},
                                      'both "system-reserved" and "system-reserved-compressible"'),
    "enforcement-unknown-and-none": ({"enforceNodeAllocatable": ["none", "Pods"]}, {},
                                     'option "Pods" specified for enforceNodeAllocatable'),
    "enforcement-none-alone-no-qos-empty-root": ({"cgroupsPerQOS": False, "enforceNodeAllocatable": ["none", "none"]},
                                                 {}, 'duplicated enforcements "none"'),
    # a null item of the []string is "" (encoding/json's zero value): an
    # unknown option, not an input error
    "enforcement-null-item": ({"enforceNodeAllocatable": [None]}, {}, 'option "" specified for enforceNodeAllocatable'),
    "enforcement-pods-and-null": ({"enforceNodeAllocatable": ["pods", None]}, {},
                                  'option "" specified for enforceNodeAllocatable'),
    # null map values and list items are zero values too
    "policy-option-null-value": ({"cpuManagerPolicy": "none", "reservedSystemCPUs": "",
                                  "cpuManagerPolicyOptions": {"full-pcpus-only": None}}, {},
                                 "received unsupported options=map[full-pcpus-only:]"),
    "eviction-null-value": ({"evictionHard": {"memory.available": None}}, {}, "quantities must match"),
    "reserved-memory-null-limit": ({**MEM_STATIC, "reservedMemory": [{"numaNode": 0, "limits": {"memory": None}}]},
                                   {}, "reserved memory may not be zero"),
    "feature-gate-null": ({"featureGates": {"CPUManagerPolicyOptions": None}}, {},
                          "cannot set feature gate CPUManagerPolicyOptions to false"),
    # validation.go ~75: systemCgroups needs cgroupRoot
    "system-cgroups-without-root": ({"systemCgroups": "/system.slice"}, {},
                                    "systemCgroups (--system-cgroups) was specified and cgroupRoot"),
    # ValidateKubeletConfiguration aggregates its errors in validation.go's
    # order (systemCgroups ~75, cpuCFSQuotaPeriod ~87, maxPods ~154,
    # podsPerCore ~160, topology manager ~197-210, enforceNodeAllocatable
    # ~262-315, reservedSystemCPUs ~347, reservedMemory ~357,
    # memoryThrottlingFactor ~371-377, memoryReservationPolicy ~379-388)
    "order-max-pods-before-enforcement": ({"maxPods": -1, "enforceNodeAllocatable": ["x"]}, {},
                                          "[invalid configuration: maxPods (--max-pods) -1"),
    "order-pods-per-core-before-topology": ({"podsPerCore": -2, "topologyManagerScope": "node",
                                             "topologyManagerPolicy": "bogus"}, {},
                                            "[invalid configuration: podsPerCore (--pods-per-core) -2"),
    "order-system-cgroups-first": ({"systemCgroups": "/sys", "maxPods": -1, "cpuCFSQuotaPeriod": "50ms"}, {},
                                   "[invalid configuration: systemCgroups (--system-cgroups)"),
    "order-every-check": ({
        "memoryReservationPolicy": "Foo", "memoryThrottlingFactor": 2,
        **MEM_STATIC, "reservedMemory": [{"numaNode": 0, "limits": {"memory": "0", "cpu": "1"}}],
        "reservedSystemCPUs": "0-x", "kubeReservedCgroup": "/kube",
        "enforceNodeAllocatable": ["kube-reserved", "x", "pods", "pods"], "cgroupsPerQOS": False,
        "topologyManagerScope": "node", "topologyManagerPolicy": "bogus",
        "podsPerCore": -1, "maxPods": -1, "cpuCFSQuotaPeriod": "50ms", "systemCgroups": "/sys",
    }, {}, "[invalid configuration: systemCgroups (--system-cgroups)"),
    "order-enforcement-before-reserved-cpus": ({"enforceNodeAllocatable": ["system-reserved"],
                                                "systemReservedCgroup": "/sys", "reservedSystemCPUs": "0",
                                                "cgroupsPerQOS": False, "maxPods": -3}, {},
                                               "[invalid configuration: maxPods (--max-pods) -3"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_startup_refusal(name: str, oracle_binary: str, tmp_path: Path) -> None:
    config, state, words = CASES[name]
    doc = copy.deepcopy(BASE)
    doc["kubeletConfig"].update(config)
    if state:
        doc["state"] = state
    path = write_scenario(doc, tmp_path / "s.json")
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert mine.kind == "startup", mine.message
    assert words in mine.message
    assert not compare(mine, theirs, doc), (mine.message, theirs.message)
