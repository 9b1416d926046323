"""Unknown fields at any depth of a pod, a key in another case, and a value
that is not a number in an integer field, against the real decoders:

* a scenario's pods (``kubelet-oracle simulate``: ``encoding/json`` with
  ``DisallowUnknownFields`` after ``json.Marshal`` of the YAML map, keys
  sorted): an unknown field in any struct of the v1 Pod (every struct
  type of ``podnuma.api.pod_schema``, each at the first place the schema
  holds it: a port, a probe's handler, a volume source, the status...)
  refuses the pod, the same field as Go's first; a key in another case is
  its field (``metadata: {Name: w}``, ``containers: [{NAME: c}]``, ``ſpec``
  with U+017F), a field given in two spellings decoded in sorted order
  into what the first left (its struct merged, a map's entries added, a
  list decoded into the earlier list's backing array, whose capacity it
  keeps, a ``null`` leaving a plain field as it was and an int-or-string
  at the integer it last held): the runs compared in full;
* the API server's strict decoding (``kubelet-oracle decode``,
  ``sigs.k8s.io/json``): the same unknown fields refused with the same
  field path, a key in another case unknown;
* a string, a boolean, an object or a list in an integer or int-or-string
  field: ``json: cannot unmarshal string into Go struct field ... of type
  int32``, Go's words, on both paths;
* a static pod (``kubelet-oracle staticpod``, the kubelet's lenient file
  decoding): an unknown field at any depth is dropped, the pod and its
  UID the same as without it;
* the API server with ``ContainerRestartRules`` off (``kubelet-oracle
  validate``): an ephemeral container's restart fields dropped before
  validation, as every container's.
"""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_schema import POD_TYPE, GoType
from podnuma.errors import InputError
from podnuma.inputs.documents import load_json
from tests.oracle.harness import Outcome, run_both, run_oracle, run_podnuma, write_scenario
from tests.oracle.validation import validate_oracle, validate_podnuma

GATES = FeatureGates.defaults()
NODE = {"name": "w", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                   "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}}
UNKNOWN = "zzUnknown"


def _scenario(*pods: Any, static: bool = False) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE,
                           "steps": [{"addPod": p} for p in pods]}
    if static:
        doc["kubeletConfig"] = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"}
    return doc


def _places() -> list[tuple[str, str, Any]]:
    """(the struct's Go name, the path of the unknown field, the pod with
    it): every struct type of the pod, at the first place it is met."""
    out: list[tuple[str, str, Any]] = []
    seen: set[int] = set()

    def walk(t: GoType, build: Callable[[Any], Any], path: str) -> None:
        if t.kind == "struct":
            if id(t) in seen:
                return
            seen.add(id(t))
            out.append((t.name, f"{path}.{UNKNOWN}" if path else UNKNOWN, build({UNKNOWN: 1})))
            for k, (ft, _) in t.fields.items():
                walk(ft, lambda v, k=k, build=build: build({k: v}), f"{path}.{k}" if path else k)
        elif t.kind == "slice" and t.elem is not None:
            walk(t.elem, lambda v, build=build: build([v]), f"{path}[0]")

    walk(POD_TYPE, lambda v: v, "")
    return out


PLACES = _places()


def _outcomes(oracle: str, tmp_path: Path, docs: list[dict[str, Any]]) -> list[tuple[Outcome, Outcome]]:
    paths = [write_scenario(d, tmp_path / f"s{i:04d}.json") for i, d in enumerate(docs)]
    theirs = run_oracle(oracle, paths)
    return [(run_podnuma(p), t) for p, t in zip(paths, theirs, strict=True)]


def _go_reason(outcome: Outcome) -> str:
    return outcome.message.split(": invalid pod: ", 1)[-1]


def test_every_struct_of_the_pod_is_held_here() -> None:
    # (the walk reaches the structs below the containers, the volumes and the status)
    names = {name for name, _, _ in PLACES}
    assert {"v1.ContainerPort", "v1.HTTPGetAction", "v1.Lifecycle", "v1.HostPathVolumeSource",
            "v1.EnvVar", "v1.SecurityContext", "v1.ResourceClaim", "v1.PodStatus",
            "v1.ContainerStateTerminated", "v1.PodCertificateProjection"} <= names
    assert len(PLACES) > 120


def test_a_scenarios_unknown_field_at_any_depth(oracle_binary: str, tmp_path: Path) -> None:
    wrong = []
    for (name, path, _), (ours, go) in zip(
            PLACES, _outcomes(oracle_binary, tmp_path, [_scenario(p) for _, _, p in PLACES]), strict=True):
        if go.kind != "input" or _go_reason(go) != f'json: unknown field "{UNKNOWN}"':
            wrong.append(f"{name}: the oracle {go.kind} {go.message[:200]!r}")
        elif ours.kind != "input" or f"steps[0].addPod.{path}: unknown field \"{UNKNOWN}\"" not in ours.message:
            wrong.append(f"{name} ({path}): podnuma {ours.kind} {ours.message[:300]!r}")
    assert wrong == []


def _decode(oracle: str, tmp_path: Path, texts: list[str]) -> list[dict[str, Any]]:
    path = tmp_path / "pods.json"
    path.write_text("[" + ",\n".join(texts) + "]")
    out = subprocess.run([oracle, "decode", str(path)], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def _api(text: str) -> InputError | None:
    """The API server's path (a JSON body decoded as written)."""
    try:
        parse_pod(load_json(text, name="pod.json"), gates=GATES, numbers="text")
    except InputError as e:
        return e
    return None


def test_the_api_servers_unknown_field_at_any_depth(oracle_binary: str, tmp_path: Path) -> None:
    texts = [json.dumps(pod) for _, _, pod in PLACES]
    wrong = []
    for (name, path, _), text, go in zip(PLACES, texts, _decode(oracle_binary, tmp_path, texts), strict=True):
        ours = _api(text)
        if go["accepted"] or go["message"] != f'strict decoding error: unknown field "{path}"':
            wrong.append(f"{name}: the API server {go}")
        elif ours is None or (ours.path, ours.message) != (path, f'unknown field "{UNKNOWN}"'):
            wrong.append(f"{name} ({path}): podnuma {ours}")
    assert wrong == []


C = {"name": "c", "image": "x"}


def _pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "w"}, "spec": {"containers": [dict(C)], **spec}}


#: pods with two unknown fields, or an unknown field and a wrong type: Go's
#: first (keys sorted) is podnuma's
ORDER: dict[str, Any] = {
    "two unknown, sorted": {**_pod(), "status": {"zzB": 1},
                            "metadata": {"name": "w", "ownerReferences": [{"zzA": 1}]}},
    "a port before the status": _pod(containers=[{**C, "ports": [{"zzP": 1}]}]) | {"status": {"aaS": 1}},
    "a probe's handler, then the image's type": _pod(containers=[{
        "name": "c", "image": 5, "livenessProbe": {"httpGet": {"port": 80, "zz": 1}}}]),
    "a wrong port type, then a volume source's unknown": _pod(
        containers=[{**C, "ports": [{"containerPort": "x"}]}], volumes=[{"name": "v", "hostPath": {"zz": 1}}]),
    "env before the ports": _pod(containers=[{**C, "env": [{"name": "E", "zzE": 1}], "ports": [{"zzP": 1}]}]),
    "a time wins over an earlier unknown": _pod(containers=[{**C, "lifecycle": {"zz": 1}}]) | {
        "status": {"startTime": "x"}},
}


def test_a_scenarios_first_unknown_field_is_gos(oracle_binary: str, tmp_path: Path) -> None:
    names = sorted(ORDER)
    wrong = []
    for name, (ours, go) in zip(names, _outcomes(oracle_binary, tmp_path, [_scenario(ORDER[n]) for n in names]),
                                strict=True):
        reason = _go_reason(go)
        assert go.kind == "input", (name, go)
        if ours.kind != "input":
            wrong.append(f"{name}: podnuma {ours.kind}")
        elif reason.startswith("json: unknown field "):
            key = reason.split('"')[1]
            if f'unknown field "{key}"' not in ours.message:
                wrong.append(f"{name}: oracle {reason!r}, podnuma {ours.message!r}")
        elif "cannot unmarshal" in reason:
            if reason not in ours.message and "got an integer" not in ours.message:
                wrong.append(f"{name}: oracle {reason!r}, podnuma {ours.message!r}")
        elif reason.split(": ")[-1] not in ours.message:
            wrong.append(f"{name}: oracle {reason!r}, podnuma {ours.message!r}")
    assert wrong == []


# ---------------------------------------------------------------- a key in another case

R = {"limits": {"cpu": "2", "memory": "1Gi"}}
#: scenarios' pods with keys in another case (the runs are compared in full)
FOLDED: dict[str, list[Any]] = {
    "metadata Name": [{"metadata": {"Name": "w"}, "spec": {"containers": [C]}}],
    "container NAME and IMAGE": [{"metadata": {"name": "w"}, "spec": {"containers": [{"NAME": "c", "IMAGE": "x"}]}}],
    "Resources pin CPUs": [{"metadata": {"name": "w"}, "spec": {"containers": [{**C, "Resources": R}]}}],
    "LIMITS": [{"metadata": {"name": "w"}, "spec": {"containers": [{**C, "resources": {"LIMITS": R["limits"]}}]}}],
    "Name and name: name wins": [{"metadata": {"name": "w", "Name": "v"}, "spec": {"containers": [C]}},
                                 {"metadata": {"name": "v"}, "spec": {"containers": [C]}}],
    "nAme and name": [{"metadata": {"nAme": "a", "name": "b"}, "spec": {"containers": [C]}},
                      {"metadata": {"name": "a"}, "spec": {"containers": [C]}}],
    "generatename after generateName": [{"metadata": {"name": "w", "namespace": "ns", "Namespace": "other"},
                                         "spec": {"containers": [C]}}],
    "long s": [{"metadata": {"name": "w"}, "ſpec": {"containers": [C]}}],
    "Kelvin sign": [{"\u212aind": "Pod", "metadata": {"name": "w"}, "spec": {"containers": [{**C, "resources": {
        "limits": {"cpu": "1", "memory": "1Gi"}}}]}}],
    "Kind and APIVERSION": [{"Kind": "Pod", "APIVERSION": "v1", "metadata": {"name": "w"},
                             "spec": {"containers": [C]}}],
    "structs merged": [{"metadata": {"name": "w"}, "spec": {"containers": [
        {**C, "Resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
         "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}],
    "lists merged element by element": [{"metadata": {"name": "w"}, "spec": {
        "Containers": [{"name": "a", "image": "x", "resources": R}, {"name": "b", "image": "x"}],
        "containers": [{"name": "a"}]}}],
    "a null keeps a plain field": [{"metadata": {"Name": "w", "name": None}, "spec": {"containers": [
        {**C, "Resources": R, "resources": None}]}}],
    "a null resets a list": [{"metadata": {"name": "w"}, "spec": {
        "InitContainers": [{"name": "i", "image": "x", "resources": R}], "initContainers": None,
        "containers": [C]}}],
    "a null resets a pointer": [{"metadata": {"name": "w"}, "spec": {
        "initContainers": [{"name": "i", "image": "x", "RestartPolicy": "Always", "restartPolicy": None}],
        "containers": [C]}}],
    "labels merged": [{"metadata": {"name": "w", "Labels": {"a": "1"}, "labels": {"b": "2"}},
                       "spec": {"containers": [C]}}],
    "Restartpolicy": [{"metadata": {"name": "w"}, "spec": {"containers": [C], "RestartPolicy": "Never",
                                                            "restartpolicy": "OnFailure"}}],
}


def test_a_scenarios_keys_in_another_case(oracle_binary: str, tmp_path: Path) -> None:
    items = [(name, _scenario(*pods, static=True)) for name, pods in sorted(FOLDED.items())]
    stats: dict[str, int] = {}
    assert run_both(oracle_binary, items, tmp_path, stats=stats) == []
    again = tmp_path / "again"
    again.mkdir()
    outcomes = _outcomes(oracle_binary, again, [d for _, d in items])
    accepted = {name for (name, _), (ours, go) in zip(items, outcomes, strict=True)
                if ours.kind == "ok" and go.kind == "ok"}
    assert accepted == set(FOLDED)  # (each is decoded: none is refused)


def test_what_the_merged_pods_are(tmp_path: Path) -> None:
    def run(name: str) -> Any:
        out = run_podnuma(write_scenario(_scenario(*FOLDED[name], static=True), tmp_path / "s.json"))
        assert out.doc is not None, out.message
        return out.doc["steps"]

    (pinned,) = run("Resources pin CPUs")
    assert pinned["qosClass"] == "Guaranteed" and pinned["containers"][0]["cpus"] != pinned["defaultCpuSet"]
    first, second = run("Name and name: name wins")  # ("Name" < "name" in sorted order)
    assert (first["pod"], second["pod"], first["admitted"], second["admitted"]) == (
        "default/w", "default/v", True, True)
    (later,) = run("nAme and name")[:1]
    assert later["pod"] == "default/b"
    (merged,) = run("structs merged")
    assert merged["qosClass"] == "Burstable"  # (limits of Resources, requests of resources)
    (listed,) = run("lists merged element by element")
    assert [c["name"] for c in listed["containers"]] == ["a"] and listed["qosClass"] == "Guaranteed"
    (kept,) = run("a null keeps a plain field")
    assert kept["pod"] == "default/w" and kept["qosClass"] == "Guaranteed"
    (reset,) = run("a null resets a list")
    assert [c["name"] for c in reset["containers"]] == ["c"]
    (pointer,) = run("a null resets a pointer")
    assert [c["type"] for c in pointer["containers"]] == ["init", "app"]  # (not a sidecar)


def test_the_api_server_matches_exact_names_only(oracle_binary: str, tmp_path: Path) -> None:
    pods = [FOLDED["metadata Name"][0], FOLDED["container NAME and IMAGE"][0], FOLDED["long s"][0]]
    texts = [json.dumps(p) for p in pods]
    for text, go, key in zip(texts, _decode(oracle_binary, tmp_path, texts), ("Name", "NAME", "ſpec"), strict=True):
        assert not go["accepted"] and "unknown field" in go["message"] and key in go["message"], go
        ours = _api(text)
        assert ours is not None and ours.message.startswith(f'unknown field "{key}"'), ours


# ---------------------------------------------------------------- not a number where a number is expected

#: where an integer (or int-or-string) field is, the pod with "@V@" for its value
INTEGERS = {
    "containerPort": _pod(containers=[{**C, "ports": [{"containerPort": "@V@"}]}]),
    "probe port": _pod(containers=[{**C, "livenessProbe": {"httpGet": {"port": "@V@"}}}]),
    "tcp port": _pod(containers=[{**C, "readinessProbe": {"tcpSocket": {"port": "@V@"}}}]),
    "priority": _pod(priority="@V@"),
    "generation": {"metadata": {"name": "w", "generation": "@V@"}, "spec": {"containers": [C]}},
    "supplementalGroups": _pod(securityContext={"supplementalGroups": ["@V@"]}),
    "defaultMode": _pod(volumes=[{"name": "v", "secret": {"defaultMode": "@V@"}}]),
    "restartCount": {"metadata": {"name": "w"}, "spec": {"containers": [C]},
                     "status": {"containerStatuses": [{"name": "c", "restartCount": "@V@"}]}},
}
NOT_NUMBERS = ['"x"', '"80"', "true", "{}", "[]", '{"a": 1}']


def _with(pod: Any, value: str) -> str:
    text = json.dumps(pod)
    assert text.count('"@V@"') == 1
    return text.replace('"@V@"', value)


def test_not_a_number_in_gos_words_on_both_paths(oracle_binary: str, tmp_path: Path) -> None:
    # (a string is an int-or-string's value: only the integer fields take them)
    cases = [(place, v) for place in sorted(INTEGERS) for v in NOT_NUMBERS
             if not (v.startswith('"') and place.endswith(" port"))]
    texts = [_with(INTEGERS[place], v) for place, v in cases]
    wrong = []
    # the API server
    decoded = _decode(oracle_binary, tmp_path, texts)
    assert not any(go["accepted"] for go in decoded)
    for (place, v), text, go in zip(cases, texts, decoded, strict=True):
        ours = _api(text)
        if go["accepted"] != (ours is None):
            wrong.append(f"API {place}={v}: kubelet {go}, podnuma {ours}")
        elif ours is not None and not go["message"].endswith(ours.message):
            wrong.append(f"API {place}={v}: kubelet {go['message']!r}, podnuma {ours.message!r}")
    # a scenario's pods
    docs = [_scenario(json.loads(t)) for t in texts]
    for (place, v), (ours_run, go_run) in zip(cases, _outcomes(oracle_binary, tmp_path, docs), strict=True):
        if (ours_run.kind == "ok") != (go_run.kind == "ok"):
            wrong.append(f"scenario {place}={v}: kubelet {go_run.kind} {go_run.message[:200]}, "
                         f"podnuma {ours_run.kind} {ours_run.message[:200]}")
        elif (go_run.kind != "ok" and "cannot unmarshal" in go_run.message
              and _go_reason(go_run) not in ours_run.message):
            wrong.append(f"scenario {place}={v}: kubelet {_go_reason(go_run)!r}, podnuma {ours_run.message!r}")
    assert wrong == []


# ---------------------------------------------------------------- static pods: dropped

STATIC = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
          "spec": {"containers": [{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80}],
                                   "livenessProbe": {"httpGet": {"port": 80, "path": "/"}},
                                   "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
                   "volumes": [{"name": "v", "hostPath": {"path": "/tmp"}}]},
          "status": {"phase": "Pending"}}
STATIC_UNKNOWN = {
    "port": ("spec", "containers", 0, "ports", 0),
    "probe handler": ("spec", "containers", 0, "livenessProbe", "httpGet"),
    "volume source": ("spec", "volumes", 0, "hostPath"),
    "status": ("status",),
}


def _static(place: str | None) -> dict[str, Any]:
    doc = copy.deepcopy(STATIC)
    if place is not None:
        at: Any = doc
        for step in STATIC_UNKNOWN[place]:
            at = at[step]
        at[UNKNOWN] = {"x": 1}
    return doc


@pytest.mark.parametrize("place", sorted(STATIC_UNKNOWN))
def test_a_static_pods_unknown_field_below_is_dropped(oracle_binary: str, tmp_path: Path, place: str) -> None:
    """The kubelet admits the manifest with the unknown field, under the
    UID it gives the manifest without it; so does podnuma (its own hash)."""
    from tests.oracle.test_staticpod_uid import _oracle_uid, _our_uid

    kubelet, ours = [], []
    path = tmp_path / "web.json"  # (the file's path is hashed too: one path)
    for doc in (_static(None), _static(place)):
        path.write_text(json.dumps(doc))
        kubelet.append(_oracle_uid(oracle_binary, path, {}))
        ours.append(_our_uid(path, {}))
    assert kubelet[0] == kubelet[1]
    assert ours[0] == ours[1]


#: an empty struct, by value (the zero struct: as absent) or by pointer (not nil)
EMPTY = {
    "status": ("", {"status": {}}),
    "container resources": ("c", {"resources": {}}),
    "container securityContext": ("c", {"securityContext": {}}),
    "container lifecycle": ("c", {"lifecycle": {}}),
    "status left empty by an unknown field": ("", {"status": {UNKNOWN: 1}}),
    "resources left empty by an unknown field": ("c", {"resources": {UNKNOWN: 1}}),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_a_static_pods_empty_struct(oracle_binary: str, tmp_path: Path, name: str) -> None:
    """Whether an empty struct changes the kubelet's UID, it changes
    podnuma's."""
    from tests.oracle.test_staticpod_uid import _oracle_uid, _our_uid

    where, extra = EMPTY[name]
    base: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                            "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}
    other = copy.deepcopy(base)
    (other["spec"]["containers"][0] if where == "c" else other).update(extra)
    path = tmp_path / "web.json"
    kubelet, ours = [], []
    for doc in (base, other):
        path.write_text(json.dumps(doc))
        kubelet.append(_oracle_uid(oracle_binary, path, {}))
        ours.append(_our_uid(path, {}))
    assert (ours[0] == ours[1]) == (kubelet[0] == kubelet[1])


def test_gos_words_name_a_field_given_in_another_case(oracle_binary: str, tmp_path: Path) -> None:
    """Go's message names the field by its own name (``ports``,
    ``containerPort``), whatever the key's case; podnuma's path is the
    key as written."""
    pods = [_pod(containers=[{**C, "Ports": [{"ContainerPort": v}]}]) for v in ("x", True, 1.5)]
    outcomes = _outcomes(oracle_binary, tmp_path, [_scenario(p) for p in pods])
    for ours, go in outcomes:
        assert go.kind == "input" and "Go struct field ContainerPort.spec.containers.ports.containerPort" in go.message
        assert ours.kind == "input" and _go_reason(go) in ours.message, (ours.message, go.message)
        assert "steps[0].addPod.spec.containers[0].Ports[0].ContainerPort: " in ours.message


# ---------------------------------------------------------------- a list in several spellings: its capacity kept

G = {"limits": {"cpu": "2", "memory": "1Gi"}}
#: a list given in several spellings, decoded in sorted order: each into
#: the slice the earlier left, whose length it sets and whose capacity it
#: keeps; (the pods, whether Go admits them)
SPELLED_LISTS: dict[str, tuple[dict[str, Any], bool]] = {
    # containers[1] is decoded into CONTAINERS[1] (name b, image x)
    "an element past the middle list": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x"}, {"name": "b", "image": "x", "resources": G}],
        "Containers": [{"name": "a", "image": "x"}],
        "containers": [{"name": "a"}, {"image": "y"}]}}, True),
    # b keeps CONTAINERS[1]'s limits: Guaranteed, exclusive CPUs
    "its resources kept": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x", "resources": G}, {"name": "b", "image": "x", "resources": G}],
        "Containers": [{"name": "a", "image": "x", "resources": G}],
        "containers": [{"name": "a"}, {"name": "b"}]}}, True),
    # four spellings: c from the first, b merged from the first and third
    "four spellings": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x"}, {"name": "b", "image": "x", "resources": G},
                       {"name": "c", "image": "x"}],
        "Containers": [{"name": "a", "image": "x"}],
        "cONTAINERS": [{"name": "a", "image": "x"}, {"name": "b"}],
        "containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}, True),
    # a null element leaves what was there
    "a null element": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x"}, {"name": "b", "image": "x", "resources": G}],
        "Containers": [{"name": "a", "image": "x"}],
        "containers": [{"name": "a"}, None]}}, True),
    # a longer middle list, then a shorter one: one container
    "grown, then truncated": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x"}],
        "Containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "x", "resources": G}],
        "containers": [{"name": "a"}]}}, True),
    # a list inside a merged element keeps its own capacity
    "ports of a merged container": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x",
                        "ports": [{"containerPort": 80}, {"containerPort": 81, "hostPort": 81}]}],
        "Containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}]}],
        "containers": [{"name": "a", "PORTS": [{"containerPort": 82}],
                        "ports": [{}, {"containerPort": 83, "hostPort": 83}]}]}}, True),
    # an empty middle list drops the array: containers[1] has no name
    "an empty middle list": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x"}, {"name": "b", "image": "x", "resources": G}],
        "Containers": [],
        "containers": [{"name": "a"}, {"image": "y"}]}}, False),
    # so does a null
    "a null middle list": ({"metadata": {"name": "w"}, "spec": {
        "CONTAINERS": [{"name": "a", "image": "x"}, {"name": "b", "image": "x", "resources": G}],
        "Containers": None,
        "containers": [{"name": "a", "image": "x"}, {"image": "y"}]}}, False),
}


def test_a_list_in_several_spellings_decodes_as_encoding_json(oracle_binary: str, tmp_path: Path) -> None:
    names = sorted(SPELLED_LISTS)
    items = [(name, _scenario(SPELLED_LISTS[name][0], static=True)) for name in names]
    admitted = [name for name in names if SPELLED_LISTS[name][1]]
    # (the admitted ones compared in full; a refusal's words are the API
    # server's, which takes no key in another case: compared below by kind)
    assert run_both(oracle_binary, [(n, d) for n, d in items if n in admitted], tmp_path) == []
    again = tmp_path / "again"
    again.mkdir()
    outcomes = _outcomes(oracle_binary, again, [d for _, d in items])
    got = {name: (ours.kind, go.kind) for name, (ours, go) in zip(names, outcomes, strict=True)}
    assert got == {name: ("ok", "ok") if SPELLED_LISTS[name][1] else ("input", "input") for name in names}


# ---------------------------------------------------------------- an int-or-string's null


def _probe(probe: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "w"}, "spec": {"containers": [{"name": "c", "image": "x", "livenessProbe": probe}]}}


#: an int-or-string in several spellings, the last ``null``
#: (``IntOrString.UnmarshalJSON``: an integer it does not set); whether Go
#: admits the pod (the port it keeps is valid: not 0)
NULL_INTSTR: dict[str, tuple[dict[str, Any], bool]] = {
    "httpGet Port then null": (_probe({"httpGet": {"Port": 8080, "port": None}}), True),
    "tcpSocket Port then null": (_probe({"tcpSocket": {"Port": 80, "port": None}}), True),
    # the string left the integer as it was
    "an int, a string, null": (_probe({"httpGet": {"PORT": 8080, "Port": "http", "port": None}}), True),
    # a string alone: the integer 0
    "a string then null": (_probe({"httpGet": {"Port": "http", "port": None}}), False),
    "a string, 0, null": (_probe({"tcpSocket": {"PORT": "x", "Port": 0, "port": None}}), False),
    "null twice": (_probe({"httpGet": {"Port": None, "port": None}}), False),
}


def test_a_null_after_an_int_or_string_keeps_its_integer(oracle_binary: str, tmp_path: Path) -> None:
    names = sorted(NULL_INTSTR)
    items = [(name, _scenario(NULL_INTSTR[name][0], static=True)) for name in names]
    admitted = [name for name in names if NULL_INTSTR[name][1]]
    assert run_both(oracle_binary, [(n, d) for n, d in items if n in admitted], tmp_path) == []
    again = tmp_path / "again"
    again.mkdir()
    outcomes = _outcomes(oracle_binary, again, [d for _, d in items])
    got = {name: (ours.kind, go.kind) for name, (ours, go) in zip(names, outcomes, strict=True)}
    assert got == {name: ("ok", "ok") if NULL_INTSTR[name][1] else ("input", "input") for name in names}
    for (ours, go), name in zip(outcomes, names, strict=True):
        if ours.kind == "input":  # (port 0: the same validation error)
            assert go.message.split(".json: ", 1)[-1] == ours.message, (name, ours.message, go.message)


# ---------------------------------------------------------------- a map in many spellings


def test_a_map_in_many_spellings_is_merged_in_order() -> None:
    """Each spelling's entries are added to the map the earlier left (the
    later value of a key wins), in sorted order, each in its own size."""
    import itertools

    spellings = ["".join(c) for c in itertools.product(*[(ch.upper(), ch) for ch in "annotations"])][:512]
    meta: dict[str, Any] = {"name": "w"}
    for j, key in enumerate(spellings):
        meta[key] = {f"k{j}-{i}": "v" for i in range(20)} | {"shared": str(j)}
    doc = {"metadata": meta, "spec": {"containers": [{"name": "a", "image": "x"}]}}
    pod = parse_pod(doc, gates=GATES, sort_keys=True, unknown_in_order=True)
    want = {f"k{j}-{i}": "v" for j in range(len(spellings)) for i in range(20)}
    want["shared"] = str(spellings.index(max(spellings)))  # (the last in sorted order wins)
    assert dict(pod.annotations) == want
    assert meta[spellings[0]]["shared"] == "0"  # (the input is left as it was)


# ---------------------------------------------------------------- ContainerRestartRules off: ephemeral containers

GATES_OFF = {"ContainerRestartRules": False, "RestartAllContainersOnContainerExits": False}
ON_CREATE = "spec.ephemeralContainers: Forbidden: cannot be set on create"
RULES = [{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}]


def _ephemeral(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w", "namespace": "x"},
            "spec": {"containers": [{"name": "a", "image": "x"}],
                     "ephemeralContainers": [{"name": "e", "image": "x", **fields}]}}


EPHEMERAL_RESTART = {
    "restartPolicy Never": _ephemeral(restartPolicy="Never"),
    "restartPolicy Always": _ephemeral(restartPolicy="Always"),
    "restartPolicyRules": _ephemeral(restartPolicyRules=RULES),
}


def test_with_the_gate_off_an_ephemeral_containers_restart_fields_are_dropped(oracle_binary: str) -> None:
    """``PrepareForCreate`` with ``ContainerRestartRules`` off drops every
    container's restart fields, an ephemeral container's too: the API
    server's only error is the create-time one, podnuma's too; with the
    gate on both refuse the fields alike."""
    names = sorted(EPHEMERAL_RESTART)
    answers = validate_oracle(oracle_binary, [EPHEMERAL_RESTART[n] for n in names], GATES_OFF)
    wrong = []
    for name, answer in zip(names, answers, strict=True):
        errors = [e["error"] for e in answer.get("errors") or []]
        assert errors == [ON_CREATE], (name, answer)  # (nothing about the restart fields)
        mine = validate_podnuma(EPHEMERAL_RESTART[name], GATES_OFF)
        if mine.error != ON_CREATE:
            wrong.append(f"{name}: podnuma {mine.error!r}; the API server only {ON_CREATE!r}")
    assert wrong == []
    on = validate_oracle(oracle_binary, [EPHEMERAL_RESTART[n] for n in names], {})
    for name, answer in zip(names, on, strict=True):
        mine = validate_podnuma(EPHEMERAL_RESTART[name], {})
        errors = [e["error"] for e in answer.get("errors") or []]
        assert mine.error and any(mine.error in e or e in mine.error for e in errors), (name, mine, errors)
