"""Unknown fields at any depth, keys in another case, Go's words for a
value that is no number (the differential side:
``tests/oracle/test_pod_strict_depth_differential.py``).

* the API server's path (``parse_pod``): an unknown field at any depth is
  refused once nothing else is wrong, a key in another case is unknown;
* the scenario's path (``unknown_in_order``, ``encoding/json``): the same
  unknown fields where they are met, a key in another case is its field,
  two spellings decoded in sorted order into one another;
* the scenario's memo never serves a pod whose identity is also given in
  another case;
* a static pod's unknown fields are dropped at any depth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.agent.manifests import parse_manifest
from podnuma.agent.validation import RepeatedKeys
from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_schema import POD_TYPE, POINTER_FIELDS, GoType, fold_name
from podnuma.api.pod_types import check_pod_types
from podnuma.errors import InputError
from podnuma.inputs.scenario_pods import PodParses

GATES = FeatureGates.defaults()
C = {"name": "c", "image": "x"}


def _pod(**ctr: Any) -> dict[str, Any]:
    return {"metadata": {"name": "w"}, "spec": {"containers": [{**C, **ctr}]}}


def _refusal(doc: Any, **kw: Any) -> tuple[str, str] | None:
    try:
        parse_pod(doc, gates=GATES, **kw)
    except InputError as e:
        return e.path, e.message
    return None


SCENARIO = {"sort_keys": True, "unknown_in_order": True}

DEEP = [
    (_pod(ports=[{"containerPort": 80, "zz": 1}]), "spec.containers[0].ports[0].zz"),
    (_pod(livenessProbe={"httpGet": {"port": 80, "zz": 1}}), "spec.containers[0].livenessProbe.httpGet.zz"),
    (_pod(lifecycle={"preStop": {"sleep": {"seconds": 1, "zz": 1}}}),
     "spec.containers[0].lifecycle.preStop.sleep.zz"),
    (_pod(env=[{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "x", "zz": 1}}}]),
     "spec.containers[0].env[0].valueFrom.fieldRef.zz"),
    (_pod(securityContext={"capabilities": {"zz": 1}}), "spec.containers[0].securityContext.capabilities.zz"),
    (_pod(resources={"claims": [{"name": "a", "zz": 1}]}), "spec.containers[0].resources.claims[0].zz"),
    ({**_pod(), "status": {"containerStatuses": [{"state": {"terminated": {"zz": 1}}}]}},
     "status.containerStatuses[0].state.terminated.zz"),
    ({"metadata": {"name": "w"}, "spec": {"containers": [C], "volumes": [{"name": "v", "hostPath": {
        "path": "/x", "zz": 1}}]}}, "spec.volumes[0].hostPath.zz"),
]


@pytest.mark.parametrize(("doc", "path"), DEEP)
def test_an_unknown_field_at_any_depth_is_refused_on_both_paths(doc: Any, path: str) -> None:
    assert _refusal(doc) == (path, 'unknown field "zz"')
    assert _refusal(doc, **SCENARIO) == (path, 'unknown field "zz"')


def test_the_api_server_reports_it_last_the_scenario_where_it_is_met() -> None:
    doc = _pod(ports=[{"containerPort": 80, "aa": 1}])
    doc["spec"]["priority"] = "x"  # ("priority" after "containers")
    priority = ("spec.priority", "json: cannot unmarshal string into Go struct field PodSpec.spec.priority "
                                 "of type int32")
    assert _refusal(doc) == priority
    assert _refusal(doc, **SCENARIO) == ("spec.containers[0].ports[0].aa", 'unknown field "aa"')


def test_a_key_in_another_case() -> None:
    folded = {"metadata": {"Name": "w"}, "spec": {"containers": [{"NAME": "c", "Image": "x"}]}}
    assert _refusal(folded) == ("metadata.Name", 'unknown field "Name" (did you mean "name"?)')
    pod = parse_pod(folded, gates=GATES, **SCENARIO)
    assert (pod.name, [c.name for c in pod.containers]) == ("w", ["c"])
    # (ſ, the long s, folds to S: "ſpec" is "spec")
    assert parse_pod({"metadata": {"name": "w"}, "ſpec": {"containers": [C]}}, gates=GATES, **SCENARIO).name == "w"


def test_fold_name() -> None:
    assert fold_name("apiVersion") == "APIVERSION"
    assert fold_name("ſpec") == "SPEC" and fold_name("\u212aind") == "KIND"
    assert fold_name("naïve") == "NAïVE"  # (no ASCII letter's orbit: it matches no field)


def test_two_spellings_are_decoded_in_sorted_order() -> None:
    doc = {"metadata": {"name": "a", "Name": "b", "Labels": {"x": "1"}, "labels": {"y": "2"}},
           "spec": {"Containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}, C],
                    "containers": [{"name": "d"}]}}
    got = check_pod_types(doc, sort_keys=True, strict=True, strict_in_order=True, fold=True)
    assert got["metadata"] == {"name": "a", "labels": {"x": "1", "y": "2"}}
    # (a list decoded into the earlier one: its elements merged, its length the later one's)
    assert got["spec"] == {"containers": [{"name": "d", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}
    # a null: a pointer field and a list reset, a plain field and a struct held by value kept
    nulls = {"metadata": {"Name": "w", "name": None},
             "spec": {"RuntimeClassName": "r", "runtimeClassName": None, "Volumes": [{"name": "v"}], "volumes": None,
                      "containers": [{**C, "Resources": {"limits": {"cpu": "1"}}, "resources": None}]}}
    got = check_pod_types(nulls, sort_keys=True, strict=True, strict_in_order=True, fold=True)
    assert got["metadata"]["name"] == "w"
    assert got["spec"]["runtimeClassName"] is None and got["spec"]["volumes"] is None
    assert got["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
    # (without a key in another case the pod is the one given)
    plain = _pod()
    assert check_pod_types(plain, sort_keys=True, strict=True, strict_in_order=True, fold=True) is plain


def test_every_pointer_field_is_a_field_of_the_schema() -> None:
    named: set[str] = set()
    seen: set[int] = set()

    def walk(t: GoType) -> None:
        if id(t) in seen:
            return
        seen.add(id(t))
        for k, (ft, go) in t.fields.items():
            named.add(go if "." in go else f"{t.name.removeprefix('v1.')}.{k}")
            walk(ft)
        if t.elem is not None:
            walk(t.elem)

    walk(POD_TYPE)
    assert not POINTER_FIELDS - named, sorted(POINTER_FIELDS - named)
    assert {"PodSpec.runtimeClassName", "Container.securityContext", "ProbeHandler.httpGet"} <= POINTER_FIELDS
    assert "Container.resources" not in POINTER_FIELDS and "ObjectMeta.name" not in POINTER_FIELDS


def test_the_scenarios_memo_never_serves_an_identity_in_another_case() -> None:
    parses = PodParses(GATES)

    def pod(name: str, other: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "nAme": other}, "spec": {"containers": [C]}}

    # ("nAme" < "name": name wins; "nAme" is no identity field by its spelling)
    for doc in (pod("a", "x"), pod("b", "x"), {"metadata": {"name": "c", "Labels": {"k": "1"}},
                                               "spec": {"containers": [C]}},
                {"metadata": {"name": "d", "Labels": {"k": "1"}, "labels": {"j": "2"}}, "spec": {"containers": [C]}}):
        want = parse_pod(doc, gates=GATES, **SCENARIO)
        got = parses.parse(doc)
        assert (got.name, got.uid, dict(got.labels)) == (want.name, want.uid, dict(want.labels))
    assert dict(parses.parse({"metadata": {"name": "e", "Labels": {"k": "1"}, "labels": {"j": "2"}},
                              "spec": {"containers": [C]}}).labels) == {"k": "1", "j": "2"}


def test_a_static_pods_unknown_fields_are_dropped_at_any_depth(tmp_path: Path) -> None:
    base: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {
        "containers": [{"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80}],
                        "livenessProbe": {"httpGet": {"port": 80}}}]}}
    path = tmp_path / "web.json"
    path.write_text(json.dumps(base))
    plain = parse_manifest(path.read_bytes(), path, node_name="n", gates=GATES).pod
    extra = json.loads(json.dumps(base))
    extra["spec"]["containers"][0]["ports"][0]["zz"] = {"a": 1}
    extra["spec"]["containers"][0]["livenessProbe"]["httpGet"]["Port"] = "x"
    extra["status"] = {"zz": 1}
    path.write_text(json.dumps(extra))
    dropped = parse_manifest(path.read_bytes(), path, node_name="n", gates=GATES).pod
    assert dropped.uid == plain.uid and dropped.name == plain.name


def test_repeated_keys_keep_their_pairs_when_dropped() -> None:
    from podnuma.agent.staticpod import _lenient

    meta = RepeatedKeys({"name": "b", "zz": 1}, [("name", "a"), ("zz", 1), ("name", "b")])
    out = _lenient({"apiVersion": "v1", "metadata": meta, "zz": 2})
    assert out == {"apiVersion": "v1", "metadata": {"name": "b"}}
    assert isinstance(out["metadata"], RepeatedKeys) and out["metadata"].pairs == [("name", "a"), ("name", "b")]
