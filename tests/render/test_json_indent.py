"""The quicker indented JSON writes the standard library's text exactly."""

from __future__ import annotations

import json
from typing import Any

import msgspec  # loaded: the quicker path is taken
import pytest

from podnuma.render import json_indent
from podnuma.render.json_indent import indented_json
from podnuma.render.serialize import dump_json

ALL_ASCII = "".join(chr(i) for i in range(0x80))

DOCS: list[Any] = [
    {},
    [],
    {"a": [], "b": {}, "c": [{}, [[]]]},
    {"text": ALL_ASCII + "\u2028\u2029\u00e9\U0001f600\ufeff", ALL_ASCII: 1},
    {"ints": [0, -1, 10**30, -(10**30)], "bools": [True, False, None]},
    {"floats": [0.1, -0.0, 1e16, 1.5e-07, 123456789.125, 1e300]},
    {1: "int key", 1.5: "float key", None: "null key"},
    {True: "bool key", False: "another"},
    {"tuple": (1, (2, 3)), "nested": {"deep": [{"x": [1, {"y": "z"}]}]}},
    "a string", 5, None, 2.5,
    # what the formatter does not take: the standard library's writer then
    {"nan": float("nan"), "inf": float("inf"), "minus": float("-inf")},
    {"surrogate": "\ud800"},
]


@pytest.mark.parametrize("doc", DOCS)
def test_the_same_text_as_the_standard_library(doc: Any) -> None:
    assert indented_json(doc) == json.dumps(doc, indent=2, ensure_ascii=False)
    assert dump_json(doc) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def test_a_large_report_shaped_document() -> None:
    doc = {"nodes": [{"name": f"node-{i}", "labels": {"zone": f"z{i % 3}"}, "pods": i,
                      "issues": [{"severity": "warning", "message": f"pod {j} \"quoted\"\n"} for j in range(3)],
                      "numa": [{"id": n, "free": n * 2} for n in range(2)]} for i in range(200)]}
    assert indented_json(doc) == json.dumps(doc, indent=2, ensure_ascii=False)


def test_what_neither_writes_raises_the_same() -> None:
    with pytest.raises(TypeError) as ours:
        indented_json({"a": object()})
    with pytest.raises(TypeError) as theirs:
        json.dumps({"a": object()}, indent=2, ensure_ascii=False)
    assert str(ours.value) == str(theirs.value)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        indented_json(loop)


def test_the_quicker_path_is_the_one_tested(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = msgspec.json.format

    def counting(buf: bytes, indent: int = 2) -> bytes:
        calls.append(indent)
        return real(buf, indent=indent)

    monkeypatch.setattr(msgspec.json, "format", counting)
    assert indented_json({"a": [1, {}]}) == json.dumps({"a": [1, {}]}, indent=2)
    assert calls == [2]
    monkeypatch.delitem(json_indent.sys.modules, "msgspec")
    assert indented_json({"a": [1, {}]}) == json.dumps({"a": [1, {}]}, indent=2)
    assert calls == [2]  # not loaded: the standard library's writer, msgspec not imported
