"""``state inspect`` checked against the machine and ``--as-scenario`` that
the kubelet starts from: checkpoints Go decodes but strict JSON does not
(``null``, invalid UTF-8, lone surrogate escapes), ``--set`` on top of the
configuration inferred from the checkpoints, ``--pods`` giving
``state.pods``, a checkpoint that does not fit the machine given (reported
by inspect, refused by ``--as-scenario``), and ``--checkpoint-dir -``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from podnuma.cli import cli

REPO = Path(__file__).resolve().parents[2]
NODE = {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 1,
                      "memoryPerNumaNode": "16Gi"}}
CONFIG = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def _pod(name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "r", "uid": uid},
            "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}


def _state(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A state directory of two Guaranteed pods on NODE (their UIDs fixed),
    and their manifests."""
    pods = [_pod(f"p{i}", str(uuid.UUID(int=i + 1))) for i in range(2)]
    scenario = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "kubeletConfig": CONFIG,
                "steps": [{"addPod": p} for p in pods]}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(scenario))
    (tmp_path / "node.yaml").write_text(yaml.safe_dump({"node": NODE}))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    res = _run("simulate", str(tmp_path / "run.yaml"), "-o", "json", "--checkpoint-dir", str(tmp_path / "sd"))
    assert res.exit_code == 0, res.output
    return tmp_path / "sd", pods


def test_checkpoints_go_decodes_are_written_as_scenarios(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "cpu_manager_state").write_bytes(b"null")  # (Go: an empty checkpoint, as {})
    res = _run("state", "inspect", str(d), "--as-scenario", "-o", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["state"]["cpuManager"] == {}
    # invalid UTF-8 and a lone surrogate escape: U+FFFD, as Go decodes them
    (d / "cpu_manager_state").write_bytes(
        b'{"policyName":"none","defaultCpuSet":"0-3","entries":{"\\ud800":{"c\xff":"1"}},"checksum":0}')
    res = _run("state", "inspect", str(d), "--as-scenario", "-o", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["state"]["cpuManager"]["entries"] == {"\ufffd": {"c\ufffd": "1"}}
    res = _run("state", "inspect", str(d), "--as-scenario")  # (YAML: no lone surrogate written)
    assert res.exit_code == 0, res.output
    assert yaml.safe_load(res.stdout)["state"]["cpuManager"]["entries"] == {"\ufffd": {"c\ufffd": "1"}}


def test_set_applies_on_top_of_the_inferred_configuration(tmp_path: Path) -> None:
    sd, _ = _state(tmp_path)
    res = _run("state", "inspect", str(sd), "--as-scenario", "-o", "json", "--node", str(tmp_path / "node.yaml"),
               "--set", "reservedSystemCPUs=0")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["kubeletConfig"] == {"cpuManagerPolicy": "static", "memoryManagerPolicy": "None",
                                    "reservedSystemCPUs": "0"}
    assert "does not record reservedSystemCPUs" not in res.stderr  # (the note it answers is gone)
    (tmp_path / "as.json").write_text(res.stdout)
    assert _run("simulate", str(tmp_path / "as.json")).exit_code == 0


def test_pods_dump_gives_state_pods(tmp_path: Path) -> None:
    sd, pods = _state(tmp_path)
    dump = {"apiVersion": "v1", "kind": "List",
            "items": [{**pods[0], "status": {"phase": "Running"}},
                      _pod("elsewhere", str(uuid.UUID(int=99)))]}  # (another pod: no entries here)
    (tmp_path / "pods.json").write_text(json.dumps(dump))
    res = _run("state", "inspect", str(sd), "--as-scenario", "-o", "json", "--node", str(tmp_path / "node.yaml"),
               "--kubelet-config", str(tmp_path / "config.yaml"), "--pods", str(tmp_path / "pods.json"))
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["state"]["pods"] == [pods[0]]  # (its status left out; the pod without entries too)
    assert "1 pod(s) own checkpoint entries but are not in the pods dump" in res.stderr
    (tmp_path / "as.json").write_text(res.stdout)
    played = _run("simulate", str(tmp_path / "as.json"))
    assert played.exit_code == 0, played.output
    assert "r/p0" in played.stdout  # (the restored pod by its name, from state.pods)


def test_a_checkpoint_that_does_not_fit_the_machine(tmp_path: Path) -> None:
    sd, _ = _state(tmp_path)
    small = {"node": {"synthetic": {**NODE["synthetic"], "coresPerNumaNode": 2}}}
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(small))
    res = _run("state", "inspect", str(sd), "--node", str(tmp_path / "small.yaml"), "-o", "json")
    assert res.exit_code == 0, res.output
    kinds = [i["kind"] for i in json.loads(res.stdout)["inconsistencies"]]
    assert kinds == ["cpus-not-machine"]
    assert _run("state", "inspect", str(sd), "--node", str(tmp_path / "node.yaml"), "-o", "json").exit_code == 0
    fits = json.loads(_run("state", "inspect", str(sd), "--node", str(tmp_path / "node.yaml"), "-o", "json").stdout)
    assert fits["inconsistencies"] == []
    # the scenario of a state the kubelet would not start from is not written
    res = _run("state", "inspect", str(sd), "--as-scenario", "--node", str(tmp_path / "small.yaml"),
               "--kubelet-config", str(tmp_path / "config.yaml"))
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    assert "doesn't match with CPUs in state" in res.stderr and len(res.stderr.splitlines()) == 1


def test_checkpoint_dir_dash_is_refused(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["simulate", str(REPO / "examples" / "real-node" / "this-node.yaml"),
                                   "--checkpoint-dir", "-"])
    assert res.exit_code == 2 and "'-' names no directory" in res.stderr
    assert not Path("-").exists()


def test_a_bad_pod_of_the_dump_is_named_where_it_is_in_the_dump(tmp_path: Path) -> None:
    """A pod of ``--pods`` that ``state.pods`` refuses: the error names the
    dump's file, the item's field path and its line there (not the scenario
    made of it), for ``restart --state-dir`` and ``state inspect
    --as-scenario`` alike; nothing is written on standard output."""
    sd, pods = _state(tmp_path)
    bad = json.loads(json.dumps(pods[1]))
    bad["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "abc"
    (tmp_path / "pods.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {**pods[0], "status": {"phase": "Running"}}, bad]}, indent=1))
    line, column = next((i, text.index('"abc"') + 1)
                        for i, text in enumerate((tmp_path / "pods.json").read_text().splitlines(), 1)
                        if '"abc"' in text)
    where = f"{tmp_path / 'pods.json'}: items[1].spec.containers[0].resources.limits[cpu]: "
    given = ["--node", str(tmp_path / "node.yaml"), "--kubelet-config", str(tmp_path / "config.yaml"),
             "--pods", str(tmp_path / "pods.json")]
    for args in (["restart", "--state-dir", str(sd), *given],
                 ["state", "inspect", str(sd), "--as-scenario", "-o", "json", *given]):
        res = _run(*args)
        assert res.exit_code == 2, res.output
        assert res.stdout == ""
        (error,) = [x for x in res.stderr.splitlines() if x.startswith("error:")]
        assert error.startswith(f"error: {where}quantities must match"), error
        assert error.endswith(f"(line {line}, column {column})"), error  # (the value, in the dump)


def test_a_dump_pod_name_with_control_characters_is_refused(tmp_path: Path) -> None:
    """``state inspect --pods`` shows the dump's pod names in its table: a
    name the API server would refuse (control characters) is an error
    naming the dump and the field, never written to the terminal."""
    sd, pods = _state(tmp_path)
    evil = json.loads(json.dumps(pods[0]))
    evil["metadata"]["name"] = "p\x1b[31m0\nX"
    (tmp_path / "pods.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [evil]}))
    res = _run("state", "inspect", str(sd), "--pods", str(tmp_path / "pods.json"))
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and "\x1b" not in res.stderr
    (error,) = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert f"{tmp_path / 'pods.json'}: items[0].metadata.name: Invalid value: " in error
    assert "RFC 1123 subdomain" in error
