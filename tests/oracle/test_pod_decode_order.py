"""Which refusal of a pod with several wrong fields is the answer, against
the kubelet oracle: Go's decoder goes through the document in order, saves
the first plain type mismatch and goes on, and stops at the first
``UnmarshalJSON`` that fails (``metav1.Time``, ``IntOrString``,
``resource.Quantity``, wherever in the pod), whose error wins over one
saved before it.

* ``kubelet-oracle decode`` (the API server's decoding of a JSON body, as
  written): the document's order; podnuma's ``parse_pod`` by default.
* A scenario's pods (JSON or YAML): the oracle decodes them from a map
  written again by ``json.Marshal``, keys sorted, as ``kubectl`` sends a
  manifest (``sigs.k8s.io/yaml`` sorts a YAML file's keys too); podnuma's
  scenario reading (``parse_pod(..., sort_keys=True)``) the same.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.inputs.documents import load_json

TIME = '"x"'
GO_TIME = 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'
GO_QTY = "quantities must match the regular expression"
GO_PORT = "HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32"
GO_GENERATION = "cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64"
CTR = '{"name":"c","image":"x","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}'
PROBE = '"livenessProbe":{"httpGet":{"port":%s}}'
META_TIME = '"metadata":{"name":"w","namespace":"s","creationTimestamp":"x"}'
META = '"metadata":{"name":"w","namespace":"s"}'

#: name -> (the pod's JSON text, the path podnuma names in the document's
#: order, the phrase Go's message holds in it); in the scenario's (keys
#: sorted) order likewise
CASES: dict[str, tuple[str, tuple[str, str], tuple[str, str]]] = {}


def _case(name: str, text: str, in_order: tuple[str, str], in_sorted: tuple[str, str]) -> None:
    CASES[name] = ("{" + text + "}", in_order, in_sorted)


for _port in ("1.5", "true", "{}", "99999999999"):
    _case(f"port {_port} before a bad time", '"spec":{"containers":[' + CTR[:-1] + "," + PROBE % _port + "}]}," + META_TIME,
          ("spec.containers[0].livenessProbe.httpGet.port", GO_PORT),
          ("metadata.creationTimestamp", GO_TIME))
    _case(f"a bad time before port {_port}", META_TIME + ',"spec":{"containers":[' + CTR[:-1] + "," + PROBE % _port + "}]}",
          ("metadata.creationTimestamp", GO_TIME), ("metadata.creationTimestamp", GO_TIME))
_case("a bad time before a bad overhead", META_TIME + ',"spec":{"containers":[' + CTR + '],"overhead":{"cpu":"zz"}}',
      ("metadata.creationTimestamp", GO_TIME), ("metadata.creationTimestamp", GO_TIME))
_case("a bad overhead before a bad time", '"spec":{"containers":[' + CTR + '],"overhead":{"cpu":"zz"}},' + META_TIME,
      ("spec.overhead[cpu]", GO_QTY), ("metadata.creationTimestamp", GO_TIME))
_case("a bad allocatedResources before a bad startTime",
      META + ',"spec":{"containers":[' + CTR + ']},"status":{"containerStatuses":[{"name":"c","allocatedResources":'
      '{"cpu":"zz"}}],"startTime":"x"}',
      ("status.containerStatuses[0].allocatedResources[cpu]", GO_QTY),
      ("status.containerStatuses[0].allocatedResources[cpu]", GO_QTY))
_case("a bad startTime before a bad allocatedResources",
      META + ',"spec":{"containers":[' + CTR + ']},"status":{"startTime":"x","containerStatuses":[{"name":"c",'
      '"allocatedResources":{"cpu":"zz"}}]}',
      ("status.startTime", GO_TIME), ("status.containerStatuses[0].allocatedResources[cpu]", GO_QTY))
_case("a wrong type before a bad port",
      '"metadata":{"name":"w","namespace":"s","generation":"one"},"spec":{"containers":[' + CTR[:-1] + ","
      + PROBE % "1.5" + "}]}",
      ("spec.containers[0].livenessProbe.httpGet.port", GO_PORT),
      ("spec.containers[0].livenessProbe.httpGet.port", GO_PORT))
_case("a wrong type before a bad limit",
      '"metadata":{"name":"w","namespace":"s","generation":"one"},"spec":{"containers":[{"name":"c","image":"x",'
      '"resources":{"limits":{"cpu":"zz"}}}]}',
      ("spec.containers[0].resources.limits[cpu]", GO_QTY), ("spec.containers[0].resources.limits[cpu]", GO_QTY))
_case("a limit of another type before a bad time",
      '"spec":{"containers":[{"name":"c","image":"x","resources":{"limits":{"cpu":true}}}]},' + META_TIME,
      ("spec.containers[0].resources.limits[cpu]", GO_QTY), ("metadata.creationTimestamp", GO_TIME))
_case("a bad emptyDir sizeLimit after a wrong type",
      '"metadata":{"name":"w","namespace":"s","generation":"one"},"spec":{"containers":[' + CTR + '],'
      '"volumes":[{"name":"v","emptyDir":{"sizeLimit":"zz"}}]}',
      ("spec.volumes[0].emptyDir.sizeLimit", GO_QTY), ("spec.volumes[0].emptyDir.sizeLimit", GO_QTY))
_case("two wrong types: the first saved",
      '"spec":{"containers":[' + CTR + '],"hostNetwork":"yes"},"metadata":{"name":"w","namespace":"s","generation":"one"}',
      ("spec.hostNetwork", "cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"),
      ("metadata.generation", GO_GENERATION))

NAMES = sorted(CASES)


def _ours(text: str, sort_keys: bool) -> InputError:
    with pytest.raises(InputError) as e:
        parse_pod(load_json(text, name="pod.json"), gates=FeatureGates.defaults(), sort_keys=sort_keys)
    return e.value


def test_the_api_servers_decoding_in_the_documents_order(oracle_binary: str, tmp_path: Path) -> None:
    path = tmp_path / "pods.json"
    path.write_text("[" + ",\n".join(CASES[n][0] for n in NAMES) + "]")
    out = subprocess.run([oracle_binary, "decode", str(path)], capture_output=True, text=True, check=True).stdout
    got = [json.loads(line) for line in out.splitlines()]
    wrong = []
    for name, go in zip(NAMES, got, strict=True):
        text, (where, phrase), _ = CASES[name]
        ours = _ours(text, sort_keys=False)
        if go["accepted"] or phrase not in go["message"] or ours.path != where:
            wrong.append(f"{name}: kubelet {go}, podnuma {ours.path}: {ours.message}")
    assert wrong == []


def _scenario(pod_text: str) -> str:
    node = {"name": "w", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                       "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}}
    head = json.dumps({"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": node,
                       "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}, "steps": "@@"})
    return head.replace('"@@"', '[{"addPod": ' + pod_text + "}]")


@pytest.mark.parametrize("ext", ["json", "yaml"])
@pytest.mark.parametrize("name", NAMES)
def test_a_scenarios_pods_in_the_keys_order(oracle_binary: str, tmp_path: Path, name: str, ext: str) -> None:
    text, _, (where, phrase) = CASES[name]
    path = tmp_path / f"s.{ext}"
    path.write_text(_scenario(text))  # (JSON text is YAML too)
    go = subprocess.run([oracle_binary, "simulate", str(path)], capture_output=True, text=True)
    assert go.returncode != 0 and phrase in go.stderr, go.stderr
    assert _ours(text, sort_keys=True).path == where
    r = CliRunner().invoke(cli, ["simulate", str(path)])
    assert r.exit_code != 0
    assert f"steps[0].addPod.{where}: " in r.stderr, r.stderr
