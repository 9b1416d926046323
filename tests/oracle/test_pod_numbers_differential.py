"""Numbers in a pod's integer fields, and which error of a pod comes
first, against the kubelet oracle, on the three ways a pod reaches Go's
decoder:

* a scenario's ``addPod`` (``kubelet-oracle simulate``: the pod written
  again from a map, keys sorted, decoded by ``encoding/json`` with
  ``DisallowUnknownFields``; a JSON file's numbers as their text, a YAML
  file's through ``sigs.k8s.io/yaml``, a float64 each): podnuma's
  ``simulate``;
* ``kubectl`` (``kubelet-oracle yaml`` then ``decode``: ``YAMLToJSON`` of
  the manifest, JSON or YAML, then the API server's strict decoding):
  podnuma's ``compare`` and ``advise`` readers (``load_pod_sources``,
  ``parse_pod(..., sort_keys=True)``);
* the API server's decoding of a JSON body as written (``kubelet-oracle
  decode``): ``parse_pod(..., numbers="text")``.

A number Go refuses in an integer field is refused in Go's words at the
field's path; an unknown field is the answer only where Go's decoder makes
it one (the API server: once nothing else is wrong; a scenario: where it
is met, keys sorted, a failing time still winning).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.inputs.documents import load_json
from podnuma.inputs.pods import load_pod_sources

GATES = FeatureGates.defaults()
NUMBERS = ["80.0", "1e2", "1E2", "8080.00", "1.5", "1e400", "80", "2147483648", "2147483648.0", "1e21", "0.5e1"]
#: where the number goes: (the pod's JSON with "@N@" for it, the field's path)
PLACES = {
    "containerPort": ('{"metadata":{"name":"w"},"spec":{"containers":[{"name":"c","image":"x",'
                      '"ports":[{"containerPort":@N@}]}]}}', "spec.containers[0].ports[0].containerPort"),
    "probe-port": ('{"metadata":{"name":"w"},"spec":{"containers":[{"name":"c","image":"x",'
                   '"livenessProbe":{"httpGet":{"port":@N@}}}]}}', "spec.containers[0].livenessProbe.httpGet.port"),
    "priority": ('{"metadata":{"name":"w"},"spec":{"priority":@N@,"containers":[{"name":"c","image":"x"}]}}',
                 "spec.priority"),
    "generation": ('{"metadata":{"name":"w","generation":@N@},"spec":{"containers":[{"name":"c","image":"x"}]}}',
                   "metadata.generation"),
}
#: (and numbers whose value a port's validation would refuse: where no port is)
CASES = [(place, n) for place in sorted(PLACES) for n in NUMBERS] + [
    ("priority", "-0.0"), ("priority", "-0"), ("generation", "-0.0"), ("priority", "65536.0"), ("priority", "-1e2")]
NODE = {"name": "w", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                   "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}}


def _scenario(pod_text: str) -> str:
    head = json.dumps({"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE, "steps": "@@"})
    return head.replace('"@@"', '[{"addPod": ' + pod_text + "}]")


def _go_phrase(stderr: str) -> str:
    """The oracle's reason for refusing a scenario's pod."""
    return stderr.strip().split(": invalid pod: ", 1)[-1]


def _simulate(oracle: str, path: Path) -> tuple[bool, str, bool, str]:
    go = subprocess.run([oracle, "simulate", str(path), "-o", "json"], capture_output=True, text=True)
    r = CliRunner().invoke(cli, ["simulate", str(path), "-o", "json"])
    return go.returncode == 0, _go_phrase(go.stderr), r.exit_code == 0, r.stderr


@pytest.mark.parametrize("ext", ["json", "yaml"])
def test_a_scenarios_numbers(oracle_binary: str, tmp_path: Path, ext: str) -> None:
    wrong = []
    refused = 0
    for place, n in CASES:
        text, where = PLACES[place]
        path = tmp_path / f"{place}.{ext}"
        path.write_text(_scenario(text.replace("@N@", n)))  # (JSON text is YAML too)
        go_ok, go_why, ours_ok, ours = _simulate(oracle_binary, path)
        refused += not go_ok
        if go_ok != ours_ok:
            wrong.append(f"{place}={n}: kubelet {go_ok} {go_why!r}, podnuma {ours_ok} {ours!r}")
        elif not go_ok:
            if f"steps[0].addPod.{where}: " not in ours:
                wrong.append(f"{place}={n}: podnuma names another field: {ours!r}")
            elif "cannot unmarshal number" in go_why and go_why not in ours:
                wrong.append(f"{place}={n}: kubelet {go_why!r}, podnuma {ours!r}")
    assert wrong == []
    assert 0 < refused < len(CASES)


def test_a_json_scenarios_whole_float_is_refused_in_gos_words(oracle_binary: str, tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(_scenario(PLACES["containerPort"][0].replace("@N@", "80.0")))
    go_ok, go_why, ours_ok, ours = _simulate(oracle_binary, path)
    want = ("json: cannot unmarshal number 80.0 into Go struct field "
            "ContainerPort.spec.containers.ports.containerPort of type int32")
    assert not go_ok and go_why == want
    assert not ours_ok and f"steps[0].addPod.spec.containers[0].ports[0].containerPort: {want}" in ours


def _yaml_text(pod_text: str) -> str:
    """The pod's JSON as a YAML block document (the number as written)."""
    doc = json.loads(pod_text.replace("@N@", '"@N@"'))
    lines = json.dumps(doc, indent=1).splitlines()  # (flow JSON is YAML too; block it a little)
    return "\n".join(lines) + "\n"


def _kubectl(oracle: str, tmp_path: Path, texts: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """``YAMLToJSON`` of each manifest (``kubelet-oracle yaml``), then the
    API server's decoding (``kubelet-oracle decode``)."""
    converted = []
    for i, (text, ext) in enumerate(texts):
        f = tmp_path / f"m{i}.{ext}"
        f.write_text(text)
        out = subprocess.run([oracle, "yaml", str(f)], capture_output=True, text=True, check=True).stdout
        converted.append(out.strip())
    path = tmp_path / "converted.json"
    path.write_text("[" + ",\n".join(converted) + "]")
    out = subprocess.run([oracle, "decode", str(path)], capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def _advise_reader(text: str, name: str) -> InputError | None:
    """``compare``'s and ``advise``'s reading of a manifest file."""
    (source,) = load_pod_sources(text, name=name)
    try:
        parse_pod(source.data, gates=GATES, sort_keys=True)
    except InputError as e:
        return e
    return None


def test_kubectls_numbers(oracle_binary: str, tmp_path: Path) -> None:
    texts = []
    for place, n in CASES:
        text = PLACES[place][0].replace("@N@", n)
        texts.append((text, "json"))
        texts.append((_yaml_text(PLACES[place][0]).replace('"@N@"', n), "yaml"))
    got = _kubectl(oracle_binary, tmp_path, texts)
    wrong = []
    for i, (text, ext) in enumerate(texts):
        place, n = CASES[i // 2]
        go = got[i]
        ours = _advise_reader(text, f"pod.{ext}")
        if go["accepted"] != (ours is None):
            wrong.append(f"{place}={n} ({ext}): kubelet {go}, podnuma {ours}")
        elif ours is not None:
            if ours.path != PLACES[place][1]:
                wrong.append(f"{place}={n} ({ext}): podnuma names {ours.path}")
            elif "cannot unmarshal number" in go["message"] and not go["message"].endswith(ours.message):
                wrong.append(f"{place}={n} ({ext}): kubelet {go['message']!r}, podnuma {ours.message!r}")
    assert wrong == []
    # (the two whole numbers written as floats are taken, as kubectl sends them)
    taken = {(CASES[i // 2], ext) for i, (_, ext) in enumerate(texts) if got[i]["accepted"]}
    for n in ("1e2", "8080.00"):
        assert {(("containerPort", n), "json"), (("containerPort", n), "yaml")} <= taken


def test_the_api_servers_numbers_as_written(oracle_binary: str, tmp_path: Path) -> None:
    texts = [PLACES[place][0].replace("@N@", n) for place, n in CASES]
    path = tmp_path / "pods.json"
    path.write_text("[" + ",\n".join(texts) + "]")
    out = subprocess.run([oracle_binary, "decode", str(path)], capture_output=True, text=True, check=True).stdout
    wrong = []
    for (place, n), text, line in zip(CASES, texts, out.splitlines(), strict=True):
        go = json.loads(line)
        try:
            parse_pod(load_json(text, name="pod.json"), gates=GATES, numbers="text")
            ours: InputError | None = None
        except InputError as e:
            ours = e
        if go["accepted"] != (ours is None):
            wrong.append(f"{place}={n}: kubelet {go}, podnuma {ours}")
        elif ours is not None and not go["message"].endswith(ours.message):
            wrong.append(f"{place}={n}: kubelet {go['message']!r}, podnuma {ours.message!r}")
    assert wrong == []


# ---------------------------------------------------------------- which error first

CTR = '{"name":"c","image":"x"}'
#: name -> the pod's JSON text (each has an unknown field and something else wrong)
ORDER = {
    "unknown first, then a wrong type": '{"aaa":1,"metadata":{"name":"w","generation":"x"},"spec":{"containers":[' + CTR + "]}}",
    "a wrong type, then unknown": '{"zzz":1,"metadata":{"name":"w","generation":"x"},"spec":{"containers":[' + CTR + "]}}",
    "unknown first, then a bad time": '{"aaa":1,"metadata":{"name":"w","creationTimestamp":"x"},"spec":{"containers":[' + CTR + "]}}",
    "unknown in metadata, then a wrong port": '{"metadata":{"name":"w","foo":1},"spec":{"containers":[{"name":"c",'
                                              '"image":"x","ports":[{"containerPort":"x"}]}]}}',
    "unknown in a container, then a wrong image": '{"metadata":{"name":"w"},"spec":{"containers":[{"name":"c",'
                                                  '"aaa":1,"image":5}]}}',
    "a wrong image, then unknown in the container": '{"metadata":{"name":"w"},"spec":{"containers":[{"name":"c",'
                                                    '"zzz":1,"image":5}]}}',
    "unknown in resources, then a wrong port": '{"metadata":{"name":"w"},"spec":{"containers":[{"name":"c","image":"x",'
                                               '"ports":[{"containerPort":"x"}],"resources":{"aaa":1}}]}}',
    "a float port, then unknown": '{"metadata":{"name":"w"},"spec":{"containers":[{"name":"c","image":"x",'
                                  '"ports":[{"containerPort":80.0}]}]},"zzz":1}',
    "unknown, then a float port": '{"aaa":1,"metadata":{"name":"w"},"spec":{"containers":[{"name":"c","image":"x",'
                                  '"ports":[{"containerPort":80.0}]}]}}',
    "unknown, then an invalid name": '{"aaa":1,"metadata":{"name":"W_W"},"spec":{"containers":[' + CTR + "]}}",
    "unknown in the second container, an invalid first": '{"metadata":{"name":"w"},"spec":{"containers":['
                                                         '{"name":"C_C","image":"x"},{"name":"d","image":"x","zzz":1}]}}',
    "a misspelt spec key, then an invalid name": '{"metadata":{"name":"W_W"},"spec":{"container":[],'
                                                 '"containers":[' + CTR + "]}}",
    "unknown alone": '{"metadata":{"name":"w"},"zzz":1,"spec":{"containers":[' + CTR + "]}}",
}
ORDER_NAMES = sorted(ORDER)


def _agrees(go_message: str, ours: InputError) -> bool:
    """podnuma's first error is Go's: the same unknown field, or a message
    of Go's held in Go's (a decoding error), or a wrong type at the field
    Go's message names."""
    if ours.message.startswith("unknown field "):
        key = ours.message.split('"')[1]
        return f'unknown field "{key}"' in go_message or f'.{key}"' in go_message
    if ours.message.removeprefix("not an RFC 3339 time: ") in go_message:
        return True
    if ours.message.startswith("must be "):  # (podnuma's words for a wrong type: the field is Go's)
        go_field = go_message.split("Go struct field ", 1)[-1].split(" of type", 1)[0]
        return go_field.endswith("." + ours.path.rsplit(".", 1)[-1]) and "cannot unmarshal" in go_message
    if ours.message.startswith("Invalid value"):
        return ours.message in go_message
    return False


def test_the_first_error_of_a_scenarios_pod(oracle_binary: str, tmp_path: Path) -> None:
    wrong = []
    for name in ORDER_NAMES:
        path = tmp_path / "s.json"
        path.write_text(_scenario(ORDER[name]))
        go_ok, go_why, ours_ok, ours = _simulate(oracle_binary, path)
        assert not go_ok and not ours_ok, (name, go_why, ours)
        try:
            parse_pod(load_json(ORDER[name], name="p.json"), gates=GATES, sort_keys=True, numbers="text",
                      unknown_in_order=True)
        except InputError as e:
            assert f"steps[0].addPod.{e.path}: {e.message}" in ours, (name, ours)
            if not _agrees(go_why, e):
                wrong.append(f"{name}: kubelet {go_why!r}, podnuma {e.path}: {e.message}")
    assert wrong == []


def test_the_first_error_of_the_api_servers_decoding(oracle_binary: str, tmp_path: Path) -> None:
    path = tmp_path / "pods.json"
    path.write_text("[" + ",\n".join(ORDER[n] for n in ORDER_NAMES) + "]")
    out = subprocess.run([oracle_binary, "decode", str(path)], capture_output=True, text=True, check=True).stdout
    wrong = []
    for name, line in zip(ORDER_NAMES, out.splitlines(), strict=True):
        go = json.loads(line)
        try:
            parse_pod(load_json(ORDER[name], name="p.json"), gates=GATES, numbers="text")
            wrong.append(f"{name}: podnuma accepts")
            continue
        except InputError as e:
            ours = e
        if go["accepted"]:
            # (decoded: the API server's validation refuses it next; podnuma's
            # error must be a validation error, not the unknown field)
            if ours.message.startswith("unknown field"):
                wrong.append(f"{name}: the API server decodes it; podnuma {ours.path}: {ours.message}")
        elif go["message"].startswith("strict decoding error: "):
            if not ours.message.startswith("unknown field") or not _agrees(go["message"], ours):
                wrong.append(f"{name}: kubelet {go['message']!r}, podnuma {ours.path}: {ours.message}")
        elif ours.message.startswith("unknown field") or not _agrees(go["message"], ours):
            wrong.append(f"{name}: kubelet {go['message']!r}, podnuma {ours.path}: {ours.message}")
    assert wrong == []
