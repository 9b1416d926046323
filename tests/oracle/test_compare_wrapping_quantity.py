"""A quantity whose ``MilliValue()`` wraps (``cpu: 1e53`` written out:
Go's ``String()`` prints it ``100``, its ``MilliValue()`` is
2377900603251621888): ``simulate`` and the kubelet oracle count the
wrapped value; ``compare`` and ``advise`` take the pod's quantities as
written, not re-printed as ``100``, and so refuse it as they refuse
``9223372036854775808`` (no other form is derived from values that
wrap), at the field's path, never measuring a pod of 100 CPUs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.analysis.rewrite import served_manifest
from podnuma.errors import InputError
from podnuma.inputs.text import TextInput
from podnuma.service import whatif
from tests.oracle.harness import run_oracle, run_podnuma, write_scenario

HUGE = "1" + "0" * 53  # String() "100", MilliValue() 2377900603251621888
WRAPPED = 2377900603251621888


def _pod(cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}}]}}


def _scenario(cpu: str) -> dict[str, Any]:
    pod = _pod(cpu)
    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"name": "node-a", "synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 4,
                                                 "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0",
                          "featureGates": {"PodLevelResources": True}},
        "steps": [{"addPod": {"metadata": pod["metadata"], "spec": pod["spec"]}}],
    }


def test_simulate_and_the_oracle_count_the_wrapped_value(oracle_binary: str, tmp_path: Path) -> None:
    path = write_scenario(_scenario(HUGE), tmp_path / "wrap.json")
    mine = run_podnuma(path)
    (theirs,) = run_oracle(oracle_binary, [path])
    assert mine.doc is not None and theirs.doc is not None, (mine.message, theirs.message)
    ours, kubelet = mine.doc["steps"][0], theirs.doc["steps"][0]
    assert (kubelet["admitted"], kubelet["reason"]) == (False, "OutOfcpu")
    assert f"requested: {WRAPPED}," in kubelet["message"]
    assert (ours["admitted"], ours["reason"], ours["message"]) == (
        kubelet["admitted"], kubelet["reason"], kubelet["message"])


@pytest.mark.parametrize("cpu", [HUGE, "9223372036854775808"])
def test_compare_and_advise_refuse_a_value_that_wraps_alike(cpu: str) -> None:
    text = yaml.safe_dump(_pod(cpu))
    with pytest.raises(InputError) as e:
        whatif.compare(TextInput(text, "pod.yaml"))
    assert e.value.file == "pod.yaml"
    assert e.value.path == "spec.containers[0].resources.limits[cpu]"
    assert "more than the kubelet counts in an int64" in e.value.message
    assert "values that wrap" in e.value.message
    assert "cpu 100 " not in e.value.message  # (not the re-printed text: another value)
    got = whatif.advise([TextInput(text, "pod.yaml")])
    assert len(got.errors) == 1 and "values that wrap" in got.errors[0]
    assert got.errors[0].startswith("pod.yaml: spec.containers[0].resources.limits[cpu]: ")


def test_the_served_pod_keeps_a_value_that_wraps_as_written() -> None:
    served = served_manifest(_pod(HUGE))
    assert served["spec"]["containers"][0]["resources"]["limits"] == {"cpu": HUGE, "memory": "1Gi"}
    # a value the kubelet counts is still re-printed as the API server stores it
    served = served_manifest(_pod("1.5"))
    assert served["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1500m", "memory": "1Gi"}
