"""``--set PATH=VALUE``: paths checked against the v1beta1 fields, values
read as YAML (a string field takes the text), applied on top of a
configuration document without changing it."""

from __future__ import annotations

from typing import Any

import pytest

from podnuma.api.kubeletconfig import json_object_pairs, load_kubelet_config
from podnuma.errors import InputError
from podnuma.inputs.overrides import (
    apply_overrides,
    parse_override,
    parse_overrides,
    request_overrides,
)


@pytest.mark.parametrize(("item", "keys", "value"), [
    ("cpuManagerPolicy=static", ("cpuManagerPolicy",), "static"),
    ("cpuManagerPolicyOptions.full-pcpus-only=true", ("cpuManagerPolicyOptions", "full-pcpus-only"), "true"),
    ("reservedSystemCPUs=0-1", ("reservedSystemCPUs",), "0-1"),
    ("reservedSystemCPUs=0", ("reservedSystemCPUs",), "0"),  # a string field: the text
    ("topologyManagerScope=pod", ("topologyManagerScope",), "pod"),
    ("featureGates.PodLevelResourceManagers=true", ("featureGates", "PodLevelResourceManagers"), True),
    ("evictionHard.memory.available=100Mi", ("evictionHard", "memory.available"), "100Mi"),
    ("reservedMemory[0].limits.memory=1Gi", ("reservedMemory", 0, "limits", "memory"), "1Gi"),
    ("maxPods=64", ("maxPods",), 64),
    ("cpuManagerPolicy=", ("cpuManagerPolicy",), None),
    ('featureGates={PodLevelResources: true}', ("featureGates",), {"PodLevelResources": True}),
])
def test_paths_and_values(item: str, keys: tuple[Any, ...], value: Any) -> None:
    o = parse_override(item)
    assert (o.keys, o.value) == (keys, value)
    assert str(o) == item


@pytest.mark.parametrize(("item", "message"), [
    ("cpuManagerPolicyy=static",
     '--set: cpuManagerPolicyy: unknown field "cpuManagerPolicyy" (did you mean "cpuManagerPolicy"?)'),
    ("maxPods=abc", "--set: maxPods: must be an integer, got a string"),
    ("featureGates.PodLevelResources=maybe", "--set: featureGates.PodLevelResources: must be a boolean, got a string"),
    ("featureGates.PodLevelResourceManager=true",
     "--set: featureGates.PodLevelResourceManager: unknown feature gate 'PodLevelResourceManager'"),
    ("cpuManagerPolicy=dynamic", "--set: cpuManagerPolicy: must be one of none, static, got 'dynamic'"),
    ("topologyManagerScope=node", "--set: topologyManagerScope: must be one of"),
    ("cpuManagerPolicyOptions=[a]", "--set: cpuManagerPolicyOptions: must be a mapping, got a list"),
    ("authentication.anonymous.enabled=3", "--set: authentication.anonymous.enabled: must be a boolean"),
    ("reservedMemory.numaNode=0", "--set: reservedMemory: is a list: give an index"),
    ("noequals", "--set: 'noequals': expected PATH=VALUE"),
    ("maxPods.x=1", "--set: maxPods: is an integer: it has no field 'x'"),
])
def test_bad_overrides_name_set_and_the_path(item: str, message: str) -> None:
    with pytest.raises(InputError) as got:
        parse_override(item)
    assert str(got.value).startswith(message)
    assert "\n" not in str(got.value)


def test_applied_in_order_on_a_copy() -> None:
    doc = {"cpuManagerPolicy": "none", "featureGates": {"PodLevelResources": True},
           "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}
    out = apply_overrides(doc, parse_overrides([
        "cpuManagerPolicy=static", "featureGates.PodLevelResourceManagers=true",
        "reservedMemory[0].limits.memory=2Gi", "reservedMemory[1].numaNode=1",
        "reservedMemory[1].limits.memory=1Gi", "cpuManagerPolicy=static", "topologyManagerScope=pod",
        "topologyManagerScope=",
    ]))
    assert out == {
        "cpuManagerPolicy": "static",
        "featureGates": {"PodLevelResources": True, "PodLevelResourceManagers": True},
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "2Gi"}},
                           {"numaNode": 1, "limits": {"memory": "1Gi"}}],
    }
    assert doc["cpuManagerPolicy"] == "none"  # the input is not changed
    assert doc["featureGates"] == {"PodLevelResources": True}
    assert doc["reservedMemory"] == [{"numaNode": 0, "limits": {"memory": "1Gi"}}]
    cfg = load_kubelet_config(out)
    assert cfg.feature_gates.enabled("PodLevelResourceManagers")


def test_a_duplicate_key_left_alone_is_still_warned_about() -> None:
    import json

    doc = json.loads('{"maxPods": 10, "maxPods": 20}', object_pairs_hook=json_object_pairs)
    out = apply_overrides(doc, parse_overrides(["topologyManagerScope=pod"]))
    assert "duplicate field" in load_kubelet_config(out).decode_warning
    # overriding the duplicated field itself leaves one value
    out = apply_overrides(doc, parse_overrides(["maxPods=30"]))
    assert load_kubelet_config(out).decode_warning == "" and load_kubelet_config(out).max_pods == 30


def test_a_value_over_a_field_of_another_shape_is_refused() -> None:
    with pytest.raises(InputError, match=r"^--set: .*holds a string at cpuManagerPolicyOptions"):
        apply_overrides({"cpuManagerPolicyOptions": "x"},
                        parse_overrides(["cpuManagerPolicyOptions.full-pcpus-only=true"]))


def test_request_overrides() -> None:
    assert request_overrides(None) == ()
    lines = "# a comment\n\ncpuManagerPolicy=static\n topologyManagerScope=pod \n"
    assert [str(o) for o in request_overrides(lines)] == ["cpuManagerPolicy=static", "topologyManagerScope=pod"]
    assert [str(o) for o in request_overrides(["maxPods=3"])] == ["maxPods=3"]
    with pytest.raises(InputError, match="set: must be PATH=VALUE lines"):
        request_overrides({"a": 1})
