"""JSON numbers in quantity fields read from their text, in every JSON
reader (:mod:`podnuma.golang.jsonnumbers`; ``Quantity.UnmarshalJSON`` in
k8s.io/apimachinery pkg/api/resource/quantity.go parses the number's raw
text, never a float)."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from podnuma.api.quantity import parse_quantity, quantity_from_manifest
from podnuma.golang.jsonnumbers import JSONFloat, json_float
from podnuma.inputs.documents import load_json, load_json_streamed
from podnuma.inputs.scenario import load_scenario
from tests.scenario.helpers import base, pod

#: number text -> the quantity ParseQuantity makes of it (String())
EXACT = {
    "1e-400": "1e-9",  # rounded up to 1n, the exponent's form kept
    "-1e-400": "-1e-9",
    "0.1e-9": "1e-9",
    "1.0000000000000000001": "1000000001n",
    "1e3": "1e3",
    "2.50": "2500m",
    "12345678.123456789123456789": "12345678123456790n",
}


@pytest.mark.parametrize(("text", "want"), sorted(EXACT.items()))
def test_load_json_keeps_the_text_of_a_quantity(text: str, want: str) -> None:
    value = load_json('{"cpu": ' + text + "}", name="p.json")["cpu"]
    assert isinstance(value, float)
    assert str(quantity_from_manifest(value)) == want
    assert str(parse_quantity(value)) == want


def test_a_float_that_loses_nothing_stays_a_float() -> None:
    data = load_json('{"a": 0.5, "b": 2.25, "c": 1e-400, "d": 1e400, "e": 7}', name="p.json")
    assert type(data["a"]) is float and type(data["b"]) is float and type(data["e"]) is int
    assert type(data["c"]) is JSONFloat and data["c"] == 0.0 and data["c"].text == "1e-400"
    assert data["d"] == "1e400"  # past the float range: the text, as go-yaml leaves it


def test_the_float_would_have_lost_it() -> None:
    assert str(parse_quantity(float("1e-400"))) == "0"
    assert str(parse_quantity(float("1.0000000000000000001"))) == "1"


def test_a_kept_text_survives_copies() -> None:
    value = json_float("1e-400")
    assert isinstance(value, JSONFloat)
    for other in (copy.deepcopy(value), pickle.loads(pickle.dumps(value)), copy.copy(value)):
        assert isinstance(other, JSONFloat) and other.text == "1e-400"
    assert json.dumps({"v": value}) == '{"v": 0.0}'


def test_streamed_items_keep_the_text() -> None:
    text = '{"kind": "List", "items": [{"cpu": 1e-400}, {"cpu": 0.5}]}'
    got = load_json_streamed(text, name="l.json", key="items")
    items: list[Any] = list(got.items())
    assert items[0]["cpu"].text == "1e-400" and quantity_from_manifest(items[0]["cpu"]).nanos == 1
    assert items[1]["cpu"] == 0.5


def test_the_scenario_steps_msgspec_decoder_keeps_the_text() -> None:
    from podnuma.inputs.scenario_stream import _msgspec_decoder

    decode, _ = _msgspec_decoder()
    value = decode(b'[{"cpu": 1.0000000000000000001}, 0.5, 1e400]')
    assert str(quantity_from_manifest(value[0]["cpu"])) == "1000000001n"
    assert type(value[1]) is float and value[2] == "1e400"


def test_the_fleet_dump_decoders_keep_the_text() -> None:
    from podnuma.fleet import podscan

    resources = podscan._ANY.decode(b'{"requests": {"cpu": 1e-400, "memory": 1.5e0}}')
    assert quantity_from_manifest(resources["requests"]["cpu"]).nanos == 1
    (ctr,) = podscan._CTRS.decode(b'[{"name": "c", "resources": {"limits": {"cpu": 0.1e-9}}}]')
    assert quantity_from_manifest(ctr.resources.limits["cpu"]).nanos == 1


def test_a_json_scenario_pod_reads_the_text(tmp_path: Path) -> None:
    doc = base()
    doc["steps"] = [{"addPod": pod("a", cpu="1", memory="1Gi", limits_cpu="2")}]
    text = json.dumps(doc).replace('"requests": {"cpu": "1"', '"requests": {"cpu": 1.0000000000000000001')
    assert "1.0000000000000000001" in text
    path = tmp_path / "s.json"
    path.write_text(text)
    step = load_scenario(path).steps[0]
    assert step.pod is not None
    (c,) = step.pod.containers
    assert str(c.requests["cpu"]) == "1001m"  # (1000000001n, rounded up to milli by the defaults)
