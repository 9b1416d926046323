"""The UID of a static pod without ``metadata.uid`` against the kubelet's
file source (``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
pkg/kubelet/config/common.go ``applyDefaults``: FNV-128a of
``hash.DeepHashObject`` of the decoded pod, the v1 defaults applied).

For pairs of manifests written in turn to the same path, under the same
gates: podnuma's UID stays the same exactly when the kubelet's does. The
pairs write out a default the kubelet applies before hashing (so the UID
must not change) or a value that differs from it (so it must): host ports
with ``hostNetwork``, ``httpGet`` handlers of ``lifecycle``, volume modes,
field references and tokens of volumes, an image volume's pull policy,
``fileKeyRef.optional``, the declarative defaults of iSCSI and Azure disk
volumes, the ``H2CContainerProbe`` protocol, the pod-level defaulting
without ``PodLevelResourcesFixDefaulting``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from podnuma.agent.manifests import parse_manifest
from podnuma.api.kubeletconfig import load_kubelet_config
from tests.oracle.test_staticpod_differential import HEAD, NODE


def _pod(spec: str, container: str = "{name: c, image: nginx}", status: str = "") -> str:
    extra = "".join(f"  {line}\n" for line in spec.splitlines())
    return (HEAD + "metadata: {name: web}\nspec:\n" + extra + f"  containers:\n  - {container}\n"
            + (f"status: {{{status}}}\n" if status else ""))


def _meta(fields: str) -> str:
    return HEAD + "metadata: {name: web" + (f", {fields}" if fields else "") + "}\nspec:\n" \
        "  containers:\n  - {name: c, image: nginx}\n"


def _ctr(body: str, spec: str = "") -> str:
    return _pod(spec, "{name: c, image: nginx, " + body + "}")


def _vol(source: str) -> str:
    return _pod(f"volumes: [{{name: v, {source}}}]")


_HTTP = "httpGet: {port: 80}"
_HTTP_WRITTEN = "httpGet: {port: 80, path: /, scheme: HTTP}"
_H2C = {"H2CContainerProbe": True}
_LEGACY = {"PodLevelResourcesFixDefaulting": False}
_ISCSI = "iscsi: {targetPortal: '1.2.3.4:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 0"
_AZURE = "azureDisk: {diskName: d, diskURI: 'https://x/d'"

#: name -> (first manifest, second manifest, gates)
PAIRS: dict[str, tuple[str, str, dict[str, bool]]] = {
    "host-port-defaulted-host-network": (
        _ctr("ports: [{containerPort: 80}]", "hostNetwork: true"),
        _ctr("ports: [{containerPort: 80, hostPort: 80}]", "hostNetwork: true"), {}),
    "host-port-zero-host-network": (
        _ctr("ports: [{containerPort: 80, hostPort: 0}]", "hostNetwork: true"),
        _ctr("ports: [{containerPort: 80, hostPort: 80}]", "hostNetwork: true"), {}),
    "host-port-without-host-network": (
        _ctr("ports: [{containerPort: 80}]"), _ctr("ports: [{containerPort: 80, hostPort: 80}]"), {}),
    "host-port-zero-written": (_ctr("ports: [{containerPort: 80}]"), _ctr("ports: [{containerPort: 80, hostPort: 0}]"), {}),
    "host-port-init-host-network": (
        _pod("hostNetwork: true\ninitContainers: [{name: i, image: x, ports: [{containerPort: 81}]}]"),
        _pod("hostNetwork: true\ninitContainers: [{name: i, image: x, ports: [{containerPort: 81, hostPort: 81}]}]"),
        {}),
    "lifecycle-http-defaults": (_ctr(f"lifecycle: {{preStop: {{{_HTTP}}}, postStart: {{{_HTTP}}}}}"),
                                _ctr(f"lifecycle: {{preStop: {{{_HTTP_WRITTEN}}}, postStart: {{{_HTTP_WRITTEN}}}}}"),
                                {}),
    "lifecycle-http-other-path": (_ctr(f"lifecycle: {{preStop: {{{_HTTP}}}}}"),
                                  _ctr("lifecycle: {preStop: {httpGet: {port: 80, path: /x}}}"), {}),
    "downward-mode-written": (_vol("downwardAPI: {items: [{path: a, fieldRef: {fieldPath: metadata.name}}]}"),
                              _vol("downwardAPI: {defaultMode: 420, items: [{path: a, fieldRef: {apiVersion: v1,"
                                   " fieldPath: metadata.name}}]}"), {}),
    "downward-mode-other": (_vol("downwardAPI: {items: []}"), _vol("downwardAPI: {defaultMode: 384, items: []}"), {}),
    "projected-mode-and-refs-written": (
        _vol("projected: {sources: [{downwardAPI: {items: [{path: a, fieldRef: {fieldPath: metadata.name}}]}}]}"),
        _vol("projected: {defaultMode: 420, sources: [{downwardAPI: {items: [{path: a, fieldRef: {apiVersion: v1,"
             " fieldPath: metadata.name}}]}}]}"), {}),
    "image-volume-pull-policy-written": (_vol("image: {reference: 'busybox:1.36'}"),
                                         _vol("image: {reference: 'busybox:1.36', pullPolicy: IfNotPresent}"), {}),
    "image-volume-latest-pull-policy-written": (_vol("image: {reference: busybox}"),
                                                _vol("image: {reference: busybox, pullPolicy: Always}"), {}),
    "image-volume-pull-policy-other": (_vol("image: {reference: 'busybox:1.36'}"),
                                       _vol("image: {reference: 'busybox:1.36', pullPolicy: Always}"), {}),
    "file-key-ref-optional-false": (
        _pod("volumes: [{name: v, emptyDir: {}}]",
             "{name: c, image: x, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: p, key: k}}}]}"),
        _pod("volumes: [{name: v, emptyDir: {}}]",
             "{name: c, image: x, env: [{name: A, valueFrom: {fileKeyRef: {volumeName: v, path: p, key: k,"
             " optional: false}}}]}"), {}),
    "iscsi-interface-written": (_vol(_ISCSI + "}"), _vol(_ISCSI + ", iscsiInterface: default}"), {}),
    "azure-disk-defaults-written": (_vol(_AZURE + "}"),
                                    _vol(_AZURE + ", cachingMode: ReadWrite, fsType: ext4, readOnly: false,"
                                                  " kind: Shared}"), {}),
    "h2c-protocol-written-gate-on": (_ctr(f"livenessProbe: {{{_HTTP}}}"),
                                     _ctr("livenessProbe: {httpGet: {port: 80, protocol: HTTP1}}"), _H2C),
    "h2c-protocol-written-gate-off": (_ctr(f"livenessProbe: {{{_HTTP}}}"),
                                      _ctr("livenessProbe: {httpGet: {port: 80, protocol: HTTP1}}"), {}),
    "h2c-lifecycle-protocol-gate-on": (_ctr(f"lifecycle: {{preStop: {{{_HTTP}}}}}"),
                                       _ctr("lifecycle: {preStop: {httpGet: {port: 80, protocol: HTTP1}}}"), _H2C),
    "pod-requests-defaulted-legacy": (_pod("resources: {limits: {cpu: '2', memory: 1Gi}}"),
                                      _pod("resources: {limits: {cpu: '2', memory: 1Gi}, requests: {cpu: '2',"
                                           " memory: 1Gi}}"), _LEGACY),
    "pod-requests-written-fixed": (_pod("resources: {limits: {cpu: '2', memory: 1Gi}}"),
                                   _pod("resources: {limits: {cpu: '2', memory: 1Gi}, requests: {cpu: '2',"
                                        " memory: 1Gi}}"), {}),
    "pod-requests-from-containers-legacy": (
        _pod("resources: {limits: {cpu: '2'}}", "{name: c, image: x, resources: {requests: {cpu: 500m}}}"),
        _pod("resources: {limits: {cpu: '2'}, requests: {cpu: 500m}}",
             "{name: c, image: x, resources: {requests: {cpu: 500m}}}"), _LEGACY),
    # (a pod-level request SetDefaults_Pod computes as a sum of several
    # containers' holds no cached text, a copied one keeps the parsed one's)
    "pod-requests-summed-cpu-legacy": (
        _pod("resources: {limits: {cpu: '1'}}", "{name: c, image: x, resources: {requests: "
             "{cpu: 250m}}}\n  - {name: d, image: x, resources: {requests: {cpu: 250m}}}"),
        _pod("resources: {limits: {cpu: '1'}, requests: {cpu: 500m}}", "{name: c, image: x, resources: {requests: "
             "{cpu: 250m}}}\n  - {name: d, image: x, resources: {requests: {cpu: 250m}}}"), _LEGACY),
    "pod-requests-summed-cpu-uncached-legacy": (
        _pod("resources: {limits: {cpu: '4'}}", "{name: c, image: x, resources: {requests: "
             "{cpu: 1000m}}}\n  - {name: d, image: x, resources: {requests: {cpu: 1000m}}}"),
        _pod("resources: {limits: {cpu: '4'}, requests: {cpu: 2000m}}", "{name: c, image: x, resources: {requests: "
             "{cpu: 1000m}}}\n  - {name: d, image: x, resources: {requests: {cpu: 1000m}}}"), _LEGACY),
    "pod-requests-summed-memory-legacy": (
        _pod("resources: {limits: {memory: 1Gi}}", "{name: c, image: x, resources: {requests: "
             "{memory: 50Mi}}}\n  - {name: d, image: x, resources: {requests: {memory: 50Mi}}}"),
        _pod("resources: {limits: {memory: 1Gi}, requests: {memory: 100Mi}}", "{name: c, image: x, resources: "
             "{requests: {memory: 50Mi}}}\n  - {name: d, image: x, resources: {requests: {memory: 50Mi}}}"), _LEGACY),
    "pod-requests-summed-memory-uncached-legacy": (
        _pod("resources: {limits: {memory: 1Gi}}", "{name: c, image: x, resources: {requests: "
             "{memory: 64Mi}}}\n  - {name: d, image: x, resources: {requests: {memory: 64Mi}}}"),
        _pod("resources: {limits: {memory: 1Gi}, requests: {memory: 128Mi}}", "{name: c, image: x, resources: "
             "{requests: {memory: 64Mi}}}\n  - {name: d, image: x, resources: {requests: {memory: 64Mi}}}"), _LEGACY),
    "pod-requests-single-memory-legacy": (
        _pod("resources: {limits: {memory: 1Gi}}", "{name: c, image: x, resources: {requests: {memory: 100Mi}}}"),
        _pod("resources: {limits: {memory: 1Gi}, requests: {memory: 100Mi}}",
             "{name: c, image: x, resources: {requests: {memory: 100Mi}}}"), _LEGACY),
    "pod-requests-init-max-copied-legacy": (
        _pod("resources: {limits: {cpu: '1'}}\ninitContainers: [{name: i, image: x, resources: {requests: "
             "{cpu: 300m}}}]", "{name: c, image: x, resources: {requests: {cpu: 250m}}}"),
        _pod("resources: {limits: {cpu: '1'}, requests: {cpu: 300m}}\ninitContainers: [{name: i, image: x, "
             "resources: {requests: {cpu: 300m}}}]", "{name: c, image: x, resources: {requests: {cpu: 250m}}}"),
        _LEGACY),
    "pod-requests-summed-sidecar-legacy": (
        _pod("resources: {limits: {cpu: '1'}}\ninitContainers: [{name: i, image: x, restartPolicy: Always, "
             "resources: {requests: {cpu: 100m}}}]", "{name: c, image: x, resources: {requests: {cpu: 200m}}}"),
        _pod("resources: {limits: {cpu: '1'}, requests: {cpu: 300m}}\ninitContainers: [{name: i, image: x, "
             "restartPolicy: Always, resources: {requests: {cpu: 100m}}}]",
             "{name: c, image: x, resources: {requests: {cpu: 200m}}}"), _LEGACY),
    # (spellings of one quantity: equal when apimachinery holds them alike)
    "quantity-1000m-and-1.000": (_ctr("resources: {requests: {cpu: 1000m}}"),
                                 _ctr("resources: {requests: {cpu: '1.000'}}"), {}),
    "quantity-1-and-1.0": (_ctr("resources: {requests: {cpu: '1'}}"), _ctr("resources: {requests: {cpu: '1.0'}}"), {}),
    "quantity-string-and-number": (_ctr("resources: {requests: {cpu: '2'}}"), _ctr("resources: {requests: {cpu: 2}}"),
                                   {}),
    "quantity-64Mi-and-67108864": (_ctr("resources: {requests: {memory: 64Mi}}"),
                                   _ctr("resources: {requests: {memory: '67108864'}}"), {}),
    # (the v1 defaults round every resource list's quantity up to milli
    # units: finer spellings of one milli amount alike, the cached text gone)
    "quantity-1n-and-2n-limits": (_ctr("resources: {limits: {cpu: 1n}}"), _ctr("resources: {limits: {cpu: 2n}}"), {}),
    "quantity-1u-and-1000n-requests": (_ctr("resources: {requests: {cpu: 1u}}"),
                                       _ctr("resources: {requests: {cpu: 1000n}}"), {}),
    "quantity-1500u-and-1.5m": (_ctr("resources: {requests: {memory: 1500u}}"),
                                _ctr("resources: {requests: {memory: '1.5m'}}"), {}),
    "quantity-1m-and-1u-rounded": (_ctr("resources: {requests: {cpu: 1m}}"),
                                   _ctr("resources: {requests: {cpu: 1u}}"), {}),
    "overhead-1n-and-2n": (_pod("overhead: {cpu: 1n}"), _pod("overhead: {cpu: 2n}"), {}),
    "pod-level-1n-and-2n": (_pod("resources: {limits: {cpu: 1n}}"), _pod("resources: {limits: {cpu: 2n}}"), {}),
    # (a quantity outside resource lists: as apimachinery holds it, unrounded)
    "divisor-1000m-and-1.000": (
        _ctr("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1000m}}}]"),
        _ctr("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: '1.000'}}}]"), {}),
    "divisor-string-and-number": (
        _ctr("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: '1'}}}]"),
        _ctr("env: [{name: A, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1}}}]"), {}),
    "downward-divisor-1000m-and-1.000": (
        _vol("downwardAPI: {items: [{path: p, resourceFieldRef: {containerName: c, resource: limits.cpu, "
             "divisor: 1000m}}]}"),
        _vol("downwardAPI: {items: [{path: p, resourceFieldRef: {containerName: c, resource: limits.cpu, "
             "divisor: '1.000'}}]}"), {}),
    "size-limit-1000m-and-1.000": (_vol("emptyDir: {sizeLimit: 1000m}"), _vol("emptyDir: {sizeLimit: '1.000'}"), {}),
    "size-limit-padded": (_vol("emptyDir: {sizeLimit: ' 1'}"), _vol("emptyDir: {sizeLimit: '1'}"), {}),
    "size-limit-1-and-1.0": (_vol("emptyDir: {sizeLimit: '1'}"), _vol("emptyDir: {sizeLimit: '1.0'}"), {}),
    "grpc-service-empty-written": (_ctr("livenessProbe: {grpc: {port: 9}}"),
                                   _ctr("livenessProbe: {grpc: {port: 9, service: ''}}"), {}),
    # (a map's entry exists once decoded, empty or null: null is the zero value)
    "label-empty-and-none": (_meta("labels: {tier: ''}"), _meta(""), {}),
    "label-null-and-none": (_meta("labels: {tier: null}"), _meta(""), {}),
    "label-null-and-empty": (_meta("labels: {tier: null}"), _meta("labels: {tier: ''}"), {}),
    "annotation-empty-and-none": (_meta("annotations: {a: ''}"), _meta(""), {}),
    "node-selector-empty-and-none": (_pod("nodeSelector: {disk: ''}"), _pod(""), {}),
    "requests-null-and-none": (_ctr("resources: {requests: {cpu: null}}"), _ctr("resources: {requests: {}}"), {}),
    "requests-null-and-zero": (_ctr("resources: {requests: {cpu: null}}"),
                               _ctr("resources: {requests: {cpu: '0'}}"), {}),
    "limits-null-and-none": (_ctr("resources: {limits: {memory: null}}"), _ctr(""), {}),
    "overhead-null-and-none": (_pod("overhead: {cpu: null}"), _pod(""), {}),
    "flex-options-empty-and-none": (_vol("flexVolume: {driver: d, options: {a: '', b: x}}"),
                                    _vol("flexVolume: {driver: d, options: {b: x}}"), {}),
    "flex-options-null-and-empty": (_vol("flexVolume: {driver: d, options: {a: null}}"),
                                    _vol("flexVolume: {driver: d, options: {a: ''}}"), {}),
    "label-empty-key-value-and-none": (_meta("labels: {a: b, tier: ''}"), _meta("labels: {a: b}"), {}),
    # (the status's resource lists are rounded up to milli too)
    "status-allocated-rounded": (_pod("", status="allocatedResources: {cpu: '1.0001'}"),
                                 _pod("", status="allocatedResources: {cpu: '1.0002'}"), {}),
    "status-allocated-differs": (_pod("", status="allocatedResources: {cpu: '1.001'}"),
                                 _pod("", status="allocatedResources: {cpu: '1.002'}"), {}),
    "status-resources-limits-rounded": (_pod("", status="resources: {limits: {cpu: '1.0001'}}"),
                                        _pod("", status="resources: {limits: {cpu: '1.0002'}}"), {}),
    "status-resources-requests-rounded": (_pod("", status="resources: {requests: {cpu: '1.0001'}}"),
                                          _pod("", status="resources: {requests: {cpu: '1.0002'}}"), {}),
    "status-container-allocated-rounded": (
        _pod("", status="containerStatuses: [{name: c, allocatedResources: {cpu: '1.0001'}}]"),
        _pod("", status="containerStatuses: [{name: c, allocatedResources: {cpu: '1.0002'}}]"), {}),
    "status-init-container-limits-rounded": (
        _pod("", status="initContainerStatuses: [{name: c, resources: {limits: {cpu: '1.0001'}}}]"),
        _pod("", status="initContainerStatuses: [{name: c, resources: {limits: {cpu: '1.0002'}}}]"), {}),
    "status-ephemeral-requests-rounded": (
        _pod("", status="ephemeralContainerStatuses: [{name: c, resources: {requests: {cpu: '1.0001'}}}]"),
        _pod("", status="ephemeralContainerStatuses: [{name: c, resources: {requests: {cpu: '1.0002'}}}]"), {}),
    "status-container-allocated-differs": (
        _pod("", status="containerStatuses: [{name: c, allocatedResources: {cpu: '1.001'}}]"),
        _pod("", status="containerStatuses: [{name: c, allocatedResources: {cpu: '1.002'}}]"), {}),
    # (a kind or apiVersion spelt otherwise that wins the type look-up)
    "kind-fold-wins": (HEAD.replace("kind: Pod", "kind: Deployment\n\u212aIND: Pod") + "metadata: {name: web}\n"
                       "spec:\n  containers:\n  - {name: c, image: nginx}\n", _pod(""), {}),
}

#: image references, some Go's reference parser refuses (the pull policy
#: then defaults to IfNotPresent: no tag seen), some it reads
IMAGES = (
    "nginx", "nginx:1.2", "nginx:latest", "Busybox", "Nginx", "nginx:", "Nginx:latest", "a//b", "-nginx",
    "example.com:5000/Team/app", "example.com:5000/team/app:latest", "localhost/x", "LOCALHOST:5000/x:latest",
    "Team/app", "team/App", "index.docker.io/nginx", "nginx@sha256:" + "a" * 64,
    "nginx:latest@sha256:" + "a" * 64, "nginx:latest@sha256:" + "A" * 64, "nginx:latest@sha256:" + "a" * 63,
    "nginx:latest@md5:" + "a" * 32, "nginx:latest@sha512:" + "b" * 128, "a" * 64, "[::1]:5000/x",
    "ubuntu:" + "a" * 128, "ubuntu:" + "a" * 129, "x/" + "a" * 260, "nginx:lat/est", "a__b:latest", "a___b",
    "a.-b", "a--b", "ex_ample.com/x", "-example.com/x", "example.com/x:.latest", "example.com:/x",
)
for _i, _image in enumerate(IMAGES):
    _quoted = json.dumps(_image)
    PAIRS[f"image-pull-policy-{_i:02d}"] = (_pod("", f"{{name: c, image: {_quoted}}}"),
                                            _pod("", f"{{name: c, image: {_quoted}, imagePullPolicy: IfNotPresent}}"),
                                            {})
    PAIRS[f"image-volume-pull-policy-{_i:02d}"] = (
        _vol(f"image: {{reference: {_quoted}}}"), _vol(f"image: {{reference: {_quoted}, pullPolicy: IfNotPresent}}"),
        {})


def _oracle_uid(binary: str, path: Path, gates: dict[str, bool]) -> str:
    flag = ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())
    args = [binary, "staticpod", "--node-name", NODE, *(["--feature-gates", flag] if flag else []), str(path)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    (got,) = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "error" not in got, got["error"]
    return str(got["uid"])


def _our_uid(path: Path, gates: dict[str, bool]) -> str:
    view = load_kubelet_config({"featureGates": gates} if gates else {}).feature_gates
    return parse_manifest(path.read_bytes(), path, node_name=NODE, gates=view).pod.uid


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_uid_changes_when_the_kubelets_does(oracle_binary: str, tmp_path: Path, name: str) -> None:
    first, second, gates = PAIRS[name]
    path = tmp_path / "web.yaml"
    kubelet, ours = [], []
    for text in (first, second):
        path.write_text(text)
        kubelet.append(_oracle_uid(oracle_binary, path, gates))
        ours.append(_our_uid(path, gates))
    same = kubelet[0] == kubelet[1]
    assert (ours[0] == ours[1]) == same, (
        f"the kubelet's UID {'stays' if same else 'changes'}; podnuma's {'changes' if same else 'stays'}")


def test_the_pairs_go_both_ways(oracle_binary: str, tmp_path: Path) -> None:
    """Some pairs keep the kubelet's UID, some change it."""
    verdicts = set()
    for name in ("host-port-defaulted-host-network", "downward-mode-other"):
        first, second, gates = PAIRS[name]
        uids = []
        for text in (first, second):
            (tmp_path / "web.yaml").write_text(text)
            uids.append(_oracle_uid(oracle_binary, tmp_path / "web.yaml", gates))
        verdicts.add(uids[0] == uids[1])
    assert verdicts == {True, False}
