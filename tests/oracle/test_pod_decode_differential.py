"""An API-server pod's JSON decoding (its known fields' types) against
``kubelet-oracle decode`` (the API server's strict v1 decoding of a create
request, k8s.io/kubernetes v1.37.2: no defaults, no validation), read as
it is written (no YAML conversion: a number keeps its text).

* A ``metav1.Time`` (``metadata.creationTimestamp``, ``status.startTime``,
  a condition's ``lastTransitionTime``, a container state's ``startedAt``):
  ``null`` is no time, any string Go's ``time.Parse(time.RFC3339, ...)``
  refuses is refused (``""`` too), with Go's reason in podnuma's message;
  a value of another JSON kind (``5``, ``{}``) with Go's type error, whole.
  Hand-written times and generated ones (each character of a valid time
  replaced, the time cut short, a character dropped).
* A JSON number past the float range (``1e400``) is a number to Go: a
  field of any type but a quantity refuses it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from podnuma.api.pod_types import check_pod_types
from podnuma.errors import InputError
from podnuma.inputs.documents import load_json

BASE = "2024-01-02T03:04:05Z"


def _generated_times() -> list[str]:
    times: list[str] = []
    for i in range(len(BASE)):
        for ch in "0912-:TtZz.+ x":
            times.append(BASE[:i] + ch + BASE[i + 1:])
        times.append(BASE[:i])
        times.append(BASE[:i] + BASE[i + 1:])
    return times


HAND_TIMES = [
    "", " ", "2024-01-01T00:00:00Z", "2024-01-01t00:00:00z", "2024-01-01T00:00:00z", "2024-01-01t00:00:00Z",
    "2024-01-01T00:00:00.5Z", "2024-01-01T00:00:00,5Z", "2024-01-01T00:00:00.123456789123Z",
    "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00.", "2024-01-01T00:00:00+01:00", "2024-01-01T00:00:00-01:30",
    "2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00+25:00", "2024-01-01T00:00:00+01:60",
    "2024-01-01T00:00:00+01:61", "2024-01-01T00:00:00+0100", "2024-01-01T00:00:00+1:00",
    "2024-01-01T00:00:00", "2024-01-01T24:00:00Z", "2024-01-01T23:59:60Z", "2024-01-01T23:60:00Z",
    "2024-01-01T1:02:03Z", "2024-01-01T123:02:03Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
    "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T00:00:00Z",
    "2024-04-31T00:00:00Z", "2024-00-01T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-00T00:00:00Z",
    "2024-1-01T00:00:00Z", "2024-01-1T00:00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00Z",
    " 2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z ", "2024-01-01T00:00:00ZZ", "+2024-01-01T00:00:00Z",
    "20240-01-01T00:00:00Z", "２０２４-01-01T00:00:00Z", "2024-01-01T00:00:00.５Z", "2024-01-01T00:00:00.5+01:00",
    "yesterday", "2024", "2024-01-01", "2024-01-01T00:00:00-00:00", "2024-01-01T00:00:00+00:00x",
]
TIMES = list(dict.fromkeys(HAND_TIMES + _generated_times()))

#: where a time goes: a function of the time's JSON text to the pod
PLACES = {
    "creationTimestamp": lambda t: {"metadata": {"name": "w", "creationTimestamp": t}},
    "deletionTimestamp": lambda t: {"metadata": {"name": "w", "deletionTimestamp": t}},
    "managedFields.time": lambda t: {"metadata": {"name": "w", "managedFields": [{"manager": "m", "time": t}]}},
    "startTime": lambda t: {"metadata": {"name": "w"}, "status": {"startTime": t}},
    "conditions.lastTransitionTime": lambda t: {"metadata": {"name": "w"}, "status": {"conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": t}]}},
    "state.running.startedAt": lambda t: {"metadata": {"name": "w"}, "status": {"containerStatuses": [
        {"name": "c", "state": {"running": {"startedAt": t}}}]}},
}


def _pod_text(extra: dict[str, Any], token: str, value: str) -> str:
    """A pod's JSON with ``extra``'s fields; the string ``token`` replaced
    by ``value`` (JSON text, spliced in as written)."""
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                           "spec": {"containers": [{"name": "c", "image": "x"}]}, **extra}
    if "spec" in extra:
        pod["spec"] = extra["spec"]
    text = json.dumps(pod)
    assert text.count(json.dumps(token)) == 1
    return text.replace(json.dumps(token), value)


def _decode(oracle_binary: str, tmp_path: Path, texts: list[str]) -> list[dict[str, Any]]:
    path = tmp_path / "pods.json"
    path.write_text("[" + ",\n".join(texts) + "]")
    out = subprocess.run([oracle_binary, "decode", str(path)], capture_output=True, text=True, check=True)
    got = [json.loads(line) for line in out.stdout.splitlines()]
    assert [g["index"] for g in got] == list(range(len(texts)))
    return got


def _ours(text: str) -> InputError | None:
    try:
        check_pod_types(load_json(text, name="pod.json"))
    except InputError as e:
        return e
    return None


def _differences(oracle_binary: str, tmp_path: Path, texts: list[str], reason: Any) -> list[str]:
    """Each text whose fate differs between the API server and podnuma;
    ``reason(ours)``: the phrase of podnuma's message that Go's must hold."""
    wrong = []
    for text, go in zip(texts, _decode(oracle_binary, tmp_path, texts), strict=True):
        ours = _ours(text)
        if go["accepted"] != (ours is None):
            wrong.append(f"{text}: kubelet {go}, podnuma {ours}")
        elif ours is not None and reason(ours) not in go["message"]:
            wrong.append(f"{text}: kubelet {go['message']!r}, podnuma {str(ours)!r}")
    return wrong


def _time_reason(err: InputError) -> str:
    message = str(err)
    if "not an RFC 3339 time: " in message:
        return message.split("not an RFC 3339 time: ", 1)[1]
    # (a value of another JSON kind: Go's type error, whole)
    assert err.message.startswith("json: cannot unmarshal "), message
    return err.message


def test_times_at_creation_timestamp(oracle_binary: str, tmp_path: Path) -> None:
    texts = [_pod_text(PLACES["creationTimestamp"]("@T@"), "@T@", json.dumps(t)) for t in TIMES]
    assert _differences(oracle_binary, tmp_path, texts, _time_reason) == []


@pytest.mark.parametrize("place", sorted(PLACES))
def test_times_at_each_place(oracle_binary: str, tmp_path: Path, place: str) -> None:
    values = [json.dumps(t) for t in HAND_TIMES] + ["null", "5", "1.5", "true", "1e400", "{}", "[]"]
    texts = [_pod_text(PLACES[place]("@T@"), "@T@", v) for v in values]
    assert _differences(oracle_binary, tmp_path, texts, _time_reason) == []


def test_a_bad_time_wins_over_a_wrong_type_before_it(oracle_binary: str, tmp_path: Path) -> None:
    texts = [_pod_text({"metadata": {"name": "w", "generation": "one", "creationTimestamp": "@T@"}}, "@T@", v)
             for v in ('"x"', '"2024-01-02T03:04:05Z"', "null")]
    got = _decode(oracle_binary, tmp_path, texts)
    assert ['parsing time "x"' in g["message"] for g in got] == [True, False, False]
    messages = [str(_ours(t)) for t in texts]
    assert "metadata.creationTimestamp: not an RFC 3339 time: parsing time \"x\"" in messages[0]
    go_words = "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64"
    assert all(f"metadata.generation: {go_words}" in m for m in messages[1:])
    assert all(g["message"].endswith(go_words) for g in got[1:])


#: where a number goes (the token "@N@" in the pod) and whether Go takes a number there
NUMBER_PLACES: dict[str, tuple[dict[str, Any], bool]] = {
    "name": ({"metadata": {"name": "@N@"}}, False),
    "annotation": ({"metadata": {"name": "w", "annotations": {"a": "@N@"}}}, False),
    "finalizer": ({"metadata": {"name": "w", "finalizers": ["@N@"]}}, False),
    "generation": ({"metadata": {"name": "w", "generation": "@N@"}}, False),
    "metadata": ({"metadata": "@N@"}, False),
    "image": ({"spec": {"containers": [{"name": "c", "image": "@N@"}]}}, False),
    "command": ({"spec": {"containers": [{"name": "c", "image": "x", "command": ["@N@"]}]}}, False),
    "containerPort": ({"spec": {"containers": [{"name": "c", "image": "x",
                                                 "ports": [{"containerPort": "@N@"}]}]}}, False),
    "probe-port": ({"spec": {"containers": [{"name": "c", "image": "x",
                                              "livenessProbe": {"httpGet": {"port": "@N@"}}}]}}, False),
    "stdin": ({"spec": {"containers": [{"name": "c", "image": "x", "stdin": "@N@"}]}}, False),
    "priority": ({"spec": {"containers": [{"name": "c", "image": "x"}], "priority": "@N@"}}, False),
    "hostNetwork": ({"spec": {"containers": [{"name": "c", "image": "x"}], "hostNetwork": "@N@"}}, False),
    "resources": ({"spec": {"containers": [{"name": "c", "image": "x", "resources": "@N@"}]}}, False),
    "startTime": ({"metadata": {"name": "w"}, "status": {"startTime": "@N@"}}, False),
    "cpu": ({"spec": {"containers": [{"name": "c", "image": "x",
                                      "resources": {"limits": {"cpu": "@N@"}}}]}}, True),
    "overhead": ({"spec": {"containers": [{"name": "c", "image": "x"}], "overhead": {"memory": "@N@"}}}, True),
    "sizeLimit": ({"spec": {"containers": [{"name": "c", "image": "x"}],
                            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "@N@"}}]}}, True),
}


def test_numbers_past_the_float_range(oracle_binary: str, tmp_path: Path) -> None:
    numbers = ["1e400", "-1e400", "1E309", "2e308", "1.5e999"]
    cases = [(place, n) for place in sorted(NUMBER_PLACES) for n in numbers]
    texts = [_pod_text(NUMBER_PLACES[place][0], "@N@", n) for place, n in cases]
    got = _decode(oracle_binary, tmp_path, texts)
    assert [g["accepted"] for g in got] == [NUMBER_PLACES[place][1] for place, _ in cases], got
    for (place, n), text, go in zip(cases, texts, got, strict=True):
        ours = _ours(text)
        assert (ours is None) == go["accepted"], (place, n, ours, go)
        if ours is not None:
            assert "cannot unmarshal number" in go["message"], go
            if place in ("containerPort", "probe-port", "priority", "generation", "startTime"):
                # (an integer field, a time: the refusal in Go's words)
                assert ours.message in go["message"], (place, str(ours), go)
            else:
                assert str(ours).endswith("got a number"), (place, str(ours))
