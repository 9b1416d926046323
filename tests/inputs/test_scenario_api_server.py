"""The scenario's ``apiServer`` section: the API server's own feature
gates, used to read the pods (and their status QoS class)."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnuma.api.qos import compute_pod_qos
from podnuma.errors import InputError
from podnuma.inputs.scenario import load_scenario_text

HEAD = """\
apiVersion: podnuma.io/v1
kind: Scenario
node: {synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1, memoryPerNumaNode: 4Gi}}
kubeletConfig:
  featureGates: {PodLevelResources: false, PodLevelResourceManagers: false, PodLevelResourcesFixDefaulting: false,
                 PodLevelResourcesFixKubeletQOSClass: false, InPlacePodLevelResourcesVerticalScaling: false}
"""
STEPS = """\
steps:
- addPod:
    metadata: {name: p}
    spec:
      resources: {limits: {cpu: "1", memory: 64Mi}}
      containers: [{name: c}]
"""


def _load(middle: str) -> object:
    return load_scenario_text(HEAD + middle + STEPS, name="s.yaml", base_dir=Path("."))


def test_without_the_section_the_kubelets_gates_drop_spec_resources() -> None:
    scn = _load("")
    pod = scn.steps[0].pod  # type: ignore[attr-defined]
    assert pod.resources is None
    assert compute_pod_qos(pod, pod_level_resources=False) == "BestEffort"


def test_an_api_server_of_default_gates_keeps_them_and_its_qos_class() -> None:
    scn = _load("apiServer: {}\n")
    pod = scn.steps[0].pod  # type: ignore[attr-defined]
    assert pod.resources is not None
    # the API server's status.qosClass, whatever the kubelet's gates
    assert compute_pod_qos(pod, pod_level_resources=False) == "Guaranteed"


@pytest.mark.parametrize(
    ("section", "path", "words"),
    [
        ("apiServer: {gates: {}}\n", "apiServer.gates", "unknown field"),
        ("apiServer: {featureGates: {PodLevelResources: yes-please}}\n", "apiServer.featureGates.PodLevelResources",
         "boolean"),
        ("apiServer: {featureGates: {NoSuchGate: true}}\n", "apiServer.featureGates", "unrecognized feature gate"),
        ("apiServer: [1]\n", "apiServer", "mapping"),
    ],
)
def test_bad_sections_name_the_field(section: str, path: str, words: str) -> None:
    with pytest.raises(InputError) as e:
        _load(section)
    assert e.value.path == path
    assert words in str(e.value)
