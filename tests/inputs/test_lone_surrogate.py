"""A lone surrogate written as an escape (YAML's or JSON's ``"\\ud800"``)
holds no UTF-8: every reader refuses a string (a key or a value) holding
one, after parsing, with the raw text's wording and the field path, so
that no answer fails when it is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from podnuma.errors import InputError
from podnuma.inputs.documents import (
    JSONListStream,
    check_tree,
    load_json,
    load_json_streamed,
    load_safe_yaml,
    may_hold_surrogates,
    parse_document,
    parse_documents,
)
from podnuma.inputs.limits import ReadLimits

VALUE = "not Unicode text: a lone surrogate (\\ud800, written as an escape) in the value"
KEY = "not Unicode text: a lone surrogate (\\udc00, written as an escape) in a key"


def _refusal(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(InputError) as got:
        fn(*args, **kwargs)
    return str(got.value)


@pytest.mark.parametrize(("text", "want"), [
    ('node:\n  name: "\\ud800"\n', f"s.yaml: node.name: {VALUE} (line 2, column 9)"),
    ('node:\n  name: "\\U0000d800"\n', f"s.yaml: node.name: {VALUE} (line 2, column 9)"),
    ('node:\n  "\\udc00": 1\n', f"s.yaml: node: {KEY} (line 2, column 3)"),
    ('steps:\n- a\n- "x\\ud800"\n', f"s.yaml: steps[1]: {VALUE} (line 3, column 3)"),
    ('a: {b: ["\\ud800"]}\n', f"s.yaml: a.b[0]: {VALUE} (line 1, column 9)"),
    # a pair of escapes is two code points to YAML (libyaml and go-yaml refuse a
    # surrogate escape): said as a pair, with the spelling YAML takes
    ('a: "\\ud83d\\ude00"\n', "s.yaml: a: a surrogate pair written as two escapes (\\ud83d\\ude00) in the "
     "value: YAML takes no surrogate escape; write the character itself, or \\U0001f600 (JSON text "
     "with such pairs is read as JSON from a .json file) (line 1, column 4)"),
])
def test_yaml_escape_refused_with_its_field(text: str, want: str) -> None:
    assert _refusal(parse_document, text, name="s.yaml") == want
    assert _refusal(parse_documents, text, name="s.yaml") == want
    assert _refusal(load_safe_yaml, text, name="s.yaml") == want


@pytest.mark.parametrize(("text", "want"), [
    ('{"node": {"name": "\\ud800"}}', f"s.json: node.name: {VALUE}"),
    ('{"node": {"\\udc00": 1}}', f"s.json: node: {KEY}"),
    ('{"steps": [1, {"a": ["x", "\\ud800y"]}]}', f"s.json: steps[1].a[1]: {VALUE}"),
    ('"\\ud800"', f"s.json: {VALUE}"),
    ('{"\\udc00": {"name": "\\ud800"}}', f"s.json: {KEY}"),  # the key first: its path holds none
])
def test_json_escape_refused_with_its_field(text: str, want: str) -> None:
    assert _refusal(load_json, text, name="s.json") == want
    assert _refusal(load_json, text.encode(), name="s.json") == want
    assert _refusal(parse_document, text, name="s.json") == want
    # (the YAML reader of a JSON text says the same, with the position)
    assert _refusal(parse_document, text, name="s.txt").startswith(want.replace("s.json", "s.txt"))


def test_json_pair_and_plain_text_read() -> None:
    assert load_json('{"a": "\\ud83d\\ude00", "b": "\\u00e9\\u003c"}', name="s.json") == {
        "a": "\U0001f600", "b": "\u00e9<"}
    assert load_json('{"\\u00e9": "\u00e9"}', name="s.json") == {"\u00e9": "\u00e9"}
    assert not may_hold_surrogates('{"a": "\\u003c\u00e9"}')
    assert may_hold_surrogates('{"a": "\\uD800"}') and may_hold_surrogates(b'["\\udfff"]')


def test_check_tree_refuses_decoded_surrogates() -> None:
    limits = ReadLimits(max_bytes=1 << 20, max_depth=20, max_nodes=1000)
    data = json.loads('{"items": [{"metadata": {"annotations": {"note": "\\ud800"}}}]}')
    with pytest.raises(InputError) as got:
        check_tree(data, name="d.json", limits=limits)
    assert str(got.value) == f"d.json: items[0].metadata.annotations.note: {VALUE}"
    check_tree(data, name="d.json", limits=limits, strings=False)  # (the text said there is none)


def test_streamed_json_refuses_an_item_or_a_key() -> None:
    good = {"apiVersion": "v1", "steps": [{"a": i} for i in range(5)]}
    assert isinstance(load_json_streamed(json.dumps(good), name="s.json", key="steps"), JSONListStream)
    bad = {**good, "steps": [*good["steps"], {"a": {"b": "\ud800"}}]}
    text = json.dumps(bad)
    assert _refusal(load_json_streamed, text, name="s.json", key="steps") == f"s.json: steps[5].a.b: {VALUE}"
    top = json.dumps({"\udc00": 1, "steps": []})
    assert _refusal(load_json_streamed, top, name="s.json", key="steps") == f"s.json: {KEY}"


def test_fleet_json_with_duplicate_keys_refuses_a_surrogate(tmp_path: Path) -> None:
    from podnuma.fleet.files import parse_document as fleet_parse

    path = tmp_path / "configz.json"
    doc, issue = fleet_parse(path, '{"kubeletconfig": {"a": 1, "a": 2, "b": "\\ud800"}}')
    assert doc is None and issue is not None
    assert issue.message == f"kubeletconfig.b: {VALUE}"
    doc, issue = fleet_parse(path, '{"kubeletconfig": {"a": 1, "a": 2, "b": "\\ud83d\\ude00"}}')
    assert issue is None and doc["kubeletconfig"]["b"] == "\U0001f600"


def test_fleet_pod_items_refused_one_by_one() -> None:
    from podnuma.fleet.podscan import _general_items, _SomeItems

    text = b'[{"kind": "Pod", "metadata": {"name": "a\\ud800"}}, {"kind": "x"}]'
    with pytest.raises(_SomeItems) as got:
        _general_items(text, "pods.json")
    assert [str(e) for e in got.value.errors] == [f"pods.json: metadata.name: {VALUE}"]
    assert got.value.items == [{"kind": "x"}]
