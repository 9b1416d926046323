"""Values of the wrong JSON type outside a pod's containers, against the
kubelet's file source (``kubelet-oracle staticpod``).

The kubelet's decoder (the legacy scheme's JSON decoder, k8s.io/kubernetes
v1.37.2 ``pkg/kubelet/config/common.go`` ``tryDecodeSinglePod``) refuses
them before any validation (``json: cannot unmarshal string into Go struct
field PodSpec.spec.hostNetwork of type bool``), and the file is skipped
with that message. For every field of ``v1.PodSpec``, ``ObjectMeta`` and
``v1.PodStatus`` (listed here from the v1 API, independently of podnuma's
decoder schema) each JSON type it is not, and so for every field of each
volume source; then every field podnuma's
decoder schema knows below the spec (its containers left out: see
``test_staticpod_container_types``), volumes' sources included, with one
wrong type, in JSON and in YAML. Both refuse with the kubelet's whole
message inside podnuma's, or both accept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.agent import validation
from tests.oracle.staticpod_cases import decoded_cases
from tests.oracle.test_staticpod_differential import _oracle, _podnuma, kubelet_words

# the JSON types of the fields (k8s.io/api v0.37.2 core/v1, apimachinery
# v0.37.2 meta/v1): s string, n number, b bool, a array, o object, t a
# metav1.Time (a string its own decoder reads)
SPEC_FIELDS: dict[str, str] = {
    "volumes": "a", "initContainers": "a", "containers": "a", "ephemeralContainers": "a", "restartPolicy": "s",
    "terminationGracePeriodSeconds": "n", "activeDeadlineSeconds": "n", "dnsPolicy": "s", "nodeSelector": "o",
    "serviceAccountName": "s", "serviceAccount": "s", "automountServiceAccountToken": "b", "nodeName": "s",
    "hostNetwork": "b", "hostPID": "b", "hostIPC": "b", "shareProcessNamespace": "b", "securityContext": "o",
    "imagePullSecrets": "a", "hostname": "s", "subdomain": "s", "affinity": "o", "schedulerName": "s",
    "tolerations": "a", "hostAliases": "a", "priorityClassName": "s", "priority": "n", "dnsConfig": "o",
    "readinessGates": "a", "runtimeClassName": "s", "enableServiceLinks": "b", "preemptionPolicy": "s",
    "overhead": "o", "topologySpreadConstraints": "a", "setHostnameAsFQDN": "b", "os": "o", "hostUsers": "b",
    "schedulingGates": "a", "resourceClaims": "a", "resources": "o", "hostnameOverride": "s",
    "schedulingGroup": "o", "evictionResponders": "a",
}
META_FIELDS: dict[str, str] = {
    "generateName": "s", "namespace": "s", "selfLink": "s", "uid": "s", "resourceVersion": "s",
    "generation": "n", "deletionGracePeriodSeconds": "n", "labels": "o", "annotations": "o",
    "ownerReferences": "a", "finalizers": "a", "managedFields": "a",
}
STATUS_FIELDS: dict[str, str] = {
    "observedGeneration": "n", "phase": "s", "conditions": "a", "message": "s", "reason": "s",
    "nominatedNodeName": "s", "hostIP": "s", "hostIPs": "a", "podIP": "s", "podIPs": "a",
    "startTime": "t", "initContainerStatuses": "a", "containerStatuses": "a", "qosClass": "s",
    "ephemeralContainerStatuses": "a",
    "resize": "s", "resourceClaimStatuses": "a", "extendedResourceClaimStatus": "o", "allocatedResources": "o",
    "resources": "o", "nodeAllocatableResourceClaimStatuses": "a", "volumeHealth": "a",
}
#: the fields of each volume source and their JSON types (k8s.io/api
#: v0.37.2 core/v1; a quantity, ``emptyDir.sizeLimit``, left out)
VOLUME_SOURCE_FIELDS: dict[str, dict[str, str]] = {
    "hostPath": {"path": "s", "type": "s"},
    "emptyDir": {"medium": "s", "mode": "n"},
    "gcePersistentDisk": {"pdName": "s", "fsType": "s", "partition": "n", "readOnly": "b"},
    "awsElasticBlockStore": {"volumeID": "s", "fsType": "s", "partition": "n", "readOnly": "b"},
    "gitRepo": {"repository": "s", "revision": "s", "directory": "s"},
    "secret": {"secretName": "s", "items": "a", "defaultMode": "n", "optional": "b", "defaultUser": "n"},
    "nfs": {"server": "s", "path": "s", "readOnly": "b"},
    "iscsi": {"targetPortal": "s", "iqn": "s", "lun": "n", "iscsiInterface": "s", "fsType": "s", "readOnly": "b",
        "portals": "a", "chapAuthDiscovery": "b", "chapAuthSession": "b", "secretRef": "o", "initiatorName": "s"},
    "glusterfs": {"endpoints": "s", "path": "s", "readOnly": "b"},
    "persistentVolumeClaim": {"claimName": "s", "readOnly": "b"},
    "rbd": {"monitors": "a", "image": "s", "fsType": "s", "pool": "s", "user": "s", "keyring": "s", "secretRef": "o",
        "readOnly": "b"},
    "flexVolume": {"driver": "s", "fsType": "s", "secretRef": "o", "readOnly": "b", "options": "o"},
    "cinder": {"volumeID": "s", "fsType": "s", "readOnly": "b", "secretRef": "o"},
    "cephfs": {"monitors": "a", "path": "s", "user": "s", "secretFile": "s", "secretRef": "o", "readOnly": "b"},
    "flocker": {"datasetName": "s", "datasetUUID": "s"},
    "downwardAPI": {"items": "a", "defaultMode": "n", "defaultUser": "n"},
    "fc": {"targetWWNs": "a", "lun": "n", "fsType": "s", "readOnly": "b", "wwids": "a"},
    "azureFile": {"secretName": "s", "shareName": "s", "readOnly": "b"},
    "configMap": {"items": "a", "defaultMode": "n", "optional": "b", "defaultUser": "n"},
    "vsphereVolume": {"volumePath": "s", "fsType": "s", "storagePolicyName": "s", "storagePolicyID": "s"},
    "quobyte": {"registry": "s", "volume": "s", "readOnly": "b", "user": "s", "group": "s", "tenant": "s"},
    "azureDisk": {"diskName": "s", "diskURI": "s", "cachingMode": "s", "fsType": "s", "readOnly": "b", "kind": "s"},
    "photonPersistentDisk": {"pdID": "s", "fsType": "s"},
    "projected": {"sources": "a", "defaultMode": "n", "defaultUser": "n"},
    "portworxVolume": {"volumeID": "s", "fsType": "s", "readOnly": "b"},
    "scaleIO": {"gateway": "s", "system": "s", "secretRef": "o", "sslEnabled": "b", "protectionDomain": "s",
        "storagePool": "s", "storageMode": "s", "volumeName": "s", "fsType": "s", "readOnly": "b"},
    "storageos": {"volumeName": "s", "volumeNamespace": "s", "fsType": "s", "readOnly": "b", "secretRef": "o"},
    "csi": {"driver": "s", "readOnly": "b", "fsType": "s", "volumeAttributes": "o", "nodePublishSecretRef": "o"},
    "ephemeral": {"volumeClaimTemplate": "o"},
    "image": {"reference": "s", "pullPolicy": "s"},
}
#: a wrong value of each JSON type (a number a resource list or an
#: ``IntOrString`` might take is not one: ``5.5``)
_WRONG: dict[str, Any] = {"s": "x", "n": 5, "b": True, "a": [1], "o": {"a": 1}}


def _pod(section: str, extra: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    pod.setdefault(section, {}).update(extra)
    return pod


def _write(pod: dict[str, Any], as_yaml: bool) -> str:
    return yaml.safe_dump(pod) if as_yaml else json.dumps(pod)


def _top_level() -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    for section, fields in (("spec", SPEC_FIELDS), ("metadata", META_FIELDS), ("status", STATUS_FIELDS)):
        for field, kind in fields.items():
            for shown, value in _WRONG.items():
                if shown == kind or (kind == "t" and shown == "s"):
                    continue
                out[f"{section}-{field}-{shown}.json"] = (_write(_pod(section, {field: value}), False), "")
    return out


def _wrong_for(t: Any) -> Any:
    return {"string": 5, "int": "x", "intstr": True, "bool": "x", "slice": "x", "map": [1],
            "struct": "x", "time": 5, "quantity": True}.get(t.kind)


def _nested() -> dict[str, tuple[str, str | None]]:
    """Every field podnuma's schema knows below the spec, but in the
    container lists (the volumes' sources included)."""
    out: dict[str, tuple[str, str | None]] = {}

    def walk(t: Any, build: Any, path: str, depth: int) -> None:
        for name, (ft, _) in sorted(t.fields.items()):
            if depth == 0 and name in ("initContainers", "containers", "ephemeralContainers"):
                continue
            wrong = _wrong_for(ft)
            here = f"{path}.{name}".lstrip(".")
            if wrong is not None and depth > 0:
                spec = build({name: wrong})
                for as_yaml in (False, True):
                    out[f"nested-{here}.{'yaml' if as_yaml else 'json'}"] = (
                        _write(_pod("spec", spec), as_yaml), "")
            sub = ft.elem if ft.kind == "slice" else ft
            if sub is not None and sub.kind == "struct" and depth < 6:
                walk(sub, (lambda b, n=name, s=ft.kind == "slice": lambda v: b({n: [v] if s else v}))(build),
                     here, depth + 1)

    walk(validation._G_POD.fields["spec"][0], lambda v: v, "", 0)
    return out


def _status() -> dict[str, tuple[str, str | None]]:
    """Every field podnuma's schema knows below the status, with one
    wrong type."""
    out: dict[str, tuple[str, str | None]] = {}

    def walk(t: Any, build: Any, path: str) -> None:
        for name, (ft, _) in sorted(t.fields.items()):
            wrong = _wrong_for(ft)
            here = f"{path}.{name}".lstrip(".")
            if wrong is not None and path:
                out[f"status-{here}.json"] = (_write(_pod("status", build({name: wrong})), False), "")
            sub = ft.elem if ft.kind == "slice" else ft
            if sub is not None and sub.kind == "struct":
                walk(sub, (lambda b, n=name, s=ft.kind == "slice": lambda v: b({n: [v] if s else v}))(build), here)

    walk(validation._G_POD.fields["status"][0], lambda v: v, "")
    return out


def _volume_sources() -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    for source, fields in VOLUME_SOURCE_FIELDS.items():
        for field, kind in fields.items():
            for shown, value in _WRONG.items():
                if shown != kind:
                    volume = {"name": "v", source: {field: value}}
                    out[f"volume-{source}-{field}-{shown}.json"] = (_write(_pod("spec", {"volumes": [volume]}), False), "")
    return out


TOP = {**_top_level(), **_volume_sources()}
NESTED = {**_nested(), **_status()}


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), {**TOP, **NESTED})


def test_enough_cases() -> None:
    fields = len(SPEC_FIELDS) + len(META_FIELDS) + len(STATUS_FIELDS) + sum(map(len, VOLUME_SOURCE_FIELDS.values()))
    assert len(TOP) >= 4 * fields and len(NESTED) >= 400


def _same(kubelet: dict[str, Any], ours: dict[str, Any]) -> None:
    if "error" not in kubelet:
        assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
        return
    assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
    assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])


@pytest.mark.parametrize("name", sorted(TOP))
def test_a_pod_field_of_the_wrong_type(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert "error" in kubelet and "json: cannot unmarshal" in kubelet["error"], kubelet
    _same(kubelet, ours)


@pytest.mark.parametrize("name", sorted(NESTED))
def test_a_nested_pod_field_of_the_wrong_type(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    _same(kubelet, ours)


_HEAD = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"


def _spec(fields: str) -> str:
    return _HEAD + f"spec: {{{fields}, containers: [{{name: c, image: x}}]}}\n"


#: the v1.37 fields podnuma's pod model does not hold, read (and validated)
#: as the kubelet reads them: name -> (manifest, a phrase of the kubelet's
#: error; None: accepted)
NEW_FIELDS: dict[str, tuple[str, str | None]] = {
    "group.yaml": (_spec("schedulingGroup: {podGroupName: g}"), None),
    "group-null.yaml": (_spec("schedulingGroup: null"), None),
    "group-empty.yaml": (_spec("schedulingGroup: {}"), "Invalid value: null: must specify one of: `podGroupName`"),
    "group-bad-name.yaml": (_spec("schedulingGroup: {podGroupName: 'Bad Name'}"), "a lowercase RFC 1123 subdomain"),
    "group-empty-name.yaml": (_spec("schedulingGroup: {podGroupName: ''}"), 'podGroupName: Invalid value: ""'),
    "group-long-name.yaml": (_spec("schedulingGroup: {podGroupName: '" + "a" * 254 + "'}"),
                             "must be no more than 253 characters"),
    "group-and-responders.yaml": (_spec("schedulingGroup: {podGroupName: g}, evictionResponders: [{name: x}]"),
                                  "spec.schedulingGroup: Forbidden: may not be set when evictionResponders is set"),
    "group-after-hostname.yaml": (_spec("schedulingGroup: {}, hostname: 'A_'"), "spec.hostname: Invalid value"),
    "responders.yaml": (_spec("evictionResponders: [{name: x, priority: 5}]"), None),
    "responders-empty.yaml": (_spec("evictionResponders: [{}]"), None),
}


@pytest.fixture(scope="module")
def new_fields(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("new"), NEW_FIELDS)


@pytest.mark.parametrize("name", sorted(NEW_FIELDS))
def test_fields_podnumas_model_does_not_hold(new_fields: dict[str, Any], name: str) -> None:
    kubelet, ours = new_fields[name]
    phrase = NEW_FIELDS[name][1]
    if phrase is None:
        assert "error" not in kubelet, kubelet["error"]
    else:
        assert phrase in kubelet.get("error", ""), kubelet
    _same(kubelet, ours)


#: pairs written in turn at one path: the kubelet hashes these fields too
UID_PAIRS: dict[str, tuple[str, str]] = {
    "group-name": (_spec("schedulingGroup: {podGroupName: g}"), _spec("schedulingGroup: {podGroupName: h}")),
    "group-and-none": (_spec("schedulingGroup: {podGroupName: g}"), _spec("hostPID: false")),
    "responder-name": (_spec("evictionResponders: [{name: x}]"), _spec("evictionResponders: [{name: z}]")),
    "responder-priority": (_spec("evictionResponders: [{name: x}]"),
                           _spec("evictionResponders: [{name: x, priority: 1}]")),
}


@pytest.mark.parametrize("name", sorted(UID_PAIRS))
def test_uid_of_fields_podnumas_model_does_not_hold(oracle_binary: str, tmp_path: Path, name: str) -> None:
    kubelet, ours = [], []
    for text in UID_PAIRS[name]:
        path = tmp_path / "web.yaml"
        path.write_text(text)
        (got,) = _oracle(oracle_binary, [path])
        assert "error" not in got, got["error"]
        kubelet.append(got["uid"])
        ours.append(_podnuma(path)["uid"])
    same = kubelet[0] == kubelet[1]
    assert (ours[0] == ours[1]) == same, (
        f"the kubelet's UID {'stays' if same else 'changes'}; podnuma's {'changes' if same else 'stays'}")
