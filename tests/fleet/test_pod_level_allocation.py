"""A pod-level resized pod is replayed with the pod-level resources the
kubelet allocated, not those its spec asks.

With ``InPlacePodLevelResourcesVerticalScaling`` (beta, on in v1.37.2) the
kubelet checkpoints a pod's ``spec.resources`` as it admitted or resized
them, and admits the pod again with them (pkg/kubelet/allocation:
``ResourceInfoForPod``, ``updatePodLevelResourcesFromAllocation``, called
by ``AddPod`` through ``UpdatePodFromAllocation``). A resize the kubelet
deferred or found infeasible leaves the spec asking other resources than
those allocated; the API server shows the allocation in the pod's status:
``status.allocatedResources`` (``PodRequests`` of the allocated pod, the
overhead counted in) and ``status.resources`` (the pod-level resources as
applied to the pod's cgroup, the overhead counted in)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import podnuma.fleet.inputs as inputs_mod
from podnuma.fleet.inputs import with_inline_pods
from podnuma.fleet.model import NodeSpec
from podnuma.fleet.pods import compact_pod
from podnuma.fleet.replay import replay_node

from .onedump import analyze, one_dump_fleet, pods_dump

SPEC = {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 8, "threadsPerCore": 1,
        "memoryPerNumaNode": "16Gi"}


def _node() -> NodeSpec:
    return NodeSpec(name="n", config={"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
                                      "topologyManagerScope": "pod",
                                      "featureGates": {"PodLevelResourceManagers": True}},
                    topology={"synthetic": SPEC})


def _pod(name: str, cpu: str, allocated: dict[str, str] | None = None, *,
         overhead: dict[str, str] | None = None, applied: dict[str, Any] | None = None,
         node: str = "n") -> dict[str, Any]:
    """A Guaranteed pod-level pod asking ``cpu`` CPUs in its spec; the
    kubelet's allocation in its status when ``allocated`` is given."""
    spec: dict[str, Any] = {
        "nodeName": node,
        "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi"}},
        "containers": [{"name": "c"}]}
    if overhead is not None:
        spec["overhead"] = overhead
    status: dict[str, Any] = {"phase": "Running", "qosClass": "Guaranteed", "startTime": f"2026-01-01T00:00:0{name[-1]}Z"}
    if allocated is not None:
        status["allocatedResources"] = allocated
    if applied is not None:
        status["resources"] = applied
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "t", "uid": f"uid-{name}"}, "spec": spec, "status": status}


def _replay(pods: list[dict[str, Any]]) -> dict[str, Any]:
    r: dict[str, Any] = replay_node(with_inline_pods(_node(), pods))
    return r


def test_the_kubelet_admits_a_pod_level_pod_with_its_allocated_budget() -> None:
    """Two pods asking 4 CPUs each at pod level on a node of 7 allocatable
    CPUs: the second is rejected (OutOfcpu) when both are replayed with
    their spec; the first's resize to 4 CPUs was not actuated (the kubelet
    allocated 2, as its status shows), so the kubelet admits both."""
    r = _replay([_pod("p1", "4"), _pod("p2", "4")])
    assert [x["pod"] for x in r["baseline"]["rejected"]] == ["t/p2"]
    assert r["baseline"]["rejected"][0]["reason"] == "OutOfcpu"
    r = _replay([_pod("p1", "4", {"cpu": "2", "memory": "1Gi"}), _pod("p2", "4")])
    assert r["baseline"]["admitted"] == 2 and r["baseline"]["rejected"] == []
    # as many copies of p1 as fit beside p2 (3 CPUs left): one of 2 CPUs... and
    # of p2 (4 CPUs asked) none more
    assert r["baseline"]["density"]["t/p1"]["copies"] == 3
    # an allocation equal to the spec's (another spelling) changes nothing
    same = _replay([_pod("p1", "4", {"cpu": "4000m", "memory": "1024Mi"}), _pod("p2", "4")])
    assert [x["pod"] for x in same["baseline"]["rejected"]] == ["t/p2"]


def test_the_overhead_in_the_status_is_not_counted_twice() -> None:
    """``status.allocatedResources`` counts the pod's overhead in (it is
    ``PodRequests`` of the allocated pod): the pod-level request allocated
    is the status's less the overhead (2500m - 500m = 2 CPUs), and the
    replay adds the overhead once, as the kubelet does."""
    pod = _pod("p1", "4", {"cpu": "2500m", "memory": "1124Mi"}, overhead={"cpu": "500m", "memory": "100Mi"})
    got = compact_pod(pod)["spec"]["resources"]
    assert got["requests"] == {"cpu": "2", "memory": "1Gi"}
    # the limits equal to their requests in the spec follow the allocation
    assert got["limits"] == {"cpu": "2", "memory": "1Gi"}
    r = _replay([pod, _pod("p2", "4")])
    assert r["baseline"]["admitted"] == 2
    # 7 CPUs - 4 (p2) - 2.5 (p1 with its overhead): one copy of p1 fits beside them
    assert r["baseline"]["density"]["t/p1"]["copies"] == 2


def test_the_applied_limits_are_taken_less_the_overhead() -> None:
    """``status.resources.limits`` (the pod cgroup's, the overhead counted
    in) are the allocated limits less the overhead; without them a spec
    limit other than its request stays the spec's."""
    pod = _pod("p1", "4", {"cpu": "2500m", "memory": "1124Mi"}, overhead={"cpu": "500m", "memory": "100Mi"},
               applied={"requests": {"cpu": "2500m", "memory": "1124Mi"},
                        "limits": {"cpu": "3500m", "memory": "1124Mi"}})
    got = compact_pod(pod)["spec"]["resources"]
    assert got["limits"] == {"cpu": "3", "memory": "1Gi"}
    burstable = _pod("p1", "4", {"cpu": "2", "memory": "1Gi"})
    burstable["spec"]["resources"]["limits"] = {"cpu": "8", "memory": "1Gi"}
    got = compact_pod(burstable)["spec"]["resources"]
    assert got == {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "8", "memory": "1Gi"}}


def test_a_status_without_a_pod_level_allocation_leaves_the_spec() -> None:
    """No ``status.allocatedResources``, no pod-level resources in the spec
    (the status then sums the containers': not a pod-level allocation), or
    a value that does not parse where the overhead must come off: the spec
    is replayed as it is (a bad value reaches the replay, which words it)."""
    pod = _pod("p1", "4")
    assert compact_pod(pod)["spec"]["resources"] == pod["spec"]["resources"]
    plain = _pod("p1", "4", {"cpu": "2", "memory": "1Gi"})
    del plain["spec"]["resources"]
    plain["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]
    assert compact_pod(plain)["spec"] == {"nodeName": "n", "containers": plain["spec"]["containers"]}
    bad = _pod("p1", "4", {"cpu": "two", "memory": "1Gi"}, overhead={"cpu": "500m"})
    assert compact_pod(bad)["spec"]["resources"]["requests"]["cpu"] == "two"


@pytest.mark.parametrize("indexed", [True, False])
def test_a_dump_gives_the_allocated_budget_to_the_replay_and_its_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    """Through ``fleet analyze`` (the indexed reading of a dump and the
    general one alike): a pod-level pod whose spec asks more CPUs than the
    node has is rejected by the replay, unless its status shows the
    kubelet allocated fewer; the scenario written for the node admits it
    with its allocated budget."""
    if not indexed:
        monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    fleet = one_dump_fleet(tmp_path)
    path, doc = pods_dump(fleet)
    node = doc["items"][0]["spec"]["nodeName"]
    big = _pod("p9", "1000", node=node)
    doc["items"].append(big)
    path.write_text(json.dumps(doc, indent=1))
    report = analyze(str(fleet))
    base = next(n for n in report["nodes"] if n["name"] == node)["baseline"]
    assert [x["pod"] for x in base["rejected"]] == ["t/p9"]
    big["status"]["allocatedResources"] = {"cpu": "1", "memory": "1Gi"}
    path.write_text(json.dumps(doc, indent=1))
    out = tmp_path / "scenarios"
    report = analyze(str(fleet), "--as-scenario", str(out))
    base = next(n for n in report["nodes"] if n["name"] == node)["baseline"]
    assert base["rejected"] == []
    steps = yaml.safe_load((out / f"{node}.yaml").read_text())["steps"]
    (added,) = [s["addPod"] for s in steps if "addPod" in s and s["addPod"]["metadata"]["name"] == "p9"]
    assert added["spec"]["resources"]["requests"]["cpu"] == "1"
    assert added["spec"]["resources"]["limits"]["cpu"] == "1"


def test_the_index_reads_the_pod_level_allocation_as_the_general_reader(tmp_path: Path) -> None:
    """Pods read from a dump's byte ranges (the typed decoding, memoised by
    the bytes of spec and status) are the compact pods of the general
    decoding: pods of one spec with other allocations each get their own,
    a pod without pod-level resources keeps its spec whatever the status's
    ``allocatedResources`` (the kubelet writes them for every pod)."""
    from podnuma.fleet.pods import with_ranged_pods
    from podnuma.fleet.podscan import ScannedPod, index_pod_file, pods_of_ranges

    applied = {"requests": {"cpu": "2500m", "memory": "1124Mi"}, "limits": {"cpu": "3500m", "memory": "1124Mi"}}
    pods = [_pod("p1", "4"), _pod("p2", "4", {"cpu": "2", "memory": "1Gi"}),
            _pod("p3", "4", {"cpu": "3", "memory": "1Gi"}),
            _pod("p4", "4", {"cpu": "2500m", "memory": "1124Mi"}, overhead={"cpu": "500m", "memory": "100Mi"},
                 applied=applied),
            _pod("p5", "4", {"cpu": "2", "memory": "1Gi"})]
    plain = _pod("p6", "4", {"cpu": "9", "memory": "1Gi"})
    del plain["spec"]["resources"]
    plain["spec"]["containers"] = [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]
    pods.append(plain)
    f = tmp_path / "pods.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": pods}, indent=1))
    index = index_pod_file(f)
    assert index is not None and list(index.ranges) == ["n"]
    compact, _ = pods_of_ranges(index.ranges)
    scanned, _ = pods_of_ranges(index.ranges, scanned=True)
    want = with_ranged_pods("n", [], compact["n"])
    got = with_ranged_pods("n", [], scanned["n"])
    assert all(type(p) is ScannedPod for p in got)
    assert [dict(p) for p in got] == want == [compact_pod(p) for p in pods]
    cpus = [p["spec"].get("resources", {}).get("requests", {}).get("cpu") for p in want]
    assert cpus == ["4", "2", "3", "2", "2", None]
    assert got[1].key == got[4].key != got[0].key
    assert want[5]["spec"]["containers"] == plain["spec"]["containers"]


def test_an_applied_limit_below_the_allocated_request_is_not_taken() -> None:
    """The cgroup's limits are older than the allocation (a resize
    allocated, not yet applied, beside another pending): a limit below the
    allocated request would make a pod the API server cannot have served;
    the limit follows the allocated request instead, as the spec's equals
    its request."""
    pod = _pod("p1", "8", {"cpu": "4", "memory": "1Gi"},
               applied={"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}})
    got = compact_pod(pod)["spec"]["resources"]
    assert got == {"requests": {"cpu": "4", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "1Gi"}}
    assert _replay([pod])["baseline"]["admitted"] == 1
