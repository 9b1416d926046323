"""The per-container form of a pod-level pod: what each container gets of
the pod budget is what the notes and the plan say, and a container the
pod-level form left Burstable stays Burstable (a limit alone would be
defaulted into an equal request by the API server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from podnuma.analysis.compare import compare_pod
from podnuma.analysis.rewrite import to_per_container
from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.qos import compute_pod_qos, is_container_equivalent_qos_guaranteed
from podnuma.cli.compare import compare_command
from podnuma.inputs.pods import default_config, default_machine

from .conftest import write

GATES_ON = FeatureGates.from_mapping({"PodLevelResourceManagers": True})


def _mixed() -> dict[str, Any]:
    """The review's pod: pod limits 6 CPUs / 6Gi, an app of 4 / 4Gi, a
    native sidecar without resources (the pod-level form is Burstable:
    requests 4 / 4Gi, limits 6 / 6Gi)."""
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plm", "namespace": "default"},
        "spec": {
            "resources": {"limits": {"cpu": "6", "memory": "6Gi"}},
            "initContainers": [{"name": "side", "restartPolicy": "Always"}],
            "containers": [{"name": "app", "resources": {"limits": {"cpu": "4", "memory": "4Gi"}}}],
        },
    }


def test_a_share_of_the_limit_without_a_request_stays_burstable() -> None:
    doc = _mixed()
    rw = to_per_container(doc, parse_pod(doc, gates=GATES_ON))
    side = rw.manifest["spec"]["initContainers"][0]["resources"]
    assert side == {"requests": {"cpu": "0", "memory": "0"}, "limits": {"cpu": "2", "memory": "2Gi"}}
    pod = parse_pod(rw.manifest, gates=GATES_ON)
    (sidecar,) = pod.init_containers
    assert not is_container_equivalent_qos_guaranteed(sidecar)
    assert compute_pod_qos(pod, pod_level_resources=True) == "Burstable"
    # the pod's requests and limits are the budget's
    assert sum(c.requests["cpu"].milli_value() for c in pod.all_containers()) == 4000
    assert sum(c.limits["cpu"].milli_value() for c in pod.all_containers()) == 6000

    plans = {p.name: p for p in rw.containers}
    assert plans["side"].why == (
        "gets a share of the pod budget: cpu limit (request 0), memory limit (request 0)"
    )
    (cpu_note,) = [n for n in rw.notes if n.startswith("no cpu requests left for side")]
    assert cpu_note.endswith(
        "they get none (side: a request of 0, written out beside the share of the cpu limit, "
        "which alone would be defaulted into an equal request)"
    )


def test_compare_runs_the_per_container_form_as_the_notes_say(runner: CliRunner, tmp_path: Path) -> None:
    """Nothing is pinned for the sidecar (it was pinned exclusively: 6
    exclusive CPUs, a Burstable container made Guaranteed)."""
    c = compare_pod(_mixed(), default_machine(), default_config())
    for scope in ("pod", "container"):
        m = c.run("perContainer", scope)
        assert m.qos_class == "Burstable"
        assert m.exclusive_cpus.size() == 0 and m.sidecar_only_cpus.size() == 0
        assert "side" in m.node_shared_containers

    pod = write(tmp_path / "plm.yaml", _mixed())
    r = runner.invoke(compare_command, [str(pod), "-o", "json"])
    assert r.exit_code == 0, r.output
    (p,) = json.loads(r.stdout)["pods"]
    side = p["derived"]["manifest"]["spec"]["initContainers"][0]["resources"]
    assert side["requests"] == {"cpu": "0", "memory": "0"}
    r = runner.invoke(compare_command, [str(pod)])
    assert "per-container form: spec.resources removed (was requests cpu=4, memory=4Gi; limits cpu=6, " \
        "memory=6Gi)" in r.stdout
    assert "side (sidecar): shared - gets a share of the pod budget: cpu limit (request 0)" in r.stdout


def test_a_limit_share_is_never_below_the_containers_own_request() -> None:
    """A container that sets a request and no limit gets its request first
    out of the limits budget (it got half of it: a limit below its own
    request, a pod the API server refuses)."""
    doc = {
        "metadata": {"name": "edge"},
        "spec": {
            "resources": {"limits": {"cpu": "4", "memory": "4Gi"}},
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}},
                {"name": "b"},
            ],
        },
    }
    rw = to_per_container(doc, parse_pod(doc, gates=GATES_ON))
    a, b = (c["resources"] for c in rw.manifest["spec"]["containers"])
    assert a == {"requests": {"cpu": "3", "memory": "1Gi"}, "limits": {"cpu": "3500m", "memory": "2560Mi"}}
    assert b == {"requests": {"cpu": "0", "memory": "0"}, "limits": {"cpu": "500m", "memory": "1536Mi"}}
    pod = parse_pod(rw.manifest, gates=GATES_ON)
    assert sum(c.limits["cpu"].milli_value() for c in pod.containers) == 4000


def test_a_guaranteed_budget_is_still_split_evenly() -> None:
    doc = {
        "metadata": {"name": "g"},
        "spec": {
            "resources": {"limits": {"cpu": "6", "memory": "6Gi"}},
            "initContainers": [{"name": "side", "restartPolicy": "Always"}],
            "containers": [{"name": "app"}],
        },
    }
    rw = to_per_container(doc, parse_pod(doc, gates=GATES_ON))
    for ctr in (rw.manifest["spec"]["initContainers"][0], rw.manifest["spec"]["containers"][0]):
        assert ctr["resources"] == {"requests": {"cpu": "3", "memory": "3Gi"},
                                    "limits": {"cpu": "3", "memory": "3Gi"}}
    assert {p.why for p in rw.containers} == {"gets a share of the pod budget: cpu, memory"}
    assert not any("left for" in n for n in rw.notes)
