"""``Pod.with_identity``: both bodies (the constructor, which a compiled
build runs, and the pure-Python one writing the pod's slots) give
the same pod."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from podnuma.api import pod as pod_module
from podnuma.api.pod import Container, Pod, PodLevelResources
from podnuma.api.quantity import parse_quantity

Copier = Callable[[Pod, str, str, Mapping[str, str]], Pod]


def _bodies() -> list[Copier]:
    bodies: list[Copier] = [pod_module._with_identity_init]
    slots = getattr(pod_module, "_with_identity_slots", None)
    if slots is not None:  # pure Python (a compiled build leaves it out)
        bodies.append(slots)
    return bodies


def _template() -> Pod:
    q = parse_quantity
    return Pod(
        uid="u0",
        name="web-0",
        namespace="shop",
        init_containers=(Container("init", "sidecar", {"cpu": q("1")}, {"cpu": q("1")}, "Always"),),
        containers=(Container("app", "app", {"cpu": q("2"), "memory": q("1Gi")}),),
        ephemeral_containers=("debug",),
        resources=PodLevelResources({"cpu": q("4")}, {"cpu": q("4")}),
        overhead={"memory": q("64Mi"), "cpu": q("100m")},
        labels={"app": "web"},
        annotations={"note": "x"},
    )


@pytest.mark.parametrize("copier", _bodies(), ids=lambda f: f.__name__)
def test_the_copy_is_the_pod_under_its_new_identity(copier: Copier) -> None:
    template = _template()
    template.memo()["derived"] = 1
    labels = {"app": "web", "pod-template-hash": "abc"}
    copy = copier(template, "web-1", "u1", labels)
    expected = Pod(
        uid="u1",
        name="web-1",
        namespace="shop",
        init_containers=template.init_containers,
        containers=template.containers,
        ephemeral_containers=("debug",),
        resources=template.resources,
        overhead=template.overhead,
        labels=labels,
        annotations={"note": "x"},
    )
    assert copy == expected
    assert repr(copy) == repr(expected)
    assert hash(copy) == hash(expected)
    assert copy.ref == "shop/web-1"
    # the spec-derived values are shared with the template
    assert copy.memo() is template.memo()
    assert copy.memo()["derived"] == 1
    # the labels are the copy's own, frozen: a later change of the mapping handed in does not show
    labels["app"] = "changed"
    assert copy.labels == {"app": "web", "pod-template-hash": "abc"}
    with pytest.raises(TypeError):
        copy.labels["app"] = "x"  # type: ignore[index]
    # the copy's own fields: the template keeps its identity
    assert template.name == "web-0" and template.uid == "u0"


@pytest.mark.parametrize("copier", _bodies(), ids=lambda f: f.__name__)
def test_empty_labels(copier: Copier) -> None:
    copy = copier(_template(), "web-2", "u2", {})
    assert dict(copy.labels) == {}
    assert copy == _template().with_identity("web-2", "u2", {})
