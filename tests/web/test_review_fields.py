"""Request fields, as a review found them wanting, over a real server
(uvicorn on a loopback port): a missing required field answers 422 named by
its field path (not a 400 blaming a scenario file); ``step`` in a query is
a whole number as the CLI's ``--step`` takes it; a dump's file name with a
backslash is refused, and an empty one is named by its key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.web.conftest import fleet_dumps_left
from tests.web.test_api import EXAMPLES, call
from tests.web.test_door import post_json, problems

SCENARIO = (EXAMPLES / "pod-level" / "pod-scope-2-mixed.yaml").read_text()

MISSING = {
    "compare-nothing": ("/api/compare", {},
                        ["pod: Field required (a Pod manifest; or scenario and step instead)"]),
    "advise-nothing": ("/api/advise", {"strategy": "max-freed"},
                       ["pod: Field required (a Pod manifest; or scenario and step instead)"]),
    "compare-scenario-without-step": ("/api/compare", {"scenario": SCENARIO},
                                      ["step: Field required with scenario (the addPod step to take "
                                       "the pod from)"]),
    "advise-scenario-without-step": ("/api/advise", {"scenario": SCENARIO, "scenarioName": "s.yaml"},
                                     ["step: Field required with scenario (the addPod step to take "
                                      "the pod from)"]),
    "fleet-no-files": ("/api/fleet/analyze", {"files": {}},
                       ["files: give at least one file (name -> text)"]),
    "fleet-files-missing": ("/api/fleet/analyze", {}, ["files: Field required"]),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(MISSING))
def test_a_missing_field_is_422_with_its_path(server: str, case: str) -> None:
    path, body, want = MISSING[case]
    assert problems(*post_json(server, path, body)) == want


def test_a_scenario_and_its_step_still_answer(server: str) -> None:
    status, data = post_json(server, "/api/advise", {"scenario": SCENARIO, "step": 0})
    assert status == 200, data[:300]


@pytest.mark.parametrize("value", ["1.0", "%201", "1%20", "+1", "1e0", "0x1", "one", "1_0", "%EF%BC%91"])
def test_step_in_a_query_is_a_whole_number(server: str, value: str) -> None:
    status, _, data = call(server + "/api/explain?step=" + value, SCENARIO.encode())
    lines = problems(status, data)
    assert len(lines) == 1 and lines[0].startswith("step: expected a whole number"), lines


@pytest.mark.parametrize("endpoint", ["/api/explain", "/api/topology"])
def test_step_as_digits_still_answers(server: str, endpoint: str) -> None:
    assert call(server + endpoint + "?step=0", SCENARIO.encode())[0] == 200
    # a step the scenario does not have: the CLI's message
    status, _, data = call(server + endpoint + "?step=-1", SCENARIO.encode())
    assert status == 400, data[:300]






DUMP_NAMES = {
    "backslash": ({"a\\b.json": "{}"}, "a\\b.json: a backslash in the name: separate directories with /"),
    "backslash-in-a-directory": ({"nodes.json": "{}", "configz\\n1.json": "{}"},
                                 "configz\\n1.json: a backslash in the name: separate directories with /"),
    "empty": ({"": "{}"}, 'files[""]: not a plain relative name of a .json, .yaml or .yml file'),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DUMP_NAMES))
def test_a_dump_name_is_refused_naming_its_key(server: str, own_tmp: Path, case: str) -> None:
    from podnuma.web.app import FLEET_EXTRA

    if not FLEET_EXTRA:
        pytest.skip("the fleet extra is not installed")
    files, want = DUMP_NAMES[case]
    status, _, data = call(server + "/api/fleet/analyze", json.dumps({"files": files}).encode(),
                           "application/json")
    assert status == 400, data[:300]
    assert json.loads(data) == {"error": want}
    assert fleet_dumps_left(own_tmp) == []
