"""A scenario's pod carrying a ``status`` (``qosClass`` included) against the
kubelet's own code.

The kubelet's managers read a pod's QoS class with ``GetPodQOS``: the
pod's ``status.qosClass`` when set. A scenario's pods are created: the
API server's create path (``PrepareForCreate``) replaces whatever status
the manifest carries and writes the class it computes with its gates. So
a class written into a scenario's pod is never the one the managers read:
a Guaranteed pod written as Burstable is pinned, a Burstable pod written as
Guaranteed is not, in podnuma as in the kubelet oracle; the steps' classes,
CPU sets and memory blocks agree. (A fleet dump's served class is another
matter: there the pod was created long ago; see
tests/fleet/test_served_qos_class.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.oracle.harness import run_both, run_oracle, write_scenario

CONFIG = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "memoryManagerPolicy": "Static",
          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
          "topologyManagerPolicy": "single-numa-node"}
NODE = {"name": "n1", "synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 4,
                                    "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}}


def _pod(name: str, resources: dict[str, Any], status: dict[str, Any],
         pod_level: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": resources}]}
    if pod_level is not None:
        spec["resources"] = pod_level
    return {"metadata": {"name": name, "namespace": "x"}, "spec": spec, "status": status}


GUARANTEED = {"limits": {"cpu": "2", "memory": "1Gi"}}
BURSTABLE = {"requests": {"cpu": "1", "memory": "512Mi"}}

PODS = [
    _pod("g-as-burstable", GUARANTEED, {"qosClass": "Burstable"}),
    _pod("g-as-besteffort", GUARANTEED, {"qosClass": "BestEffort", "phase": "Running"}),
    _pod("b-as-guaranteed", BURSTABLE, {"qosClass": "Guaranteed"}),
    _pod("e-as-guaranteed", {}, {"qosClass": "Guaranteed"}),
    _pod("empty-pod-level-as-besteffort", GUARANTEED, {"qosClass": "BestEffort"}, pod_level={}),
]


def test_a_scenario_pods_status_class_is_replaced_at_creation(oracle_binary: str, tmp_path: Path) -> None:
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "kubeletConfig": CONFIG,
           "steps": [{"addPod": p} for p in PODS]}
    assert run_both(oracle_binary, [("status", doc)], tmp_path, bytes_every=1) == []
    (theirs,) = run_oracle(oracle_binary, [write_scenario(doc, tmp_path / "again.json")])
    assert theirs.doc is not None
    steps = theirs.doc["steps"]
    assert [s["qosClass"] for s in steps] == ["Guaranteed", "Guaranteed", "Burstable", "BestEffort",
                                              "Guaranteed"]
    assert all(s["admitted"] for s in steps)
