"""Pod-level resources, overhead and resource claims of a static pod
against the kubelet's file source (``kubelet-oracle staticpod``:
k8s.io/kubernetes v1.37.2 pkg/kubelet/config/common.go, ``ValidatePodCreate``
after the v1 defaults): ``validatePodResources`` (names cpu, memory and
``hugepages-`` only; quantities; requests within limits; hugepages rules;
pod-level requests against the containers' aggregate, sidecars counted,
the init containers' peak; hugepages limits against the aggregate; each
app container's limit within the pod's), ``validateOverhead`` and
``validatePodResourceClaims`` (``podnuma.agent.validation_resources``), in
``ValidatePodSpec``'s order among the other checks.

Every manifest goes through the oracle and through podnuma: both accept it
(the same QoS class and resources, pod-level and per container), or both
refuse it with the phrase given and the kubelet's whole message, every
error in its order, inside podnuma's. Go walks a resource list (a map) in
no fixed order: each case has at most one name with errors in each list
(and in the containers' aggregate), so the kubelet's order is fixed.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from podnuma.agent.manifests import parse_manifest
from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.errors import InputError
from tests.oracle.staticpod_cases import assert_as_the_kubelet, decoded_cases
from tests.oracle.test_staticpod_differential import HEAD, NODE, _as_values, kubelet_words

_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
          "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
          "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
              "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
              "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
              "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
              "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_SUPPORTED = 'supported values: "cpu", "hugepages-", "memory"'
_NO_CLAIMS = "claims may not be set for Resources at pod-level"
_LIMIT_NEEDED = "Limit must be set for non overcommitable resources"

C1 = "containers: [{name: c, image: x}]"


def _pod(spec: str, meta: str = "{name: web}") -> str:
    """A pod named ``web`` with the spec fields ``spec`` (one a line)."""
    body = "".join(f"  {line}\n" for line in spec.splitlines())
    return HEAD + f"metadata: {meta}\nspec:\n" + body


def _c(res: str, name: str = "c", extra: str = "") -> str:
    """A container (flow style) with the resources ``res``."""
    return f"{{name: {name}, image: x, resources: {res}{extra}}}"


#: name -> (manifest text, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    # ---- accepted (the kubelet never defaults pod-level requests nor limits)
    "ok-requests-only.yaml": (_pod("resources: {requests: {cpu: '1', memory: 1Gi}}\n" + C1),
        None),
    "ok-limits-only.yaml": (_pod("resources: {limits: {cpu: '2', memory: 2Gi}}\n" + C1),
        None),
    "ok-both-with-containers.yaml": (_pod("resources: {requests: {cpu: '1', memory: 1Gi}, limits: {cpu: '2', memory: 2Gi}}\n"
        f"containers: [{_c('{requests: {cpu: 500m}, limits: {cpu: 1, memory: 1Gi}}')}, "
        f"{_c('{requests: {cpu: 500m, memory: 0}}', 'd')}]"),
        None),
    "ok-requests-equal-sum.yaml": (_pod("resources: {requests: {cpu: '1'}}\n"
        f"containers: [{_c('{requests: {cpu: 500m}}')}, {_c('{requests: {cpu: 0.5}}', 'd')}]"),
        None),
    "ok-overcommit-cpu.yaml": (_pod("resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: '4', memory: 1Gi}}\n" + C1),
        None),
    "ok-hugepages.yaml": (_pod("resources: {limits: {hugepages-2Mi: 4Mi, memory: 1Gi}, requests: {hugepages-2Mi: 4Mi}}\n"
        f"containers: [{_c('{limits: {hugepages-2Mi: 2Mi, memory: 512Mi}}')}]"),
        None),
    "ok-init-peak-below-sum.yaml": (_pod("resources: {requests: {cpu: '2'}}\n"
        f"initContainers: [{_c('{requests: {cpu: 2}}', 'i')}]\n"
        f"containers: [{_c('{requests: {cpu: 1500m}}')}]"),
        None),
    "ok-sidecar-counted-within.yaml": (_pod("resources: {requests: {cpu: '2'}}\n"
        f"initContainers: [{_c('{requests: {cpu: 1}}', 's', ', restartPolicy: Always')}]\n"
        f"containers: [{_c('{requests: {cpu: 1}}')}]"),
        None),
    "ok-limit-below-container-request.yaml": (_pod("resources: {limits: {cpu: 500m}}\n"
        f"containers: [{_c('{requests: {cpu: 2}}')}]"),
        None),
    "ok-empty-resources.yaml": (_pod("resources: {}\noverhead: {}\n" + C1),
        None),
    "ok-null-resources.yaml": (_pod("resources: null\noverhead: null\n" + C1),
        None),
    "ok-claims-null.yaml": (_pod("resources: {claims: null, requests: {cpu: 1}}\n" + C1),
        None),
    "ok-null-quantity.yaml": (_pod("resources: {requests: {cpu: null}}\n" + C1),
        None),
    "ok-overhead-alone.yaml": (_pod("overhead: {cpu: 250m, memory: 120Mi}\n" + C1),
        None),
    "ok-overhead-with-resources.yaml": (_pod("overhead: {cpu: 250m, memory: 120Mi}\nresources: {limits: {cpu: 1, memory: 1Gi}}\n"
        + C1),
        None),
    "ok-overhead-extended.yaml": (_pod("overhead: {example.com/foo: 2, memory: 1Mi}\n" + C1),
        None),
    "ok-overhead-hugepages-with-memory.yaml": (_pod("overhead: {hugepages-2Mi: 2Mi, memory: 1Mi}\n" + C1),
        None),
    # ---- names: cpu, memory, hugepages-* only (a bad name's own errors first)
    "bad-ephemeral-storage-requests.yaml": (_pod("resources: {requests: {ephemeral-storage: 1Gi}}\n" + C1),
        'invalid pod: [spec.resources.requests[ephemeral-storage]: Unsupported value: '
        f'"ephemeral-storage": {_SUPPORTED}]'),
    "bad-ephemeral-storage-limits.yaml": (_pod("resources: {limits: {ephemeral-storage: 1Gi, cpu: 1}}\n" + C1),
        'invalid pod: [spec.resources.limits[ephemeral-storage]: Unsupported value: "ephemeral-storage": '
        f'{_SUPPORTED}]'),
    "bad-extended-limits.yaml": (_pod("resources: {limits: {example.com/gpu: 1}}\n" + C1),
        'invalid pod: [spec.resources.limits[example.com/gpu]: Unsupported value: "example.com/gpu": '
        f'{_SUPPORTED}]'),
    "bad-extended-fraction.yaml": (_pod("resources: {requests: {example.com/gpu: 1500m}}\n" + C1),
        'invalid pod: [spec.resources.requests[example.com/gpu]: Unsupported value: "example.com/gpu": '
        f'{_SUPPORTED} spec.resources.requests[example.com/gpu]: Invalid value: "1500m": must be an '
        f'integer spec.resources.limits: Required value: {_LIMIT_NEEDED}]'),
    "bad-name-not-qualified.yaml": (_pod("resources: {limits: {'a b': 1}}\n" + C1),
        f'invalid pod: [spec.resources.limits[a b]: Invalid value: "a b": {_NAME_PART}]'),
    "bad-name-not-standard.yaml": (_pod("resources: {requests: {foo: 1}}\n" + C1),
        'invalid pod: [spec.resources.requests[foo]: Invalid value: "foo": must be a standard resource '
        'type or fully qualified]'),
    "bad-name-pods-fraction.yaml": (_pod("resources: {requests: {pods: 500m}}\n" + C1),
        f'invalid pod: [spec.resources.requests[pods]: Unsupported value: "pods": {_SUPPORTED} '
        'spec.resources.requests[pods]: Invalid value: "500m": must be an integer]'),
    "bad-name-requests-cpu.yaml": (_pod("resources: {limits: {requests.cpu: 1}}\n" + C1),
        'invalid pod: [spec.resources.limits[requests.cpu]: Unsupported value: "requests.cpu": '
        f'{_SUPPORTED}]'),
    "bad-name-hugepages-bare.yaml": (_pod("resources: {limits: {hugepages-: 1}}\n" + C1),
        f'invalid pod: [spec.resources.limits[hugepages-]: Invalid value: "hugepages-": {_NAME_PART} '
        'spec.resources.limits[hugepages-]: Invalid value: "1": 1 is not positive integer multiple of '
        'hugepages- spec.resources: Forbidden: HugePages require cpu or memory]'),
    "bad-name-hugepages-odd-page.yaml": (_pod("resources: {limits: {hugepages-foo: 1, memory: 1Gi}}\n" + C1),
        'invalid pod: [spec.resources.limits[hugepages-foo]: Invalid value: "1": 1 is not positive '
        'integer multiple of hugepages-foo]'),
    "bad-name-json-quoted.yaml": (_pod("resources: {requests: {'example.com/a&b': 1}}\n" + C1),
        'invalid pod: [spec.resources.requests[example.com/a&b]: Invalid value: "example.com/a\\u0026b": '
        f'{_NAME_PART} spec.resources.limits: Required value: {_LIMIT_NEEDED}]'),
    # ---- quantities, requests within limits, hugepages
    "bad-negative-cpu-request.yaml": (_pod("resources: {requests: {cpu: '-1'}}\n" + C1),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal '
        'to 0]'),
    "bad-negative-memory-limit.yaml": (_pod("resources: {limits: {memory: -1Gi}}\n" + C1),
        'invalid pod: [spec.resources.limits[memory]: Invalid value: "-1Gi": must be greater than or '
        'equal to 0]'),
    "bad-requests-above-limits.yaml": (_pod("resources: {requests: {cpu: 1500m}, limits: {cpu: 1}}\n" + C1),
        'invalid pod: [spec.resources.requests: Invalid value: "1500m": must be less than or equal to '
        'cpu limit of 1]'),
    "bad-memory-requests-above-limits.yaml": (_pod("resources: {requests: {memory: 2Gi}, limits: {memory: 1G}}\n" + C1),
        'invalid pod: [spec.resources.requests: Invalid value: "2Gi": must be less than or equal to '
        'memory limit of 1G]'),
    "bad-hugepages-without-limit.yaml": (_pod("resources: {requests: {hugepages-2Mi: 2Mi}}\n" + C1),
        f'invalid pod: [spec.resources.limits: Required value: {_LIMIT_NEEDED} spec.resources: Forbidden: '
        'HugePages require cpu or memory]'),
    "bad-hugepages-request-not-limit.yaml": (_pod("resources: {requests: {hugepages-2Mi: 2Mi}, limits: {hugepages-2Mi: 4Mi, "
        "memory: 1Gi}}\n" + C1),
        'invalid pod: [spec.resources.requests: Invalid value: "2Mi": must be equal to hugepages-2Mi '
        'limit of 4Mi]'),
    "bad-hugepages-indivisible.yaml": (_pod("resources: {limits: {hugepages-2Mi: 3Mi, cpu: 1}}\n" + C1),
        'invalid pod: [spec.resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive '
        'integer multiple of hugepages-2Mi]'),
    "bad-hugepages-alone.yaml": (_pod("resources: {limits: {hugepages-1Gi: 1Gi}}\n" + C1),
        'invalid pod: [spec.resources: Forbidden: HugePages require cpu or memory]'),
    # ---- against the containers (validatePodResourceConsistency): requests
    # after the containers' defaults, sidecars counted, init containers' peak;
    # any name, supported or not; only app containers' limits
    "bad-requests-below-sum.yaml": (_pod("resources: {requests: {cpu: '1'}}\n"
        f"containers: [{_c('{requests: {cpu: 500m}}')}, {_c('{requests: {cpu: 1}}', 'd')}]"),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal '
        'to aggregate container requests of 1500m]'),
    "bad-memory-below-sum-format.yaml": (_pod("resources: {requests: {memory: 1Gi}}\n"
        f"containers: [{_c('{requests: {memory: 1Gi}}')}, "
        f"{_c('{requests: {memory: 512Mi}}', 'd')}]"),
        'invalid pod: [spec.resources.requests[memory]: Invalid value: "1Gi": must be greater than or '
        'equal to aggregate container requests of 1536Mi]'),
    "bad-memory-mixed-formats.yaml": (_pod("resources: {requests: {memory: 1G}}\n"
        f"containers: [{_c('{requests: {memory: 1G}}')}, "
        f"{_c('{requests: {memory: 1Mi}}', 'd')}]"),
        'invalid pod: [spec.resources.requests[memory]: Invalid value: "1G": must be greater than or '
        'equal to aggregate container requests of 1001048576]'),
    "bad-requests-below-defaulted-limit.yaml": (_pod("resources: {requests: {cpu: 500m}}\n"
        f"containers: [{_c('{limits: {cpu: 1}}')}]"),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "500m": must be greater than or '
        'equal to aggregate container requests of 1]'),
    "bad-sidecar-counted.yaml": (_pod("resources: {requests: {cpu: '2'}}\n"
        f"initContainers: [{_c('{requests: {cpu: 1}}', 's', ', restartPolicy: Always')}]\n"
        f"containers: [{_c('{requests: {cpu: 1500m}}')}]"),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "2": must be greater than or equal '
        'to aggregate container requests of 2500m]'),
    "bad-init-peak.yaml": (_pod("resources: {requests: {memory: 1Gi}}\n"
        f"initContainers: [{_c('{requests: {memory: 2Gi}}', 'i')}]\n"
        f"containers: [{_c('{requests: {memory: 512Mi}}')}]"),
        'invalid pod: [spec.resources.requests[memory]: Invalid value: "1Gi": must be greater than or '
        'equal to aggregate container requests of 2Gi]'),
    "bad-init-after-sidecar-peak.yaml": (_pod("resources: {requests: {cpu: '2'}}\n"
        f"initContainers: [{_c('{requests: {cpu: 1}}', 's', ', restartPolicy: Always')}, "
        f"{_c('{requests: {cpu: 1500m}}', 'i')}]\n"
        f"containers: [{_c('{requests: {cpu: 100m}}')}]"),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "2": must be greater than or equal '
        'to aggregate container requests of 2500m]'),
    "bad-hugepages-below-aggregate.yaml": (_pod("resources: {limits: {hugepages-2Mi: 2Mi, memory: 2Gi}}\n"
        f"containers: [{_c('{limits: {hugepages-2Mi: 2Mi, memory: 1Gi}}')}, "
        f"{_c('{limits: {hugepages-2Mi: 2Mi, memory: 1Gi}}', 'd')}]"),
        'invalid pod: [spec.resources.limits[hugepages-2Mi]: Invalid value: "2Mi": must be greater than '
        'or equal to aggregate container limits of 4Mi]'),
    "bad-container-limit-above.yaml": (_pod("resources: {limits: {cpu: '1'}}\n"
        f"containers: [{_c('{limits: {cpu: 2}}')}]"),
        'invalid pod: [spec.resources.containers[0][cpu].limits: Invalid value: "2": must be less than '
        'or equal to pod limits of 1]'),
    "bad-second-container-limit-above.yaml": (_pod("resources: {limits: {memory: 1Gi}}\n"
        f"containers: [{_c('{limits: {memory: 1Gi}}')}, "
        f"{_c('{limits: {memory: 2Gi}}', 'd')}]"),
        'invalid pod: [spec.resources.containers[1][memory].limits: Invalid value: "2Gi": must be less '
        'than or equal to pod limits of 1Gi]'),
    "bad-init-limit-not-checked.yaml": (_pod("resources: {limits: {cpu: '1'}, requests: {cpu: '1'}}\n"
        f"initContainers: [{_c('{limits: {cpu: 2}}', 'i')}]\n" + C1),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal '
        'to aggregate container requests of 2]'),
    "bad-ephemeral-below-containers.yaml": (_pod("resources: {requests: {ephemeral-storage: 1Gi}}\n"
        f"containers: [{_c('{requests: {ephemeral-storage: 2Gi}}')}]"),
        'invalid pod: [spec.resources.requests[ephemeral-storage]: Unsupported value: '
        f'"ephemeral-storage": {_SUPPORTED} spec.resources.requests[ephemeral-storage]: Invalid value: '
        '"1Gi": must be greater than or equal to aggregate container requests of 2Gi]'),
    "bad-ephemeral-limit-container-above.yaml": (_pod("resources: {limits: {ephemeral-storage: 1Gi}}\n"
        f"containers: [{_c('{limits: {ephemeral-storage: 2Gi}}')}]"),
        'invalid pod: [spec.resources.limits[ephemeral-storage]: Unsupported value: "ephemeral-storage": '
        f'{_SUPPORTED} spec.resources.containers[0][ephemeral-storage].limits: Invalid value: "2Gi": must '
        'be less than or equal to pod limits of 1Gi]'),
    # ---- claims (even an empty list) and a Windows pod
    "bad-claims-empty.yaml": (_pod("resources: {claims: []}\n" + C1),
        f'invalid pod: [spec.resources.claims: Forbidden: {_NO_CLAIMS}]'),
    "bad-claims-named.yaml": (_pod("resources: {claims: [{name: a}, {name: ''}]}\n" + C1),
        f'invalid pod: [spec.resources.claims: Forbidden: {_NO_CLAIMS} spec.resources.claims[0]: Not '
        'found: "a": must be one of the names in pod.spec.resourceClaims which is empty '
        'spec.resources.claims[1]: Required value]'),
    "bad-windows.yaml": (_pod("os: {name: windows}\nresources: {requests: {ephemeral-storage: -1}, claims: []}\n" + C1),
        'invalid pod: [spec.resources: Forbidden: may not be set for a windows pod]'),
    # ---- spec.overhead: a container's limits, under spec.overhead.limits[NAME]
    "bad-overhead-negative.yaml": (_pod("overhead: {memory: -1Mi}\n" + C1),
        'invalid pod: [spec.overhead.limits[memory]: Invalid value: "-1Mi": must be greater than or '
        'equal to 0]'),
    "bad-overhead-name.yaml": (_pod("overhead: {'a b': 1}\n" + C1),
        f'invalid pod: [spec.overhead.limits[a b]: Invalid value: "a b": {_NAME_PART} '
        'spec.overhead.limits[a b]: Invalid value: "a b": must be a standard resource for containers]'),
    "bad-overhead-pods.yaml": (_pod("overhead: {pods: 1}\n" + C1),
        'invalid pod: [spec.overhead.limits[pods]: Invalid value: "pods": must be a standard resource '
        'for containers]'),
    "bad-overhead-extended-fraction.yaml": (_pod("overhead: {example.com/foo: 500m}\n" + C1),
        'invalid pod: [spec.overhead.limits[example.com/foo]: Invalid value: "500m": must be an integer]'),
    "bad-overhead-hugepages-alone.yaml": (_pod("overhead: {hugepages-2Mi: 2Mi}\n" + C1),
        'invalid pod: [spec.overhead: Forbidden: HugePages require cpu or memory]'),
    "bad-overhead-hugepages-indivisible.yaml": (_pod("overhead: {hugepages-2Mi: 1Mi, cpu: 1}\n" + C1),
        'invalid pod: [spec.overhead.limits[hugepages-2Mi]: Invalid value: "1Mi": 1Mi is not positive '
        'integer multiple of hugepages-2Mi]'),
    "bad-overhead-and-resources.yaml": (_pod("overhead: {cpu: '-1'}\nresources: {requests: {cpu: '-2'}}\n" + C1),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "-2": must be greater than or equal '
        'to 0 spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0]'),
    # ---- spec.resourceClaims (a valid one is then refused as an API reference;
    # the mirror-pod annotation: Forbidden on the root path, shown as [])
    "claims-valid.yaml": (_pod("resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu-template}]\n" + C1),
        'static pods may not reference resourceclaims'),
    "claims-missing-name.yaml": (_pod("resourceClaims: [{resourceClaimName: x}]\n" + C1),
        'invalid pod: [spec.resourceClaims[0].name: Required value]'),
    "claims-empty-entry.yaml": (_pod("resourceClaims: [{}]\n" + C1),
        'invalid pod: [spec.resourceClaims[0].name: Required value spec.resourceClaims[0]: Invalid '
        'value: {"Name":"","ResourceClaimName":null,"ResourceClaimTemplateName":null}: must specify one '
        'of: `resourceClaimName`, `resourceClaimTemplateName`]'),
    "claims-null-entry.yaml": (_pod("resourceClaims: [null]\n" + C1),
        'invalid pod: [spec.resourceClaims[0].name: Required value spec.resourceClaims[0]: Invalid '
        'value: {"Name":"","ResourceClaimName":null,"ResourceClaimTemplateName":null}: must specify one '
        'of: `resourceClaimName`, `resourceClaimTemplateName`]'),
    "claims-duplicate.yaml": (_pod("resourceClaims: [{name: a, resourceClaimName: x}, {name: a, resourceClaimName: z}]\n" + C1),
        'invalid pod: [spec.resourceClaims[1].name: Duplicate value: "a"]'),
    "claims-bad-name.yaml": (_pod("resourceClaims: [{name: A_b, resourceClaimName: x}]\n" + C1),
        f'invalid pod: [spec.resourceClaims[0].name: Invalid value: "A_b": {_LABEL}]'),
    "claims-dotted-name.yaml": (_pod("resourceClaims: [{name: a.b, resourceClaimName: x}]\n" + C1),
        'invalid pod: [spec.resourceClaims[0].name: Invalid value: "a.b": must not contain dots]'),
    "claims-both.yaml": (_pod("resourceClaims: [{name: a, resourceClaimName: x, resourceClaimTemplateName: 't'}]\n" + C1),
        'invalid pod: [spec.resourceClaims[0]: Invalid value: '
        '{"Name":"a","ResourceClaimName":"x","ResourceClaimTemplateName":"t"}: at most one of '
        '`resourceClaimName` or `resourceClaimTemplateName` may be specified]'),
    "claims-bad-claim-name.yaml": (_pod("resourceClaims: [{name: a, resourceClaimName: Bad_Name}]\n" + C1),
        f'invalid pod: [spec.resourceClaims[0].resourceClaimName: Invalid value: "Bad_Name": {_SUBDOMAIN}]'),
    "claims-bad-template-name.yaml": (_pod("resourceClaims: [{name: a, resourceClaimTemplateName: '-t'}]\n" + C1),
        'invalid pod: [spec.resourceClaims[0].resourceClaimTemplateName: Invalid value: "-t": '
        f'{_SUBDOMAIN}]'),
    "claims-empty-claim-name.yaml": (_pod("resourceClaims: [{name: a, resourceClaimName: ''}]\n" + C1),
        f'invalid pod: [spec.resourceClaims[0].resourceClaimName: Invalid value: "": {_SUBDOMAIN}]'),
    "claims-json-escaped.yaml": (_pod("resourceClaims: [{name: 'a<b', resourceClaimName: 'x&y', "
        "resourceClaimTemplateName: 'z>'}]\n" + C1),
        f'invalid pod: [spec.resourceClaims[0].name: Invalid value: "a<b": {_LABEL} '
        'spec.resourceClaims[0]: Invalid value: '
        f'{{"Name":"a\\u003cb","ResourceClaimName":"x\\u0026y","ResourceClaimTemplateName":"z\\u003e"}}: '
        'at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified '
        f'spec.resourceClaims[0].resourceClaimName: Invalid value: "x&y": {_SUBDOMAIN} '
        f'spec.resourceClaims[0].resourceClaimTemplateName: Invalid value: "z>": {_SUBDOMAIN}]'),
    "claims-null-names.yaml": (_pod("resourceClaims: [{name: a, resourceClaimName: null, resourceClaimTemplateName: null}]\n"
        + C1),
        'invalid pod: [spec.resourceClaims[0]: Invalid value: '
        '{"Name":"a","ResourceClaimName":null,"ResourceClaimTemplateName":null}: must specify one of: '
        '`resourceClaimName`, `resourceClaimTemplateName`]'),
    "claims-mirror-annotation.yaml": (_pod("resourceClaims: [{name: A}, {name: b, resourceClaimName: x}]\n" + C1,
        "{name: web, annotations: {kubernetes.io/config.mirror: m}}"),
        'invalid pod: [[]: Forbidden: static pods do not support resource claims []: Forbidden: static '
        'pods do not support resource claims]'),
    "claims-container-refs.yaml": (_pod("resourceClaims: [{name: a, resourceClaimName: x}, {}]\n"
        f"containers: [{_c('{claims: [{name: a}, {name: b}]}')}]"),
        'invalid pod: [spec.resourceClaims[1].name: Required value spec.resourceClaims[1]: Invalid '
        'value: {"Name":"","ResourceClaimName":null,"ResourceClaimTemplateName":null}: must specify one '
        'of: `resourceClaimName`, `resourceClaimTemplateName` spec.containers[0].resources.claims[1]: '
        'Not found: "b": must be one of the names in pod.spec.resourceClaims: a]'),
    # ---- several at once: ValidatePodSpec's order
    "many-in-order.yaml": (_pod(
        "volumes: [{name: V, emptyDir: {}}]\n"
        "resourceClaims: [{name: '', resourceClaimName: x}]\n"
        "restartPolicy: Sometimes\n"
        "overhead: {memory: -1}\n"
        "resources: {requests: {cpu: '3'}, limits: {cpu: '2', example.com/x: 1}, claims: []}\n"
        "initContainers: [{name: i, image: x, resources: {limits: {cpu: 4}}}]\n"
        f"containers: [{_c('{limits: {cpu: 3, memory: -1}}')}]"),
        f'invalid pod: [spec.volumes[0].name: Invalid value: "V": {_LABEL} spec.resourceClaims[0].name: '
        'Required value spec.containers[0].resources.limits[memory]: Invalid value: "-1": must be '
        'greater than or equal to 0 spec.containers[0].resources.requests[memory]: Invalid value: "-1": '
        f'must be greater than or equal to 0 spec.resources.claims: Forbidden: {_NO_CLAIMS} '
        f'spec.resources.limits[example.com/x]: Unsupported value: "example.com/x": {_SUPPORTED} '
        'spec.resources.requests: Invalid value: "3": must be less than or equal to cpu limit of 2 '
        'spec.resources.requests[cpu]: Invalid value: "3": must be greater than or equal to aggregate '
        'container requests of 4 spec.resources.containers[0][cpu].limits: Invalid value: "3": must be '
        'less than or equal to pod limits of 2 spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "OnFailure", "Never" spec.overhead.limits[memory]: Invalid value: '
        '"-1": must be greater than or equal to 0]'),
    # ---- quantities as Go adds and prints them (the first one's format; beyond int64)
    "ok-nano-rounded-up.yaml": (_pod("resources: {limits: {cpu: 1n}}\n" + f"containers: [{_c('{limits: {cpu: 1u}}')}]"),
        None),
    "bad-sum-beyond-int64.yaml": (_pod("resources: {requests: {memory: 9E}}\n"
        f"containers: [{_c('{requests: {memory: 5E}}')}, {_c('{requests: {memory: 5E}}', 'd')}]"),
        'invalid pod: [spec.resources.requests[memory]: Invalid value: "9E": must be greater than or '
        'equal to aggregate container requests of 10E]'),
    "bad-sum-decimal-then-binary.yaml": (_pod("resources: {requests: {memory: 1k}}\n"
        f"containers: [{_c('{requests: {memory: 1000}}')}, "
        f"{_c('{requests: {memory: 1Ki}}', 'd')}]"),
        'invalid pod: [spec.resources.requests[memory]: Invalid value: "1k": must be greater than or '
        'equal to aggregate container requests of 2024]'),
    "bad-hugepages-sidecar-counted.yaml": (_pod("resources: {limits: {hugepages-2Mi: 2Mi, memory: 1Gi}}\n"
        f"initContainers: [{_c('{limits: {hugepages-2Mi: 2Mi, memory: 1Mi}}', 's', ', restartPolicy: Always')}]\n"
        f"containers: [{_c('{limits: {hugepages-2Mi: 2Mi, memory: 1Mi}}')}]"),
        'invalid pod: [spec.resources.limits[hugepages-2Mi]: Invalid value: "2Mi": must be greater than '
        'or equal to aggregate container limits of 4Mi]'),
    # ---- where the kubelet puts these errors among the others
    "bad-rounded-up-to-milli.yaml": (_pod("resources: {requests: {cpu: 0.0001}}\n"
        f"containers: [{_c('{requests: {cpu: 2m}}')}]"),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "1m": must be greater than or equal '
        'to aggregate container requests of 2m]'),
    "bad-fractions-shown-canonical.yaml": (_pod("resources: {requests: {memory: 1.5Gi}, limits: {cpu: 1.5}}\n"
        f"containers: [{_c('{requests: {memory: 1Gi}, limits: {cpu: 2}}')}, "
        f"{_c('{requests: {memory: 0.75Gi}}', 'd')}]"),
        'invalid pod: [spec.resources.requests[memory]: Invalid value: "1536Mi": must be greater than or '
        'equal to aggregate container requests of 1792Mi spec.resources.containers[0][cpu].limits: '
        'Invalid value: "2": must be less than or equal to pod limits of 1500m]'),
    "order-before-host-network.yaml": (_pod("hostNetwork: true\nresources: {requests: {cpu: '-1'}}\n"
        "containers: [{name: c, image: x, ports: [{containerPort: 80, hostPort: 81}]}]"),
        'invalid pod: [spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal '
        'to 0 spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when '
        '`hostNetwork` is true]'),
    "order-overhead-before-os.yaml": (_pod("os: {name: plan9}\noverhead: {cpu: '-1'}\nactiveDeadlineSeconds: 0\n" + C1),
        'invalid pod: [spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, '
        'inclusive spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0 '
        'spec.os: Unsupported value: "plan9": supported values: "linux", "windows"]'),
    "order-claims-before-containers.yaml": (_pod("resourceClaims: [{name: a}]\ncontainers: [{name: c}]"),
        'invalid pod: [spec.resourceClaims[0]: Invalid value: '
        '{"Name":"a","ResourceClaimName":null,"ResourceClaimTemplateName":null}: must specify one of: '
        '`resourceClaimName`, `resourceClaimTemplateName` spec.containers[0].image: Required value]'),
    "json-fields-in-any-order.json": (json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {
            "overhead": {"cpu": "-1"},
            "resources": {"limits": {"memory": "1Gi"}, "requests": {"memory": "2Gi"}},
            "resourceClaims": [{"name": "a", "resourceClaimName": "x", "resourceClaimTemplateName": "y"}],
            "containers": [{"name": "c", "image": "x", "resources": {"limits": {"memory": "3Gi"}}}]}}),
        'invalid pod: [spec.resourceClaims[0]: Invalid value: '
        '{"Name":"a","ResourceClaimName":"x","ResourceClaimTemplateName":"y"}: at most one of '
        '`resourceClaimName` or `resourceClaimTemplateName` may be specified spec.resources.requests: '
        'Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi '
        'spec.resources.requests[memory]: Invalid value: "2Gi": must be greater than or equal to aggregate '
        'container requests of 3Gi spec.resources.containers[0][memory].limits: Invalid value: "3Gi": must '
        'be less than or equal to pod limits of 1Gi spec.overhead.limits[cpu]: Invalid value: "-1": must be '
        'greater than or equal to 0]'),
}


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), CASES)


def test_enough_cases() -> None:
    refused = [n for n, (_, phrase) in CASES.items() if phrase]
    assert len(CASES) >= 60 and len(refused) >= 45 and len(CASES) - len(refused) >= 15


@pytest.mark.parametrize("name", sorted(CASES))
def test_pod_resources_as_the_kubelet_checks_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert_as_the_kubelet(kubelet, ours, CASES[name][1])
    if "error" not in kubelet:
        assert ours["resources"] == _as_values(kubelet["resources"])


#: the gates the kubelet needs to run without PodLevelResources (those
#: depending on it off too)
_GATE_OFF = {"PodLevelResources": False, "PodLevelResourcesFixDefaulting": False,
             "PodLevelResourcesFixKubeletQOSClass": False, "InPlacePodLevelResourcesVerticalScaling": False}
_GATE_OFF_CASES = ("bad-windows.yaml", "bad-claims-empty.yaml", "bad-requests-above-limits.yaml",
                   "many-in-order.yaml", "bad-overhead-negative.yaml", "ok-requests-only.yaml")


def test_without_the_gate_pod_level_resources_are_not_checked(oracle_binary: str, tmp_path: Any) -> None:
    """With ``PodLevelResources`` off the kubelet skips ``validatePodResources``
    (the rest, overhead and claims too, as with it on)."""
    gates = load_kubelet_config({"featureGates": _GATE_OFF}).feature_gates
    files = []
    for name in _GATE_OFF_CASES:
        (tmp_path / name).write_text(CASES[name][0])
        files.append(tmp_path / name)
    flag = ",".join(f"{k}={str(v).lower()}" for k, v in _GATE_OFF.items())
    proc = subprocess.run([oracle_binary, "staticpod", "--node-name", NODE, "--feature-gates", flag, *map(str, files)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(line) for line in proc.stdout.splitlines()]
    assert sum("error" in k for k in verdicts) == 2  # (the overhead; many-in-order's other errors)
    for path, kubelet in zip(files, verdicts, strict=True):
        try:
            pod = parse_manifest(path.read_bytes(), path, node_name=NODE, gates=gates).pod
        except InputError as e:
            assert "error" in kubelet, f"the kubelet accepts {path.name}; podnuma refuses: {e}"
            assert kubelet_words(kubelet["error"]) in str(e), (kubelet["error"], str(e))
            continue
        assert "error" not in kubelet, f"the kubelet refuses {path.name} ({kubelet['error']}); podnuma admits it"
        assert (pod.name, pod.namespace) == (kubelet["name"], kubelet["namespace"])
