"""The pod memo's keys: equal only for manifests of equal content, value
types included (marshal for any input, MessagePack for JSON's types)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from podnuma.inputs.scenario_pods import _key, _marshal, _msgpack_dumps

_msgpack = _msgpack_dumps()  # (msgspec imported)


def _pod(value: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": "p", "uid": "u", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "x": value}]}}


VALUES: list[Any] = [1, 1.0, -0.0, 0, True, False, None, "1", "true", "null", [1], {"1": 1},
                     [], {}, math.nan, math.inf, 2**63, "a:b", ""]


@pytest.mark.parametrize("dumps", [_marshal, _msgpack])
def test_keys_tell_every_json_value_apart(dumps: Any) -> None:
    keys = [_key(_pod(v), dumps) for v in VALUES]
    assert None not in keys
    assert len(set(keys)) == len(VALUES)


@pytest.mark.parametrize("dumps", [_marshal, _msgpack])
def test_identity_fields_left_out(dumps: Any) -> None:
    a, b = _pod(1), _pod(1)
    b["metadata"].update(name="q", uid="v", labels={"x": "y"})
    assert _key(a, dumps) == _key(b, dumps)
    b["metadata"]["namespace"] = "other"
    assert _key(a, dumps) != _key(b, dumps)


def test_msgpack_refuses_what_it_cannot_write() -> None:
    assert _key(_pod(2**64), _msgpack) is None  # parsed in full
    assert _key(_pod(json.loads("1e400")), _msgpack) is not None  # inf
