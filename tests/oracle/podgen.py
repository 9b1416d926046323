"""Seeded random pods, valid and deliberately invalid, for the pod
validation audit (``test_pod_validation``) and for the invalid pods the
scenario generator slips into a share of its scenarios.

``pod(seed, index)`` is a pure function of its arguments: a v1 Pod manifest
(a ``dict``) and the feature gates it is created under. About half the
pods carry one or two deliberate faults among the fields podnuma reads:
quantities (unparsable, negative, fractional extended resources, hugepages
off the page size), requests above or unequal to limits, missing limits of
non-overcommittable resources, hugepages without cpu or memory, resource
names, duplicate and malformed container names, pod names and namespaces,
container and pod restart policies (sidecars included), ephemeral
containers with resources, an empty container list, the pod overhead, and
the pod-level
resources rules (unsupported resources, requests above limits, budgets
below the containers' aggregate, a container limit above the pod's).

Every container has an image: the API server requires one, and podnuma
(whose scenario contract leaves images out) does not read it. The set of
pods the API server refuses for fields podnuma does not read is tested on
its own (``test_pod_validation.test_fields_podnuma_does_not_read``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

__all__ = ["GATE_SETS", "pod", "pods", "invalid_pod", "FAULTS"]

Doc = dict[str, Any]

GPU = "example.com/gpu"

#: The feature gate sets pods are created under: v1.37's defaults, the
#: pod-level resource managers on, and pod-level resources off (with the
#: gates that depend on it).
GATE_SETS: dict[str, dict[str, bool]] = {
    "defaults": {},
    "plrm": {"PodLevelResourceManagers": True},
    "no-plr": {
        "PodLevelResources": False,
        "PodLevelResourcesFixDefaulting": False,
        "PodLevelResourcesFixKubeletQOSClass": False,
        "InPlacePodLevelResourcesVerticalScaling": False,
    },
}


def _mi(n: int) -> str:
    return f"{n}Mi" if n % 1024 else f"{n // 1024}Gi"


def _container_resources(rng: random.Random, qos: str) -> Doc:
    if qos == "BestEffort":
        return {}
    cpu = rng.choice(("1", "2", "500m", "1500m", "4", "0.5", "100m"))
    mem = _mi(rng.choice((64, 128, 256, 1024)))
    limits: Doc = {"cpu": cpu, "memory": mem}
    if rng.random() < 0.2:
        limits["hugepages-2Mi"] = rng.choice(("2Mi", "4Mi"))
    if rng.random() < 0.2:
        limits[GPU] = str(rng.randint(1, 2))
    if qos == "Guaranteed":
        return {"limits": limits} if rng.random() < 0.5 else {"requests": dict(limits), "limits": limits}
    requests: Doc = {"cpu": rng.choice(("100m", "250m")), "memory": "32Mi"}
    for k in ("hugepages-2Mi", GPU):
        if k in limits:
            requests[k] = limits[k]
    out: Doc = {"requests": requests}
    if rng.random() < 0.6:
        limits["cpu"] = "3"
        out["limits"] = limits
    else:
        for k in ("hugepages-2Mi", GPU):
            if k in requests:
                out.setdefault("limits", {})[k] = requests[k]
    return out


def _valid_pod(rng: random.Random, name: str) -> Doc:
    qos = rng.choices(("Guaranteed", "Burstable", "BestEffort"), (5, 4, 1))[0]
    spec: Doc = {"containers": []}
    for i in range(rng.randint(1, 3)):
        c: Doc = {"name": f"c{i}", "image": "registry.example/app:1"}
        res = _container_resources(rng, qos)
        if res:
            c["resources"] = res
        spec["containers"].append(c)
    inits = []
    for i in range(rng.choice((0, 0, 1, 2))):
        c = {"name": f"init{i}", "image": "registry.example/init:1"}
        if rng.random() < 0.5:
            c["restartPolicy"] = "Always"
        res = _container_resources(rng, qos)
        if res:
            c["resources"] = res
        inits.append(c)
    if inits:
        spec["initContainers"] = inits
    if rng.random() < 0.3:
        spec["restartPolicy"] = rng.choice(("Always", "OnFailure", "Never"))
    if rng.random() < 0.4:
        # a pod-level budget over what the containers ask for
        budget: Doc = {"cpu": str(rng.randint(4, 12)), "memory": _mi(rng.choice((2048, 4096, 8192)))}
        res = {"limits": budget} if rng.random() < 0.4 else {"requests": dict(budget), "limits": budget}
        if rng.random() < 0.3:
            res = {"requests": {"cpu": "1", "memory": "256Mi"}}
        spec["resources"] = res
    meta: Doc = {"name": name}
    if rng.random() < 0.7:
        meta["namespace"] = rng.choice(("default", "ns", "team-a"))
    if rng.random() < 0.3:
        meta["uid"] = f"uid-{name}"
    if rng.random() < 0.1:
        # as a RuntimeClass's admission sets it
        spec["overhead"] = {"cpu": "250m", "memory": "120Mi"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


# -- faults ---------------------------------------------------------------------------


def _any_container(rng: random.Random, p: Doc) -> Doc:
    spec = p["spec"]
    pool = list(spec["containers"]) + list(spec.get("initContainers") or [])
    return rng.choice(pool)


def _resources_of(c: Doc) -> Doc:
    return c.setdefault("resources", {})


def _bad_quantity(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    side = rng.choice(("limits", "requests"))
    _resources_of(c).setdefault(side, {})[rng.choice(("cpu", "memory"))] = rng.choice(
        ("abc", "1.2.3", "1e", "--1", "1 Gi", "0x10", "1Gb", "Mi", "")
    )


def _negative(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    side = rng.choice(("limits", "requests"))
    _resources_of(c).setdefault(side, {})[rng.choice(("cpu", "memory", GPU))] = rng.choice(("-1", "-500m", "-1Gi"))


def _requests_above_limits(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    res = _resources_of(c)
    name = rng.choice(("cpu", "memory"))
    res.setdefault("limits", {})[name] = "1" if name == "cpu" else "128Mi"
    res.setdefault("requests", {})[name] = "2" if name == "cpu" else "256Mi"


def _unequal_noncompressible(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    res = _resources_of(c)
    name = rng.choice((GPU, "hugepages-2Mi"))
    res.setdefault("limits", {"cpu": "1"})
    res["limits"][name] = "2" if name == GPU else "4Mi"
    res.setdefault("requests", {})[name] = "1" if name == GPU else "2Mi"


def _fractional_extended(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    res = _resources_of(c)
    v = rng.choice(("500m", "1.5", "0.1"))
    res.setdefault("limits", {})[GPU] = v
    if rng.random() < 0.5:
        res.setdefault("requests", {})[GPU] = v


def _request_without_limit(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    res = _resources_of(c)
    res.setdefault("requests", {})[rng.choice((GPU, "hugepages-2Mi"))] = "2Mi" if rng.random() < 0.5 else "1"
    lim = res.get("limits")
    if isinstance(lim, dict):
        lim.pop(GPU, None)
        lim.pop("hugepages-2Mi", None)


def _hugepages_off_page(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    res = _resources_of(c)
    res.setdefault("limits", {"memory": "64Mi"})["hugepages-2Mi"] = rng.choice(("3Mi", "1Mi", "5M"))
    res.get("requests", {}).pop("hugepages-2Mi", None)


def _hugepages_alone(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    c["resources"] = {"limits": {rng.choice(("hugepages-2Mi", "hugepages-1Gi")): "2Mi" if rng.random() < 0.5 else "1Gi"}}


def _bad_resource_name(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    res = _resources_of(c)
    name = rng.choice(("cpus", "gpu", "example.com/", "Example.com/gpu", "kubernetes.io/gpu", "requests.cpu",
                       "pods", "example.com/a/b", "-x.com/gpu", "example.com/_gpu"))
    res.setdefault(rng.choice(("limits", "requests")), {})[name] = "1"


def _duplicate_name(rng: random.Random, p: Doc) -> None:
    spec = p["spec"]
    if spec.get("initContainers") and rng.random() < 0.5:
        spec["initContainers"][0]["name"] = spec["containers"][0]["name"]
    else:
        spec["containers"].append(copy.deepcopy(spec["containers"][0]))


def _bad_container_name(rng: random.Random, p: Doc) -> None:
    c = _any_container(rng, p)
    c["name"] = rng.choice(("C1", "c_1", "-c", "c.1", "x" * 64, "", "c-"))


def _bad_pod_name(rng: random.Random, p: Doc) -> None:
    meta = p["metadata"]
    choice = rng.choice(("Bad_Name", "UPPER", "a..b", "-a", "x" * 254, "", "a/b", "ok.name."))
    if choice == "" and rng.random() < 0.5:
        del meta["name"]
    else:
        meta["name"] = choice


def _bad_namespace(rng: random.Random, p: Doc) -> None:
    p["metadata"]["namespace"] = rng.choice(("Team", "a.b", "x" * 64, "-ns"))


def _container_restart_policy(rng: random.Random, p: Doc) -> None:
    spec = p["spec"]
    if rng.random() < 0.5 or not spec.get("initContainers"):
        spec["containers"][0]["restartPolicy"] = rng.choice(("Always", "Never"))
    else:
        spec["initContainers"][0]["restartPolicy"] = rng.choice(("Never", "OnFailure", "always", ""))


def _pod_restart_policy(rng: random.Random, p: Doc) -> None:
    p["spec"]["restartPolicy"] = rng.choice(("Sometimes", "always", "No"))


def _no_containers(rng: random.Random, p: Doc) -> None:
    if rng.random() < 0.5:
        p["spec"]["containers"] = []
    else:
        del p["spec"]["containers"]


def _ephemeral_with_resources(rng: random.Random, p: Doc) -> None:
    p["spec"]["ephemeralContainers"] = [
        {"name": "debug", "image": "busybox", "resources": {"limits": {"cpu": "1"}}}
    ]


def _pod_level(p: Doc) -> Doc:
    return p["spec"].setdefault("resources", {"limits": {"cpu": "8", "memory": "8Gi"}})


def _pod_level_unsupported(rng: random.Random, p: Doc) -> None:
    res = _pod_level(p)
    res.setdefault(rng.choice(("limits", "requests")), {})[rng.choice((GPU, "ephemeral-storage", "pods"))] = "1"


def _pod_level_requests_above_limits(rng: random.Random, p: Doc) -> None:
    p["spec"]["resources"] = {"requests": {"cpu": "6", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "1Gi"}}


def _pod_level_below_aggregate(rng: random.Random, p: Doc) -> None:
    c = p["spec"]["containers"][0]
    c["resources"] = {"requests": {"cpu": "3", "memory": "3Gi"}, "limits": {"cpu": "3", "memory": "3Gi"}}
    name = rng.choice(("cpu", "memory"))
    budget = {"cpu": "2", "memory": "2Gi"}
    p["spec"]["resources"] = {"requests": {name: budget[name]}} if rng.random() < 0.5 else {"limits": {name: budget[name]}}


def _pod_level_container_above(rng: random.Random, p: Doc) -> None:
    c = rng.choice(p["spec"]["containers"])
    c["resources"] = {"limits": {"cpu": "6", "memory": "512Mi"}}
    p["spec"]["resources"] = {"limits": {"cpu": "4", "memory": "8Gi"}, "requests": {"cpu": "4", "memory": "1Gi"}}


def _pod_level_hugepages(rng: random.Random, p: Doc) -> None:
    c = p["spec"]["containers"][0]
    c["resources"] = {"limits": {"cpu": "1", "memory": "64Mi", "hugepages-2Mi": "8Mi"}}
    p["spec"]["resources"] = {"limits": {"cpu": "4", "memory": "1Gi", "hugepages-2Mi": rng.choice(("4Mi", "3Mi"))}}


def _sidecar_budget(rng: random.Random, p: Doc) -> None:
    # a sidecar bigger than the pod-level budget
    p["spec"]["initContainers"] = [
        {"name": "side", "image": "proxy", "restartPolicy": "Always",
         "resources": {"limits": {"cpu": "6", "memory": "6Gi"}}}
    ]
    p["spec"]["resources"] = {"limits": {"cpu": "4", "memory": "4Gi"}}


def _bad_overhead(rng: random.Random, p: Doc) -> None:
    p["spec"]["overhead"] = rng.choice((
        {"cpu": "-1"}, {"foo": "1"}, {GPU: "500m"}, {"hugepages-2Mi": "3Mi"}, {"hugepages-2Mi": "2Mi"},
        {"cpu": "250m", "memory": "-1Mi"},
    ))


FAULTS: dict[str, Callable[[random.Random, Doc], None]] = {
    "bad-overhead": _bad_overhead,
    "bad-quantity": _bad_quantity,
    "negative": _negative,
    "requests-above-limits": _requests_above_limits,
    "unequal-noncompressible": _unequal_noncompressible,
    "fractional-extended": _fractional_extended,
    "request-without-limit": _request_without_limit,
    "hugepages-off-page": _hugepages_off_page,
    "hugepages-alone": _hugepages_alone,
    "bad-resource-name": _bad_resource_name,
    "duplicate-name": _duplicate_name,
    "bad-container-name": _bad_container_name,
    "bad-pod-name": _bad_pod_name,
    "bad-namespace": _bad_namespace,
    "container-restart-policy": _container_restart_policy,
    "pod-restart-policy": _pod_restart_policy,
    "no-containers": _no_containers,
    "ephemeral-with-resources": _ephemeral_with_resources,
    "pod-level-unsupported": _pod_level_unsupported,
    "pod-level-requests-above-limits": _pod_level_requests_above_limits,
    "pod-level-below-aggregate": _pod_level_below_aggregate,
    "pod-level-container-above": _pod_level_container_above,
    "pod-level-hugepages": _pod_level_hugepages,
    "sidecar-above-budget": _sidecar_budget,
}


def invalid_pod(rng: random.Random, name: str, faults: int = 1) -> tuple[Doc, list[str]]:
    """A pod with ``faults`` deliberate faults (which may, rarely, cancel
    out), and their names."""
    p = _valid_pod(rng, name)
    names = rng.sample(sorted(FAULTS), faults)
    names.sort(key=lambda f: f == "no-containers")  # the others need a container
    for f in names:
        FAULTS[f](rng, p)
    return p, names


def pod(seed: int, index: int) -> tuple[Doc, str, list[str]]:
    """The ``index``-th pod of ``seed``: (manifest, gate set name, faults)."""
    rng = random.Random(f"pods:{seed}:{index}")
    gates = rng.choices(sorted(GATE_SETS), (5, 2, 2))[0]
    name = f"p{index}"
    if rng.random() < 0.45:
        return _valid_pod(rng, name), gates, []
    doc, faults = invalid_pod(rng, name, rng.choice((1, 1, 1, 2)))
    return doc, gates, faults


def pods(seed: int, count: int) -> list[tuple[Doc, str, list[str]]]:
    return [pod(seed, i) for i in range(count)]


def with_invalid_pod(doc: Doc, seed: int, index: int, share: float = 0.05) -> Doc:
    """The scenario, with (in ``share`` of them) an invalid pod slipped in
    as an ``addPod`` step at a random place: both engines must then refuse
    the scenario as invalid input at that step, podnuma with one of the API
    server's errors for the pod. Drawn from its own random stream, so the
    rest of the scenario is what it would have been."""
    rng = random.Random(f"invalid-step:{seed}:{index}")
    if rng.random() >= share or not isinstance(doc.get("steps"), list):
        return doc
    bad, _ = invalid_pod(rng, f"invalid{index}", rng.choice((1, 1, 2)))
    doc["steps"].insert(rng.randint(0, len(doc["steps"])), {"addPod": bad})
    return doc
