"""``--kubelet-config SCENARIO`` whose configuration is in the file its
``kubeletConfigFile`` names: every command that takes the option reads
that file (resolved against the scenario's directory, the working
directory for standard input, as ``simulate`` resolves it), and its errors
name that file and field, not the scenario; ``restart --state-dir`` names
``--node``'s file (standard input included) and ``--set`` for their own
errors, not the state directory."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli.app import cli

NODE = {"synthetic": {"sockets": 2, "numaNodesPerSocket": 1, "coresPerNumaNode": 8, "threadsPerCore": 1,
                      "memoryPerNumaNode": "16Gi"}}
CONFIG = {"featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "topologyManagerPolicy": "best-effort",
          "topologyManagerScope": "pod"}
#: differs from CONFIG and from the configuration a state directory implies
FULL_PCPUS = {**CONFIG, "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "r"},
       "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}}


def _dump(path: Path, doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    """A directory with a node, a pod, a state directory and configurations."""
    _dump(tmp_path / "node.yaml", {"node": NODE})
    _dump(tmp_path / "pod.yaml", POD)
    _dump(tmp_path / "full.yaml", {"apiVersion": "kubelet.config.k8s.io/v1beta1",
                                   "kind": "KubeletConfiguration", **FULL_PCPUS})
    _dump(tmp_path / "bad.yaml", {**CONFIG, "cpuManagerPolicy": "statik"})
    sub = tmp_path / "sub"
    sub.mkdir()
    # the file a scenario names is next to the scenario, not the working directory
    _dump(sub / "full.yaml", FULL_PCPUS)
    _dump(sub / "s-full.yaml", {"kind": "Scenario", "kubeletConfigFile": "full.yaml"})
    _dump(tmp_path / "s-bad.yaml", {"kind": "Scenario", "kubeletConfigFile": "bad.yaml"})
    _dump(tmp_path / "s-missing.yaml", {"kind": "Scenario", "kubeletConfigFile": "nothere.yaml"})
    _dump(tmp_path / "s-both.yaml", {"kind": "Scenario", "kubeletConfigFile": "full.yaml", "kubeletConfig": {}})
    scenario = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "kubeletConfig": CONFIG,
                "steps": [{"addPod": POD}]}
    _dump(tmp_path / "run.yaml", scenario)
    res = CliRunner().invoke(cli, ["simulate", str(tmp_path / "run.yaml"), "-o", "json",
                                   "--checkpoint-dir", str(tmp_path / "sd")])
    assert res.exit_code == 0, res.output
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def _run(args: list[str], stdin: str | None = None) -> Any:
    return CliRunner().invoke(cli, args, input=stdin)


def _error(res: Any) -> str:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    return str(lines[0])


def test_state_inspect_as_scenario_carries_the_named_file(here: Path) -> None:
    res = _run(["state", "inspect", "sd", "--node", "node.yaml", "--kubelet-config", "sub/s-full.yaml",
                "--as-scenario", "-o", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["kubeletConfig"]["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}


def test_restart_state_dir_runs_with_the_named_file(here: Path) -> None:
    configs = []
    for given in ("sub/s-full.yaml", "full.yaml"):  # the scenario naming the file; the file itself
        res = _run(["restart", "--state-dir", "sd", "--node", "node.yaml", "--kubelet-config", given,
                    "--as-scenario", "out.json", "-o", "json"])
        assert res.exit_code == 0, res.output
        config = json.loads((here / "out.json").read_text())["kubeletConfig"]
        configs.append({k: v for k, v in config.items() if k not in ("apiVersion", "kind")})
    assert configs[0]["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}
    assert configs[0] == configs[1]


@pytest.mark.parametrize("command", [
    ["compare", "pod.yaml"],
    ["advise", "pod.yaml"],
    ["restart", "--state-dir", "sd", "--node", "node.yaml"],
    ["state", "inspect", "sd", "--node", "node.yaml", "--as-scenario"],
])
def test_errors_name_the_file_the_scenario_names(here: Path, command: list[str]) -> None:
    line = _error(_run([*command, "--kubelet-config", "s-bad.yaml"]))
    assert line == 'error: kubelet would not start: unknown policy: "statik" (bad.yaml: cpuManagerPolicy)'
    missing = _error(_run([*command, "--kubelet-config", "s-missing.yaml"]))
    assert missing.startswith("error: s-missing.yaml: kubeletConfigFile: kubelet configuration file ")
    assert "nothere.yaml' not found (line 2" in missing
    both = _error(_run([*command, "--kubelet-config", "s-both.yaml"]))
    assert both.startswith("error: s-both.yaml: kubeletConfigFile: give the kubelet configuration inline")


def test_a_scenario_on_standard_input_names_files_from_the_working_directory(here: Path) -> None:
    res = _run(["compare", "pod.yaml", "--kubelet-config", "-"],
               stdin="kind: Scenario\nkubeletConfigFile: sub/full.yaml\n")
    assert res.exit_code == 0, res.output
    assert "kubelet config: " in res.stdout
    words = " ".join(res.stdout.split())  # (the header wraps at the console's width)
    assert f"kubelet config: {here / 'sub' / 'full.yaml'} (the kubeletConfigFile of <stdin>) " in words
    missing = _run(["compare", "pod.yaml", "--kubelet-config", "-"],
                   stdin="kind: Scenario\nkubeletConfigFile: full-elsewhere.yaml\n")
    assert "full-elsewhere.yaml' not found" in _error(missing)


def test_an_inline_scenario_configuration_is_named_at_its_field(here: Path) -> None:
    _dump(here / "s-inline.yaml", {"kind": "Scenario", "kubeletConfig": {**CONFIG, "cpuManagerPolicy": "statik"}})
    line = _error(_run(["compare", "pod.yaml", "--kubelet-config", "s-inline.yaml"]))
    assert line.endswith("(s-inline.yaml: kubeletConfig.cpuManagerPolicy)"), line


def test_restart_state_dir_names_the_node_and_set_not_the_state_directory(here: Path) -> None:
    bad_node = "synthetic: {sockets: x, numaNodesPerSocket: 1, coresPerNumaNode: 1, threadsPerCore: 1, " \
               "memoryPerNumaNode: 16Gi}\n"
    line = _error(_run(["restart", "--state-dir", "sd", "--node", "-"], stdin=bad_node))
    assert line == "error: <stdin>: synthetic.sockets: must be an integer, got a string (line 1, column 22)"
    (here / "bad-node.yaml").write_text(bad_node)
    line = _error(_run(["restart", "--state-dir", "sd", "--node", "bad-node.yaml"]))
    assert line.startswith("error: bad-node.yaml: synthetic.sockets: must be an integer"), line
    set_line = _error(_run(["restart", "--state-dir", "sd", "--node", "node.yaml", "--kubelet-config",
                            "full.yaml", "--set", "reservedSystemCPUs=99"]))
    assert set_line.endswith("(--set: reservedSystemCPUs)"), set_line
    # what is the state's own (its CPUs, not the machine's) stays named by
    # the state directory
    tiny = copy.deepcopy(NODE)
    tiny["synthetic"].update(sockets=1, coresPerNumaNode=1)
    _dump(here / "tiny.yaml", {"node": tiny})
    state_line = _error(_run(["restart", "--state-dir", "sd", "--node", "tiny.yaml", "--set", "reservedSystemCPUs=0"]))
    assert state_line.startswith("error: kubelet would not start: ") and "(sd (restart): " in state_line
