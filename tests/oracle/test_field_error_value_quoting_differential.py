"""How a field error shows the value it refuses, against the API server.

apimachinery's ``field.Error.ErrorBody`` writes a plain ``string`` value
with ``%q`` (``strconv.Quote``: control and non-printable characters
escaped, ``\\x01``, ``\\u00a0``) and a value of a named string type
(``core.Protocol``) as ``encoding/json`` writes it (``\\b`` and ``\\f`` by
name, ``<`` and control characters as ``\\u00XX``). A container's name
is a plain string; a port's protocol and a resource's name (a container's
or the pod's) are named ones."""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle.validation import compare_verdicts, validate_oracle, validate_podnuma

#: characters a field error writes differently in the two forms (or escapes)
ODD = ["A\bB", "A\fB", "A\nB", "A\x01B", "A<B&", "A\x7fB", "A\u00a0B", 'A"\\B', "A\u2028B"]


def _pod(field: str, text: str) -> dict[str, Any]:
    ctr: dict[str, Any] = {"name": text if field == "name" else "c", "image": "i",
                           "ports": [{"containerPort": 80, "protocol": text if field == "protocol" else "TCP"}]}
    spec: dict[str, Any] = {"containers": [ctr]}
    if field == "resource":
        ctr["resources"] = {"limits": {text: "1"}}
    elif field == "extended resource":
        ctr["resources"] = {"limits": {"example.com/" + text: "1"}}
    elif field == "pod resource":
        spec["resources"] = {"limits": {text: "1"}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"}, "spec": spec}


@pytest.mark.parametrize("text", ODD, ids=[repr(t) for t in ODD])
@pytest.mark.parametrize("field", ["name", "protocol", "resource", "extended resource", "pod resource"])
def test_a_refused_value_is_written_as_the_api_server_writes_it(oracle_binary: str, field: str,
                                                                text: str) -> None:
    doc = _pod(field, text)
    theirs = validate_oracle(oracle_binary, [doc], {})[0]
    mine = validate_podnuma(doc, {})
    assert not theirs["accepted"] and mine.error, (theirs, mine)
    assert compare_verdicts(mine, theirs, {}) == []
