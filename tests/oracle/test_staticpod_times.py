"""Times in a static pod's metadata against the kubelet's file source
(``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
pkg/kubelet/config/common.go). A managed field's ``time``,
``creationTimestamp`` and ``deletionTimestamp`` are ``metav1.Time``, which
decodes itself (``UnmarshalJSON``): ``null`` is no time, a value that is
no string is refused as a string field is (``json: cannot unmarshal number
into Go struct field ManagedFieldsEntry.metadata.managedFields.time of
type string``), a string is parsed by ``time.Parse(time.RFC3339, …)``, whose
error (``parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x"
as "2006"``, ``…: month out of range``, ``…: extra text: …``) ends the
decoding: it wins over a value of the wrong type met before it.

Hand-written cases and generated ones (each character of a valid time
replaced, times cut short, stretched): the kubelet's whole message inside
podnuma's, or both accept.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.oracle.staticpod_cases import decoded_cases
from tests.oracle.test_staticpod_differential import HEAD, kubelet_words


def _managed(time: str, meta: str = "") -> str:
    return (HEAD + "metadata:\n  name: web\n" + meta
            + f"  managedFields: [{{manager: m, operation: Apply, time: {time}}}]\n"
            "spec:\n  containers: [{name: c, image: x}]\n")


def _meta(field: str, value: str) -> str:
    return HEAD + f"metadata:\n  name: web\n  {field}: {value}\nspec:\n  containers: [{{name: c, image: x}}]\n"


def _json(meta: dict[str, Any]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", **meta},
                       "spec": {"containers": [{"name": "c", "image": "x"}]}})


#: name -> (manifest, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    "utc.yaml": (_managed("'2024-01-02T03:04:05Z'"), None),
    "offset.yaml": (_managed("'2024-01-02T03:04:05-07:30'"), None),
    "unquoted-timestamp.yaml": (_managed("2024-01-02T03:04:05Z"), None),
    "nanos.yaml": (_managed("'2024-01-02T03:04:05.123456789123Z'"), None),
    "comma-fraction.yaml": (_managed("'2024-01-02T03:04:05,5Z'"), None),
    "one-digit-hour.yaml": (_managed("'2024-01-02T3:04:05Z'"), None),
    "offset-24.yaml": (_managed("'2024-01-02T03:04:05+24:00'"), None),
    "leap-day.yaml": (_managed("'2024-02-29T00:00:00Z'"), None),
    "year-zero.yaml": (_managed("'0000-02-29T00:00:00Z'"), None),
    "null.yaml": (_managed("null"), None),
    "space.yaml": (_managed("'2024-01-02 03:04:05Z'"),
                   'couldn\'t parse as pod(parsing time "2024-01-02 03:04:05Z" as "2006-01-02T15:04:05Z07:00": '
                   'cannot parse " 03:04:05Z" as "T")'),
    "date-only.yaml": (_managed("2024-01-02"), 'cannot parse "" as "T"'),
    "empty.yaml": (_managed("''"), 'cannot parse "" as "2006"'),
    "month-13.yaml": (_managed("'2024-13-02T03:04:05Z'"), 'parsing time "2024-13-02T03:04:05Z": month out of range'),
    "day-30-feb.yaml": (_managed("'2023-02-29T03:04:05Z'"), "day out of range"),
    "hour-24.yaml": (_managed("'2024-01-02T24:04:05Z'"), "hour out of range"),
    "second-60.yaml": (_managed("'2024-01-02T23:04:60Z'"), "second out of range"),
    "offset-minute.yaml": (_managed("'2024-01-02T23:04:05+25:61'"), "time zone offset minute out of range"),
    "offset-hour.yaml": (_managed("'2024-01-02T23:04:05+25:00'"), "time zone offset hour out of range"),
    "offset-sign.yaml": (_managed("'2024-01-02T23:04:05*05:00'"), 'cannot parse "*05:00" as "Z07:00"'),
    "lower-z.yaml": (_managed("'2024-01-02T03:04:05z'"), 'cannot parse "z" as "Z07:00"'),
    "extra-text.yaml": (_managed("'2024-01-02T03:04:05Zabc'"), 'extra text: "abc"'),
    "non-ascii.yaml": (_managed("'2024-01-02T03:04:05Z\u00e9'"), 'extra text: "\\xc3\\xa9"'),
    "control.yaml": (_managed('"2024-01-02T03:04:05Z\\t\\""'), 'extra text: "\\x09\\""'),
    "number.yaml": (_managed("5"), "json: cannot unmarshal number into Go struct field "
                                   "ManagedFieldsEntry.metadata.managedFields.time of type string"),
    "bool.yaml": (_managed("true"), "cannot unmarshal bool into Go struct field ManagedFieldsEntry"),
    "list.yaml": (_managed("[a]"), "cannot unmarshal array into Go struct field ManagedFieldsEntry"),
    "object.yaml": (_managed("{a: b}"), "cannot unmarshal object into Go struct field ManagedFieldsEntry"),
    "wins-over-type-error.yaml": (_managed("x", meta="  generation: 'one'\n"), 'parsing time "x"'),
    "creation-timestamp-bad.yaml": (_meta("creationTimestamp", "'yesterday'"), 'parsing time "yesterday"'),
    "creation-timestamp-null.yaml": (_meta("creationTimestamp", "null"), None),
    "creation-timestamp-number.yaml": (_meta("creationTimestamp", "1"),
                                       "cannot unmarshal number into Go struct field ObjectMeta.metadata."
                                       "creationTimestamp of type string"),
    "deletion-timestamp-bad.yaml": (_meta("deletionTimestamp", "'2024-01-02T03:04'"), 'cannot parse "" as ":"'),
    "json-time-bad.json": (_json({"managedFields": [{"manager": "m", "time": "2024"}]}), 'cannot parse "" as "-"'),
    "json-time-number.json": (_json({"managedFields": [{"time": 1.5}]}),
                              "cannot unmarshal number into Go struct field ManagedFieldsEntry"),
    "json-generation-then-time.json": (_json({"generation": "x", "managedFields": [{"time": "x"}]}),
                                       'parsing time "x"'),
    "json-time-then-generation.json": (_json({"managedFields": [{"time": "2024-01-02T03:04:05Z"}],
                                              "generation": "x"}), "cannot unmarshal string into Go struct field"),
}


def _generated() -> dict[str, tuple[str, str | None]]:
    base = "2024-02-29T23:59:59.5+05:30"
    times: list[str] = []
    for i in range(len(base)):
        for ch in "0 9-:TZ+.a":
            times.append(base[:i] + ch + base[i + 1:])
        times.append(base[:i])
        times.append(base[:i] + base[i + 1:])
    times += ["2024-02-29T23:59:59Z", "2024-04-31T00:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T00:00:00Z",
              "2024-1-02T00:00:00Z", "2024-01-2T00:00:00Z", "2024-01-02T00:0:00Z", "2024-01-02T00:00:0Z",
              "20240-01-02T00:00:00Z", "+024-01-02T00:00:00Z", "2024-01-02T00:00:00+0530",
              "2024-01-02T00:00:00+05:3", "2024-01-02T00:00:00.Z", "2024-01-02T00:00:00+61:99"]
    return {f"gen-{i:03d}.yaml": (_managed(json.dumps(t)), "") for i, t in enumerate(dict.fromkeys(times))}


GENERATED = _generated()


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), {**CASES, **GENERATED})


def test_enough_cases() -> None:
    assert len(CASES) >= 30 and len(GENERATED) >= 200


@pytest.mark.parametrize("name", sorted(CASES))
def test_times_as_the_kubelet_decodes_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    phrase = CASES[name][1]
    if phrase is None:
        assert "error" not in kubelet, kubelet["error"]
        assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
        return
    assert "error" in kubelet and phrase in kubelet["error"], kubelet
    assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
    assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_times(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    if "error" not in kubelet:
        assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
        return
    assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
    assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])
