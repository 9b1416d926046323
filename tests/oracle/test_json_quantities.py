"""JSON numbers in quantity fields against the kubelet's own JSON decoding.

``resource.Quantity.UnmarshalJSON`` (k8s.io/apimachinery
pkg/api/resource/quantity.go) gets the raw text of a JSON number and
parses it with ``ParseQuantity``: no float in between. The kubelet's file
source (``kubelet-oracle staticpod``: pkg/kubelet/config/common.go, whose
``utilyaml.ToJSON`` hands JSON text through as it is) is where the oracle
decodes a pod from JSON text exactly so; podnuma's agent reads the same
files through its JSON reader (:mod:`podnuma.golang.jsonnumbers`). Every
number below must give the same quantity (value and form, as the
kubelet's defaults leave it), or the same refusal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.test_staticpod_differential import _oracle, _podnuma

#: numbers a float would change (underflow, digits past a float's, an
#: exponent's form), numbers it would not, and integers past int64
NUMBERS = [
    "1e-400", "0.1e-9", "1.0000000000000000001", "1e3", "1E2", "2.50", "0.5", "5e-5", "1e-10",
    "0.000000000000000000000000000001", "123456789012345678901234567890", "9223372036854775808",
    "1" * 80, "1e400", "-0", "-1e-400", "3.0", "1.5e0", "12345678.123456789123456789", "1e18",
]
RESOURCES = ("cpu", "memory")


def _manifest(resource: str, number: str) -> str:
    # the number spliced in as text: json.dumps would write a Python float
    resources = json.dumps({"requests": {resource: "N"}, "limits": {resource: "N"}}).replace('"N"', number)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "c", "image": "nginx", "resources": "R"}]}}
    return json.dumps(pod).replace('"R"', resources)


CASES = [(resource, number) for resource in RESOURCES for number in NUMBERS]


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Any]:
    d = tmp_path_factory.mktemp("json-quantities")
    files = []
    for i, (resource, number) in enumerate(CASES):
        f = d / f"pod-{i}.json"
        f.write_text(_manifest(resource, number))
        json.loads(f.read_text())  # (valid JSON text)
        files.append(f)
    kubelet = _oracle(oracle_binary, files)
    return {case: (k, _podnuma(f)) for case, k, f in zip(CASES, kubelet, files, strict=True)}


def _strings(ours: dict[str, Any]) -> dict[str, dict[str, str]]:
    (c,) = ours["resources"]["containers"]
    return {"requests": {k: str(v) for k, v in c["requests"].items()},
            "limits": {k: str(v) for k, v in c["limits"].items()}}


@pytest.mark.parametrize(("resource", "number"), CASES)
def test_json_number_quantity_as_the_kubelet(
    decoded: dict[tuple[str, str], Any], resource: str, number: str
) -> None:
    kubelet, ours = decoded[(resource, number)]
    if "error" in kubelet:
        assert "error" in ours, f"the kubelet refuses {number} ({kubelet['error']}); podnuma admits it"
        return
    assert "error" not in ours, f"the kubelet accepts {number}; podnuma refuses: {ours['error']}"
    (theirs,) = kubelet["resources"]["containers"]
    assert _strings(ours) == {"requests": theirs["requests"], "limits": theirs["limits"]}


def test_the_float_would_differ(decoded: dict[tuple[str, str], Any]) -> None:
    """The table holds numbers whose float reads otherwise: 1e-400 is 0 as a
    float, the kubelet's smallest unit from its text."""
    kubelet, _ = decoded[("cpu", "1e-400")]
    (theirs,) = kubelet["resources"]["containers"]
    assert theirs["requests"]["cpu"] != "0"
    kubelet, _ = decoded[("memory", "1.0000000000000000001")]
    (theirs,) = kubelet["resources"]["containers"]
    assert theirs["requests"]["memory"] not in ("1", "0")


def test_enough_cases() -> None:
    assert len(CASES) == len(set(CASES)) >= 40


# -- JSON scenarios: the pods' numbers as written ---------------------------------------
#
# The oracle reads a JSON scenario's pods from the file's own bytes
# (oracle/internal/scenario/jsonpods.go), so a number in a quantity field
# reaches Quantity.UnmarshalJSON as written; podnuma's scenario reader keeps
# the text (load_scenario: the harness's quick JSON load goes through
# floats, so these cases are loaded the ordinary way). A request a float
# would round down to the node's capacity is over it by its text.

SCENARIO_NUMBERS = ["4.0000000000000000001", "3.9999999999999999999", "1e-400", "0.1e-9", "4", "4e0",
                    "1.0000000000000000001"]
NODE = {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 1,
                      "memoryPerNumaNode": "8Gi"}}
POLICIES = {"none": {}, "static": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}}
SHAPES = ("burstable", "guaranteed")
SCENARIO_CASES = [(number, policy, shape) for number in SCENARIO_NUMBERS for policy in POLICIES for shape in SHAPES]


def _scenario_text(number: str, policy: str, shape: str) -> tuple[dict[str, Any], str]:
    resources: dict[str, Any] = {"requests": {"cpu": "N", "memory": "64Mi"}}
    if shape == "guaranteed":
        resources["limits"] = {"cpu": "N", "memory": "64Mi"}
    pod = {"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "resources": resources}]}}
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "kubeletConfig": POLICIES[policy],
           "steps": [{"addPod": pod}]}
    return doc, json.dumps(doc).replace('"N"', number)


def test_json_scenario_numbers_as_the_oracle(oracle_binary: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from podnuma.inputs.scenario import load_scenario
    from tests.oracle import harness

    monkeypatch.setattr(harness, "_load_fast", load_scenario)
    docs, paths = [], []
    for i, case in enumerate(SCENARIO_CASES):
        doc, text = _scenario_text(*case)
        path = tmp_path / f"s{i}.json"
        path.write_text(text)
        docs.append(doc)
        paths.append(path)
    rejected = 0
    for (number, policy, shape), doc, path, theirs in zip(SCENARIO_CASES, docs, paths,
                                                    harness.run_oracle(oracle_binary, paths), strict=True):
        mine = harness.run_podnuma(path)
        diffs = harness.compare(mine, theirs, doc)
        assert not diffs, f"cpu {number} ({policy}, {shape}): podnuma differs from kubelet v1.37.2:\n  " + "\n  ".join(diffs)
        if mine.kind == "ok" and mine.doc is not None:
            rejected += sum(1 for s in mine.doc["steps"] if s.get("admitted") is False)
    assert rejected >= 2  # 4.0000000000000000001 CPUs is over the node's 4 (a float says 4)
