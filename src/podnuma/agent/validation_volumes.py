"""Volumes, volume mounts and devices, restart rules and the pod's other
odd fields as ``ValidatePodCreate`` checks them on a static pod.

Mirrors k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``:
``validateVolumeSource`` (the one-source rule in its order, and the details
of ``validateHostPathVolumeSource``, ``validateHostPathType``,
``validateGitRepoVolumeSource``, ``validateGCEPersistentDiskVolumeSource``,
``validateAWSElasticBlockStoreVolumeSource``, ``validateSecretVolumeSource``,
``validateConfigMapVolumeSource``, ``validateKeyToPath``,
``validateNFSVolumeSource``, ``validateGlusterfsVolumeSource``,
``validateFlockerVolumeSource``, ``validatePersistentClaimVolumeSource``,
``validateRBDVolumeSource``, ``validateCinderVolumeSource``,
``validateCephFSVolumeSource``, ``validateDownwardAPIVolumeSource``,
``validateDownwardAPIVolumeFile``, ``validateFCVolumeSource``,
``validateFlexVolumeSource``, ``validateAzureFile``,
``validateVsphereVolumeSource``, ``validatePhotonPersistentDiskVolumeSource``,
``validatePortworxVolumeSource``, ``validateStorageOSVolumeSource``,
``validateISCSIVolumeSource`` (and the volume name's length beside an
initiator name), ``validateQuobyteVolumeSource`` (``net.SplitHostPort`` on
each registry pair), ``validateAzureDisk``,
``validateProjectedVolumeSource`` with ``validateProjectionSources`` (secret,
config map, downward API, service-account-token, cluster-trust-bundle and
pod-certificate sources, with ``ValidateSignerName``,
``ValidateClusterTrustBundleName`` and ``ValidateUserAnnotations``),
``validateScaleIOVolumeSource``, ``validateCSIVolumeSource``,
``validateEphemeralVolumeSource`` (``ValidateTemplateObjectMeta`` with
``validateFieldAllowList``, ``ValidatePersistentVolumeClaimSpec`` with
``validateDataSource`` and ``validateDataSourceRef``),
``validateImageVolumeSource``, ``validateUserField``), the
ephemeral-claim rules of ``ValidateVolumes``, ``ValidateVolumeMounts`` (with
``validateLocalDescendingPath``, ``validatePathNoBacksteps``,
``ValidateLocalNonReservedPath``, ``validateMountPropagation``,
``validateMountRecursiveReadOnly``, ``validateBindMountOptions``),
``ValidateVolumeDevices``, ``validateContainerRestartPolicy`` and
``validateInitContainerRestartPolicy`` (``restartPolicyRules``),
``validateReadinessGates``, ``validatePodHostName`` (``hostnameOverride``),
the service-account-token rule of ``validatePodMetadataAndSpec``, the
deletion-cost rule of ``ValidatePodSpecificAnnotations`` and
``validateKubeFinalizerName``; and of k8s.io/apimachinery v0.37.2
``pkg/api/validation/objectmeta.go``: ``ValidateObjectMetaAccessor``
(``generateName``, with ``maskTrailingDash`` of ``generic.go``),
``ValidateNonnegativeField`` (``generation``), ``ValidateOwnerReferences``,
``validateOwnerReference`` and ``ValidateFinalizers``; and of
``pkg/apis/meta/v1/validation/validation.go``: ``ValidateManagedFields``
with ``ValidateFieldManager``.

The kubelet validates after the v1 defaults: a volume without a source is
an ``emptyDir``; ``secret``, ``configMap``, ``downwardAPI`` and
``projected`` get ``defaultMode`` 0644, a ``serviceAccountToken``
``expirationSeconds`` 3600, a ``fieldRef`` ``apiVersion`` ``v1``, an image
volume a ``pullPolicy`` (so only one written out is checked), an
``azureDisk`` a ``kind`` (Shared) and ``cachingMode`` (ReadWrite), a claim
template a ``volumeMode`` (Filesystem). The gates are the kubelet's
(``validation_kit.options()``): ``ContainerRestartRules`` as handed in,
``RestartAllContainersOnContainerExits`` (the ``RestartAllContainers``
action; restart rules on a sidecar), ``PodDeletionCost`` (the annotation
checked); the file source drops no field of a disabled gate, so
``hostnameOverride`` is always checked.

A value Go hands to ``field.Invalid``/``field.NotSupported`` as a named
string type, a pointer, a list or a struct is shown as ``encoding/json``
writes it (an internal type without JSON names, a cluster trust bundle
projection, by its Go field names; a ``*field.Path`` as ``{}``); a plain
string as ``%q``. An ``emptyDir.sizeLimit`` that is no quantity is the
decoder's refusal (``couldn't parse as pod(quantities must match ...)``),
raised by ``go_decode`` before this runs. Maps Go walks in no fixed order
(a selector's labels, user annotations) are walked in sorted order.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from podnuma.agent.validation_container import (
    _field_ref,
    _resource_field_ref,
)
from podnuma.agent.validation_kit import (
    _Errors,
    _get,
    _int,
    _labels,
    _map,
    _q,
    _range_error,
    _seq,
    _str,
    go_lower,
    options,
)
from podnuma.agent.validation_scheduling import _label_selector as label_selector
from podnuma.api.pod_validation import (
    dns_label_errors,
    dns_subdomain_errors,
    go_len,
    qualified_name_errors,
)
from podnuma.api.pod_validation_security import go_json as _json
from podnuma.api.quantity import QuantityError, quantity_from_manifest
from podnuma.errors import InputError

__all__ = [
    "check_generate_name",
    "check_generation",
    "check_hostname_override",
    "check_init_restart_policy",
    "check_managed_fields",
    "check_owners_and_finalizers",
    "check_pod_annotations",
    "check_readiness_gates",
    "check_restart_policy",
    "check_token_without_service_account",
    "check_volume_devices",
    "check_volume_mounts",
    "check_volume_source",
    "check_volumes_claims",
]

#: the volume sources in the order ``validateVolumeSource`` meets them, with
#: the path its "more than 1 volume type" error names (two are misspelt)
_SOURCES = (
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"),
    ("flocker", "flocker"), ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"),
    ("cinder", "cinder"), ("cephfs", "cephFS"), ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"), ("fc", "fc"), ("flexVolume", "flexVolume"),
    ("configMap", "configMap"), ("azureFile", "azureFile"), ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"), ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"), ("storageos", "storageos"), ("projected", "projected"),
    ("scaleIO", "scaleIO"), ("csi", "csi"), ("ephemeral", "ephemeral"), ("image", "image"),
)

_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_EMPTY_DIR_MODE = "must be a number between 0 and 01777 (octal), both inclusive"
_MAX_ID = 2**31 - 1
_HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File",
                    "FileOrCreate", "Socket")
_VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                       "metadata.uid")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_PROPAGATIONS = ("Bidirectional", "HostToContainer", "None")
_RRO_MODES = ("Disabled", "Enabled", "IfPossible")
_BIND_OPTIONS = ("nodev", "noexec", "nosuid")
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_VOLUME_MODES = ("Block", "Filesystem")
_RESTART_POLICIES = ("Always", "Never", "OnFailure")
_RULE_ACTIONS = ("Restart",)
_RULE_ACTIONS_ALL = ("Restart", "RestartAllContainers")
_RULE_OPERATORS = ("In", "NotIn")
_STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


# ---------------------------------------------------------------- wording



def _invalid_json(errs: _Errors, path: str, value: Any, detail: str) -> None:
    errs.items.append((path, f"Invalid value: {_json(value)}: {detail}"))


def _mode(errs: _Errors, m: Any, key: str, path: str, top: int = 0o777, text: str = _FILE_MODE) -> None:
    mode = _int(m, key)
    if mode is not None and not 0 <= mode <= top:
        errs.invalid(f"{path}.{key}", mode, text)


def _user(errs: _Errors, m: Any, key: str, path: str) -> None:
    """``validateUserField``: a user ID 0 to 2^31-1."""
    user = _int(m, key)
    if user is not None and not 0 <= user <= _MAX_ID:
        errs.invalid(f"{path}.{key}", user, _range_error(0, _MAX_ID))


def _required_str(errs: _Errors, m: Any, key: str, path: str, *, child: str | None = None) -> str:
    value = _str(m, key) or ""
    if not value:
        errs.required(f"{path}.{child or key}")
    return value


def _no_backsteps(errs: _Errors, value: str, path: str) -> None:
    if ".." in value.split("/"):
        errs.invalid(path, value, "must not contain '..'")


def _local_descending(errs: _Errors, value: str, path: str) -> None:
    if posixpath.isabs(value):
        errs.invalid(path, value, "must be a relative path")
    _no_backsteps(errs, value, path)


def _local_non_reserved(errs: _Errors, value: str, path: str) -> None:
    _local_descending(errs, value, path)
    if value.startswith("..") and not value.startswith("../"):
        errs.invalid(path, value, "must not start with '..'")


# ---------------------------------------------------------------- volume sources


def check_volume_source(errs: _Errors, vol: Mapping[str, Any], path: str, pod_name: str) -> None:
    """``validateVolumeSource`` of the volume ``vol`` at ``path``: one
    source (the others forbidden, in the kubelet's order), its details.
    ``pod_name``: the pod's name as validated (with the node's suffix)."""
    first = True
    for key, shown in _SOURCES:
        src = vol.get(key)
        if src is None:
            continue
        if not first:
            errs.forbidden(f"{path}.{shown}", "may not specify more than 1 volume type")
            if key == "iscsi":
                _iscsi_name(errs, vol, src, path)
            continue
        first = False
        check = _CHECKS.get(key)
        if check is not None:
            check(errs, src if isinstance(src, Mapping) else {}, f"{path}.{key}")
        if key == "iscsi":
            _iscsi_name(errs, vol, src, path)
        if key == "ephemeral":
            name = _str(vol, "name") or ""
            if pod_name and name:
                claim = f"{pod_name}-{name}"
                for msg in dns_subdomain_errors(claim):
                    errs.invalid(f"{path}.name", name, f"PVC name {_q(claim)}: {msg}")


def check_volumes_claims(errs: _Errors, volumes: list[Any], pod_name: str, i: int) -> None:
    """``ValidateVolumes``: a ``persistentVolumeClaim`` must not name the
    claim an ephemeral volume of the pod creates (``i``: the volume)."""
    vol = volumes[i]
    claim = _str(_get(vol, "persistentVolumeClaim"), "claimName")
    if not pod_name or claim is None:
        return
    created = {f"{pod_name}-{_str(v, 'name') or ''}" for v in volumes if _get(v, "ephemeral") is not None}
    if claim in created:
        errs.invalid(f"spec.volumes[{i}].persistentVolumeClaim.claimName", claim,
                     "must not reference a PVC that gets created for an ephemeral volume")


def _empty_dir(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    raw = src.get("sizeLimit")
    if raw is not None:
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            qty_error = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            raise InputError(f"couldn't parse as pod({qty_error}), please check config file",
                             path=f"{path}.sizeLimit")
        try:
            qty = quantity_from_manifest(raw)
        except QuantityError as e:
            raise InputError(f"couldn't parse as pod({e}), please check config file",
                             path=f"{path}.sizeLimit") from None
        if qty.sign() < 0:
            errs.forbidden(f"{path}.sizeLimit", "SizeLimit field must be a valid resource quantity")
    _mode(errs, src, "mode", path, 0o1777, _EMPTY_DIR_MODE)


def _host_path(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    host = _str(src, "path") or ""
    if not host:
        errs.required(f"{path}.path")
        return
    _no_backsteps(errs, host, f"{path}.path")
    kind = _str(src, "type")
    if kind is not None and kind not in _HOST_PATH_TYPES:
        errs.unsupported_named(f"{path}.type", kind, _HOST_PATH_TYPES)


def _git_repo(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "repository", path)
    _local_descending(errs, _str(src, "directory") or "", f"{path}.directory")


def _partition(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    part = _int(src, "partition") or 0
    if not 0 <= part <= 255:
        errs.invalid(f"{path}.partition", part, _range_error(1, 255))


def _gce_pd(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    # (the kubelet names this source's details persistentDisk)
    where = path.removesuffix("gcePersistentDisk") + "persistentDisk"
    _required_str(errs, src, "pdName", where)
    _partition(errs, src, where)


def _aws_ebs(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "volumeID", path)
    _partition(errs, src, path)


def _key_to_path(errs: _Errors, item: Any, path: str) -> str:
    _required_str(errs, item, "key", path)
    target = _required_str(errs, item, "path", path)
    _local_non_reserved(errs, target, f"{path}.path")
    _mode(errs, item, "mode", path)
    _user(errs, item, "user", path)
    return target


def _secret(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "secretName", path)
    _mode(errs, src, "defaultMode", path)
    _user(errs, src, "defaultUser", path)
    for i, item in enumerate(_seq(src, "items")):
        _key_to_path(errs, item, f"{path}.items[{i}]")


def _config_map(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "name", path)
    _mode(errs, src, "defaultMode", path)
    _user(errs, src, "defaultUser", path)
    for i, item in enumerate(_seq(src, "items")):
        _key_to_path(errs, item, f"{path}.items[{i}]")


def _nfs(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "server", path)
    where = _required_str(errs, src, "path", path)
    if not where.startswith("/"):
        errs.invalid(f"{path}.path", where, "must be an absolute path")


def _glusterfs(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "endpoints", path)
    _required_str(errs, src, "path", path)


def _flocker(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    name, uid = _str(src, "datasetName") or "", _str(src, "datasetUUID") or ""
    if not name and not uid:
        errs.required(path, "one of datasetName and datasetUUID is required")
    if name and uid:
        errs.invalid(path, "resource", "datasetName and datasetUUID can not be specified simultaneously")
    if "/" in name:
        errs.invalid(f"{path}.datasetName", name, "must not contain '/'")


def _pvc(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "claimName", path)


def _rbd(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    if not _seq(src, "monitors"):
        errs.required(f"{path}.monitors")
    _required_str(errs, src, "image", path)


def _cinder(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "volumeID", path)
    ref = _get(src, "secretRef")
    if ref is not None and not _str(ref, "name"):
        errs.required(f"{path}.secretRef.name")


def _cephfs(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    if not _seq(src, "monitors"):
        errs.required(f"{path}.monitors")


def _downward_file(errs: _Errors, item: Any, path: str) -> str:
    """``validateDownwardAPIVolumeFile``: ``path`` is the source's, not the
    item's (the kubelet names no index)."""
    target = _required_str(errs, item, "path", path)
    _local_non_reserved(errs, target, f"{path}.path")
    field_ref, resource_ref = _get(item, "fieldRef"), _get(item, "resourceFieldRef")
    if field_ref is not None:
        _field_ref(errs, field_ref, f"{path}.fieldRef", _VOLUME_FIELD_PATHS)
        if resource_ref is not None:
            errs.invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously")
    elif resource_ref is not None:
        where = f"{path}.resourceFieldRef"
        found = _Errors()
        _resource_field_ref(found, resource_ref, where)
        if not _str(resource_ref, "containerName"):
            # (the container is checked first; the resource then is not)
            if found.items and found.items[0][0] == f"{where}.resource":
                found.items.pop(0)
            errs.required(f"{where}.containerName")
        errs.items.extend(found.items)
    else:
        errs.required(path, "one of fieldRef and resourceFieldRef is required")
    _mode(errs, item, "mode", path)
    _user(errs, item, "user", path)
    return target



def _downward_api(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _mode(errs, src, "defaultMode", path)
    _user(errs, src, "defaultUser", path)
    for item in _seq(src, "items"):
        _downward_file(errs, item, path)


def _fc(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    wwns = _seq(src, "targetWWNs")
    wwids = _seq(src, "wwids")
    if not wwns and not wwids:
        errs.required(f"{path}.targetWWNs", "must specify either targetWWNs or wwids, but not both")
    if wwns and wwids:
        _invalid_json(errs, f"{path}.targetWWNs", wwns, "targetWWNs and wwids can not be specified simultaneously")
    if wwns:
        lun = _int(src, "lun")
        if lun is None:
            errs.required(f"{path}.lun", "lun is required if targetWWNs is specified")
        elif not 0 <= lun <= 255:
            errs.invalid(f"{path}.lun", lun, _range_error(0, 255))


def _flex(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "driver", path)
    for key in sorted(k for k in _map(src, "options") if isinstance(k, str)):
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + go_lower(namespace)
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            errs.invalid(f"{path}.options[{key}]", key, "kubernetes.io and k8s.io namespaces are reserved")


def _azure_file(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "secretName", path)
    _required_str(errs, src, "shareName", path)


def _one(key: str) -> Any:
    def check(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
        _required_str(errs, src, key, path)
    return check


def _scale_io(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    for key in ("gateway", "system", "volumeName"):
        _required_str(errs, src, key, path)


def _storageos(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    name = _str(src, "volumeName") or ""
    if not name:
        errs.required(f"{path}.volumeName")
    else:
        errs.each(f"{path}.volumeName", name, dns_label_errors(name))
    namespace = _str(src, "volumeNamespace") or ""
    if namespace:
        errs.each(f"{path}.volumeNamespace", namespace, dns_label_errors(namespace))
    ref = _get(src, "secretRef")
    if ref is not None and not _str(ref, "name"):
        errs.required(f"{path}.secretRef.name")


def _csi(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    driver = _str(src, "driver") or ""
    if not driver:
        errs.required(f"{path}.driver")
    else:
        if go_len(driver) > 63:
            errs.items.append((f"{path}.driver", "Too long: may not be more than 63 bytes"))
        errs.each(f"{path}.driver", driver, dns_subdomain_errors(go_lower(driver)))
    ref = _get(src, "nodePublishSecretRef")
    if ref is not None:
        name = _str(ref, "name") or ""
        if not name:
            errs.required(f"{path}.nodePublishSecretRef.name")
        else:
            errs.each(f"{path}.name", name, dns_subdomain_errors(name))


#: the ObjectMeta fields a claim template may not set, in Go's field order:
#: (JSON name, the name ``validateFieldAllowList`` gives the error)
_TEMPLATE_META_FORBIDDEN = (
    ("name", "name"), ("generateName", "generateName"), ("namespace", "namespace"), ("selfLink", "selfLink"),
    ("uid", "uID"), ("resourceVersion", "resourceVersion"), ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"), ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"), ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"), ("managedFields", "managedFields"),
)
#: those of them that are plain Go values (their zero value is unset); the
#: others are pointers, slices or times: set when given at all
_TEMPLATE_META_PLAIN = frozenset(("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                                  "generation"))


def _template_meta(errs: _Errors, meta: Mapping[str, Any], path: str) -> None:
    """``ValidateTemplateObjectMeta``: the annotations (keys lowered) and
    labels as an object's; any other field of the metadata set (not its
    zero value) is forbidden."""
    annotations = _map(meta, "annotations")
    for key in sorted(k for k in annotations if isinstance(k, str)):
        errs.each(f"{path}.annotations", key, qualified_name_errors(go_lower(key)))
    size = sum(go_len(k) + go_len(v) for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str))
    if size > 256 * 1024:
        errs.items.append((f"{path}.annotations", f"Too long: may not be more than {256 * 1024} bytes"))
    _labels(errs, _map(meta, "labels"), f"{path}.labels")
    for key, shown in _TEMPLATE_META_FORBIDDEN:
        value = _get(meta, key)
        unset = value is None or (key in _TEMPLATE_META_PLAIN and value in ("", 0) and value is not False)
        if not unset:
            errs.forbidden(f"{path}.{shown}", "cannot be set")


def _data_source(errs: _Errors, ref: Any, path: str, *, namespaced: bool) -> None:
    """``validateDataSource`` / ``validateDataSourceRef``: a name and a
    kind; without an API group the kind a claim's; an API group a DNS
    subdomain; a reference's namespace a DNS label."""
    _required_str(errs, ref, "name", path)
    kind = _required_str(errs, ref, "kind", path)
    group = _str(ref, "apiGroup") or ""
    if not group and kind != "PersistentVolumeClaim":
        errs.invalid(path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup")
    if group:
        errs.each(f"{path}.apiGroup", group, dns_subdomain_errors(group))
    namespace = _str(ref, "namespace") or ""
    if namespaced and namespace:
        errs.each(f"{path}.namespace", namespace, dns_label_errors(namespace))


def _ephemeral(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    """``validateEphemeralVolumeSource``: a claim template, its metadata
    (``ValidateTemplateObjectMeta``) and spec
    (``ValidatePersistentVolumeClaimSpec`` after the v1 defaults: access
    modes, selector, a positive storage request, storage class, volume
    mode, data sources, volume attributes class)."""
    template = _get(src, "volumeClaimTemplate")
    if template is None:
        errs.required(f"{path}.volumeClaimTemplate")
        return
    _template_meta(errs, _map(template, "metadata"), f"{path}.volumeClaimTemplate.metadata")
    where = f"{path}.volumeClaimTemplate.spec"
    spec = _map(template, "spec")
    modes = [m for m in _seq(spec, "accessModes") if isinstance(m, str)]
    if not _seq(spec, "accessModes"):
        errs.required(f"{where}.accessModes", "at least 1 access mode is required")
    selector = _get(spec, "selector")
    if selector is not None:
        label_selector(errs, selector, f"{where}.selector")
    once_pod = other = False
    for mode in modes:
        if mode not in _ACCESS_MODES:
            errs.unsupported_named(f"{where}.accessModes", mode, _ACCESS_MODES)
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in _ACCESS_MODES:
            other = True
    if once_pod and other:
        errs.forbidden(f"{where}.accessModes", "may not use ReadWriteOncePod with other access modes")
    requests = _map(_map(spec, "resources"), "requests")
    if "storage" not in requests:
        errs.required(f"{where}.resources[storage]")
    else:
        storage = quantity_from_manifest(requests["storage"]).round_up(-3)
        if storage.sign() <= 0:
            errs.invalid(f"{where}.resources[storage]", str(storage), "must be greater than zero")
    storage_class = _str(spec, "storageClassName") or ""
    if storage_class:
        errs.each(f"{where}.storageClassName", storage_class, dns_subdomain_errors(storage_class))
    volume_mode = _str(spec, "volumeMode")
    if volume_mode is not None and volume_mode not in _VOLUME_MODES:
        errs.unsupported_named(f"{where}.volumeMode", volume_mode, _VOLUME_MODES)
    source, ref = _get(spec, "dataSource"), _get(spec, "dataSourceRef")
    if source is not None:
        _data_source(errs, source, f"{where}.dataSource", namespaced=False)
    if ref is not None:
        _data_source(errs, ref, f"{where}.dataSourceRef", namespaced=True)
    if ref is not None and _str(ref, "namespace"):
        if source is not None:
            errs.items.append((where, "Invalid value: {}: may not be specified when dataSourceRef.namespace is "
                               "specified"))
    elif source is not None and ref is not None:
        same = all((_str(source, k) or "") == (_str(ref, k) or "") for k in ("kind", "name")) and (
            _str(source, "apiGroup") == _str(ref, "apiGroup"))
        if not same:
            errs.items.append((where, "Invalid value: {}: must match dataSourceRef"))
    attributes_class = _str(spec, "volumeAttributesClassName") or ""
    if attributes_class:
        errs.each(f"{where}.volumeAttributesClassName", attributes_class, dns_subdomain_errors(attributes_class))


def _image(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _required_str(errs, src, "reference", path)
    policy = _str(src, "pullPolicy")
    if policy and policy not in _PULL_POLICIES:
        errs.unsupported(f"{path}.pullPolicy", policy, _PULL_POLICIES)


_KEY_TYPES = ("RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519")
_MAX_EXPIRATION = 91 * 24 * 3600
_MAX_EXPIRATION_KUBERNETES = 24 * 3600


def signer_name_errors(errs: _Errors, signer: str, path: str) -> None:
    """``ValidateSignerName``: ``DOMAIN/PATH``, the domain at most 253
    bytes of DNS labels (two at least), the path of DNS subdomains joined
    by dots, the whole at most 571 bytes; the first bad label of each part
    reported, with every message it has."""
    if not signer:
        errs.required(path)
        return
    parts = signer.split("/")
    if len(parts) != 2:
        errs.invalid(path, signer, "must be a fully qualified domain and path of the form 'example.com/signer-name'")
        return
    domain, rest = parts
    if go_len(domain) > 253:
        errs.items.append((path, "Too long: may not be more than 253 bytes"))
    labels = domain.split(".")
    for label in labels:
        found = dns_label_errors(label)
        for msg in found:
            errs.invalid(path, domain, f"validating label {_q(label)}: {msg}")
        if found:
            break
    if len(labels) < 2:
        errs.invalid(path, domain, "should be a domain with at least two segments separated by dots")
    for label in rest.split("."):
        found = dns_subdomain_errors(label)
        for msg in found:
            errs.invalid(path, rest, f"validating label {_q(label)}: {msg}")
        if found:
            break
    if go_len(signer) > 253 + 253 + 63 + 1 + 1:
        errs.items.append((path, "Too long: may not be more than 571 bytes"))


def _selector_json(selector: Any) -> Any:
    """A ``LabelSelector`` as ``json.Marshal`` writes it (empty parts left out)."""
    if not isinstance(selector, Mapping):
        return None
    out: dict[str, Any] = {}
    labels = _map(selector, "matchLabels")
    if labels:
        out["matchLabels"] = {k: labels[k] if isinstance(labels[k], str) else "" for k in sorted(labels)}
    exprs = []
    for expr in _seq(selector, "matchExpressions"):
        item: dict[str, Any] = {"key": _str(expr, "key") or "", "operator": _str(expr, "operator") or ""}
        values = [v if isinstance(v, str) else "" for v in _seq(expr, "values")]
        if values:
            item["values"] = values
        exprs.append(item)
    if exprs:
        out["matchExpressions"] = exprs
    return out


def _bundle_name_errors(name: str) -> list[str]:
    """``ValidateClusterTrustBundleName`` for the signer the name implies
    (what comes before its last colon, colons as slashes; none: no colon
    allowed)."""
    if ":" not in name:
        return dns_subdomain_errors(name)
    signer = name[:name.rfind(":")].replace(":", "/")
    prefix = signer.replace("/", ":") + ":"
    if not name.startswith(prefix):
        return [f"ClusterTrustBundle for signerName {signer} must be named with prefix {prefix}"]
    return dns_subdomain_errors(name[len(prefix):])


def _cluster_trust_bundle(errs: _Errors, bundle: Any, path: str, projected: str,
                          note: Callable[[str, str], None]) -> None:
    """``validateProjectionSources``' cluster-trust-bundle source: a name
    or a signer name (with a label selector), not both; a path (local, not
    reserved, not another source's), a user ID."""
    name, signer = _str(bundle, "name"), _str(bundle, "signerName")
    selector = _get(bundle, "labelSelector")
    if name is not None and signer is not None:
        shown = {"Name": name, "SignerName": signer, "LabelSelector": _selector_json(selector),
                 "Optional": _get(bundle, "optional") if isinstance(_get(bundle, "optional"), bool) else None,
                 "Path": _str(bundle, "path") or "", "User": _int(bundle, "user")}
        _invalid_json(errs, path, shown, "only one of name and signerName may be used")
    elif name is not None:
        if not name:
            errs.required(f"{path}.name", "must be a valid object name")
        for msg in _bundle_name_errors(name):
            errs.invalid(f"{path}.name", name, f"not a valid clustertrustbundlename: {msg}")
        if isinstance(selector, Mapping):
            _invalid_json(errs, f"{path}.labelSelector", _selector_json(selector),
                          "labelSelector must be unset if name is specified")
    elif signer is not None:
        if not signer:
            errs.required(f"{path}.signerName", "must be a valid signer name")
        signer_name_errors(errs, signer, f"{path}.signerName")
        label_selector(errs, selector, f"{path}.labelSelector")
    else:
        errs.required(path, "either name or signerName must be specified")
    target = _str(bundle, "path") or ""
    if not target:
        errs.required(f"{path}.path")
    _user(errs, bundle, "user", path)
    _local_non_reserved(errs, target, f"{path}.path")
    note(target, target)


def _pod_certificate(errs: _Errors, cert: Any, path: str, note: Callable[[str, str], None]) -> None:
    """``validateProjectionSources``' pod-certificate source: its signer's
    name, the user annotations' keys (domain-prefixed, lowered) and size,
    a user ID, a known key type, a maximum lifetime from an hour to 91
    days (one day for a ``kubernetes.io`` signer), at least one path (each
    local, not reserved, not another source's)."""
    signer = _str(cert, "signerName") or ""
    signer_name_errors(errs, signer, f"{path}.signerName")
    notes = _get(cert, "userAnnotations")
    if isinstance(notes, Mapping):
        where = f"{path}.userAnnotations"
        for key in sorted(k for k in notes if isinstance(k, str)):
            lowered = go_lower(key)
            if not lowered:
                errs.required(where)
                continue
            found = qualified_name_errors(lowered)
            errs.each(where, lowered, found)
            if not found and len(lowered.split("/")) != 2:
                errs.invalid(where, lowered, 'must be a domain-prefixed key (such as "acme.io/foo")')
        size = sum(go_len(k) + go_len(v) for k, v in notes.items() if isinstance(k, str) and isinstance(v, str))
        if size > 256 * 1024:
            errs.items.append((where, f"Too long: may not be more than {256 * 1024} bytes"))
    _user(errs, cert, "user", path)
    key_type = _str(cert, "keyType") or ""
    if key_type not in _KEY_TYPES:
        errs.unsupported(f"{path}.keyType", key_type, _KEY_TYPES)
    most = _int(cert, "maxExpirationSeconds")
    if most is not None:
        if most < 3600:
            errs.invalid(f"{path}.maxExpirationSeconds", most, "if provided, maxExpirationSeconds must be >= 3600")
        host = signer.split("/", 1)[0]
        limit = (_MAX_EXPIRATION_KUBERNETES if host == "kubernetes.io" or host.endswith(".kubernetes.io")
                 else _MAX_EXPIRATION)
        if most > limit:
            errs.invalid(f"{path}.maxExpirationSeconds", most, f"if provided, maxExpirationSeconds must be <= {limit}")
    given = 0
    for key in ("credentialBundlePath", "keyPath", "certificateChainPath"):
        target = _str(cert, key) or ""
        if target:
            given += 1
            _local_non_reserved(errs, target, f"{path}.{key}")
            note(target, target)
    if not given:
        errs.required(path, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath")


def _projected(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    _mode(errs, src, "defaultMode", path)
    _user(errs, src, "defaultUser", path)
    seen: set[str] = set()

    def note(target: str, shown: str) -> None:
        if target in seen:
            errs.invalid(path, shown, "conflicting duplicate paths")
        seen.add(target)

    for i, source in enumerate(_seq(src, "sources")):
        where = f"{path}.sources[{i}]"
        count = 0
        for kind in ("secret", "configMap"):
            ref = _get(source, kind)
            if ref is None:
                continue
            count += 1
            name = _required_str(errs, ref, "name", f"{where}.{kind}")
            for j, item in enumerate(_seq(ref, "items")):
                target = _key_to_path(errs, item, f"{where}.{kind}.items[{j}]")
                if target:
                    note(target, name)
        downward = _get(source, "downwardAPI")
        if downward is not None:
            count += 1
            for item in _seq(downward, "items"):
                target = _downward_file(errs, item, f"{where}.downwardAPI")
                if target:
                    note(target, target)
        token = _get(source, "serviceAccountToken")
        if token is not None:
            count += 1
            tpath = f"{where}.serviceAccountToken"
            expiry = _int(token, "expirationSeconds")
            expiry = 3600 if expiry is None else expiry
            if expiry < 600:
                errs.invalid(f"{tpath}.expirationSeconds", expiry, "may not specify a duration less than 10 minutes")
            if expiry > 1 << 32:
                errs.invalid(f"{tpath}.expirationSeconds", expiry,
                             "may not specify a duration larger than 2^32 seconds")
            target = _str(token, "path") or ""
            if not target:
                errs.required(f"{path}.path")
            else:
                _local_non_reserved(errs, target, f"{path}.path")
            _user(errs, token, "user", tpath)
        bundle = _get(source, "clusterTrustBundle")
        if bundle is not None:
            count += 1
            _cluster_trust_bundle(errs, bundle, f"{where}.clusterTrustBundle", path, note)
        cert = _get(source, "podCertificate")
        if cert is not None:
            count += 1
            _pod_certificate(errs, cert, f"{where}.podCertificate", note)
        if count > 1:
            errs.forbidden(where, "may not specify more than 1 volume type per source")


#: the initiator and target names ``validateISCSIVolumeSource`` accepts (as
#: Go's RE2 reads them: the iqn one unanchored at its start)
_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9.-]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI = re.compile(r"\Aeui.[A-Za-z0-9]{16}\Z")
_NAA = re.compile(r"\Anaa.[A-Za-z0-9]{32}\Z")
_ISCSI_NAME_TOO_LONG = ("Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
                        "iscsi.initiatorName is specified.")


def _iscsi_format(name: str) -> str | None:
    """What is wrong with an iSCSI qualified name: no known prefix (None
    then: the caller words it), a known one not followed by its format
    ("must be valid format"), or nothing ("")."""
    for prefix, form in (("iqn", _IQN), ("eui", _EUI), ("naa", _NAA)):
        if name.startswith(prefix):
            return "" if form.search(name) else "must be valid format"
    return None


def _iscsi(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    """``validateISCSIVolumeSource``: the portal and IQN given, the IQN of
    its prefix's format, the LUN 0-255, a secret for CHAP, the initiator
    name (``initiatorname`` in the error's path) of its format."""
    _required_str(errs, src, "targetPortal", path)
    iqn = _str(src, "iqn") or ""
    if not iqn:
        errs.required(f"{path}.iqn")
    else:
        wrong = _iscsi_format(iqn)
        if wrong is None:
            errs.invalid(f"{path}.iqn", iqn, "must be valid format starting with iqn, eui, or naa")
        elif wrong:
            errs.invalid(f"{path}.iqn", iqn, wrong)
    lun = _int(src, "lun") or 0
    if not 0 <= lun <= 255:
        errs.invalid(f"{path}.lun", lun, _range_error(0, 255))
    chap = _get(src, "chapAuthDiscovery") is True or _get(src, "chapAuthSession") is True
    if chap and _get(src, "secretRef") is None:
        errs.required(f"{path}.secretRef")
    initiator = _str(src, "initiatorName")
    if initiator is not None:
        wrong = _iscsi_format(initiator)
        if wrong is None:
            errs.invalid(f"{path}.initiatorname", initiator, "must be valid format starting with iqn, eui, or naa")
        elif wrong:
            errs.invalid(f"{path}.initiatorname", initiator, wrong)


def _iscsi_name(errs: _Errors, vol: Mapping[str, Any], src: Any, path: str) -> None:
    """``validateVolumeSource``: with an initiator name, the volume's name,
    a colon and the target portal at most 64 bytes (checked whether or not
    the iSCSI source is the volume's first)."""
    if _str(src, "initiatorName") is None:
        return
    name = _str(vol, "name") or ""
    if go_len(f"{name}:{_str(src, 'targetPortal') or ''}") > 64:
        errs.invalid(f"{path}.name", name, _ISCSI_NAME_TOO_LONG)


def _split_host_port(text: str) -> bool:
    """Whether Go's ``net.SplitHostPort`` splits ``text`` (the port after
    the last colon; the host without a colon, or bracketed with the
    bracket just before that colon; no stray bracket)."""
    last = text.rfind(":")
    if last < 0:
        return False
    start, end = 0, 0
    if text.startswith("["):
        close = text.find("]")
        if close < 0 or close + 1 != last:
            return False
        start, end = 1, close + 1
    elif ":" in text[:last]:
        return False
    return "[" not in text[start:] and "]" not in text[end:]


def _quobyte(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    """``validateQuobyteVolumeSource``: a registry of host:port pairs (one
    error a pair that is none), a tenant of at most 64 bytes (the registry
    then not looked into), a volume."""
    registry = _str(src, "registry") or ""
    pairs_text = "must be a host:port pair or multiple pairs separated by commas"
    if not registry:
        errs.required(f"{path}.registry", pairs_text)
    elif go_len(_str(src, "tenant") or "") >= 65:
        errs.required(f"{path}.tenant", "must be a UUID and may not exceed a length of 64 characters")
    else:
        for pair in registry.split(","):
            if not _split_host_port(pair):
                errs.invalid(f"{path}.registry", registry, pairs_text)
    _required_str(errs, src, "volume", path)


_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
_DISK_KINDS = ("Dedicated", "Managed", "Shared")


def _azure_disk(errs: _Errors, src: Mapping[str, Any], path: str) -> None:
    """``validateAzureDisk`` after the v1 defaults (``kind`` Shared,
    ``cachingMode`` ReadWrite): the disk's name and URI, a known caching
    mode and kind, a managed disk's URI under ``/subscriptions/``, any
    other's an ``https://`` one."""
    _required_str(errs, src, "diskName", path)
    uri = _str(src, "diskURI") or ""
    if not uri:
        errs.required(f"{path}.diskURI")
    caching = _str(src, "cachingMode")
    if caching is not None and caching not in _CACHING_MODES:
        errs.unsupported_named(f"{path}.cachingMode", caching, _CACHING_MODES)
    kind = _str(src, "kind")
    kind = "Shared" if kind is None else kind
    if kind not in _DISK_KINDS:
        errs.unsupported_named(f"{path}.kind", kind, _DISK_KINDS)
    if kind == "Managed" and not uri.startswith("/subscriptions/"):
        errs.unsupported(f"{path}.diskURI", uri,
                         ("/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/"
                          "{disk-id}",))
    if kind != "Managed" and not uri.startswith("https://"):
        errs.unsupported(f"{path}.diskURI", uri,
                         ("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",))


_CHECKS = {
    "emptyDir": _empty_dir, "hostPath": _host_path, "gitRepo": _git_repo, "gcePersistentDisk": _gce_pd,
    "awsElasticBlockStore": _aws_ebs, "secret": _secret, "nfs": _nfs, "glusterfs": _glusterfs,
    "flocker": _flocker, "persistentVolumeClaim": _pvc, "rbd": _rbd, "cinder": _cinder, "cephfs": _cephfs,
    "downwardAPI": _downward_api, "fc": _fc, "flexVolume": _flex, "configMap": _config_map,
    "iscsi": _iscsi, "quobyte": _quobyte, "azureDisk": _azure_disk,
    "azureFile": _azure_file, "vsphereVolume": _one("volumePath"), "photonPersistentDisk": _one("pdID"),
    "portworxVolume": _one("volumeID"), "storageos": _storageos, "projected": _projected,
    "scaleIO": _scale_io, "csi": _csi, "ephemeral": _ephemeral, "image": _image,
}


def check_token_without_service_account(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """A projected service-account token needs ``serviceAccountName``."""
    if _str(spec, "serviceAccountName"):
        return
    for vi, vol in enumerate(_seq(spec, "volumes")):
        for si, source in enumerate(_seq(_get(vol, "projected"), "sources")):
            if _get(source, "serviceAccountToken") is not None:
                errs.forbidden(f"spec.volumes[{vi}].projected.sources[{si}].serviceAccountToken",
                               "must not be specified when serviceAccountName is not set")


# ---------------------------------------------------------------- mounts and devices


def _mount_map(items: list[Any], key: str) -> dict[str, str]:
    """``GetVolumeMountMap``/``GetVolumeDeviceMap``: name -> path (the last wins)."""
    out: dict[str, str] = {}
    for item in items:
        if isinstance(item, Mapping):
            out[_str(item, "name") or ""] = _str(item, key) or ""
    return out


def check_volume_mounts(errs: _Errors, c: Mapping[str, Any], path: str,
                        volumes: Mapping[str, Mapping[str, Any]]) -> None:
    """``ValidateVolumeMounts`` of the container ``c`` (``volumes``: the
    valid ones by name)."""
    devices = _mount_map(_seq(c, "volumeDevices"), "devicePath")
    privileged = _get(_get(c, "securityContext"), "privileged") is True
    base = f"{path}.volumeMounts"
    mount_paths: set[str] = set()
    for i, mnt in enumerate(_seq(c, "volumeMounts")):
        if not isinstance(mnt, Mapping):
            continue
        where = f"{base}[{i}]"
        name = _str(mnt, "name") or ""
        if not name:
            errs.required(f"{where}.name")
        if name not in volumes:
            errs.not_found(f"{where}.name", name)
        mount_path = _str(mnt, "mountPath") or ""
        if not mount_path:
            errs.required(f"{where}.mountPath")
        if mount_path in mount_paths:
            errs.invalid(f"{where}.mountPath", mount_path, "must be unique")
        mount_paths.add(mount_path)
        if name in devices:
            errs.invalid(f"{where}.name", name, "must not already exist in volumeDevices")
        if mount_path in devices.values():
            errs.invalid(f"{where}.mountPath", mount_path, "must not already exist as a path in volumeDevices")
        sub_path = _str(mnt, "subPath") or ""
        if sub_path:
            _local_descending(errs, sub_path, f"{base}.subPath")
        expr = _str(mnt, "subPathExpr") or ""
        if expr:
            if sub_path:
                errs.invalid(f"{where}.subPathExpr", expr, "subPathExpr and subPath are mutually exclusive")
            _local_descending(errs, expr, f"{base}.subPathExpr")
        propagation = _str(mnt, "mountPropagation")
        if propagation is not None:
            if propagation not in _PROPAGATIONS:
                errs.unsupported_named(f"{base}.mountPropagation", propagation, _PROPAGATIONS)
            if propagation == "Bidirectional" and not privileged:
                errs.forbidden(f"{base}.mountPropagation",
                               "Bidirectional mount propagation is available only to privileged containers")
        rro = _str(mnt, "recursiveReadOnly")
        if rro is not None and rro != "Disabled":
            if rro in ("Enabled", "IfPossible"):
                if _get(mnt, "readOnly") is not True:
                    errs.forbidden(f"{base}.recursiveReadOnly", "may only be specified when readOnly is true")
                if propagation is not None and propagation != "None":
                    errs.forbidden(f"{base}.recursiveReadOnly",
                                   "may only be specified when mountPropagation is None or not specified")
            else:
                errs.unsupported_named(f"{base}.recursiveReadOnly", rro, _RRO_MODES)
        options = [o if isinstance(o, str) else "" for o in _seq(mnt, "bindMountOptions")]
        seen: set[str] = set()
        for j, opt in enumerate(options):
            if opt not in _BIND_OPTIONS:
                errs.unsupported(f"{where}.bindMountOptions[{j}]", opt, _BIND_OPTIONS)
            if opt in seen:
                errs.duplicate(f"{where}.bindMountOptions[{j}]", opt)
            seen.add(opt)
        if options and _get(volumes.get(name), "image") is not None:
            _invalid_json(errs, f"{where}.bindMountOptions", options,
                          "bindMountOptions may not be used with image volumes")


def check_volume_devices(errs: _Errors, c: Mapping[str, Any], path: str,
                         volumes: Mapping[str, Mapping[str, Any]]) -> None:
    """``ValidateVolumeDevices`` of the container ``c``: each a valid
    ``persistentVolumeClaim`` or ``ephemeral`` volume, unique, apart from
    the volume mounts."""
    mounts = _mount_map(_seq(c, "volumeMounts"), "mountPath")
    paths: set[str] = set()
    names: set[str] = set()
    for i, dev in enumerate(_seq(c, "volumeDevices")):
        if not isinstance(dev, Mapping):
            continue
        where = f"{path}.volumeDevices[{i}]"
        name = _str(dev, "name") or ""
        dev_path = _str(dev, "devicePath") or ""
        source = volumes.get(name)
        if not name:
            errs.required(f"{where}.name")
        if name in names:
            errs.invalid(f"{where}.name", name, "must be unique")
        if source is not None and _get(source, "persistentVolumeClaim") is None and _get(source, "ephemeral") is None:
            errs.invalid(f"{where}.name", name,
                         "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode")
        if source is None:
            errs.not_found(f"{where}.name", name)
        if not dev_path:
            errs.required(f"{where}.devicePath")
        if dev_path in paths:
            errs.invalid(f"{where}.devicePath", dev_path, "must be unique")
        if dev_path and ".." in dev_path.split("/"):
            errs.invalid(f"{where}.devicePath", dev_path, "can not contain backsteps ('..')")
        else:
            paths.add(dev_path)
        if name in mounts:
            errs.invalid(f"{where}.name", name, "must not already exist in volumeMounts")
        if dev_path in mounts.values():
            errs.invalid(f"{where}.devicePath", dev_path, "must not already exist as a path in volumeMounts")
        if name:
            names.add(name)


# ---------------------------------------------------------------- restart rules


def _rules(errs: _Errors, c: Mapping[str, Any], path: str, policy: str | None) -> None:
    """``validateContainerRestartPolicy`` (the gates on)."""
    rules = _seq(c, "restartPolicyRules")
    if policy is None:
        if not rules:
            return
        errs.required(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used")
    elif policy not in _RESTART_POLICIES:
        errs.unsupported_named(f"{path}.restartPolicy", policy, _RESTART_POLICIES)
    if len(rules) > 20:
        errs.items.append((f"{path}.restartPolicyRules", f"Too many: {len(rules)}: must have at most 20 items"))
    for i, rule in enumerate(rules):
        where = f"{path}.restartPolicyRules[{i}]"
        action = _str(rule, "action") or ""
        actions = _RULE_ACTIONS_ALL if options().restart_all else _RULE_ACTIONS_ALL[:1]
        if action not in actions:
            errs.unsupported_named(f"{where}.action", action, actions)
        codes = _get(rule, "exitCodes")
        if codes is None:
            errs.required(f"{where}.exitCodes", "must be specified")
            continue
        operator = _str(codes, "operator") or ""
        if operator not in _RULE_OPERATORS:
            errs.unsupported_named(f"{where}.exitCodes.operator", operator, _RULE_OPERATORS)
        values = _seq(codes, "values")
        if len(values) > 255:
            errs.items.append((f"{where}.exitCodes.values", f"Too many: {len(values)}: must have at most 255 items"))


def check_restart_policy(errs: _Errors, c: Mapping[str, Any], path: str, restart_rules: bool) -> None:
    """An app container's ``restartPolicy`` and ``restartPolicyRules``."""
    policy = _str(c, "restartPolicy")
    if restart_rules:
        _rules(errs, c, path, policy)
    elif policy is not None:
        errs.forbidden(f"{path}.restartPolicy", "may not be set for non-init containers")


def check_init_restart_policy(errs: _Errors, c: Mapping[str, Any], path: str, restart_rules: bool) -> None:
    """``validateInitContainerRestartPolicy``."""
    policy = _str(c, "restartPolicy")
    if policy is None:
        if _seq(c, "restartPolicyRules"):
            errs.required(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used")
        return
    if restart_rules:
        if policy != "Always" or options().restart_all:
            _rules(errs, c, path, policy)
        elif _seq(c, "restartPolicyRules"):
            errs.forbidden(f"{path}.restartPolicyRules",
                           "restartPolicyRules are not allowed for init containers with restart policy Always")
    elif policy != "Always":
        errs.unsupported_named(f"{path}.restartPolicy", policy, ("Always",))


# ---------------------------------------------------------------- the pod's fields


def check_readiness_gates(errs: _Errors, spec: Mapping[str, Any]) -> None:
    for i, gate in enumerate(_seq(spec, "readinessGates")):
        kind = _str(gate, "conditionType") or ""
        errs.each(f"spec.readinessGates[{i}].conditionType", kind, qualified_name_errors(kind))


def check_hostname_override(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validatePodHostName``."""
    name = _str(spec, "hostnameOverride")
    if name is None:
        return
    path = "spec.hostnameOverride"
    if spec.get("setHostnameAsFQDN") is True:
        errs.forbidden(path, "may not be specified when setHostnameAsFQDN is true")
    if spec.get("hostNetwork") is True:
        errs.forbidden(path, "may not be specified when hostNetwork is true")
    if go_len(name) > 64:
        errs.items.append((path, "Too long: may not be more than 64 bytes"))
    errs.each(path, name, dns_subdomain_errors(name))


# ---------------------------------------------------------------- metadata


def check_generate_name(errs: _Errors, meta: Mapping[str, Any]) -> None:
    """``generateName`` as a name prefix: a DNS subdomain once a trailing
    dash is masked (the kubelet's mask drops the character before it too)."""
    prefix = _str(meta, "generateName") or ""
    if not prefix:
        return
    masked = prefix
    if go_len(prefix) > 1 and prefix.endswith("-"):
        masked = prefix.encode("utf-8", "surrogatepass")[:-2].decode("utf-8", "replace") + "a"
    errs.each("metadata.generateName", prefix, dns_subdomain_errors(masked))


def check_generation(errs: _Errors, meta: Mapping[str, Any]) -> None:
    generation = _int(meta, "generation")
    if generation is not None and generation < 0:
        errs.invalid("metadata.generation", generation, "must be greater than or equal to 0")


def _owner(ref: Any) -> dict[str, Any]:
    """An owner reference as ``json.Marshal`` writes it."""
    out: dict[str, Any] = {k: _str(ref, k) or "" for k in ("apiVersion", "kind", "name", "uid")}
    for key in ("controller", "blockOwnerDeletion"):
        value = _get(ref, key)
        if isinstance(value, bool):
            out[key] = value
    return out


def _group_version(text: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: (group, version), None when invalid."""
    if not text or text == "/":
        return "", ""
    parts = text.split("/")
    if len(parts) == 1:
        return "", text
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def check_owners_and_finalizers(errs: _Errors, meta: Mapping[str, Any]) -> None:
    """``ValidateOwnerReferences`` and ``ValidateFinalizers`` (after the
    annotations)."""
    refs = _seq(meta, "ownerReferences")
    first_controller = ""
    for i, ref in enumerate(refs):
        where = f"metadata.ownerReferences[{i}]"
        version = _str(ref, "apiVersion") or ""
        gv = _group_version(version)
        if not version:
            errs.required(f"{where}.apiVersion", "must not be empty")
        elif gv is None or not gv[1]:
            errs.invalid(f"{where}.apiVersion", version, "must be <group>/<version> or <version>")
        for key in ("kind", "name", "uid"):
            if not _str(ref, key):
                errs.required(f"{where}.{key}", "must not be empty")
        kind = _str(ref, "kind") or ""
        if gv is not None and gv == ("", "v1") and kind == "Event":
            _invalid_json(errs, where, _owner(ref), "/v1, Kind=Event is disallowed from being an owner")
        if _get(ref, "controller") is True:
            current = f"{kind}/{_str(ref, 'name') or ''}"
            if first_controller:
                _invalid_json(errs, "metadata.ownerReferences", [_owner(r) for r in refs],
                              'Only one reference can have Controller set to true. Found "true" in references '
                              f"for {first_controller} and {current}")
            else:
                first_controller = current
    finalizers = [f if isinstance(f, str) else "" for f in _seq(meta, "finalizers")]
    for name in finalizers:
        errs.each("metadata.finalizers", name, qualified_name_errors(name))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        _invalid_json(errs, "metadata.finalizers", finalizers,
                      "finalizer orphan and foregroundDeletion cannot be both set")


_FIELD_OPERATIONS = ("Apply", "Update")


def check_managed_fields(errs: _Errors, meta: Mapping[str, Any]) -> None:
    """``ValidateManagedFields`` (after the finalizers): each entry's
    operation Apply or Update, its fields type ``FieldsV1`` when given, its
    manager at most 128 bytes of printable characters, its subresource at
    most 256 bytes."""
    for i, entry in enumerate(_seq(meta, "managedFields")):
        where = f"metadata.managedFields[{i}]"
        operation = _str(entry, "operation") or ""
        if not operation:
            errs.required(f"{where}.operation", "must not be empty")
        elif operation not in _FIELD_OPERATIONS:
            errs.unsupported_named(f"{where}.operation", operation, _FIELD_OPERATIONS)
        fields_type = _str(entry, "fieldsType") or ""
        if fields_type and fields_type != "FieldsV1":
            errs.invalid(f"{where}.fieldsType", fields_type, "must be `FieldsV1`")
        manager = _str(entry, "manager") or ""
        if go_len(manager) > 128:
            errs.items.append((f"{where}.manager", "Too long: may not be more than 128 bytes"))
        position = 0
        for ch in manager:
            if not _go_printable(ch):
                errs.invalid(f"{where}.manager", manager, f"invalid character U+{ord(ch):04X} (at position {position})")
            position += go_len(ch)
        if go_len(_str(entry, "subresource") or "") > 256:
            errs.items.append((f"{where}.subresource", "Too long: may not be more than 256 bytes"))


def _go_printable(ch: str) -> bool:
    """Go's ``unicode.IsPrint``: a letter, mark, number, punctuation,
    symbol or the ASCII space (a lone surrogate was U+FFFD to Go)."""
    if 0xD800 <= ord(ch) <= 0xDFFF:
        return True
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def check_kube_finalizers(errs: _Errors, meta: Mapping[str, Any]) -> None:
    """``validateKubeFinalizerName`` (after the whole object metadata)."""
    for i, name in enumerate(_seq(meta, "finalizers")):
        name = name if isinstance(name, str) else ""
        if "/" not in name and name not in _STANDARD_FINALIZERS:
            errs.invalid(f"metadata.finalizers[{i}]", name,
                         "name is neither a standard finalizer name nor is it fully qualified")


def check_pod_annotations(errs: _Errors, meta: Mapping[str, Any]) -> None:
    """The deletion cost of ``ValidatePodSpecificAnnotations`` (a 32-bit
    integer, no ``+`` nor leading zero)."""
    value = _map(meta, "annotations").get(_DELETION_COST)
    if not isinstance(value, str) or not options().deletion_cost:  # (PodDeletionCost off: any value)
        return
    ok = bool(value) and (value[0] == "-" or value == "0" or "1" <= value[0] <= "9")
    if ok:
        digits = value[1:] if value[0] == "-" else value
        ok = digits.isascii() and digits.isdigit() and -(2**31) <= int(value) < 2**31
    if not ok:
        errs.invalid(f"metadata.annotations[{_DELETION_COST}]", value, "must be a 32bit integer")
