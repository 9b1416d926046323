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
    # (the version/kind look-up is the standard library's decoder: a key
    # matches ``kind``/``apiVersion`` whatever its case, by Go's fold, the
    # Kelvin sign as a K, the long s as an s; the last match wins)
    "kind-then-cased-deployment.json": (_pod(top='"apiVersion":"v1","kind":"Pod","Kind":"Deployment"'),
                                        'couldn\'t parse as pod(no kind "Deployment" is registered for version '
                                        '"v1" in scheme "pkg/runtime/scheme.go:111")'),
    "cased-deployment-then-kind.json": (_pod(top='"apiVersion":"v1","KIND":"Deployment","kind":"Pod"'), None),
    "kind-cased-number.json": (_pod(top='"apiVersion":"v1","kind":"Pod","Kind":5'),
                               "couldn't get version/kind; json parse error: json: cannot unmarshal number into "
                               "Go struct field .kind of type string"),
    "api-version-cased-twice.json": (_pod(top='"kind":"Pod","apiVersion":"v1","APIVERSION":"apps/v1"'),
                                     'no kind "Pod" is registered for version "apps/v1"'),
    "kind-upper-once.json": (_pod(top='"apiVersion":"v1","KIND":"Pod"'), None),
    "kind-kelvin-once.json": (_pod(top='"apiVersion":"v1","\u212aind":"Pod"'), None),
    "api-version-long-s-once.json": (_pod(top='"apiVer\u017fion":"v1","kind":"Pod"'), None),
    "kind-dotless-i-once.json": (_pod(top='"apiVersion":"v1","k\u0131nd":"Pod"'), "Object 'Kind' is missing"),
    "yaml-kind-upper-once.yaml": ("apiVersion: v1\nKIND: Pod\nmetadata: {name: web}\n"
                                  "spec:\n  containers: [{name: c, image: x}]\n", None),
    "yaml-kind-cased-twice.yaml": ("apiVersion: v1\nkind: Deployment\nKind: Pod\nmetadata: {name: web}\n"
                                   "spec:\n  containers: [{name: c, image: x}]\n",
                                   'no kind "Deployment" is registered for version "v1"'),
    # (a struct a weighted scheduling term holds by value: a null leaves it)
    "preference-then-null.json": (
        _pod(spec=f'"containers":[{_CTR}],"affinity":{{"nodeAffinity":{{"preferredDuringSchedulingIgnored'
                  'DuringExecution":[{"weight":1,"preference":{"matchExpressions":[{"key":"a","operator":"Bad"}]},'
                  '"preference":null}]}}'),
        "preference.matchExpressions[0].operator: Invalid value: \"Bad\": not a valid selector operator"),
    "pod-affinity-term-then-null.json": (
        _pod(spec=f'"containers":[{_CTR}],"affinity":{{"podAntiAffinity":{{"preferredDuringSchedulingIgnored'
                  'DuringExecution":[{"weight":1,"podAffinityTerm":{"topologyKey":"k","labelSelector":'
                  '{"matchLabels":{"a b":"c"}}},"podAffinityTerm":null}]}}'),
        "podAffinityTerm.labelSelector.matchLabels: Invalid value: \"a b\""),
    # (an IntOrString: its unmarshaller makes a null an int, the int half
    # as the earlier occurrences left it)
    "http-port-string-then-null.json": (
        _ctr('"ports":[{"name":"http","containerPort":80}],"livenessProbe":{"httpGet":{"port":"http","port":null}}'),
        "spec.containers[0].livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"),
    "tcp-port-number-string-null.json": (
        _ctr('"readinessProbe":{"tcpSocket":{"port":8080,"port":"http","port":null}}'), None),
    "tcp-port-number-then-null.json": (_ctr('"readinessProbe":{"tcpSocket":{"port":8080,"port":null}}'), None),
    # (a repeated array: decoded into the slice the earlier one left, each
    # element into the element there; the length cut to the new count, the
    # old elements past it reused by a later, longer array; an empty array
    # a fresh slice)
    "volumes-decoded-into-earlier.json": (
        _pod(spec=f'"containers":[{_CTR}],"volumes":[{{"name":"v","emptyDir":{{}}}}],'
                  '"volumes":[{"name":"w","hostPath":{"path":"/x"}}]'),
        "invalid pod: [spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type]"),
    "containers-then-null-element.json": (_pod(spec=f'"containers":[{_CTR}],"containers":[null]'), None),
    "env-value-from-then-value.json": (
        _ctr('"env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],'
             '"env":[{"name":"A","value":"x"}]'),
        "spec.containers[0].env[0].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty"),
    "tolerations-into-earlier.json": (
        _pod(spec=f'"containers":[{_CTR}],"tolerations":[{{"key":"a","operator":"Exists"}}],'
                  '"tolerations":[{"value":"x"}]'),
        "spec.tolerations[0].operator: Invalid value: \"x\": value must be empty when `operator` is 'Exists'"),
    "sub-path-then-expr.json": (
        _pod(spec='"volumes":[{"name":"v","emptyDir":{}}],"containers":[{"name":"c","image":"x",'
                  '"volumeMounts":[{"name":"v","mountPath":"/a","subPath":"p"}],'
                  '"volumeMounts":[{"name":"v","mountPath":"/a","subPathExpr":"q"}]}]'),
        "subPathExpr: Invalid value: \"q\": subPathExpr and subPath are mutually exclusive"),
    "longer-then-shorter.json": (
        _pod(spec=f'"containers":[{_CTR},{{"name":"d","image":"y","ports":[{{"containerPort":0}}]}}],'
                  f'"containers":[{_CTR}]'), None),
    "stale-element-reused.json": (
        _pod(spec=f'"containers":[{_CTR}],"volumes":[{{"name":"a","emptyDir":{{}}}},{{"name":"b","emptyDir":{{}}}}],'
                  '"volumes":[{"name":"a"}],"volumes":[{"name":"a"},{"name":"c","hostPath":{"path":"/x"}}]'),
        "spec.volumes[1].hostPath: Forbidden: may not specify more than 1 volume type"),
    "empty-array-resets.json": (
        _pod(spec=f'"containers":[{_CTR}],"volumes":[{{"name":"a","emptyDir":{{}}}}],"volumes":[],'
                  '"volumes":[{"name":"c","hostPath":{"path":"/x"}}]'), None),
    "divisor-bad-then-null.json": (_ctr('"env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"5","divisor":null}}}]'), None),
    "yaml-name-twice.yaml": (_yaml("  name: other\n  name: web\n"), None),
    "yaml-name-number-first.yaml": (_yaml("  name: 5\n  name: web\n"), None),
    "yaml-name-number-last.yaml": (_yaml("  name: web\n  name: [5]\n"),
                                   "cannot unmarshal array into Go struct field ObjectMeta.metadata.name"),
    "yaml-creation-bad-first.yaml": (_yaml("  name: web\n  creationTimestamp: x\n"
                                           "  creationTimestamp: '2024-01-01T00:00:00Z'\n"), None),
    "yaml-limits-bad-first.yaml": (_yaml("  name: web\n", "  containers: [{name: c, image: x, resources: "
                                                          "{limits: {cpu: 1x, cpu: '1'}}}]\n"), None),
    # (the type look-up matches ``kind`` and ``apiVersion`` by a fold, the
    # last match winning: a winning spelling other than the exact one is the
    # pod's type, one that loses is not)
    "kind-fold-wins.json": (_pod(top='"apiVersion":"v1","kind":"Deployment","Kind":"Pod"'), None),
    "kind-empty-then-upper.json": (_pod(top='"apiVersion":"v1","kind":"","KIND":"Pod"'), None),
    "kind-kelvin-wins.json": (_pod(top='"apiVersion":"v1","kind":"Deployment","\u212aind":"Pod"'), None),
    "kind-fold-loses.json": (_pod(top='"apiVersion":"v1","Kind":"Pod","kind":"Deployment"'),
                             'no kind "Deployment" is registered for version "v1"'),
    "apiversion-upper-wins.json": (_pod(top='"apiVersion":"apps/v1","APIVERSION":"v1","kind":"Pod"'), None),
    "apiversion-long-s-wins.json": (_pod(top='"apiVersion":"apps/v1","apiVer\u017fion":"v1","kind":"Pod"'),
                                    None),
    "apiversion-fold-loses.json": (_pod(top='"APIVERSION":"v1","apiVersion":"apps/v1","kind":"Pod"'),
                                   'no kind "Pod" is registered for version "apps/v1"'),
    # (YAML: the keys sorted first; ``KIND`` sorts before ``kind``, the Kelvin sign after)
    "yaml-kind-upper-loses.yaml": ("apiVersion: v1\nkind: Deployment\nKIND: Pod\nmetadata: {name: web}\n"
                                   "spec:\n  containers: [{name: c, image: x}]\n",
                                   'no kind "Deployment" is registered for version "v1"'),
    "yaml-kind-kelvin-wins.yaml": ("apiVersion: v1\nkind: Deployment\n\u212aIND: Pod\nmetadata: {name: web}\n"
                                   "spec:\n  containers: [{name: c, image: x}]\n", None),
    "yaml-metadata-replaced.yaml": (HEAD + "metadata: {name: web}\nmetadata: {namespace: foo}\n"
                                    "spec:\n  containers: [{name: c, image: x}]\n",
                                    "invalid pod: name is needed for the pod"),
}


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), CASES)


def _repeats(text: str) -> bool:
    """Whether some object of the JSON text gives a key twice (as written;
    ``kind`` and ``apiVersion`` in any case)."""
    seen: list[bool] = []

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k.casefold() if k.casefold() in ("kind", "apiversion") else k for k, _ in pairs]
        seen.append(len(set(keys)) < len(keys))
        return dict(pairs)

    json.loads(text, object_pairs_hook=hook)
    return any(seen)


def test_the_json_cases_are_json_with_a_repeated_key() -> None:
    for name, (text, _) in CASES.items():
        if not name.endswith(".json"):
            continue
        top = json.loads(text)
        if name.endswith("-once.json"):
            # (one differently spelt type-meta key: no repeat, no canonical spelling)
            assert not _repeats(text) and not ({"kind", "apiVersion"} <= set(top)), name
        else:
            assert _repeats(text), name


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
    # (a repeated array decoded into the earlier one's elements)
    "json-containers-then-null-element": (_pod(spec=f'"containers":[{_CTR}],"containers":[null]'), _pod()),
    "json-env-into-earlier": (_ctr('"env":[{"name":"A","value":"x"}],"env":[{"name":"B"}]'),
                              _ctr('"env":[{"name":"B","value":"x"}]')),
    "json-env-shorter": (_ctr('"env":[{"name":"A"},{"name":"B"}],"env":[{"name":"C"}]'),
                         _ctr('"env":[{"name":"C"}]')),
    "json-env-stale-element-reused": (
        _pod(spec='"containers":[{"name":"c","image":"x","env":[{"name":"A"},{"name":"B","value":"v"}]}],'
                  '"containers":[{"name":"c","image":"x","env":[{"name":"C"}]}],'
                  '"containers":[{"name":"c","image":"x","env":[{"name":"D"},{"name":"E"}]}]'),
        _ctr('"env":[{"name":"D"},{"name":"E"}]')),
    "json-env-stale-element-as-reused": (
        _pod(spec='"containers":[{"name":"c","image":"x","env":[{"name":"A"},{"name":"B","value":"v"}]}],'
                  '"containers":[{"name":"c","image":"x","env":[{"name":"C"}]}],'
                  '"containers":[{"name":"c","image":"x","env":[{"name":"D"},{"name":"E"}]}]'),
        _ctr('"env":[{"name":"D"},{"name":"E","value":"v"}]')),
    "json-kind-upper": (_pod(top='"apiVersion":"v1","KIND":"Pod"'), _pod()),
    # (an IntOrString keeps the half a later occurrence does not set)
    "json-port-string-then-number": (_ctr('"readinessProbe":{"tcpSocket":{"port":"http","port":80}}'),
                                     _ctr('"readinessProbe":{"tcpSocket":{"port":80}}')),
    "json-port-number-then-string": (_ctr('"ports":[{"name":"http","containerPort":80}],'
                                          '"readinessProbe":{"tcpSocket":{"port":80,"port":"http"}}'),
                                     _ctr('"ports":[{"name":"http","containerPort":80}],'
                                          '"readinessProbe":{"tcpSocket":{"port":"http"}}')),
    "json-port-number-then-number": (_ctr('"readinessProbe":{"tcpSocket":{"port":81,"port":80}}'),
                                     _ctr('"readinessProbe":{"tcpSocket":{"port":80}}')),
    "json-port-number-then-null": (_ctr('"readinessProbe":{"tcpSocket":{"port":80,"port":null}}'),
                                   _ctr('"readinessProbe":{"tcpSocket":{"port":80}}')),
    # (a plain scalar of a struct podnuma does not type: a null leaves it)
    "json-nfs-read-only-then-null": (
        _pod(spec=f'"containers":[{_CTR}],"volumes":[{{"name":"v","nfs":{{"server":"s","path":"/p",'
                  '"readOnly":true,"readOnly":null}}]'),
        _pod(spec=f'"containers":[{_CTR}],"volumes":[{{"name":"v","nfs":{{"server":"s","path":"/p",'
                  '"readOnly":true}}]')),
    "json-nfs-server-then-null": (
        _pod(spec=f'"containers":[{_CTR}],"volumes":[{{"name":"v","nfs":{{"server":"s","path":"/p",'
                  '"server":null}}]'),
        _pod(spec=f'"containers":[{_CTR}],"volumes":[{{"name":"v","nfs":{{"server":"s","path":"/p"}}}}]')),
    # (a divisor, a quantity held by value: a null after a value zeroes the
    # amount and keeps the text and format: unset to validation, not to the hash)
    "json-divisor-then-null": (_ctr('"env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"5","divisor":null}}}]'),
                               _ctr('"env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu"}}}]')),
    "json-divisor-1m-then-null": (_ctr('"env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"1m","divisor":null}}}]'),
                                  _ctr('"env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":null}}}]')),
    "json-divisor-then-null-twice": (_ctr('"env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"5","divisor":null}}}]'),
                                     _ctr('"env":[{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"5","divisor":null,"divisor":null}}}]')),
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
