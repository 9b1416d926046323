"""KubeletConfiguration loading, defaults, start-up validation, reservation."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.api.kubeletconfig import (
    DEFAULT_EVICTION_HARD,
    KubeletConfig,
    check_reserved_system_cpus,
    hard_eviction_thresholds,
    load_kubelet_config,
    node_allocatable_reservation,
    parse_go_cpuset,
    reserved_cpu_millis,
    validate_kubelet_config,
)
from podnuma.api.quantity import parse_quantity
from podnuma.errors import InputError, KubeletStartupError
from podnuma.machine.cpuset import CPUSet

Q = parse_quantity


def test_defaults_empty_document() -> None:
    cfg = load_kubelet_config({})
    assert cfg.cpu_manager_policy == "none"
    assert cfg.memory_manager_policy == "None"
    assert cfg.topology_manager_policy == "none"
    assert cfg.topology_manager_scope == "container"
    assert cfg.reserved_system_cpus is None
    assert dict(cfg.eviction_hard) == dict(DEFAULT_EVICTION_HARD)
    assert cfg.kube_reserved == {} and cfg.system_reserved == {}
    assert cfg.reserved_memory == ()
    assert cfg.feature_gates.enabled("PodLevelResources")
    assert not cfg.feature_gates.enabled("PodLevelResourceManagers")
    validate_kubelet_config(cfg)
    assert cfg == KubeletConfig()


@pytest.mark.parametrize(
    ("doc", "attr", "expected"),
    [
        ({"cpuManagerPolicy": ""}, "cpu_manager_policy", "none"),
        ({"cpuManagerPolicy": None}, "cpu_manager_policy", "none"),
        ({"cpuManagerPolicy": "static"}, "cpu_manager_policy", "static"),
        ({"memoryManagerPolicy": "Static"}, "memory_manager_policy", "Static"),
        ({"memoryManagerPolicy": ""}, "memory_manager_policy", "None"),
        ({"topologyManagerPolicy": "single-numa-node"}, "topology_manager_policy", "single-numa-node"),
        ({"topologyManagerScope": "pod"}, "topology_manager_scope", "pod"),
        ({"topologyManagerScope": ""}, "topology_manager_scope", "container"),
        ({"reservedSystemCPUs": "0,8"}, "reserved_system_cpus", CPUSet.parse("0,8")),
        ({"reservedSystemCPUs": ""}, "reserved_system_cpus", None),
        ({"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}, "cpu_manager_policy_options",
         {"full-pcpus-only": "true"}),
        ({"topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
         "topology_manager_policy_options", {"prefer-closest-numa-nodes": "true"}),
        ({"kubeReserved": {"cpu": "500m", "memory": "1Gi"}}, "kube_reserved",
         {"cpu": Q("500m"), "memory": Q("1Gi")}),
        # evictionHard replaces the defaults unless merging is asked for
        ({"evictionHard": {"memory.available": "200Mi"}}, "eviction_hard",
         {"memory.available": "200Mi"}),
        ({"evictionHard": {}}, "eviction_hard", {}),
        ({"evictionHard": None}, "eviction_hard", dict(DEFAULT_EVICTION_HARD)),
        ({"evictionHard": {"memory.available": "200Mi"}, "mergeDefaultEvictionSettings": True},
         "eviction_hard", {**DEFAULT_EVICTION_HARD, "memory.available": "200Mi"}),
    ],
)
def test_load_fields(doc: dict[str, Any], attr: str, expected: object) -> None:
    got = getattr(load_kubelet_config(doc), attr)
    assert (dict(got) if isinstance(got, dict) else got) == expected


def test_load_full_document_with_ignored_fields() -> None:
    cfg = load_kubelet_config({
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "featureGates": {"PodLevelResourceManagers": True, "CPUManagerPolicyAlphaOptions": True},
        "cpuManagerPolicy": "static",
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}},
                           {"numaNode": 1, "limits": {"memory": 1073741824}}],
        "maxPods": 110,
        "authentication": {"anonymous": {"enabled": False}},
        "cgroupDriver": "systemd",
    })
    assert cfg.feature_gates.enabled("PodLevelResourceManagers")
    assert cfg.reserved_memory[0].numa_node == 0
    assert cfg.reserved_memory[0].limits["memory"] == Q("1100Mi")
    assert cfg.reserved_memory[1].limits["memory"] == Q("1Gi")
    validate_kubelet_config(cfg)


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"cpuManagerPolicyOptons": {}}, "cpuManagerPolicyOptons"),
        ({"CPUManagerPolicy": "static"}, "CPUManagerPolicy"),
        ({"apiVersion": "kubelet.config.k8s.io/v1"}, "apiVersion"),
        ({"kind": "KubeProxyConfiguration"}, "kind"),
        ({"cpuManagerPolicy": 1}, "cpuManagerPolicy"),
        ({"reservedSystemCPUs": 0}, "reservedSystemCPUs"),
        ({"featureGates": ["PodLevelResources"]}, "featureGates"),
        ({"featureGates": {"PodLevelResources": "true"}}, "featureGates.PodLevelResources"),
        ({"kubeReserved": "cpu=1"}, "kubeReserved"),
        ({"kubeReserved": {"cpu": "one"}}, "kubeReserved.cpu"),
        ({"kubeReserved": {"cpu": 1}}, "kubeReserved.cpu"),
        ({"systemReserved": {"memory": "1GB"}}, "systemReserved.memory"),
        ({"evictionHard": {"memory.available": 100}}, "evictionHard.memory.available"),
        ({"cpuManagerPolicyOptions": {"full-pcpus-only": True}},
         "cpuManagerPolicyOptions.full-pcpus-only"),
        ({"topologyManagerPolicyOptions": []}, "topologyManagerPolicyOptions"),
        ({"mergeDefaultEvictionSettings": "yes"}, "mergeDefaultEvictionSettings"),
        ({"reservedMemory": {"numaNode": 0}}, "reservedMemory"),
        ({"reservedMemory": [{"numaNode": "0"}]}, "reservedMemory[0].numaNode"),
        ({"reservedMemory": [{"numaNode": True}]}, "reservedMemory[0].numaNode"),
        ({"reservedMemory": [{"numaNode": 1 << 40}]}, "reservedMemory[0].numaNode"),
        ({"reservedMemory": [{"numaNode": 0, "limit": {}}]}, "reservedMemory[0].limit"),
        ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gb"}}]},
         "reservedMemory[0].limits.memory"),
    ],
)
def test_load_input_errors(doc: dict[str, Any], path: str) -> None:
    with pytest.raises(InputError) as exc:
        load_kubelet_config(doc)
    assert exc.value.path == path


def test_unknown_field_message() -> None:
    with pytest.raises(InputError) as exc:
        load_kubelet_config({"cpuManagerPolicyOptons": {}})
    assert exc.value.message == 'unknown field "cpuManagerPolicyOptons"'


def test_bad_quantity_message() -> None:
    with pytest.raises(InputError) as exc:
        load_kubelet_config({"kubeReserved": {"cpu": "one"}})
    assert exc.value.message.startswith('failed to parse quantity "one" for "cpu" resource: ')


@pytest.mark.parametrize(
    ("gates", "message"),
    [
        ({"Foo": True}, "failed to set feature gates from initial flags-based config: "
                        "unrecognized feature gate: Foo"),
        ({"TopologyManagerPolicyOptions": False},
         "failed to set feature gates from initial flags-based config: cannot set feature gate "
         "TopologyManagerPolicyOptions to false, feature is locked to true"),
    ],
)
def test_load_feature_gate_errors(gates: dict[str, bool], message: str) -> None:
    with pytest.raises(KubeletStartupError) as exc:
        load_kubelet_config({"featureGates": gates})
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"topologyManagerPolicy": "numa"},
         'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "numa" must '
         'be one of: ["none" "best-effort" "restricted" "single-numa-node"]'),
        ({"topologyManagerPolicy": "Best-Effort"},
         'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "Best-Effort" '
         'must be one of: ["none" "best-effort" "restricted" "single-numa-node"]'),
        ({"topologyManagerScope": "node"},
         'invalid configuration: topologyManagerScope (--topology-manager-scope) "node" must be '
         'one of: "container", or "pod"'),
        ({"topologyManagerPolicy": "x", "topologyManagerScope": "y"},
         '[invalid configuration: topologyManagerPolicy (--topology-manager-policy) "x" must be '
         'one of: ["none" "best-effort" "restricted" "single-numa-node"], invalid configuration: '
         'topologyManagerScope (--topology-manager-scope) "y" must be one of: "container", or '
         '"pod"]'),
        ({"reservedSystemCPUs": "0-a"},
         'invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-a, '
         'error: strconv.Atoi: parsing "a": invalid syntax'),
        ({"reservedSystemCPUs": "3-1"},
         'invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 3-1, '
         'error: invalid range "3-1" (3 > 1)'),
        ({"reservedSystemCPUs": "0", "systemReservedCgroup": "/system.slice"},
         "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with "
         "systemReservedCgroup (--system-reserved-cgroup) or kubeReservedCgroup "
         "(--kube-reserved-cgroup)"),
        ({"reservedMemory": [{"numaNode": 0, "limits": {"cpu": "1"}}]},
         'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, only '
         '[memory hugepages-<HugePageSize>] is accepted'),
        ({"reservedMemory": [{"numaNode": 1, "limits": {"memory": "0"}}]},
         'invalid configuration: reserved memory may not be zero for NUMA node 1 and resource "memory"'),
        ({"reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}},
                             {"numaNode": 0, "limits": {"memory": "2Gi"}}]},
         'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"'),
        ({"kubeReserved": {"hugepages-2Mi": "2Mi"}},
         '--kube-reserved value failed to parse: cannot reserve "hugepages-2Mi" resource'),
        ({"systemReserved": {"nvidia.com/gpu": "1"}},
         '--system-reserved value failed to parse: cannot reserve "nvidia.com/gpu" resource'),
        ({"kubeReserved": {"cpu": "-1.0"}},
         '--kube-reserved value failed to parse: resource quantity for "cpu" cannot be negative: '
         '-1.0'),
        ({"evictionHard": {"memory.free": "1Gi"}}, "unsupported eviction signal memory.free"),
        ({"evictionHard": {"memory.available": "-1Gi"}},
         "eviction threshold memory.available must be positive: -1Gi"),
        ({"evictionHard": {"memory.available": "0"}},
         "eviction threshold memory.available must be positive: 0"),
        ({"evictionHard": {"nodefs.available": "-5%"}},
         "eviction percentage threshold nodefs.available must be >= 0%: -5%"),
        ({"evictionHard": {"nodefs.available": "150%"}},
         "eviction percentage threshold nodefs.available must be <= 100%: 150%"),
        ({"evictionHard": {"nodefs.available": "ten%"}},
         'strconv.ParseFloat: parsing "ten": invalid syntax'),
        ({"evictionHard": {"memory.available": "1K"}},
         "unable to parse quantity's suffix"),
    ],
)
def test_startup_errors(doc: dict[str, Any], message: str) -> None:
    cfg = load_kubelet_config(doc)
    with pytest.raises(KubeletStartupError) as exc:
        validate_kubelet_config(cfg)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    "doc",
    [
        {"evictionHard": {"memory.available": "0%"}},
        {"evictionHard": {"memory.available": "100%"}},
        # reservedSystemCPUs drops kubeReserved cpu before it is parsed
        {"reservedSystemCPUs": "0-1", "kubeReserved": {"cpu": "-1"}},
        {"reservedMemory": [{"numaNode": 0, "limits": {"hugepages-1Gi": "1Gi"}}]},
    ],
)
def test_startup_accepts(doc: dict[str, Any]) -> None:
    validate_kubelet_config(load_kubelet_config(doc))


def test_ignored_percentages() -> None:
    cfg = load_kubelet_config({"evictionHard": {"memory.available": "0%",
                                                "nodefs.available": "100%"}})
    assert hard_eviction_thresholds(cfg) == ()


def test_reserved_cpus_subset_of_online() -> None:
    cfg = load_kubelet_config({"reservedSystemCPUs": "0,16"})
    online = CPUSet.parse("0-15")
    with pytest.raises(KubeletStartupError) as exc:
        validate_kubelet_config(cfg, online_cpus=online)
    assert str(exc.value) == "reserved-cpus: 0,16 is not a subset of online-cpus: 0-15"
    check_reserved_system_cpus(load_kubelet_config({"reservedSystemCPUs": "0,8"}), online)


@pytest.mark.parametrize(
    ("text", "expected", "error"),
    [
        ("", CPUSet(), None),
        ("0-3,8", CPUSet.parse("0-3,8"), None),
        ("+1", CPUSet.parse("1"), None),  # strconv.Atoi accepts a sign
        ("1-1", CPUSet.parse("1"), None),
        ("1,,2", None, 'strconv.Atoi: parsing "": invalid syntax'),
        ("-1", None, 'strconv.Atoi: parsing "": invalid syntax'),
        ("1-2-3", None, 'strconv.Atoi: parsing "2-3": invalid syntax'),
        ("0--1", None, 'invalid range "0--1" (0 > -1)'),
        (" 1", None, 'strconv.Atoi: parsing " 1": invalid syntax'),
    ],
)
def test_parse_go_cpuset(text: str, expected: CPUSet | None, error: str | None) -> None:
    if error is None:
        assert parse_go_cpuset(text) == expected
    else:
        with pytest.raises(ValueError) as exc:
            parse_go_cpuset(text)
        assert str(exc.value) == error


CAPACITY = {
    "cpu": Q("16"),
    "memory": Q("64Gi"),
    "ephemeral-storage": Q("100Gi"),
    "hugepages-2Mi": Q("1Gi"),
    "pods": Q("110"),
}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        # defaults: 100Mi memory eviction, 10% of nodefs -- the percentage is a
        # float32 (0.1f = 0.100000001490116...), so 10% of 100Gi is not 10Gi
        ({}, {"memory": "100Mi", "ephemeral-storage": "10737418400"}),
        ({"evictionHard": {}}, {}),
        ({"kubeReserved": {"cpu": "500m", "memory": "1Gi"},
          "systemReserved": {"cpu": "1", "memory": "512Mi", "ephemeral-storage": "1Gi"},
          "evictionHard": {"memory.available": "256Mi"}},
         {"cpu": "1500m", "memory": "1792Mi", "ephemeral-storage": "1Gi"}),
        # percentage of memory capacity, truncated to an integer
        ({"evictionHard": {"memory.available": "10%"}}, {"memory": "6871947776"}),
        ({"evictionHard": {"memory.available": "5%", "nodefs.available": "0%"}},
         {"memory": "3435973888"}),
        # reservedSystemCPUs replaces kube/system reserved cpu with the list size
        ({"reservedSystemCPUs": "0,8", "kubeReserved": {"cpu": "3"},
          "systemReserved": {"cpu": "1500m"}, "evictionHard": {}}, {"cpu": "2"}),
        # other signals do not reserve anything
        ({"evictionHard": {"imagefs.available": "15%", "pid.available": "10%"}}, {}),
        # resources not in capacity are dropped
        ({"kubeReserved": {"pid": "100"}, "evictionHard": {}}, {}),
    ],
)
def test_node_allocatable_reservation(doc: dict[str, Any], expected: dict[str, str]) -> None:
    cfg = load_kubelet_config(doc)
    got = node_allocatable_reservation(cfg, CAPACITY)
    assert {k: str(v) for k, v in got.items()} == expected
    assert list(got) == [k for k in CAPACITY if k in got]


@pytest.mark.parametrize(
    ("doc", "millis"),
    [
        ({}, 0),
        ({"kubeReserved": {"cpu": "500m"}, "systemReserved": {"cpu": "250m"}}, 750),
        ({"reservedSystemCPUs": "0-3", "kubeReserved": {"cpu": "500m"}}, 4000),
        ({"reservedSystemCPUs": "1", "systemReserved": {"cpu": "2"}}, 1000),
    ],
)
def test_reserved_cpu_millis(doc: dict[str, Any], millis: int) -> None:
    assert reserved_cpu_millis(load_kubelet_config(doc)) == millis


def test_reservation_requires_valid_eviction() -> None:
    cfg = load_kubelet_config({"evictionHard": {"memory.available": "abc"}})
    with pytest.raises(KubeletStartupError):
        node_allocatable_reservation(cfg, CAPACITY)
