"""A key given more than once in a static pod's manifest, against the
kubelet's file source (``kubelet-oracle staticpod``).

JSON: the kubelet's decoder (sigs.k8s.io/json, encoding/json's rules)
meets every occurrence in turn and decodes each into the field: an
occurrence that does not decode counts even when a later one would (a
type mismatch is kept and returned at the end, a ``metav1.Time`` or a
quantity that does not parse ends the decoding at once); the value that
stays is the last one (an object merged into the earlier one). The
version/kind look-up meets every ``kind`` and ``apiVersion`` too.

YAML: the kubelet's YAML-to-JSON step keeps a repeated key's last value
(an object replaces the earlier one: no merge), so only that is decoded.

Verdicts (the kubelet's whole message inside podnuma's), and UID pairs
(a repeated key against its last value written once).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.staticpod_cases import decoded_cases
from tests.oracle.test_staticpod_differential import HEAD, kubelet_words
from tests.oracle.test_staticpod_uid import _oracle_uid, _our_uid

_T = '"2024-01-01T00:00:00Z"'
_CTR = '{"name":"c","image":"x"}'


def _pod(meta: str = '"name":"web"', spec: str = f'"containers":[{_CTR}]', top: str = "") -> str:
    head = top or '"apiVersion":"v1","kind":"Pod"'
    return "{" + head + ',"metadata":{' + meta + '},"spec":{' + spec + "}}"


def _ctr(body: str) -> str:
    return _pod(spec='"containers":[{"name":"c","image":"x",' + body + "}]")


def _yaml(meta: str, spec: str = "  containers: [{name: c, image: x}]\n") -> str:
    return HEAD + "metadata:\n" + meta + "spec:\n" + spec


_QTY = "quantities must match the regular expression"

#: name -> (manifest, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    "creation-bad-then-good.json": (_pod(f'"name":"web","creationTimestamp":"x","creationTimestamp":{_T}'),
                                    'couldn\'t parse as pod(parsing time "x" as "2006-01-02T15:04:05Z07:00": '
                                    'cannot parse "x" as "2006")'),
    "creation-good-then-bad.json": (_pod(f'"name":"web","creationTimestamp":{_T},"creationTimestamp":"x"'),
                                    'parsing time "x"'),
    "creation-good-twice.json": (_pod(f'"name":"web","creationTimestamp":{_T},"creationTimestamp":{_T}'), None),
    "deletion-number-then-null.json": (_pod('"name":"web","deletionTimestamp":5,"deletionTimestamp":null'),
                                       "json: cannot unmarshal number into Go struct field "
                                       "ObjectMeta.metadata.deletionTimestamp of type string"),
    "limits-bad-then-good.json": (_ctr('"resources":{"limits":{"cpu":"1x","cpu":"1"}}'), _QTY),
    "limits-good-then-bad.json": (_ctr('"resources":{"limits":{"cpu":"1","cpu":"1x"}}'), _QTY),
    "limits-good-twice.json": (_ctr('"resources":{"limits":{"cpu":"1","cpu":"2"}}'), None),
    "resources-repeated-bad-first.json": (
        _ctr('"resources":{"requests":{"memory":"1Q"}},"resources":{"limits":{"cpu":"1"}}'), _QTY),
    "name-number-then-string.json": (_pod('"name":5,"name":"web"'),
                                     "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name "
                                     "of type string"),
    "name-string-then-number.json": (_pod('"name":"web","name":5'), "ObjectMeta.metadata.name of type string"),
    "name-twice.json": (_pod('"name":"other","name":"web"'), None),
    "managed-time-bad-then-good.json": (_pod(f'"name":"web","managedFields":[{{"manager":"m","operation":"Apply",'
                                             f'"time":"bad","time":{_T}}}]'), 'parsing time "bad"'),
    "generation-then-repeated-time.json": (
        _pod(f'"name":"web","generation":"x","creationTimestamp":{_T},"creationTimestamp":"y"'), 'parsing time "y"'),
    "kind-number-then-pod.json": (_pod(top='"apiVersion":"v1","kind":5,"kind":"Pod"'),
                                  "couldn't get version/kind; json parse error: json: cannot unmarshal number into "
                                  "Go struct field .kind of type string"),
    "api-version-after-kind.json": (_pod(top='"kind":"Pod","apiVersion":"v1","kind":true,"apiVersion":5'),
                                    "cannot unmarshal bool into Go struct field .kind of type string"),
    "kind-deployment-then-pod.json": (_pod(top='"apiVersion":"v1","kind":"Deployment","kind":"Pod"'), None),
    "containers-repeated-bad-first.json": (
        _pod(spec='"containers":[{"name":5}],' + f'"containers":[{_CTR}]'),
        "json: cannot unmarshal number into Go struct field Container.spec.containers.name of type string"),
    "metadata-merged.json": (_pod(top='"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"x"}'), None),
    "metadata-repeated-bad-first.json": (
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labels":{"a":1}},"metadata":{"name":"web"},'
        f'"spec":{{"containers":[{_CTR}]}}}}',
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
    "labels-repeated-number-first.json": (_pod('"name":"web","labels":{"a":1,"a":"b"}'),
                                          "ObjectMeta.metadata.labels of type string"),
    "port-bad-then-good.json": (_ctr('"ports":[{"containerPort":"a"}],"ports":[{"containerPort":80}]'),
                                "json: cannot unmarshal string into Go struct field "
                                "ContainerPort.spec.containers.ports.containerPort of type int32"),
    "ports-type-then-quantity.json": (_ctr('"ports":5,"ports":[],"resources":{"limits":{"cpu":"1x"}}'), _QTY),
    # (a null occurrence: a plain value or a struct held by value stays, a
    # pointer, map or slice becomes nil)
    "spec-then-null.json": ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},'
                            f'"spec":{{"containers":[{_CTR}]}},"spec":null}}', None),
    "metadata-then-null.json": ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"metadata":null,'
                                f'"spec":{{"containers":[{_CTR}]}}}}', None),
    "metadata-then-number.json": ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"metadata":5,'
                                  f'"spec":{{"containers":[{_CTR}]}}}}',
                                  "json: cannot unmarshal number into Go struct field Pod.metadata of type "
                                  "v1.ObjectMeta"),
    "name-then-null.json": (_pod('"name":"web","name":null'), None),
    "kind-then-null.json": (_pod(top='"apiVersion":"v1","kind":"Pod","kind":null'), None),
    "resources-then-null.json": (_ctr('"resources":{"limits":{"cpu":"1"}},"resources":null'), None),
    "security-context-then-null.json": (_ctr('"securityContext":{"privileged":true},"securityContext":null'),
                                        None),
    "deadline-zero-then-null.json": (_pod(spec='"activeDeadlineSeconds":0,"activeDeadlineSeconds":null,'
                                               f'"containers":[{_CTR}]'), None),
    "deadline-null-then-zero.json": (_pod(spec='"activeDeadlineSeconds":null,"activeDeadlineSeconds":0,'
                                               f'"containers":[{_CTR}]'), "spec.activeDeadlineSeconds"),
    "host-network-then-null.json": (
        _pod(spec='"hostNetwork":true,"hostNetwork":null,"containers":[{"name":"c","image":"x","ports":'
                  '[{"containerPort":80,"hostPort":81}]}]'), "must match `containerPort` when `hostNetwork` is true"),
    "unknown-field-merged.json": ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","bogus":{"a":1}},'
                                  f'"metadata":{{"namespace":"x","other":5}},"spec":{{"containers":[{_CTR}]}}}}',
                                  None),
    "yaml-name-twice.yaml": (_yaml("  name: other\n  name: web\n"), None),
    "yaml-name-number-first.yaml": (_yaml("  name: 5\n  name: web\n"), None),
    "yaml-name-number-last.yaml": (_yaml("  name: web\n  name: [5]\n"),
                                   "cannot unmarshal array into Go struct field ObjectMeta.metadata.name"),
    "yaml-creation-bad-first.yaml": (_yaml("  name: web\n  creationTimestamp: x\n"
                                           "  creationTimestamp: '2024-01-01T00:00:00Z'\n"), None),
    "yaml-limits-bad-first.yaml": (_yaml("  name: web\n", "  containers: [{name: c, image: x, resources: "
                                                          "{limits: {cpu: 1x, cpu: '1'}}}]\n"), None),
    "yaml-metadata-replaced.yaml": (HEAD + "metadata: {name: web}\nmetadata: {namespace: foo}\n"
                                    "spec:\n  containers: [{name: c, image: x}]\n",
                                    "invalid pod: name is needed for the pod"),
}


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), CASES)


def test_the_json_cases_are_json() -> None:
    for name, (text, _) in CASES.items():
        if name.endswith(".json"):
            json.loads(text)  # (Python's reader takes a repeated key too)


@pytest.mark.parametrize("name", sorted(CASES))
def test_repeated_keys_as_the_kubelet_decodes_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    phrase = CASES[name][1]
    if phrase is None:
        assert "error" not in kubelet, kubelet["error"]
        assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
        assert (ours["name"], ours["namespace"], ours["qosClass"]) == (
            kubelet["name"], kubelet["namespace"], kubelet["qosClass"])
        return
    assert "error" in kubelet and phrase in kubelet["error"], kubelet
    assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
    assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])


#: name -> (a manifest with a repeated key, the same written once)
PAIRS: dict[str, tuple[str, str]] = {
    "json-name": (_pod('"name":"other","name":"web"'), _pod('"name":"web"')),
    "json-metadata-merged": (_pod(top='"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"x"}'),
                             _pod('"namespace":"x","name":"web"')),
    "json-limits": (_ctr('"resources":{"limits":{"cpu":"1","cpu":"2"}}'),
                    _ctr('"resources":{"limits":{"cpu":"2"}}')),
    "json-spec-then-null": ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},'
                            f'"spec":{{"containers":[{_CTR}]}},"spec":null}}', _pod()),
    "json-labels-then-null": (_pod('"name":"web","labels":{"a":"b"},"labels":null'), _pod()),
    "json-resources-then-null": (_ctr('"resources":{"limits":{"cpu":"1"}},"resources":null'),
                                 _ctr('"resources":{"limits":{"cpu":"1"}}')),
    "json-security-context-then-null": (_ctr('"securityContext":{"privileged":true},"securityContext":null'),
                                        _pod()),
    "yaml-metadata-replaced": (HEAD + "metadata: {name: other, namespace: x}\nmetadata: {name: web}\n"
                               "spec:\n  containers: [{name: c, image: x}]\n",
                               HEAD + "metadata: {name: web}\nspec:\n  containers: [{name: c, image: x}]\n"),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_uid_of_a_repeated_key(oracle_binary: str, tmp_path: Path, name: str) -> None:
    path = tmp_path / "web.yaml"
    kubelet, ours = [], []
    for text in PAIRS[name]:
        path.write_text(text)
        kubelet.append(_oracle_uid(oracle_binary, path, {}))
        ours.append(_our_uid(path, {}))
    assert (ours[0] == ours[1]) == (kubelet[0] == kubelet[1]), (kubelet, ours)
