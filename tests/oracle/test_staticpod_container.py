"""Container details of a static pod against the kubelet's file source
(``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
pkg/kubelet/config/common.go, ``ValidatePodCreate`` after the v1
defaults): probes, ``lifecycle`` handlers, env ``valueFrom`` sources,
``resizePolicy`` (``podnuma.agent.validation_container``) and the Go
decoder's words for a value of the wrong type there.

Every manifest goes through the oracle and through podnuma: both accept
it, or both refuse it with the phrase given (the kubelet's words; several
errors in one phrase are in the kubelet's order).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.oracle.staticpod_cases import assert_as_the_kubelet, decoded_cases
from tests.oracle.test_staticpod_differential import HEAD

_UNMARSHAL = "couldn't parse as pod(json: cannot unmarshal "
_BAD_QUANTITY = "couldn't parse as pod(quantities must match the regular expression"
_HEADER_TEXT = ("a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', "
                "regex used for validation is '[-A-Za-z0-9]+')")
_UNIT_DIVISORS = "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the"
_ENV_FIELDS = ('supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", '
               '"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"')


def _ctr(body: str, spec: str = "") -> str:
    """A pod with one app container ``c`` (``body``: its further fields,
    one per line) and the spec fields ``spec``."""
    extra = "".join(f"  {line}\n" for line in spec.splitlines())
    fields = "".join(f"    {line}\n" for line in body.splitlines())
    return HEAD + "metadata: {name: web}\nspec:\n" + extra + "  containers:\n  - name: c\n    image: nginx\n" + fields


def _init(body: str) -> str:
    """A pod with one init container ``i`` (``body``: its further fields)."""
    fields = "".join(f"    {line}\n" for line in body.splitlines())
    return (HEAD + "metadata: {name: web}\nspec:\n  containers: [{name: c, image: nginx}]\n"
            "  initContainers:\n  - name: i\n    image: busybox\n" + fields)


C = "spec.containers[0]"
I = "spec.initContainers[0]"  # noqa: E741

#: name -> (manifest text, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    # ---- probes
    "probe-http-accepted.yaml": (_ctr(
        "livenessProbe: {httpGet: {port: 8080, path: /healthz, scheme: HTTPS, httpHeaders: [{name: X-Trace, value: a}]},"
        " initialDelaySeconds: 5, periodSeconds: 3, failureThreshold: 1, terminationGracePeriodSeconds: 10}\n"
        "readinessProbe: {tcpSocket: {port: http}, successThreshold: 3}\n"
        "startupProbe: {grpc: {port: 9090, service: ready}}\n"
        "ports: [{name: http, containerPort: 8080}]"), None),
    "probe-zero-timings-defaulted.yaml": (_ctr(
        "livenessProbe: {exec: {command: [\"true\"]}, timeoutSeconds: 0, periodSeconds: 0, successThreshold: 0,"
        " failureThreshold: 0}"), None),
    "probe-port-zero.yaml": (_ctr("livenessProbe: {httpGet: {port: 0}}"),
                             f"{C}.livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"),
    "probe-port-missing.yaml": (_ctr("readinessProbe: {tcpSocket: {}}"),
                                f"{C}.readinessProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535"),
    "probe-port-null.yaml": (_ctr("livenessProbe: {httpGet: {port: null}}"),
                             f"{C}.livenessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535"),
    "probe-port-name-capitals.yaml": (_ctr("readinessProbe: {tcpSocket: {port: Http}}"),
                                      f'{C}.readinessProbe.tcpSocket.port: Invalid value: "Http": must contain only '
                                      "alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
    "probe-port-name-empty.yaml": (_ctr("livenessProbe: {tcpSocket: {port: ''}}"),
                                   f'{C}.livenessProbe.tcpSocket.port: Invalid value: "": must contain only '
                                   "alpha-numeric characters (a-z, 0-9), and hyphens (-) "
                                   f'{C}.livenessProbe.tcpSocket.port: Invalid value: "": must contain at least one '
                                   "letter (a-z)"),
    "probe-port-name-digits.yaml": (_ctr('livenessProbe: {httpGet: {port: "8080"}}'),
                                    f'{C}.livenessProbe.httpGet.port: Invalid value: "8080": must contain at least '
                                    "one letter (a-z)"),
    "probe-grpc-port-range.yaml": (_ctr("startupProbe: {grpc: {port: 70000}}"),
                                   f"{C}.startupProbe.grpc.port: Invalid value: 70000: must be between 1 and 65535"),
    "probe-grpc-mode.yaml": (_ctr("startupProbe: {grpc: {port: 80, mode: plain}}"),
                             f'{C}.startupProbe.grpc.mode: Unsupported value: "plain": supported values: '
                             '"Plaintext", "TLS"'),
    "probe-scheme-lowercase.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, scheme: https}}"),
                                    f'{C}.livenessProbe.httpGet.scheme: Unsupported value: "https": supported '
                                    'values: "HTTP", "HTTPS"'),
    "probe-header-name.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, httpHeaders: [{name: 'X Trace', value: a},"
                                    " null]}}"),
                               f'{C}.livenessProbe.httpGet.httpHeaders: Invalid value: "X Trace": {_HEADER_TEXT} '
                               f'{C}.livenessProbe.httpGet.httpHeaders: Invalid value: "": {_HEADER_TEXT}'),
    "probe-http2-https.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, scheme: HTTPS, protocol: HTTP2}}"),
                               f'{C}.livenessProbe.httpGet.protocol: Invalid value: "HTTP2": is only supported '
                               "with HTTP (H2C)"),
    "probe-http2-host.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, host: example.com, protocol: HTTP2}}"),
                              f'{C}.livenessProbe.httpGet.host: Invalid value: "example.com": must be empty when '
                              '`protocol` is "HTTP2"'),
    "probe-timings-negative.yaml": (_ctr(
        "livenessProbe: {exec: {command: [a]}, initialDelaySeconds: -1, timeoutSeconds: -2, periodSeconds: -3,"
        " failureThreshold: -4, terminationGracePeriodSeconds: 0, successThreshold: 2}"),
        f"{C}.livenessProbe.initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0 "
        f"{C}.livenessProbe.timeoutSeconds: Invalid value: -2: must be greater than or equal to 0 "
        f"{C}.livenessProbe.periodSeconds: Invalid value: -3: must be greater than or equal to 0 "
        f"{C}.livenessProbe.failureThreshold: Invalid value: -4: must be greater than or equal to 0 "
        f"{C}.livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0 "
        f"{C}.livenessProbe.successThreshold: Invalid value: 2: must be 1]"),
    "probe-startup-success-negative.yaml": (_ctr("startupProbe: {exec: {command: [a]}, successThreshold: -3}"),
                                            f"{C}.startupProbe.successThreshold: Invalid value: -3: must be greater "
                                            f"than or equal to 0 {C}.startupProbe.successThreshold: Invalid value: "
                                            "-3: must be 1"),
    "probe-readiness-grace.yaml": (_ctr("readinessProbe: {exec: {command: [a]}, terminationGracePeriodSeconds: 5}"),
                                   f"{C}.readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be "
                                   "set for readinessProbes"),
    "probe-two-handlers-exec-empty.yaml": (_ctr("livenessProbe: {exec: {}, tcpSocket: {port: 0}, grpc: {port: 0}}"),
                                           f"{C}.livenessProbe.exec.command: Required value "
                                           f"{C}.livenessProbe.tcpSocket: Forbidden: may not specify more than 1 "
                                           f"handler type {C}.livenessProbe.grpc: Forbidden: may not specify more "
                                           "than 1 handler type"),
    "probes-in-order.yaml": (_ctr(
        "startupProbe: {tcpSocket: {port: 0}}\nreadinessProbe: {httpGet: {port: 0}}\n"
        "livenessProbe: {grpc: {port: 0}}\nlifecycle: {preStop: {}}"),
        f"{C}.lifecycle.preStop: Required value: must specify a handler type "
        f"{C}.livenessProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive "
        f"{C}.readinessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive "
        f"{C}.startupProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive"),
    # ---- lifecycle
    "lifecycle-accepted.yaml": (_ctr(
        "lifecycle: {postStart: {exec: {command: [a]}}, preStop: {sleep: {seconds: 30}}, stopSignal: SIGUSR1}",
        "os: {name: linux}"), None),
    "lifecycle-empty-hook.yaml": (_ctr("lifecycle: {postStart: {}}"),
                                  f"{C}.lifecycle.postStart: Required value: must specify a handler type"),
    "lifecycle-grpc-is-no-hook.yaml": (_ctr("lifecycle: {preStop: {grpc: {port: 80}}}"),
                                       f"{C}.lifecycle.preStop: Required value: must specify a handler type"),
    "lifecycle-two-handlers.yaml": (_ctr("lifecycle: {preStop: {exec: {command: []}, sleep: {seconds: 1}}}"),
                                    f"{C}.lifecycle.preStop.exec.command: Required value "
                                    f"{C}.lifecycle.preStop.sleep: Forbidden: may not specify more than 1 handler type"),
    "lifecycle-sleep-above-grace.yaml": (_ctr("lifecycle: {preStop: {sleep: {seconds: 31}}}"),
                                         f"{C}.lifecycle.preStop.sleep: Invalid value: 31: must be non-negative and "
                                         "less than terminationGracePeriodSeconds (30)"),
    "lifecycle-sleep-negative-grace.yaml": (_ctr("lifecycle: {preStop: {sleep: {seconds: 2}}}",
                                                 "terminationGracePeriodSeconds: -5"),
                                            f"{C}.lifecycle.preStop.sleep: Invalid value: 2: must be non-negative and "
                                            "less than terminationGracePeriodSeconds (1)"),
    "lifecycle-sleep-within-grace.yaml": (_ctr("lifecycle: {preStop: {sleep: {seconds: 45}}}",
                                               "terminationGracePeriodSeconds: 60"), None),
    "lifecycle-http-hook.yaml": (_ctr("lifecycle: {postStart: {httpGet: {port: web-port-too-long, scheme: ftp}}}"),
                                 f'{C}.lifecycle.postStart.httpGet.port: Invalid value: "web-port-too-long": must be '
                                 f"no more than 15 characters {C}.lifecycle.postStart.httpGet.scheme: Unsupported "
                                 'value: "ftp": supported values: "HTTP", "HTTPS"'),
    "lifecycle-stop-signal-without-os.yaml": (_ctr("lifecycle: {stopSignal: SIGTERM}"),
                                              f"{C}.lifecycle.stopSignal: Forbidden: may not be set for containers "
                                              "with empty `spec.os.name`"),
    "lifecycle-stop-signal-windows.yaml": (_ctr("lifecycle: {stopSignal: SIGINT}", "os: {name: windows}"),
                                           f'{C}.lifecycle.stopSignal: Unsupported value: "SIGINT": supported '
                                           'values: "SIGKILL", "SIGTERM"'),
    "lifecycle-stop-signal-linux.yaml": (_ctr("lifecycle: {stopSignal: SIGFOO}", "os: {name: linux}"),
                                         f'{C}.lifecycle.stopSignal: Unsupported value: "SIGFOO": supported values: '
                                         '"SIGABRT", "SIGALRM", "SIGBUS"'),
    "lifecycle-stop-signal-realtime.yaml": (_ctr("lifecycle: {stopSignal: SIGRTMAX-3}", "os: {name: linux}"), None),
    # ---- init containers: sidecars may have probes and hooks, others not
    "sidecar-probes-accepted.yaml": (_init(
        "restartPolicy: Always\nlivenessProbe: {tcpSocket: {port: 80}}\nreadinessProbe: {exec: {command: [a]}}\n"
        "lifecycle: {preStop: {sleep: {seconds: 5}}}"), None),
    "sidecar-probes-checked.yaml": (_init(
        "restartPolicy: Always\nlifecycle: {postStart: {}}\nlivenessProbe: {tcpSocket: {port: 0}, successThreshold: 3}\n"
        "readinessProbe: {exec: {command: [a]}, terminationGracePeriodSeconds: 3}\n"
        "startupProbe: {exec: {command: [a]}, successThreshold: 3}"),
        f"{I}.lifecycle.postStart: Required value: must specify a handler type "
        f"{I}.livenessProbe.tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive "
        f"{I}.livenessProbe.successThreshold: Invalid value: 3: must be 1 "
        f"{I}.readinessProbe.terminationGracePeriodSeconds: Invalid value: 3: must not be set for readinessProbes "
        f"{I}.startupProbe.successThreshold: Invalid value: 3: must be 1"),
    "init-probe-not-checked-but-forbidden.yaml": (_init("livenessProbe: {tcpSocket: {port: 0}}"),
                                                  f"{I}.livenessProbe: Forbidden: may not be set for init containers "
                                                  "without restartPolicy=Always]"),
    # ---- env valueFrom
    "env-downward-accepted.yaml": (_ctr(
        "env:\n- {name: A, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n"
        "- {name: B, valueFrom: {fieldRef: {fieldPath: \"metadata.labels['app']\"}}}\n"
        "- {name: C, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['Example.com/Key']\"}}}\n"
        "- {name: D, valueFrom: {fieldRef: {fieldPath: spec.host}}}\n"
        "- {name: E, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}\n"
        "- {name: F, valueFrom: {resourceFieldRef: {resource: requests.cpu, divisor: 1000m}}}\n"
        "- {name: G, valueFrom: {resourceFieldRef: {resource: limits.hugepages-2Mi, containerName: other}}}\n"
        "- {name: H, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 0}}}"), None),
    "env-field-path-unknown.yaml": (_ctr("env: [{name: A, valueFrom: {fieldRef: {fieldPath: metadata.foo}}}]"),
                                    f'{C}.env[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.foo": error '
                                    "converting fieldPath: field label not supported: metadata.foo"),
    "env-field-path-version.yaml": (_ctr("env: [{name: A, valueFrom: {fieldRef: {apiVersion: v2, fieldPath: "
                                         "metadata.name}}}]"),
                                    f'{C}.env[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.name": error '
                                    "converting fieldPath: unsupported pod version: v2"),
    "env-field-path-not-for-env.yaml": (_ctr("env: [{name: A, valueFrom: {fieldRef: {fieldPath: spec.restartPolicy}}},"
                                             " {name: B, valueFrom: {fieldRef: {fieldPath: metadata.labels}}}]"),
                                        f'{C}.env[0].valueFrom.fieldRef.fieldPath: Unsupported value: '
                                        f'"spec.restartPolicy": {_ENV_FIELDS} {C}.env[1].valueFrom.fieldRef.fieldPath:'
                                        f' Unsupported value: "metadata.labels": {_ENV_FIELDS}'),
    "env-field-path-subscripts.yaml": (_ctr(
        "env: [{name: A, valueFrom: {fieldRef: {fieldPath: \"metadata.labels['a b']\"}}},"
        " {name: B, valueFrom: {fieldRef: {fieldPath: \"spec.x['a']\"}}},"
        " {name: C, valueFrom: {fieldRef: {fieldPath: ''}}}]"),
        f'{C}.env[0].valueFrom.fieldRef: Invalid value: "a b": name part must consist of alphanumeric characters'),
    "env-field-path-subscript-orders.yaml": (_ctr(
        "env: [{name: B, valueFrom: {fieldRef: {fieldPath: \"spec.x['a']\"}}},"
        " {name: C, valueFrom: {fieldRef: {fieldPath: ''}}}]"),
        f"{C}.env[0].valueFrom.fieldRef.fieldPath: Invalid value: \"spec.x['a']\": error converting fieldPath: "
        f"field label does not support subscript: spec.x['a'] {C}.env[1].valueFrom.fieldRef.fieldPath: "
        "Required value]"),
    "env-resource-unknown.yaml": (_ctr("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.gpu}}},"
                                       " {name: B, valueFrom: {resourceFieldRef: {divisor: 3}}}]"),
                                  f'{C}.env[0].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.gpu": '
                                  'supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", '
                                  '"requests.cpu", "requests.ephemeral-storage", "requests.memory" '
                                  f"{C}.env[1].valueFrom.resourceFieldRef.resource: Required value]"),
    "env-divisors.yaml": (_ctr(
        "env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 2}}},"
        " {name: B, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1024}}},"
        " {name: C, valueFrom: {resourceFieldRef: {resource: requests.ephemeral-storage, divisor: 1m}}},"
        " {name: D, valueFrom: {resourceFieldRef: {resource: requests.hugepages-1Gi, divisor: 3}}}]"),
        f'{C}.env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor\'s values 1m and 1 '
        f'are supported with the cpu resource {C}.env[1].valueFrom.resourceFieldRef.divisor: Invalid value: '
        f'"limits.memory": {_UNIT_DIVISORS} memory resource {C}.env[2].valueFrom.resourceFieldRef.divisor: Invalid '
        f'value: "requests.ephemeral-storage": {_UNIT_DIVISORS} local ephemeral storage resource '
        f'{C}.env[3].valueFrom.resourceFieldRef.divisor: Invalid value: "requests.hugepages-1Gi": {_UNIT_DIVISORS} '
        "hugepages resource]"),
    "env-divisor-not-a-quantity.yaml": (_ctr("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu,"
                                             " divisor: abc}}}]"), _BAD_QUANTITY),
    "env-value-from-empty.yaml": (_ctr("env: [{name: A, valueFrom: {}}, {name: B, valueFrom: {fieldRef: null}}]"),
                                  f'{C}.env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, '
                                  "`resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef` "
                                  f'{C}.env[1].valueFrom: Invalid value: "": must specify one of'),
    "env-value-and-value-from.yaml": (_ctr("env: [{name: A, value: x, valueFrom: {fieldRef: {fieldPath: "
                                           "metadata.name}}}]"),
                                      f'{C}.env[0].valueFrom: Invalid value: "": may not be specified when `value` '
                                      "is not empty"),
    "env-two-sources.yaml": (_ctr("env: [{name: A, valueFrom: {fieldRef: {fieldPath: metadata.name},"
                                  " resourceFieldRef: {resource: limits.cpu}}}]"),
                             f'{C}.env[0].valueFrom: Invalid value: "": may not have more than one field specified '
                             "at a time"),
    "env-key-ref-details-before-reference.yaml": (_ctr(
        "env: [{name: A, valueFrom: {configMapKeyRef: {name: '', key: 'a b'}, secretKeyRef: {name: s}}}]"),
        f'{C}.env[0].valueFrom.configMapKeyRef.name: Invalid value: "": a lowercase RFC 1123 subdomain must consist '
        "of lower case alphanumeric characters"),
    "env-key-names.yaml": (_ctr("env: [{name: A, valueFrom: {configMapKeyRef: {name: m, key: ..a}}},"
                                " {name: B, valueFrom: {secretKeyRef: {name: s, key: .}}},"
                                " {name: C, valueFrom: {secretKeyRef: {name: s, key: 'a b'}}}]"),
                           f'{C}.env[0].valueFrom.configMapKeyRef.key: Invalid value: "..a": must not start with \'..\' '
                           f'{C}.env[1].valueFrom.secretKeyRef.key: Invalid value: ".": must not be \'.\' '
                           f'{C}.env[2].valueFrom.secretKeyRef.key: Invalid value: "a b": a valid config key must '
                           "consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  "
                           "or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"),
    "env-key-ref-valid-still-a-reference.yaml": (_ctr("env: [{name: A, valueFrom: {configMapKeyRef: {name: m,"
                                                      " key: k}}}]"), "static pods may not reference configmaps"),
    "env-file-key-ref.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: v}, {name: w, hostPath: {path: /x}}]
  initContainers: [{name: i, image: x, env: [{name: A, valueFrom: {fileKeyRef: {key: a, volumeName: w, path: p}}}]}]
  containers:
  - name: c
    image: x
    env:
    - {name: A, valueFrom: {fileKeyRef: {key: a, volumeName: v, path: p}}}
    - {name: B, valueFrom: {fileKeyRef: {}}}
    - {name: C, valueFrom: {fileKeyRef: {key: k, volumeName: V, path: ../x}}}
""", f"{C}.env[1].valueFrom.fileKeyRef.key: Required value {C}.env[1].valueFrom.fileKeyRef.volumeName: Required value "
     f"{C}.env[1].valueFrom.fileKeyRef.path: Required value {C}.env[2].valueFrom.fileKeyRef.volumeName: Invalid "
     'value: "V": a lowercase RFC 1123 label must consist of'),
    "env-file-key-ref-volumes-last.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: v}, {name: w, hostPath: {path: /x}}]
  initContainers: [{name: i, image: x, env: [{name: A, valueFrom: {fileKeyRef: {key: a, volumeName: w, path: p}}}]}]
  containers:
  - name: c
    image: x
    env:
    - {name: A, valueFrom: {fileKeyRef: {key: a, volumeName: v, path: p}}}
    - {name: C, valueFrom: {fileKeyRef: {key: k, volumeName: u, path: ../x}}}
  restartPolicy: Sometimes
""", f'{C}.env[1].valueFrom.fileKeyRef.path: Invalid value: "../x": must not contain \'..\' spec.restartPolicy: '
     'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never" '
     f'{I}.env[0].valueFrom.fileKeyRef.volumeName: Invalid value: "w": referenced volume must be of type emptyDir '
     f'{C}.env[1].valueFrom.fileKeyRef.volumeName: Not found: "u"]'),
    # ---- resizePolicy
    "resize-accepted.yaml": (_ctr("resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired},"
                                  " {resourceName: memory, restartPolicy: RestartContainer}]"), None),
    "resize-errors.yaml": (_ctr("resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired},"
                                " {resourceName: cpu, restartPolicy: Foo}, {resourceName: gpu}, {}]"),
                           f'{C}.resizePolicy[1]: Duplicate value: "cpu" {C}.resizePolicy: Unsupported value: "Foo": '
                           f'supported values: "NotRequired", "RestartContainer" {C}.resizePolicy: Unsupported value: '
                           f'"gpu": supported values: "cpu", "memory" {C}.resizePolicy: Required value '
                           f"{C}.resizePolicy: Required value {C}.resizePolicy: Required value]"),
    "resize-pod-never.yaml": (_ctr("resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]",
                                   "restartPolicy: Never"),
                              f'{C}.resizePolicy: Invalid value: "RestartContainer": must be \'NotRequired\' when pod '
                              "`restartPolicy` is 'Never'"),
    "resize-init-restart.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers: [{name: c, image: x}]
  initContainers:
  - {name: i, image: x, resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]}
  - {name: j, image: x, restartPolicy: Always, resizePolicy: [{resourceName: memory, restartPolicy: RestartContainer}]}
""", f'{I}.resizePolicy[0].restartPolicy: Invalid value: "RestartContainer": must not be set to \'RestartContainer\' '
     "for non-sidecar initContainers]"),
    "resize-before-duplicate-name-and-hooks.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers:
  - {name: c, image: x}
  - {name: c, image: x, resizePolicy: [{resourceName: disk, restartPolicy: NotRequired}],
     lifecycle: {preStop: {}}, env: [{name: A, valueFrom: {}}]}
""", 'spec.containers[1].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, '
     "`configMapKeyRef`, `secretKeyRef` or `fileKeyRef` spec.containers[1].resizePolicy: Unsupported value: "
     '"disk": supported values: "cpu", "memory" spec.containers[1].name: Duplicate value: "c" '
     "spec.containers[1].lifecycle.preStop: Required value: must specify a handler type]"),
    # ---- the decoder's words for a wrong type
    "type-probe-port-bool.yaml": (_ctr("livenessProbe: {httpGet: {port: true}}"),
                                  _UNMARSHAL + "bool into Go struct field HTTPGetAction.spec.containers.livenessProbe."
                                  "ProbeHandler.httpGet.port of type int32)"),
    # an IntOrString's own decoder stops the decoding: its error wins over
    # a wrong type met before it (env), which Go's decoder only keeps
    "type-port-stops-the-decoding.yaml": (_ctr("env: 5\nlivenessProbe: {httpGet: {port: true}}"),
                                          _UNMARSHAL + "bool into Go struct field HTTPGetAction.spec.containers."
                                          "livenessProbe.ProbeHandler.httpGet.port of type int32)"),
    "type-env-then-timeout.yaml": (_ctr("env: 5\nlivenessProbe: {exec: {command: [a]}, timeoutSeconds: '1'}"),
                                   _UNMARSHAL + "number into Go struct field Container.spec.containers.env of type "
                                   "[]v1.EnvVar)"),
    "type-probe-port-object.yaml": (_ctr("readinessProbe: {tcpSocket: {port: {a: 1}}}"),
                                    _UNMARSHAL + "object into Go struct field TCPSocketAction.spec.containers."
                                    "readinessProbe.ProbeHandler.tcpSocket.port of type int32)"),
    "type-probe-port-fraction.yaml": (_ctr("livenessProbe: {httpGet: {port: 1.5}}"),
                                      _UNMARSHAL + "number 1.5 into Go struct field HTTPGetAction.spec.containers."
                                      "livenessProbe.ProbeHandler.httpGet.port of type int32)"),
    "type-probe-port-integral-float.yaml": (_ctr("livenessProbe: {httpGet: {port: 80.0}}"), None),
    "type-grpc-port-string.yaml": (_ctr("livenessProbe: {grpc: {port: '80'}}"),
                                   _UNMARSHAL + "string into Go struct field GRPCAction.spec.containers.livenessProbe."
                                   "ProbeHandler.grpc.port of type int32)"),
    "type-probe-timeout-string.yaml": (_ctr("livenessProbe: {exec: {command: [a]}, timeoutSeconds: '1'}"),
                                       _UNMARSHAL + "string into Go struct field Probe.spec.containers.livenessProbe."
                                       "timeoutSeconds of type int32)"),
    "type-sleep-seconds-string.yaml": (_ctr("lifecycle: {preStop: {sleep: {seconds: '5'}}}"),
                                       _UNMARSHAL + "string into Go struct field SleepAction.spec.containers.lifecycle."
                                       "preStop.sleep.seconds of type int64)"),
    "type-stop-signal-number.yaml": (_ctr("lifecycle: {stopSignal: 15}"),
                                     _UNMARSHAL + "number into Go struct field Lifecycle.spec.containers.lifecycle."
                                     "stopSignal of type v1.Signal)"),
    "type-headers-object.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, httpHeaders: {a: b}}}"),
                                 _UNMARSHAL + "object into Go struct field HTTPGetAction.spec.containers.livenessProbe."
                                 "ProbeHandler.httpGet.httpHeaders of type []v1.HTTPHeader)"),
    "type-field-path-number.yaml": (_ctr("env: [{name: A, valueFrom: {fieldRef: {fieldPath: 1}}}]"),
                                    _UNMARSHAL + "number into Go struct field ObjectFieldSelector.spec.containers.env."
                                    "valueFrom.fieldRef.fieldPath of type string)"),
    "type-key-ref-key-number.yaml": (_ctr("env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: 1}}}]"),
                                     _UNMARSHAL + "number into Go struct field SecretKeySelector.spec.containers.env."
                                     "valueFrom.secretKeyRef.key of type string)"),
    "type-resize-policy-string.yaml": (_ctr("resizePolicy: cpu"),
                                       _UNMARSHAL + "string into Go struct field Container.spec.containers.resizePolicy "
                                       "of type []v1.ContainerResizePolicy)"),
    "type-resize-resource-number.yaml": (_ctr("resizePolicy: [{resourceName: 1}]"),
                                         _UNMARSHAL + "number into Go struct field ContainerResizePolicy.spec."
                                         "containers.resizePolicy.resourceName of type v1.ResourceName)"),
    "type-grace-period-string.yaml": (_ctr("", "terminationGracePeriodSeconds: '30'"),
                                      _UNMARSHAL + "string into Go struct field PodSpec.spec."
                                      "terminationGracePeriodSeconds of type int64)"),
    "type-header-name-number.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, httpHeaders: [{name: 1}]}}"),
                                     _UNMARSHAL + "number into Go struct field HTTPHeader.spec.containers."
                                     "livenessProbe.ProbeHandler.httpGet.httpHeaders.name of type string)"),
    "type-divisor-list.yaml": (_ctr("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu,"
                                    " divisor: [1]}}}]"), _BAD_QUANTITY),
    "type-json-port-with-fraction.json": (json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "livenessProbe": {"httpGet": {"port": 80.0}}}]}}),
        _UNMARSHAL + "number 80.0 into Go struct field HTTPGetAction.spec.containers.livenessProbe.ProbeHandler."
        "httpGet.port of type int32)"),
    "json-port-name.json": (json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"name": "http", "containerPort": 80}],
                                 "livenessProbe": {"httpGet": {"port": "http"}}}]}}), None),
    # more refusals in the kubelet's order
    "resize-empty-policy-pod-never.yaml": (_ctr("resizePolicy: [{resourceName: cpu, restartPolicy: ''}]",
                                                "restartPolicy: Never"),
                                           f"{C}.resizePolicy: Required value {C}.resizePolicy: Invalid value: \"\": "
                                           "must be 'NotRequired' when pod `restartPolicy` is 'Never'"),
    "probe-http-protocol-empty.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, protocol: ''}}"),
                                       f'{C}.livenessProbe.httpGet.protocol: Unsupported value: "": supported values: '
                                       '"HTTP1", "HTTP2"'),
    "probe-without-handler.yaml": (_ctr("livenessProbe: {periodSeconds: 5}"),
                                   f"{C}.livenessProbe: Required value: must specify a handler type"),
    "env-key-too-long.yaml": (_ctr("env: [{name: A, valueFrom: {configMapKeyRef: {name: m, key: " + "k" * 254 + "}}}]"),
                              f'{C}.env[0].valueFrom.configMapKeyRef.key: Invalid value: "{"k" * 254}": must be no '
                              "more than 253 characters"),
    "env-file-key-ref-unnamed-volume.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{hostPath: {path: /x}}]
  containers: [{name: c, image: x, env: [{name: A, valueFrom: {fileKeyRef: {key: '=', path: a/../b}}}]}]
""", f"spec.volumes[0].name: Required value {C}.env[0].valueFrom.fileKeyRef.key: Invalid value: \"=\": a valid "
     "environment variable name must consist only of printable ASCII characters other than '=' "
     f"{C}.env[0].valueFrom.fileKeyRef.volumeName: Required value {C}.env[0].valueFrom.fileKeyRef.path: Invalid "
     f"value: \"a/../b\": must not contain '..' {C}.env[0].valueFrom.fileKeyRef.volumeName: Invalid value: \"\": "
     "referenced volume must be of type emptyDir]"),
    # look-alikes the kubelet accepts
    "probe-null-second-handler.yaml": (_ctr("livenessProbe: {httpGet: null, exec: {command: [a]}}\nlifecycle: {}"),
                                       None),
    "workdir-command-tty-not-checked.yaml": (_ctr("workingDir: relative\ncommand: ['']\nargs: ['']\nstdin: true\n"
                                                  "tty: true\nstdinOnce: true"), None),
    "null-hooks-and-policies.yaml": (_ctr("lifecycle: {postStart: null, preStop: null}\nresizePolicy: null\n"
                                          "env: [{name: A, valueFrom: null}]"), None),
}

# a value of a named Go type (core.ResourceName, core.URIScheme, core.Signal...)
# is shown by json.Marshal ("\u003c" for "<"), a plain string by %q; the
# annotation key of a fieldRef is lowered by strings.ToLower (U+0130 to "i")
CASES.update({
    "resize-named-types-json-quoted.yaml": (_ctr(
        "resizePolicy: [{resourceName: 'x&y', restartPolicy: 'p>q'}, {resourceName: 'x&y', restartPolicy: NotRequired}]",
        "restartPolicy: Never"),
        f'{C}.resizePolicy: Unsupported value: "x\\u0026y": supported values: "cpu", "memory" '
        f'{C}.resizePolicy: Unsupported value: "p\\u003eq": supported values: "NotRequired", "RestartContainer" '
        f'{C}.resizePolicy: Invalid value: "p\\u003eq": must be \'NotRequired\' when pod `restartPolicy` is \'Never\' '
        f'{C}.resizePolicy[1]: Duplicate value: "x\\u0026y" '
        f'{C}.resizePolicy: Unsupported value: "x\\u0026y": supported values: "cpu", "memory"'),
    "resize-resource-name-lt.yaml": (_ctr("resizePolicy: [{resourceName: 'a<b', restartPolicy: NotRequired}]"),
                                     f'{C}.resizePolicy: Unsupported value: "a\\u003cb": supported values: "cpu", '
                                     '"memory"'),
    "probe-http-scheme-json-quoted.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, scheme: 'H<S'}}"),
                                           f'{C}.livenessProbe.httpGet.scheme: Unsupported value: "H\\u003cS": '
                                           'supported values: "HTTP", "HTTPS"'),
    "probe-http-protocol-json-quoted.yaml": (_ctr("livenessProbe: {httpGet: {port: 80, protocol: 'a&b'}}"),
                                             f'{C}.livenessProbe.httpGet.protocol: Unsupported value: "a\\u0026b": '
                                             'supported values: "HTTP1", "HTTP2"'),
    "probe-grpc-mode-json-quoted.yaml": (_ctr("livenessProbe: {grpc: {port: 80, mode: '<x>'}}"),
                                         f'{C}.livenessProbe.grpc.mode: Unsupported value: "\\u003cx\\u003e": '
                                         'supported values: "Plaintext", "TLS"'),
    "stop-signal-json-quoted.yaml": (_ctr("lifecycle: {stopSignal: \"SIG<\\u00ad\"}", "os: {name: windows}"),
                                     f'{C}.lifecycle.stopSignal: Unsupported value: "SIG\\u003c\u00ad": supported '
                                     'values: "SIGKILL", "SIGTERM"'),
    "env-field-ref-annotation-dotted-capital-i.yaml": (_ctr(
        "env: [{name: A, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['\\u0130x']\"}}}]"), None),
    "env-field-ref-annotation-final-sigma.yaml": (_ctr(
        "env: [{name: A, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['a\\u03a3']\"}}}]"),
        f'{C}.env[0].valueFrom.fieldRef: Invalid value: "a\u03c3"'),
})


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), CASES)


def test_enough_cases() -> None:
    refused = [n for n, (_, phrase) in CASES.items() if phrase]
    assert len(CASES) >= 40 and len(refused) >= 30 and len(CASES) - len(refused) >= 8


@pytest.mark.parametrize("name", sorted(CASES))
def test_container_details_as_the_kubelet_checks_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert_as_the_kubelet(kubelet, ours, CASES[name][1])
