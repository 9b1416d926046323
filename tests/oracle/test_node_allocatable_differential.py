"""A node's ``status.allocatable`` as the kubelet's node-status setter
(``nodestatus.MachineInfo``) computes it, against what the fleet report
expects of a node whose configuration it knows or assumes
(:func:`podnuma.fleet.assumptions.contradictions`): the kubelet's own
capacity and allocatable for the scenario's machine and configuration
(``kubelet-oracle nodestatus``) contradict nothing, and an allocatable
that is off by a mebibyte is said to be. Huge page pools are taken out of
allocatable memory (a node with preallocated pages and a default
configuration was once reported as contradicting it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.fleet.assumptions import contradictions
from podnuma.inputs.scenario import load_scenario

SYNTHETIC = {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 8, "threadsPerCore": 2,
             "memoryPerNumaNode": "64Gi"}

CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "defaults": ({}, {}),
    "1Gi pages": ({"hugepagesPerNumaNode": {"hugepages-1Gi": "8Gi"}}, {}),
    "two page sizes": ({"hugepagesPerNumaNode": {"hugepages-1Gi": "4Gi", "hugepages-2Mi": "512Mi"}}, {}),
    "reserved and pages": ({"hugepagesPerNumaNode": {"hugepages-2Mi": "2Gi"}},
                           {"kubeReserved": {"cpu": "1", "memory": "2Gi"},
                            "systemReserved": {"cpu": "500m", "memory": "1Gi"}}),
    "eviction percentage": ({"hugepagesPerNumaNode": {"hugepages-1Gi": "2Gi"}},
                            {"evictionHard": {"memory.available": "7.5%"}}),
    "reserved CPUs": ({}, {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,16"}),
    "pages beyond what is left": ({"memoryPerNumaNode": "8Gi", "hugepagesPerNumaNode": {"hugepages-1Gi": "8Gi"}},
                                  {"kubeReserved": {"memory": "1Gi"}}),
}


def _scenario(tmp_path: Path, node: dict[str, Any], config: dict[str, Any]) -> Path:
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario",
           "node": {"name": "n1", "synthetic": {**SYNTHETIC, **node}}, "kubeletConfig": config, "steps": []}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("case", list(CASES))
def test_the_kubelets_allocatable_contradicts_nothing(oracle_binary: str, tmp_path: Path, case: str) -> None:
    node, config = CASES[case]
    path = _scenario(tmp_path, node, config)
    proc = subprocess.run([oracle_binary, "nodestatus", str(path)], capture_output=True, text=True, timeout=120,
                          check=False)
    if proc.returncode != 0 and "would not start" in proc.stderr:
        pytest.fail(f"the kubelet refuses the case's configuration: {proc.stderr}")
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    scenario = load_scenario(str(path))
    cpus = scenario.machine.topology.cpus().size()
    assert contradictions(scenario.config, cpus, allocatable=status["allocatable"], capacity=status["capacity"],
                          nrt_attributes={}) == []
    off = dict(status["allocatable"])
    off["memory"] = str(int(_bytes(off["memory"])) - 2**20)
    said = contradictions(scenario.config, cpus, allocatable=off, capacity=status["capacity"], nrt_attributes={})
    assert len(said) == 1 and said[0].startswith("status.allocatable memory is ")


def _bytes(text: str) -> int:
    from podnuma.api.quantity import parse_quantity

    return int(parse_quantity(text).value())
