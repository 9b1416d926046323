"""Over real HTTP: the warnings and notes the commands print on standard
error are the web answers' ``warnings`` (a misspelt kubelet configuration
field must not silently become the default policy); a lone surrogate
written as an escape in any input answers 400 with the command's message,
never 500."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.web.test_api import EXAMPLES, ROOT, call, cli, q

VALUE = "not Unicode text: a lone surrogate (\\ud800, written as an escape) in the value"
TYPO = 'strict decoding error: unknown field "topologyManagerPolicyy"'
SYSCTLS = "allowedUnsafeSysctls: [\"kernel.msg*\"]\n"


def _stderr_lines(*args: str, cwd: Path) -> list[str]:
    proc = cli(*args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr.splitlines()


def _answer(url: str, body: bytes, ctype: str = "application/yaml") -> Any:
    status, _, data = call(url, body, ctype)
    assert status == 200, data
    return json.loads(data)


@pytest.fixture(scope="module")
def typo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("typo")
    scen = (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_text()
    scen = scen.replace("  topologyManagerPolicy:", f"  {SYSCTLS}  topologyManagerPolicyy:")
    (d / "s.yaml").write_text(scen)
    kc = (EXAMPLES / "whatif/kubelet-config.yaml").read_text()
    kc = kc.replace('"0,32"', '"0"').replace("topologyManagerPolicy:", SYSCTLS + "topologyManagerPolicyy:")
    (d / "kc.yaml").write_text(kc)
    pod = (EXAMPLES / "whatif/trainer-pod.yaml").read_text()
    (d / "pod.yaml").write_text(pod + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n")
    return d


def _check(got: dict[str, Any], want: list[str]) -> None:
    assert got["warnings"] == want
    assert any(TYPO in line and line.startswith("warning: ") for line in want)
    assert any(line.startswith("note: ") and "allowedUnsafeSysctls" in line for line in want)


@pytest.mark.parametrize(("path", "params", "args"), [
    ("simulate", {}, ["simulate", "-o", "json"]),
    ("explain", {"search": "false"}, ["explain", "--no-search", "-o", "json"]),
    ("topology", {"format": "json"}, ["topology", "-o", "json"]),
    ("restart", {}, ["restart", "-o", "json"]),
])
def test_scenario_answers_carry_the_cli_warnings(server: str, typo: Path, path: str,
                                                 params: dict[str, str], args: list[str]) -> None:
    want = _stderr_lines(*args, "s.yaml", cwd=typo)
    got = _answer(server + f"/api/{path}" + q(name="s.yaml", **params), (typo / "s.yaml").read_bytes())
    _check(got, want)


@pytest.mark.parametrize("command", ["compare", "advise"])
def test_whatif_answers_carry_the_cli_warnings(server: str, typo: Path, command: str) -> None:
    want = _stderr_lines(command, "pod.yaml", "--kubelet-config", "kc.yaml", "-o", "json", cwd=typo)
    body = json.dumps({"pod": (typo / "pod.yaml").read_text(), "podName": "pod.yaml",
                       "kubeletConfig": (typo / "kc.yaml").read_text(),
                       "kubeletConfigName": "kc.yaml"}).encode()
    got = _answer(server + f"/api/{command}", body, "application/json")
    _check(got, want)
    if command == "compare":  # (the object skipped, noted as the command notes it)
        assert any("ConfigMap" in line for line in got["warnings"])


def test_no_warnings_no_key(server: str) -> None:
    path = EXAMPLES / "pod-level/pod-scope-2-mixed.yaml"
    assert "warnings" not in _answer(server + "/api/simulate", path.read_bytes())


SCENARIO = (EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_text().replace(
    "name: kep-node", 'name: "\\ud800"')
LINE = next(i for i, line in enumerate(SCENARIO.splitlines(), 1) if "\\ud800" in line)


@pytest.mark.parametrize("path", ["simulate", "explain", "topology", "topology?format=json", "restart"])
def test_scenario_with_a_surrogate_is_a_bad_request(server: str, path: str) -> None:
    status, _, data = call(server + f"/api/{path}", SCENARIO.encode())
    assert status == 400, data
    assert json.loads(data)["error"] == f"scenario.yaml: node.name: {VALUE} (line {LINE}, column 9)"
    import yaml

    as_json = json.dumps(yaml.safe_load(SCENARIO)).encode()
    status, _, data = call(server + f"/api/{path}", as_json, "application/json")
    assert status == 400, data
    assert json.loads(data)["error"] == f"scenario.json: node.name: {VALUE}"


POD = (EXAMPLES / "whatif/trainer-pod.yaml").read_text()
NOTED = POD.replace("namespace: ml", 'namespace: ml\n  annotations: {note: "\\ud800"}')
NOTE_LINE = next(i for i, line in enumerate(NOTED.splitlines(), 1) if "\\ud800" in line)


@pytest.mark.parametrize(("extra", "want"), [
    ({"pod": NOTED}, f"pod.yaml: metadata.annotations.note: {VALUE} (line {NOTE_LINE}, column 23)"),
    ({"sidecars": ["\ud800"]}, f"request body: sidecars[0]: {VALUE}"),
    ({"set": ["cpuManagerPolicy=\ud800"]}, f"request body: set[0]: {VALUE}"),
    ({"podName": "\ud800.yaml"}, f"request body: podName: {VALUE}"),
    ({"kubeletConfig": 'cpuManagerPolicy: "\\ud800"\n'},
     f"kubelet-config.yaml: cpuManagerPolicy: {VALUE} (line 1, column 19)"),
])
def test_whatif_with_a_surrogate_is_a_bad_request(server: str, extra: dict[str, Any], want: str) -> None:
    for command in ("advise", "compare"):
        if command == "compare" and "sidecars" in extra:
            continue  # (advise's own field)
        body = json.dumps({"pod": POD, **extra}).encode()
        status, _, data = call(server + f"/api/{command}", body, "application/json")
        assert status == 400, (command, data)
        assert json.loads(data)["error"] == want, command


def test_fleet_group_name_with_a_surrogate_is_not_a_server_error(server: str) -> None:
    base = ROOT / "examples/fleet"
    files = {os.path.relpath(p, base): Path(p).read_text()
             for p in glob.glob(str(base / "**/*"), recursive=True) if os.path.isfile(p)}
    files["fleet.yaml"] = files["fleet.yaml"].replace("- name: general", '- name: "gen\\ud800"', 1)
    status, _, data = call(server + "/api/fleet/analyze", json.dumps({"files": files}).encode(),
                           "application/json")
    # the user's FleetConfig is read all or nothing, as on the command line:
    # its one line, a bad request (not a server error)
    assert status == 400, data
    assert json.loads(data)["error"] == ("fleet.yaml: nodeGroups[0].name: not Unicode text: a lone surrogate "
                                         "(\\ud800, written as an escape) in the value (line 7, column 9)")
