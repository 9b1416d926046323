from __future__ import annotations

from podnuma.fleet.inputs import load_fleet, with_inline_pods
from podnuma.fleet.model import NodeSpec
from podnuma.fleet.replay import replay_node, workload_of
from podnuma.fleet.whatif import parse_what_if

from .conftest import EXAMPLE
from .test_inputs import A1, B1


def _node(name: str) -> NodeSpec:
    return next(n for n in load_fleet([EXAMPLE]).nodes if n.name == name)


def test_figures_of_a_pinned_node_as_running() -> None:
    r = replay_node(_node(A1))
    b = r["baseline"]
    assert r["status"] == "ok" and b["admitted"] == b["pods"] == 11 and b["rejected"] == []
    # checkout-api x2 (4 + istio-proxy 1), indexer (8 + 1 + 1), orders-pg (4 + exporter 1),
    # matcher (2); query-engine is pod-level and the PodLevelResourceManagers gate is off.
    assert b["exclusiveCpus"] == 5 + 5 + 10 + 5 + 2
    assert b["sidecarOnlyCpus"] == 1 + 1 + 2 + 1
    assert b["reservedCpus"] == 2 and b["freeCpus"] == 64 - 2 - 27
    assert b["density"]["payments/checkout-api"]["copies"] == 12


def test_pod_level_what_if_moves_the_sidecars_off_pinned_cpus() -> None:
    r = replay_node(_node(A1), [parse_what_if("pod-level,scope=pod")])
    w = r["whatIfs"]["pod-level,scope=pod"]
    assert w["rewrittenPods"] == 4  # 2 checkout-api, indexer, orders-pg
    assert w["sidecarOnlyCpus"] == 0
    assert w["rejected"] == []
    # every pod not rewritten says why
    assert len(w["notRewritten"]) == w["pods"] - w["rewrittenPods"]
    assert all(isinstance(x["reason"], str) and x["reason"] for x in w["notRewritten"])
    reasons = {x["pod"]: x["reason"] for x in w["notRewritten"]}
    assert any(r.startswith("already pod-level") for r in reasons.values()), reasons


def test_a_running_pod_podnuma_rejects_is_a_note() -> None:
    r = replay_node(_node(B1))
    assert [x["reason"] for x in r["baseline"]["rejected"]] == ["SMTAlignmentError"]
    notes = [i for i in r["issues"] if "which is running" in i["message"]]
    assert len(notes) == 1 and "drifted" in notes[0]["message"]
    assert r["status"] == "warning"


def _pod(name: str, cpu: str, memory: str) -> dict[str, object]:
    res = {"cpu": cpu, "memory": memory}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "t", "creationTimestamp": f"2026-01-01T00:00:0{name[-1]}Z"},
            "spec": {"nodeName": "n", "containers": [
                {"name": "c", "resources": {"requests": res, "limits": dict(res)}}]},
            "status": {"phase": "Running"}}


def test_cpus_of_a_numa_node_without_memory_left_are_stranded() -> None:
    spec = NodeSpec(
        name="n",
        config={"cpuManagerPolicy": "static", "memoryManagerPolicy": "Static",
                "kubeReserved": {"cpu": "1", "memory": "1Gi"},
                "evictionHard": {"memory.available": "100Mi"},
                "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]},
        topology={"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}},
    )
    r = replay_node(with_inline_pods(spec, [_pod("p1", "2", "5Gi")]))
    b = r["baseline"]
    assert b["exclusiveCpus"] == 2 and b["freeCpus"] == 8 - 1 - 2
    # 8Gi - 1124Mi reserved - 5Gi leaves < 5Gi: no copy of the 5Gi pod fits there.
    assert b["strandedCpus"] == b["freeCpus"] == 5
    r2 = replay_node(with_inline_pods(spec, [_pod("p1", "2", "1Gi")]))
    assert r2["baseline"]["strandedCpus"] == 0


def test_workload_of_a_replicaset_pod_is_its_deployment() -> None:
    pod = {"metadata": {"namespace": "ns", "name": "web-6c9f7d8b54-x2kqp",
                        "labels": {"pod-template-hash": "6c9f7d8b54"},
                        "ownerReferences": [{"kind": "ReplicaSet", "name": "web-6c9f7d8b54",
                                             "controller": True}]}}
    assert workload_of(pod) == ("Deployment", "ns/web")
    assert workload_of({"metadata": {"namespace": "ns", "name": "solo"}}) == ("Pod", "ns/solo")


def test_what_if_grammar() -> None:
    import pytest

    from podnuma.errors import InputError

    w = parse_what_if("pod-level,shared-pool-cpus=1,scope=pod,cpu-option=full-pcpus-only")
    assert w.pod_level and w.shared_pool_cpus == 1
    assert w.fields == (("topologyManagerScope", "pod"),)
    assert w.options == (("cpuManagerPolicyOptions", "full-pcpus-only"),)
    for bad in ("scope=pods", "shared-pool-cpus=1", "color=red", "pod-level,shared-pool-cpus=x", ""):
        with pytest.raises(InputError):
            parse_what_if(bad)


def test_a_what_if_the_kubelet_refuses_is_reported_for_that_run_only() -> None:
    r = replay_node(_node(A1), [parse_what_if("cpu-option=no-such-option"), parse_what_if("scope=pod")])
    assert "error" in r["whatIfs"]["cpu-option=no-such-option"]
    assert r["whatIfs"]["scope=pod"]["admitted"] == 11


def test_a_replayed_node_is_freed_by_its_reference_counts() -> None:
    """The node a run builds goes as its last reference does: no loop of
    references keeps it (and every pod's state in it) waiting for the
    cyclic garbage collector."""
    import gc

    from podnuma.fleet.podscan import node_pods
    from podnuma.fleet.replay import ReplayCache, _config, _machine, _parse_pods, node_run

    spec = _node(A1)
    cache = ReplayCache()
    machine, config = _machine(spec, cache), _config(spec.config or {}, cache)
    pods, _ = _parse_pods(node_pods(A1, spec.pod_files, spec.pod_ranges)[0], config, A1, cache)
    assert len(pods) == 11
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        out, steps, _ = node_run(machine, config, pods, node=A1)
        assert out["admitted"] == 11
        del out, steps
        gc.collect()
        # only podnuma's objects count: another thread of the test process
        # (a server or cluster a test left running) may drop cycles of its own
        # (frames, tracebacks) meanwhile
        ours = [o for o in gc.garbage if type(o).__module__.startswith("podnuma")]
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
