"""The restart what-if on the engine: order, inputs (scenario, state
directory), pods without specs, terminal pods, and the command's grammar.
(tests/oracle/test_restart_whatif.py replays its figures in the kubelet.)"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.analysis.restart import NodeState, RunningPod, readmission_order, restart
from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.inputs.text import TextInput
from podnuma.service.restart import restart_after_scenario, restart_state_dir

NODE = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 8, "threadsPerCore": 1,
                      "memoryPerNumaNode": "16Gi"}}
CONFIG = {"featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "best-effort",
          "topologyManagerScope": "pod"}


def _pc(name: str, created: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "r"}
    if created:
        meta["creationTimestamp"] = created
    return {"metadata": meta, "spec": {"containers": [
        {"name": "app", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}}


def _pl(name: str, created: str | None = None) -> dict[str, Any]:
    pod = _pc(name, created)
    budget = {"cpu": "4", "memory": "4Gi"}
    pod["spec"] = {"resources": {"requests": budget, "limits": budget}, "containers": [
        {"name": "c1", "resources": {"limits": {"cpu": "2", "memory": "2Gi"}}}, {"name": "c2"}]}
    return pod


def _scenario(*pods: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": copy.deepcopy(NODE),
            "kubeletConfig": copy.deepcopy(CONFIG), "steps": [{"addPod": p} for p in pods]}


def _write(tmp_path: Path, doc: dict[str, Any], name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _outcomes(report: Any) -> dict[str, str]:
    return {p.ref: p.outcome for p in report.pods}


def test_pod_level_pod_moves_and_the_next_start_fails(tmp_path: Path) -> None:
    path = _write(tmp_path, _scenario(_pc("a", "2026-01-01T00:00:01Z"), _pl("b", "2026-01-01T00:00:02Z")))
    r = restart_after_scenario(TextInput.read(path, what="scenario"))
    assert _outcomes(r) == {"r/a": "kept", "r/b": "moved"}
    b = r.pods[1]
    assert (str(b.before.cpus), str(b.after.cpus if b.after else None)) == ("3-6", "7-10")
    assert str(b.left_behind) == "3-6"
    assert (r.totals.taken_by_nobody, r.totals.held_by_running, r.totals.free) == (4, 6, 5)
    assert r.next_start is not None and "doesn't match with CPUs in state" in r.next_start


def test_per_container_pods_keep_their_cpus(tmp_path: Path) -> None:
    path = _write(tmp_path, _scenario(_pc("a"), _pc("b"), _pc("c")))
    r = restart_after_scenario(TextInput.read(path, what="scenario"))
    assert set(_outcomes(r).values()) == {"kept"}
    assert [str(p.before.cpus) for p in r.pods] == ["1-2", "3-4", "5-6"]
    assert r.next_start is None and r.totals.taken_by_nobody == 0
    # no creation times: the order they came to the node, said in a note
    assert any("no metadata.creationTimestamp" in n for n in r.notes)


def test_order_is_by_creation_time_and_ties_are_said() -> None:
    pods = [RunningPod(f"u{i}", f"r/{n}", _pc(n, t)) for i, (n, t) in enumerate(
        [("late", "2026-01-01T00:00:09Z"), ("b", "2026-01-01T00:00:01Z"), ("a", "2026-01-01T00:00:01.5Z"),
         ("none", None)])]
    order, notes = readmission_order(pods)
    # no time = Go's zero time: first; b and a in the same second: as given
    assert [p.ref for p in order] == ["r/none", "r/b", "r/a", "r/late"]
    assert any("same second" in n and "r/b, r/a" in n for n in notes)


def test_order_takes_every_time_go_takes() -> None:
    """Times Go's RFC 3339 parse takes and Python's ``fromisoformat`` does
    not (a one-digit hour, an offset of 24 hours, year 0000), ordered by
    the moment they stand for; one Python takes and Go refuses."""
    pods = [RunningPod(f"u{i}", f"r/{n}", _pc(n, t)) for i, (n, t) in enumerate(
        [("one-digit-hour", "2026-01-01T1:00:00Z"), ("offset-24", "2026-01-02T00:00:00+24:00"),
         ("year-0", "0000-06-01T00:00:00Z"), ("none", None), ("comma", "2026-01-01T00:30:00,5Z")])]
    order, notes = readmission_order(pods)
    # year 0 comes before Go's zero time (year 1), which a pod without one has
    assert [p.ref for p in order] == ["r/year-0", "r/none", "r/offset-24", "r/comma", "r/one-digit-hour"]
    same = [RunningPod(f"s{i}", f"r/s{i}", _pc(f"s{i}", t)) for i, t in enumerate(
        ["0000-03-01T10:00:00+01:00", "0000-03-01T09:00:00Z"])]
    assert any("same second (0000-03-01T09:00:00Z)" in n for n in readmission_order(same)[1])
    with pytest.raises(InputError) as e:
        readmission_order([RunningPod("x", "r/x", _pc("x", "2026-01-01T00:00:00+01:60:00"))])
    assert 'parsing time "2026-01-01T00:00:00+01:60:00": extra text' in e.value.message


def test_state_dir_with_pods_dump_gives_the_scenario_figures(tmp_path: Path) -> None:
    doc = _scenario(_pc("a", "2026-01-01T00:00:01Z"), _pl("b", "2026-01-01T00:00:02Z"))
    path = _write(tmp_path, doc)
    res = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json", "--checkpoint-dir", str(tmp_path / "sd")])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    items = []
    for step, got in zip(doc["steps"], out["steps"], strict=True):
        pod = copy.deepcopy(step["addPod"])
        pod["metadata"]["uid"] = got["podUID"]
        pod["status"] = {"phase": "Running"}
        items.append(pod)
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "List", "items": items[::-1]}))
    (tmp_path / "node.json").write_text(json.dumps({"node": NODE}))
    (tmp_path / "kc.json").write_text(json.dumps(
        {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **CONFIG}))
    from_dir = restart_state_dir(
        tmp_path / "sd", pods=str(tmp_path / "pods.json"), node=TextInput.read(tmp_path / "node.json", what="node"),
        kubelet_config=str(tmp_path / "kc.json"),
    )
    from_scenario = restart_after_scenario(TextInput.read(path, what="scenario"))
    assert _outcomes(from_dir) == _outcomes(from_scenario) == {"r/a": "kept", "r/b": "moved"}
    assert [s["addPod"]["metadata"]["name"] for s in from_dir.scenario["steps"]] == ["a", "b"]
    assert from_dir.totals == from_scenario.totals
    # the next start fails the same way (the static policy's check of the
    # restored CPU sets, which names no file)
    assert from_dir.next_start is not None and from_dir.next_start == from_scenario.next_start

    # without the dump: the pods are known by their entries only
    no_specs = restart_state_dir(tmp_path / "sd", node=TextInput.read(tmp_path / "node.json", what="node"),
                                 kubelet_config=str(tmp_path / "kc.json"))
    assert set(_outcomes(no_specs).values()) == {"unknown"}
    assert no_specs.scenario["steps"] == []
    assert any("pod-level" in p.why for p in no_specs.pods)
    assert no_specs.next_start is None


def test_terminal_pods_are_not_readmitted(tmp_path: Path) -> None:
    path = _write(tmp_path, _scenario(_pc("a"), _pl("b")))
    base = restart_after_scenario(TextInput.read(path, what="scenario")).state
    pods = tuple(RunningPod(p.uid, p.ref, p.manifest, "Failed" if p.ref == "r/b" else "Running")
                 for p in base.pods)
    r = restart(NodeState(**{**base.__dict__, "pods": pods}))
    assert _outcomes(r) == {"r/a": "kept", "r/b": "unknown"}
    assert r.scenario["steps"][-1] == {"removePod": pods[1].uid}
    assert r.next_start is None and r.totals.taken_by_nobody == 0


def test_cli_grammar(tmp_path: Path) -> None:
    runner = CliRunner()
    path = _write(tmp_path, _scenario(_pc("a"), _pl("b")))
    assert runner.invoke(cli, ["restart"]).exit_code == 2
    both = runner.invoke(cli, ["restart", str(path), "--state-dir", str(tmp_path)])
    assert both.exit_code == 2 and "one of them" in both.output
    bad = _write(tmp_path, {**_scenario(_pc("a")), "steps": [{"addPod": {"spec": {}}}]}, "bad.yaml")
    res = runner.invoke(cli, ["restart", str(bad)])
    assert res.exit_code == 2 and "bad.yaml" in res.output and "Traceback" not in res.output
    out = tmp_path / "r.yaml"
    res = runner.invoke(cli, ["restart", str(path), "-o", "yaml", "--as-scenario", str(out)])
    assert res.exit_code == 0, res.output
    doc = yaml.safe_load(res.stdout)
    assert doc["totals"]["moved"] == 1 and doc["upstreamIssue"] == "kubernetes#140989"
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    replay = runner.invoke(cli, ["simulate", str(out), "-o", "json"])
    steps = json.loads(replay.stdout)["steps"]
    assert [s["admitted"] for s in steps] == [True, True]
    assert steps[1]["podAllocation"]["cpus"] == doc["pods"][1]["after"]["podCpus"] == "7-10"
    table = runner.invoke(cli, ["restart", str(path)])
    assert "↻ moved" in table.stdout and "kubernetes#140989" in table.stdout


def test_explain_says_the_restart_risk_when_it_applies(tmp_path: Path) -> None:
    runner = CliRunner()
    path = _write(tmp_path, _scenario(_pc("a", "2026-01-01T00:00:01Z"), _pl("b", "2026-01-01T00:00:02Z")))
    got = json.loads(runner.invoke(cli, ["explain", str(path), "--pod", "r/b", "--no-search", "-o", "json"]).stdout)
    section = got["restart"]
    assert [(p["pod"], p["outcome"], p["leftBehind"]) for p in section["pods"]] == [("r/b", "moved", "3-6")]
    assert not section["nextStart"]["starts"] and "pod-level" in section["applies"][0]
    text = runner.invoke(cli, ["explain", str(path), "--pod", "r/b", "--no-search", "--no-picture"]).stdout
    assert "after a kubelet restart (v1.37.2)" in text and "r/b: moved 3-6 -> 7-10" in text
    # a per-container pod, no starting state: nothing to say
    plain = json.loads(runner.invoke(cli, ["explain", str(path), "--pod", "r/a", "--no-search", "-o", "json"]).stdout)
    assert "restart" not in plain


def test_device_state_is_carried_into_the_restart() -> None:
    root = Path(__file__).resolve().parents[2]
    r = restart_after_scenario(TextInput.read(root / "examples/topology/restricted.yaml", what="scenario"))
    # the restart starts from the device checkpoint the run wrote: the GPU
    # pods keep their devices, and no caveat is needed
    assert not any(n.startswith("devices:") for n in r.notes)
    entries = r.scenario["state"]["deviceManager"]["Data"]["PodDeviceEntries"]
    assert sorted({e["PodUID"] for e in entries}) == sorted(
        p.uid for p in r.pods if p.ref in ("demo/gpu-pair", "demo/aligned-again")
    )
    assert {p.ref: p.outcome for p in r.pods}["demo/gpu-pair"] == "kept"


def test_pods_with_devices_are_flagged_without_a_device_checkpoint() -> None:
    root = Path(__file__).resolve().parents[2]
    r = restart_after_scenario(TextInput.read(root / "examples/topology/restricted.yaml", what="scenario"))
    bare = restart(dataclasses.replace(r.state, device_checkpoint=None))
    # the device manager then starts empty in the replay: the GPU pods' outcomes may not be the kubelet's
    notes = [n for n in bare.notes if n.startswith("devices:")]
    assert len(notes) == 1 and "demo/gpu-pair, demo/aligned-again" in notes[0]
    plain = restart_after_scenario(TextInput.read(root / "examples/pod-level/restart.yaml", what="scenario"))
    assert not any(n.startswith("devices:") for n in plain.notes)


def test_a_bad_creation_time_is_named_at_its_field(tmp_path: Path) -> None:
    path = _write(tmp_path, _scenario(_pc("a", "yesterday")), "bad.yaml")
    res = CliRunner().invoke(cli, ["restart", str(path)])
    assert res.exit_code == 2
    assert "bad.yaml: steps[0].addPod.metadata.creationTimestamp: not an RFC 3339 time" in res.output


def test_the_cli_prints_the_service_document(tmp_path: Path) -> None:
    from podnuma.analysis.restart import restart_document

    path = _write(tmp_path, _scenario(_pc("a"), _pl("b")))
    res = CliRunner().invoke(cli, ["restart", str(path), "-o", "json"])
    assert json.loads(res.stdout) == restart_document(restart_after_scenario(TextInput.read(path, what="scenario")))


def _state_dir_of(tmp_path: Path, doc: dict[str, Any]) -> tuple[Path, Path]:
    """The checkpoints ``doc`` leaves (its state directory) and a pods
    dump of its pods, their UIDs as the run gave them."""
    path = _write(tmp_path, doc)
    res = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json", "--checkpoint-dir", str(tmp_path / "sd")])
    assert res.exit_code == 0, res.output
    items = []
    for step, got in zip(doc["steps"], json.loads(res.stdout)["steps"], strict=True):
        pod = copy.deepcopy(step["addPod"])
        pod["metadata"]["uid"] = got["podUID"]
        pod["status"] = {"phase": "Running"}
        items.append(pod)
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "List", "items": items}))
    return tmp_path / "sd", path


def test_state_dir_without_a_configuration_asks_for_it(tmp_path: Path) -> None:
    """The static policy's checkpoint does not record the reserved CPUs:
    the restart asks for the configuration (it said the kubelet would not
    start); pod budgets in it infer the pod-level gates and pod scope, but
    not the topology manager policy, on which b's re-admission depends: it
    is asked for too (tests/analysis/test_restart_policy_from_checkpoints.py);
    given by --set, the restart runs."""
    sd, path = _state_dir_of(tmp_path, _scenario(_pc("a", "2026-01-01T00:00:01Z"),
                                                 _pl("b", "2026-01-01T00:00:02Z")))
    node = ["--node", str(path), "--pods", str(tmp_path / "pods.json")]
    res = CliRunner().invoke(cli, ["restart", "--state-dir", str(sd), *node])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.startswith("error: --kubelet-config: the node's configuration is needed")
    res = CliRunner().invoke(cli, ["restart", "--state-dir", str(sd), *node, "--set", "reservedSystemCPUs=0"])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.startswith("error: --kubelet-config: the node's topology manager policy is needed")
    res = CliRunner().invoke(cli, ["restart", "--state-dir", str(sd), *node, "--set", "reservedSystemCPUs=0",
                                   "--set", "topologyManagerPolicy=restricted",
                                   "--as-scenario", str(tmp_path / "as.yaml")])
    assert res.exit_code == 0, res.output
    config = yaml.safe_load((tmp_path / "as.yaml").read_text())["kubeletConfig"]
    assert config["featureGates"] == {"PodLevelResources": True, "PodLevelResourceManagers": True}
    assert config["topologyManagerScope"] == "pod"
    assert config["topologyManagerPolicy"] == "restricted"
    assert "does not record reservedSystemCPUs" not in res.stdout  # (--set gave them)


def test_cpus_of_a_pod_without_spec_count_as_held_by_running_pods(tmp_path: Path) -> None:
    """A pod the dump lacks runs on as its entries: its CPUs are held by a
    running pod, and the totals add up to the node's CPUs."""
    sd, path = _state_dir_of(tmp_path, _scenario(_pc("a"), _pc("b")))
    dump = json.loads((tmp_path / "pods.json").read_text())
    dump["items"] = dump["items"][:1]  # b's spec missing
    (tmp_path / "pods.json").write_text(json.dumps(dump))
    r = restart_state_dir(sd, pods=str(tmp_path / "pods.json"), node=TextInput.read(path, what="node"),
                          kubelet_config=str(path))
    assert sorted(_outcomes(r).values()) == ["kept", "unknown"]
    t = r.totals
    assert t.cpus == t.reserved + t.free + t.held_by_running + t.held_by_rejected + t.taken_by_nobody
    assert t.held_by_running == 4


@pytest.mark.parametrize("value,said", [
    ("1e400", "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp"),
    ("5", "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp"),
    ('"yesterday"', 'not an RFC 3339 time: \'yesterday\''),
])
def test_a_pods_dump_creation_time_of_another_type_is_refused_as_such(
    tmp_path: Path, value: str, said: str
) -> None:
    """A number past the float range (read as its text) is a number, as 5
    is: refused for its type, not parsed as a time."""
    doc = _scenario(_pc("a", "2026-01-01T00:00:01Z"), _pl("b", "2026-01-01T00:00:02Z"))
    path = _write(tmp_path, doc)
    res = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json", "--checkpoint-dir", str(tmp_path / "sd")])
    assert res.exit_code == 0, res.output
    items = []
    for step, got in zip(doc["steps"], json.loads(res.stdout)["steps"], strict=True):
        pod = copy.deepcopy(step["addPod"])
        pod["metadata"]["uid"] = got["podUID"]
        pod["status"] = {"phase": "Running"}
        items.append(pod)
    items[1]["metadata"]["creationTimestamp"] = "@@"
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "List", "items": items}).replace('"@@"', value))
    (tmp_path / "node.json").write_text(json.dumps({"node": NODE}))
    (tmp_path / "kc.json").write_text(json.dumps(
        {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **CONFIG}))
    r = CliRunner().invoke(cli, ["restart", "--state-dir", str(tmp_path / "sd"), "--pods", str(tmp_path / "pods.json"),
                                 "--node", str(tmp_path / "node.json"), "--kubelet-config", str(tmp_path / "kc.json")])
    assert r.exit_code == 2
    assert f"pods.json: items[1].metadata.creationTimestamp: {said}" in r.output
