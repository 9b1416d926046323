"""The scenario's pod memo (:class:`podnuma.inputs.scenario_pods.PodParses`)
checks a later pod's identity fields (name, uid, labels: outside its key)
exactly as ``parse_pod`` checks them: a JSON number past the float range
(read as its text, a ``str``) is a number there, refused as the pod alone
is refused, whether or not an identical pod came first."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.inputs.documents import load_json
from podnuma.inputs.scenario_pods import PodParses

GATES = FeatureGates.defaults()
MARK = "@@V@@"


def _pod(where: tuple[str, ...], value: str | None) -> dict[str, Any]:
    text = json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "a", "namespace": "shop", "uid": "u-1", "labels": {"app": "x"}},
                       "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}})
    doc: dict[str, Any] = load_json(text, name="pod.json")
    if value is not None:
        at: Any = doc
        for k in where[:-1]:
            at = at[k]
        at[where[-1]] = MARK
        doc = load_json(json.dumps(doc).replace(json.dumps(MARK), value), name="pod.json")
    return doc


PLACES = [(("metadata", "name"), "1e400"), (("metadata", "uid"), "1e400"),
          (("metadata", "labels", "app"), "1e400"), (("metadata", "labels"), "1e400"),
          (("metadata", "name"), "5"), (("metadata", "uid"), "true"), (("metadata", "labels", "app"), "[1]"),
          (("metadata", "name"), '"Not_A_Name"'), (("metadata", "labels"), "null"), (("metadata", "uid"), "null")]


def _outcome(f: Any) -> Any:
    try:
        pod = f()
    except InputError as e:
        return ("refused", e.message, e.path)
    return ("taken", pod.name, pod.uid, dict(pod.labels))


@pytest.mark.parametrize("plain", [False, True], ids=["marshal", "msgpack"])
@pytest.mark.parametrize("where,value", PLACES, ids=[f"{'.'.join(w)}={v}" for w, v in PLACES])
def test_a_later_pod_is_judged_as_alone(where: tuple[str, ...], value: str, plain: bool) -> None:
    doc = _pod(where, value)
    alone = _outcome(lambda: parse_pod(copy.deepcopy(doc), gates=GATES))
    memo = PodParses(GATES, plain=plain)
    memo.parse(_pod(where, None))  # an identical pod but for that field, first
    assert _outcome(lambda: memo.parse(doc)) == alone


def test_simulate_and_restart_refuse_a_name_past_the_float_range_after_its_twin(tmp_path: Path) -> None:
    pod: dict[str, Any] = {"metadata": {"name": "a", "namespace": "shop"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}}
    twin = json.loads(json.dumps(pod).replace('"a"', json.dumps(MARK)))
    scenario = {"apiVersion": "podnuma.io/v1", "kind": "Scenario",
                "node": {"name": "w", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                                    "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}},
                "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
                "steps": [{"addPod": pod}, {"addPod": twin}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(scenario).replace(json.dumps(MARK), "1e400"))
    for command in ("simulate", "restart"):
        r = CliRunner().invoke(cli, [command, str(path)])
        assert r.exit_code != 0, (command, r.output)
        assert "steps[1].addPod.metadata.name: must be a string, got a number" in r.stderr, (command, r.stderr)
        assert "shop/1e400" not in r.output
