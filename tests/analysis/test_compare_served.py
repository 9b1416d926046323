"""``compare`` takes a pod as the kubelet receives it from the API server
(quantities in the canonical form the API server stores), and derives no
form from quantities the kubelet cannot count in an int64.

The stored forms below are the API server's own: ``kubelet-oracle validate``
(the create path of v1.37.2) run on pods carrying each value, the stored
pod's quantity read back. A static pod (a scenario's ``addPod``) keeps its
quantities as written: ``simulate`` is not changed.
"""

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
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.compare import compare_command
from podnuma.errors import InputError
from podnuma.inputs.pods import default_config, default_machine
from podnuma.scenario.run import run_scenario

from .conftest import write

GATES_ON = FeatureGates.from_mapping({"PodLevelResourceManagers": True})

#: (as written, as the API server stores it): kubelet-oracle validate, v1.37.2
STORED = [
    ("0.5Gi", "512Mi"),
    ("1.5Gi", "1536Mi"),
    ("1.3Gi", "1395864371200m"),
    ("1.5", "1500m"),
    ("0.1", "100m"),
    ("1.0", "1"),
    ("2.000", "2"),
    ("0.0005", "1m"),
    ("1n", "1m"),
    ("1e-10", "1e-3"),
    ("1e3", "1e3"),
    ("3e2", "300"),
    ("+1Ki", "+1Ki"),
    ("0001", "0001"),
    ("1024Ki", "1Mi"),
    ("1.25Mi", "1280Ki"),
    ("8Ei", "9223372036854775807"),
    ("5000Pi", "5000Pi"),
    ("99999999999999999999999", "99999999999999999999999"),
    ("1e30", "1e30"),
    ("512Mi", "512Mi"),
]


def _deployment(sidecar_memory: str) -> dict[str, Any]:
    """The review's Deployment: a 1-CPU native sidecar whose memory is
    ``sidecar_memory``, a 4-CPU app."""
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"template": {"spec": {
            "initContainers": [{"name": "side", "restartPolicy": "Always",
                                "resources": {"limits": {"cpu": "1", "memory": sidecar_memory}}}],
            "containers": [{"name": "app", "resources": {"limits": {"cpu": "4", "memory": "4Gi"}}}],
        }}},
    }


def test_served_manifest_writes_what_the_api_server_stores() -> None:
    from podnuma.analysis.rewrite import served_manifest

    raw = [w for w, _ in STORED]
    doc = {
        "metadata": {"name": "q"},
        "spec": {
            "resources": {"limits": {"cpu": raw[0]}},
            "overhead": {"memory": raw[1]},
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": raw[2]}}}],
            "containers": [
                {"name": f"c{i}", "image": "x", "resources": {"limits": {"memory": v}, "claims": []}}
                for i, v in enumerate(raw)
            ] + [{"name": "bad", "resources": {"limits": {"cpu": "1.2.3"}}}, {"name": "none"}],
        },
    }
    before = json.dumps(doc, sort_keys=True)
    got = served_manifest(doc)
    assert json.dumps(doc, sort_keys=True) == before  # not modified
    spec = got["spec"]
    assert spec["resources"] == {"limits": {"cpu": "512Mi"}}
    assert spec["overhead"] == {"memory": "1536Mi"}
    assert spec["initContainers"][0]["resources"] == {"requests": {"cpu": "1395864371200m"}}
    stored = [c["resources"]["limits"]["memory"] for c in spec["containers"][: len(raw)]]
    assert stored == [s for _, s in STORED]
    assert spec["containers"][0]["resources"]["claims"] == []  # the rest as written
    assert spec["containers"][-2] == {"name": "bad", "resources": {"limits": {"cpu": "1.2.3"}}}
    assert spec["containers"][-1] == {"name": "none"}


@pytest.mark.parametrize("memory", ["0.5Gi", "512Mi"])
def test_a_workload_is_compared_as_the_api_server_hands_it_to_the_kubelet(
    runner: CliRunner, tmp_path: Path, memory: str
) -> None:
    """``memory: 0.5Gi`` is stored as ``512Mi``: the Deployment's pod is
    admitted as written, like the one written ``512Mi`` (it was said to be
    rejected: failed to represent quantity as int64)."""
    pod = write(tmp_path / "dep.yaml", _deployment(memory))
    r = runner.invoke(compare_command, [str(pod), "-o", "json"])
    assert r.exit_code == 0, r.output
    (p,) = json.loads(r.stdout)["pods"]
    for run in p["runs"]:
        assert run["admitted"] is True, (run["form"], run["scope"], run["message"])
    assert not any("int64" in n for n in p["notes"])
    per = {(x["form"], x["scope"]): x for x in p["runs"]}
    assert per[("perContainer", "pod")]["exclusiveCpus"]["count"] == 5
    assert per[("perContainer", "pod")]["memoryBytes"] == 4608 << 20
    # the restart section replays the stored pod too
    restart = json.loads(r.stdout)["restart"]
    assert restart and all(x["outcome"] != "notAdmitted" for x in restart), restart
    r = runner.invoke(compare_command, [str(pod)])
    assert "UnexpectedAdmissionError" not in r.stdout
    assert "per-container / scope pod: kept" in r.stdout


def test_compare_pod_keeps_the_stored_pod() -> None:
    doc = _deployment("0.5Gi")["spec"]["template"]
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api"}, "spec": doc["spec"]}
    c = compare_pod(doc, default_machine(), default_config())
    assert c.original["spec"]["initContainers"][0]["resources"]["limits"]["memory"] == "512Mi"
    assert doc["spec"]["initContainers"][0]["resources"]["limits"]["memory"] == "0.5Gi"
    assert all(m.admitted for m in c.runs)


def test_simulate_still_runs_a_static_pod_as_written(tmp_path: Path) -> None:
    """A scenario's addPod is what the kubelet sees (a static pod read from
    its file keeps ``0.5Gi``): the Static memory manager refuses it."""
    from podnuma.inputs.scenario import load_scenario

    pod = _deployment("0.5Gi")["spec"]["template"]
    doc = {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 8,
                               "threadsPerCore": 1, "memoryPerNumaNode": "16Gi"}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "memoryManagerPolicy": "Static",
                          "reservedSystemCPUs": "0",
                          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]},
        "steps": [{"addPod": {"metadata": {"name": "api"}, "spec": pod["spec"]}}],
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    (step,) = run_scenario(load_scenario(path)).steps
    assert not step.admitted
    assert "failed to represent quantity as int64" in (step.message or "")


# --------------------------------------------------------------------------
# quantities beyond int64


def _huge() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge"}, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "99999999999999999999999", "memory": "1e30"}}}]}}


def _huge2() -> dict[str, Any]:
    """Each value fits an int64; the pod's budget does not."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge2"}, "spec": {
        "initContainers": [{"name": "side", "restartPolicy": "Always",
                            "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}],
        "containers": [{"name": "app", "resources": {"limits": {"cpu": "9223372036854775", "memory": "8Ei"}}}],
    }}


def _one_error(r: Any) -> str:
    assert r.exit_code == 2, r.output
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    return str(lines[0])


def test_compare_refuses_a_quantity_beyond_int64(runner: CliRunner, tmp_path: Path) -> None:
    pod = write(tmp_path / "huge.yaml", _huge())
    line = _one_error(runner.invoke(compare_command, [str(pod)]))
    assert line.startswith(f"error: {pod}: spec.containers[0].resources.limits[cpu]: cpu 99999999999999999999999 ")
    assert "int64" in line and "wrap" in line
    assert "-2537764290115404" not in line


@pytest.mark.parametrize(("field", "value", "digits"), [
    ("cpu", "1e4400", 4404), ("memory", "1e4400", 4401), ("cpu", "9" * 4400, 4403),
    ("hugepages-2Mi", "1e4400", 4401),
])
@pytest.mark.parametrize("command", ["compare", "advise"])
def test_a_quantity_of_thousands_of_digits_is_refused_shortened(
    runner: CliRunner, tmp_path: Path, field: str, value: str, digits: int, command: str
) -> None:
    """A value past CPython's 4300-digit limit for int-to-text: one line
    (exit 2) with its first digits and its length, not an internal error."""
    from podnuma.cli.advise import advise_command

    limits = {"cpu": "1", "memory": "1Gi", field: value}
    pod = write(tmp_path / "huge3.yaml", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge3"},
                                          "spec": {"containers": [{"name": "app", "resources": {"limits": limits}}]}})
    result = runner.invoke(compare_command if command == "compare" else advise_command, [str(pod)])
    assert result.exit_code == 2, result.output
    line = _one_error(result)
    assert line.startswith(f"error: {pod}: spec.containers[0].resources.limits[{field}]: ")
    assert f"... ({digits} digits)" in line and "int64" in line and len(line) < 400


def test_compare_refuses_a_budget_beyond_int64(runner: CliRunner, tmp_path: Path) -> None:
    pod = write(tmp_path / "huge2.yaml", _huge2())
    line = _one_error(runner.invoke(compare_command, [str(pod), "-o", "json"]))
    assert line.startswith(f"error: {pod}: spec.containers[0].resources.limits[cpu]: the pod's cpu requests budget")
    assert "9223372036854776000 millicores" in line


def test_compare_refuses_a_workload_at_its_template_path(runner: CliRunner, tmp_path: Path) -> None:
    dep = _deployment("1Gi")
    dep["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "10E"
    pod = write(tmp_path / "dep.yaml", dep)
    line = _one_error(runner.invoke(compare_command, [str(pod)]))
    assert line.startswith(
        f"error: {pod}: spec.template.spec.containers[0].resources.limits[memory]: "
        "memory 10E is 10000000000000000000 bytes, more than the kubelet counts in an int64"
    )


def test_the_derivations_refuse_what_wraps() -> None:
    doc = _huge2()
    with pytest.raises(InputError) as e:
        to_pod_level(doc, parse_pod(doc, gates=GATES_ON))
    assert e.value.path == "spec.containers[0].resources.limits[cpu]"
    # a memory budget alone: 8Ei (2^63-1 bytes) plus the sidecar's 256Mi
    doc["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "4"
    with pytest.raises(InputError) as e:
        to_pod_level(doc, parse_pod(doc, gates=GATES_ON))
    assert e.value.path == "spec.containers[0].resources.limits[memory]"
    assert "memory requests budget" in e.value.message

    pl = {"metadata": {"name": "pl"}, "spec": {
        "resources": {"requests": {"cpu": "1e30", "memory": "1Gi"}},
        "containers": [{"name": "a"}, {"name": "b"}]}}
    with pytest.raises(InputError) as e:
        to_per_container(pl, parse_pod(pl, gates=GATES_ON))
    assert e.value.path == "spec.resources.requests[cpu]"
    assert "no per-container form" in e.value.message


def test_values_near_the_limit_are_derived_exactly() -> None:
    """The largest budget that fits is derived, and written as it is (no
    value wrapped on the way)."""
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "edge"}, "spec": {
        "initContainers": [{"name": "side", "restartPolicy": "Always",
                            "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}],
        "containers": [{"name": "app", "resources": {"limits": {"cpu": "9223372036854774", "memory": "4Gi"}}}],
    }}
    rw = to_pod_level(doc, parse_pod(doc, gates=GATES_ON))
    assert rw.manifest["spec"]["resources"]["requests"]["cpu"] == "9223372036854775"
