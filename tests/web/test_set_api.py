"""The web door's ``--set``: the same overrides through the same service
functions as the CLI, on the scenario endpoints, compare/advise and the
fleet dump; and the gates what-if of a fleet dump."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.web.test_api import EXAMPLES, call, cli, error_of, ok_json

STATIC = EXAMPLES / "static-dual-socket.yaml"
SET = "cpuManagerPolicyOptions.full-pcpus-only=false"


def _q(*sets: str, **params: str) -> str:
    from urllib.parse import urlencode

    return "?" + urlencode([*params.items(), *(("set", s) for s in sets)])


def test_simulate_and_explain_take_set_as_the_cli(server: str) -> None:
    want = json.loads(cli("simulate", STATIC.name, "-o", "json", "--set", SET, cwd=STATIC.parent).stdout)
    got = ok_json(server + "/api/simulate" + _q(SET, name=STATIC.name), STATIC.read_bytes())
    assert got == want
    assert got["steps"][1]["admitted"] is True and got["kubeletConfig"]["set"] == [SET]
    want = json.loads(cli("explain", STATIC.name, "-o", "json", "--no-search", "--set", SET,
                          cwd=STATIC.parent).stdout)
    got = ok_json(server + "/api/explain" + _q(SET, name=STATIC.name, search="false"), STATIC.read_bytes())
    assert got == want


def test_topology_takes_set(server: str) -> None:
    plain = ok_json(server + "/api/topology" + _q(step="1", format="json"), STATIC.read_bytes())
    changed = ok_json(server + "/api/topology" + _q(SET, step="1", format="json"), STATIC.read_bytes())
    assert plain["cpuOwner"] != changed["cpuOwner"]


def test_a_bad_set_is_a_400_naming_set(server: str) -> None:
    status, message = error_of(server + "/api/simulate" + _q("maxPods=abc"), STATIC.read_bytes())
    assert (status, message) == (400, "--set: maxPods: must be an integer, got a string")


def test_compare_and_advise_take_set(server: str) -> None:
    pod = (EXAMPLES / "whatif" / "trainer-pod.yaml").read_text()
    body = json.dumps({"pod": pod, "set": "# lines\ntopologyManagerScope=container\n"}).encode()
    got = ok_json(server + "/api/compare", body, "application/json")
    assert got["kubeletConfig"]["topologyManagerScope"] == "container"
    assert got["kubeletConfig"]["set"] == ["topologyManagerScope=container"]
    body = json.dumps({"scenario": STATIC.read_text(), "step": 1, "set": [SET]}).encode()
    got = ok_json(server + "/api/advise", body, "application/json")
    assert got["kubeletConfig"]["effective"]["cpuManagerPolicyOptions"] == {"full-pcpus-only": "false"}
    status, message = error_of(server + "/api/compare",
                               json.dumps({"pod": pod, "set": ["nope=1"]}).encode(), "application/json")
    assert status == 400 and message.startswith('--set: nope: unknown field "nope"')


def test_fleet_dump_with_the_gates_what_if_and_set(server: str) -> None:
    dump = EXAMPLES / "fleet"
    files = {p.relative_to(dump).as_posix(): p.read_text() for p in sorted(dump.rglob("*")) if p.is_file()}
    body = json.dumps({"files": files, "whatIfs": ["gates"],
                       "set": ["topologyManagerScope=pod"]}).encode()
    got = ok_json(server + "/api/fleet/analyze", body, "application/json")
    status, _, page = call(server + got["url"])
    assert status == 200
    text = page.decode()
    assert "with --set topologyManagerScope=pod" in text
    assert re.search(r"gates", text)
    status, message = error_of(server + "/api/fleet/analyze", json.dumps(
        {"files": files, "set": ["featureGates.Nope=true"]}).encode(), "application/json")
    assert status == 400 and message.startswith("--set: featureGates.Nope: unknown feature gate")


STOPPED = ("kubelet would not start: invalid configuration: maxPods (--max-pods) -5 must not be a "
           "negative number (--set: maxPods=-5; node ip-10-20-1-17.eu-west-1.compute.internal, "
           "and 3 more; no node replayed)")


def test_fleet_set_that_stops_every_kubelet_is_a_bad_request(server: str) -> None:
    """A --set no node's kubelet would start with: 400 with simulate's
    words (the command exits 2), not a report of nodes all in error."""
    dump = EXAMPLES / "fleet"
    files = {p.relative_to(dump).as_posix(): p.read_text() for p in sorted(dump.rglob("*")) if p.is_file()}
    status, message = error_of(server + "/api/fleet/analyze", json.dumps(
        {"files": files, "set": ["maxPods=-5"]}).encode(), "application/json")
    assert (status, message) == (400, STOPPED)


def test_fleet_cli_set_that_stops_every_kubelet_exits_2(tmp_path: Path) -> None:
    proc = cli("fleet", "analyze", str(EXAMPLES / "fleet"), "--set", "maxPods=-5", "-o", "json", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"error: {STOPPED}\n")
    # one node that starts: the report, the others' errors in it
    proc = cli("fleet", "analyze", str(EXAMPLES / "fleet"), "--set", "maxPods=50", "-o", "json", cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["set"] == ["maxPods=50"]
