"""The command line end to end: output document, checkpoints, demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli, main
from podnuma.cm.cpumanager.checkpoint import (
    cpu_checkpoint_object,
    decode_cpu_checkpoint,
    encode_cpu_checkpoint,
)
from podnuma.inputs.scenario import load_scenario
from podnuma.scenario.run import run_scenario

from ..scenario.helpers import base, pod, write

STEP_KEYS = [
    "index", "op", "pod", "podUID", "admitted", "reason", "message", "qosClass",
    "podAllocation", "containers", "defaultCpuSet",
    # extensions of the contract (added keys, never changed ones)
    "providerHints", "mergedHints", "rejectedAt", "podResources",
]
CONTAINER_KEYS = [
    "name", "type", "cpus", "mems", "isolation", "memory", "devices", "topologyHint",
    "cpuQuotaDisabled",
]


def test_json_and_yaml_without_detail_leave_out_hints_and_pod_resources(
    scenario_path: Path,
) -> None:
    """By default the document carries no per-step copy of every provider's
    hints nor of the PodResources list; the rest is the --detail document."""
    brief = json.loads(simulate(scenario_path, "-o", "json").stdout)
    full = json.loads(simulate(scenario_path, "-o", "json", "--detail").stdout)
    for step in brief["steps"]:
        assert list(step) == [k for k in STEP_KEYS if k not in ("providerHints", "podResources")]
    for b, f in zip(brief["steps"], full["steps"], strict=True):
        assert "providerHints" in f and "podResources" in f
        f.pop("providerHints")
        f.pop("podResources")
        assert b == f
    yaml_brief = yaml.safe_load(simulate(scenario_path, "-o", "yaml").stdout)
    assert yaml_brief == brief


def test_streamed_document_is_the_whole_document(scenario_path: Path) -> None:
    """simulate writes json and yaml step by step; the text is exactly what
    dumping the whole document gives."""
    from podnuma.render.serialize import dump_json, dump_yaml
    from podnuma.scenario.document import build_document

    result = run_scenario(load_scenario(str(scenario_path)))
    for detail in (False, True):
        extra = ("--detail",) if detail else ()
        doc = build_document(result, detail=detail)
        assert simulate(scenario_path, "-o", "json", *extra).stdout == dump_json(doc)
        assert simulate(scenario_path, "-o", "yaml", *extra).stdout == dump_yaml(doc)


def simulate(path: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["simulate", str(path), *args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_json_document_shape(scenario_path: Path) -> None:
    doc = json.loads(simulate(scenario_path, "-o", "json", "--detail").stdout)
    assert list(doc) == ["node", "steps", "checkpoints"]
    assert doc["node"] == {
        "name": "test-node", "cpus": "0-15", "numaNodes": [0, 1], "reservedCpus": "0",
    }
    a, b = doc["steps"]
    for step in (a, b):
        assert list(step) == STEP_KEYS
        for c in step["containers"]:
            assert list(c) == CONTAINER_KEYS
            assert list(c["topologyHint"]) == ["numaNodes", "preferred"]
    assert (a["index"], a["op"], a["pod"], a["podUID"]) == (0, "addPod", "default/a", "uid-a")
    assert (a["admitted"], a["reason"], a["message"], a["qosClass"]) == (True, None, None, "Guaranteed")
    assert a["podAllocation"] is None
    (app,) = a["containers"]
    assert (app["name"], app["type"], app["isolation"]) == ("app", "app", "container")
    # two exclusive CPUs: a whole core, never the reserved CPU 0
    assert app["cpus"] in ("1,9", "8-9") or len(app["cpus"].split(",")) == 2
    assert app["mems"] == [0, 1]  # memory manager None: every NUMA node
    assert app["memory"] == [] and app["devices"] == {}
    assert app["topologyHint"] == {"numaNodes": None, "preferred": False}  # policy none
    assert a["defaultCpuSet"] not in ("", "0-15")
    assert b["qosClass"] == "Burstable" and b["admitted"] is True
    (bapp,) = b["containers"]
    assert bapp["isolation"] == "host" and bapp["cpus"] == b["defaultCpuSet"] == a["defaultCpuSet"]
    assert list(doc["checkpoints"]) == ["cpuManager", "memoryManager"]
    cpu = doc["checkpoints"]["cpuManager"]
    assert cpu["policyName"] == "static" and cpu["defaultCpuSet"] == a["defaultCpuSet"]
    assert "checksum" in cpu


def test_yaml_is_the_same_document(scenario_path: Path) -> None:
    as_json = json.loads(simulate(scenario_path, "-o", "json").stdout)
    as_yaml = yaml.safe_load(simulate(scenario_path, "--output", "yaml").stdout)
    assert as_yaml == as_json


def test_removal_steps_keep_the_keys(tmp_path: Path) -> None:
    doc = base()
    two = pod("two", "2", uid="uid-two")
    two["spec"]["containers"].append({**two["spec"]["containers"][0], "name": "side"})
    doc["steps"] += [
        {"addPod": two},
        {"removeContainer": {"pod": "default/two", "container": "side"}},
        {"removePod": "uid-two"},
    ]
    out = json.loads(simulate(write(tmp_path / "s.yaml", doc), "-o", "json", "--detail").stdout)
    add, rc, rp = out["steps"][2:]
    assert add["admitted"] is True and [c["name"] for c in add["containers"]] == ["app", "side"]
    assert list(rc) == STEP_KEYS[:4] + ["container"] + STEP_KEYS[4:]
    assert (rc["op"], rc["container"], rc["admitted"], rc["reason"], rc["message"]) == (
        "removeContainer", "side", None, None, None,
    )
    assert [c["name"] for c in rc["containers"]] == ["app"]
    assert list(rp) == STEP_KEYS
    assert (rp["op"], rp["pod"], rp["podUID"], rp["admitted"], rp["containers"]) == (
        "removePod", "default/two", "uid-two", None, [],
    )
    # the exclusive CPUs of "two" went back to the shared pool
    assert rp["defaultCpuSet"] == out["steps"][1]["defaultCpuSet"]


def test_checkpoint_dir(tmp_path: Path, scenario_path: Path) -> None:
    out_dir = tmp_path / "deep" / "ckpt"
    stdout = simulate(scenario_path, "-o", "json", "--checkpoint-dir", str(out_dir)).stdout
    blob = (out_dir / "cpu_manager_state").read_bytes()
    data = decode_cpu_checkpoint(blob)
    assert blob == encode_cpu_checkpoint(data)
    assert json.loads(stdout)["checkpoints"]["cpuManager"] == cpu_checkpoint_object(data)
    expected = run_scenario(load_scenario(scenario_path)).checkpoint_files
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(expected)
    for name, content in expected.items():
        assert (out_dir / name).read_bytes() == content
    # no temporary files left behind
    assert all(not p.name.startswith(".") for p in out_dir.iterdir())


def test_restart_from_written_checkpoint(tmp_path: Path, scenario_path: Path) -> None:
    simulate(scenario_path, "-o", "json", "--checkpoint-dir", str(tmp_path / "c"))
    doc = base()
    doc["state"] = {"cpuManagerFile": "c/cpu_manager_state"}
    doc["steps"] = [{"removePod": "uid-a"}]
    out = json.loads(simulate(write(tmp_path / "restart.yaml", doc), "-o", "json").stdout)
    (step,) = out["steps"]
    assert step["op"] == "removePod" and step["podUID"] == "uid-a"
    assert step["defaultCpuSet"] == "0-15"


def test_table_output(scenario_path: Path) -> None:
    out = simulate(scenario_path).stdout
    assert "\x1b[" not in out  # plain text when not a terminal
    assert "test-node" in out and "default/a" in out and "default/b" in out
    assert "Guaranteed" in out and "Burstable" in out and "admitted" in out
    assert max(len(line) for line in out.splitlines()) <= 120


def test_table_shows_rejections(tmp_path: Path) -> None:
    doc = base()
    doc["steps"].append({"addPod": pod("huge", "64", uid="uid-huge")})
    out = simulate(write(tmp_path / "s.yaml", doc)).stdout
    assert "default/huge" in out and "rejected" in out
    res = json.loads(simulate(tmp_path / "s.yaml", "-o", "json").stdout)["steps"][-1]
    assert res["admitted"] is False and res["reason"] in out and res["message"]


@pytest.mark.parametrize("fmt", ["table", "json", "yaml"])
def test_demo(fmt: str) -> None:
    result = CliRunner().invoke(cli, ["demo", "-o", fmt])
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.stdout


def test_demo_content() -> None:
    out = json.loads(CliRunner().invoke(cli, ["demo", "-o", "json"]).stdout)
    assert out["node"]["cpus"] == "0-31" and out["node"]["numaNodes"] == [0, 1]
    steps = out["steps"]
    ops = [s["op"] for s in steps]
    assert "removePod" in ops
    adds = [s for s in steps if s["op"] == "addPod"]
    assert any(s["admitted"] is False for s in adds)
    isolations = {c["isolation"] for s in adds for c in s["containers"]}
    assert {"container", "host"} <= isolations
    types = {c["type"] for s in adds for c in s["containers"]}
    assert types == {"init", "sidecar", "app"}
    assert {s["qosClass"] for s in adds} >= {"Guaranteed", "Burstable"}
    by_pod = {s["pod"]: s for s in adds}
    # the rejected pod: more CPUs than one NUMA node has, single-numa-node policy
    render = by_pod["jobs/render"]
    assert (render["admitted"], render["reason"]) == (False, "TopologyAffinityError")
    # a fractional Guaranteed pod runs on the shared pool
    assert by_pod["monitoring/metrics"]["containers"][0]["isolation"] == "host"
    # the init container's exclusive CPUs are handed on to the later containers
    db = {c["name"]: c for c in by_pod["shop/db"]["containers"]}
    init_cpus = set(_cpu_list(db["migrate"]["cpus"]))
    assert set(_cpu_list(db["postgres"]["cpus"])) <= init_cpus
    assert db["log-shipper"]["type"] == "sidecar"
    assert not set(_cpu_list(db["log-shipper"]["cpus"])) & set(_cpu_list(db["postgres"]["cpus"]))
    # reserved CPUs are never handed out exclusively
    for s in adds:
        for c in s["containers"]:
            if c["isolation"] == "container":
                assert not {0, 16} & set(_cpu_list(c["cpus"]))


def _cpu_list(text: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and "podnuma" in result.stdout


def test_unexpected_errors_exit_1(monkeypatch: pytest.MonkeyPatch, scenario_path: Path) -> None:
    import podnuma.service.scenario as service

    def boom(_s: object) -> None:
        raise RuntimeError("kaboom")

    # (the table of a run is written as its steps are played where it has no
    # colours, as here; else of the whole run)
    monkeypatch.setattr(service, "run_scenario", boom)
    monkeypatch.setattr(service, "stream", lambda *_a, **_k: boom(None))
    monkeypatch.delenv("PODNUMA_DEBUG", raising=False)
    result = CliRunner().invoke(cli, ["simulate", str(scenario_path)])
    assert result.exit_code == 1
    assert "internal error: RuntimeError: kaboom" in result.stderr
    assert "Traceback" not in result.output


def test_main_returns_exit_codes(scenario_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(scenario_path), "-o", "json"]) == 0
    assert main(["simulate", "/nonexistent/x.yaml"]) == 2
    assert "error: /nonexistent/x.yaml" in capsys.readouterr().err


# ------------------------------------------------------- real processes

def _podnuma() -> list[str]:
    exe = Path(sys.executable).parent / "podnuma"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "podnuma.cli"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PODNUMA_DEBUG"}
    return subprocess.run(
        [*_podnuma(), *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_process_demo() -> None:
    proc = _run("demo")
    assert proc.returncode == 0, proc.stderr
    assert "demo-node" in proc.stdout and "\x1b[" not in proc.stdout


def test_process_simulate_json(scenario_path: Path) -> None:
    proc = _run("simulate", str(scenario_path), "--output", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["node"]["name"] == "test-node"


def test_process_bad_input(tmp_path: Path) -> None:
    doc = base()
    doc["steps"][0]["addPod"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "lots"
    proc = _run("simulate", str(write(tmp_path / "bad.yaml", doc)))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: {tmp_path / 'bad.yaml'}: steps[0].addPod.spec.containers[0].resources.limits[cpu]: ")
    assert "Traceback" not in proc.stderr


def test_process_version() -> None:
    proc = _run("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("podnuma")
