"""The node advise writes into its scenarios (``machine_node_document``)
loads back as the same machine, cadvisor's CPU count (``cpuCapacity``)
and memory capacity included."""

from __future__ import annotations

from pathlib import Path

from podnuma.analysis.advise import machine_node_document
from podnuma.inputs.discover import load_node


def test_cpu_and_memory_capacity_are_carried(tmp_path: Path) -> None:
    form = {
        "name": "n",
        "cpus": [{"id": i, "core": i, "socket": 0, "numaNode": 0} for i in range(3)],
        "memory": {0: {"memory": "8Gi"}},
        "cpuCapacity": 4,  # (one CPU offline, counted by cadvisor)
        "memoryCapacity": "9Gi",
    }
    machine = load_node(form, base_dir=tmp_path)
    doc = machine_node_document(machine)
    assert doc["cpuCapacity"] == 4 and doc["memoryCapacity"] == "9Gi"
    again = load_node(doc, base_dir=tmp_path)
    assert again.topology.num_cpus == machine.topology.num_cpus == 4
    assert again.total_memory == machine.total_memory
    plain = machine_node_document(load_node({**form, "cpuCapacity": 3}, base_dir=tmp_path))
    assert "cpuCapacity" not in plain  # (only where it differs from the rows)
