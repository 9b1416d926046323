"""The API server's security-context checks: podnuma against ``kubelet-oracle validate``.

``kubelet-oracle validate`` runs v1.37.2's decoding, defaults,
``PrepareForCreate`` and ``ValidatePodCreate``, which lists every field
error. Each pod here breaks the security checks (sysctl names and their
namespaces, seccomp and AppArmor profiles and annotations, ``procMount``,
host namespaces with ``hostUsers: false``, ids, policies, Windows options,
host-process pods, ephemeral containers on create), alone or several at
once, mixed with faults of the checks around them (a container's resource
name, a pod's restart policy, the overhead, ``spec.os``), on Linux,
Windows and unnamed-OS pods. For each:

* podnuma's refusal on the API server's path (``parse_pod``) is the first
  of Go's errors, word for word (field path and message);
* for a pod whose faults are all security or OS ones, the list the shared
  checks (:mod:`podnuma.api.pod_validation_security`, with
  ``validateLinux``/``validateWindows``) give in ``ValidatePodCreate``'s
  order is Go's whole list, in its order;
* a pod both accept is accepted by podnuma (and the other way round).

``PODNUMA_SECURITY_COUNT`` random pods (default 800), seed
``PODNUMA_ORACLE_SEED``.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from podnuma.api import pod_validation_security as sec
from podnuma.api.pod_validation_os import os_field_errors
from tests.oracle.harness import env_int, random_settings
from tests.oracle.validation import validate_oracle, validate_podnuma

Doc = dict[str, Any]
SEED, _ = random_settings()
COUNT = env_int("PODNUMA_SECURITY_COUNT", 800)

_SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_C = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_C = "container.apparmor.security.beta.kubernetes.io/"


def _base() -> Doc:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "app:1"}, {"name": "d", "image": "app:1"}],
                 "initContainers": [{"name": "i", "image": "app:1"}]},
    }


def _spec(d: Doc) -> Doc:
    return d["spec"]  # type: ignore[no-any-return]


def _psc(d: Doc) -> Doc:
    return _spec(d).setdefault("securityContext", {})  # type: ignore[no-any-return]


def _csc(d: Doc, key: str = "containers", i: int = 0) -> Doc:
    return _spec(d)[key][i].setdefault("securityContext", {})  # type: ignore[no-any-return]


def _sysctl(name: str, **spec: Any) -> Callable[[Doc], None]:
    def f(d: Doc) -> None:
        _psc(d).setdefault("sysctls", []).append({"name": name, "value": "1"})
        _spec(d).update(spec)
    return f


def _set(where: Callable[[Doc], Doc], **fields: Any) -> Callable[[Doc], None]:
    def f(d: Doc) -> None:
        where(d).update(copy.deepcopy(fields))
    return f


def _spec_set(**fields: Any) -> Callable[[Doc], None]:
    return _set(_spec, **fields)


def _ann(key: str, value: str) -> Callable[[Doc], None]:
    def f(d: Doc) -> None:
        d["metadata"].setdefault("annotations", {})[key] = value
    return f


def _ephemeral(**sc: Any) -> Callable[[Doc], None]:
    def f(d: Doc) -> None:
        e: Doc = {"name": "e", "image": "busybox", "targetContainerName": "c"}
        if sc:
            e["securityContext"] = copy.deepcopy(sc)
        _spec(d).setdefault("ephemeralContainers", []).append(e)
    return f


def _c0(d: Doc) -> Doc:
    return _csc(d)


def _c1(d: Doc) -> Doc:
    return _csc(d, "containers", 1)


def _i0(d: Doc) -> Doc:
    return _csc(d, "initContainers", 0)


def _volume_devices(d: Doc) -> None:
    _spec(d)["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": "claim"}}]
    _spec(d)["containers"][1]["volumeDevices"] = [{"name": "v", "devicePath": "/dev/xvda"}]


_LONG = "a" * 4096

#: (name, group, mutation, security): at most one fault of a group in a
#: pod (their fields would overwrite each other, or Go would range over a
#: map); ``security``: a fault of the checks the shared module models
FAULTS: list[tuple[str, str, Callable[[Doc], None], bool]] = [
    # sysctls: names, duplicates, namespaces shared with the host
    ("sysctl-bad-name", "sysctl1", _sysctl("Bad_Name"), True),
    ("sysctl-empty-name", "sysctl1", _sysctl(""), True),
    ("sysctl-dot-end", "sysctl1", _sysctl("net.ipv4."), True),
    ("sysctl-too-long", "sysctl1", _sysctl("a" * 254), True),
    ("sysctl-net-hostnetwork", "sysctl2", _sysctl("net.core.somaxconn", hostNetwork=True), True),
    ("sysctl-slash-net-hostnetwork", "sysctl2", _sysctl("net/ipv4/ip_forward", hostNetwork=True), True),
    ("sysctl-ipc-hostipc", "sysctl3", _sysctl("kernel.msgmax", hostIPC=True), True),
    ("sysctl-mqueue-hostipc", "sysctl3", _sysctl("fs.mqueue.msg_max", hostIPC=True), True),
    ("sysctl-shm-slash-hostipc", "sysctl3", _sysctl("kernel/shm_rmid_forced", hostIPC=True), True),
    ("sysctl-uts-hostnetwork-ok", "sysctl4", _sysctl("kernel.domainname", hostNetwork=True), True),
    ("sysctl-wildcard-hostnetwork", "sysctl4", _sysctl("net.ipv4.*", hostNetwork=True), True),
    ("sysctl-duplicate", "sysctl4",
     lambda d: (_sysctl("kernel.shm_rmid_forced")(d), _sysctl("kernel.shm_rmid_forced")(d)), True),
    # seccomp fields
    ("seccomp-pod-no-type", "seccomp-pod", _set(_psc, seccompProfile={}), True),
    ("seccomp-pod-bogus", "seccomp-pod", _set(_psc, seccompProfile={"type": "Bogus"}), True),
    ("seccomp-pod-localhost-none", "seccomp-pod", _set(_psc, seccompProfile={"type": "Localhost"}), True),
    ("seccomp-pod-localhost-abs", "seccomp-pod",
     _set(_psc, seccompProfile={"type": "Localhost", "localhostProfile": "/etc/p.json"}), True),
    ("seccomp-c-localhost-dotdot", "seccomp-c0",
     _set(_c0, seccompProfile={"type": "Localhost", "localhostProfile": "a/../b"}), True),
    ("seccomp-c-runtime-with-profile", "seccomp-c0",
     _set(_c0, seccompProfile={"type": "RuntimeDefault", "localhostProfile": "x"}), True),
    ("seccomp-c1-bogus-with-profile", "seccomp-c1",
     _set(_c1, seccompProfile={"type": "bogus", "localhostProfile": "x"}), True),
    ("seccomp-init-unconfined-with-profile", "seccomp-i0",
     _set(_i0, seccompProfile={"type": "Unconfined", "localhostProfile": ""}), True),
    # AppArmor fields
    ("apparmor-pod-localhost-none", "apparmor-pod", _set(_psc, appArmorProfile={"type": "Localhost"}), True),
    ("apparmor-pod-no-type", "apparmor-pod", _set(_psc, appArmorProfile={"localhostProfile": "x"}), True),
    ("apparmor-c-padded", "apparmor-c0",
     _set(_c0, appArmorProfile={"type": "Localhost", "localhostProfile": " x "}), True),
    ("apparmor-c-empty", "apparmor-c0", _set(_c0, appArmorProfile={"type": "Localhost", "localhostProfile": ""}), True),
    ("apparmor-c-too-long", "apparmor-c0",
     _set(_c0, appArmorProfile={"type": "Localhost", "localhostProfile": _LONG}), True),
    ("apparmor-c1-runtime-with-profile", "apparmor-c1",
     _set(_c1, appArmorProfile={"type": "RuntimeDefault", "localhostProfile": "x"}), True),
    ("apparmor-init-bogus", "apparmor-i0", _set(_i0, appArmorProfile={"type": "bogus"}), True),
    # procMount and hostUsers
    ("procmount-bogus", "procmount-c0", _set(_c0, procMount="Bogus"), True),
    ("procmount-unmasked", "procmount-c1", _set(_c1, procMount="Unmasked"), True),
    ("procmount-default", "procmount-i0", _set(_i0, procMount="Default"), True),
    ("hostusers-false", "hostusers", _spec_set(hostUsers=False), True),
    ("hostusers-true", "hostusers", _spec_set(hostUsers=True), True),
    ("hostnetwork", "hostnetwork", _spec_set(hostNetwork=True), True),
    ("hostpid", "hostpid", _spec_set(hostPID=True), True),
    ("hostipc", "hostipc", _spec_set(hostIPC=True), True),
    ("share-process-namespace", "share", _spec_set(shareProcessNamespace=True), True),
    ("volume-devices", "volume-devices", _volume_devices, True),
    # ids and policies
    ("run-as-user-negative", "pod-ids", _set(_psc, runAsUser=-1, fsGroup=2**31), True),
    ("supplemental-groups", "pod-groups", _set(_psc, supplementalGroups=[1, -2, 2**31]), True),
    ("container-ids", "c1-ids", _set(_c1, runAsUser=-5, runAsGroup=2**31), True),
    ("fsgroup-policy", "fs-policy", _set(_psc, fsGroupChangePolicy="Sometimes"), True),
    ("supplemental-policy", "sg-policy", _set(_psc, supplementalGroupsPolicy="Loose"), True),
    ("selinux-policy", "selinux-policy", _set(_psc, seLinuxChangePolicy="Never"), True),
    ("selinux-mountoption", "selinux-policy", _set(_psc, seLinuxChangePolicy="MountOption"), True),
    ("privileged-no-escalation", "escalation-i0",
     _set(_i0, privileged=True, allowPrivilegeEscalation=False), True),
    ("sys-admin-no-escalation", "escalation-c0",
     _set(_c0, allowPrivilegeEscalation=False, capabilities={"add": ["CAP_SYS_ADMIN"], "drop": ["ALL"]},
          runAsUser=7), True),
    # Windows options and host-process pods
    ("windows-user-bad", "win-pod", _set(_psc, windowsOptions={"runAsUserName": "dom\\us\\er"}), True),
    ("windows-user-chars", "win-pod", _set(_psc, windowsOptions={"runAsUserName": "a<b"}), True),
    ("windows-gmsa-empty", "win-c1", _set(_c1, windowsOptions={"gmsaCredentialSpec": ""}), True),
    ("windows-gmsa-name", "win-c1", _set(_c1, windowsOptions={"gmsaCredentialSpecName": "Bad_Name"}), True),
    ("host-process-c0", "win-c0", _set(_c0, windowsOptions={"hostProcess": True}), True),
    ("host-process-pod-mismatch", "win-pod",
     lambda d: (_set(_psc, windowsOptions={"hostProcess": False})(d),
                _set(_i0, windowsOptions={"hostProcess": True})(d)), True),
    # annotations, and their agreement with the fields
    ("ann-seccomp-pod-bogus", "ann-seccomp-pod", _ann(_SECCOMP_POD, "bogus"), True),
    ("ann-seccomp-pod-dotdot", "ann-seccomp-pod", _ann(_SECCOMP_POD, "localhost/../x"), True),
    ("ann-seccomp-pod-unconfined", "ann-seccomp-pod", _ann(_SECCOMP_POD, "unconfined"), True),
    ("ann-seccomp-pod-localhost", "ann-seccomp-pod", _ann(_SECCOMP_POD, "localhost/prof.json"), True),
    ("ann-seccomp-c-abs", "ann-c", _ann(_SECCOMP_C + "c", "localhost//abs"), True),
    ("ann-seccomp-c-runtime", "ann-c", _ann(_SECCOMP_C + "c", "runtime/default"), True),
    ("ann-apparmor-missing", "ann-c", _ann(_APPARMOR_C + "nope", "bogus"), True),
    ("ann-apparmor-c-unconfined", "ann-c", _ann(_APPARMOR_C + "c", "unconfined"), True),
    ("ann-apparmor-c-localhost", "ann-c", _ann(_APPARMOR_C + "c", "localhost/other"), True),
    ("seccomp-pod-runtime-default", "seccomp-pod", _set(_psc, seccompProfile={"type": "RuntimeDefault"}), True),
    ("seccomp-pod-localhost-ok", "seccomp-pod",
     _set(_psc, seccompProfile={"type": "Localhost", "localhostProfile": "prof.json"}), True),
    ("seccomp-c-unconfined", "seccomp-c0", _set(_c0, seccompProfile={"type": "Unconfined"}), True),
    ("apparmor-pod-runtime", "apparmor-pod", _set(_psc, appArmorProfile={"type": "RuntimeDefault"}), True),
    # ephemeral containers (refused on create), with faults of their own
    ("ephemeral", "ephemeral", _ephemeral(), True),
    ("ephemeral-procmount", "ephemeral", _ephemeral(procMount="Unmasked", runAsUser=-1), True),
    # the OS and its own checks
    ("os-linux", "os", _spec_set(os={"name": "linux"}), True),
    ("os-windows", "os", _spec_set(os={"name": "windows"}), True),
    # the checks around them (their order against the security ones)
    ("c1-resource-name", "other-c1", _set(lambda d: _spec(d)["containers"][1],
                                          resources={"limits": {"bad_name": "1"}}), False),
    ("c0-duplicate-name", "other-c0", lambda d: _spec(d)["containers"][1].update(name="c"), False),
    ("init-restart-policy", "other-i0", _set(lambda d: _spec(d)["initContainers"][0], restartPolicy="Sometimes"), False),
    ("pod-restart-policy", "other-pod", _spec_set(restartPolicy="Sometimes"), False),
    ("overhead", "other-overhead", _spec_set(overhead={"cpu": "-1"}), False),
    ("os-bogus", "os", _spec_set(os={"name": "plan9"}), False),
]
_BY_NAME = {name: (group, fn, security) for name, group, fn, security in FAULTS}


def _pod(names: list[str], gates: str = "") -> Doc:
    d = _base()
    d["metadata"]["name"] = "p-" + "-".join(names)[:200].lower().replace("_", "-").strip("-") or "p"
    for name in names:
        _BY_NAME[name][1](d)
    return d


def _all_security(names: list[str]) -> bool:
    return all(_BY_NAME[n][2] for n in names)


#: the gate sets, by name
GATES: dict[str, dict[str, bool]] = {
    "defaults": {},
    "userns-hostnetwork": {"UserNamespacesHostNetworkSupport": True},
    "no-selinux-mount": {"SELinuxMount": False},
}


def _shared_errors(doc: Mapping[str, Any], gates: Mapping[str, bool]) -> list[str]:
    """The shared checks in ``ValidatePodCreate``'s order: the annotations,
    each container's security context (app, init, then ephemeral
    containers: ``validateContainers``' order), the pod's security
    context, the host-process pod and ``hostUsers``, ``validateOS``'s
    Linux/Windows checks, ephemeral containers on create, then the
    annotations against the fields."""
    annotations = doc["metadata"].get("annotations") or {}
    spec = sec.apparmor_version_skew(annotations, doc["spec"])
    out = sec.annotation_errors(annotations, spec)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for i, c in enumerate(spec.get(key) or []):
            out += sec.container_security_context_errors(c, f"spec.{key}[{i}]", spec)
    only_recursive, userns = sec.gate_options(spec, lambda g: gates.get(g, g != "UserNamespacesHostNetworkSupport"))
    out += sec.pod_security_context_errors(spec, only_recursive_selinux=only_recursive)
    out += sec.host_process_and_users_errors(spec, userns_host_network=userns)
    os_name = (spec.get("os") or {}).get("name")
    if isinstance(os_name, str):
        out += [(p, f"Forbidden: {m}") for p, m in os_field_errors(spec, os_name)]
    out += sec.ephemeral_on_create_errors(spec)
    out += sec.annotations_match_fields_errors(annotations, spec)
    return [f"{p}: {m}" for p, m in out]


def _compare(items: list[tuple[list[str], str]], oracle_binary: str) -> tuple[list[str], dict[str, int]]:
    """Every pod through the oracle (one call per gate set); the
    differences, and how many pods were refused / accepted / compared whole."""
    by_gates: dict[str, list[int]] = {}
    for i, (_, gates) in enumerate(items):
        by_gates.setdefault(gates, []).append(i)
    answers: dict[int, dict[str, Any]] = {}
    docs = [_pod(names) for names, _ in items]
    for gates, idx in by_gates.items():
        answers.update(zip(idx, validate_oracle(oracle_binary, [docs[i] for i in idx], GATES[gates]), strict=True))
    diffs: list[str] = []
    counts = {"refused": 0, "accepted": 0, "whole": 0, "several": 0}
    for i, (names, gates) in enumerate(items):
        answer, doc = answers[i], docs[i]
        mine = validate_podnuma(doc, GATES[gates]).error
        where = f"{names} [{gates}]"
        if answer["accepted"]:
            counts["accepted"] += 1
            if mine:
                diffs.append(f"{where}: podnuma refuses ({mine}); the API server accepts")
            continue
        counts["refused"] += 1
        theirs = [e["error"] for e in answer.get("errors") or []]
        if not theirs:
            diffs.append(f"{where}: the API server refuses without field errors: {answer.get('message')}")
            continue
        counts["several"] += len(theirs) > 1
        if mine != theirs[0]:
            diffs.append(f"{where}: podnuma {mine!r} != the API server's first {theirs[0]!r}")
        if _all_security(names):
            counts["whole"] += 1
            shared = _shared_errors(doc, GATES[gates])
            if shared != theirs:
                diffs.append(f"{where}: shared checks {shared} != the API server's {theirs}")
    return diffs, counts


def _single_cases() -> list[tuple[list[str], str]]:
    out = [([name], "defaults") for name, *_ in FAULTS]
    out += [([name, "os-windows"], "defaults") for name, *_ in FAULTS if _BY_NAME[name][0] != "os"]
    out += [([name, "os-linux"], "defaults") for name, *_ in FAULTS if _BY_NAME[name][0] != "os"]
    # the gates: hostNetwork with hostUsers false, seLinuxChangePolicy MountOption
    out += [(["hostusers-false", "hostnetwork"], g) for g in GATES]
    out += [(["hostusers-false", "hostnetwork", "hostpid", "hostipc"], g) for g in GATES]
    out += [(["selinux-mountoption"], g) for g in GATES]
    out += [(["procmount-unmasked", "hostusers-false"], "defaults"),
            (["ephemeral-procmount", "hostusers-false"], "defaults"),
            (["share-process-namespace", "hostpid"], "defaults"),
            (["host-process-c0", "hostnetwork"], "defaults"),
            (["host-process-c0", "hostnetwork", "os-windows"], "defaults"),
            (["volume-devices", "hostusers-false"], "defaults"),
            (["volume-devices", "hostusers-false", "hostpid", "os-windows"], "defaults")]
    return out


@pytest.mark.parametrize("case", ["single", "random"])
def test_security_checks_match_the_api_server(oracle_binary: str, case: str) -> None:
    if case == "single":
        items = _single_cases()
    else:
        rng = random.Random(SEED)
        items = []
        for _ in range(COUNT):
            groups: set[str] = set()
            names: list[str] = []
            for name, group, _, _ in rng.sample(FAULTS, rng.randint(1, 6)):
                if group not in groups:
                    groups.add(group)
                    names.append(name)
            items.append((names, rng.choice(list(GATES))))
    diffs, counts = _compare(items, oracle_binary)
    print(f"security checks ({case}, seed {SEED}): {len(items)} pods, {counts}; {len(diffs)} differences")
    assert not diffs, "\n".join(diffs[:15])
    assert counts["refused"] > len(items) // 2 and counts["accepted"] > 0
    assert counts["whole"] > len(items) // 4 and counts["several"] > 0


def test_each_fault_alone_refuses_or_passes_as_go_does(oracle_binary: str) -> None:
    """Each fault meant as one, alone on a Linux pod, is refused by both
    (the faults named ``-ok``, ``-default``... pass in both)."""
    accepted = {"sysctl-uts-hostnetwork-ok", "procmount-default", "hostusers-false", "hostusers-true",
                "hostnetwork", "hostpid", "hostipc", "share-process-namespace", "volume-devices", "ann-seccomp-pod-unconfined",
                "ann-seccomp-pod-localhost", "ann-seccomp-c-runtime", "ann-apparmor-c-unconfined",
                "ann-apparmor-c-localhost", "seccomp-pod-runtime-default", "seccomp-pod-localhost-ok",
                "seccomp-c-unconfined", "apparmor-pod-runtime", "os-linux", "selinux-mountoption",
                "os-windows", "host-process-pod-mismatch", "host-process-c0"}
    names = [name for name, *_ in FAULTS]
    answers = validate_oracle(oracle_binary, [_pod([n]) for n in names], {})
    got = {n for n, a in zip(names, answers, strict=True) if a["accepted"]}
    mine = {n for n in names if not validate_podnuma(_pod([n]), {}).error}
    assert got == mine
    # (host-process pods without hostNetwork, a mismatch: refused)
    assert got == accepted - {"host-process-pod-mismatch", "host-process-c0"}
