"""The nesting and size bounds of a decoded tree (``check_tree``) count
every mapping, the JSON readers' that keep duplicate keys (a subclass of
dict) included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from podnuma.api.kubeletconfig import json_object_pairs
from podnuma.errors import InputError
from podnuma.inputs.documents import check_tree
from podnuma.inputs.limits import ReadLimits


def _nested(depth: int, make: str) -> Any:
    v: Any = 1
    for _ in range(depth):
        v = {"a": v} if make == "object" else [v]
    return v


@pytest.mark.parametrize("make", ["object", "list"])
@pytest.mark.parametrize("decoded", ["plain", "pairs"])
def test_every_mapping_counts_for_the_depth(make: str, decoded: str) -> None:
    limits = ReadLimits(max_bytes=1 << 20, max_depth=20, max_nodes=1000)
    hook = json_object_pairs if decoded == "pairs" else None
    ok = json.loads(json.dumps([_nested(19, make)]), object_pairs_hook=hook)
    check_tree(ok, name="f", limits=limits)
    deep = json.loads(json.dumps([_nested(20, make)]), object_pairs_hook=hook)
    with pytest.raises(InputError, match=r"^f: nested more than 20 levels deep$"):
        check_tree(deep, name="f", limits=limits)
    wide = json.loads(json.dumps({"a": [{"b": i} for i in range(600)]}), object_pairs_hook=hook)
    with pytest.raises(InputError, match=r"more than 1000 values"):
        check_tree(wide, name="f", limits=limits)
