"""Hooks and probes of init and ephemeral containers, container ports and
the order of a pod's validation errors, as ``parse_pod`` reports them (the
API server's words, ``pkg/apis/core/validation`` of v1.37.2; the
differential cases: tests/oracle/test_pod_validation_probes_differential.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_validation import check_ephemeral_fields, check_host_port_conflicts
from podnuma.errors import InputError

GATES = FeatureGates.defaults()
NOT_FOR_INIT = "Forbidden: may not be set for init containers without restartPolicy=Always"
RANGE = "must be between 1 and 65535, inclusive"
PROBE: dict[str, Any] = {"exec": {"command": ["true"]}}


def _pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None,
         eph: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"containers": containers, **spec}
    if init is not None:
        s["initContainers"] = init
    if eph is not None:
        s["ephemeralContainers"] = eph
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"}, "spec": s}


def _c(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "x", **fields}


def _refusal(doc: dict[str, Any], gates: FeatureGates = GATES, **kw: Any) -> tuple[str, str] | None:
    try:
        parse_pod(copy.deepcopy(doc), gates=gates, **kw)
    except InputError as e:
        return e.path or "", e.message
    return None


@pytest.mark.parametrize("key", ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"])
@pytest.mark.parametrize("restart", [None, "Never", "OnFailure"])
def test_a_regular_init_container_may_have_no_hooks_or_probes(key: str, restart: str | None) -> None:
    extra = {} if restart is None else {"restartPolicy": restart}
    value: dict[str, Any] = {} if key == "lifecycle" else PROBE
    doc = _pod([_c("a")], [_c("i", **extra, **{key: value})])
    assert _refusal(doc) == (f"spec.initContainers[0].{key}", NOT_FOR_INIT)
    # null is not set
    assert _refusal(_pod([_c("a")], [_c("i", **extra, **{key: None})])) is None


def test_lifecycle_is_refused_first_then_the_probes_in_go_order() -> None:
    init = _c("i", startupProbe=PROBE, readinessProbe=PROBE, livenessProbe=PROBE)
    assert _refusal(_pod([_c("a")], [init])) == ("spec.initContainers[0].livenessProbe", NOT_FOR_INIT)
    init["lifecycle"] = {}
    assert _refusal(_pod([_c("a")], [init])) == ("spec.initContainers[0].lifecycle", NOT_FOR_INIT)


def test_a_sidecars_hooks_and_probes_are_validated_as_an_app_containers() -> None:
    sidecar = _c("s", restartPolicy="Always", lifecycle={"preStop": PROBE}, livenessProbe=PROBE,
                 readinessProbe=PROBE, startupProbe=PROBE)
    assert _refusal(_pod([_c("a")], [sidecar])) is None
    sidecar["readinessProbe"] = {}
    assert _refusal(_pod([_c("a")], [sidecar])) == (
        "spec.initContainers[0].readinessProbe", "Required value: must specify a handler type")


def test_ephemeral_containers_refused_fields_in_go_field_order() -> None:
    fields = {"lifecycle": {}, "livenessProbe": PROBE, "restartPolicy": "Always", "resources": {"limits": {}},
              "ports": []}
    doc = _pod([_c("a")], eph=[_c("e", **fields)])
    # ports (empty, but not null) come first in EphemeralContainerCommon
    assert _refusal(doc) == ("spec.ephemeralContainers[0].ports", "Forbidden: cannot be set for an Ephemeral Container")
    del fields["ports"]
    assert _refusal(_pod([_c("a")], eph=[_c("e", **fields)]))[0] == "spec.ephemeralContainers[0].resources"  # type: ignore[index]


def test_ephemeral_resources_with_only_null_lists_are_not_set() -> None:
    check_ephemeral_fields(_c("e", resources={"limits": None, "requests": None}, stdin=True), "e")
    with pytest.raises(InputError, match="cannot be set for an Ephemeral Container"):
        check_ephemeral_fields(_c("e", resources={"claims": []}), "e")
    assert _refusal(_pod([_c("a")], eph=[_c("e", resources={"limits": None})]), unknown_in_order=True) is None


@pytest.mark.parametrize(("port", "refusal"), [
    ({"containerPort": 0}, ("containerPort", "Required value")),
    ({}, ("containerPort", "Required value")),
    ({"containerPort": -0.0}, ("containerPort", "Required value")),
    ({"containerPort": -1}, ("containerPort", f"Invalid value: -1: {RANGE}")),
    ({"containerPort": 65536}, ("containerPort", f"Invalid value: 65536: {RANGE}")),
    ({"containerPort": 65535, "hostPort": 65536}, ("hostPort", f"Invalid value: 65536: {RANGE}")),
    ({"containerPort": 1, "hostPort": 0}, None),
    ({"containerPort": 1, "protocol": "tcp"},
     ("protocol", 'Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"')),
    ({"containerPort": 1, "protocol": ""}, None),
    ({"containerPort": 0, "name": "80"}, ("name", 'Invalid value: "80": must contain at least one letter (a-z)')),
])
def test_container_ports(port: dict[str, Any], refusal: tuple[str, str] | None) -> None:
    for doc, base in ((_pod([_c("c", ports=[port])]), "spec.containers[0]"),
                      (_pod([_c("a")], [_c("c", ports=[port])]), "spec.initContainers[0]")):
        got = _refusal(doc, numbers="float")
        assert got == (None if refusal is None else (f"{base}.ports[0].{refusal[0]}", refusal[1]))


def test_port_names_are_unique_within_a_container() -> None:
    ports = [{"containerPort": 1, "name": "p"}, {"containerPort": 2, "name": "p"}]
    assert _refusal(_pod([_c("c", ports=ports)])) == ("spec.containers[0].ports[1].name", 'Duplicate value: "p"')
    assert _refusal(_pod([_c("c", ports=ports[:1]), _c("d", ports=ports[1:])])) is None


def test_host_ports_app_containers_together_init_containers_apart() -> None:
    p9 = [{"containerPort": 1, "hostPort": 9}]
    assert _refusal(_pod([_c("c", ports=p9), _c("d", ports=p9)])) == (
        "spec.containers[1].ports[0].hostPort", 'Duplicate value: "TCP//9"')
    assert _refusal(_pod([_c("c", ports=p9)], [_c("i", ports=p9), _c("j", ports=p9)])) is None
    # within one init container: the path's index is 0 whatever the container's
    twice = [{"containerPort": 1, "hostPort": 9}, {"containerPort": 2, "hostPort": 9}]
    assert _refusal(_pod([_c("a")], [_c("i"), _c("j", ports=twice)])) == (
        "spec.initContainers[0].ports[1].hostPort", 'Duplicate value: "TCP//9"')
    with pytest.raises(InputError, match='"UDP/10.0.0.1/9"'):
        port = {"containerPort": 1, "hostPort": 9, "protocol": "UDP", "hostIP": "10.0.0.1"}
        check_host_port_conflicts([{"ports": [port, port]}], "c")


def test_host_network_defaults_and_matches_host_ports() -> None:
    p80 = [{"containerPort": 80}]
    assert _refusal(_pod([_c("c", ports=p80)], hostNetwork=True)) is None
    assert _refusal(_pod([_c("c", ports=p80), _c("d", ports=p80)], hostNetwork=True)) == (
        "spec.containers[1].ports[0].hostPort", 'Duplicate value: "TCP//80"')
    assert _refusal(_pod([_c("c", ports=[{"containerPort": 80, "hostPort": 81}])], hostNetwork=True)) == (
        "spec.containers[0].ports[0].hostPort", "Invalid value: 81: must match `containerPort` when `hostNetwork` is true")


BAD_PORT = {"httpGet": {"port": 0}}
BAD_PORT_MSG = f"Invalid value: 0: {RANGE}"


def test_app_containers_before_init_containers_before_the_pods_restart_policy() -> None:
    doc = _pod([_c("a", livenessProbe=BAD_PORT)], [_c("i", restartPolicy="Always", livenessProbe=BAD_PORT)],
               restartPolicy="Bad")
    assert _refusal(doc) == ("spec.containers[0].livenessProbe.httpGet.port", BAD_PORT_MSG)
    del doc["spec"]["containers"][0]["livenessProbe"]
    assert _refusal(doc) == ("spec.initContainers[0].livenessProbe.httpGet.port", BAD_PORT_MSG)
    del doc["spec"]["initContainers"][0]["livenessProbe"]
    assert _refusal(doc) == (
        "spec.restartPolicy", 'Unsupported value: "Bad": supported values: "Always", "OnFailure", "Never"')


def test_a_duplicate_name_before_the_containers_probes_after_its_ports() -> None:
    assert _refusal(_pod([_c("a"), _c("a", livenessProbe=BAD_PORT)])) == (
        "spec.containers[1].name", 'Duplicate value: "a"')
    assert _refusal(_pod([_c("a"), _c("a", ports=[{}])])) == (
        "spec.containers[1].ports[0].containerPort", "Required value")
    # an init container: its restartPolicy before the duplicate
    assert _refusal(_pod([_c("a")], [_c("a", restartPolicy="Bad")])) == (
        "spec.initContainers[0].restartPolicy", 'Unsupported value: "Bad": supported values: "Always", "Never", "OnFailure"')


def test_an_app_containers_restart_policy_after_its_probes() -> None:
    assert _refusal(_pod([_c("a", restartPolicy="Bad", livenessProbe=BAD_PORT)])) == (
        "spec.containers[0].livenessProbe.httpGet.port", BAD_PORT_MSG)


def test_without_restart_rules_restart_policies_are_dropped_not_refused() -> None:
    off = FeatureGates.from_mapping({"ContainerRestartRules": False, "RestartAllContainersOnContainerExits": False})
    assert _refusal(_pod([_c("a", restartPolicy="Bad")]), off) is None
    # an init container's Never is dropped: a regular init container, its probe refused
    assert _refusal(_pod([_c("a")], [_c("i", restartPolicy="Never", livenessProbe=PROBE)]), off) == (
        "spec.initContainers[0].livenessProbe", NOT_FOR_INIT)
    pod = parse_pod(_pod([_c("a")], [_c("i", restartPolicy="Always", livenessProbe=PROBE)]), gates=off)
    assert pod.init_containers[0].kind == "sidecar"


# ---- handler actions, probe counters, stop signals, ephemeral targets
# (messages as kubelet-oracle validate gives them; the differential cases:
# _action_cases in tests/oracle/test_pod_validation_probes_differential.py)

ALPHA = FeatureGates.from_mapping({"ContainerStopSignals": True, "H2CContainerProbe": True,
                                   "GRPCContainerProbeTLS": True})
HEADER_MSG = ("Invalid value: \"bad name\": a valid HTTP header must consist of alphanumeric characters or '-' "
              "(e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')")


@pytest.mark.parametrize(("action", "where", "message"), [
    ({"exec": {}}, "exec.command", "Required value"),
    ({"exec": {"command": []}}, "exec.command", "Required value"),
    ({"httpGet": {"port": 80, "scheme": "FTP"}}, "httpGet.scheme",
     'Unsupported value: "FTP": supported values: "HTTP", "HTTPS"'),
    # a named string type: shown as encoding/json writes it
    ({"httpGet": {"port": 80, "scheme": "<&>"}}, "httpGet.scheme",
     'Unsupported value: "\\u003c\\u0026\\u003e": supported values: "HTTP", "HTTPS"'),
    # the port before the scheme; an empty path is defaulted, not refused
    ({"httpGet": {"port": 0, "scheme": "FTP", "path": ""}}, "httpGet.port", f"Invalid value: 0: {RANGE}"),
    ({"httpGet": {"port": 80, "httpHeaders": [{"name": "X-Ok"}, {"name": "bad name"}]}}, "httpGet.httpHeaders",
     HEADER_MSG),
    ({"grpc": {"port": 0, "service": "not checked"}}, "grpc.port", f"Invalid value: 0: {RANGE}"),
])
def test_the_handler_set_is_validated(action: dict[str, Any], where: str, message: str) -> None:
    assert _refusal(_pod([_c("a", startupProbe=action)])) == (f"spec.containers[0].startupProbe.{where}", message)


def test_alpha_fields_are_dropped_without_their_gates() -> None:
    h2 = {"httpGet": {"port": 80, "protocol": "HTTP2", "host": "h"}}
    mode = {"grpc": {"port": 9, "mode": "SSL"}}
    assert _refusal(_pod([_c("a", livenessProbe=h2)])) is None
    assert _refusal(_pod([_c("a", livenessProbe=mode)])) is None
    assert _refusal(_pod([_c("a", livenessProbe=h2)]), ALPHA) == (
        "spec.containers[0].livenessProbe.httpGet.host", 'Invalid value: "h": must be empty when `protocol` is "HTTP2"')
    h2s = {"httpGet": {"port": 80, "protocol": "HTTP2", "scheme": "HTTPS"}}
    assert _refusal(_pod([_c("a", livenessProbe=h2s)]), ALPHA) == (
        "spec.containers[0].livenessProbe.httpGet.protocol", 'Invalid value: "HTTP2": is only supported with HTTP (H2C)')
    assert _refusal(_pod([_c("a", livenessProbe=mode)]), ALPHA) == (
        "spec.containers[0].livenessProbe.grpc.mode", 'Unsupported value: "SSL": supported values: "Plaintext", "TLS"')


@pytest.mark.parametrize(("grace", "seconds", "limit"), [(None, 31, 30), (None, -1, 30), (-3, 2, 1), (0, 1, 0)])
def test_a_sleep_hook_is_held_to_the_defaulted_grace_period(grace: int | None, seconds: int, limit: int) -> None:
    extra = {} if grace is None else {"terminationGracePeriodSeconds": grace}
    doc = _pod([_c("a", lifecycle={"preStop": {"sleep": {"seconds": seconds}}})], **extra)
    assert _refusal(doc) == ("spec.containers[0].lifecycle.preStop.sleep",
                             f"Invalid value: {seconds}: must be non-negative and less than "
                             f"terminationGracePeriodSeconds ({limit})")
    # 0 and the grace period itself are allowed
    doc["spec"]["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"] = limit
    assert _refusal(doc) is None


def test_probe_counters_in_order_after_the_defaults() -> None:
    probe = {**PROBE, "failureThreshold": -1, "initialDelaySeconds": -2, "timeoutSeconds": 0}
    assert _refusal(_pod([_c("a", livenessProbe=probe)])) == (
        "spec.containers[0].livenessProbe.initialDelaySeconds", "Invalid value: -2: must be greater than or equal to 0")
    # the handler's error first
    bad = {"exec": {}, "periodSeconds": -1}
    assert _refusal(_pod([_c("a", livenessProbe=bad)])) == ("spec.containers[0].livenessProbe.exec.command",
                                                             "Required value")
    # successThreshold: not negative, then 1 for liveness and startup probes only
    for key in ("livenessProbe", "startupProbe"):
        assert _refusal(_pod([_c("a", **{key: {**PROBE, "successThreshold": 2}})])) == (
            f"spec.containers[0].{key}.successThreshold", "Invalid value: 2: must be 1")
    assert _refusal(_pod([_c("a", readinessProbe={**PROBE, "successThreshold": 2})])) is None


def test_a_probes_termination_grace_period() -> None:
    assert _refusal(_pod([_c("a", livenessProbe={**PROBE, "terminationGracePeriodSeconds": 0,
                                                 "successThreshold": 3})])) == (
        "spec.containers[0].livenessProbe.terminationGracePeriodSeconds", "Invalid value: 0: must be greater than 0")
    assert _refusal(_pod([_c("a", readinessProbe={**PROBE, "terminationGracePeriodSeconds": 5})])) == (
        "spec.containers[0].readinessProbe.terminationGracePeriodSeconds",
        "Invalid value: 5: must not be set for readinessProbes")
    assert _refusal(_pod([_c("a", livenessProbe={**PROBE, "terminationGracePeriodSeconds": 5})])) is None


def test_stop_signals_need_the_gate_and_an_os() -> None:
    only_signal = {"stopSignal": "SIGUSR1"}
    # gate off: dropped, and the lifecycle it leaves empty with it (a plain
    # init container may then have it)
    assert _refusal(_pod([_c("a", lifecycle=only_signal)])) is None
    assert _refusal(_pod([_c("a")], [_c("i", lifecycle=only_signal)])) is None
    assert _refusal(_pod([_c("a")], [_c("i", lifecycle={**only_signal, "preStop": {"sleep": {}}})])) == (
        "spec.initContainers[0].lifecycle", NOT_FOR_INIT)
    assert _refusal(_pod([_c("a", lifecycle=only_signal)]), ALPHA) == (
        "spec.containers[0].lifecycle.stopSignal", "Forbidden: may not be set for containers with empty `spec.os.name`")
    assert _refusal(_pod([_c("a", lifecycle=only_signal)], os={"name": "linux"}), ALPHA) is None
    assert _refusal(_pod([_c("a", lifecycle=only_signal)], os={"name": "windows"}), ALPHA) == (
        "spec.containers[0].lifecycle.stopSignal", 'Unsupported value: "SIGUSR1": supported values: "SIGKILL", "SIGTERM"')
    linux = _refusal(_pod([_c("a", lifecycle={"stopSignal": "SIGNOPE"})], os={"name": "linux"}), ALPHA)
    assert linux is not None and linux[1].startswith(
        'Unsupported value: "SIGNOPE": supported values: "SIGABRT", "SIGALRM", "SIGBUS"')
    assert '"SIGRTMAX-1", "SIGRTMAX-10"' in linux[1]
    # the hooks before the signal
    both = {"stopSignal": "SIGNOPE", "postStart": {}}
    assert _refusal(_pod([_c("a", lifecycle=both)]), ALPHA) == (
        "spec.containers[0].lifecycle.postStart", "Required value: must specify a handler type")


def test_an_ephemeral_containers_target_must_be_an_app_or_init_container() -> None:
    for target in ("a", "i", ""):
        assert _refusal(_pod([_c("a")], [_c("i")], eph=[_c("e", targetContainerName=target)]),
                        unknown_in_order=True) is None
    assert _refusal(_pod([_c("a")], eph=[_c("e", targetContainerName="nope", lifecycle={})])) == (
        "spec.ephemeralContainers[0].targetContainerName", 'Not found: "nope"')
    # another ephemeral container is no target; the duplicate name first
    eph = [_c("e"), _c("f", targetContainerName="e")]
    assert _refusal(_pod([_c("a")], eph=eph)) == ("spec.ephemeralContainers[1].targetContainerName", 'Not found: "e"')
    assert _refusal(_pod([_c("a")], eph=[_c("a", targetContainerName="x")])) == (
        "spec.ephemeralContainers[0].name", 'Duplicate value: "a"')
    # a lifecycle holding only a dropped stopSignal is not set
    assert _refusal(_pod([_c("a")], eph=[_c("e", lifecycle={"stopSignal": "SIGTERM"})]), unknown_in_order=True) is None
