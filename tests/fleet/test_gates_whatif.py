"""``--what-if gates``: which pods behave otherwise once PodLevelResources
and PodLevelResourceManagers are on, read from two real runs of the engine
(the gate off and on) of the same pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.errors import InputError
from podnuma.fleet.gates import gate_changes
from podnuma.fleet.whatif import apply_config, parse_what_if
from podnuma.inputs.scenario import load_scenario_text
from podnuma.scenario.run import run_scenario

NODE = {
    "name": "gpu-node",
    "synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 1,
                  "memoryPerNumaNode": "16Gi"},
    "devices": {"example.com/gpu": [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1", "numaNodes": [1]}]},
}
CONFIG = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "restricted",
          "topologyManagerScope": "pod"}
POD_LEVEL = {
    "metadata": {"name": "trainer", "namespace": "ml"},
    "spec": {
        "resources": {"requests": {"cpu": "4", "memory": "4Gi"}, "limits": {"cpu": "4", "memory": "4Gi"}},
        "initContainers": [{"name": "proxy", "restartPolicy": "Always"}],
        "containers": [{"name": "train", "resources": {
            "limits": {"cpu": "2", "memory": "2Gi", "example.com/gpu": "1"}}}],
    },
}
PER_CONTAINER = {
    "metadata": {"name": "db", "namespace": "shop"},
    "spec": {"containers": [{"name": "pg", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]},
}


def _run(config: dict[str, Any]) -> Any:
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "kubeletConfig": config,
           "steps": [{"addPod": PER_CONTAINER}, {"addPod": POD_LEVEL}]}
    return run_scenario(load_scenario_text(yaml.safe_dump(doc), name="s.yaml", base_dir=Path.cwd()))


def test_the_pod_level_pod_changes_and_says_how() -> None:
    w = parse_what_if("gates")
    assert w.gates and not w.pod_level
    on = apply_config(CONFIG, w)
    assert on["featureGates"] == {"PodLevelResources": True, "PodLevelResourceManagers": True}
    before, after = _run(CONFIG), _run(on)
    changed = gate_changes(before.steps, after.steps)
    assert [c["pod"] for c in changed] == ["ml/trainer"]  # the per-container pod is the same
    (c,) = changed
    assert c["admittedBefore"] and c["admittedAfter"]
    assert "container train: the node's shared pool -> exclusive CPUs (2 CPUs)" in c["changes"]
    assert "container proxy: the node's shared pool -> the pod's shared pool" in c["changes"]
    assert ("container train: devices example.com/gpu no longer allocated at admission "
            "(deferred to container start)") in c["changes"]
    assert "CPUs reserved for the pod (its budget) 0 -> 4" in c["changes"]


def test_gates_goes_with_other_changes_but_is_a_word_of_its_own() -> None:
    assert parse_what_if("gates,scope=container").fields == (("topologyManagerScope", "container"),)
    with pytest.raises(InputError, match="expected gates, pod-level"):
        parse_what_if("gate")
