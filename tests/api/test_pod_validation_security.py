"""The shared security checks (``podnuma.api.pod_validation_security``):
what the differential test cannot see (which gates are asked, inputs left
as they were, the two paths calling the same checks). Their messages and
order are compared with the API server's in
``tests/oracle/test_pod_validation_security_differential.py``."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from podnuma.agent import validation_security as agent_security
from podnuma.agent.validation_kit import PodValidationOptions, _Errors, validation_options
from podnuma.api import pod_validation_security as sec
from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.errors import InputError


def _pod(spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _refusal(doc: dict[str, Any], gates: dict[str, bool] | None = None) -> str:
    try:
        parse_pod(copy.deepcopy(doc), gates=FeatureGates.from_mapping(gates or {}))
    except InputError as e:
        return str(e)
    return ""


def test_the_gates_are_asked_only_when_the_pod_makes_them_matter() -> None:
    asked: list[str] = []

    def enabled(name: str) -> bool:
        asked.append(name)
        return False

    assert sec.gate_options({"containers": []}, enabled) == (False, False)
    assert sec.gate_options({"securityContext": {"seLinuxChangePolicy": "Recursive"}}, enabled) == (False, False)
    assert sec.gate_options({"hostUsers": True, "hostNetwork": True}, enabled) == (False, False)
    assert asked == []
    assert sec.gate_options({"securityContext": {"seLinuxChangePolicy": "Never"}}, enabled) == (True, False)
    assert sec.gate_options({"hostUsers": False, "hostNetwork": True}, lambda _: True) == (False, True)
    assert asked == ["SELinuxMount"]


def test_apparmor_version_skew_copies_without_touching_the_input() -> None:
    spec: dict[str, Any] = {
        "securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "a"}, {"name": "b"}, {"name": "c", "securityContext": {"runAsUser": 1}},
                       {"name": "d", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}],
    }
    before = copy.deepcopy(spec)
    prefix = "container.apparmor.security.beta.kubernetes.io/"
    annotations = {prefix + "a": "runtime/default", prefix + "b": "localhost/prof",
                   prefix + "c": "unconfined", prefix + "d": "runtime/default"}
    out = sec.apparmor_version_skew(annotations, spec)
    assert spec == before
    profiles = [(c.get("securityContext") or {}).get("appArmorProfile") for c in out["containers"]]
    # a: the pod's own profile (not copied); b, c: copied; d: has its own
    assert profiles == [None, {"type": "Localhost", "localhostProfile": "prof"}, {"type": "Unconfined"},
                        {"type": "Unconfined"}]
    assert out["containers"][2]["securityContext"]["runAsUser"] == 1
    # an invalid profile ("localhost/" and nothing) and a Windows pod: nothing copied
    assert sec.apparmor_version_skew({prefix + "a": "localhost/"}, spec) is spec
    assert sec.apparmor_version_skew(annotations, {**spec, "os": {"name": "windows"}})["containers"] is spec["containers"]


def test_both_paths_give_the_shared_checks_errors() -> None:
    spec: dict[str, Any] = {
        "hostUsers": False, "hostNetwork": True, "hostPID": True,
        "securityContext": {"sysctls": [{"name": "net.core.somaxconn"}], "seLinuxChangePolicy": "MountOption"},
        "containers": [{"name": "c", "image": "x", "securityContext": {"procMount": "Bogus"}}],
    }
    for gates in ({}, {"SELinuxMount": False, "UserNamespacesHostNetworkSupport": True}):
        opts = PodValidationOptions(FeatureGates.from_mapping(gates))
        errs = _Errors()
        with validation_options(opts):
            agent_security.pod_security_context(errs, spec)
            agent_security.host_process_and_users(errs, spec)
            agent_security.container_security_context(errs, spec["containers"][0], "spec.containers[0]", spec)
        only_recursive, userns = sec.gate_options(spec, FeatureGates.from_mapping(gates).enabled)
        shared = (sec.pod_security_context_errors(spec, only_recursive_selinux=only_recursive)
                  + sec.host_process_and_users_errors(spec, userns_host_network=userns)
                  + sec.container_security_context_errors(spec["containers"][0], "spec.containers[0]", spec))
        assert errs.items == shared
        assert ("spec.hostNetwork", "Forbidden: when `hostUsers` is false") in shared or userns
    # the API server's path reports the first: the container's, checked first
    assert _refusal(_pod(spec)) == ('spec.containers[0].securityContext.procMount: Unsupported value: "Bogus": '
                                    'supported values: "Default", "Unmasked"')


@pytest.mark.parametrize(("spec", "want"), [
    ({"securityContext": {"sysctls": [{"name": "kernel.shm_rmid_forced"}, {"name": "kernel.shm_rmid_forced"}]}},
     'spec.securityContext.sysctls[1].name: Duplicate value: "kernel.shm_rmid_forced"'),
    ({"hostUsers": False, "hostIPC": True}, "spec.HostIPC: Forbidden: when `hostUsers` is false"),
    ({"shareProcessNamespace": True, "hostPID": True},
     "spec.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled"),
    # (a pod's restartPolicy is checked before its security context)
    ({"restartPolicy": "Sometimes", "securityContext": {"fsGroupChangePolicy": "x"}},
     'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'),
    # (validateOS comes after the security checks)
    ({"os": {"name": "windows"}, "securityContext": {"seccompProfile": {"type": "x"}}},
     'spec.securityContext.seccompProfile.type: Unsupported value: "x": '
     'supported values: "Localhost", "RuntimeDefault", "Unconfined"'),
    ({"os": {"name": "windows"}, "hostPID": True}, "spec.hostPID: Forbidden: cannot be set for a windows pod"),
])
def test_the_api_servers_path_refuses_with_the_first_error(spec: dict[str, Any], want: str) -> None:
    doc = _pod({"containers": [{"name": "c", "image": "x"}], **spec})
    assert _refusal(doc) == want


def test_annotations_are_checked_before_the_spec_and_matched_after_it() -> None:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "securityContext": {
        "seccompProfile": {"type": "RuntimeDefault"}, "runAsUser": -1}}]}
    bad = {"seccomp.security.alpha.kubernetes.io/pod": "bogus"}
    assert _refusal(_pod(spec, bad)) == ('metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: '
                                         'Invalid value: "bogus": must be a valid seccomp profile')
    spec["containers"][0]["securityContext"].pop("runAsUser")
    other = {"container.seccomp.security.alpha.kubernetes.io/c": "unconfined"}
    assert _refusal(_pod(spec, other)) == ("spec.containers[0].securityContext.seccompProfile.type: Forbidden: "
                                           "seccomp type in annotation and field must match")
    agreeing = {"container.seccomp.security.alpha.kubernetes.io/c": "runtime/default"}
    assert _refusal(_pod(spec, agreeing)) == ""
