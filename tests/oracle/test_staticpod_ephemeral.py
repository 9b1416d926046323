"""Ephemeral containers in a static pod against the kubelet's file source
(``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
pkg/kubelet/config/common.go, ``ValidatePodCreate`` after the v1
defaults). ``ValidatePodSpec`` runs ``validateEphemeralContainers`` before
``ValidatePodCreate`` forbids the list: each ephemeral container is
validated as any container (no host-network port defaulting, no requests
defaulted from limits), its image for white space, its name unique across
every list, its ``targetContainerName``, the fields it may not have (in
``core.EphemeralContainerCommon``'s order), ``subPath`` and ``subPathExpr``;
the checks that visit every container (seccomp and AppArmor annotations,
``fileKeyRef`` volumes, the OS, ``hostUsers``) see them too; Go's decoder
names ``EphemeralContainer.…EphemeralContainerCommon.…`` for a value of the
wrong type.

Hand-written cases, then generated ones (a fixed seed): every manifest
through the oracle and through podnuma, the kubelet's whole message (every
error, in its order) inside podnuma's.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tests.oracle.staticpod_cases import assert_as_the_kubelet, decoded_cases
from tests.oracle.test_staticpod_differential import HEAD, kubelet_words

_FORBID = "Forbidden: cannot be set for an Ephemeral Container"
_ON_CREATE = "spec.ephemeralContainers: Forbidden: cannot be set on create]"
E = "spec.ephemeralContainers[0]"


def _eph(*ephemeral: str, spec: str = "", meta: str = "{name: web}",
         containers: str = "[{name: c, image: nginx}]") -> str:
    """A pod with the app containers ``containers``, the ephemeral
    containers ``ephemeral`` (flow mappings) and the spec fields ``spec``."""
    extra = "".join(f"  {line}\n" for line in spec.splitlines())
    items = "".join(f"  - {e}\n" for e in ephemeral)
    return (HEAD + f"metadata: {meta}\nspec:\n" + extra + f"  containers: {containers}\n"
            + "  ephemeralContainers:\n" + items)


def _json(*ephemeral: dict[str, Any]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}],
                                "ephemeralContainers": list(ephemeral)}})


#: name -> (manifest text, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    "accepted-empty-list.yaml": (HEAD + "metadata: {name: web}\nspec:\n  containers: [{name: c, image: x}]\n"
                                 "  ephemeralContainers: []\n", None),
    "accepted-null-list.yaml": (HEAD + "metadata: {name: web}\nspec:\n  containers: [{name: c, image: x}]\n"
                                "  ephemeralContainers: null\n", None),
    "plain.yaml": (_eph("{name: debug, image: busybox, targetContainerName: c, stdin: true, tty: true,"
                        " command: [sh], workingDir: /tmp, terminationMessagePath: /t}"),
                   f"invalid pod: [{_ON_CREATE}"),
    "all-forbidden.yaml": (_eph(
        "{name: d, image: x, ports: [{containerPort: 80}], resources: {requests: {cpu: 1}},"
        " resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}], restartPolicy: Always,"
        " restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [1]}}],"
        " livenessProbe: {exec: {command: [a]}}, readinessProbe: {exec: {command: [a]}},"
        " startupProbe: {exec: {command: [a]}}, lifecycle: {preStop: {exec: {command: [a]}}}}"),
        f"invalid pod: [{E}.ports: {_FORBID} {E}.resources: {_FORBID} {E}.resizePolicy: {_FORBID} "
        f"{E}.restartPolicy: {_FORBID} {E}.restartPolicyRules: {_FORBID} {E}.livenessProbe: {_FORBID} "
        f"{E}.readinessProbe: {_FORBID} {E}.startupProbe: {_FORBID} {E}.lifecycle: {_FORBID} {_ON_CREATE}"),
    "empty-but-set.yaml": (_eph("{name: d, image: x, ports: [], resources: {claims: []}, resizePolicy: [],"
                                " restartPolicy: '', restartPolicyRules: [], livenessProbe: {}, lifecycle: {}}"),
                           f"invalid pod: [{E}.ports: {_FORBID} {E}.resources: {_FORBID} "
                           f"{E}.resizePolicy: {_FORBID} {E}.restartPolicy: {_FORBID} "
                           f"{E}.restartPolicyRules: {_FORBID} {E}.livenessProbe: {_FORBID} "
                           f"{E}.lifecycle: {_FORBID} {_ON_CREATE}"),
    "zero-values-allowed.yaml": (_eph("{name: d, image: x, ports: null, resources: {}, resizePolicy: null,"
                                      " livenessProbe: null, lifecycle: null, env: [], envFrom: [],"
                                      " volumeMounts: [], volumeDevices: []}"),
                                 f"invalid pod: [{_ON_CREATE}"),
    "resources-limits-empty.yaml": (_eph("{name: d, image: x, resources: {limits: {}, requests: null}}"),
                                    f"invalid pod: [{E}.resources: {_FORBID} {_ON_CREATE}"),
    "names.yaml": (_eph("{name: c, image: x}", "{name: i, image: x}", "{name: D, image: x}", "{name: e, image: x}",
                        "{name: e, image: x}", "{image: x}", "{image: x}", "{}", "null",
                        spec="initContainers: [{name: i, image: x}]"),
                   "spec.ephemeralContainers[0].name: Duplicate value: \"c\""),
    "name-empty-everywhere.yaml": (_eph("{image: x}", containers="[{image: x}]"),
                                   'spec.ephemeralContainers[0].name: Duplicate value: ""'),
    "image-space.yaml": (_eph("{name: d, image: ' '}", "{name: e, image: \"x\\t\"}", "{name: f, image: ''}"),
                         f'{E}.image: Invalid value: " ": must not have leading or trailing whitespace'),
    "target.yaml": (_eph("{name: d, image: x, targetContainerName: i}", "{name: e, image: x, targetContainerName: d}",
                         "{name: f, image: x, targetContainerName: ''}", "{name: g, image: x, targetContainerName: C}",
                         spec="initContainers: [{name: i, image: x}]"),
                    'spec.ephemeralContainers[1].targetContainerName: Not found: "d"'),
    "subpaths.yaml": (_eph("{name: d, image: x, volumeMounts: [{name: v, mountPath: /a, subPath: s},"
                           " {name: v, mountPath: /b, subPathExpr: '$(X)'}, {name: v, mountPath: /c, subPath: ''}]}",
                           spec="volumes: [{name: v, emptyDir: {}}]"),
                      f"{E}.volumeMounts[0].subPath: {_FORBID} {E}.volumeMounts[1].subPathExpr: {_FORBID}"),
    "common-checks.yaml": (_eph(
        "{name: d, image: x, terminationMessagePolicy: Bad, imagePullPolicy: Sometimes,"
        " env: [{name: ''}, {name: 'a=b'}], envFrom: [{prefix: '1=', configMapRef: {name: m}}, {}],"
        " volumeMounts: [{name: nope, mountPath: /a}, {name: v, mountPath: ''}, {name: v, mountPath: /a}],"
        " volumeDevices: [{name: v, devicePath: /dev/x}]}",
        spec="volumes: [{name: v, emptyDir: {}}]"),
        f'{E}.terminationMessagePolicy: Unsupported value: "Bad"'),
    "ports-validated.yaml": (_eph("{name: d, image: x, ports: [{containerPort: 0, hostPort: 70000, name: BAD,"
                                  " protocol: tcp}, {containerPort: 80, name: p}, {containerPort: 81, name: p}]}"),
                             f"{E}.ports[0].containerPort: Required value"),
    "ports-host-network-not-defaulted.yaml": (_eph("{name: d, image: x, ports: [{containerPort: 80}, {containerPort: 80}]}",
                                                   spec="hostNetwork: true"),
                                              f"invalid pod: [{E}.ports: {_FORBID} {_ON_CREATE}"),
    "resources-no-request-defaulting.yaml": (_eph("{name: d, image: x, resources: {limits: {hugepages-2Mi: 3Mi}}}"),
                                             f'{E}.resources.limits[hugepages-2Mi]: Invalid value: "3Mi"'),
    "resources-validated.yaml": (_eph("{name: d, image: x, resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}}",
                                      "{name: e, image: x, resources: {requests: {example.com/gpu: '1'}}}",
                                      "{name: f, image: x, resources: {claims: [{name: nope}, {name: ''}]}}",
                                      "{name: g, image: x, resources: {limits: {'bad name': '1'}}}"),
                                 f'{E}.resources.requests: Invalid value: "2": must be less than or equal to cpu '
                                 "limit of 1"),
    "resize-policy-validated.yaml": (_eph("{name: d, image: x, resizePolicy: [{resourceName: gpu, restartPolicy: X},"
                                          " {resourceName: memory, restartPolicy: RestartContainer}]}",
                                          spec="restartPolicy: Never"),
                                     f'{E}.resizePolicy: Unsupported value: "gpu"'),
    "restart-policy-not-validated.yaml": (_eph("{name: d, image: x, restartPolicy: Sometimes,"
                                               " restartPolicyRules: [{action: Bad}]}"),
                                          f"invalid pod: [{E}.restartPolicy: {_FORBID} {E}.restartPolicyRules: "
                                          f"{_FORBID} {_ON_CREATE}"),
    "probes-not-validated.yaml": (_eph("{name: d, image: x, livenessProbe: {httpGet: {port: 0}},"
                                       " startupProbe: {successThreshold: 5}, lifecycle: {preStop: {}}}"),
                                  f"invalid pod: [{E}.livenessProbe: {_FORBID} {E}.startupProbe: {_FORBID} "
                                  f"{E}.lifecycle: {_FORBID} {_ON_CREATE}"),
    "security-context.yaml": (_eph("{name: d, image: x, securityContext: {runAsUser: -1, procMount: Bad,"
                                   " privileged: true, capabilities: {add: [SYS_ADMIN]}, allowPrivilegeEscalation: false}}"),
                              f"{E}.securityContext.runAsUser: Invalid value: -1"),
    "seccomp-annotation.yaml": (_eph("{name: d, image: x, securityContext: {seccompProfile: {type: RuntimeDefault}}}",
                                     meta="{name: web, annotations: {container.seccomp.security.alpha.kubernetes.io/d:"
                                          " unconfined}}"),
                                f"{E}.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and "
                                "field must match"),
    "apparmor-annotation.yaml": (_eph("{name: d, image: x, securityContext: {appArmorProfile: {type: RuntimeDefault}}}",
                                      meta="{name: web, annotations: {container.apparmor.security.beta.kubernetes.io/d:"
                                           " unconfined}}"),
                                 f"{E}.securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation "
                                 "and field must match"),
    "file-key-ref.yaml": (_eph("{name: d, image: x, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: p,"
                               " key: k}}}, {name: B, valueFrom: {fileKeyRef: {volumeName: nope, path: p, key: k}}}]}",
                               spec="volumes: [{name: v, hostPath: {path: /x}}]"),
                          f'{E}.env[0].valueFrom.fileKeyRef.volumeName: Invalid value: "v": referenced volume must '
                          "be of type emptyDir"),
    "windows-linux-options.yaml": (_eph("{name: d, image: x, securityContext: {seLinuxOptions: {user: u}}}",
                                        spec="os: {name: windows}"),
                                   f"{E}.securityContext.seLinuxOptions: Forbidden: cannot be set for a windows pod"),
    "host-users-devices.yaml": (_eph("{name: d, image: x, volumeDevices: [{name: v, devicePath: /dev/x}]}",
                                     spec="hostUsers: false\nvolumes: [{name: v, emptyDir: {}}]"),
                                f"{E}.volumeDevices: Forbidden: when `hostUsers` is false"),
    "unknown-fields-dropped.yaml": (_eph("{name: d, image: x, Ports: [{containerPort: 1}], targetcontainername: zz}"),
                                    f"invalid pod: [{_ON_CREATE}"),
    # Go's decoder on an ephemeral container's fields
    "decode-ports-string.json": (_json({"name": "d", "image": "x", "ports": "80"}),
                                 "couldn't parse as pod(json: cannot unmarshal string into Go struct field "
                                 "EphemeralContainer.spec.ephemeralContainers.EphemeralContainerCommon.ports of type "
                                 "[]v1.ContainerPort)"),
    "decode-target-number.json": (_json({"name": "d", "image": "x", "targetContainerName": 5}),
                                  "couldn't parse as pod(json: cannot unmarshal number into Go struct field "
                                  "EphemeralContainer.spec.ephemeralContainers.targetContainerName of type string)"),
    "decode-mount-sub-path.json": (_json({"name": "d", "image": "x", "volumeMounts": [{"name": "v", "subPath": True}]}),
                                   "couldn't parse as pod(json: cannot unmarshal bool into Go struct field VolumeMount."
                                   "spec.ephemeralContainers.EphemeralContainerCommon.volumeMounts.subPath of type "
                                   "string)"),
    "decode-name-number.yaml": (_eph("{name: 5, image: x}"),
                                "couldn't parse as pod(json: cannot unmarshal number into Go struct field "
                                "EphemeralContainer.spec.ephemeralContainers.EphemeralContainerCommon.name of type "
                                "string)"),
    "decode-pull-policy-bool.yaml": (_eph("{name: d, image: x, imagePullPolicy: no}"),
                                     "couldn't parse as pod(json: cannot unmarshal bool into Go struct field "
                                     "EphemeralContainer.spec.ephemeralContainers.EphemeralContainerCommon."
                                     "imagePullPolicy of type v1.PullPolicy)"),
    "decode-null-element.json": (_json(None, {"name": "d", "image": "x", "ports": [None]}),  # type: ignore[arg-type]
                                 "spec.ephemeralContainers[0].name: Required value"),
    "decode-resources-quantity.yaml": (_eph("{name: d, image: x, resources: {limits: {cpu: 1x}}}"),
                                       "couldn't parse as pod(quantities must match the regular expression"),
}


# ---------------------------------------------------------------- generated

_FIELDS: dict[str, list[str]] = {
    "name": ["d", "c", "i", "e", "D", "", "x" * 64, "e-1"],
    "image": ["busybox", "", " busybox", "busybox:1 "],
    "targetContainerName": ["c", "i", "e", "zz", ""],
    "ports": ["[]", "[{containerPort: 80}]", "[{containerPort: 0, name: Bad}]", "null",
              "[{containerPort: 1, hostPort: 1}, {containerPort: 2, hostPort: 1}]"],
    "resources": ["{}", "{limits: {cpu: '1'}}", "{requests: {memory: 1Gi}, limits: {memory: 512Mi}}",
                  "{limits: {}}", "{claims: [{name: zz}]}", "{requests: {example.com/x: '2'}}"],
    "resizePolicy": ["[]", "[{resourceName: cpu, restartPolicy: NotRequired}]", "[{resourceName: gpu}]", "null"],
    "restartPolicy": ["Always", "''", "Never", "null"],
    "restartPolicyRules": ["[]", "[{action: Restart}]"],
    "livenessProbe": ["{}", "{exec: {command: [a]}}", "null"],
    "readinessProbe": ["{tcpSocket: {port: 0}}"],
    "startupProbe": ["{grpc: {port: 1}}"],
    "lifecycle": ["{}", "{postStart: {}}"],
    "terminationMessagePolicy": ["File", "Bad", "''"],
    "imagePullPolicy": ["Never", "Sometimes", "''"],
    "env": ["[{name: A, value: b}]", "[{name: ''}]", "[{name: 'a=b'}]", "[]"],
    "envFrom": ["[{configMapRef: {name: m}}]", "[{}]", "[{prefix: '=', secretRef: {name: s}}]"],
    "volumeMounts": ["[{name: v, mountPath: /a}]", "[{name: v, mountPath: /a, subPath: s}]",
                     "[{name: w, mountPath: /b, subPathExpr: e}]", "[{name: nope, mountPath: /c}]",
                     "[{name: v, mountPath: ''}]"],
    "volumeDevices": ["[{name: v, devicePath: /dev/a}]", "[{name: nope, devicePath: /dev/b}]"],
    "securityContext": ["{}", "{runAsUser: -5}", "{privileged: true}", "{procMount: Nope}"],
    "stdin": ["true", "false"],
    "tty": ["true"],
}


def _generated(count: int, seed: int) -> dict[str, tuple[str, str | None]]:
    rnd = random.Random(seed)
    out: dict[str, tuple[str, str | None]] = {}
    for n in range(count):
        ephemeral = []
        for _ in range(rnd.randint(1, 3)):
            keys = rnd.sample(sorted(_FIELDS), rnd.randint(1, 7))
            if rnd.random() < 0.8:
                keys = ["name", "image", *[k for k in keys if k not in ("name", "image")]]
            body = ", ".join(f"{k}: {_q(rnd.choice(_FIELDS[k]))}" for k in keys)
            ephemeral.append("{" + body + "}")
        spec = "volumes: [{name: v, emptyDir: {}}, {name: w, hostPath: {path: /w}}]\n"
        if rnd.random() < 0.5:
            spec += "initContainers: [{name: i, image: x}]\n"
        if rnd.random() < 0.3:
            spec += "hostNetwork: true\n"
        if rnd.random() < 0.2:
            spec += "restartPolicy: Never\n"
        out[f"gen-{n:03d}.yaml"] = (_eph(*ephemeral, spec=spec), "")
    return out


def _q(value: str) -> str:
    """A YAML flow value: as written when it is flow YAML, else quoted."""
    if value == "" or value.startswith(" ") or value.endswith(" ") or value[:1].isupper() and value.isalpha():
        return json.dumps(value)
    return value


GENERATED = _generated(80, 20261206)


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), {**CASES, **GENERATED})


def test_enough_cases() -> None:
    refused = [n for n, (_, phrase) in CASES.items() if phrase]
    assert len(CASES) >= 30 and len(refused) >= 28 and len(GENERATED) >= 50


@pytest.mark.parametrize("name", sorted(CASES))
def test_ephemeral_containers_as_the_kubelet_checks_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert_as_the_kubelet(kubelet, ours, CASES[name][1])


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_ephemeral_containers(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert "error" in kubelet, "every pod with ephemeral containers is refused"
    assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
    assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])
