"""``podnuma compare``: KEP-5526 examples and the tutorial's pods, both forms,
both scopes, measured by the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.analysis.compare import compare_pod
from podnuma.analysis.rewrite import to_per_container, to_pod_level
from podnuma.api.featuregates import FeatureGates
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.compare import compare_command
from podnuma.inputs.discover import load_node
from podnuma.inputs.pods import default_config, default_machine
from podnuma.machine.cpuset import CPUSet

from .conftest import (
    KEP_NODE,
    guaranteed,
    kep2_app_sidecars,
    kep2_per_container,
    kubelet_config,
    tutorial_part_a,
    tutorial_part_c,
    write,
)

GATES_ON = FeatureGates.from_mapping({"PodLevelResourceManagers": True})


def kep_machine() -> Any:
    return load_node(KEP_NODE, base_dir=Path("."))


# --------------------------------------------------------------------------
# golden: KEP example 2 written per-container, two Guaranteed sidecars


def test_kep2_per_container_vs_pod_level_on_kep_node() -> None:
    c = compare_pod(kep2_per_container(), kep_machine(), load_kubelet_config(kubelet_config()))
    assert c.written == "perContainer"
    assert c.rewrite.direction == "podLevel"
    assert [m.label for m in c.runs] == ["perContainer"] * 2 + ["podLevel"] * 2
    assert [m.scope for m in c.runs] == ["pod", "container"] * 2
    for m in c.runs:
        assert m.qos_class == "Guaranteed"
        assert m.admitted, m.reason

    # Per-container: each sidecar holds an exclusive CPU only it uses.
    for scope in ("pod", "container"):
        m = c.run("perContainer", scope)
        assert m.exclusive_cpus == CPUSet.parse("1-4")
        assert m.sidecar_only_cpus.size() == 2
        assert m.pod_shared_cpus.is_empty()
        assert m.held_cpus.size() == 4
        assert m.numa_nodes == (0,)

    # Pod-level, pod scope: the KEP's mixed allocation (4-CPU bubble on NUMA 0,
    # main-app 2 exclusive, the other 2 the pod shared pool of the sidecars).
    pl = c.run("podLevel", "pod")
    assert pl.pod_allocation is not None and pl.pod_allocation.cpus == CPUSet.parse("1-4")
    assert pl.exclusive_by_container() == {"main-app": CPUSet.parse("1-2")}
    assert pl.pod_shared_cpus == CPUSet.parse("3-4")
    assert pl.sidecar_only_cpus.size() == 0
    assert pl.node_shared_containers == ()
    assert pl.numa_nodes == (0,)
    iso = {x.name: x.isolation for x in pl.containers}
    assert iso == {"metrics-sidecar": "pod", "logging-sidecar": "pod", "main-app": "container"}

    # Pod-level, container scope: sidecars on the node shared pool.
    plc = c.run("podLevel", "container")
    assert plc.exclusive_cpus.size() == 2 and plc.sidecar_only_cpus.size() == 0
    assert plc.node_shared_containers == ("metrics-sidecar", "logging-sidecar")
    assert plc.pod_allocation is None

    # Density: the budget keeps the pod's total, so on this node pod scope
    # fits the same number of copies either way (7 free CPUs on NUMA 0, 8 on 1).
    assert c.run("perContainer", "pod").density == 3
    assert pl.density == 3
    assert c.run("perContainer", "pod").density_stop == "TopologyAffinityError"


def test_kep2_density_higher_pod_level_with_full_pcpus_only() -> None:
    """full-pcpus-only (SMT node): 1-CPU Guaranteed sidecars cannot be
    admitted per-container; the pod-level form (4 CPUs = 2 whole cores,
    checked on the pod total) is."""
    cfg = load_kubelet_config(
        kubelet_config(reservedSystemCPUs="0,16", cpuManagerPolicyOptions={"full-pcpus-only": "true"})
    )
    c = compare_pod(kep2_per_container(), default_machine(), cfg)
    for scope in ("pod", "container"):
        per = c.run("perContainer", scope)
        assert not per.admitted and per.reason == "SMTAlignmentError"
        assert per.density == 0
    pl = c.run("podLevel", "pod")
    assert pl.admitted and pl.exclusive_cpus.size() == 2 and pl.pod_shared_cpus.size() == 2
    assert pl.density > c.run("perContainer", "pod").density
    assert pl.density == 7


def test_kep2_default_node_sidecar_waste() -> None:
    c = compare_pod(kep2_per_container(), default_machine(), default_config())
    assert c.run("perContainer", "pod").sidecar_only_cpus.size() == 2
    assert c.run("podLevel", "pod").sidecar_only_cpus.size() == 0
    assert c.run("perContainer", "pod").exclusive_cpus.size() == 4
    assert c.run("podLevel", "pod").exclusive_cpus.size() == 2
    # SMT pairs: the bubble is two whole cores of NUMA 0.
    assert c.run("podLevel", "pod").held_cpus == CPUSet.parse("1-2,17-18")
    assert c.run("perContainer", "pod").density == c.run("podLevel", "pod").density == 7


def test_kep_app_container_sidecars_marked_by_annotation() -> None:
    c = compare_pod(kep2_app_sidecars(), kep_machine(), load_kubelet_config(kubelet_config()))
    assert c.run("perContainer", "pod").sidecar_only_cpus.size() == 2
    pl = c.run("podLevel", "pod")
    assert pl.sidecar_only_cpus.size() == 0
    assert pl.exclusive_by_container() == {"container-1": CPUSet.parse("1-2")}
    assert pl.pod_shared_cpus == CPUSet.parse("3-4")
    roles = {p.name: p.role for p in c.rewrite.containers}
    assert roles == {"container-1": "exclusive", "container-2": "shared", "container-3": "shared"}


def test_gates_forced_and_said() -> None:
    cfg = load_kubelet_config(kubelet_config(featureGates=None))
    assert not cfg.feature_gates.enabled("PodLevelResourceManagers")
    c = compare_pod(kep2_per_container(), kep_machine(), cfg)
    assert c.run("podLevel", "pod").gates_forced == ("PodLevelResourceManagers",)
    assert c.run("perContainer", "pod").gates_forced == ()
    assert any("PodLevelResourceManagers=true forced" in n for n in c.notes)
    assert c.run("podLevel", "pod").pod_allocation is not None


# --------------------------------------------------------------------------
# the tutorial's pods (pod-level as written -> per-container form)


def test_tutorial_part_a_pod_level_vs_per_container() -> None:
    c = compare_pod(tutorial_part_a(), kep_machine(), load_kubelet_config(kubelet_config()))
    assert c.written == "podLevel" and c.rewrite.direction == "perContainer"
    man = c.rewrite.manifest
    assert "resources" not in man["spec"]
    sidecars = man["spec"]["initContainers"]
    assert [s["resources"] for s in sidecars] == [guaranteed("1", "1Gi")] * 2
    pod = parse_pod(man, gates=GATES_ON)
    assert pod.resources is None
    per, pl = c.run("perContainer", "pod"), c.run("podLevel", "pod")
    assert per.sidecar_only_cpus.size() == 2 and pl.sidecar_only_cpus.size() == 0
    assert per.held_cpus.size() == pl.held_cpus.size() == 4
    assert pl.exclusive_by_container() == {"main-app": CPUSet.parse("1-2")}


def test_tutorial_part_c_container_scope() -> None:
    """Part C under scope container: the tutorial's outcome (sidecar
    exclusive 2 CPUs, workers on the node shared pool), with the Static
    memory manager (the workers pin no memory) and with policy None."""
    static = compare_pod(tutorial_part_c(), kep_machine(), load_kubelet_config(kubelet_config()))
    m = static.run("podLevel", "container")
    assert m.admitted
    assert m.exclusive_by_container() == {"infrastructure-sidecar": CPUSet.parse("1-2")}
    assert m.node_shared_containers == ("worker-1", "worker-2")

    cfg = load_kubelet_config(kubelet_config(memoryManagerPolicy="None", reservedMemory=None,
                                             kubeReserved=None, systemReserved=None))
    none = compare_pod(tutorial_part_c(), kep_machine(), cfg)
    m = none.run("podLevel", "container")
    assert m.admitted
    assert m.exclusive_by_container() == {"infrastructure-sidecar": CPUSet.parse("1-2")}
    assert m.node_shared_containers == ("worker-1", "worker-2")
    assert m.sidecar_only_cpus.size() == 2  # the sidecar keeps its exclusive CPUs
    pod_scope = none.run("podLevel", "pod")
    assert pod_scope.pod_shared_cpus.size() == 2 and pod_scope.sidecar_only_cpus.size() == 2


# --------------------------------------------------------------------------
# the rewrite rules


def test_per_container_split_is_even() -> None:
    doc = {
        "metadata": {"name": "split"},
        "spec": {
            "resources": guaranteed("3", "3Gi"),
            "containers": [{"name": n} for n in ("a", "b", "c")],
        },
    }
    rw = to_per_container(doc, parse_pod(doc, gates=GATES_ON))
    cpus = [c["resources"]["requests"]["cpu"] for c in rw.manifest["spec"]["containers"]]
    mems = [c["resources"]["limits"]["memory"] for c in rw.manifest["spec"]["containers"]]
    assert cpus == ["1", "1", "1"] and mems == ["1Gi"] * 3

    doc["spec"]["resources"] = guaranteed("2", "1Gi")
    rw = to_per_container(doc, parse_pod(doc, gates=GATES_ON))
    cpus = [c["resources"]["limits"]["cpu"] for c in rw.manifest["spec"]["containers"]]
    assert cpus == ["667m", "667m", "666m"]
    pod = parse_pod(rw.manifest, gates=GATES_ON)
    assert sum(c.requests["cpu"].milli_value() for c in pod.containers) == 2000


def test_pod_level_budget_rounded_and_pool_kept_non_empty() -> None:
    # A sidecar whose cpu limit is 0 adds nothing to the budget: the pod
    # shared pool would be empty -> one CPU added, and said.
    doc = {
        "metadata": {"name": "tight"},
        "spec": {
            "initContainers": [{"name": "side", "restartPolicy": "Always",
                                "resources": {"limits": {"cpu": "0", "memory": "1Gi"}}}],
            "containers": [{"name": "main", "resources": guaranteed("2", "2Gi")}],
        },
    }
    rw = to_pod_level(doc, parse_pod(doc, gates=GATES_ON))
    assert rw.manifest["spec"]["resources"] == guaranteed("3", "3Gi")
    assert any("cpu budget raised from 2 to 3 (+1)" in n for n in rw.notes)
    c = compare_pod(doc, kep_machine(), load_kubelet_config(kubelet_config()))
    pl = c.run("podLevel", "pod")
    assert pl.admitted and pl.exclusive_by_container() == {"main": CPUSet.parse("1-2")}
    assert pl.pod_shared_cpus.size() == 1

    frac = kep2_per_container()
    frac["spec"]["initContainers"][1]["resources"] = guaranteed("500m", "1Gi")
    rw = to_pod_level(frac, parse_pod(frac, gates=GATES_ON))
    assert rw.manifest["spec"]["resources"]["requests"]["cpu"] == "4"
    assert any("rounded up from 3500m to 4" in n for n in rw.notes)


def test_exclusive_annotations() -> None:
    doc = kep2_per_container()
    doc["metadata"]["annotations"] = {
        "podnuma.io/exclusive.metrics-sidecar": "true",
        "podnuma.io/exclusive": "nope",
    }
    rw = to_pod_level(doc, parse_pod(doc, gates=GATES_ON))
    roles = {p.name: p.role for p in rw.containers}
    assert roles == {"metrics-sidecar": "exclusive", "logging-sidecar": "shared", "main-app": "exclusive"}
    assert "resources" in rw.manifest["spec"]["initContainers"][0]
    assert "resources" not in rw.manifest["spec"]["initContainers"][1]
    assert any("'nope'" in n for n in rw.notes)


def test_devices_stay_on_the_container() -> None:
    doc = kep2_per_container()
    doc["spec"]["initContainers"][0]["resources"]["limits"]["example.com/nic"] = "1"
    doc["spec"]["initContainers"][0]["resources"]["requests"]["example.com/nic"] = "1"
    rw = to_pod_level(doc, parse_pod(doc, gates=GATES_ON))
    side = rw.manifest["spec"]["initContainers"][0]["resources"]
    assert side == {"requests": {"example.com/nic": "1"}, "limits": {"example.com/nic": "1"}}
    assert "example.com/nic" not in rw.manifest["spec"]["resources"]["requests"]
    parse_pod(rw.manifest, gates=GATES_ON)


# --------------------------------------------------------------------------
# command line


def test_cli_table(runner: CliRunner, tmp_path: Path, kep_files: tuple[Path, Path]) -> None:
    node, cfg = kep_files
    pod = write(tmp_path / "pod.yaml", kep2_per_container())
    r = runner.invoke(compare_command, [str(pod), "--node", str(node), "--kubelet-config", str(cfg)])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "\x1b[" not in out  # plain text when not a terminal
    assert "Pod default/pod-scope-mixed" in out
    for row in ("exclusive CPUs", "pod shared pool CPUs", "sidecar-only CPUs", "density (copies)", "NUMA nodes"):
        assert row in out
    line = next(x for x in out.splitlines() if x.strip().startswith("sidecar-only CPUs"))
    assert line.split()[2:] == ["2", "(1-2)", "2", "(1-2)", "0", "0"]
    assert "scope container" in out and "* = as written" in out


def test_cli_json_and_scenario_files(runner: CliRunner, tmp_path: Path) -> None:
    scenario = write(tmp_path / "scenario.yaml", {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": KEP_NODE,
        "kubeletConfig": kubelet_config(), "steps": [],
    })
    pod = write(tmp_path / "pod.yaml", tutorial_part_a())
    r = runner.invoke(compare_command, [str(pod), "--node", str(scenario),
                                        "--kubelet-config", str(scenario), "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["node"]["name"] == "kep-node"
    (p,) = doc["pods"]
    assert p["asWritten"] == "podLevel" and p["derived"]["form"] == "perContainer"
    runs = {(x["form"], x["scope"]): x for x in p["runs"]}
    assert runs[("podLevel", "pod")]["sidecarOnlyCpus"]["count"] == 0
    assert runs[("perContainer", "pod")]["sidecarOnlyCpus"]["count"] == 2
    assert runs[("podLevel", "pod")]["podAllocation"] == "1-4"
    assert runs[("podLevel", "pod")]["density"] == 3
    parse_pod(p["derived"]["manifest"], gates=GATES_ON)


def test_cli_node_mapping_wrapped(runner: CliRunner, tmp_path: Path) -> None:
    node = write(tmp_path / "n.yaml", {"node": KEP_NODE})
    cfg = write(tmp_path / "c.yaml", kubelet_config())
    pod = write(tmp_path / "pod.yaml", kep2_per_container())
    r = runner.invoke(compare_command, [str(pod), "--node", str(node), "--kubelet-config", str(cfg), "-o", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["node"]["cpus"] == "0-15"


@pytest.mark.parametrize(
    ("setup", "file", "words"),
    [
        ("malformed", "pod.yaml", "invalid YAML"),
        ("missing-pod", "nope.yaml", "not found"),
        ("missing-node", "node-missing.yaml", "not found"),
        ("bad-pod", "pod.yaml", "spec.containers"),
        ("bad-config", "kubelet.yaml", "cannot unmarshal number into Go struct field KubeletConfiguration.cpuManagerPolicy of type string"),
        ("bad-node", "node.yaml", "synthetic"),
    ],
)
def test_cli_bad_input(
    runner: CliRunner, tmp_path: Path, kep_files: tuple[Path, Path], setup: str, file: str, words: str
) -> None:
    node, cfg = kep_files
    pod = tmp_path / "pod.yaml"
    write(pod, kep2_per_container())
    args = [str(pod), "--node", str(node), "--kubelet-config", str(cfg)]
    if setup == "malformed":
        pod.write_text("metadata: {name: x\nspec: [", encoding="utf-8")
    elif setup == "missing-pod":
        args[0] = str(tmp_path / "nope.yaml")
    elif setup == "missing-node":
        args[2] = str(tmp_path / "node-missing.yaml")
    elif setup == "bad-pod":
        write(pod, {"metadata": {"name": "x"}, "spec": {"containers": []}})
    elif setup == "bad-config":
        write(cfg, {**kubelet_config(), "cpuManagerPolicy": 5})
    elif setup == "bad-node":
        write(node, {"synthetic": {"sockets": "two"}})
    r = runner.invoke(compare_command, args)
    assert r.exit_code == 2, r.output
    assert file in r.stderr and words in r.stderr
    assert "Traceback" not in r.output


def test_output_is_yaml_parsable_manifest() -> None:
    c = compare_pod(kep2_per_container(), kep_machine(), load_kubelet_config(kubelet_config()))
    text = yaml.safe_dump(c.rewrite.manifest)
    parse_pod(yaml.safe_load(text), gates=GATES_ON)


def test_cli_multi_document_and_list(runner: CliRunner, tmp_path: Path, kep_files: tuple[Path, Path]) -> None:
    node, cfg = kep_files
    lst = {"apiVersion": "v1", "kind": "List", "items": [kep2_per_container(), tutorial_part_a()]}
    f = write(tmp_path / "pods.yaml", lst, {"apiVersion": "v1", "kind": "ConfigMap",
                                            "metadata": {"name": "cm"}})
    r = runner.invoke(compare_command, [str(f), "--node", str(node), "--kubelet-config", str(cfg), "-o", "json"])
    assert r.exit_code == 0, r.output
    pods = json.loads(r.stdout)["pods"]
    assert [p["asWritten"] for p in pods] == ["perContainer", "podLevel"]
    assert f"{f}#1: not a Pod or a workload (kind ConfigMap), skipped" in r.stderr

    bad = write(tmp_path / "bad.yaml", kep2_per_container(), {"metadata": {"name": "x"}, "spec": {}})
    r = runner.invoke(compare_command, [str(bad), "--node", str(node), "--kubelet-config", str(cfg)])
    assert r.exit_code == 2
    assert f"{bad}: documents[1].spec.containers: Required value" in r.stderr


def test_density_cap() -> None:
    from podnuma.analysis.measure import measure

    cfg = load_kubelet_config(kubelet_config())
    pod = parse_pod(kep2_per_container(), gates=cfg.feature_gates)
    m = measure(kep_machine(), cfg, pod, label="x", cap=2)
    assert m.density == 2 and m.density_capped and m.density_stop is None
