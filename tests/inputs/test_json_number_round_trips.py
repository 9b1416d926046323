"""A JSON number kept with its text (``golang.jsonnumbers``) keeps it
through everything podnuma builds from the pods it read: the fleet's memo
keys, the scenarios it writes, the documents it reads again (a web
request's scenario step, a restart), the YAML it writes. ``2e0`` and
``2.0000000000000000001`` are one float and two quantities (2 and 2001m)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.golang.jsonnumbers import JSONFloat, dumps, json_float, with_texts
from podnuma.render.yaml_text import dump_scenario_yaml, dump_yaml
from podnuma.service.whatif import whatif_request

TWO, TWO_AND_A_BIT = "2e0", "2.0000000000000000001"
CONFIG = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
NODE = {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 1,
                      "memoryPerNumaNode": "16Gi"}}


def _pod(name: str, cpu: str, phase: object = "Running", second: int = 1) -> str:
    """A running pod whose cpu request and limit are the JSON number ``cpu``
    (its text, unquoted)."""
    res = f'{{"cpu":{cpu},"memory":"1Gi"}}' if cpu[-1].isdigit() else f'{{"cpu":"{cpu}","memory":"1Gi"}}'
    return (f'{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"default","uid":"u{name}",'
            f'"creationTimestamp":"2026-01-01T00:00:0{second}Z"}},"spec":{{"nodeName":"n1","containers":'
            f'[{{"name":"c","resources":{{"requests":{res},"limits":{res}}}}}]}},'
            f'"status":{{"phase":{json.dumps(phase)},"startTime":"2026-01-01T00:00:0{second}Z"}}}}')


def _fleet(tmp_path: Path, pods: list[str]) -> Path:
    d = tmp_path / "fleet"
    (d / "pods").mkdir(parents=True)
    (d / "fleet.yaml").write_text(yaml.safe_dump({
        "apiVersion": "podnuma.io/v1", "kind": "FleetConfig",
        "nodeGroups": [{"name": "g", "selector": "example.com/node-pool=g", "kubeletConfig": CONFIG, "node": NODE}],
    }))
    (d / "nodes.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [{
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "x", "labels": {"example.com/node-pool": "g"}},
        "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                   "allocatable": {"cpu": "3", "memory": "15Gi", "pods": "110"}}}]}))
    (d / "pods" / "pods.json").write_text('{"apiVersion":"v1","kind":"List","items":[' + ",".join(pods) + "]}")
    return d


def _rejections(report: dict[str, Any]) -> list[str]:
    return [i["message"] for i in report["nodes"][0]["issues"] if "rejects" in i["message"]]


def test_the_fleet_keys_and_writes_a_number_by_its_text(tmp_path: Path) -> None:
    # a third pod the fast path cannot read (a number as its phase) puts the
    # node's pods on the general path, whose memo keys fell back to the float
    fleet = _fleet(tmp_path, [_pod("a", TWO), _pod("b", TWO_AND_A_BIT, second=2),
                              _pod("z", "1m", phase=5, second=3)])
    out, scenarios = tmp_path / "r.json", tmp_path / "sc"
    res = CliRunner().invoke(cli, ["-q", "fleet", "analyze", str(fleet), "-o", "json", "--output-file", str(out),
                                   "--as-scenario", str(scenarios)])
    assert res.exit_code == 0, res.output
    rejected = _rejections(json.loads(out.read_text()))
    assert len(rejected) == 1 and "default/b" in rejected[0] and "OutOfcpu" in rejected[0]
    assert "requested: 2001, used: 2000" in rejected[0]
    # the scenario written replays to the report's figures (the node's run;
    # its density runs have files of their own)
    (written,) = sorted(p for p in scenarios.glob("*.yaml") if ".density-" not in p.name)
    text = written.read_text()
    assert f"cpu: '{TWO_AND_A_BIT}'" in text and f"cpu: '{TWO}'" in text
    replay = CliRunner().invoke(cli, ["simulate", str(written), "-o", "json"])
    steps = json.loads(replay.stdout)["steps"]
    assert [(s["pod"], s["admitted"]) for s in steps if s.get("pod")] == [("default/a", True), ("default/b", False)]
    assert "requested: 2001, used: 2000" in steps[1]["message"]


def test_a_web_request_takes_the_scenario_steps_pod_as_simulate_reads_it() -> None:
    scenario = ('{"apiVersion":"podnuma.io/v1","kind":"Scenario","node":' + json.dumps(NODE) + ','
                '"kubeletConfig":{"cpuManagerPolicy":"static","reservedSystemCPUs":"0"},"steps":[{"addPod":'
                + _pod("b", TWO_AND_A_BIT) + "}]}")
    got = whatif_request({"scenario": scenario, "scenarioName": "s.json", "step": 0}, False)
    text = json.dumps(got)
    # 2001m: no whole CPUs, none exclusive (as the float 2.0 would have had)
    assert '"exclusiveCpus": {"count": 2' not in text
    assert "2001m" in text


def test_dumps_writes_the_text_and_reads_back_the_same() -> None:
    doc = {"a": [json_float(TWO_AND_A_BIT), {"b": json_float("1e-400")}], "c": 1.5, "d": (1, 2), "s": "\0x"}
    text = dumps(doc, sort_keys=True, separators=(",", ":"))
    assert text == '{"a":[2.0000000000000000001,{"b":1e-400}],"c":1.5,"d":[1,2],"s":"\\u0000x"}'
    back = json.loads(text, parse_float=json_float)
    assert isinstance(back["a"][0], JSONFloat) and back["a"][0].text == TWO_AND_A_BIT
    assert dumps({"a": 1.0}) == json.dumps({"a": 1.0})
    # as YAML, a string: unquoted it would be a float again
    assert with_texts(doc)["a"] == [TWO_AND_A_BIT, {"b": "1e-400"}]
    assert dump_yaml({"cpu": json_float(TWO_AND_A_BIT)}) == f"cpu: '{TWO_AND_A_BIT}'\n"
    assert yaml.safe_load(dump_scenario_yaml({"cpu": json_float(TWO)})) == {"cpu": TWO}


REPO = Path(__file__).resolve().parents[2]


def _restart_example(tmp_path: Path, cpu: str, name: str, extra: dict[str, Any] | None = None) -> Path:
    """examples/pod-level/restart.yaml as JSON, web's cpu limit written as
    ``cpu`` (a JSON number's text, or a quoted string)."""
    doc = yaml.safe_load((REPO / "examples/pod-level/restart.yaml").read_text())
    web = doc["steps"][0]["addPod"]
    assert web["metadata"]["name"] == "web"
    web["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "@CPU@"
    doc["kubeletConfig"].update(extra or {})
    path = tmp_path / name
    path.write_text(json.dumps(doc).replace('"@CPU@"', cpu))
    return path


def _run(*args: str) -> Any:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_restart_reads_its_own_scenario_as_json(tmp_path: Path) -> None:
    number = _run("restart", str(_restart_example(tmp_path, TWO_AND_A_BIT, "n.json")), "-o", "json")
    text = _run("restart", str(_restart_example(tmp_path, f'"{TWO_AND_A_BIT}"', "s.json")), "-o", "json")
    # the same quantity (2001m) whether written as a number or a string
    assert number["pods"] == text["pods"]
    assert {p["pod"]: p["outcome"] for p in number["pods"]}["shop/web"] == "kept"


def test_a_json_as_scenario_writes_the_numbers_text(tmp_path: Path) -> None:
    path = _restart_example(tmp_path, TWO_AND_A_BIT, "n.json")
    out = tmp_path / "as.json"
    first = _run("simulate", str(path), "-o", "json", "--as-scenario", str(out))
    assert TWO_AND_A_BIT in out.read_text()
    again = _run("simulate", str(out), "-o", "json")
    def placed(run: Any) -> list[Any]:
        return [(s.get("pod"), s.get("admitted"), s.get("containers"), s.get("podAllocation")) for s in run["steps"]]

    assert placed(again) == placed(first)
    # (web: 2001m, no whole CPUs, in the shared pool)
    web = next(s for s in first["steps"] if s.get("pod") == "shop/web")
    assert web["admitted"] and all(c["isolation"] != "exclusive" for c in web["containers"]), web


def test_a_float_field_is_written_as_a_float(tmp_path: Path) -> None:
    path = _restart_example(tmp_path, TWO_AND_A_BIT, "n.json", {"memoryThrottlingFactor": "@MTF@"})
    path.write_text(path.read_text().replace('"@MTF@"', "8e-1"))
    out = tmp_path / "m.yaml"
    _run("simulate", str(path), "-o", "json", "--as-scenario", str(out))
    written = yaml.safe_load(out.read_text())
    assert written["kubeletConfig"]["memoryThrottlingFactor"] == 0.8
    _run("simulate", str(out), "-o", "json")
