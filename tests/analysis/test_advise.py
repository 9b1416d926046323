"""``podnuma advise``: rewrites are re-simulated (admitted, the main
container keeps its exclusive CPUs, the output parses as a Pod), inputs
(multi-document YAML, kubectl lists), skip reasons, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.analysis import advise as advise_mod
from podnuma.analysis.advise import advise_pod
from podnuma.analysis.measure import measure
from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.advise import advise_command
from podnuma.inputs.discover import load_node
from podnuma.inputs.pods import default_config, default_machine
from podnuma.machine.cpuset import CPUSet

from ..records import replace
from .conftest import (
    KEP_NODE,
    guaranteed,
    kep2_app_sidecars,
    kep2_per_container,
    kubelet_config,
    tutorial_part_a,
    write,
)

GATES_ON = FeatureGates.from_mapping({"PodLevelResourceManagers": True})


def resimulate(manifest: dict[str, Any]) -> Any:
    """The rewrite on the built-in node, as a fresh pod."""
    cfg = default_config()
    pod = parse_pod(manifest, gates=cfg.feature_gates)
    return measure(default_machine(), cfg, pod, label="check", cap=1)


def tutorial_like() -> dict[str, Any]:
    """The tutorial's Part A pod as people write it today (per-container,
    Guaranteed sidecars) with a bigger main container."""
    doc = kep2_per_container("web")
    doc["metadata"]["namespace"] = "shop"
    doc["metadata"]["labels"] = {"app": "web"}
    doc["spec"]["containers"][0]["resources"] = guaranteed("6", "8Gi")
    doc["spec"]["containers"][0]["env"] = [{"name": "MODE", "value": "prod"}]
    return doc


# --------------------------------------------------------------------------
# rewrites, verified


@pytest.mark.parametrize(
    ("doc", "main", "main_cpus", "moved", "freed"),
    [
        (kep2_per_container(), "main-app", 2, ["metrics-sidecar", "logging-sidecar"], 2),
        (tutorial_like(), "main-app", 6, ["metrics-sidecar", "logging-sidecar"], 2),
        (kep2_app_sidecars(), "container-1", 2, ["container-2", "container-3"], 2),
    ],
    ids=["kep-example-2", "tutorial-like", "kep-app-sidecars"],
)
def test_rewrite_resimulated(
    doc: dict[str, Any], main: str, main_cpus: int, moved: list[str], freed: int
) -> None:
    a = advise_pod(doc, default_machine(), default_config(), where="x#0")
    assert a.status == "rewritten", a.reason
    assert a.rewrite is not None and a.before is not None and a.after is not None
    text = yaml.safe_dump(a.rewrite.manifest, sort_keys=False)
    manifest = yaml.safe_load(text)
    pod = parse_pod(manifest, gates=GATES_ON)
    assert pod.resources is not None
    assert [p.name for p in a.rewrite.containers if p.role == "shared"] == moved
    for name in moved:
        c = pod.container(name)
        # the default strategy (keep-limits) keeps the memory request and
        # limit, never the CPU ones (they would make it exclusive again)
        assert "cpu" not in c.requests and "cpu" not in c.limits
        assert "memory" in c.limits and c.requests["memory"] == c.limits["memory"]

    m = resimulate(manifest)
    assert m.admitted and m.qos_class == "Guaranteed"
    excl = m.exclusive_by_container()
    assert set(excl) == {main} and excl[main].size() == main_cpus
    assert {c.name for c in m.containers if c.isolation == "pod"} == set(moved)
    assert m.sidecar_only_cpus.is_empty()

    s = a.savings()
    assert s["exclusiveCpusFreed"] == freed
    assert s["sidecarOnlyCpusBefore"] == 2 and s["sidecarOnlyCpusAfter"] == 0
    assert s["densityAfter"] >= 1 and s["densityBefore"] >= 1
    # unchanged besides resources
    assert manifest["metadata"] == doc["metadata"]
    assert manifest["spec"]["containers"][0].get("env") == doc["spec"]["containers"][0].get("env")


def test_kep_example_2_numbers() -> None:
    a = advise_pod(kep2_per_container(), default_machine(), default_config())
    assert a.savings() == {
        "cpusReturnedToNode": 0,
        "exclusiveCpusBefore": 4,
        "exclusiveCpusAfter": 2,
        "exclusiveCpusFreed": 2,
        "sidecarOnlyCpusBefore": 2,
        "sidecarOnlyCpusAfter": 0,
        "podSharedCpusAfter": 2,
        "cpusTakenFromNodeBefore": 4,
        "cpusTakenFromNodeAfter": 4,
        "densityBefore": 7,
        "densityAfter": 7,
        "admittedBefore": True,
        "rejectedBefore": None,
    }
    assert a.rewrite is not None
    assert a.rewrite.manifest["spec"]["resources"] == guaranteed("4", "4Gi")


def test_rewrite_admits_what_per_container_cannot() -> None:
    cfg = load_kubelet_config(
        kubelet_config(reservedSystemCPUs="0,16", cpuManagerPolicyOptions={"full-pcpus-only": "true"})
    )
    a = advise_pod(kep2_per_container(), default_machine(), cfg)
    assert a.status == "rewritten"
    assert a.before is not None and not a.before.admitted and a.before.reason == "SMTAlignmentError"
    assert a.after is not None and a.after.admitted and a.after.density == 7
    assert any("rejected on this node" in n for n in a.notes)


# --------------------------------------------------------------------------
# skips


def _skip_reason(doc: Any, **kw: Any) -> str:
    a = advise_pod(doc, kw.get("machine") or default_machine(), kw.get("config") or default_config())
    assert a.status == "skipped"
    assert a.reason is not None
    return a.reason


def test_skip_reasons() -> None:
    burstable = kep2_per_container()
    del burstable["spec"]["initContainers"][1]["resources"]
    assert _skip_reason(burstable).startswith("not Guaranteed (QoS Burstable)")
    assert _skip_reason(tutorial_part_a()) == "already pod-level (spec.resources is set)"
    all_main = {"metadata": {"name": "m"}, "spec": {"containers": [
        {"name": "a", "resources": guaranteed("2", "1Gi")},
        {"name": "b", "resources": guaranteed("2", "1Gi")}]}}
    assert _skip_reason(all_main).startswith("no exclusive CPUs to gain")
    small = {"metadata": {"name": "s"}, "spec": {
        "initContainers": [{"name": "side", "restartPolicy": "Always",
                            "resources": guaranteed("200m", "64Mi")}],
        "containers": [{"name": "a", "resources": guaranteed("2", "1Gi")}]}}
    assert _skip_reason(small).startswith("no exclusive CPUs to gain")
    assert _skip_reason({"apiVersion": "apps/v1", "kind": "Deployment"}) == "Deployment without a pod template"
    assert _skip_reason({"apiVersion": "v1", "kind": "ConfigMap"}) == "not a Pod (kind ConfigMap)"
    assert _skip_reason(["a", "list"]).startswith("not a Pod manifest")
    assert _skip_reason({"metadata": {"name": "Bad_Name"}, "spec": {"containers": [{"name": "a"}]}}).startswith(
        "invalid pod: metadata.name"
    )
    # static CPU policy off: nothing is exclusive before, nothing to gain
    none_cfg = load_kubelet_config(kubelet_config(cpuManagerPolicy="none", reservedSystemCPUs=None))
    assert _skip_reason(kep2_per_container(), config=none_cfg).startswith(
        "no exclusive CPUs to gain (measured: 0 exclusive before"
    )


def test_skip_when_rewrite_would_be_rejected(tmp_path: Path) -> None:
    """Huge pages only on the main container: the rewrite adds one page to
    the pod budget (the kubelet rejects an empty shared pool); on a node
    with exactly 1Gi of 2Mi pages per NUMA node that no longer fits one NUMA
    node -> the rewrite is never emitted."""
    node = load_node({**KEP_NODE, "synthetic": {**KEP_NODE["synthetic"],
                                                "hugepagesPerNumaNode": {"hugepages-2Mi": "1Gi"}}},
                     base_dir=tmp_path)
    doc = kep2_per_container()
    doc["spec"]["containers"][0]["resources"] = guaranteed("2", "2Gi", **{"hugepages-2Mi": "1Gi"})
    a = advise_pod(doc, node, load_kubelet_config(kubelet_config()))
    assert a.status == "skipped"
    assert a.reason is not None and a.reason.startswith("no rewrite is admitted: shared pool 2 (budget 4): "
                                                        "TopologyAffinityError")
    assert a.candidates and all(c.verdict == "refused" for c in a.candidates)
    assert all(c.reason is not None and c.reason.startswith("TopologyAffinityError") for c in a.candidates)
    assert a.before is not None and a.before.admitted
    fixed = advise_pod(doc, node, load_kubelet_config(kubelet_config()), shared_pool_cpus=2)
    assert fixed.reason is not None and fixed.reason.startswith("the rewrite would be rejected: TopologyAffinityError")


def test_skip_when_main_would_lose_exclusive_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    real = advise_mod.measure_manifest

    def no_exclusive(*args: Any, **kw: Any) -> Any:
        m = real(*args, **kw)
        containers = tuple(replace(c, isolation="pod") for c in m.containers)
        return replace(m, containers=containers, exclusive_cpus=CPUSet())

    monkeypatch.setattr(advise_mod, "measure_manifest", no_exclusive)
    a = advise_pod(kep2_per_container(), default_machine(), default_config(), shared_pool_cpus=2)
    assert a.status == "skipped"
    assert a.reason == "the rewrite would take exclusive CPUs from main-app (2 wanted, 0 exclusive after)"


# --------------------------------------------------------------------------
# command line


def _docs(text: str) -> list[Any]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def test_cli_multi_document(runner: CliRunner, tmp_path: Path) -> None:
    burstable = kep2_per_container("burst")
    del burstable["spec"]["initContainers"][1]["resources"]
    f = write(tmp_path / "pods.yaml", kep2_per_container(), tutorial_part_a(), burstable,
              {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}, tutorial_like())
    r = runner.invoke(advise_command, [str(f)])
    assert r.exit_code == 0, r.output
    docs = _docs(r.stdout)
    assert [d["metadata"]["name"] for d in docs] == ["pod-scope-mixed", "web"]
    for d in docs:
        m = resimulate(d)
        assert m.admitted
        assert "main-app" in m.exclusive_by_container()
    out = r.stdout
    assert f"{f}#1 default/pod-scope-mixed: skipped: already pod-level" in out
    assert f"{f}#2 default/burst: skipped: not Guaranteed (QoS Burstable)" in out
    assert f"{f}#3 default/svc: skipped: not a Pod (kind Service)" in out
    assert "exclusive CPUs 4 -> 2; sidecar-only CPUs 2 -> 0" in out
    assert "CPUs taken from the node unchanged (4): the 2 go to the pod's shared pool" in out
    assert "density unchanged: 7 copies" in out
    assert "node: built-in" in out


def test_cli_kubectl_list_json(runner: CliRunner, tmp_path: Path) -> None:
    item = kep2_per_container("p1")
    item["metadata"].update(namespace="prod", uid="1234", resourceVersion="5",
                            creationTimestamp="2024-01-01T00:00:00Z")
    item["status"] = {"phase": "Running", "qosClass": "Guaranteed"}
    lst = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
           "items": [item, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2"},
                            "spec": {"containers": [{"name": "a"}]}}]}
    f = tmp_path / "pods.json"
    f.write_text(json.dumps(lst), encoding="utf-8")
    r = runner.invoke(advise_command, [str(f), "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    p1, p2 = doc["pods"]
    assert p1["source"] == f"{f}#0.items[0]" and p1["pod"] == "prod/p1" and p1["status"] == "rewritten"
    assert "status" not in p1["rewrite"] and "uid" not in p1["rewrite"]["metadata"]
    assert p1["savings"]["exclusiveCpusFreed"] == 2
    assert p1["after"]["admitted"] is True
    assert p2["status"] == "skipped" and p2["reason"].startswith("not Guaranteed (QoS BestEffort)")
    parse_pod(p1["rewrite"], gates=GATES_ON)

    # the YAML form of the same list
    fy = write(tmp_path / "pods.yaml", lst)
    r = runner.invoke(advise_command, [str(fy)])
    assert r.exit_code == 0, r.output
    (d,) = _docs(r.stdout)
    assert d["metadata"] == {"name": "p1", "namespace": "prod"}


def test_cli_diff(runner: CliRunner, tmp_path: Path) -> None:
    f = write(tmp_path / "pod.yaml", kep2_per_container())
    r = runner.invoke(advise_command, [str(f), "--diff"])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert f"--- a/{f}#0" in out and f"+++ b/{f}#0" in out
    assert "+  resources:" in out
    assert "-          cpu: '1'" in out
    assert "+      cpu: '4'" in out


def test_cli_node_and_config(runner: CliRunner, tmp_path: Path, kep_files: tuple[Path, Path]) -> None:
    node, cfg = kep_files
    f = write(tmp_path / "pod.yaml", kep2_per_container())
    r = runner.invoke(advise_command, [str(f), "--node", str(node), "--kubelet-config", str(cfg), "-o", "json"])
    assert r.exit_code == 0, r.output
    (p,) = json.loads(r.stdout)["pods"]
    assert p["after"]["podAllocation"] == "1-4"
    assert p["savings"]["densityBefore"] == p["savings"]["densityAfter"] == 3


def test_cli_bad_inputs_each_named_nothing_printed(runner: CliRunner, tmp_path: Path) -> None:
    """Every bad input is named, one line each; the good one's advice is
    not printed (nothing is, nor the scenario written, before every input
    is valid)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: x\n", encoding="utf-8")
    good = write(tmp_path / "good.yaml", kep2_per_container())
    missing = tmp_path / "missing.yaml"
    scenario = tmp_path / "replay.yaml"
    for fmt in ("yaml", "json"):
        r = runner.invoke(advise_command, [str(bad), str(good), str(missing), "-o", fmt,
                                           "--as-scenario", str(scenario)])
        assert r.exit_code == 2
        assert r.stdout == ""
        lines = r.stderr.splitlines()
        assert len(lines) == 2, r.stderr
        assert lines[0].startswith(f"error: {bad}: invalid YAML")
        assert lines[1] == f"error: {missing}: pod file not found"
        assert not scenario.exists()
    r = runner.invoke(advise_command, [str(good)])
    assert r.exit_code == 0 and r.stdout
    (d,) = _docs(r.stdout)  # the good file was still handled
    assert d["metadata"]["name"] == "pod-scope-mixed"


def test_cli_bad_config_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    f = write(tmp_path / "pod.yaml", kep2_per_container())
    cfg = write(tmp_path / "cfg.yaml", kubelet_config(topologyManagerPolicy="sometimes"))
    r = runner.invoke(advise_command, [str(f), "--kubelet-config", str(cfg)])
    assert r.exit_code == 2, r.output
    assert "kubelet would not start" in r.stderr and "Traceback" not in r.output


def _sized_pod() -> dict[str, Any]:
    """A main container with 4 whole CPUs and three Guaranteed 1-CPU sidecars."""
    doc = kep2_per_container("sized")
    doc["spec"]["containers"][0]["resources"] = guaranteed("4", "4Gi")
    doc["spec"]["initContainers"] = [
        {"name": n, "restartPolicy": "Always", "resources": guaranteed("1", "256Mi")}
        for n in ("log", "metrics", "proxy")
    ]
    doc["spec"]["containers"] = doc["spec"]["containers"][:1]
    return doc


def test_shared_pool_cpus_sizes_the_budget() -> None:
    """--shared-pool-cpus 1: budget = the main container's 4-CPU slice + 1 CPU
    for the three sidecars; fewer CPUs taken from the node, more copies fit,
    and the rewrite is still admitted with the main slice intact."""
    keep = advise_pod(_sized_pod(), default_machine(), default_config())
    sized = advise_pod(_sized_pod(), default_machine(), default_config(), shared_pool_cpus=1)
    assert keep.rewrite is not None and sized.rewrite is not None
    assert keep.rewrite.manifest["spec"]["resources"]["requests"]["cpu"] == "7"
    assert sized.rewrite.manifest["spec"]["resources"]["requests"]["cpu"] == "5"
    s = sized.savings()
    assert (s["cpusTakenFromNodeBefore"], s["cpusTakenFromNodeAfter"]) == (7, 5)
    assert s["exclusiveCpusAfter"] == 4 and s["podSharedCpusAfter"] == 1
    assert s["densityAfter"] > s["densityBefore"]
    check = resimulate(sized.rewrite.manifest)
    assert check.admitted
    main = next(c for c in check.containers if c.name == "main-app")
    assert main.isolation == "container" and main.cpus.size() == 4


def test_shared_pool_cpus_never_starves_an_exclusive_init_container() -> None:
    """The budget stays large enough for an exclusive regular init container
    (6 CPUs) even when the slices plus the pool are smaller."""
    doc = _sized_pod()
    doc["spec"]["initContainers"].insert(0, {"name": "warmup", "resources": guaranteed("6", "1Gi")})
    a = advise_pod(doc, default_machine(), default_config(), shared_pool_cpus=1)
    assert a.rewrite is not None
    assert a.rewrite.manifest["spec"]["resources"]["requests"]["cpu"] == "6"


# --------------------------------------------------------------------------
# workloads


def _workloads() -> dict[str, Any]:
    import yaml

    pod = yaml.safe_load((Path(__file__).resolve().parents[2] / "examples" / "whatif" / "trainer-pod.yaml").read_text())
    spec = dict(pod["spec"], nodeName="node-1")
    template = {"metadata": {"labels": {"app": "t"}}, "spec": spec}
    server = {"uid": "u", "resourceVersion": "7", "managedFields": [{"manager": "kubectl"}]}
    items = [
        {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": kind.lower(), "namespace": "ml", **server},
         "spec": {"template": template}, "status": {"replicas": 1}}
        for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")
    ]
    items.append({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cron"},
                  "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": template}}}})
    items.append({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "pt"}, "template": template})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def test_workload_templates_are_rewritten_in_place(tmp_path: Path) -> None:
    import json as _json

    f = tmp_path / "workloads.json"
    f.write_text(_json.dumps(_workloads()))
    r = CliRunner().invoke(advise_command, [str(f), "-o", "json"])
    assert r.exit_code == 0, r.output
    pods = _json.loads(r.stdout)["pods"]
    kinds = [p["rewrite"]["kind"] for p in pods]
    assert kinds == ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "PodTemplate"]
    for p in pods:
        assert p["status"] == "rewritten", p
        m = p["rewrite"]
        assert "status" not in m
        assert not {"uid", "resourceVersion", "managedFields"} & set(m["metadata"])
        template = m["template"] if m["kind"] == "PodTemplate" else (
            m["spec"]["jobTemplate"]["spec"]["template"] if m["kind"] == "CronJob" else m["spec"]["template"]
        )
        assert template["metadata"] == {"labels": {"app": "t"}}
        assert "nodeName" not in template["spec"]
        assert template["spec"]["resources"]["requests"]["cpu"] == "11"
        assert p["savings"]["exclusiveCpusFreed"] == 3


def test_workload_without_template_is_invalid_input(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    f.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n")
    r = CliRunner().invoke(advise_command, [str(f)])
    assert r.exit_code == 2
    assert f"error: {f}: spec.template: required field is missing: a pod template with a spec" in r.stderr


def test_workload_template_errors_name_the_template_path(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: a\n        resources: {limits: {cpu: two}}\n"
    )
    r = CliRunner().invoke(advise_command, [str(f)])
    assert r.exit_code == 2
    assert f"error: {f}: spec.template.spec.containers[0].resources.limits[cpu]" in r.stderr


# --------------------------------------------------------------------------
# search, strategies, sidecar rules, what the rewrite changes


def _full_pcpus_trainer() -> tuple[dict[str, Any], Any, Any]:
    """A trainer rejected today under full-pcpus-only because of its 1-CPU
    sidecars: a native one and an istio-injected app container."""
    from podnuma.api.kubeletconfig import load_kubelet_config as load
    from podnuma.inputs.pods import load_node_file

    root = Path(__file__).resolve().parents[2] / "examples" / "whatif"
    cfg = yaml.safe_load((root / "kubelet-config.yaml").read_text())
    cfg["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "trainer", "namespace": "ml",
                        "annotations": {"sidecar.istio.io/status": "{}"}},
           "spec": {"initContainers": [{"name": "fluent-bit", "restartPolicy": "Always",
                                        "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}],
                    "containers": [{"name": "train", "resources": {"limits": {"cpu": "8", "memory": "40Gi"}}},
                                   {"name": "istio-proxy",
                                    "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}}
    return pod, load_node_file(root / "node.yaml"), load(cfg)


@pytest.mark.parametrize(
    ("strategy", "refused", "chosen"),
    [("keep-limits", ["11"], "12"), ("keep-cpus", ["11"], "12"), ("max-freed", ["9"], "10")],
)
def test_search_admits_the_pod_rejected_today(strategy: str, refused: list[str], chosen: str) -> None:
    pod, node, cfg = _full_pcpus_trainer()
    a = advise_pod(pod, node, cfg, strategy=strategy)
    assert a.status == "rewritten", a.reason
    assert a.before is not None and not a.before.admitted and a.before.reason == "SMTAlignmentError"
    assert [c.budget_cpus for c in a.candidates if c.verdict == "refused"] == refused
    for c in a.candidates:
        if c.verdict == "refused":
            assert c.reason is not None and c.reason.startswith("SMTAlignmentError: Pod was rejected: SMT Alignment")
    assert [c.budget_cpus for c in a.candidates if c.verdict == "chosen"] == [chosen]
    assert a.rewrite is not None and a.rewrite.manifest["spec"]["resources"]["requests"]["cpu"] == chosen
    assert a.after is not None and a.after.exclusive_cpus.size() == 8
    assert a.after.held_cpus.size() == int(chosen)
    moved = {p.name: p for p in a.rewrite.containers if p.role == "shared"}
    assert set(moved) == {"fluent-bit", "istio-proxy"}
    if strategy == "keep-limits":
        assert moved["istio-proxy"].kept == ("limits.memory=1Gi",)
        assert moved["istio-proxy"].lost == ("limits.cpu=2",)
    else:
        assert moved["istio-proxy"].kept == ()
        assert set(moved["istio-proxy"].lost) == {"limits.cpu=2", "limits.memory=1Gi"}


def test_fixed_pool_refused_says_why() -> None:
    pod, node, cfg = _full_pcpus_trainer()
    a = advise_pod(pod, node, cfg, shared_pool_cpus=1)
    assert a.status == "skipped"
    assert a.reason is not None and a.reason.startswith(
        "the rewrite would be rejected: SMTAlignmentError: Pod was rejected: SMT Alignment Error: "
        "requested 9 cpus")


def test_sidecar_rules() -> None:
    from podnuma.analysis.sidecars import recognise_sidecars

    doc = {"metadata": {"name": "p", "annotations": {
        "sidecar.istio.io/status": "{}", "linkerd.io/proxy-version": "stable",
        "vault.hashicorp.com/agent-inject-status": "injected", "dapr.io/enabled": "true",
        "consul.hashicorp.com/connect-inject-status": "injected", "appmesh.k8s.aws/mesh": "m",
        "sidecar.opentelemetry.io/inject": "true", "podnuma.io/sidecars": "helper"}},
        "spec": {"initContainers": [{"name": "native", "restartPolicy": "Always"}, {"name": "setup"}],
                 "containers": [{"name": n} for n in (
                     "app", "istio-proxy", "linkerd-proxy", "vault-agent", "daprd", "consul-dataplane",
                     "envoy", "otc-container", "helper", "mine")]}}
    pod = parse_pod(doc, gates=GATES_ON)
    rules = recognise_sidecars(pod, ["mine"])
    assert rules == {
        "native": "native sidecar (restartPolicy: Always)",
        "istio-proxy": "istio injector (container istio-proxy, annotation sidecar.istio.io/status)",
        "linkerd-proxy": "linkerd injector (container linkerd-proxy, annotation linkerd.io/proxy-version)",
        "vault-agent": "vault injector (container vault-agent, annotation vault.hashicorp.com/agent-inject-status)",
        "daprd": "dapr injector (container daprd, annotation dapr.io/enabled)",
        "consul-dataplane": "consul injector (container consul-dataplane, annotation "
                            "consul.hashicorp.com/connect-inject-status)",
        "envoy": "aws-app-mesh injector (container envoy, annotation appmesh.k8s.aws/mesh)",
        "otc-container": "opentelemetry injector (container otc-container, annotation sidecar.opentelemetry.io/inject)",
        "helper": "annotation podnuma.io/sidecars",
        "mine": "--sidecar mine",
    }
    # the container name alone is not enough: no injector mark, no sidecar
    bare = parse_pod({"metadata": {"name": "q"}, "spec": {"containers": [{"name": "app"}, {"name": "istio-proxy"}]}},
                     gates=GATES_ON)
    assert recognise_sidecars(bare) == {}


def test_injected_sidecar_is_moved_and_counted() -> None:
    """An istio-proxy injected as an app container: moved to the pod shared
    pool; its exclusive CPUs counted as sidecar-only before."""
    doc = kep2_per_container("mesh")
    doc["metadata"]["annotations"] = {"sidecar.istio.io/status": "{}"}
    doc["spec"]["containers"].append({"name": "istio-proxy", "resources": guaranteed("2", "512Mi")})
    a = advise_pod(doc, default_machine(), default_config())
    assert a.status == "rewritten", a.reason
    assert a.before is not None and a.before.sidecar_only_cpus.size() == 4
    assert a.rewrite is not None
    plan = {p.name: p for p in a.rewrite.containers}
    assert plan["istio-proxy"].role == "shared"
    assert plan["istio-proxy"].sidecar_rule is not None and plan["istio-proxy"].sidecar_rule.startswith("istio")


def test_cgroup_limits_before_after(tmp_path: Path) -> None:
    """keep-limits keeps a sidecar's memory.max; keep-cpus makes it the pod
    budget (from the cgroups plan of the replay scenario)."""
    from podnuma.inputs.text import TextInput
    from podnuma.service import whatif

    pod = Path(__file__).resolve().parents[2] / "examples" / "whatif" / "trainer-pod.yaml"
    kept = whatif.advise([TextInput.read(pod, what="pod")]).document()["pods"][0]
    lost = whatif.advise([TextInput.read(pod, what="pod")], strategy="keep-cpus").document()["pods"][0]
    assert kept["cgroups"]["log-shipper"]["before"]["memory.max"] == str(256 << 20)
    assert kept["cgroups"]["log-shipper"]["after"]["memory.max"] == str(256 << 20)
    assert lost["cgroups"]["log-shipper"]["after"]["memory.max"] == str(17 << 30)
    assert any(x.startswith("log-shipper: memory.max 256Mi -> 17Gi; keeps none") for x in lost["beyondCpus"])
    assert any(x.startswith("log-shipper: memory.max 256Mi -> 256Mi; keeps limits.memory=256Mi")
               for x in kept["beyondCpus"])


def test_cli_wording_and_diff_lists_losses(runner: CliRunner, tmp_path: Path) -> None:
    pod = Path(__file__).resolve().parents[2] / "examples" / "whatif" / "trainer-pod.yaml"
    r = runner.invoke(advise_command, [str(pod), "--diff", "--strategy", "keep-cpus"])
    assert r.exit_code == 0, r.output
    assert "CPUs taken from the node unchanged (11): the 3 go to the pod's shared pool" in r.stdout
    assert "lost: log-shipper loses its own limits.cpu=1, limits.memory=256Mi" in r.stdout
    r = runner.invoke(advise_command, [str(pod), "--shared-pool-cpus", "1"])
    assert r.exit_code == 0, r.output
    assert "CPUs taken from the node 11 -> 9: 2 returned to the node, the pod's shared pool holds 1" in r.stdout
    r = runner.invoke(advise_command, [str(pod), "--shared-pool-cpus", "zero"])
    assert r.exit_code == 2 and "expected auto or a whole number" in r.output


def test_devices_deferred_to_container_start_are_explained(tmp_path: Path) -> None:
    """A GPU pod rewritten pod-level: the replay shows no devices at
    admission (the kubelet assigns them when the container starts) and the
    advice says why."""
    import copy as _copy

    from podnuma.inputs.scenario import load_scenario_text
    from podnuma.inputs.text import TextInput
    from podnuma.scenario.document import build_document
    from podnuma.scenario.run import run_scenario
    from podnuma.service import whatif

    node = _copy.deepcopy(KEP_NODE)
    node["devices"] = {"example.com/gpu": [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1", "numaNodes": [1]}]}
    doc = kep2_per_container("gpu")
    res = doc["spec"]["containers"][0]["resources"]
    for part in ("requests", "limits"):
        res.setdefault(part, dict(res.get("limits", {})))[ "example.com/gpu"] = "1"
    pod_file = write(tmp_path / "pod.yaml", doc)
    node_file = write(tmp_path / "node.yaml", node)
    cfg_file = write(tmp_path / "kubelet.yaml", kubelet_config())
    got = whatif.advise([TextInput.read(pod_file, what="pod")], TextInput.read(node_file, what="node"),
                        TextInput.read(cfg_file, what="c"), with_scenario=True)
    (p,) = got.document()["pods"]
    assert p["status"] == "rewritten", p["reason"]
    assert any(x.startswith("devices (example.com/gpu): with the pod-level resource managers the kubelet "
                            "assigns them when each container starts") for x in p["beyondCpus"])
    assert got.scenario is not None
    scenario = load_scenario_text(yaml.safe_dump(got.scenario), name="s.yaml", base_dir=tmp_path)
    out = build_document(run_scenario(scenario))
    ix = got.replay[0]
    before = out["steps"][ix["beforeStep"]]
    after = out["steps"][ix["afterStep"]]
    main_before = next(c for c in before["containers"] if c["name"] == "main-app")
    main_after = next(c for c in after["containers"] if c["name"] == "main-app")
    assert main_before["devices"] == {"example.com/gpu": ["gpu0"]} or main_before["devices"] == {
        "example.com/gpu": ["gpu1"]}
    assert not main_after["devices"]


def test_cli_as_scenario_unwritable_is_input_error(runner: CliRunner, tmp_path: Path) -> None:
    """A scenario path that cannot be written: one line naming it, exit 2,
    nothing on standard output (not an internal error)."""
    good = write(tmp_path / "good.yaml", kep2_per_container())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    target = blocker / "replay.yaml"  # under a file: no such directory
    r = runner.invoke(advise_command, [str(good), "--as-scenario", str(target)])
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr.strip().startswith(f"error: {target}: --as-scenario: cannot write: ")
    assert "internal error" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_an_invalid_pod_is_located_by_line_in_its_file(runner: CliRunner, tmp_path: Path) -> None:
    """compare and advise give the line and column of a bad field, as every
    reader does, in a file of several documents and in a List's item."""
    from podnuma.cli.compare import compare_command

    good = yaml.safe_dump(kep2_per_container(), sort_keys=False)
    bad_pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers:\n  - name: a\n"
        "    resources:\n      limits:\n        cpu: two\n"
    )
    f = tmp_path / "pods.yaml"
    f.write_text(good + "---\n" + bad_pod, encoding="utf-8")
    line = (good + "---\n").count("\n") + 9  # the bad pod's "cpu: two"
    for command in (compare_command, advise_command):
        r = runner.invoke(command, [str(f)])
        assert r.exit_code == 2, r.output
        assert r.stdout == ""
        assert r.stderr.strip() == (
            f"error: {f}: documents[1].spec.containers[0].resources.limits[cpu]: quantities must match "
            "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' "
            f"(line {line}, column 14)"), r.stderr
    items = tmp_path / "list.yaml"
    indented = "".join("  " + ln + "\n" for ln in bad_pod.splitlines())
    items.write_text("apiVersion: v1\nkind: List\nitems:\n- " + indented.lstrip(), encoding="utf-8")
    r = runner.invoke(compare_command, [str(items)])
    assert r.exit_code == 2
    assert "documents[0].items[0].spec.containers[0].resources.limits[cpu]" in r.stderr
    assert r.stderr.strip().endswith("(line 12, column 16)"), r.stderr


def test_cli_as_scenario_json_for_a_json_name(runner: CliRunner, tmp_path: Path) -> None:
    """``--as-scenario X.json`` writes JSON (as restart does), the same
    scenario as the YAML one."""
    good = write(tmp_path / "good.yaml", kep2_per_container())
    as_json, as_yaml = tmp_path / "replay.json", tmp_path / "replay.yaml"
    for target in (as_json, as_yaml):
        r = runner.invoke(advise_command, [str(good), "--as-scenario", str(target)])
        assert r.exit_code == 0, r.output
    # (the YAML's integer keys, NUMA ids, are JSON's strings)
    assert json.loads(as_json.read_text()) == json.loads(json.dumps(yaml.safe_load(as_yaml.read_text())))
    assert as_json.read_text().lstrip().startswith("{")
