"""The streamed JSON read (a scenario's steps decoded one at a time) keeps
every refusal and wording of the whole read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.inputs.documents import JSONListStream, load_json, load_json_streamed
from podnuma.inputs.limits import ReadLimits
from podnuma.inputs.scenario import load_scenario_text, open_scenario_text

NODE = {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                      "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}}


def _pod(i: int) -> dict[str, object]:
    return {"metadata": {"name": f"p{i}", "uid": f"u{i}"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}


def _scenario(steps: list[object]) -> dict[str, object]:
    return {"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": NODE,
            "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
            "steps": steps}


def test_items_are_the_list() -> None:
    doc = _scenario([{"addPod": _pod(i)} for i in range(5)] + [{"removePod": "u0"}])
    text = json.dumps(doc, indent=1)
    got = load_json_streamed(text, name="s.json", key="steps")
    assert isinstance(got, JSONListStream)
    assert len(got) == 6
    assert list(got.items()) == doc["steps"]
    want = dict(doc)
    del want["steps"]
    assert got.top == want


BAD = [
    '{"apiVersion": 1, "steps": [1, 2,]}',  # trailing comma in the list
    '{"steps": [1], "steps": [2]}',  # duplicate key
    '{"steps": [{"a": 1, "a": 2}]}',  # duplicate key inside an item
    '{"steps": [NaN]}',
    '{"steps": [1] ',  # unterminated
    '{"steps": [1]} x',  # trailing data
    '{"steps": [' + "[" * 120 + "]" * 120 + "]}",  # too deep
    '\ufeff{"steps": []}',
    "",
]


@pytest.mark.parametrize("text", BAD)
def test_refusals_are_the_whole_reads(text: str) -> None:
    with pytest.raises(InputError) as whole:
        load_json(text, name="s.json")
    with pytest.raises(InputError) as streamed:
        load_json_streamed(text, name="s.json", key="steps")
    assert str(streamed.value) == str(whole.value)


def test_value_limit_counts_every_item() -> None:
    limits = ReadLimits(max_nodes=50)
    text = json.dumps({"steps": [[1, 2, 3]] * 12})  # 1 + 1 + 12 * 4 = 50 values
    assert isinstance(load_json_streamed(text, name="s.json", key="steps", limits=limits),
                      JSONListStream)
    text = json.dumps({"steps": [[1, 2, 3]] * 13})
    with pytest.raises(InputError, match="more than 50 values"):
        load_json_streamed(text, name="s.json", key="steps", limits=limits)


def test_not_a_list_is_read_whole() -> None:
    assert load_json_streamed('{"steps": 3}', name="s.json", key="steps") == {"steps": 3}
    assert load_json_streamed("[1]", name="s.json", key="steps") == [1]


def test_a_bad_step_is_named_with_its_line(tmp_path: Path) -> None:
    doc = _scenario([{"addPod": _pod(0)}, {"addPod": _pod(1)}])
    doc["steps"][1]["addPod"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "x"  # type: ignore[index]
    text = json.dumps(doc, indent=2)
    with pytest.raises(InputError) as whole:
        load_scenario_text(text, name="s.json", base_dir=tmp_path)
    scenario, steps = open_scenario_text(text, name="s.json", base_dir=tmp_path)
    assert scenario.steps == ()
    first = next(steps)
    assert first.index == 0
    with pytest.raises(InputError) as streamed:
        next(steps)
    assert str(streamed.value) == str(whole.value)
    assert "(line " in str(streamed.value)


def test_streamed_steps_are_the_loaded_steps(tmp_path: Path) -> None:
    doc = _scenario([{"addPod": _pod(i)} for i in range(3)] + [{"removePod": "u1"}, {"reconcile": None}])
    text = json.dumps(doc)
    whole = load_scenario_text(text, name="s.json", base_dir=tmp_path)
    head, steps = open_scenario_text(text, name="s.json", base_dir=tmp_path)
    assert tuple(steps) == whole.steps
    assert head.machine == whole.machine and head.config == whole.config
