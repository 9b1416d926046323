"""load_node: dispatch over the four forms, devices, name, file paths, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.errors import InputError
from podnuma.inputs.discover import load_node
from podnuma.machine.topology import Device

SYNTH = {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 2, "threadsPerCore": 2}
MACHINE_INFO = {
    "num_cores": 4,
    "num_sockets": 1,
    "topology": [
        {"node_id": 0, "memory": 1 << 30, "cores": [{"core_id": 0, "thread_ids": [0, 2]}]},
        {"node_id": 1, "memory": 1 << 30, "cores": [{"core_id": 1, "thread_ids": [1, 3]}]},
    ],
}
TABLE = [
    {"id": 0, "core": 0, "socket": 0, "numaNode": 0},
    {"id": 1, "core": 1, "socket": 0, "numaNode": 1},
]


def test_the_forms_agree(tmp_path: Path) -> None:
    (tmp_path / "mi.json").write_text(json.dumps(MACHINE_INFO))
    a = load_node({"machineInfo": MACHINE_INFO}, base_dir=tmp_path)
    b = load_node({"machineInfoFile": "mi.json"}, base_dir=tmp_path)
    c = load_node(
        {
            "cpus": [
                {"id": 0, "core": 0, "socket": 0, "numaNode": 0},
                {"id": 2, "core": 0, "socket": 0, "numaNode": 0},
                {"id": 1, "core": 1, "socket": 0, "numaNode": 1},
                {"id": 3, "core": 1, "socket": 0, "numaNode": 1},
            ],
            "memory": {0: {"memory": "1Gi"}, 1: {"memory": "1Gi"}},
        },
        base_dir=tmp_path,
    )
    assert a.topology == b.topology == c.topology
    assert a.numa_nodes == b.numa_nodes == c.numa_nodes


def test_synthetic_devices_and_name(tmp_path: Path) -> None:
    m = load_node(
        {
            "synthetic": SYNTH,
            "name": "worker-7",
            "devices": {
                "example.com/gpu": [{"id": "gpu0", "numaNodes": [0]}, {"id": "gpu1", "numaNodes": [1, 0]}],
                "example.com/nic": [{"id": 3}],
            },
        },
        base_dir=tmp_path,
    )
    assert m.name == "worker-7"
    assert m.topology.num_cpus == 8
    assert m.devices == {
        "example.com/gpu": (Device("gpu0", (0,)), Device("gpu1", (0, 1))),
        "example.com/nic": (Device("3", ()),),
    }


def test_default_name(tmp_path: Path) -> None:
    assert load_node({"synthetic": SYNTH}, base_dir=tmp_path).name == "node"


def test_sysfs_relative_to_base_dir(tmp_path: Path) -> None:
    cpu = tmp_path / "snap" / "devices" / "system" / "cpu" / "cpu0" / "topology"
    cpu.mkdir(parents=True)
    (cpu / "core_id").write_text("0\n")
    (cpu / "physical_package_id").write_text("0\n")
    m = load_node({"sysfs": "snap"}, base_dir=tmp_path)
    assert m.topology.cpus().list() == [0]


def test_sysfs_errors_are_under_sysfs(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_node({"sysfs": "missing"}, base_dir=tmp_path)
    assert exc.value.path == "sysfs"
    assert exc.value.file == str(tmp_path / "missing")


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({}, ""),
        ({"synthetic": SYNTH, "cpus": TABLE}, ""),
        ({"synthetic": SYNTH, "nmae": "x"}, "nmae"),
        ({"synthetic": SYNTH, "memory": {}}, "memory"),
        ({"synthetic": SYNTH, "name": ""}, "name"),
        ({"synthetic": {**SYNTH, "coresPerNuma": 1}}, "synthetic.coresPerNuma"),
        ({"cpus": TABLE + [{"id": 3, "core": 0, "socket": "0", "numaNode": 0}]}, "cpus[2].socket"),
        ({"machineInfo": {"num_cores": 0}}, "machineInfo.num_cores"),
        ({"machineInfo": {"num_cores": 2, "topology": [{"cores": [{"thread_ids": []}]}]}}, "machineInfo.topology[0].cores[0].thread_ids"),
        ({"machineInfo": "x"}, "machineInfo"),
        ({"synthetic": SYNTH, "devices": {"a/b": [{"id": "d", "numaNodes": [2**63]}]}}, "devices.a/b[0].numaNodes[0]"),
        ({"synthetic": SYNTH, "devices": {"a/b": [{"id": "d"}, {"id": "d"}]}}, "devices.a/b[1].id"),
        ({"synthetic": SYNTH, "devices": {"a/b": [{"id": "d", "numa": [0]}]}}, "devices.a/b[0].numa"),
        ({"synthetic": SYNTH, "devices": {"a/b": [{"numaNodes": [0]}]}}, "devices.a/b[0].id"),
        ({"synthetic": SYNTH, "devices": {"a/b": {"id": "d"}}}, "devices.a/b"),
    ],
)
def test_invalid(tmp_path: Path, doc: dict[str, Any], path: str) -> None:
    with pytest.raises(InputError) as exc:
        load_node(doc, base_dir=tmp_path)
    assert exc.value.path == path
    assert exc.value.at("node").path.startswith("node")


def test_machine_info_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError) as exc:
        load_node({"machineInfoFile": str(bad)}, base_dir=Path("/nonexistent"))
    assert (exc.value.file, exc.value.path) == (str(bad), "machineInfoFile")

    zero = tmp_path / "zero.json"
    zero.write_text(json.dumps({"num_cores": 0}))
    with pytest.raises(InputError) as exc:
        load_node({"machineInfoFile": "zero.json"}, base_dir=tmp_path)
    assert exc.value.message == "could not detect number of cpus"
    assert (exc.value.file, exc.value.path) == (str(zero), "machineInfoFile.num_cores")

    with pytest.raises(InputError) as exc:
        load_node({"machineInfoFile": "absent.json"}, base_dir=tmp_path)
    assert exc.value.file == str(tmp_path / "absent.json")
