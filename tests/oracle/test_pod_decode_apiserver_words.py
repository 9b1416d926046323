"""A pod on the API server's path (``parse_pod`` with the document's order,
the pod files of ``compare`` and ``advise``) refused in the API server's
words, against ``kubelet-oracle decode`` (the strict v1 decoding of a JSON
body as written) and ``kubelet-oracle validate`` (decoding, defaults and
validation):

* an object, a list, a boolean or a number in a time field
  (``creationTimestamp: {}``): ``metav1.Time.UnmarshalJSON`` decodes it
  into a string, Go's type error (``json: cannot unmarshal object into Go
  struct field ObjectMeta.metadata.creationTimestamp of type string``) ends
  the decoding, winning over a mismatch saved before it;
* the same in a quantity field (``resources.limits.cpu: {}``):
  ``Quantity.UnmarshalJSON`` parses the value's text, which no object, list
  or boolean parses as (``quantities must match the regular expression``);
* a ``null`` container (``containers: [C, null]``): the zero container to
  the decoder, so validation's ``spec.containers[1].name: Required value``;
* a key given twice (``metadata: {name: a, name: b}``): the strict
  decoding's ``duplicate field "metadata.name"``, reported like an unknown
  field (only when nothing else failed; the first of them in the
  document's order), a map's key too (``metadata.labels.a``);
* the kind and version: found in any case before decoding (``Kind``,
  ``KIND``; the last one met, a ``null`` skipped), ``""`` defaulted
  (``Pod``, ``v1``), anything else refused first, in the serializer's words
  (``no kind "x" is registered for version "v1" in scheme
  "pkg/runtime/scheme.go:111"``); a key in another case that did not give
  the kind is an unknown field.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.inputs.pods import load_pod_sources
from tests.oracle.validation import PodnumaVerdict, compare_verdicts, validate_oracle

CTR = '{"name":"c","image":"x"}'
GO_PREFIX = "Pod in version \"v1\" cannot be handled as a Pod: "


def _pod(meta: str = '{"name":"w"}', spec: str = '{"containers":[' + CTR + "]}", head: str = "") -> str:
    return "{" + head + '"apiVersion":"v1","kind":"Pod","metadata":' + meta + ',"spec":' + spec + "}"


def _decode(oracle_binary: str, tmp_path: Path, texts: list[str]) -> list[dict[str, Any]]:
    path = tmp_path / "pods.json"
    path.write_text("[" + ",\n".join(texts) + "]")
    out = subprocess.run([oracle_binary, "decode", str(path)], capture_output=True, text=True, check=True)
    got = [json.loads(line) for line in out.stdout.splitlines()]
    assert [g["index"] for g in got] == list(range(len(texts)))
    return got


def _ours(text: str) -> InputError | None:
    """podnuma's verdict on the pod file ``text`` (read as ``compare``
    reads it), parsed in the document's order."""
    (source,) = load_pod_sources(text, name="pod.json")
    try:
        parse_pod(source.data, gates=FeatureGates.defaults())
    except InputError as e:
        return e
    return None


def _go_path(path: str) -> str:
    """podnuma's field path as the strict decoder writes it (a map's key
    after a dot: ``metadata.labels[a]`` is ``metadata.labels.a``)."""
    return re.sub(r"\[([^\]0-9][^\]]*)\]", r".\1", path)


# -- times and quantities of another JSON kind --------------------------------

TIME_PLACES = {
    "creationTimestamp": lambda v: _pod(meta='{"name":"w","creationTimestamp":' + v + "}"),
    "managedFields.time": lambda v: _pod(meta='{"name":"w","managedFields":[{"manager":"m","time":' + v + "}]}"),
    "startTime": lambda v: _pod() [:-1] + ',"status":{"startTime":' + v + "}}",
    "terminated.finishedAt": lambda v: _pod()[:-1] + ',"status":{"containerStatuses":[{"name":"c","state":'
                                                   '{"terminated":{"exitCode":0,"finishedAt":' + v + "}}}]}}",
}
QUANTITY_PLACES = {
    "limits": lambda v: _pod(spec='{"containers":[{"name":"c","image":"x","resources":{"limits":{"cpu":' + v + "}}}]}"),
    "requests": lambda v: _pod(spec='{"containers":[{"name":"c","image":"x","resources":{"requests":{"memory":'
                                    + v + "}}}]}"),
    "overhead": lambda v: _pod(spec='{"containers":[' + CTR + '],"overhead":{"cpu":' + v + "}}"),
    "pod resources": lambda v: _pod(spec='{"containers":[' + CTR + '],"resources":{"limits":{"cpu":' + v + "}}}"),
    "sizeLimit": lambda v: _pod(spec='{"containers":[' + CTR + '],"volumes":[{"name":"v","emptyDir":{"sizeLimit":'
                                     + v + "}}]}"),
    "divisor": lambda v: _pod(spec='{"containers":[' + CTR + '],"volumes":[{"name":"v","downwardAPI":{"items":'
                                   '[{"path":"p","resourceFieldRef":{"resource":"limits.cpu","divisor":' + v + "}}]}}]}"),
    "allocatedResources": lambda v: _pod()[:-1] + ',"status":{"containerStatuses":[{"name":"c",'
                                                '"allocatedResources":{"cpu":' + v + "}}]}}",
}
OTHER_KINDS = ["{}", "[]", '{"a":1}', '[1,"2"]', '{"time":"2024-01-01T00:00:00Z"}', '["2024-01-01T00:00:00Z"]',
               "true", "false", ' { } ', '[{}]']


@pytest.mark.parametrize("kind", ["time", "quantity"])
def test_a_value_of_another_json_kind(oracle_binary: str, tmp_path: Path, kind: str) -> None:
    places = TIME_PLACES if kind == "time" else QUANTITY_PLACES
    values = OTHER_KINDS + (["5", "1.5", "-1", "1e400"] if kind == "time" else [])
    cases = [(place, v) for place in sorted(places) for v in values]
    texts = [places[place](v) for place, v in cases]
    wrong = []
    for (place, v), text, go in zip(cases, texts, _decode(oracle_binary, tmp_path, texts), strict=True):
        ours = _ours(text)
        if go["accepted"] or ours is None or GO_PREFIX + ours.message != go["message"]:
            wrong.append(f"{place} {v}: kubelet {go}, podnuma {ours}")
    assert wrong == []


def test_such_a_value_ends_the_decoding(oracle_binary: str, tmp_path: Path) -> None:
    """A mismatch saved before it loses; a bad value after it is never met."""
    mismatch = '"generation":"one",'
    texts = {
        "time after a mismatch": (_pod(meta='{"name":"w",' + mismatch + '"creationTimestamp":{}}'),
                                  "metadata.creationTimestamp"),
        "quantity after a mismatch": (_pod(meta='{"name":"w",' + mismatch[:-1] + "}",
                                           spec='{"containers":[{"name":"c","image":"x","resources":{"limits":'
                                                '{"cpu":[]}}}]}'),
                                      "spec.containers[0].resources.limits[cpu]"),
        "time before a bad quantity": (_pod(meta='{"name":"w","creationTimestamp":[]}',
                                            spec='{"containers":[{"name":"c","image":"x","resources":{"limits":'
                                                 '{"cpu":"zz"}}}]}'),
                                       "metadata.creationTimestamp"),
        "quantity before a bad time": ('{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"c","image":"x",'
                                       '"resources":{"limits":{"cpu":true}}}]},"metadata":{"name":"w",'
                                       '"creationTimestamp":"x"}}', "spec.containers[0].resources.limits[cpu]"),
    }
    names = sorted(texts)
    got = _decode(oracle_binary, tmp_path, [texts[n][0] for n in names])
    for name, go in zip(names, got, strict=True):
        ours = _ours(texts[name][0])
        assert ours is not None and ours.path == texts[name][1], (name, ours)
        assert go["message"] == GO_PREFIX + ours.message, (name, go, ours)


# -- null containers ---------------------------------------------------------

NULL_CONTAINERS = {
    "after one": '{"containers":[' + CTR + ",null]}",
    "alone": '{"containers":[null]}',
    "before one": '{"containers":[null,' + CTR + "]}",
    "two": '{"containers":[' + CTR + ",null,null]}",
    "an init container": '{"containers":[' + CTR + '],"initContainers":[null]}',
    "an init container after one": '{"containers":[' + CTR + '],"initContainers":[{"name":"i","image":"x"},null]}',
}


def test_a_null_container_is_the_zero_container(oracle_binary: str, tmp_path: Path) -> None:
    names = sorted(NULL_CONTAINERS)
    texts = [_pod(spec=NULL_CONTAINERS[n]) for n in names]
    # decoding takes it
    assert all(g["accepted"] for g in _decode(oracle_binary, tmp_path, texts))
    # validation refuses it: podnuma's error one of the API server's, word for word
    docs = [json.loads(t) for t in texts]
    answers = validate_oracle(oracle_binary, docs, {})
    wrong = []
    for name, doc, go in zip(names, docs, answers, strict=True):
        ours = _ours(json.dumps(doc))
        assert ours is not None and ours.message == "Required value" and ours.path.endswith("].name"), (name, ours)
        wrong += [f"{name}: {d}" for d in compare_verdicts(PodnumaVerdict(error=str(ours)), go, {})]
    assert wrong == []


# -- a key given twice -------------------------------------------------------

DUPLICATES = {
    "a field": _pod(meta='{"name":"w","name":"v"}'),
    "three times": _pod(meta='{"name":"w","name":"v","name":"u"}'),
    "null the second time": _pod(meta='{"name":"w","namespace":"a","namespace":null}'),
    "a map's key": _pod(meta='{"name":"w","labels":{"a":"1","a":"2"}}'),
    "a list": _pod(spec='{"containers":[' + CTR + '],"containers":[' + CTR + "]}"),
    "in a list's elements": _pod(spec='{"containers":[{"name":"c","name":"d","image":"x"},'
                                      '{"name":"e","image":"x","image":"y"}]}'),
    "a resource": _pod(spec='{"containers":[{"name":"c","image":"x","resources":{"limits":{"cpu":"1","cpu":"2"}}}]}'),
    "kind": '{"apiVersion":"v1","kind":"Pod","kind":"Pod","metadata":{"name":"w"},"spec":{"containers":[' + CTR + "]}}",
    "apiVersion": '{"apiVersion":"v1","apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},"spec":{"containers":['
                  + CTR + "]}}",
    "the kind twice, the last wins": '{"apiVersion":"v1","kind":"Pod","kind":"x","metadata":{"name":"w"},'
                                     '"spec":{"containers":[' + CTR + "]}}",
    "the metadata": '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},"metadata":{"namespace":"s"},'
                    '"spec":{"containers":[' + CTR + "]}}",
    "an unknown field before it": _pod(meta='{"name":"w","zz":1,"name":"v"}'),
    "an unknown field after it": _pod(meta='{"name":"w","name":"v","zz":1}'),
    "an unknown field twice": _pod(meta='{"name":"w","zz":1,"zz":2}'),
    "a wrong type after it": _pod(meta='{"name":"w","name":"v","generation":"x"}'),
    "a bad time after it": _pod(meta='{"name":"w","name":"v","creationTimestamp":"x"}'),
    "a wrong type in the first value": _pod(meta='{"name":"w","generation":"x","generation":1}'),
    "a bad time in the first value": _pod(meta='{"name":"w","creationTimestamp":{},"creationTimestamp":null}'),
    "in a probe": _pod(spec='{"containers":[{"name":"c","image":"x","livenessProbe":{"httpGet":{"port":80,'
                            '"port":81}}}]}'),
    "in the status": _pod()[:-1] + ',"status":{"phase":"Running","phase":"Pending"}}',
    "in another case": _pod(meta='{"name":"w","Name":"v","Name":"u"}'),
}


def test_a_key_given_twice(oracle_binary: str, tmp_path: Path) -> None:
    names = sorted(DUPLICATES)
    wrong = []
    for name, go in zip(names, _decode(oracle_binary, tmp_path, [DUPLICATES[n] for n in names]), strict=True):
        ours = _ours(DUPLICATES[name])
        if go["accepted"] or ours is None:
            wrong.append(f"{name}: kubelet {go}, podnuma {ours}")
            continue
        message = go["message"]
        if message.startswith("strict decoding error: "):
            # (podnuma's: the first of the strict decoding's errors)
            first = message.removeprefix("strict decoding error: ").split(", ")[0]
            what = ours.message.split(' "', 1)[0]
            if f'{what} "{_go_path(ours.path)}"' != first or what not in ("unknown field", "duplicate field"):
                wrong.append(f"{name}: kubelet {message!r}, podnuma {str(ours)!r}")
        elif message != GO_PREFIX + ours.message.removeprefix("not an RFC 3339 time: "):
            wrong.append(f"{name}: kubelet {message!r}, podnuma {str(ours)!r}")
    assert wrong == []


def test_compare_says_so(tmp_path: Path) -> None:
    path = tmp_path / "pod.json"
    path.write_text(_pod(meta='{"name":"w",\n"name":"v"}'))
    r = CliRunner().invoke(cli, ["compare", str(path)])
    assert r.exit_code == 2
    assert f'{path}: metadata.name: duplicate field "name" (line ' in r.stderr, r.stderr


@pytest.mark.parametrize(("doc", "key"), [
    ('{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d",\n"name":"e"},'
     '"spec":{"template":{"spec":{"containers":[' + CTR + ']}}}}', "metadata.name"),
    ('{"apiVersion":"v1","kind":"List","metadata":{},\n"metadata":{},"items":[]}', "metadata"),
], ids=["a Deployment's metadata", "a List's own field"])
def test_a_key_given_twice_outside_a_pod_is_the_readers_refusal(tmp_path: Path, doc: str, key: str) -> None:
    """Outside a Pod (a workload's own fields, the List around pods) a key
    given twice is refused by the file's reader, with its line and column;
    only a Pod's are in the strict decoder's words."""
    path = tmp_path / "w.json"
    path.write_text(doc)
    for command in ("compare", "advise"):
        r = CliRunner().invoke(cli, [command, str(path)])
        assert r.exit_code == 2, (command, r.output)
        name = key.rsplit(".", 1)[-1]
        assert f"{path}: {key}: invalid JSON: duplicate key '{name}' (line 2, column " in r.stderr, r.stderr


# -- the kind, in any case ---------------------------------------------------

REST = '"metadata":{"name":"w"},"spec":{"containers":[' + CTR + "]}"
KINDS = {
    "Kind after kind": ('"apiVersion":"v1","kind":"Pod","Kind":"x",', "Kind"),
    "Kind before kind": ('"apiVersion":"v1","Kind":"x","kind":"Pod",', "Kind"),
    "KIND, the same kind": ('"apiVersion":"v1","kind":"Pod","KIND":"Pod",', "KIND"),
    "Kind only": ('"apiVersion":"v1","Kind":"Pod",', "Kind"),
    # (a kind the scheme has: Go decodes the body as a Service, podnuma
    # refuses it in its own words)
    "Kind only, another": ('"apiVersion":"v1","Kind":"Service",', "*"),
    "Kind empty": ('"apiVersion":"v1","kind":"Pod","Kind":"",', "Kind"),
    "Kind null": ('"apiVersion":"v1","kind":"x","Kind":null,', "kind"),
    "a Kelvin sign": ('"apiVersion":"v1","kind":"Pod","\u212aind":"x",', "\u212aind"),
    "APIVersion after apiVersion": ('"apiVersion":"v1","kind":"Pod","APIVersion":"v2",', "APIVersion"),
    "apiversion before apiVersion": ('"apiversion":"v2","apiVersion":"v1","kind":"Pod",', "apiversion"),
    "kind empty": ('"apiVersion":"v1","kind":"",', ""),
    "no kind": ('"apiVersion":"v1",', ""),
    "no version": ('"kind":"Pod",', ""),
    "version empty": ('"apiVersion":"","kind":"Pod",', ""),
    "kind pod": ('"apiVersion":"v1","kind":"pod",', "kind"),
    "kind Deployment": ('"apiVersion":"apps/v1","kind":"Deployment",', "kind"),
    "version v2": ('"apiVersion":"v2","kind":"Pod",', "apiVersion"),
    "version apps/v1": ('"apiVersion":"apps/v1","kind":"Pod",', "apiVersion"),
    "version /v1": ('"apiVersion":"/v1","kind":"Pod",', ""),
    "version /": ('"apiVersion":"/","kind":"Pod",', ""),
    "version a/b/c": ('"apiVersion":"a/b/c","kind":"Pod",', "apiVersion"),
    "version apps/": ('"apiVersion":"apps/","kind":"Pod",', "apiVersion"),
    "kind a number": ('"apiVersion":"v1","kind":5,', "kind"),
    "kind an object, Kind after": ('"apiVersion":"v1","kind":{},"Kind":"Pod",', "kind"),
    "version a list": ('"apiVersion":[],"kind":"Pod",', "apiVersion"),
    "version true, kind 1": ('"kind":1,"apiVersion":true,', "kind"),
    "a wrong kind before a wrong type": ('"apiVersion":"v1","kind":"Pod","Kind":"x","spec":{"hostNetwork":"x"},',
                                         "Kind"),
    "a wrong kind after a wrong type": ('"apiVersion":"v1","spec":{"priority":"x"},"kind":"Pod","Kind":"x",', "Kind"),
    "a wrong type, the kind right": ('"apiVersion":"v1","kind":"Pod","Kind":"Pod","spec":{"priority":"x"},',
                                     "spec.priority"),
}


def test_the_kind_in_any_case(oracle_binary: str, tmp_path: Path) -> None:
    names = sorted(KINDS)
    texts = []
    for n in names:
        head = KINDS[n][0]
        rest = REST if '"spec"' not in head else REST.split(',"spec"')[0]
        texts.append("{" + head + rest + "}")
    wrong = []
    for name, text, go in zip(names, texts, _decode(oracle_binary, tmp_path, texts), strict=True):
        ours = _ours(text)
        where = KINDS[name][1]
        if go["accepted"] or ours is None:
            if go["accepted"] != (ours is None) or where:
                wrong.append(f"{name}: kubelet {go}, podnuma {ours}")
            continue
        message = go["message"]
        if where == "*":
            continue  # (both refuse it)
        if message.startswith("strict decoding error: "):
            ok = ours.message.startswith(f'unknown field "{ours.path}"') and message.endswith(f'"{ours.path}"')
        elif ours.message == "Object 'apiVersion' is missing":
            ok = message.startswith(GO_PREFIX + ours.message + " in '")  # (Go quotes the body after it)
        else:
            ok = message == GO_PREFIX + ours.message
        if not ok or ours.path != where:
            wrong.append(f"{name}: kubelet {message!r}, podnuma {ours.path}: {ours.message}")
    assert wrong == []
