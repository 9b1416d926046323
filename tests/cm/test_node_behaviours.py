"""Behaviours found while reshaping the CLI: the none CPU policy's shared
pool, a pod added twice, maxPods/podsPerCore, configuration fields that are
not modelled, reservations larger than the node."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli import cli

from ..scenario.helpers import base, pod, write


def _run(tmp_path: Path, doc: dict[str, Any], *args: str) -> Any:
    return CliRunner().invoke(cli, ["simulate", str(write(tmp_path / "s.yaml", doc)), *args])


def test_policy_none_shows_every_cpu_shared(tmp_path: Path) -> None:
    doc = base()
    doc["kubeletConfig"] = {"cpuManagerPolicy": "none"}
    doc["steps"] = [{"addPod": pod("web", "2")}]
    r = _run(tmp_path, doc)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    shared = next(line for line in lines if "(shared pool)" in line)
    assert "0-15" in shared
    summary = lines[lines.index(next(line for line in lines if line.startswith("NUMA"))) + 2:]
    # every NUMA node: nothing exclusive, all its CPUs shared and free
    assert "- (0)" in summary[0] and "0-3,8-11 (8)" in summary[0].split("- (0)")[1]


def test_second_add_of_a_running_pod_is_invalid(tmp_path: Path) -> None:
    doc = base()
    doc["steps"] = [{"addPod": pod("web", "1", uid="u1")}, {"addPod": pod("other", "1")},
                    {"addPod": pod("web", "1", uid="u1")}]
    r = _run(tmp_path, doc)
    assert r.exit_code == 2
    assert "steps[2].addPod: pod default/web (UID u1) is already running: admitted at steps[0]" in r.stderr
    assert r.stdout == ""


def test_same_name_other_uid_names_the_earlier_step(tmp_path: Path) -> None:
    doc = base()
    doc["steps"] = [{"addPod": pod("web", "1", uid="u1")}, {"addPod": pod("web", "1", uid="u2")}]
    r = _run(tmp_path, doc)
    assert r.exit_code == 2
    assert "already running on the node with UID u1 (admitted at steps[0])" in r.stderr


def test_re_adding_after_removal_and_after_rejection_is_fine(tmp_path: Path) -> None:
    doc = base()
    doc["steps"] = [
        {"addPod": pod("web", "1", uid="u1")},
        {"removePod": "default/web"},
        {"addPod": pod("web", "1", uid="u1")},
        {"addPod": pod("huge", "64", uid="u2")},
        {"addPod": pod("huge", "1", uid="u2")},
    ]
    r = _run(tmp_path, doc, "-o", "json")
    assert r.exit_code == 0, r.output
    admitted = [s.get("admitted") for s in json.loads(r.stdout)["steps"]]
    assert admitted == [True, None, True, False, True]


@pytest.mark.parametrize(
    ("config", "admitted"),
    [({"maxPods": 2}, 2), ({"podsPerCore": 1}, 16), ({"maxPods": 3, "podsPerCore": 1}, 3), ({}, 20)],
)
def test_max_pods(tmp_path: Path, config: dict[str, int], admitted: int) -> None:
    doc = base()
    doc["kubeletConfig"].update(config)
    doc["steps"] = [{"addPod": pod(f"p{i}", "0", "1Mi")} for i in range(20)]
    for step in doc["steps"]:  # BestEffort pods: only the pod count limits them
        step["addPod"]["spec"]["containers"][0].pop("resources")
    r = _run(tmp_path, doc, "-o", "json")
    assert r.exit_code == 0, r.output
    steps = json.loads(r.stdout)["steps"]
    assert sum(1 for s in steps if s["admitted"]) == admitted
    if admitted < 20:
        first = next(s for s in steps if not s["admitted"])
        assert first["reason"] == "OutOfpods"
        assert first["message"] == (
            "Pod was rejected: Node didn't have enough resource: pods, requested: 1, "
            f"used: {admitted}, capacity: {admitted}"
        )


def test_negative_max_pods_stops_the_kubelet(tmp_path: Path) -> None:
    doc = base()
    doc["kubeletConfig"]["maxPods"] = -1
    r = _run(tmp_path, doc)
    assert r.exit_code == 2
    assert "invalid configuration: maxPods (--max-pods) -1 must not be a negative number" in r.stderr


def test_not_modelled_fields_are_reported(tmp_path: Path) -> None:
    doc = base()
    doc["kubeletConfig"]["registerWithTaints"] = [{"key": "k", "effect": "NoExecute"}]
    doc["kubeletConfig"]["allowedUnsafeSysctls"] = ["net.*"]
    r = _run(tmp_path, doc)
    assert r.exit_code == 0
    assert "kubeletConfig.registerWithTaints: not modelled" in r.stderr
    assert "kubeletConfig.allowedUnsafeSysctls: not modelled" in r.stderr
    quiet = CliRunner().invoke(cli, ["--quiet", "simulate", str(tmp_path / "s.yaml")])
    assert quiet.stderr == ""


@pytest.mark.parametrize(
    ("reserved", "message"),
    [
        # the kubelet prints the quantities with %v of a resource.Quantity
        # value: the struct (kubelet v1.37.2's own message)
        ({"kubeReserved": {"memory": "10Gi"}, "systemReserved": {"memory": "7Gi"}},
         'Resource "memory" has a reservation of {{18358468608 0} {<nil>}  BinarySI} '
         "but capacity of {{17179869184 0} {<nil>}  BinarySI}."),
        ({"kubeReserved": {"cpu": "20"}},
         'Resource "cpu" has a reservation of {{20000 -3} {<nil>}  DecimalSI} '
         "but capacity of {{16000 -3} {<nil>}  DecimalSI}."),
    ],
)
def test_reservation_larger_than_the_node_stops_the_kubelet(
    tmp_path: Path, reserved: dict[str, Any], message: str
) -> None:
    doc = base()
    doc["kubeletConfig"] = {"cpuManagerPolicy": "none", **reserved}
    r = _run(tmp_path, doc)
    assert r.exit_code == 2
    assert "kubelet would not start: invalid Node Allocatable configuration. " in r.stderr
    assert message + " Expected capacity >= reservation." in r.stderr


def _missing_hugepage_size(topology_policy: str, scope: str) -> dict[str, Any]:
    doc = base()
    doc["node"] = {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2,
                                 "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}}
    doc["kubeletConfig"] = {
        "memoryManagerPolicy": "Static", "kubeReserved": {"memory": "924Mi"},
        "evictionHard": {"memory.available": "100Mi"},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
        "topologyManagerPolicy": topology_policy, "topologyManagerScope": scope,
    }
    huge = pod("huge", "1", "256Mi")
    for side in ("requests", "limits"):
        huge["spec"]["containers"][0]["resources"][side]["hugepages-2Mi"] = "4Mi"
    doc["steps"] = [{"addPod": pod("plain", "1", "256Mi")}, {"addPod": huge}]
    return doc


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize("topology_policy", ["none", "best-effort", "restricted", "single-numa-node"])
def test_a_hugepage_size_the_node_lacks_is_reported_as_the_kubelets_panic(
    tmp_path: Path, topology_policy: str, scope: str
) -> None:
    # kubelet v1.37's memory manager (Static) reads a missing memory table
    # in calculateHints and dies on the nil pointer: podnuma rejects the pod
    # with a message saying so (it used to reject it as if the node had the
    # size with no pages)
    r = _run(tmp_path, _missing_hugepage_size(topology_policy, scope), "-o", "json")
    assert r.exit_code == 0, r.output
    steps = json.loads(r.stdout)["steps"]
    assert steps[0]["admitted"] is True
    assert steps[1]["admitted"] is False
    assert steps[1]["reason"] == "UnexpectedAdmissionError"
    assert steps[1]["message"] == (
        "Pod was rejected: [memorymanager] calculateHints: NUMA node 0 has no hugepages-2Mi memory table: "
        "runtime error: invalid memory address or nil pointer dereference (kubelet v1.37 panics here)"
    )
