"""A pod's QoS class in a fleet replay is the one the API server served.

The kubelet reads a pod's class with ``GetPodQOS`` (k8s.io/kubernetes
v1.37.2 pkg/apis/core/v1/helper/qos/qos.go): ``status.qosClass`` when it is
set, the spec's class only when it is not; the static CPU manager
(``guaranteedCPUs``), the memory manager and the cgroup managers all ask it.
The class is written once, when the pod is created, and never changes, so a
pod created under other gates can carry a class its spec no longer gives
(an empty ``spec.resources`` made a pod BestEffort before
``PodLevelResourcesFixKubeletQOSClass``). A dump holds the served class; the
replay goes by it, and says so where the spec disagrees.

A scenario's pods are created by the scenario (the API server's create path
resets the status and computes the class): a class written into a
scenario's pod is not the one the managers read, in podnuma as in the
kubelet oracle (tests/oracle/test_scenario_pod_status_differential.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.qos import compute_pod_qos, served_qos_class, with_status_qos
from podnuma.fleet.inputs import with_inline_pods
from podnuma.fleet.model import NodeSpec
from podnuma.fleet.replay import replay_node

from .onedump import analyze as _analyze
from .onedump import one_dump_fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    return one_dump_fleet(tmp_path)


def _guaranteed_pod(doc: dict[str, Any]) -> dict[str, Any]:
    """The first pod of the dump that the static CPU manager pins (integer
    CPUs, Guaranteed)."""
    for pod in doc["items"]:
        if pod["status"].get("qosClass") != "Guaranteed":
            continue
        limits = [c.get("resources", {}).get("limits", {}) for c in pod["spec"]["containers"]]
        if any(str(lim.get("cpu", "")).isdigit() for lim in limits):
            return pod
    raise AssertionError("the generated fleet has no pinned pod")


def test_the_served_status_qos_class_is_the_one_the_managers_read(fleet: Path) -> None:
    """A Guaranteed pod served as Burstable gets no exclusive CPUs: its
    node pins fewer CPUs, and an info issue names the pod and both
    classes."""
    path = fleet / "pods" / "pods.json"
    doc = json.loads(path.read_text())
    pod = _guaranteed_pod(doc)
    node = pod["spec"]["nodeName"]
    ref = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
    report = _analyze(str(fleet))
    before = next(n for n in report["nodes"] if n["name"] == node)["baseline"]
    assert before["exclusiveCpus"] > 0
    assert not [i for i in report["issues"] if "status.qosClass" in i["message"]]
    pod["status"]["qosClass"] = "Burstable"
    path.write_text(json.dumps(doc, indent=4))
    report = _analyze(str(fleet))
    after = next(n for n in report["nodes"] if n["name"] == node)["baseline"]
    assert after["exclusiveCpus"] < before["exclusiveCpus"]
    said = [i for i in report["issues"] if "status.qosClass" in i["message"]]
    assert len(said) == 1 and said[0]["severity"] == "info" and said[0]["node"] == node
    assert said[0]["message"].startswith(f"pod {ref}: replayed as Burstable")
    assert "its spec gives Guaranteed" in said[0]["message"]


SPEC = {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 8, "threadsPerCore": 1,
        "memoryPerNumaNode": "16Gi"}


def _node() -> NodeSpec:
    return NodeSpec(name="n", config={"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
                    topology={"synthetic": SPEC})


def _pod(name: str, qos: str | None, *, pod_level: dict[str, Any] | None = None) -> dict[str, Any]:
    res = {"cpu": "2", "memory": "1Gi"}
    spec: dict[str, Any] = {"nodeName": "n", "containers": [
        {"name": "c", "resources": {"requests": res, "limits": dict(res)}}]}
    if pod_level is not None:
        spec["resources"] = pod_level
    status: dict[str, Any] = {"phase": "Running"}
    if qos is not None:
        status["qosClass"] = qos
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "t", "uid": f"uid-{name}",
                         "creationTimestamp": f"2026-01-01T00:00:0{name[-1]}Z"},
            "spec": spec, "status": status}


def _exclusive(pods: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    r = replay_node(with_inline_pods(_node(), pods))
    assert r["baseline"]["admitted"] == len(pods)
    return r["baseline"]["exclusiveCpus"], r["issues"]


def test_pods_of_one_spec_keep_each_their_own_served_class() -> None:
    """Pods of one spec share their parse; the served class is each pod's
    own: of three copies, the one served as Burstable is the one left
    unpinned, whatever its place in the dump."""
    assert _exclusive([_pod("p1", "Guaranteed"), _pod("p2", "Guaranteed"), _pod("p3", "Guaranteed")])[0] == 6
    for served_burstable in ("p1", "p2", "p3"):
        pods = [_pod(n, "Burstable" if n == served_burstable else "Guaranteed") for n in ("p1", "p2", "p3")]
        exclusive, issues = _exclusive(pods)
        assert exclusive == 4
        (said,) = [i for i in issues if "status.qosClass" in i["message"]]
        assert said["message"].startswith(f"pod t/{served_burstable}: replayed as Burstable")


def test_an_empty_pod_level_resources_pod_created_before_the_fix_stays_best_effort() -> None:
    """``spec.resources: {}`` on a pod of Guaranteed containers: computed
    today it is Guaranteed (``PodLevelResourcesFixKubeletQOSClass``, on by
    default); created before the fix it was served as BestEffort, which the
    kubelet keeps reading: no exclusive CPUs."""
    assert _exclusive([_pod("p1", None, pod_level={})])[0] == 2
    exclusive, issues = _exclusive([_pod("p1", "BestEffort", pod_level={})])
    assert exclusive == 0
    assert any("replayed as BestEffort" in i["message"] and "its spec gives Guaranteed" in i["message"]
               for i in issues)


def test_a_status_without_a_class_leaves_the_spec_class() -> None:
    """An absent or empty ``status.qosClass`` leaves the class of the spec
    (``GetPodQOS`` computes it), and nothing is said."""
    for qos in (None, ""):
        exclusive, issues = _exclusive([_pod("p1", qos)])
        assert exclusive == 2
        assert not [i for i in issues if "status.qosClass" in i["message"]]


def test_a_status_of_another_class_is_not_guaranteed() -> None:
    """A ``status.qosClass`` none of the three classes (an API server never
    writes one; a hand-edited dump, a lower-case ``guaranteed``) is what
    ``GetPodQOS`` returns all the same, and the static CPU manager pins
    only a ``Guaranteed`` pod: no exclusive CPUs, and the value is said."""
    for qos in ("Platinum", "guaranteed"):
        exclusive, issues = _exclusive([_pod("p1", qos)])
        assert exclusive == 0
        (said,) = [i for i in issues if "status.qosClass" in i["message"]]
        assert said["message"].startswith(f"pod t/p1: its status.qosClass {qos!r} is none of the three QoS classes")


def test_the_served_class_answers_every_gate_setting() -> None:
    """``GetPodQOS`` returns a set status before looking at any gate; the
    copy carrying it does not change the pod it was made from."""
    pod = parse_pod(_pod("p1", None, pod_level={}), gates=load_kubelet_config({}).feature_gates, lenient=True)
    served = served_qos_class("BestEffort")
    assert served == "BestEffort"
    copy = with_status_qos(pod, served)
    for plr in (True, False):
        for fix in (True, False):
            assert compute_pod_qos(copy, pod_level_resources=plr, fix_kubelet_qos_class=fix) == "BestEffort"
    assert compute_pod_qos(pod, pod_level_resources=True, fix_kubelet_qos_class=True) == "Guaranteed"
    assert (copy.name, copy.uid) == (pod.name, pod.uid)
