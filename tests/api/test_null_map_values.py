"""Pod metadata as Go reads it: a ``null`` value in a
``map[string]string`` field (labels, annotations) is the empty string, as
Go's decoder makes it (the API server and the kubelet take such a pod:
``kubelet-oracle staticpod`` accepts one), not a refused pod; a name's
length is its UTF-8 bytes."""

from __future__ import annotations

import pytest

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.pod_manifest import parse_pod
from podnuma.errors import InputError
from podnuma.fieldkit import string_map

GATES = load_kubelet_config({}).feature_gates


def _pod(meta: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", **meta},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}


def test_a_null_label_or_annotation_is_the_empty_string() -> None:
    pod = parse_pod(_pod({"labels": {"a": None, "b": "x"}, "annotations": {"c": None}}), gates=GATES)
    assert dict(pod.labels) == {"a": "", "b": "x"}
    assert string_map({"k": None}, "metadata.annotations") == {"k": ""}


def test_a_value_of_another_type_is_still_refused() -> None:
    for value in (1, True, ["x"], {"y": "z"}):
        with pytest.raises(InputError) as e:
            parse_pod(_pod({"labels": {"a": value}}), gates=GATES)
        assert e.value.path == "metadata.labels[a]", e.value.path


def test_a_name_is_as_long_as_go_counts_it() -> None:
    """Go's ``len`` counts a string's UTF-8 bytes: a namespace of 32 ``é``
    is 64 long, past a DNS label's 63, which the kubelet says first
    (``kubelet-oracle staticpod``: "must be no more than 63 characters",
    then the character rule); podnuma counted 32 characters and said only
    the character rule."""
    with pytest.raises(InputError) as e:
        parse_pod(_pod({"namespace": "é" * 32}), gates=GATES)
    assert e.value.path == "metadata.namespace"
    assert e.value.message.endswith("must be no more than 63 characters"), e.value.message
