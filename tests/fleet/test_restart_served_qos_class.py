"""The restart what-if reads each pod's QoS class as the replay does: the
class the API server served (``status.qosClass``), before and after the
restart.

The kubelet asks ``GetPodQOS`` (k8s.io/kubernetes v1.37.2
pkg/apis/core/v1/helper/qos/qos.go), which returns ``status.qosClass``
when it is set and computes the class from the spec only when it is not;
the pods a restarted kubelet admits again come from the API server with
their status. A scenario's pods are created by the scenario, their class
computed: the restart what-if carries the served classes into both of its
runs (the node's pods admitted, then the kubelet restarted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.fleet.inputs import with_inline_pods
from podnuma.fleet.model import NodeSpec
from podnuma.fleet.replay import node_scenarios_with_density, replay_node
from podnuma.fleet.restart import restart_scenario_of, served_classes
from podnuma.fleet.whatif import parse_what_if

SPEC = {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 4, "threadsPerCore": 1,
        "memoryPerNumaNode": "16Gi"}
RESTART = parse_what_if("restart")


def _node() -> NodeSpec:
    """A node whose pod-level pods are allocated afresh when the kubelet
    restarts (kubernetes#140989), and rejected here by single-NUMA
    alignment: a pod-level pod holding CPUs is rejected, one holding none
    (not Guaranteed) kept."""
    return NodeSpec(name="n", config={
        "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerScope": "pod",
        "topologyManagerPolicy": "single-numa-node", "featureGates": {"PodLevelResourceManagers": True}},
        topology={"synthetic": SPEC})


def _pod(name: str, cpu: str, qos: str | None) -> dict[str, Any]:
    """A pod-level pod Guaranteed by its spec; ``qos`` its served class."""
    res = {"cpu": cpu, "memory": "1Gi"}
    status: dict[str, Any] = {"phase": "Running", "startTime": f"2026-01-01T00:00:0{name[-1]}Z"}
    if qos is not None:
        status["qosClass"] = qos
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "t", "uid": f"uid-{name}",
                         "creationTimestamp": f"2026-01-01T00:00:0{name[-1]}Z"},
            "spec": {"nodeName": "n", "resources": {"requests": res, "limits": dict(res)},
                     "containers": [{"name": "c"}]},
            "status": status}


def test_a_pod_served_burstable_holds_no_cpus_before_nor_after_the_restart() -> None:
    """p1's spec is Guaranteed, its served class Burstable: the replay
    gives it no exclusive CPUs (p2 alone pins 3), and so does the restart:
    p1 is kept (nothing to move), p2 held the CPUs the replay gave it
    (1-3) and is rejected. With p1 computed Guaranteed (no served class),
    both held CPUs and both are rejected."""
    r = replay_node(with_inline_pods(_node(), [_pod("p1", "2", "Burstable"), _pod("p2", "3", None)]), [RESTART])
    assert r["baseline"]["exclusiveCpus"] == 3
    assert any(i["message"].startswith("pod t/p1: replayed as Burstable") for i in r["issues"])
    restart = r["whatIfs"]["restart"]["restart"]
    assert (restart["kept"], restart["rejected"]) == (1, 1)
    (p2,) = restart["pods"]
    assert (p2["pod"], p2["outcome"], p2["before"]) == ("t/p2", "rejected", "1-3")
    r = replay_node(with_inline_pods(_node(), [_pod("p1", "2", None), _pod("p2", "3", None)]), [RESTART])
    assert r["baseline"]["exclusiveCpus"] == 5
    restart = r["whatIfs"]["restart"]["restart"]
    assert (restart["kept"], restart["rejected"]) == (0, 2)
    assert [(p["pod"], p["before"]) for p in restart["pods"]] == [("t/p1", "1-2"), ("t/p2", "4-6")]


def test_a_served_class_the_spec_also_gives_changes_nothing() -> None:
    """Served classes equal to the spec's: the same restart as without
    them."""
    bare = replay_node(with_inline_pods(_node(), [_pod("p1", "2", None), _pod("p2", "3", None)]), [RESTART])
    served = replay_node(with_inline_pods(_node(), [_pod("p1", "2", "Guaranteed"),
                                                    _pod("p2", "3", "Guaranteed")]), [RESTART])
    assert served["whatIfs"]["restart"]["restart"] == bare["whatIfs"]["restart"]["restart"]


def test_the_written_restart_scenario_starts_from_the_replayed_checkpoints() -> None:
    """``--as-scenario``'s restart scenario starts from the CPU manager's
    checkpoint of the run the report replayed: p1 (served Burstable) holds
    no entry in it, p2 the CPUs the replay gave it."""
    spec = with_inline_pods(_node(), [_pod("p1", "2", "Burstable"), _pod("p2", "3", None)])
    runs, _ = node_scenarios_with_density(spec, [RESTART], density=False)
    assert served_classes(runs["restart"]["steps"]) == {"t/p1": "Burstable"}
    restarted = restart_scenario_of(runs["restart"], "n")
    assert restarted is not None
    cpu = restarted["state"]["cpuManager"]
    assert cpu["entries"] == {"uid-p2": {"c": "1-3"}}
    assert cpu["defaultCpuSet"] == "0,4-7"


def test_served_classes_reads_what_get_pod_qos_reads() -> None:
    """An absent or empty ``status.qosClass`` is no served class (the class
    is computed from the spec); any other string is, as ``GetPodQOS``
    returns it: one none of the three classes (``Platinum``, an API server
    never writes one) makes the pod not Guaranteed to the kubelet's
    managers, and stands as BestEffort. A pod without a namespace is in
    ``default``."""
    steps: list[dict[str, Any]] = [{"addPod": _pod(f"p{i}", "1", q)} for i, q in
                                   enumerate((None, "", "Platinum", "Burstable"))]
    del steps[3]["addPod"]["metadata"]["namespace"]
    steps.append({"reconcile": {}})
    assert served_classes(steps) == {"t/p2": "BestEffort", "default/p3": "Burstable"}


def test_an_unknown_served_class_is_not_guaranteed_to_the_managers() -> None:
    """p1's spec is Guaranteed, its status.qosClass ``Platinum``:
    ``GetPodQOS`` returns it, and the static CPU manager gives exclusive CPUs
    only to a ``Guaranteed`` pod, so p1 holds none (as served Burstable)
    and p2 alone pins 3; the issue names the value served. Through the
    restart too: p1 kept (nothing to move), p2 rejected."""
    r = replay_node(with_inline_pods(_node(), [_pod("p1", "2", "Platinum"), _pod("p2", "3", None)]), [RESTART])
    assert r["baseline"]["exclusiveCpus"] == 3
    assert any(i["message"].startswith("pod t/p1: its status.qosClass 'Platinum' is none of the three")
               for i in r["issues"]), r["issues"]
    restart = r["whatIfs"]["restart"]["restart"]
    assert (restart["kept"], restart["rejected"]) == (1, 1)
    (p2,) = restart["pods"]
    assert (p2["pod"], p2["outcome"], p2["before"]) == ("t/p2", "rejected", "1-3")


@pytest.mark.parametrize("indexed", [True, False])
def test_a_dumps_served_classes_reach_the_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    """Read from a dump (by its index, or by the general reader): every
    pod's served class is handed to the restart of its node, the one the
    replay gave it (here a pinned Guaranteed pod served as Burstable)."""
    import podnuma.analysis.restart as restart_mod
    import podnuma.fleet.inputs as inputs_mod

    from .onedump import analyze, guaranteed, one_dump_fleet, pods_dump

    if not indexed:
        monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    fleet = one_dump_fleet(tmp_path)
    path, doc = pods_dump(fleet)
    pod = guaranteed(doc)
    pod["status"]["qosClass"] = "Burstable"
    path.write_text(json.dumps(doc, indent=1))
    handed: dict[str, dict[str, str]] = {}
    plain = restart_mod.restart_after_document

    def spy(d: Any, *, name: str, base_dir: Any = None, served: Any = None) -> Any:
        handed[name] = dict(served or {})
        return plain(d, name=name, base_dir=base_dir, served=served)

    monkeypatch.setattr(restart_mod, "restart_after_document", spy)
    analyze(str(fleet), "--what-if", "restart")
    node = pod["spec"]["nodeName"]
    ref = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
    assert handed[f"node {node}"][ref] == "Burstable"
    want = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["status"]["qosClass"]
            for p in doc["items"] if p["spec"].get("nodeName") == node and p["status"].get("qosClass")
            and p["status"].get("phase") in ("Running", "Pending", "Unknown")}
    assert handed[f"node {node}"] == want
