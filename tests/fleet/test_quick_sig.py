"""The per-pod memo keys of the fleet replay: equal contents give equal keys
(whatever objects hold them), different contents never share one, and
values marshal cannot write (YAML timestamps) still get a key."""

from __future__ import annotations

import datetime
import json

from podnuma.fleet.replay import _pod_sig, _quick_sig


def _doc(cpu: str, node: str = "n1") -> dict[str, object]:
    return {
        "metadata": {"name": "p", "annotations": {"podnuma.io/x": "1", "other": "y"}},
        "spec": {"nodeName": node, "containers": [
            {"name": "app", "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}}]},
    }


def test_equal_contents_equal_keys() -> None:
    a = _doc("2")
    b = json.loads(json.dumps(a))  # the same content in fresh objects
    assert _pod_sig(a) == _pod_sig(b)
    assert _pod_sig(_doc("2", node="n1")) == _pod_sig(_doc("2", node="n2"))  # node not part of it
    assert _pod_sig(_doc("2", node="n1"), with_node=True) != _pod_sig(_doc("2", node="n2"),
                                                                       with_node=True)


def test_different_contents_different_keys() -> None:
    assert _pod_sig(_doc("2")) != _pod_sig(_doc("3"))
    assert _quick_sig({"a": 1}) != _quick_sig({"a": 1.0})
    assert _quick_sig({"a": "1"}) != _quick_sig({"a": 1})
    assert _quick_sig({"a": True}) != _quick_sig({"a": 1})


def test_yaml_timestamps_fall_back() -> None:
    t = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)
    k1 = _quick_sig({"creationTimestamp": t})
    k2 = _quick_sig({"creationTimestamp": t + datetime.timedelta(seconds=1)})
    assert isinstance(k1, str) and k1 != k2
