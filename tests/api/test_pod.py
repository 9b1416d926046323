"""Pod manifests: parsing, API-server defaulting and validation.

Defaulting cases follow pkg/apis/core/v1/defaults_test.go (container
requests from limits; pod-level requests/hugepage limits) and the v1.37
PodLevelResourcesFixDefaulting rules (kubernetes#140514); validation cases
follow pkg/apis/core/validation/validation_test.go messages for the fields
podnuma reads.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from podnuma.api.pod import Pod, derive_pod_uid
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.qos import compute_pod_qos
from podnuma.api.quantity import parse_quantity
from podnuma.api.resources import pod_limits, pod_requests
from podnuma.errors import InputError


class Gates:
    """A stand-in for FeatureGates with the v1.37 defaults of the gates parse_pod reads."""

    def __init__(self, **overrides: bool) -> None:
        self._gates = {
            "PodLevelResources": True, "PodLevelResourcesFixDefaulting": True, "ContainerRestartRules": True,
        }
        self._gates.update(overrides)

    def enabled(self, name: str) -> bool:
        return self._gates[name]


ON = Gates()
LEGACY = Gates(PodLevelResourcesFixDefaulting=False)
PLR_OFF = Gates(PodLevelResources=False, PodLevelResourcesFixDefaulting=False)


def qs(d: Mapping[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in d.items()}


def same(got: Mapping[str, Any], want: Mapping[str, str]) -> bool:
    return dict(got) == {k: parse_quantity(v) for k, v in want.items()}


def base_doc() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "demo", "namespace": "team-a"},
        "spec": {
            "initContainers": [
                {"name": "setup", "image": "busybox",
                 "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
                {"name": "proxy", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}},
            ],
            "containers": [
                {"name": "app", "image": "nginx", "ports": [{"containerPort": 80}],
                 "resources": {"requests": {"cpu": "2", "memory": "2Gi"},
                               "limits": {"cpu": "2", "memory": "2Gi"}}},
                {"name": "helper"},
            ],
        },
    }


# ---------------------------------------------------------------- parsing


def test_parse_basic_pod() -> None:
    p = parse_pod(base_doc(), gates=ON)
    assert p.name == "demo" and p.namespace == "team-a" and p.ref == "team-a/demo"
    assert p.uid == derive_pod_uid("team-a", "demo")
    assert [(c.name, c.kind, c.index) for c in p.all_containers()] == [
        ("setup", "init", 0), ("proxy", "sidecar", 1), ("app", "app", 0), ("helper", "app", 1)]
    assert [c.name for c in p.init_containers] == ["setup", "proxy"]
    assert p.container("proxy").is_sidecar and p.container("proxy").is_init
    assert p.container("proxy").restart_policy == "Always"
    assert not p.container("app").is_init
    assert p.resources is None
    with pytest.raises(KeyError):
        p.container("nope")


def test_uid_namespace_and_minimal_document() -> None:
    doc = {"metadata": {"name": "x"}, "spec": {"containers": [{"name": "c"}]}}
    p = parse_pod(doc, gates=ON)
    assert p.namespace == "default"
    assert p.uid == derive_pod_uid("default", "x")
    assert p.uid == parse_pod(copy.deepcopy(doc), gates=ON).uid  # stable
    assert p.uid != derive_pod_uid("other", "x")
    doc["metadata"]["uid"] = "1234-abcd"
    assert parse_pod(doc, gates=ON).uid == "1234-abcd"


def test_pods_are_hashable_values() -> None:
    a = parse_pod(base_doc(), gates=ON)
    b = parse_pod(base_doc(), gates=ON)
    assert a == b and hash(a) == hash(b)
    assert {a, b} == {a}


def test_unknown_fields_are_ignored() -> None:
    doc = base_doc()
    doc["status"] = {"phase": "Running"}
    doc["spec"]["nodeName"] = "n1"
    doc["spec"]["containers"][0]["resources"]["claims"] = []
    doc["spec"]["containers"][0]["livenessProbe"] = {"exec": {"command": ["true"]}}
    assert parse_pod(doc, gates=ON).container("app").name == "app"


def test_ephemeral_containers_are_names_only() -> None:
    doc = base_doc()
    doc["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox"}]
    # (a scenario's pod, or one an API server serves: they were added after the create)
    assert parse_pod(doc, gates=ON, unknown_in_order=True).ephemeral_containers == ("debugger",)
    assert parse_pod(doc, gates=ON, lenient=True).ephemeral_containers == ("debugger",)
    # (a dump's pod read back as a scenario's: not a create request)
    assert parse_pod(doc, gates=ON, sort_keys=True, on_create=False).ephemeral_containers == ("debugger",)
    # the API server's create refuses them (ValidatePodCreate), after the spec's checks
    with pytest.raises(InputError) as err:
        parse_pod(doc, gates=ON)
    assert (err.value.path, err.value.message) == ("spec.ephemeralContainers", "Forbidden: cannot be set on create")


def test_labels_and_annotations() -> None:
    doc = base_doc()
    doc["metadata"]["labels"] = {"app": "demo"}
    doc["metadata"]["annotations"] = {"a": "b"}
    p = parse_pod(doc, gates=ON)
    assert dict(p.labels) == {"app": "demo"} and dict(p.annotations) == {"a": "b"}


# ------------------------------------------------------ container defaulting


def test_container_requests_default_from_limits() -> None:
    p = parse_pod(base_doc(), gates=ON)
    setup = p.container("setup")
    assert same(setup.requests, {"cpu": "1", "memory": "1Gi"})
    assert same(setup.limits, {"cpu": "1", "memory": "1Gi"})
    # An explicit request is kept; only the missing keys are filled.
    proxy = p.container("proxy")
    assert same(proxy.requests, {"cpu": "500m"}) and same(proxy.limits, {"cpu": "1"})
    assert same(p.container("helper").requests, {})


def test_partial_request_defaulting_per_key() -> None:
    doc = {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "250m"},
                                    "limits": {"cpu": "1", "memory": "1Gi"}}}]}}
    c = parse_pod(doc, gates=ON).container("c")
    assert same(c.requests, {"cpu": "250m", "memory": "1Gi"})


def test_quantities_round_up_to_milli_and_keep_their_text() -> None:
    doc = {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"cpu": "0.0001", "memory": "1Gi"},
                                    "requests": {"cpu": 0.00005, "memory": 1073741824}}}]}}
    c = parse_pod(doc, gates=ON).container("c")
    # RoundUp keeps the format: 5e-05 (DecimalExponent) prints as 1e-3
    assert str(c.limits["cpu"]) == "1m" and str(c.requests["cpu"]) == "1e-3"
    assert c.limits["cpu"] == c.requests["cpu"]
    assert str(c.limits["memory"]) == "1Gi"
    assert c.requests["memory"] == c.limits["memory"]


def test_overhead() -> None:
    doc = base_doc()
    doc["spec"]["overhead"] = {"cpu": "250m", "memory": "120Mi"}
    p = parse_pod(doc, gates=ON)
    assert same(p.overhead, {"cpu": "250m", "memory": "120Mi"})
    # apps (2 + 500m sidecar) vs init (1 + sidecars before it: none) -> 2500m, plus overhead
    assert same(pod_requests(p, pod_level_resources=True), {"cpu": "2750m", "memory": "2168Mi"})


# ------------------------------------------------------------- validation


def mutate(fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = base_doc()
    fn(doc)
    return doc


def app0(doc: dict[str, Any]) -> dict[str, Any]:
    res: dict[str, Any] = doc["spec"]["containers"][0]["resources"]
    return res


def set_res(req: dict[str, Any] | None, lim: dict[str, Any] | None) -> Callable[[dict[str, Any]], None]:
    def fn(doc: dict[str, Any]) -> None:
        doc["spec"]["containers"][0]["resources"] = {
            k: v for k, v in (("requests", req), ("limits", lim)) if v is not None}
    return fn


def set_pod_res(req: dict[str, Any] | None, lim: dict[str, Any] | None) -> Callable[[dict[str, Any]], None]:
    def fn(doc: dict[str, Any]) -> None:
        doc["spec"]["resources"] = {
            k: v for k, v in (("requests", req), ("limits", lim)) if v is not None}
    return fn


def setitem(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def fn(doc: dict[str, Any]) -> None:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return fn


_DELETE = object()

INVALID: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    # name, mutation, error path, message (exact, or prefix when it ends with "...")
    ("bad apiVersion", setitem(["apiVersion"], "v2"), "apiVersion",
     'no kind "Pod" is registered for version "v2" in scheme "pkg/runtime/scheme.go:111"'),
    ("bad kind", setitem(["kind"], "Deployment"), "kind",
     'no kind "Deployment" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"'),
    ("no metadata", setitem(["metadata"], _DELETE), "metadata", "Required value"),
    ("no name", setitem(["metadata", "name"], _DELETE), "metadata.name",
     "Required value: name or generateName is required"),
    ("bad pod name", setitem(["metadata", "name"], "Demo_1"), "metadata.name",
     'Invalid value: "Demo_1": a lowercase RFC 1123 subdomain must consist of...'),
    ("long pod name", setitem(["metadata", "name"], "a" * 254), "metadata.name",
     f'Invalid value: "{"a" * 254}": must be no more than 253 characters'),
    ("bad namespace", setitem(["metadata", "namespace"], "a.b"), "metadata.namespace",
     'Invalid value: "a.b": must not contain dots'),
    ("bad namespace chars", setitem(["metadata", "namespace"], "A_b"), "metadata.namespace",
     'Invalid value: "A_b": a lowercase RFC 1123 label must consist of...'),
    ("no spec", setitem(["spec"], _DELETE), "spec", "Required value"),
    ("no containers", setitem(["spec", "containers"], []), "spec.containers", "Required value"),
    ("container without name", setitem(["spec", "containers", 1, "name"], _DELETE),
     "spec.containers[1].name", "Required value"),
    ("bad container name", setitem(["spec", "containers", 1, "name"], "Helper"),
     "spec.containers[1].name",
     'Invalid value: "Helper": a lowercase RFC 1123 label must consist of lower case '
     "alphanumeric characters or '-', and must start and end with an alphanumeric character "
     "(e.g. 'my-name',  or '123-abc', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
    ("container name too long", setitem(["spec", "containers", 1, "name"], "x" * 64),
     "spec.containers[1].name", f'Invalid value: "{"x" * 64}": must be no more than 63 characters'),
    ("duplicate app names", setitem(["spec", "containers", 1, "name"], "app"),
     "spec.containers[1].name", 'Duplicate value: "app"'),
    # app containers are registered first: the init container is the duplicate
    ("app name clashes with init", setitem(["spec", "containers", 1, "name"], "setup"),
     "spec.initContainers[0].name", 'Duplicate value: "setup"'),
    ("duplicate init names", setitem(["spec", "initContainers", 1, "name"], "setup"),
     "spec.initContainers[1].name", 'Duplicate value: "setup"'),
    ("ephemeral name clash",
     setitem(["spec", "ephemeralContainers"], [{"name": "app"}]),
     "spec.ephemeralContainers[0].name", 'Duplicate value: "app"'),
    ("bad restartPolicy on app container",
     setitem(["spec", "containers", 1, "restartPolicy"], "Sometimes"),
     "spec.containers[1].restartPolicy",
     'Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"'),
    ("bad restartPolicy on init", setitem(["spec", "initContainers", 0, "restartPolicy"], "always"),
     "spec.initContainers[0].restartPolicy",
     'Unsupported value: "always": supported values: "Always", "Never", "OnFailure"'),
    ("bad quantity", set_res(None, {"cpu": "one"}), "spec.containers[0].resources.limits[cpu]",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("quantity of wrong type", set_res(None, {"cpu": [1]}),
     "spec.containers[0].resources.limits[cpu]",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("negative request", set_res({"memory": "-1Gi"}, None),
     "spec.containers[0].resources.requests[memory]",
     'Invalid value: "-1Gi": must be greater than or equal to 0'),
    ("request above limit", set_res({"cpu": "2"}, {"cpu": "1"}),
     "spec.containers[0].resources.requests",
     'Invalid value: "2": must be less than or equal to cpu limit of 1'),
    ("memory request above limit", set_res({"memory": "2Gi"}, {"memory": "1Gi"}),
     "spec.containers[0].resources.requests",
     'Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi'),
    ("hugepages request differs from limit",
     set_res({"memory": "1Gi", "hugepages-2Mi": "2Mi"}, {"memory": "1Gi", "hugepages-2Mi": "4Mi"}),
     "spec.containers[0].resources.requests",
     'Invalid value: "2Mi": must be equal to hugepages-2Mi limit of 4Mi'),
    ("hugepages request without limit", set_res({"memory": "1Gi", "hugepages-2Mi": "2Mi"}, None),
     "spec.containers[0].resources.limits",
     "Required value: Limit must be set for non overcommitable resources"),
    ("hugepages without cpu or memory", set_res(None, {"hugepages-2Mi": "2Mi"}),
     "spec.containers[0].resources", "Forbidden: HugePages require cpu or memory"),
    ("hugepages not a multiple of the page size",
     set_res(None, {"memory": "1Gi", "hugepages-2Mi": "3Mi"}),
     "spec.containers[0].resources.limits[hugepages-2Mi]",
     'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi'),
    ("extended resource must be an integer", set_res(None, {"example.com/gpu": "500m"}),
     "spec.containers[0].resources.limits[example.com/gpu]",
     'Invalid value: "500m": must be an integer'),
    ("extended resource request differs from limit",
     set_res({"example.com/gpu": "1"}, {"example.com/gpu": "2"}),
     "spec.containers[0].resources.requests",
     'Invalid value: "1": must be equal to example.com/gpu limit of 2'),
    ("unknown resource name", set_res({"cpus": "1"}, None),
     "spec.containers[0].resources.requests[cpus]",
     'Invalid value: "cpus": must be a standard resource type or fully qualified'),
    ("quota name on a container", set_res({"pods": "1"}, None),
     "spec.containers[0].resources.requests[pods]",
     'Invalid value: "pods": must be a standard resource for containers'),
    ("resources not a mapping", setitem(["spec", "containers", 0, "resources"], ["cpu"]),
     "spec.containers[0].resources", "must be a mapping, got a list"),
    # pod-level resources (KEP-2837)
    ("pod-level unsupported resource", set_pod_res({"ephemeral-storage": "1Gi"}, None),
     "spec.resources.requests[ephemeral-storage]",
     'Unsupported value: "ephemeral-storage": supported values: "cpu", "hugepages-", "memory"'),
    ("pod-level extended resource", set_pod_res(None, {"example.com/gpu": "1"}),
     "spec.resources.limits[example.com/gpu]",
     'Unsupported value: "example.com/gpu": supported values: "cpu", "hugepages-", "memory"'),
    ("pod-level request above pod-level limit", set_pod_res({"cpu": "8"}, {"cpu": "4"}),
     "spec.resources.requests", 'Invalid value: "8": must be less than or equal to cpu limit of 4'),
    ("pod-level requests below the containers'", set_pod_res({"cpu": "2"}, None),
     "spec.resources.requests[cpu]",
     'Invalid value: "2": must be greater than or equal to aggregate container requests of 2500m'),
    ("container limit above pod-level limit",
     lambda d: (set_res({"cpu": "100m"}, {"cpu": "2"})(d),
                setitem(["spec", "initContainers"], _DELETE)(d),
                set_pod_res(None, {"cpu": "1"})(d)),
     "spec.resources.containers[0][cpu].limits",
     'Invalid value: "2": must be less than or equal to pod limits of 1'),
    ("pod-level hugepages below the containers'",
     lambda d: (set_res(None, {"cpu": "2", "memory": "2Gi", "hugepages-2Mi": "8Mi"})(d),
                set_pod_res({"cpu": "4"}, {"hugepages-2Mi": "4Mi"})(d)),
     "spec.resources.requests[hugepages-2Mi]",
     'Invalid value: "4Mi": must be greater than or equal to aggregate container requests of 8Mi'),
    # validateOverhead checks the overhead as a container's limits, under that path
    ("negative overhead", setitem(["spec", "overhead"], {"cpu": "-1"}), "spec.overhead.limits[cpu]",
     'Invalid value: "-1": must be greater than or equal to 0'),
    ("hugepages overhead alone", setitem(["spec", "overhead"], {"hugepages-2Mi": "2Mi"}), "spec.overhead",
     "Forbidden: HugePages require cpu or memory"),
    ("pod-level claims", setitem(["spec", "resources"], {"claims": [{"name": "x"}]}),
     "spec.resources.claims", "Forbidden: claims may not be set for Resources at pod-level"),
]


@pytest.mark.parametrize("name,fn,path,message", INVALID, ids=[t[0] for t in INVALID])
def test_invalid_pods(name: str, fn: Callable[[dict[str, Any]], None], path: str,
                      message: str) -> None:
    doc = mutate(fn)
    with pytest.raises(InputError) as info:
        parse_pod(doc, gates=ON)
    err = info.value
    assert err.path == path
    if message.endswith("..."):
        assert err.message.startswith(message[:-3])
    else:
        assert err.message == message


OLD_RESTART_RULES = Gates(ContainerRestartRules=False)


def test_container_restart_policies_without_restart_rules() -> None:
    # ContainerRestartRules off: the API server's PrepareForCreate drops
    # every container's restartPolicy but an init container's Always
    # (dropContainerRestartRules), so none is refused (tests/oracle/
    # test_pod_validation_probes_differential.py compares this with Go)
    pod = parse_pod(mutate(setitem(["spec", "containers", 1, "restartPolicy"], "Bogus")), gates=OLD_RESTART_RULES)
    assert pod.containers[1].restart_policy is None
    doc = mutate(setitem(["spec", "initContainers", 0, "restartPolicy"], "Never"))
    doc["spec"]["initContainers"][0]["livenessProbe"] = {"exec": {"command": ["true"]}}
    with pytest.raises(InputError) as info:  # a regular init container again
        parse_pod(doc, gates=OLD_RESTART_RULES)
    assert (info.value.path, info.value.message) == (
        "spec.initContainers[0].livenessProbe",
        "Forbidden: may not be set for init containers without restartPolicy=Always")


def test_container_restart_policies_with_restart_rules() -> None:
    # v1.37 (ContainerRestartRules beta, on): any container may set one; an
    # init container is a sidecar only with Always
    doc = mutate(setitem(["spec", "initContainers", 0, "restartPolicy"], "Never"))
    doc["spec"]["containers"][1]["restartPolicy"] = "OnFailure"
    pod = parse_pod(doc, gates=ON)
    assert pod.init_containers[0].kind == "init"
    assert pod.containers[1].kind == "app"


def test_an_unparsable_quantity_is_reported_before_any_other_fault() -> None:
    # the API server decodes the request before validating it
    doc = mutate(setitem(["metadata", "name"], "Bad_Name"))
    doc["spec"]["containers"][1]["resources"] = {"limits": {"cpu": "1.2.3"}}
    with pytest.raises(InputError) as info:
        parse_pod(doc, gates=ON)
    assert info.value.path == "spec.containers[1].resources.limits[cpu]"


def test_error_paths_take_a_prefix() -> None:
    with pytest.raises(InputError) as info:
        parse_pod(mutate(set_res({"cpu": "2"}, {"cpu": "1"})), gates=ON)
    err = info.value.at("steps[3].addPod")
    assert err.path == "steps[3].addPod.spec.containers[0].resources.requests"


def test_not_a_mapping() -> None:
    with pytest.raises(InputError):
        parse_pod(["not", "a", "pod"], gates=ON)  # type: ignore[arg-type]


def test_pod_level_validation_skipped_when_gate_off() -> None:
    # The field is dropped before validation when PodLevelResources is off.
    doc = mutate(set_pod_res({"cpu": "1", "ephemeral-storage": "1Gi"}, None))
    assert parse_pod(doc, gates=PLR_OFF).resources is None


# ---------------------------------------------------- pod-level defaulting


def plr_doc(pod_req: dict[str, str] | None, pod_lim: dict[str, str] | None,
            *containers: tuple[dict[str, str] | None, dict[str, str] | None],
            sidecar: tuple[dict[str, str] | None, dict[str, str] | None] | None = None
            ) -> dict[str, Any]:
    def res(req: dict[str, str] | None, lim: dict[str, str] | None) -> dict[str, Any]:
        return {k: v for k, v in (("requests", req), ("limits", lim)) if v is not None}

    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "resources": res(*c)} for i, c in enumerate(containers)],
        "resources": res(pod_req, pod_lim),
    }
    if sidecar is not None:
        spec["initContainers"] = [{"name": "side", "restartPolicy": "Always",
                                   "resources": res(*sidecar)}]
    return {"metadata": {"name": "plr"}, "spec": spec}


CPU1 = {"cpu": "1", "memory": "1Gi"}

DEFAULTING: list[tuple[str, dict[str, Any], tuple[dict[str, str], dict[str, str]],
                       tuple[dict[str, str], dict[str, str]]]] = [
    # name, doc, (requests, limits) with FixDefaulting, (requests, limits) legacy
    ("pod limits only: requests default to limits",
     plr_doc(None, {"cpu": "4", "memory": "4Gi"}, (None, None)),
     ({"cpu": "4", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"}),
     ({"cpu": "4", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"})),
    ("pod limits, container requests: requests from the containers",
     plr_doc(None, {"cpu": "4", "memory": "4Gi"}, ({"cpu": "1"}, None), ({"cpu": "500m"}, None)),
     ({"cpu": "1500m", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"}),
     ({"cpu": "1500m", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"})),
    ("pod limits, container limits: container requests from their limits, then the pod's",
     plr_doc(None, {"cpu": "4", "memory": "4Gi"}, (None, CPU1), (None, CPU1)),
     ({"cpu": "2", "memory": "2Gi"}, {"cpu": "4", "memory": "4Gi"}),
     ({"cpu": "2", "memory": "2Gi"}, {"cpu": "4", "memory": "4Gi"})),
    ("pod requests, every container limited: pod limits from the containers (v1.37)",
     plr_doc({"cpu": "2", "memory": "2Gi"}, None, (None, CPU1), (None, CPU1)),
     ({"cpu": "2", "memory": "2Gi"}, {"cpu": "2", "memory": "2Gi"}),
     ({"cpu": "2", "memory": "2Gi"}, {})),
    ("pod requests above the containers' limits: the limit is raised to the request",
     plr_doc({"cpu": "3", "memory": "2Gi"}, None, (None, CPU1), (None, CPU1)),
     ({"cpu": "3", "memory": "2Gi"}, {"cpu": "3", "memory": "2Gi"}),
     ({"cpu": "3", "memory": "2Gi"}, {})),
    ("sidecar limits count in the aggregate and in 'every container limited'",
     plr_doc({"cpu": "3"}, None, (None, CPU1), sidecar=(None, {"cpu": "2", "memory": "1Gi"})),
     ({"cpu": "3", "memory": "2Gi"}, {"cpu": "3", "memory": "2Gi"}),
     ({"cpu": "3"}, {})),
    ("one container unlimited: no pod limit",
     plr_doc({"cpu": "2", "memory": "2Gi"}, None, (None, CPU1), (None, None)),
     ({"cpu": "2", "memory": "2Gi"}, {}),
     ({"cpu": "2", "memory": "2Gi"}, {})),
    ("only one resource limited everywhere",
     plr_doc({"cpu": "2"}, None, (None, {"cpu": "1"}), ({"memory": "1Gi"}, {"cpu": "1"})),
     ({"cpu": "2", "memory": "1Gi"}, {"cpu": "2"}),
     ({"cpu": "2"}, {})),
    ("pod requests for one resource: the other defaults from the containers (v1.37)",
     plr_doc({"memory": "1Gi"}, None, ({"cpu": "500m"}, None)),
     ({"cpu": "500m", "memory": "1Gi"}, {}),
     ({"memory": "1Gi"}, {})),
    ("explicit pod values are kept",
     plr_doc({"cpu": "2", "memory": "2Gi"}, {"cpu": "4"}, (None, CPU1)),
     ({"cpu": "2", "memory": "2Gi"}, {"cpu": "4", "memory": "2Gi"}),
     ({"cpu": "2", "memory": "2Gi"}, {"cpu": "4"})),
    ("hugepage limits default from the containers, requests from those limits",
     plr_doc({"cpu": "2"}, None, ({"cpu": "1", "memory": "1Gi"},
                                  {"memory": "1Gi", "hugepages-2Mi": "4Mi"})),
     ({"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"},
      {"memory": "1Gi", "hugepages-2Mi": "4Mi"}),
     ({"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "4Mi"}, {"hugepages-2Mi": "4Mi"})),
    ("no hugepage limit default when the pod requests that size",
     plr_doc({"cpu": "2", "hugepages-2Mi": "8Mi"}, {"hugepages-2Mi": "8Mi"},
             ({"cpu": "1"}, {"memory": "1Gi", "hugepages-2Mi": "4Mi"})),
     ({"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "8Mi"},
      {"memory": "1Gi", "hugepages-2Mi": "8Mi"}),
     ({"cpu": "2", "memory": "1Gi", "hugepages-2Mi": "8Mi"}, {"hugepages-2Mi": "8Mi"})),
    ("empty pod-level resources stay empty",
     plr_doc(None, None, (None, CPU1)), ({}, {}), ({}, {})),
]


@pytest.mark.parametrize("name,doc,fixed,legacy", DEFAULTING, ids=[t[0] for t in DEFAULTING])
def test_pod_level_defaulting(name: str, doc: dict[str, Any],
                              fixed: tuple[dict[str, str], dict[str, str]],
                              legacy: tuple[dict[str, str], dict[str, str]]) -> None:
    for gates, (want_req, want_lim) in ((ON, fixed), (LEGACY, legacy)):
        p = parse_pod(copy.deepcopy(doc), gates=gates)
        assert p.resources is not None
        assert same(p.resources.requests, want_req), (gates, qs(p.resources.requests))
        assert same(p.resources.limits, want_lim), (gates, qs(p.resources.limits))


def test_fix_defaulting_changes_qos() -> None:
    # Pod requests, every container limited: the v1.37 defaulting gives the pod
    # limits equal to its requests, which makes it Guaranteed; the legacy
    # defaulting leaves it without pod-level limits (Burstable).
    doc = plr_doc({"cpu": "2", "memory": "2Gi"}, None, (None, CPU1), (None, CPU1))
    fixed = parse_pod(copy.deepcopy(doc), gates=ON)
    legacy = parse_pod(copy.deepcopy(doc), gates=LEGACY)
    assert compute_pod_qos(fixed, pod_level_resources=True) == "Guaranteed"
    assert compute_pod_qos(legacy, pod_level_resources=True) == "Burstable"
    assert same(pod_limits(fixed, pod_level_resources=True), {"cpu": "2", "memory": "2Gi"})
    assert same(pod_limits(legacy, pod_level_resources=True), {"cpu": "2", "memory": "2Gi"})


def test_pod_level_resources_dropped_when_gate_off() -> None:
    doc = plr_doc({"cpu": "4", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"}, (None, None))
    p = parse_pod(doc, gates=PLR_OFF)
    assert p.resources is None
    assert compute_pod_qos(p, pod_level_resources=False) == "BestEffort"
    assert same(pod_requests(p, pod_level_resources=False), {})


def test_pod_level_pod_is_guaranteed_and_sized_by_pod_values() -> None:
    doc = plr_doc({"cpu": "4", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"},
                  (CPU1, CPU1), ({"cpu": "500m"}, None))
    p = parse_pod(doc, gates=ON)
    assert compute_pod_qos(p, pod_level_resources=True) == "Guaranteed"
    assert same(pod_requests(p, pod_level_resources=True), {"cpu": "4", "memory": "4Gi"})
    assert same(pod_requests(p, pod_level_resources=False), {"cpu": "1500m", "memory": "1Gi"})


def test_empty_pod_level_resources_are_kept_apart_from_absent() -> None:
    doc = plr_doc(None, None, (CPU1, CPU1))
    p = parse_pod(doc, gates=ON)
    assert p.resources is not None and p.resources.is_empty()
    assert compute_pod_qos(p, pod_level_resources=True) == "Guaranteed"
    assert compute_pod_qos(p, pod_level_resources=True, fix_kubelet_qos_class=False) == "BestEffort"


def test_real_feature_gates() -> None:
    featuregates = pytest.importorskip("podnuma.api.featuregates")
    gates = featuregates.FeatureGates.defaults()
    p = parse_pod(plr_doc({"cpu": "2", "memory": "2Gi"}, None, (None, CPU1), (None, CPU1)),
                  gates=gates)
    assert isinstance(p, Pod)
    assert p.resources is not None
    # v1.37 defaults: PodLevelResources and PodLevelResourcesFixDefaulting are on.
    assert same(p.resources.limits, {"cpu": "2", "memory": "2Gi"})


@pytest.mark.parametrize(("namespace", "name"), [
    ("default", "x"), ("team-a", "demo"), ("ns", "pod-é-名前"), ("", ""),
])
def test_derived_uid_is_uuid5_of_namespace_and_name(namespace: str, name: str) -> None:
    # made without uuid.uuid5 (which imports hashlib) nor the uuid module
    # (which imports platform): the same text
    import uuid

    from podnuma.api.pod import POD_UID_NAMESPACE

    expected = str(uuid.uuid5(uuid.UUID(POD_UID_NAMESPACE), f"{namespace}/{name}"))
    assert derive_pod_uid(namespace, name) == expected
