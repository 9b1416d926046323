"""A JSON dump that begins with a UTF-8 byte order mark is refused in
podnuma's words, as Go's ``encoding/json`` (kubectl, client-go) refuses it:
its first byte (``0xEF``, shown as ``ï``) begins no JSON value. Python's
decoder would say ``Unexpected UTF-8 BOM (decode using utf-8-sig)``: words
of the tool, not of the input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podnuma.fleet.files import read_document

_DUMP = {"kind": "PodList", "apiVersion": "v1", "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "x"},
     "spec": {"nodeName": "n", "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}]}


@pytest.mark.parametrize("body", [json.dumps(_DUMP), "{}", json.dumps(_DUMP)[:40]], ids=["dump", "empty", "cut"])
def test_a_byte_order_mark_is_told_as_go_tells_it(tmp_path: Path, body: str) -> None:
    path = tmp_path / "pods.json"
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    doc, issue = read_document(path)
    assert doc is None
    assert issue is not None and issue.severity == "error"
    assert issue.message == ("invalid JSON: invalid character 'ï' looking for beginning of value "
                             "(line 1, column 1: a UTF-8 byte order mark)")
    assert "utf-8-sig" not in issue.message
