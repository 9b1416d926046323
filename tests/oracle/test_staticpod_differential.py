"""The agent's static-pod decoding against the kubelet's file source
(``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
pkg/kubelet/config/file.go and common.go, ``tryDecodeSinglePod`` with the
file source's ``applyDefaults``).

For every manifest: accepted or refused alike (a refusal with the phrase
given, and the kubelet's whole message, every error in its order, inside
podnuma's; ``PHRASE_ONLY`` lists the one exception), and for an accepted
one the pod's name, namespace, QoS class and resources (pod-level and per
container) as the kubelet sees them. For pairs of manifests written in
turn to the same path: the generated UID stays the same, or changes, as
the kubelet's does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from podnuma.agent.manifests import parse_manifest
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.api.qos import compute_pod_qos
from podnuma.api.quantity import parse_quantity
from podnuma.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
NODE = "node-a"
GATES = load_kubelet_config({}).feature_gates

HEAD = "apiVersion: v1\nkind: Pod\n"

#: name -> (manifest text, a phrase of the kubelet's error when refused)
CASES: dict[str, tuple[str, str | None]] = {
    "pod-level-limits-only.yaml": (HEAD + """\
metadata: {name: web}
spec:
  resources: {limits: {cpu: "2", memory: 1Gi}}
  containers: [{name: c, image: nginx}]
""", None),
    "pod-level-requests-only.yaml": (HEAD + """\
metadata: {name: web}
spec:
  resources: {requests: {cpu: "2", memory: 1Gi}}
  containers: [{name: c, image: nginx}]
""", None),
    "pod-level-both.yaml": (HEAD + """\
metadata: {name: web}
spec:
  resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}
  containers:
  - {name: c, image: nginx, resources: {limits: {cpu: "1", memory: 512Mi}}}
  - {name: d, image: nginx}
""", None),
    "pod-level-limits-container-limits.yaml": (HEAD + """\
metadata: {name: web}
spec:
  resources: {limits: {cpu: "4", memory: 2Gi}}
  containers:
  - {name: c, image: nginx, resources: {limits: {cpu: "1", memory: 512Mi}}}
""", None),
    "guaranteed.yaml": (HEAD + """\
metadata: {name: g, namespace: kube-system}
spec:
  containers:
  - {name: c, image: "nginx:1.27", resources: {limits: {cpu: "2", memory: 1Gi}}}
""", None),
    "sidecar-and-init.yaml": (HEAD + """\
metadata: {name: s}
spec:
  initContainers:
  - {name: setup, image: busybox, resources: {limits: {cpu: "1", memory: 256Mi}}}
  - {name: proxy, image: envoy, restartPolicy: Always,
     resources: {requests: {cpu: 500m, memory: 128Mi}}}
  containers:
  - {name: app, image: app:1, resources: {requests: {cpu: "1"}, limits: {cpu: "2"}}}
""", None),
    "missing-image.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers: [{name: c}]
""", "spec.containers[0].image: Required value"),
    "missing-init-image.yaml": (HEAD + """\
metadata: {name: web}
spec:
  initContainers: [{name: i}]
  containers: [{name: c, image: x}]
""", "spec.initContainers[0].image: Required value"),
    "missing-kind.yaml": ("""\
metadata: {name: web}
spec:
  containers: [{name: c, image: x}]
""", "Object 'Kind' is missing"),
    "missing-apiversion.yaml": ("""\
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: x}]
""", "Object 'apiVersion' is missing"),
    "deployment.yaml": ("""\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
""", 'no kind "Deployment" is registered for version "apps/v1"'),
    "list.yaml": ("""\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: web}
  spec:
    containers: [{name: c, image: x}]
""", "invalid pod: &core.List"),
    "two-documents.yaml": (HEAD + """\
metadata: {name: first}
spec:
  containers: [{name: c, image: x, resources: {limits: {cpu: "1", memory: 1Gi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: second}
spec:
  containers: [{name: c, image: x}]
""", None),
    "envfrom-secret.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers: [{name: c, image: x, envFrom: [{secretRef: {name: s}}]}]
""", "static pods may not reference secrets"),
    "env-secretkeyref.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers:
  - name: c
    image: x
    env: [{name: A, valueFrom: {secretKeyRef: {name: s, key: k}}}]
""", "static pods may not reference secrets"),
    "envfrom-configmap.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers: [{name: c, image: x, envFrom: [{configMapRef: {name: m}}]}]
""", "static pods may not reference configmaps"),
    "service-account.yaml": (HEAD + """\
metadata: {name: web}
spec:
  serviceAccountName: sa
  containers: [{name: c, image: x}]
""", "static pods may not reference serviceaccounts"),
    "volume-secret.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: v, secret: {secretName: s}}]
  containers: [{name: c, image: x, volumeMounts: [{name: v, mountPath: /s}]}]
""", "static pods may not reference secrets"),
    "volume-hostpath.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: v, hostPath: {path: /etc}}, {name: e, emptyDir: {}}]
  containers: [{name: c, image: x, volumeMounts: [{name: v, mountPath: /h}]}]
""", None),
    "capital-resources.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers:
  - name: c
    image: x
    Resources: {limits: {cpu: "2", memory: 1Gi}}
""", None),
    "unknown-fields-deep.yaml": (HEAD + """\
metadata: {name: web, colour: blue}
spec:
  frobnicate: true
  containers:
  - name: c
    image: x
    resources: {limits: {cpu: "1", memory: 1Gi}, extra: {a: 1}}
    livenessProbe: {exec: {command: ["true"]}, bogus: 1}
whatever: 1
""", None),
    "duplicate-key.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers:
  - name: c
    image: x
    resources: {limits: {cpu: "1", memory: 1Gi}}
    resources: {limits: {cpu: "2", memory: 1Gi}}
""", None),
    "duplicate-key.json": (json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}})[:-1]
                           + ', "spec": {"containers": [{"name": "c", "image": "x",'
                           ' "resources": {"limits": {"cpu": "1"}},'
                           ' "resources": {"requests": {"memory": "1Gi"}}}]}}', None),
    "missing-name.yaml": (HEAD + """\
metadata: {namespace: x}
spec:
  containers: [{name: c, image: x}]
""", "name is needed for the pod"),
    "namespace-default.yaml": (HEAD + """\
metadata: {name: web, namespace: ""}
spec:
  containers: [{name: c, image: x}]
""", None),
    "uid-given.yaml": (HEAD + """\
metadata: {name: web, uid: 0b9cbc9a-4f4e-4c61-9a86-0e9c2f3b2d11}
spec:
  containers: [{name: c, image: x}]
""", None),
    "resource-claims.yaml": (HEAD + """\
metadata: {name: web}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
""", "static pods may not reference resourceclaims"),

    # ValidatePodCreate (podnuma.agent.validation): refused, every error in one message
    "name-capitals.yaml": (HEAD + """\
metadata: {name: Web}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.name: Invalid value: "Web-node-a": a lowercase RFC 1123 subdomain'),
    "name-underscore.yaml": (HEAD + """\
metadata: {name: my_web}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.name: Invalid value: "my_web-node-a"'),
    "name-too-long-with-node.yaml": (HEAD + "metadata: {name: " + "a" * 247 + """}
spec: {containers: [{name: c, image: x}]}
""", "-node-a\": must be no more than 253 characters"),
    "namespace-capitals.yaml": (HEAD + """\
metadata: {name: web, namespace: Kube-System}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.namespace: Invalid value: "Kube-System": a lowercase RFC 1123 label'),
    "namespace-dotted.yaml": (HEAD + """\
metadata: {name: web, namespace: a.b}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.namespace: Invalid value: "a.b": must not contain dots'),
    "label-key-space.yaml": (HEAD + """\
metadata: {name: web, labels: {"bad key": x}}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric'),
    "label-key-prefix.yaml": (HEAD + """\
metadata: {name: web, labels: {"Example.com/app": x}}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.labels: Invalid value: "Example.com/app": prefix part a lowercase RFC 1123 subdomain'),
    "label-value-space.yaml": (HEAD + """\
metadata: {name: web, labels: {app: "hello world"}}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.labels: Invalid value: "hello world": a valid label must be an empty string'),
    "label-value-64.yaml": (HEAD + "metadata: {name: web, labels: {app: " + "a" * 64 + """}}
spec: {containers: [{name: c, image: x}]}
""", "must be no more than 63 bytes"),
    "annotation-key-slashes.yaml": (HEAD + """\
metadata: {name: web, annotations: {"a/b/c": x}}
spec: {containers: [{name: c, image: x}]}
""", 'metadata.annotations: Invalid value: "a/b/c": a valid label key must consist'),
    "container-name-capitals.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: Web, image: x}]}
""", 'spec.containers[0].name: Invalid value: "Web": a lowercase RFC 1123 label'),
    "container-name-64.yaml": (HEAD + "metadata: {name: web}\nspec: {containers: [{name: " + "a" * 64 + """, image: x}]}
""", "spec.containers[0].name: Invalid value: \"" + "a" * 64 + "\": must be no more than 63 characters"),
    "container-name-missing.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{image: x}]}
""", "spec.containers[0].name: Required value"),
    "container-name-repeated.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x}, {name: c, image: z}]}
""", 'spec.containers[1].name: Duplicate value: "c"'),
    "container-name-repeated-in-init.yaml": (HEAD + """\
metadata: {name: web}
spec:
  initContainers: [{name: c, image: x}]
  containers: [{name: c, image: z}]
""", 'spec.initContainers[0].name: Duplicate value: "c"'),
    "no-containers.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: []}
""", "spec.containers: Required value"),
    "image-trailing-space.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: "nginx "}]}
""", 'spec.containers[0].image: Invalid value: "nginx ": must not have leading or trailing whitespace'),
    "container-port-out-of-range.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 70000}]}]}
""", "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
    "container-port-zero.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 0}]}]}
""", "spec.containers[0].ports[0].containerPort: Required value"),
    "container-port-as-string.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, ports: [{containerPort: "80"}]}]}
""", ""),
    "port-name-repeated.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, ports: [{name: http, containerPort: 80}, {name: http, containerPort: 81}]}]}
""", 'spec.containers[0].ports[1].name: Duplicate value: "http"'),
    "port-name-digits-only.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, ports: [{name: "8080", containerPort: 80}]}]}
""", 'spec.containers[0].ports[0].name: Invalid value: "8080": must contain at least one letter (a-z)'),
    "port-protocol-lowercase.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 80, protocol: tcp}]}]}
""", 'spec.containers[0].ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"'),
    "host-port-out-of-range.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 70000}]}]}
""", "spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
    "host-port-twice.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers:
  - {name: c, image: x, ports: [{containerPort: 80, hostPort: 8080}]}
  - {name: d, image: x, ports: [{containerPort: 81, hostPort: 8080}]}
""", 'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"'),
    "host-network-port-twice.yaml": (HEAD + """\
metadata: {name: web}
spec:
  hostNetwork: true
  containers:
  - {name: c, image: x, ports: [{containerPort: 80}]}
  - {name: d, image: x, ports: [{containerPort: 80}]}
""", 'spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//80"'),
    "host-network-host-port-differs.yaml": (HEAD + """\
metadata: {name: web}
spec: {hostNetwork: true, containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 8080}]}]}
""", "spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true"),
    "restart-policy-lowercase.yaml": (HEAD + """\
metadata: {name: web}
spec: {restartPolicy: always, containers: [{name: c, image: x}]}
""", 'spec.restartPolicy: Unsupported value: "always": supported values: "Always", "OnFailure", "Never"'),
    "dns-policy-typo.yaml": (HEAD + """\
metadata: {name: web}
spec: {dnsPolicy: ClusterFirstWithHostNetwork, containers: [{name: c, image: x}]}
""", 'spec.dnsPolicy: Unsupported value: "ClusterFirstWithHostNetwork": supported values: '
     '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'),
    "pull-policy-lowercase.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, imagePullPolicy: always}]}
""", 'spec.containers[0].imagePullPolicy: Unsupported value: "always": supported values: "Always", "IfNotPresent", "Never"'),
    "termination-message-policy-lowercase.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, terminationMessagePolicy: file}]}
""", 'spec.containers[0].terminationMessagePolicy: Unsupported value: "file": supported values: "File", '
     '"FallbackToLogsOnError"'),
    "negative-cpu.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "-1"}}}]}
""", 'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    "requests-above-limits.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]}
""", 'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'),
    "resource-without-domain.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, resources: {limits: {gpu: "1"}}}]}
""", 'spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource type or fully qualified'),
    "env-name-empty.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, env: [{name: "", value: x}]}]}
""", "spec.containers[0].env[0].name: Required value"),
    "envfrom-null.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, envFrom: [null]}]}
""", 'spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`'),
    "envfrom-prefix-only.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, envFrom: [{prefix: APP_}]}]}
""", 'spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`'),
    "envfrom-two-sources.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, envFrom: [{configMapRef: {name: a}, secretRef: {name: b}}]}]}
""", 'spec.containers[0].envFrom: Invalid value: "": may not have more than one field specified at a time'),
    "envfrom-ref-without-name.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, envFrom: [{configMapRef: {}}]}]}
""", "spec.containers[0].envFrom[0].configMapRef.name: Required value"),
    "envfrom-bad-prefix.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, envFrom: [{prefix: "a=b", configMapRef: {name: a}}]}]}
""", 'spec.containers[0].envFrom[0].prefix: Invalid value: "a=b": a valid environment variable name'),
    "envfrom-bad-secret-name.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, envFrom: [{secretRef: {name: A_b}}]}]}
""", 'spec.containers[0].envFrom[0].secretRef.name: Invalid value: "A_b": a lowercase RFC 1123 subdomain'),
    "envfrom-config-map.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, envFrom: [{prefix: APP_, configMapRef: {name: settings}}]}]}
""", "static pods may not reference configmaps"),
    "env-name-equals.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, env: [{name: "A=B", value: x}]}]}
""", 'spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only '
     "of printable ASCII characters other than '='"),
    "mount-of-missing-volume.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, volumeMounts: [{name: data, mountPath: /data}]}]}
""", 'spec.containers[0].volumeMounts[0].name: Not found: "data"'),
    "mount-without-path.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: data, emptyDir: {}}]
  containers: [{name: c, image: x, volumeMounts: [{name: data}]}]
""", "spec.containers[0].volumeMounts[0].mountPath: Required value"),
    "mount-path-twice.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: data, emptyDir: {}}, {name: logs, emptyDir: {}}]
  containers: [{name: c, image: x, volumeMounts: [{name: data, mountPath: /d}, {name: logs, mountPath: /d}]}]
""", 'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/d": must be unique'),
    "volume-name-repeated.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: data, emptyDir: {}}, {name: data, hostPath: {path: /tmp}}]
  containers: [{name: c, image: x}]
""", 'spec.volumes[1].name: Duplicate value: "data"'),
    "volume-name-capitals-mounted.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: Data, emptyDir: {}}]
  containers: [{name: c, image: x, volumeMounts: [{name: Data, mountPath: /d}]}]
""", 'spec.containers[0].volumeMounts[0].name: Not found: "Data"'),
    "volume-two-sources.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: data, emptyDir: {}, hostPath: {path: /tmp}}]
  containers: [{name: c, image: x}]
""", "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"),
    "host-path-without-path.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: data, hostPath: {}}]
  containers: [{name: c, image: x}]
""", "spec.volumes[0].hostPath.path: Required value"),
    "active-deadline-zero.yaml": (HEAD + """\
metadata: {name: web}
spec: {activeDeadlineSeconds: 0, containers: [{name: c, image: x}]}
""", "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"),
    "app-container-restart-policy-lowercase.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, restartPolicy: always}]}
""", 'spec.containers[0].restartPolicy: Unsupported value: "always": supported values: "Always", "Never", "OnFailure"'),
    "init-container-probe.yaml": (HEAD + """\
metadata: {name: web}
spec:
  initContainers: [{name: i, image: x, livenessProbe: {exec: {command: ["true"]}}}]
  containers: [{name: c, image: x}]
""", "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always"),
    "probe-without-handler.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, livenessProbe: {periodSeconds: 5}}]}
""", "spec.containers[0].livenessProbe: Required value: must specify a handler type"),
    "probe-two-handlers.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, readinessProbe: {exec: {command: ["true"]}, tcpSocket: {port: 80}}}]}
""", "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"),
    "hostname-underscore.yaml": (HEAD + """\
metadata: {name: web}
spec: {hostname: My_Host, containers: [{name: c, image: x}]}
""", 'spec.hostname: Invalid value: "My_Host": a lowercase RFC 1123 label'),
    "priority-class-underscore.yaml": (HEAD + """\
metadata: {name: web}
spec: {priorityClassName: High_Prio, containers: [{name: c, image: x}]}
""", 'spec.priorityClassName: Invalid value: "High_Prio": a lowercase RFC 1123 subdomain'),
    "node-selector-key-space.yaml": (HEAD + """\
metadata: {name: web}
spec: {nodeSelector: {"a b": c}, containers: [{name: c, image: x}]}
""", 'spec.nodeSelector: Invalid value: "a b": name part must consist'),
    "node-selector-value-space.yaml": (HEAD + """\
metadata: {name: web}
spec: {nodeSelector: {disk: "fast ssd"}, containers: [{name: c, image: x}]}
""", 'spec.nodeSelector: Invalid value: "fast ssd": a valid label must be an empty string'),
    "ephemeral-containers.yaml": (HEAD + """\
metadata: {name: web}
spec:
  containers: [{name: c, image: x}]
  ephemeralContainers: [{name: e, image: x}]
""", "spec.ephemeralContainers: Forbidden: cannot be set on create"),
    "scheduling-gates.yaml": (HEAD + """\
metadata: {name: web}
spec: {schedulingGates: [{name: g}], containers: [{name: c, image: x}]}
""", "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"),
    "two-problems.yaml": (HEAD + """\
metadata: {name: web}
spec: {restartPolicy: Sometimes, containers: [{name: C, image: x, imagePullPolicy: Sometimes}]}
""", 'a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end '
     "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?') "
     'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", '
     '"IfNotPresent", "Never" spec.restartPolicy: Unsupported value: "Sometimes"'),
    "many-problems.yaml": (HEAD + """\
metadata: {name: Web, labels: {"a b": "c d"}}
spec:
  dnsPolicy: Foo
  volumes: [{name: v, emptyDir: {}}, {name: v, emptyDir: {}}]
  containers:
  - {name: c, image: x, imagePullPolicy: Sometimes, ports: [{containerPort: 0, protocol: tcp}], env: [{name: ""}]}
""", 'spec.volumes[1].name: Duplicate value: "v" spec.containers[0].ports[0].containerPort: Required value '
     'spec.containers[0].ports[0].protocol: Unsupported value: "tcp"'),
    # look-alikes the kubelet accepts
    "name-trailing-dash.yaml": (HEAD + """\
metadata: {name: web-}
spec: {containers: [{name: c, image: x}]}
""", None),
    "name-dotted.yaml": (HEAD + """\
metadata: {name: web.v1.example}
spec: {containers: [{name: c, image: x}]}
""", None),
    "name-246.yaml": (HEAD + "metadata: {name: " + "a" * 246 + """}
spec: {containers: [{name: c, image: x}]}
""", None),
    "container-name-63.yaml": (HEAD + "metadata: {name: web}\nspec: {containers: [{name: " + "a" * 63 + """, image: x}]}
""", None),
    "labels-and-annotations-valid.yaml": (HEAD + """\
metadata:
  name: web
  labels: {app.kubernetes.io/name: my-app.v1_2, empty: "", tier: Back-End.1}
  annotations: {"Example.COM/Key_1": "anything at all", note: "multi\\nline"}
spec: {containers: [{name: c, image: x}]}
""", None),
    "ports-valid.yaml": (HEAD + """\
metadata: {name: web}
spec:
  hostNetwork: true
  containers:
  - name: c
    image: x
    ports: [{name: http-metrics-x, containerPort: 80}, {containerPort: 80, protocol: UDP},
            {containerPort: 443, hostPort: 443, protocol: SCTP}]
""", None),
    "init-and-app-same-host-port.yaml": (HEAD + """\
metadata: {name: web}
spec:
  initContainers: [{name: i, image: x, ports: [{containerPort: 80, hostPort: 8080}]}]
  containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 8080}]}]
""", None),
    "env-names-relaxed.yaml": (HEAD + """\
metadata: {name: web}
spec: {containers: [{name: c, image: x, env: [{name: "my.var-1", value: v}, {name: "1 odd name!"}]}]}
""", None),
    "restart-policies-valid.yaml": (HEAD + """\
metadata: {name: web}
spec:
  restartPolicy: OnFailure
  dnsPolicy: ClusterFirstWithHostNet
  activeDeadlineSeconds: 2147483647
  initContainers:
  - {name: i, image: x, restartPolicy: Never}
  - {name: s, image: x, restartPolicy: Always, livenessProbe: {tcpSocket: {port: 80}}}
  containers: [{name: c, image: x, restartPolicy: Never, imagePullPolicy: Never,
                terminationMessagePolicy: FallbackToLogsOnError}]
""", None),
    "volumes-valid.yaml": (HEAD + """\
metadata: {name: web}
spec:
  volumes: [{name: data}, {name: host, hostPath: {path: /var/log, type: Directory}}]
  containers: [{name: c, image: x, volumeMounts: [{name: data, mountPath: /d}, {name: host, mountPath: /h}]}]
  nodeSelector: {kubernetes.io/os: linux, disk: ""}
""", None),
}


def _ctr(extra: str) -> str:
    """The pod with one container ``{name: c, image: nginx}`` and ``extra``."""
    return HEAD + "metadata: {name: web}\nspec:\n  containers:\n  - name: c\n    image: nginx\n" + "".join(
        f"    {line}\n" for line in extra.splitlines())


def _spec(extra: str) -> str:
    """The pod with ``extra`` in its spec and one container."""
    return HEAD + "metadata: {name: web}\nspec:\n" + "".join(
        f"  {line}\n" for line in extra.splitlines()) + "  containers: [{name: c, image: nginx}]\n"


_UNMARSHAL = "couldn't parse as pod(json: cannot unmarshal "
# Go's JSON decoder: a value of the wrong type is refused (its first error,
# in its order: a YAML file's keys sorted, a JSON file's as written); a null
# is the zero value, a null element of a list of structs a zero struct
CASES.update({
    "type-ports-string.yaml": (_ctr("ports: x"), _UNMARSHAL + "string into Go struct field "
                               "Container.spec.containers.ports of type []v1.ContainerPort)"),
    "type-ports-of-strings.yaml": (_ctr('ports: ["80"]'), _UNMARSHAL + "string into Go struct field "
                                   "Container.spec.containers.ports of type v1.ContainerPort)"),
    "type-ports-object.yaml": (_ctr("ports: {containerPort: 80}"), _UNMARSHAL + "object into Go struct field "
                               "Container.spec.containers.ports of type []v1.ContainerPort)"),
    "type-container-port-float.yaml": (_ctr("ports: [{containerPort: 80.5}]"), _UNMARSHAL + "number 80.5 into "
                                       "Go struct field ContainerPort.spec.containers.ports.containerPort of type int32)"),
    "type-container-port-int32-overflow.yaml": (_ctr("ports: [{containerPort: 70000000000}]"), _UNMARSHAL
                                                + "number 70000000000 into Go struct field "
                                                "ContainerPort.spec.containers.ports.containerPort of type int32)"),
    "type-protocol-number.yaml": (_ctr("ports: [{containerPort: 80, protocol: 6}]"), _UNMARSHAL + "number into "
                                  "Go struct field ContainerPort.spec.containers.ports.protocol of type v1.Protocol)"),
    "type-volumes-string.yaml": (_spec("volumes: x"), _UNMARSHAL + "string into Go struct field "
                                 "PodSpec.spec.volumes of type []v1.Volume)"),
    "type-volume-mounts-string.yaml": (_ctr("volumeMounts: x"), _UNMARSHAL + "string into Go struct field "
                                       "Container.spec.containers.volumeMounts of type []v1.VolumeMount)"),
    "type-volume-mounts-of-numbers.yaml": (_ctr("volumeMounts: [1]"), _UNMARSHAL + "number into Go struct field "
                                           "Container.spec.containers.volumeMounts of type v1.VolumeMount)"),
    "type-env-object.yaml": (_ctr("env: {A: b}"), _UNMARSHAL + "object into Go struct field "
                             "Container.spec.containers.env of type []v1.EnvVar)"),
    "type-env-of-strings.yaml": (_ctr("env: [A]"), _UNMARSHAL + "string into Go struct field "
                                 "Container.spec.containers.env of type v1.EnvVar)"),
    "type-env-value-number.yaml": (_ctr("env: [{name: A, value: 1}]"), _UNMARSHAL + "number into Go struct field "
                                   "EnvVar.spec.containers.env.value of type string)"),
    "type-node-selector-list.yaml": (_spec("nodeSelector: [a]"), _UNMARSHAL + "array into Go struct field "
                                     "PodSpec.spec.nodeSelector of type map[string]string)"),
    "type-scheduling-gates-string.yaml": (_spec("schedulingGates: x"), _UNMARSHAL + "string into Go struct field "
                                          "PodSpec.spec.schedulingGates of type []v1.PodSchedulingGate)"),
    "type-host-path-string.yaml": (_spec("volumes: [{name: v, hostPath: x}]"), _UNMARSHAL + "string into Go "
                                   "struct field Volume.spec.volumes.VolumeSource.hostPath of type "
                                   "v1.HostPathVolumeSource)"),
    "type-empty-dir-string.yaml": (_spec("volumes: [{name: v, emptyDir: x}]"), _UNMARSHAL + "string into Go "
                                   "struct field Volume.spec.volumes.VolumeSource.emptyDir of type "
                                   "v1.EmptyDirVolumeSource)"),
    "type-host-path-path-number.yaml": (_spec("volumes: [{name: v, hostPath: {path: 1}}]"), _UNMARSHAL
                                        + "number into Go struct field HostPathVolumeSource.spec.volumes."
                                        "VolumeSource.hostPath.path of type string)"),
    "type-liveness-probe-string.yaml": (_ctr("livenessProbe: x"), _UNMARSHAL + "string into Go struct field "
                                        "Container.spec.containers.livenessProbe of type v1.Probe)"),
    "type-probe-http-get-string.yaml": (_ctr("readinessProbe: {httpGet: x}"), _UNMARSHAL + "string into Go "
                                        "struct field Probe.spec.containers.readinessProbe.ProbeHandler.httpGet "
                                        "of type v1.HTTPGetAction)"),
    "type-probe-command-of-numbers.yaml": (_ctr("livenessProbe: {exec: {command: [1]}}"), _UNMARSHAL
                                           + "number into Go struct field ExecAction.spec.containers."
                                           "livenessProbe.ProbeHandler.exec.command of type string)"),
    "type-lifecycle-string.yaml": (_ctr("lifecycle: x"), _UNMARSHAL + "string into Go struct field "
                                   "Container.spec.containers.lifecycle of type v1.Lifecycle)"),
    "type-env-from-string.yaml": (_ctr("envFrom: x"), _UNMARSHAL + "string into Go struct field "
                                  "Container.spec.containers.envFrom of type []v1.EnvFromSource)"),
    "type-image-pull-secrets-string.yaml": (_spec("imagePullSecrets: x"), _UNMARSHAL + "string into Go struct "
                                            "field PodSpec.spec.imagePullSecrets of type []v1.LocalObjectReference)"),
    "type-node-name-number.yaml": (_spec("nodeName: 1"), _UNMARSHAL + "number into Go struct field "
                                   "PodSpec.spec.nodeName of type string)"),
    "type-host-network-string.yaml": (_spec('hostNetwork: "true"'), _UNMARSHAL + "string into Go struct field "
                                      "PodSpec.spec.hostNetwork of type bool)"),
    "type-metadata-string.yaml": (HEAD + "metadata: x\nspec: {containers: [{name: c, image: nginx}]}\n",
                                  _UNMARSHAL + "string into Go struct field Pod.metadata of type v1.ObjectMeta)"),
    "type-first-in-sorted-order.yaml": (_ctr("ports: x\nenv: {A: b}"), _UNMARSHAL + "object into Go struct "
                                        "field Container.spec.containers.env of type []v1.EnvVar)"),
    "type-first-in-json-order.json": (json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": "x", "env": {"A": "b"}}]}}),
        _UNMARSHAL + "string into Go struct field Container.spec.containers.ports of type []v1.ContainerPort)"),
    "type-json-port-with-fraction.json": (json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80.0}]}]}}),
        _UNMARSHAL + "number 80.0 into Go struct field ContainerPort.spec.containers.ports.containerPort"),
    "null-port.yaml": (_ctr("ports: [null]"), "spec.containers[0].ports[0].containerPort: Required value"),
    "null-volume.yaml": (_spec("volumes: [null]"), "spec.volumes[0].name: Required value"),
    "null-volume-mount.yaml": (_ctr("volumeMounts: [null]"), "spec.containers[0].volumeMounts[0].name: Required "
                               'value spec.containers[0].volumeMounts[0].name: Not found: "" '
                               "spec.containers[0].volumeMounts[0].mountPath: Required value"),
    "null-container.yaml": (HEAD + "metadata: {name: web}\nspec: {containers: [null]}\n",
                            "spec.containers[0].name: Required value spec.containers[0].image: Required value"),
    "null-scheduling-gate.yaml": (_spec("schedulingGates: [null]"),
                                  'spec.schedulingGates[0]: Invalid value: "": name part must be non-empty'),
    "scheduling-gate-repeated.yaml": (_spec("schedulingGates: [{name: a}, {name: a}]"),
                                      'spec.schedulingGates[1]: Duplicate value: "a" spec.nodeName: Forbidden'),
    # Go's %q: DEL, C1 controls, format characters escaped
    "name-control-characters.json": ('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": '
                                     '"w\\u007fb\\u009b\\u0085\\u00a0\\u00ad\\u2028\\u0001\\u0007\\t\\"\\\\'
                                     '\\ufeff\\ud83d\\ude00\\udb40\\udc01\\u0378"}, '
                                     '"spec": {"containers": [{"name": "c", "image": "nginx"}]}}',
                                     'metadata.name: Invalid value: "w\\x7fb\\u009b\\u0085\\u00a0\\u00ad\\u2028'
                                     '\\x01\\a\\t\\"\\\\\\ufeff\U0001f600\\U000e0001\\u0378-node-a"'),
    # look-alikes the kubelet accepts
    "null-ports.yaml": (_ctr("ports: null"), None),
    "null-env.yaml": (_ctr("env: null"), None),
    "null-probe.yaml": (_ctr("livenessProbe: null"), None),
    "null-host-path.yaml": (_spec("volumes: [{name: v, hostPath: null}]"), None),
    "empty-volumes.yaml": (_spec("volumes: []"), None),
    "empty-scheduling-gates.yaml": (_spec("schedulingGates: []"), None),
    "null-label-value.yaml": (HEAD + "metadata: {name: web, labels: {a: null}}\n"
                              "spec: {containers: [{name: c, image: nginx}]}\n", None),
    "null-node-selector-value.yaml": (_spec("nodeSelector: {a: null}"), None),
    "null-command-element.yaml": (_ctr("livenessProbe: {exec: {command: [null]}}"), None),
    "null-image-pull-secret.yaml": (_spec("imagePullSecrets: [null]"), None),
    "container-port-integral-float.yaml": (_ctr("ports: [{containerPort: 80.0}]"), None),
})

def _big_annotation(size: int, meta: str = "") -> str:
    """A pod with one annotation ``k`` of ``size`` bytes (``meta``: more
    metadata fields, each followed by ", ")."""
    return (HEAD + "metadata: {name: web, " + meta + "annotations: {k: " + "v" * size + "}}\n"
            "spec: {containers: [{name: c, image: nginx}]}\n")


_TOO_LONG = "invalid pod: [metadata.annotations: Too long: may not be more than 262144 bytes]"
# the whole message given: each of these is refused with exactly it
CASES.update({
    # a value of a named Go type (core.RestartPolicy, core.Protocol...) is
    # shown by json.Marshal ("\u003c" for "<", U+00AD as it is)
    "named-types-json-quoted.yaml": (_ctr(
        "imagePullPolicy: \"a\\u00adb<\"\nterminationMessagePolicy: 'x&'\n"
        "ports: [{containerPort: 80, protocol: 'T>'}]").replace("spec:\n", "spec:\n  restartPolicy: 'O<'\n"
                                                              "  dnsPolicy: 'D&'\n"),
        'invalid pod: [spec.containers[0].terminationMessagePolicy: Unsupported value: "x\\u0026": supported '
        'values: "File", "FallbackToLogsOnError" spec.containers[0].ports[0].protocol: Unsupported value: '
        '"T\\u003e": supported values: "SCTP", "TCP", "UDP" spec.containers[0].imagePullPolicy: Unsupported '
        'value: "a\u00adb\\u003c": supported values: "Always", "IfNotPresent", "Never" spec.restartPolicy: '
        'Unsupported value: "O\\u003c": supported values: "Always", "OnFailure", "Never" spec.dnsPolicy: '
        'Unsupported value: "D\\u0026": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", '
        '"None"]'),
    "container-restart-policy-json-quoted.yaml": (_ctr("restartPolicy: 'A<'"),
        'invalid pod: [spec.containers[0].restartPolicy: Unsupported value: "A\\u003c": supported values: '
        '"Always", "Never", "OnFailure"]'),
    # annotation keys lowered as strings.ToLower does (U+0130 to "i": valid)
    "annotation-key-dotted-capital-i.yaml": (HEAD + 'metadata: {name: web, annotations: {"\\u0130x": v}}\n'
                                             "spec: {containers: [{name: c, image: nginx}]}\n", None),
    # the size limit counts kubernetes.io/config.hash: UID (32 hex digits
    # or metadata.uid; it replaces an annotation of that name)
    "annotations-size-with-config-hash-fits.yaml": (_big_annotation(262144 - 1 - 25 - 32), None),
    "annotations-size-with-config-hash-too-long.yaml": (_big_annotation(262144 - 1 - 25 - 32 + 1), _TOO_LONG),
    "annotations-size-brief-example.yaml": (_big_annotation(262123), _TOO_LONG),
    "annotations-size-with-given-uid-fits.yaml": (_big_annotation(262144 - 1 - 25 - 3, "uid: abc, "), None),
    "annotations-size-with-given-uid-too-long.yaml": (_big_annotation(262144 - 1 - 25 - 3 + 1, "uid: abc, "),
                                                      _TOO_LONG),
    "annotations-size-config-hash-replaced.yaml": (_big_annotation(
        262144 - 1 - 25 - 32, "uid: '', annotations: {kubernetes.io/config.hash: " + "h" * 1000 + "}, ").replace(
        "}, annotations: {k:", ", k:"), None),
    # with hostNetwork a host port must equal the container port (0 when absent)
    "host-network-host-port-without-container-port.yaml": (_ctr("ports: [{hostPort: 5}]").replace(
        "spec:\n", "spec:\n  hostNetwork: true\n"),
        "invalid pod: [spec.containers[0].ports[0].containerPort: Required value spec.containers[0].ports[0]."
        "hostPort: Invalid value: 5: must match `containerPort` when `hostNetwork` is true]"),
    "host-network-both-ports-zero.yaml": (_ctr("ports: [{containerPort: 0, hostPort: 0}]").replace(
        "spec:\n", "spec:\n  hostNetwork: true\n"),
        "invalid pod: [spec.containers[0].ports[0].containerPort: Required value]"),
    # no containers, however spelt
    "spec-without-containers.yaml": (HEAD + "metadata: {name: web}\nspec: {restartPolicy: Always}\n",
                                     "invalid pod: [spec.containers: Required value]"),
    "pod-without-spec.yaml": (HEAD + "metadata: {name: web}\n", "invalid pod: [spec.containers: Required value]"),
    "containers-null.yaml": (HEAD + "metadata: {name: web}\nspec: {containers: null}\n",
                             "invalid pod: [spec.containers: Required value]"),
})
_QUANTITY = ("couldn't parse as pod(quantities must match the regular expression "
             "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'), please check config file")
_CLAIMS = "must be one of the names in pod.spec.resourceClaims"
CASES.update({
    # a quantity decodes itself: what does not parse ends the decoding at
    # once, wherever it is, and wins over a type error met before it
    "quantity-bool.yaml": (_ctr("resources: {limits: {cpu: true}}"), _QUANTITY),
    "quantity-mapping.yaml": (_ctr("resources: {requests: {cpu: {a: 1}}}"), _QUANTITY),
    "quantity-two-dots.yaml": (_ctr("resources: {requests: {cpu: '1.5.5'}}"), _QUANTITY),
    "quantity-after-type-error.yaml": (_ctr("resources: {requests: {cpu: zz}}").replace("image: nginx", "image: 1"),
                                       _QUANTITY),
    "quantity-in-overhead.yaml": (_spec("overhead: {cpu: zz}"), _QUANTITY),
    "quantity-in-pod-resources.yaml": (_spec("resources: {limits: {cpu: zz}}"), _QUANTITY),
    "quantity-in-init-container.yaml": (_spec("initContainers: [{name: i, image: x, resources: {requests: "
                                              "{cpu: [1]}}}]"), _QUANTITY),
    "quantity-in-ephemeral-container.yaml": (_spec("ephemeralContainers: [{name: e, image: x, resources: "
                                                   "{limits: {cpu: zz}}}]"), _QUANTITY),
    "quantity-divisor-after-type-error.yaml": (_ctr("image: 1\nenv: [{name: A, valueFrom: {resourceFieldRef: "
                                               "{resource: limits.cpu, divisor: zz}}}]").replace(
        "    image: nginx\n", ""), _QUANTITY),
    "quantity-size-limit-after-type-error.yaml": (_spec("volumes: [{name: v, emptyDir: {sizeLimit: [1]}}]").replace(
        "image: nginx", "image: 1"), _QUANTITY),
    "int-or-string-after-type-error.yaml": (_ctr("image: 1\nlivenessProbe: {tcpSocket: {port: true}}").replace(
        "    image: nginx\n", ""), _UNMARSHAL + "bool into Go struct field TCPSocketAction.spec.containers.livenessProbe."
        "ProbeHandler.tcpSocket.port of type int32)"),
    "type-ephemeral-container-limits.yaml": (_spec("ephemeralContainers: [{name: e, image: x, resources: "
                                                   "{limits: 5}}]"),
                                             _UNMARSHAL + "number into Go struct field ResourceRequirements.spec."
                                             "ephemeralContainers.EphemeralContainerCommon.resources.limits of type "
                                             "v1.ResourceList)"),
    # ValidateContainerResourceRequirements: every error of each name (a
    # limit's name again as the request it defaults), one name a case (Go
    # walks the lists in no fixed order)
    "resource-name-not-qualified.yaml": (_ctr("resources: {limits: {'a b': 1}}"),
                                         'spec.containers[0].resources.limits[a b]: Invalid value: "a b": must be a '
                                         "standard resource for containers"),
    "resource-quota-name.yaml": (_ctr("resources: {requests: {pods: '-1'}}"),
                                 'invalid pod: [spec.containers[0].resources.requests[pods]: Invalid value: "pods": '
                                 "must be a standard resource for containers spec.containers[0].resources.requests"
                                 '[pods]: Invalid value: "-1": must be greater than or equal to 0]'),
    "resource-extended-fraction.yaml": (_ctr("resources: {limits: {example.com/foo: 1500m}, requests: "
                                             "{example.com/foo: 1}}"),
                                        'invalid pod: [spec.containers[0].resources.limits[example.com/foo]: Invalid '
                                        'value: "1500m": must be an integer spec.containers[0].resources.requests: '
                                        'Invalid value: "1": must be equal to example.com/foo limit of 1500m]'),
    "resource-extended-bad-name.yaml": (_ctr("resources: {limits: {example.com/a_b_: 1}}"),
                                        "Invalid value: \"example.com/a_b_\""),
    "resource-hugepages-without-limit.yaml": (_ctr("resources: {requests: {hugepages-2Mi: 2Mi}}"),
                                              "invalid pod: [spec.containers[0].resources.limits: Required value: "
                                              "Limit must be set for non overcommitable resources "
                                              "spec.containers[0].resources: Forbidden: HugePages require cpu or "
                                              "memory]"),
    "resource-hugepages-indivisible.yaml": (_ctr("resources: {limits: {hugepages-2Mi: 3Mi, memory: 1Gi}}"),
                                            '3Mi is not positive integer multiple of hugepages-2Mi'),
    "resource-hugepages-odd-page.yaml": (_ctr("resources: {limits: {hugepages-1500m: 3, memory: 1Gi}}"),
                                         "is not positive integer multiple of hugepages-1500m"),
    "resource-hugepages-accepted.yaml": (_ctr("resources: {limits: {hugepages-2Mi: 4Mi, memory: 1Gi}}"), None),
    "resource-requests-prefixed-name.yaml": (_ctr("resources: {requests: {requests.cpu: 1}}"),
                                             'Invalid value: "requests.cpu": must be a standard resource for '
                                             "containers"),
    "resource-native-domain-accepted.yaml": (_ctr("resources: {requests: {kubernetes.io/x: 1}}"), None),
    "resource-claims-not-in-pod.yaml": (_ctr("resources: {claims: [{name: a}, {name: a, request: r}, "
                                             "{name: b, request: R_}, {}]}"),
                                        f'spec.containers[0].resources.claims[0]: Not found: "a": {_CLAIMS} which is '
                                        "empty"),
    "type-resource-claim-name-bool.yaml": (_spec("resourceClaims: [{name: a, resourceClaimName: y}]"),
                                           _UNMARSHAL + "bool into Go struct field PodResourceClaim.spec."
                                           "resourceClaims.resourceClaimName of type string)"),
    "resource-claims-other-name.yaml": (_ctr("resources: {claims: [{name: z}]}").replace(
        "spec:\n", "spec:\n  resourceClaims: [{name: a, resourceClaimName: x}, {name: b, resourceClaimName: z}]\n"),
        f'spec.containers[0].resources.claims[0]: Not found: "z": {_CLAIMS}: a, b'),
    "resource-claims-request-after-whole.yaml": (_ctr("resources: {claims: [{name: a, request: r}, {name: a}]}").replace(
        "spec:\n", "spec:\n  resourceClaims: [{name: a, resourceClaimName: x}]\n"),
        'spec.containers[0].resources.claims[1]: Duplicate value: "a"'),
})
for _example in sorted((ROOT / "examples" / "agent" / "pods").glob("*.yaml")):
    CASES["example-" + _example.name] = (_example.read_text(), "")  # "": whatever the kubelet says

#: edit pairs: (first, second) written in turn to the same path
_BASE = HEAD + """\
metadata: {name: web}
spec:
  containers:
  - name: c
    image: nginx
    resources: {limits: {cpu: "1", memory: 1Gi}}
"""
PAIRS: dict[str, tuple[str, str]] = {
    "pull-policy-default-written": (_BASE, _BASE + "    imagePullPolicy: Always\n"),
    "pull-policy-other": (_BASE, _BASE + "    imagePullPolicy: Never\n"),
    "requests-equal-limits-written": (_BASE, _BASE.replace(
        "{limits: {cpu: \"1\", memory: 1Gi}}",
        "{limits: {cpu: \"1\", memory: 1Gi}, requests: {cpu: \"1\", memory: 1Gi}}")),
    "requests-lower": (_BASE, _BASE.replace(
        "{limits: {cpu: \"1\", memory: 1Gi}}",
        "{limits: {cpu: \"1\", memory: 1Gi}, requests: {cpu: 500m}}")),
    "termination-defaults-written": (_BASE, _BASE
        + "    terminationMessagePath: /dev/termination-log\n    terminationMessagePolicy: File\n"),
    "spec-defaults-written": (_BASE, _BASE.replace("spec:\n", "spec:\n  restartPolicy: Always\n"
        "  dnsPolicy: ClusterFirst\n  terminationGracePeriodSeconds: 30\n"
        "  schedulerName: default-scheduler\n  enableServiceLinks: true\n  securityContext: {}\n")),
    "restart-policy-changed": (_BASE, _BASE.replace("spec:\n", "spec:\n  restartPolicy: Never\n")),
    "keys-reordered-and-json": (_BASE, json.dumps({"spec": {"containers": [{"resources": {
        "limits": {"memory": "1Gi", "cpu": "1"}}, "image": "nginx", "name": "c"}]},
        "metadata": {"name": "web"}, "kind": "Pod", "apiVersion": "v1"})),
    "unknown-field-added": (_BASE, _BASE + "    colour: blue\n"),
    "spec-field-not-in-v1-added": (_BASE, _BASE.replace("spec:\n", "spec:\n  workloadRef: {name: w}\n")),
    "duplicate-key-same-value": (_BASE, _BASE + "    image: nginx\n"),
    "command-added": (_BASE, _BASE + "    command: [sleep, infinity]\n"),
    "label-added": (_BASE, _BASE.replace("{name: web}", "{name: web, labels: {a: b}}")),
    "null-written": (_BASE, _BASE + "    command: null\n"),
    "cpu-respelled": (_BASE, _BASE.replace('cpu: "1"', "cpu: 1000m")),
    "cpu-as-number": (_BASE, _BASE.replace('cpu: "1"', "cpu: 1")),
}


#: refused cases compared by their phrase only, not the kubelet's whole
#: message: the kubelet prints a decoded object that is no pod with Go's
#: ``%#v`` (every field of the internal type, and a heap address, which
#: differs from run to run, for each item of a List); podnuma names the type
PHRASE_ONLY = frozenset({"list.yaml"})

#: where the kubelet's message of a decoding error starts (podnuma names the
#: field and its line before it)
DECODER = "couldn't parse as pod("


def kubelet_words(message: str) -> str:
    """What of the kubelet's error podnuma's must hold whole: all of it,
    but for a decoding error only from ``couldn't parse as pod(`` on (the
    kubelet starts it with the file's path, podnuma with the file's path,
    the field and its line)."""
    return message[message.find(DECODER):] if DECODER in message else message


def _oracle(binary: str, files: list[Path]) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [binary, "staticpod", "--node-name", NODE, *map(str, files)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _podnuma(path: Path) -> dict[str, Any]:
    try:
        m = parse_manifest(path.read_bytes(), path, node_name=NODE, gates=GATES)
    except InputError as e:
        return {"error": str(e)}
    pod = m.pod
    qos = compute_pod_qos(pod, pod_level_resources=GATES.enabled("PodLevelResources"))
    return {
        "name": pod.name, "namespace": pod.namespace, "uid": pod.uid, "qosClass": qos,
        "resources": {
            "pod": None if pod.resources is None else {
                "requests": _values(pod.resources.requests), "limits": _values(pod.resources.limits)},
            "containers": [
                {"name": c.name, "kind": c.kind, "requests": _values(c.requests), "limits": _values(c.limits)}
                for c in (*pod.init_containers, *pod.containers)
            ],
        },
    }


def _values(lst: Any) -> dict[str, Any]:
    return {k: parse_quantity(str(v)) for k, v in lst.items()}


def _as_values(res: dict[str, Any]) -> dict[str, Any]:
    def conv(x: dict[str, str]) -> dict[str, Any]:
        return {k: parse_quantity(v) for k, v in x.items()}
    pod = res["pod"]
    return {
        "pod": None if pod is None else {"requests": conv(pod["requests"]), "limits": conv(pod["limits"])},
        "containers": [{**c, "requests": conv(c["requests"]), "limits": conv(c["limits"])}
                       for c in res["containers"]],
    }


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("manifests")
    files = []
    for name, (text, _) in CASES.items():
        (d / name).write_text(text)
        files.append(d / name)
    return {f.name: (r, _podnuma(f)) for f, r in zip(files, _oracle(oracle_binary, files), strict=True)}


def test_enough_cases() -> None:
    assert len(CASES) >= 20 and len(PAIRS) >= 10


@pytest.mark.parametrize("name", sorted(CASES))
def test_decoded_as_the_kubelet_decodes(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    phrase = CASES[name][1]
    if "error" in kubelet:
        assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
        if phrase:
            assert phrase in kubelet["error"], kubelet["error"]
            assert phrase in ours["error"], ours["error"]
        if name not in PHRASE_ONLY:
            message = kubelet_words(kubelet["error"])
            assert message in ours["error"], (kubelet["error"], ours["error"])
        return
    assert phrase is None or phrase == "", f"the kubelet accepts it; expected {phrase!r}"
    assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
    assert (ours["name"], ours["namespace"], ours["qosClass"]) == (
        kubelet["name"], kubelet["namespace"], kubelet["qosClass"])
    assert ours["resources"] == _as_values(kubelet["resources"])
    if name == "uid-given.yaml":
        assert ours["uid"] == kubelet["uid"]


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_uid_changes_when_the_kubelets_does(
    oracle_binary: str, tmp_path: Path, name: str
) -> None:
    path = tmp_path / "web.yaml"
    kubelet, ours = [], []
    for text in PAIRS[name]:
        path.write_text(text)
        (k,) = _oracle(oracle_binary, [path])
        p = _podnuma(path)
        assert "error" not in k and "error" not in p, (k, p)
        kubelet.append(k["uid"])
        ours.append(p["uid"])
    same = kubelet[0] == kubelet[1]
    assert (ours[0] == ours[1]) == same, (
        f"the kubelet's UID {'stays' if same else 'changes'}; podnuma's "
        f"{'changes' if same else 'stays'}")


def test_a_node_name_with_capitals_refuses_every_static_pod(oracle_binary: str, tmp_path: Path) -> None:
    """The kubelet sets a static pod's spec.nodeName to its node's name and
    validates it: a name with capitals is no DNS subdomain, so every static
    pod is refused, in the kubelet's words."""
    path = tmp_path / "web.yaml"
    path.write_text(_BASE)
    proc = subprocess.run([oracle_binary, "staticpod", "--node-name", "Node-A", str(path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    (kubelet,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert 'spec.nodeName: Invalid value: "Node-A": a lowercase RFC 1123 subdomain' in kubelet["error"]
    with pytest.raises(InputError) as e:
        parse_manifest(path.read_bytes(), path, node_name="Node-A", gates=GATES)
    assert 'spec.nodeName: Invalid value: "Node-A": a lowercase RFC 1123 subdomain' in str(e.value)
    assert parse_manifest(path.read_bytes(), path, node_name="node-a", gates=GATES).pod.name == "web-node-a"
