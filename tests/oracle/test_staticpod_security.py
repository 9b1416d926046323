"""The agent's static-pod validation of security settings against the
kubelet's file source (``kubelet-oracle staticpod``: k8s.io/kubernetes
v1.37.2 ``pkg/apis/core/validation/validation.go``,
``validatePodSpecSecurityContext``, ``ValidateSecurityContext``,
``validateHostUsers``, ``validateWindowsHostProcessPod``, the seccomp and
AppArmor annotation validators and ``ValidatePodCreate``'s consistency
checks of annotations and fields).

Every manifest goes through the oracle and through podnuma: accepted or
refused alike, the kubelet's phrase in both errors, and (unless the case is
marked otherwise) the kubelet's whole message, every error in its order,
inside podnuma's.

The oracle allows privileged containers as the kubelet's start does
(``capabilities.Initialize`` with ``AllowPrivileged``): a privileged
container and a host-process pod are admitted by both.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle.staticpod_cases import assert_as_the_kubelet, decoded_cases
from tests.oracle.test_staticpod_differential import HEAD


def _pod(spec: str, *, meta: str = "{name: web}", ctr: str = "") -> str:
    """A pod with ``spec`` lines in its spec and the container ``c`` with
    ``ctr`` lines."""
    return HEAD + f"metadata: {meta}\nspec:\n" + "".join(f"  {line}\n" for line in spec.splitlines()) + (
        "  containers:\n  - name: c\n    image: nginx\n") + "".join(f"    {line}\n" for line in ctr.splitlines())


def _psc(body: str, spec: str = "") -> str:
    """A pod whose ``securityContext`` is ``body``."""
    return _pod(f"securityContext: {body}\n{spec}")


def _csc(body: str, spec: str = "", meta: str = "{name: web}") -> str:
    """A pod whose container ``c`` has the ``securityContext`` ``body``."""
    return _pod(spec, meta=meta, ctr=f"securityContext: {body}")


def _ann(annotations: str, spec: str = "", ctr: str = "") -> str:
    return _pod(spec, meta=f"{{name: web, annotations: {{{annotations}}}}}", ctr=ctr)


_RANGE = "must be between 0 and 2147483647, inclusive"
_UNMARSHAL = "couldn't parse as pod(json: cannot unmarshal "
_SC = "spec.containers[0].securityContext"
_PSC = "spec.securityContext"
_SC_JSON_APE_CAPS = ('{"Capabilities":{"Add":["CAP_SYS_ADMIN","NET_ADMIN","CAP_SYS_ADMIN"],"Drop":["ALL"]},'
                     '"Privileged":null,"SELinuxOptions":{"User":"u","Role":"","Type":"","Level":""},'
                     '"WindowsOptions":null,"RunAsUser":5,"RunAsGroup":null,"RunAsNonRoot":true,'
                     '"ReadOnlyRootFilesystem":null,"AllowPrivilegeEscalation":false,"ProcMount":null,'
                     '"SeccompProfile":{"Type":"RuntimeDefault","LocalhostProfile":null},"AppArmorProfile":null}')

#: name -> (manifest, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    # ---- the pod's securityContext
    "pod-ids-accepted.yaml": (_psc("{runAsUser: 0, runAsGroup: 2147483647, fsGroup: 1000, runAsNonRoot: true, "
                                   "supplementalGroups: [0, 1, 2147483647], supplementalGroupsPolicy: Strict, "
                                   "fsGroupChangePolicy: OnRootMismatch, seLinuxChangePolicy: MountOption, "
                                   "seLinuxOptions: {level: 's0:c1,c2'}}"), None),
    "pod-run-as-user-negative.yaml": (_psc("{runAsUser: -1}"), f"{_PSC}.runAsUser: Invalid value: -1: {_RANGE}"),
    "pod-fs-group-too-big.yaml": (_psc("{fsGroup: 2147483648}"),
                                  f"{_PSC}.fsGroup: Invalid value: 2147483648: {_RANGE}"),
    "pod-supplemental-group-negative.yaml": (_psc("{supplementalGroups: [1, -5, 3]}"),
                                             f"{_PSC}.supplementalGroups[1]: Invalid value: -5: {_RANGE}"),
    "pod-ids-order.yaml": (_psc("{runAsGroup: -3, supplementalGroups: [-4], runAsUser: -2, fsGroup: -1}"),
                           f"[{_PSC}.fsGroup: Invalid value: -1: {_RANGE} {_PSC}.runAsUser: Invalid value: -2: "
                           f"{_RANGE} {_PSC}.runAsGroup: Invalid value: -3: {_RANGE} "
                           f"{_PSC}.supplementalGroups[0]: Invalid value: -4: {_RANGE}]"),
    "pod-supplemental-groups-policy.yaml": (_psc("{supplementalGroupsPolicy: merge}"),
                                            f'{_PSC}.supplementalGroupsPolicy: Unsupported value: "merge": '
                                            'supported values: "Merge", "Strict"'),
    "pod-fs-group-change-policy.yaml": (_psc("{fsGroupChangePolicy: Never}"),
                                        f'{_PSC}.fsGroupChangePolicy: Unsupported value: "Never": '
                                        'supported values: "Always", "OnRootMismatch"'),
    "pod-selinux-change-policy.yaml": (_psc("{seLinuxChangePolicy: Relabel}"),
                                       f'{_PSC}.seLinuxChangePolicy: Unsupported value: "Relabel": '
                                       'supported values: "MountOption", "Recursive"'),
    "pod-sysctls-accepted.yaml": (_psc("{sysctls: [{name: kernel.shm_rmid_forced, value: '1'}, "
                                       "{name: net.ipv4.ip_forward, value: '1'}, "
                                       "{name: net/ipv4/conf/eno2.100/rp_filter, value: '0'}]}"), None),
    "pod-sysctl-name-invalid.yaml": (_psc("{sysctls: [{name: Net.Core, value: '1'}]}"),
                                     f'{_PSC}.sysctls[0].name: Invalid value: "Net.Core": must have at most 253 '
                                     "characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*"
                                     "[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"),
    "pod-sysctl-name-empty.yaml": (_psc("{sysctls: [{value: '1'}, null]}"),
                                   f"[{_PSC}.sysctls[0].name: Required value {_PSC}.sysctls[1].name: Required value]"),
    "pod-sysctl-duplicate.yaml": (_psc("{sysctls: [{name: kernel.msgmax, value: '1'}, "
                                       "{name: kernel.msgmax, value: '2'}]}"),
                                  f'{_PSC}.sysctls[1].name: Duplicate value: "kernel.msgmax"'),
    "pod-sysctl-host-network.yaml": (_psc("{sysctls: [{name: net.core.somaxconn, value: '1'}, "
                                          "{name: kernel.msgmax, value: '1'}, {name: net/ipv4/ip_forward, value: '1'}]}",
                                          "hostNetwork: true"),
                                     f'{_PSC}.sysctls[0].name: Invalid value: "net.core.somaxconn": may not be '
                                     f"specified when 'hostNetwork' is true {_PSC}.sysctls[2].name: Invalid value: "
                                     "\"net/ipv4/ip_forward\": may not be specified when 'hostNetwork' is true]"),
    "pod-sysctl-host-ipc.yaml": (_psc("{sysctls: [{name: fs.mqueue.msg_max, value: '1'}, "
                                      "{name: net.core.somaxconn, value: '1'}]}", "hostIPC: true"),
                                 f'[{_PSC}.sysctls[0].name: Invalid value: "fs.mqueue.msg_max": may not be '
                                 "specified when 'hostIPC' is true]"),
    "pod-seccomp-no-type.yaml": (_psc("{seccompProfile: {}}"),
                                 f"{_PSC}.seccompProfile.type: Required value: type is required when seccompProfile "
                                 "is set"),
    "pod-seccomp-localhost-missing.yaml": (_psc("{seccompProfile: {type: Localhost}}"),
                                           f"{_PSC}.seccompProfile.localhostProfile: Required value: must be set when "
                                           "seccomp type is Localhost"),
    "pod-seccomp-localhost-paths.yaml": (_psc("{seccompProfile: {type: Localhost, localhostProfile: /a/../b.json}}"),
                                         f'{_PSC}.seccompProfile.localhostProfile: Invalid value: "/a/../b.json": must '
                                         f'be a relative path {_PSC}.seccompProfile.localhostProfile: Invalid value: '
                                         "\"/a/../b.json\": must not contain '..'"),
    "pod-seccomp-profile-not-localhost.yaml": (_psc("{seccompProfile: {type: Unconfined, localhostProfile: ''}}"),
                                               f"{_PSC}.seccompProfile.localhostProfile: Invalid value: "
                                               '{"Type":"Unconfined","LocalhostProfile":""}: can only be set when '
                                               "seccomp type is Localhost"),
    "pod-seccomp-type-unknown.yaml": (_psc("{seccompProfile: {type: runtime/default}}"),
                                      f'{_PSC}.seccompProfile.type: Unsupported value: "runtime/default": supported '
                                      'values: "Localhost", "RuntimeDefault", "Unconfined"'),
    "pod-apparmor-padded.yaml": (_psc("{appArmorProfile: {type: Localhost, localhostProfile: ' p'}}"),
                                 f'{_PSC}.appArmorProfile.localhostProfile: Invalid value: " p": must not be padded '
                                 "with whitespace"),
    "pod-apparmor-localhost-empty.yaml": (_psc("{appArmorProfile: {type: Localhost, localhostProfile: ''}}"),
                                          f"{_PSC}.appArmorProfile.localhostProfile: Required value: must be set when "
                                          "AppArmor type is Localhost"),
    "pod-apparmor-profile-not-localhost.yaml": (_psc("{appArmorProfile: {type: RuntimeDefault, "
                                                     "localhostProfile: 'a<b'}}"),
                                                f'{_PSC}.appArmorProfile.localhostProfile: Invalid value: "a\\u003cb": '
                                                "can only be set when AppArmor type is Localhost"),
    "pod-apparmor-type-missing-and-unknown.yaml": (_psc("{appArmorProfile: {localhostProfile: x}}"),
                                                   f"{_PSC}.appArmorProfile.type: Required value: type is required "
                                                   "when appArmorProfile is set"),
    "pod-apparmor-type-unknown.yaml": (_psc("{appArmorProfile: {type: Default}}"),
                                       f'{_PSC}.appArmorProfile.type: Unsupported value: "Default": supported values: '
                                       '"Localhost", "RuntimeDefault", "Unconfined"'),
    "pod-apparmor-too-long.yaml": (_psc("{appArmorProfile: {type: Localhost, localhostProfile: " + "p" * 4096 + "}}"),
                                   f"{_PSC}.appArmorProfile.localhostProfile: Too long: may not be more than 4095 "
                                   "bytes"),
    "pod-windows-user-backslashes.yaml": (_psc("{windowsOptions: {runAsUserName: 'a\\b\\c'}}"),
                                          f'{_PSC}.windowsOptions.runAsUserName: Invalid value: "a\\\\b\\\\c": '
                                          "runAsUserName cannot contain more than one backslash"),
    "pod-windows-user-bad.yaml": (_psc("{windowsOptions: {runAsUserName: '.dom\\us*er'}}"),
                                  f'{_PSC}.windowsOptions.runAsUserName: Invalid value: ".dom\\\\us*er": '
                                  "runAsUserName's Domain doesn't match the NetBios nor the DNS format "
                                  f'{_PSC}.windowsOptions.runAsUserName: Invalid value: ".dom\\\\us*er": '
                                  "runAsUserName's User cannot contain the following characters: "
                                  '"/\\:;|=,+*?<>@[]'),
    "pod-windows-gmsa.yaml": (_psc("{windowsOptions: {gmsaCredentialSpecName: Bad_Name, gmsaCredentialSpec: '', "
                                   "runAsUserName: 'DOMAIN\\...'}}"),
                              f'{_PSC}.windowsOptions.gmsaCredentialSpecName: Invalid value: "Bad_Name": a lowercase '
                              "RFC 1123 subdomain"),
    "pod-windows-accepted.yaml": (_psc("{windowsOptions: {gmsaCredentialSpecName: gmsa-spec, "
                                       "runAsUserName: 'NT AUTHORITY\\NETWORK SERVICE'}}"), None),
    "pod-share-process-namespace-host-pid.yaml": (_pod("shareProcessNamespace: true\nhostPID: true"),
                                                  "spec.shareProcessNamespace: Invalid value: true: "
                                                  "ShareProcessNamespace and HostPID cannot both be enabled"),
    # ---- a container's securityContext
    "container-ids.yaml": (_csc("{runAsGroup: -1, runAsUser: 2147483648}"),
                           f"[{_SC}.runAsUser: Invalid value: 2147483648: {_RANGE} {_SC}.runAsGroup: Invalid value: "
                           f"-1: {_RANGE}]"),
    "container-proc-mount-unmasked.yaml": (_csc("{procMount: Unmasked}"),
                                           f'{_SC}.procMount: Invalid value: "Unmasked": `hostUsers` must be false to '
                                           "use `Unmasked`"),
    "container-proc-mount-unmasked-userns.yaml": (_csc("{procMount: Unmasked}", "hostUsers: false"), None),
    "container-proc-mount-unknown.yaml": (_csc("{procMount: Masked}"),
                                          f'{_SC}.procMount: Unsupported value: "Masked": supported values: '
                                          '"Default", "Unmasked"'),
    "container-ape-false-sys-admin.yaml": (_csc("{allowPrivilegeEscalation: false, runAsUser: 5, "
                                                "runAsNonRoot: true, seLinuxOptions: {user: u}, "
                                                "seccompProfile: {type: RuntimeDefault}, capabilities: "
                                                "{add: [CAP_SYS_ADMIN, NET_ADMIN, CAP_SYS_ADMIN], drop: [ALL]}}"),
                                           f"[{_SC}: Invalid value: {_SC_JSON_APE_CAPS}: cannot set "
                                           "`allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN "
                                           f"{_SC}: Invalid value: {_SC_JSON_APE_CAPS}: cannot set "
                                           "`allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN]"),
    "container-ape-false-sys-admin-short-name.yaml": (_csc("{allowPrivilegeEscalation: false, "
                                                           "capabilities: {add: [SYS_ADMIN]}}"), None),
    "container-ape-true-sys-admin.yaml": (_csc("{allowPrivilegeEscalation: true, "
                                               "capabilities: {add: [CAP_SYS_ADMIN]}}"), None),
    "container-errors-order.yaml": (_csc("{appArmorProfile: {type: Localhost}, windowsOptions: {runAsUserName: ''}, "
                                         "seccompProfile: {type: Localhost, localhostProfile: ../p}, procMount: x, "
                                         "runAsUser: -1}"),
                                    f"[{_SC}.runAsUser: Invalid value: -1: {_RANGE} {_SC}.procMount: Unsupported "
                                    'value: "x": supported values: "Default", "Unmasked" '
                                    f"{_SC}.seccompProfile.localhostProfile: Invalid value: \"../p\": must not "
                                    f"contain '..' {_SC}.windowsOptions.runAsUserName: Invalid value: \"\": "
                                    f"runAsUserName cannot be an empty string {_SC}.appArmorProfile.localhostProfile: "
                                    "Required value: must be set when AppArmor type is Localhost]"),
    "init-container-security-context.yaml": (HEAD + "metadata: {name: web}\nspec:\n  initContainers:\n"
                                             "  - {name: i, image: busybox, securityContext: {runAsUser: -7}}\n"
                                             "  containers:\n  - {name: c, image: nginx, securityContext: "
                                             "{runAsGroup: -8}}\n",
                                             f"[spec.containers[0].securityContext.runAsGroup: Invalid value: -8: "
                                             f"{_RANGE} spec.initContainers[0].securityContext.runAsUser: Invalid "
                                             f"value: -7: {_RANGE}]"),
    "container-all-accepted.yaml": (_csc("{runAsUser: 1000, runAsGroup: 0, runAsNonRoot: true, "
                                         "readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, "
                                         "capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}, procMount: Default, "
                                         "seccompProfile: {type: Localhost, localhostProfile: profiles/a.json}, "
                                         "appArmorProfile: {type: Localhost, localhostProfile: k8s-nginx}, "
                                         "seLinuxOptions: {type: spc_t}}"), None),
    "container-and-pod-order.yaml": (_pod("securityContext: {runAsUser: -1}", ctr="securityContext: {runAsUser: -2}"),
                                     f"[{_SC}.runAsUser: Invalid value: -2: {_RANGE} {_PSC}.runAsUser: Invalid value: "
                                     f"-1: {_RANGE}]"),
    # ---- hostUsers
    "host-users-false-host-namespaces.yaml": (_pod("hostUsers: false\nhostNetwork: true\nhostPID: true\n"
                                                   "hostIPC: true"),
                                              "[spec.hostNetwork: Forbidden: when `hostUsers` is false spec.HostPID: "
                                              "Forbidden: when `hostUsers` is false spec.HostIPC: Forbidden: when "
                                              "`hostUsers` is false]"),
    "host-users-false-volume-devices.yaml": (_pod("hostUsers: false\nvolumes: [{name: v, emptyDir: {}}]",
                                                  ctr="volumeDevices: [{name: v, devicePath: /dev/xvda}]"),
                                             "spec.containers[0].volumeDevices: Forbidden: when `hostUsers` is false"),
    "host-users-true-host-namespaces.yaml": (_pod("hostUsers: true\nhostPID: true\nhostIPC: true"), None),
    "host-users-false-accepted.yaml": (_pod("hostUsers: false\nsecurityContext: {runAsUser: 0}"), None),
    # ---- Windows host-process containers (the oracle adds "disallowed by cluster policy")
    "host-process-mismatch.yaml": (_pod("securityContext: {windowsOptions: {hostProcess: true}}",
                                        ctr="securityContext: {windowsOptions: {hostProcess: false}}"),
                                   "spec.containers[0].securityContext.windowsOptions.hostProcess: Invalid value: "
                                   "false: pod hostProcess value must be identical if both are specified, was true"),
    "host-process-no-host-network.yaml": (HEAD + "metadata: {name: web}\nspec:\n  initContainers:\n"
                                          "  - {name: i, image: x}\n  containers:\n  - name: c\n    image: nginx\n"
                                          "    securityContext: {windowsOptions: {hostProcess: true}}\n",
                                          'spec: Invalid value: "": If pod contains any hostProcess containers then '
                                          "all containers must be HostProcess containers spec.hostNetwork: Invalid "
                                          "value: false: hostNetwork must be true if pod contains any hostProcess "
                                          "containers"),
    # ---- seccomp and AppArmor annotations
    "annotation-seccomp-pod-invalid.yaml": (_ann("seccomp.security.alpha.kubernetes.io/pod: default"),
                                            "metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid "
                                            'value: "default": must be a valid seccomp profile'),
    "annotation-seccomp-container-backsteps.yaml": (_ann("container.seccomp.security.alpha.kubernetes.io/c: "
                                                         "localhost/../p.json"),
                                                    "metadata.annotations.container.seccomp.security.alpha."
                                                    'kubernetes.io/c: Invalid value: "../p.json": must not contain '
                                                    "'..'"),
    "annotation-seccomp-accepted.yaml": (_ann("seccomp.security.alpha.kubernetes.io/pod: docker/default, "
                                              "container.seccomp.security.alpha.kubernetes.io/c: localhost/p.json, "
                                              "container.seccomp.security.alpha.kubernetes.io/gone: unconfined"), None),
    "annotation-apparmor-no-container.yaml": (_ann("container.apparmor.security.beta.kubernetes.io/d: unconfined"),
                                              "metadata.annotations[container.apparmor.security.beta.kubernetes.io/d]: "
                                              'Invalid value: "d": container not found'),
    "annotation-apparmor-bad-profile.yaml": (_ann("container.apparmor.security.beta.kubernetes.io/c: docker-default"),
                                             "metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: "
                                             'Invalid value: "docker-default": invalid AppArmor profile name: '
                                             '"docker-default"'),
    "annotation-apparmor-both-errors.yaml": (_ann("container.apparmor.security.beta.kubernetes.io/x: bogus"),
                                             'Invalid value: "x": container not found metadata.annotations'
                                             "[container.apparmor.security.beta.kubernetes.io/x]: Invalid value: "
                                             '"bogus": invalid AppArmor profile name: "bogus"'),
    "annotation-apparmor-init-container.yaml": (HEAD + "metadata:\n  name: web\n  annotations:\n"
                                                "    container.apparmor.security.beta.kubernetes.io/i: ''\n"
                                                "spec:\n  initContainers: [{name: i, image: x}]\n"
                                                "  containers: [{name: c, image: nginx}]\n", None),
    # ---- annotations and fields agree (ValidatePodCreate's last checks)
    "match-seccomp-pod-type.yaml": (_ann("seccomp.security.alpha.kubernetes.io/pod: unconfined",
                                         spec="securityContext: {seccompProfile: {type: RuntimeDefault}}"),
                                    "spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation "
                                    "and field must match"),
    "match-seccomp-container-profile.yaml": (_ann("container.seccomp.security.alpha.kubernetes.io/c: localhost/b.json",
                                                  ctr="securityContext: {seccompProfile: {type: Localhost, "
                                                      "localhostProfile: a.json}}"),
                                             f"{_SC}.seccompProfile.localhostProfile: Forbidden: seccomp profile in "
                                             "annotation and field must match"),
    "match-seccomp-accepted.yaml": (_ann("seccomp.security.alpha.kubernetes.io/pod: docker/default, "
                                         "container.seccomp.security.alpha.kubernetes.io/c: localhost/a.json",
                                         spec="securityContext: {seccompProfile: {type: RuntimeDefault}}",
                                         ctr="securityContext: {seccompProfile: {type: Localhost, "
                                             "localhostProfile: a.json}}"), None),
    "match-apparmor-pod-field.yaml": (_ann("container.apparmor.security.beta.kubernetes.io/c: unconfined",
                                           spec="securityContext: {appArmorProfile: {type: RuntimeDefault}}"),
                                      f"{_SC}.appArmorProfile.type: Forbidden: apparmor type in annotation and field "
                                      "must match"),
    "match-apparmor-localhost.yaml": (_ann("container.apparmor.security.beta.kubernetes.io/c: localhost/b",
                                           ctr="securityContext: {appArmorProfile: {type: Localhost, "
                                               "localhostProfile: a}}"),
                                      f"{_SC}.appArmorProfile.localhostProfile: Forbidden: apparmor profile in "
                                      "annotation and field must match"),
    "match-apparmor-container-wins.yaml": (_ann("container.apparmor.security.beta.kubernetes.io/c: unconfined",
                                                spec="securityContext: {appArmorProfile: {type: RuntimeDefault}}",
                                                ctr="securityContext: {appArmorProfile: {type: Unconfined}}"), None),
    "errors-everywhere-order.yaml": (_ann("seccomp.security.alpha.kubernetes.io/pod: bad",
                                          spec="securityContext: {seccompProfile: {type: Unconfined}, fsGroup: -1}",
                                          ctr="securityContext: {runAsUser: -1}"),
                                     "[metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "
                                     f'"bad": must be a valid seccomp profile {_SC}.runAsUser: Invalid value: -1: '
                                     f"{_RANGE} {_PSC}.fsGroup: Invalid value: -1: {_RANGE} "
                                     f"{_PSC}.seccompProfile.type: Forbidden: seccomp type in annotation and field "
                                     "must match]"),
    # ---- Go's decoder
    "type-pod-run-as-user-string.yaml": (_psc("{runAsUser: '0'}"), _UNMARSHAL + "string into Go struct field "
                                         "PodSecurityContext.spec.securityContext.runAsUser of type int64)"),
    "type-capabilities-add-string.yaml": (_csc("{capabilities: {add: NET_ADMIN}}"), _UNMARSHAL + "string into Go "
                                          "struct field Capabilities.spec.containers.securityContext.capabilities.add "
                                          "of type []v1.Capability)"),
    "type-security-context-string.yaml": (_csc("restricted"), _UNMARSHAL + "string into Go struct field "
                                          "Container.spec.containers.securityContext of type v1.SecurityContext)"),
    "type-host-users-string.yaml": (_pod("hostUsers: 'false'"), _UNMARSHAL + "string into Go struct field "
                                    "PodSpec.spec.hostUsers of type bool)"),
    "type-supplemental-group-fraction.yaml": (_psc("{supplementalGroups: [1.5]}"), _UNMARSHAL + "number 1.5 into Go "
                                              "struct field PodSecurityContext.spec.securityContext."
                                              "supplementalGroups of type int64)"),
    "type-sysctls-of-strings.yaml": (_psc("{sysctls: [net.core.somaxconn]}"), _UNMARSHAL + "string into Go struct "
                                     "field PodSecurityContext.spec.securityContext.sysctls of type v1.Sysctl)"),
    "type-seccomp-type-number.yaml": (_csc("{seccompProfile: {type: 1}}"), _UNMARSHAL + "number into Go struct field "
                                      "SeccompProfile.spec.containers.securityContext.seccompProfile.type of type "
                                      "v1.SeccompProfileType)"),
    "type-privileged-string.yaml": (_csc("{privileged: 'true'}"), _UNMARSHAL + "string into Go struct field "
                                    "SecurityContext.spec.containers.securityContext.privileged of type bool)"),
    "type-run-as-user-int64-overflow.yaml": (_csc("{runAsUser: 9223372036854775808}"), _UNMARSHAL + "number "
                                             "9223372036854775808 into Go struct field SecurityContext.spec."
                                             "containers.securityContext.runAsUser of type int64)"),
    "type-host-process-string.yaml": (_psc("{windowsOptions: {hostProcess: 'yes'}}"), _UNMARSHAL + "string into Go "
                                      "struct field WindowsSecurityContextOptions.spec.securityContext.windowsOptions."
                                      "hostProcess of type bool)"),
    "null-security-contexts.yaml": (_pod("securityContext: null\nhostUsers: null",
                                         ctr="securityContext: {capabilities: null, seccompProfile: null}"), None),
    "null-supplemental-group.yaml": (_psc("{supplementalGroups: [null], sysctls: [{name: kernel.sem, value: null}]}"),
                                     None),
}

CASES.update({
    "privileged.yaml": (_csc("{privileged: true}"), None),
    "privileged-no-escalation.yaml": (_csc("{privileged: true, allowPrivilegeEscalation: false}"),
                                      "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"),
    "host-process-on-host-network.yaml": (
        _pod("hostNetwork: true\nsecurityContext: {windowsOptions: {hostProcess: true}}"), None),
})

# the rest of ValidatePodSpecificAnnotations: the tolerations annotation
# (json.Unmarshal into []core.Toleration: Go field names matched without
# regard to case; then ValidateTolerations) and the deletion cost (a 32-bit
# integer, no "+" nor leading zero); the mirror-pod annotation needs a
# spec.nodeName, which the file source always sets
_TOL = "scheduler.alpha.kubernetes.io/tolerations"
_TOL_PATH = f"metadata.annotations.{_TOL}"
_COST = "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]"
_EXISTS = 'operator must be Exists when `key` is empty, which means "match all values and all keys"'


def _tol(value: str, more: str = "", spec: str = "") -> str:
    """A pod whose tolerations annotation is ``value`` (single-quoted YAML)."""
    return _ann(f"{_TOL}: '{value}'" + (f", {more}" if more else ""), spec=spec)


CASES.update({
    "tolerations-annotation-valid.yaml": (_tol('[{"key": "a", "operator": "Equal", "value": "b", '
                                               '"effect": "NoSchedule"}, {"operator": "Exists"}]'), None),
    "tolerations-annotation-null-and-empty.yaml": (_tol("null", "b: ''"), None),
    "tolerations-annotation-empty-list.yaml": (_tol("[]"), None),
    "tolerations-annotation-not-json.yaml": (_tol("abc"), f'metadata.annotations: Invalid value: "{_TOL}": invalid '
                                             "character 'a' looking for beginning of value"),
    "tolerations-annotation-truncated.yaml": (_tol("[{"), f'metadata.annotations: Invalid value: "{_TOL}": '
                                              "unexpected end of JSON input"),
    "tolerations-annotation-trailing.yaml": (_tol("[] x"), f'metadata.annotations: Invalid value: "{_TOL}": invalid '
                                             "character 'x' after top-level value"),
    "tolerations-annotation-object.yaml": (_tol('{"key": "a"}'), f'metadata.annotations: Invalid value: "{_TOL}": '
                                           "json: cannot unmarshal object into Go value of type []core.Toleration"),
    "tolerations-annotation-key-number.yaml": (_tol('[{"key": 5, "operator": 3}]'),
                                               f'metadata.annotations: Invalid value: "{_TOL}": json: cannot '
                                               "unmarshal number into Go struct field Toleration.Key of type string"),
    "tolerations-annotation-seconds-fraction.yaml": (_tol('[{"key": "a", "tolerationSeconds": 1.5}]'),
                                                     f'metadata.annotations: Invalid value: "{_TOL}": json: cannot '
                                                     "unmarshal number 1.5 into Go struct field "
                                                     "Toleration.TolerationSeconds of type int64"),
    "tolerations-annotation-invalid-fields.yaml": (
        _tol('[{"KEY": "a b", "OPERATOR": "Foo", "Effect": "x<", "tolerationseconds": 5}]'),
        f'{_TOL_PATH}[0].key: Invalid value: "a b": name part must consist of alphanumeric characters'),
    "tolerations-annotation-each-rule.yaml": (
        _tol('[{"operator": "Exists", "value": "x"}, {"key": "k", "operator": "Lt"}, null]'),
        f"{_TOL_PATH}[0].operator: Invalid value: \"x\": value must be empty when `operator` is 'Exists' "
        f'{_TOL_PATH}[1].operator: Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt" '
        f'{_TOL_PATH}[2].operator: Invalid value: "": {_EXISTS}]'),
    "tolerations-annotation-before-cost-seccomp-and-spec.yaml": (
        _tol('[{"operator": "Bad"}]', "controller.kubernetes.io/pod-deletion-cost: abc, "
             "seccomp.security.alpha.kubernetes.io/pod: bad", spec="tolerations: [{operator: Bad2}]"),
        f'{_TOL_PATH}[0].operator: Invalid value: "Bad": {_EXISTS} '
        f'{_TOL_PATH}[0].operator: Unsupported value: "Bad": supported values: "Equal", "Exists" '
        f'{_COST}: Invalid value: "abc": must be a 32bit integer '
        'metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "bad": must be a valid '
        f'seccomp profile spec.tolerations[0].operator: Invalid value: "Bad2": {_EXISTS} '
        'spec.tolerations[0].operator: Unsupported value: "Bad2": supported values: "Equal", "Exists"]'),
    "deletion-cost-plus.yaml": (_ann("controller.kubernetes.io/pod-deletion-cost: '+5'"),
                                f'{_COST}: Invalid value: "+5": must be a 32bit integer'),
    "deletion-cost-leading-zero.yaml": (_ann("controller.kubernetes.io/pod-deletion-cost: '007'"),
                                        f'{_COST}: Invalid value: "007": must be a 32bit integer'),
    "deletion-cost-overflow.yaml": (_ann("controller.kubernetes.io/pod-deletion-cost: '2147483648'"),
                                    f'{_COST}: Invalid value: "2147483648": must be a 32bit integer'),
    "deletion-cost-empty.yaml": (_ann("controller.kubernetes.io/pod-deletion-cost: ''"),
                                 f'{_COST}: Invalid value: "": must be a 32bit integer'),
    "deletion-cost-negative-leading-zeros.yaml": (_ann("controller.kubernetes.io/pod-deletion-cost: '-007'"), None),
    "deletion-cost-min.yaml": (_ann("controller.kubernetes.io/pod-deletion-cost: '-2147483648'"), None),
    "mirror-annotation-node-name-set.yaml": (_ann("kubernetes.io/config.mirror: x"), None),
})

#: cases where only the phrase is compared: the kubelet reports more than
#: podnuma checks (``volumeDevices`` themselves)
PHRASE_ONLY = {"host-users-false-volume-devices.yaml"}


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("security"), CASES)


def test_enough_cases() -> None:
    assert len(CASES) >= 40
    assert sum(phrase is None for _, phrase in CASES.values()) >= 10


@pytest.mark.parametrize("name", sorted(CASES))
def test_security_settings_as_the_kubelet_validates_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert_as_the_kubelet(kubelet, ours, CASES[name][1], whole=name not in PHRASE_ONLY)
