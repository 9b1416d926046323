"""An API-server pod's JSON number past the float range and its
``metav1.Time`` fields, as the API server's decoding takes them (the
differential cases: tests/oracle/test_pod_decode_differential.py).

* ``1e400`` (read as its text, a ``JSONNumberText``) is a number: refused
  in a string, boolean or struct field with the one wording (``must be a
  string, got a number``) and the field's line, in an integer field in
  Go's words (``json: cannot unmarshal number 1e400 ...``); a quantity
  takes it as before. The same text in YAML is a string (go-yaml), taken.
* A time is refused unless Go's RFC 3339 parse takes it, with Go's reason;
  the first bad time wins over a wrong type met before it.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_types import _time_error, check_pod_types
from podnuma.errors import InputError
from podnuma.golang import jsonnumbers
from podnuma.golang.jsonnumbers import JSONFloat, JSONNumberText, json_float
from podnuma.inputs.pods import load_pod_sources

GATES = load_kubelet_config({}).feature_gates


def _error(text: str, name: str = "p.json") -> str | None:
    (source,) = load_pod_sources(text, name=name)
    try:
        parse_pod(source.data, gates=GATES)
    except InputError as e:
        return str(source.locate(e).in_file(name))
    return None


def _json_pod(container: str, meta: str = '"name": "w"') -> str:
    return ('{"apiVersion": "v1", "kind": "Pod", "metadata": {' + meta + '},\n'
            '"spec": {"containers": [{"name": "c", ' + container + "}]}}")


@pytest.mark.parametrize(("container", "want"), [
    ('"image": 1e400', 'spec.containers[0].image: must be a string, got a number (line 2, column 48)'),
    ('"image": -1e400', 'spec.containers[0].image: must be a string, got a number (line 2, column 48)'),
    ('"image": "x", "command": ["a", 1e400]',
     'spec.containers[0].command[1]: must be a string, got a number (line 2, column 70)'),
    ('"image": "x", "ports": [{"containerPort": 1e400}]',
     "spec.containers[0].ports[0].containerPort: json: cannot unmarshal number 1e400 into Go struct field "
     "ContainerPort.spec.containers.ports.containerPort of type int32"),
    ('"image": "x", "livenessProbe": {"httpGet": {"port": 2e308}}',
     "spec.containers[0].livenessProbe.httpGet.port: json: cannot unmarshal number 2e308 into Go struct field "
     "HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32"),
    ('"image": "x", "tty": 1e400', "spec.containers[0].tty: must be a boolean, got a number"),
    ('"image": "x", "resources": 1e400', "spec.containers[0].resources: must be a mapping, got a number"),
])
def test_a_number_past_the_float_range_is_a_number(container: str, want: str) -> None:
    got = _error(_json_pod(container))
    assert got is not None and got.startswith("p.json: ") and want in got, got


def test_a_quantity_takes_it_as_before() -> None:
    doc = load_pod_sources(_json_pod('"image": "x", "resources": {"limits": {"cpu": 1e400}}'), name="p.json")[0].data
    cpu = doc["spec"]["containers"][0]["resources"]["limits"]["cpu"]
    assert type(cpu) is JSONNumberText and cpu == "1e400"
    check_pod_types(doc)  # (the type check takes it: the quantity is the readers' to judge)


def test_yaml_keeps_it_a_string() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n  containers: [{name: c, image: 1e400}]\n"
    assert _error(text, "p.yaml") is None


def test_the_text_stays_a_string_everywhere_else() -> None:
    value = json_float("1e400")
    assert type(value) is JSONNumberText and value == "1e400" and isinstance(value, str)
    assert type(json_float("0.5")) is float and type(json_float("1e308")) is JSONFloat
    again = pickle.loads(pickle.dumps({"a": value}))["a"]
    assert type(again) is JSONNumberText and again == "1e400"
    # (written back as the bare number, read back as the same)
    text = jsonnumbers.dumps({"a": value, "b": "1e400", "c": json_float("1.0000000000000000001")})
    assert text == '{"a": 1e400, "b": "1e400", "c": 1.0000000000000000001}'
    assert jsonnumbers.with_texts({"a": value}) == {"a": "1e400"}
    assert type(jsonnumbers.with_texts({"a": value})["a"]) is str
    assert type(jsonnumbers.go_json_number("1e400")) is JSONFloat


def test_msgspec_reads_it_the_same() -> None:
    from podnuma.inputs.scenario_stream import _msgspec_decoder

    decode, _ = _msgspec_decoder()
    assert type(decode(b"[1e400]")[0]) is JSONNumberText


def test_the_pod_memo_does_not_key_it_as_a_string() -> None:
    from podnuma.inputs.scenario_pods import _key, _marshal, _msgpack_dumps

    def pod(image: Any) -> dict[str, Any]:
        return {"metadata": {"name": "w"}, "spec": {"containers": [{"name": "c", "image": image}]}}

    for dumps in (_marshal, _msgpack_dumps()):
        assert _key(pod(json_float("1e400")), dumps) is None  # (parsed in full)
        assert _key(pod("1e400"), dumps) is not None


# ---------------------------------------------------------------- times

def _meta_time(value: str) -> str:
    return _json_pod('"image": "x"', '"name": "w", "creationTimestamp": ' + value)


@pytest.mark.parametrize("value", ['"2024-01-01T00:00:00Z"', "null", '"2024-01-01T00:00:00.5+01:00"',
                                   '"2024-02-29T23:59:59,123Z"', '"0000-01-01T00:00:00Z"',
                                   '"2024-01-01T1:02:03-24:00"'])
def test_times_go_takes(value: str) -> None:
    assert _error(_meta_time(value)) is None


@pytest.mark.parametrize(("value", "reason"), [
    ('""', 'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"'),
    ('"2024-01-01t00:00:00z"', 'cannot parse "t00:00:00z" as "T"'),
    ('"2024-01-01T00:00:00"', 'cannot parse "" as "Z07:00"'),
    ('"2024-01-01T24:00:00Z"', 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
    ('"2024-01-01T23:59:60Z"', "second out of range"),
    ('"2023-02-29T00:00:00Z"', "day out of range"),
    ('"2024-01-01T00:00:00+25:00"', "time zone offset hour out of range"),
])
def test_times_go_refuses(value: str, reason: str) -> None:
    got = _error(_meta_time(value))
    assert got is not None and "metadata.creationTimestamp: not an RFC 3339 time: " in got and reason in got, got
    assert "(line 1, column" in got


def test_a_time_in_the_status() -> None:
    text = ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": {"containers": '
            '[{"name": "c", "image": "x"}]}, "status": {"containerStatuses": [{"name": "c", "state": '
            '{"terminated": {"exitCode": 0, "finishedAt": "yesterday"}}}]}}')
    got = _error(text)
    assert got is not None and 'status.containerStatuses[0].state.terminated.finishedAt: not an RFC 3339 time: ' \
        'parsing time "yesterday"' in got, got


def test_a_bad_time_wins_over_a_wrong_type_before_it() -> None:
    got = _error(_json_pod('"image": 5', '"name": "w", "creationTimestamp": "x"'))
    assert got is not None and "metadata.creationTimestamp" in got, got


def test_the_quick_yes_never_says_yes_where_go_says_no() -> None:
    from podnuma.golang.rfc3339 import _parse_error

    base = "2024-01-02T03:04:05.5+01:30"
    texts = [base[:i] + ch + base[i + 1:] for i in range(len(base)) for ch in "0123456789:-+.,TZ"]
    texts += [f"2024-{m:02d}-{d:02d}T00:00:00Z" for m in range(14) for d in range(33)]
    for text in texts:
        assert _time_error(text) == _parse_error(text), text
