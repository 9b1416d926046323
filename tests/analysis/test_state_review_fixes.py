"""``state inspect`` and ``restart --state-dir``, fixes of a review:

- ``--as-scenario`` writes every quantity of the configuration it infers
  (``systemReserved``, ``reservedMemory[].limits``) as a string, so the
  scenario it writes is one ``simulate`` reads, and replays the directory's
  checkpoints as they are (a reservation of 0, of whole MiB, of bytes no
  binary unit divides);
- ``restart --state-dir`` refuses ``--node`` with ``--sysfs``, in the words
  of ``state inspect``;
- a pods dump's ``metadata.uid`` / ``metadata.name`` of the wrong type or
  empty is said so, not "required field is missing";
- a start-up failure on a state directory's checkpoints names the file in
  that directory, not the kubelet's ``/var/lib/kubelet``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.inputs.discover.export import bytes_quantity, hugepage_key

NODE = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 1,
                      "memoryPerNumaNode": "16Gi"}}
EVICTION = 100 << 20  # the default evictionHard memory.available


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def _pod(name: str, i: int, cpu: str, memory: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "r", "uid": str(uuid.UUID(int=i))},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": cpu, "memory": memory}}}]}}


def _checkpoints(directory: Path) -> dict[str, Any]:
    return {f: json.loads((directory / f).read_text()) for f in ("cpu_manager_state", "memory_manager_state")}


def _state_dir(tmp_path: Path, system_reserved: int) -> Path:
    """A state directory of pods run on NODE with the static CPU and memory
    managers, ``system_reserved`` bytes of systemReserved memory (all on
    NUMA node 0 with the hard eviction threshold); ``node.yaml`` beside it."""
    config: dict[str, Any] = {
        "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "memoryManagerPolicy": "Static",
        "systemReserved": {"memory": str(system_reserved)},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": str(system_reserved + EVICTION)}}],
    }
    pods = [_pod("a", 1, "2", "4Gi"), _pod("b", 2, "1", "1Gi"), _pod("c", 3, "500m", "256Mi")]
    scenario = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "kubeletConfig": config,
                "steps": [{"addPod": p} for p in pods]}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(scenario))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump({"node": NODE}))
    res = _run("simulate", str(tmp_path / "run.yaml"), "-o", "json", "--checkpoint-dir", str(tmp_path / "sd"))
    assert res.exit_code == 0, res.output
    return tmp_path / "sd"


def test_bytes_quantity_is_always_quantity_text() -> None:
    assert bytes_quantity(0) == "0"
    assert bytes_quantity(1000) == "1000"
    assert bytes_quantity(100 << 20) == "100Mi"
    assert bytes_quantity(1536 << 20) == "1536Mi"
    assert bytes_quantity((100 << 20) + 1000) == "104858600"
    assert hugepage_key(2048) == "hugepages-2Mi"


@pytest.mark.parametrize(("system_reserved", "written"), [
    (0, "0"), (100 << 20, "100Mi"), (1000, "1000"),
])
def test_as_scenario_round_trips_through_simulate(tmp_path: Path, system_reserved: int, written: str) -> None:
    sd = _state_dir(tmp_path, system_reserved)
    res = _run("state", "inspect", str(sd), "--as-scenario", "--node", str(tmp_path / "node.yaml"),
               "--set", "reservedSystemCPUs=0")
    assert res.exit_code == 0, res.output
    (tmp_path / "as.yaml").write_text(res.stdout)
    config = yaml.safe_load(res.stdout)["kubeletConfig"]
    # every quantity as text, the inference's figures unchanged
    assert config["systemReserved"] == {"memory": written}
    assert config["reservedMemory"] == [{"numaNode": 0, "limits": {"memory": bytes_quantity(system_reserved + EVICTION)}}]
    # simulate reads it, and the node restored from it is the directory's
    run = _run("simulate", str(tmp_path / "as.yaml"), "--checkpoint-dir", str(tmp_path / "again"))
    assert run.exit_code == 0, run.output
    assert _checkpoints(tmp_path / "again") == _checkpoints(sd)
    # as JSON too
    res = _run("state", "inspect", str(sd), "--as-scenario", "--node", str(tmp_path / "node.yaml"),
               "--set", "reservedSystemCPUs=0", "-o", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["kubeletConfig"]["systemReserved"] == {"memory": written}


def test_demo_checkpoints_round_trip(tmp_path: Path) -> None:
    """The tester's case: the demo's checkpoints, its node, the inferred
    configuration (systemReserved memory 0: the checkpoint reserves just
    the hard eviction threshold)."""
    res = _run("demo", "--checkpoint-dir", str(tmp_path / "ck"))
    assert res.exit_code == 0, res.output
    node = {"name": "demo-node", "synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 8,
                                               "threadsPerCore": 2, "memoryPerNumaNode": "32Gi"}}
    (tmp_path / "dn.yaml").write_text(yaml.safe_dump(node))
    res = _run("state", "inspect", str(tmp_path / "ck"), "--as-scenario", "--node", str(tmp_path / "dn.yaml"),
               "--set", "reservedSystemCPUs=0,16")
    assert res.exit_code == 0, res.output
    assert yaml.safe_load(res.stdout)["kubeletConfig"]["systemReserved"] == {"memory": "0"}
    (tmp_path / "g3.yaml").write_text(res.stdout)
    run = _run("simulate", str(tmp_path / "g3.yaml"), "--checkpoint-dir", str(tmp_path / "again"))
    assert run.exit_code == 0, run.output
    assert _checkpoints(tmp_path / "again") == _checkpoints(tmp_path / "ck")
    # restart from the directory, on the configuration inferred (was refused)
    res = _run("restart", "--state-dir", str(tmp_path / "ck"), "--node", str(tmp_path / "dn.yaml"),
               "--set", "reservedSystemCPUs=0,16", "-o", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["pods"]


def test_restart_refuses_node_and_sysfs_as_state_inspect_does(tmp_path: Path) -> None:
    sd = _state_dir(tmp_path, 0)
    sysfs = tmp_path / "sys"
    sysfs.mkdir()
    config = tmp_path / "kc.yaml"
    config.write_text(yaml.safe_dump({"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}))
    both = ("--node", str(tmp_path / "node.yaml"), "--sysfs", str(sysfs))
    inspected = _run("state", "inspect", str(sd), *both)
    restarted = _run("restart", "--state-dir", str(sd), *both, "--kubelet-config", str(config))
    assert inspected.exit_code == restarted.exit_code == 2
    assert restarted.output == inspected.output == "error: give the machine with --node or --sysfs, not both\n"
    assert restarted.stdout == ""


@pytest.mark.parametrize(("metadata", "message"), [
    ({"uid": 5, "name": "db"}, "items[0].metadata.uid: must be a string, got an integer"),
    ({"uid": ["x"], "name": "db"}, "items[0].metadata.uid: must be a string, got a list"),
    ({"uid": "", "name": "db"}, "items[0].metadata.uid: Required value: must not be empty"),
    ({"uid": "u", "name": 7}, "items[0].metadata.name: must be a string, got an integer"),
    ({"uid": "u", "name": ""}, "items[0].metadata.name: Required value: name or generateName is required"),
    ({"name": "db"}, "items[0].metadata.uid: required field is missing"),
    ({"uid": None, "name": "db"}, "items[0].metadata.uid: required field is missing"),
    ({"uid": "u"}, "items[0].metadata.name: required field is missing"),
])
def test_pods_dump_identity_fields_say_what_is_wrong(
    tmp_path: Path, metadata: dict[str, Any], message: str
) -> None:
    sd = _state_dir(tmp_path, 0)
    dump = tmp_path / "pods.json"
    dump.write_text(json.dumps({"kind": "List", "items": [{"metadata": metadata}]}))
    res = _run("state", "inspect", str(sd), "--pods", str(dump))
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: {dump}: {message} (line 1, column "), res.output
    res = _run("restart", "--state-dir", str(sd), "--node", str(tmp_path / "node.yaml"), "--pods", str(dump),
               "--set", "reservedSystemCPUs=0")
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: {dump}: {message} (line 1, column "), res.output


@pytest.mark.parametrize("field", ["uid", "name", "namespace"])
def test_pods_dump_identity_number_past_the_float_range_is_a_number(tmp_path: Path, field: str) -> None:
    """``1e400`` (kept as its text by the JSON reader) is a number, not the
    string "1e400", as for any other number in a string field."""
    sd = _state_dir(tmp_path, 0)
    meta = {"uid": "u", "name": "db", "namespace": "d"}
    meta[field] = "BIG"
    dump = tmp_path / "pods.json"
    dump.write_text(json.dumps({"kind": "List", "items": [{"metadata": meta}]}).replace('"BIG"', "1e400"))
    res = _run("state", "inspect", str(sd), "--pods", str(dump))
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: {dump}: items[0].metadata.{field}: must be a string, got a number"), \
        res.output


@pytest.mark.parametrize(("config", "manager", "policies", "file"), [
    ({"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}, "memory",
     '[memorymanager] configured policy "None" differs from state checkpoint policy "Static"',
     "memory_manager_state"),
    ({"cpuManagerPolicy": "none", "memoryManagerPolicy": "Static",
      "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}]}, "cpu",
     'configured policy "none" differs from state checkpoint policy "static"', "cpu_manager_state"),
])
def test_startup_failure_names_the_checkpoint_in_the_state_dir(
    tmp_path: Path, config: dict[str, Any], manager: str, policies: str, file: str
) -> None:
    sd = _state_dir(tmp_path, 0)
    (tmp_path / "kc.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **config}))
    which = "CPU" if manager == "cpu" else "memory"
    kubelet = (f"error: kubelet would not start: start {manager} manager error: could not restore state from "
               f"checkpoint: {policies}, please drain this node and delete the {which} manager checkpoint "
               f'file "{sd / file}" before restarting Kubelet')
    state = "state.cpuManager" if manager == "cpu" else "state.memoryManager"
    res = _run("restart", "--state-dir", str(sd), "--node", str(tmp_path / "node.yaml"),
               "--kubelet-config", str(tmp_path / "kc.yaml"))
    assert res.exit_code == 2, res.output
    assert res.output == f"{kubelet} ({sd} (restart): {state})\n"
    res = _run("state", "inspect", str(sd), "--as-scenario", "--node", str(tmp_path / "node.yaml"),
               "--kubelet-config", str(tmp_path / "kc.yaml"))
    assert res.exit_code == 2, res.output
    assert res.output == f"{kubelet} ({sd}: the scenario of its checkpoints: {state})\n"
    assert "/var/lib/kubelet" not in res.output
