"""The Go types of a v1 Pod as ``encoding/json`` decodes into them.

Pure data: k8s.io/api v0.37.2 ``core/v1`` (and metav1's ``ObjectMeta``,
``LabelSelector``, ``OwnerReference``, ``ManagedFieldsEntry``) for every
field of a pod's metadata, spec (every container field, every volume
source) and status, each a :class:`GoType` (``kind``, the name the
decoder's error gives it, its fields or element). The static-pod decoder
of ``podnuma.agent.validation`` (Go's messages) and the type check of
API-server pods (``podnuma.api.pod_types``, podnuma's field-path
messages) both read it. Every struct holds every JSON field of its Go
struct (checked against Go's reflection of ``v1.Pod``; the pod's
``TypeMeta`` aside): an unknown field is refused, or dropped, at any
depth on that ground. :data:`POINTER_FIELDS` are the fields a ``null``
sets to nil.
"""

from __future__ import annotations

__all__ = ["GoType", "POD_TYPE", "POINTER_FIELDS", "VOLUME_SOURCES", "fold_name"]

#: a volume source's JSON name -> its Go struct's name
_G_VOLUME_SOURCES = {
    "emptyDir": "EmptyDirVolumeSource", "hostPath": "HostPathVolumeSource",
    "gitRepo": "GitRepoVolumeSource", "gcePersistentDisk": "GCEPersistentDiskVolumeSource",
    "awsElasticBlockStore": "AWSElasticBlockStoreVolumeSource", "secret": "SecretVolumeSource",
    "nfs": "NFSVolumeSource", "iscsi": "ISCSIVolumeSource", "glusterfs": "GlusterfsVolumeSource",
    "flocker": "FlockerVolumeSource", "persistentVolumeClaim": "PersistentVolumeClaimVolumeSource",
    "rbd": "RBDVolumeSource", "flexVolume": "FlexVolumeSource", "cinder": "CinderVolumeSource",
    "cephfs": "CephFSVolumeSource", "downwardAPI": "DownwardAPIVolumeSource", "fc": "FCVolumeSource",
    "azureFile": "AzureFileVolumeSource", "configMap": "ConfigMapVolumeSource",
    "vsphereVolume": "VsphereVirtualDiskVolumeSource", "quobyte": "QuobyteVolumeSource",
    "azureDisk": "AzureDiskVolumeSource", "photonPersistentDisk": "PhotonPersistentDiskVolumeSource",
    "projected": "ProjectedVolumeSource", "portworxVolume": "PortworxVolumeSource",
    "scaleIO": "ScaleIOVolumeSource", "storageos": "StorageOSVolumeSource", "csi": "CSIVolumeSource",
    "ephemeral": "EphemeralVolumeSource", "image": "ImageVolumeSource",
}


class _Go:
    """A Go type of the v1 API as ``encoding/json`` decodes into it:
    ``kind`` one of ``string``, ``int``, ``intstr`` (a string or an int),
    ``bool``, ``struct``, ``slice``, ``map``, ``any`` (not checked); ``name`` as the decoder's error names it
    (a pointer by its element: ``v1.Probe`` for ``*v1.Probe``)."""

    __slots__ = ("bits", "elem", "fields", "folded", "kind", "name")

    def __init__(self, kind: str, name: str = "", *, bits: int = 0, elem: _Go | None = None,
                 fields: dict[str, tuple[_Go, str]] | None = None) -> None:
        self.kind, self.name, self.bits, self.elem = kind, name, bits, elem
        #: JSON name -> (type, the names the decoder's error stacks: an
        #: embedded struct's name first, ``VolumeSource.hostPath``)
        self.fields = fields or {}
        #: a JSON name folded (:func:`fold_name`) -> the JSON name
        #: (``encoding/json``'s case-insensitive match of a key)
        self.folded = {fold_name(k): k for k in self.fields}


def fold_name(key: str) -> str:
    """``key`` as ``encoding/json`` folds an object key to match it to a
    struct field whatever its case (Go's ``foldName``: each rune the
    smallest of its ``unicode.SimpleFold`` orbit). Exact for a comparison
    with the v1 types' field names, which are ASCII: an ASCII letter is
    upper-cased, U+017F (long s) and U+212A (Kelvin sign) fold to ``S``
    and ``K``, the only runes outside ASCII whose orbit holds an ASCII
    letter; any other rune is left as it is (it matches no field)."""
    if key.isascii():
        return key.upper()
    return "".join("S" if c == "\u017f" else "K" if c == "\u212a" else c.upper() if c.isascii() else c
                   for c in key)


def _struct(name: str, fields: dict[str, _Go], embedded: dict[str, tuple[str, _Go]] | None = None) -> _Go:
    out = {k: (t, k) for k, t in fields.items()}
    out.update({k: (t, f"{via}.{k}") for k, (via, t) in (embedded or {}).items()})
    return _Go("struct", f"v1.{name}", fields=out)


def _slice(elem: _Go) -> _Go:
    return _Go("slice", f"[]{elem.name}", elem=elem)


_G_ANY = _Go("any")
_G_STRING = _Go("string", "string")
_G_BOOL = _Go("bool", "bool")
_G_INT32 = _Go("int", "int32", bits=32)
_G_INT64 = _Go("int", "int64", bits=64)
_G_STRINGS = _Go("map", "map[string]string", elem=_G_STRING)
_G_QUANTITY = _Go("quantity", "resource.Quantity")  # (decodes itself: its error ends the decoding)
_G_RESOURCES = _Go("map", "v1.ResourceList", elem=_G_QUANTITY)
_G_TIME = _Go("time", "v1.Time")  # (metav1.Time decodes itself: its error ends the decoding)


def _alias(name: str) -> _Go:
    return _Go("string", f"v1.{name}")



def _named_struct(name: str) -> _Go:
    """A struct embedding a ``LocalObjectReference``, with ``optional``."""
    return _struct(name, {"optional": _G_BOOL}, {"name": ("LocalObjectReference", _G_STRING)})


_G_LABEL_SELECTOR = _struct("LabelSelector", {
    "matchLabels": _G_STRINGS, "matchExpressions": _slice(_struct("LabelSelectorRequirement", {
        "key": _G_STRING, "operator": _alias("LabelSelectorOperator"), "values": _slice(_G_STRING)}))})
_G_OBJECT_META_FIELDS: dict[str, _Go] = {
    "name": _G_STRING, "namespace": _G_STRING, "uid": _Go("string", "types.UID"),
    "labels": _G_STRINGS, "annotations": _G_STRINGS, "generateName": _G_STRING,
    "generation": _G_INT64, "finalizers": _slice(_G_STRING),
    "creationTimestamp": _G_TIME, "deletionTimestamp": _G_TIME,
    "ownerReferences": _slice(_struct("OwnerReference", {
        "apiVersion": _G_STRING, "kind": _G_STRING, "name": _G_STRING, "uid": _Go("string", "types.UID"),
        "controller": _G_BOOL, "blockOwnerDeletion": _G_BOOL})),
    "managedFields": _slice(_struct("ManagedFieldsEntry", {
        "manager": _G_STRING, "operation": _alias("ManagedFieldsOperationType"), "apiVersion": _G_STRING,
        "fieldsType": _G_STRING, "subresource": _G_STRING, "time": _G_TIME,
        "fieldsV1": _G_ANY})),  # (FieldsV1 decodes itself: any JSON value)
}
_G_KEY_TO_PATH = _slice(_struct("KeyToPath", {
    "key": _G_STRING, "path": _G_STRING, "mode": _G_INT32, "user": _G_INT64}))
_G_DOWNWARD_FILES = _slice(_struct("DownwardAPIVolumeFile", {
    "path": _G_STRING, "mode": _G_INT32, "user": _G_INT64,
    "fieldRef": _struct("ObjectFieldSelector", {"apiVersion": _G_STRING, "fieldPath": _G_STRING}),
    "resourceFieldRef": _struct("ResourceFieldSelector", {
        "containerName": _G_STRING, "resource": _G_STRING, "divisor": _G_QUANTITY})}))
_G_MODES = {"defaultMode": _G_INT32, "defaultUser": _G_INT64}
_G_SECRET_REF = _struct("LocalObjectReference", {"name": _G_STRING})
# (the fields podnuma.agent.validation_volumes checks)
_G_SOURCE_FIELDS: dict[str, dict[str, _Go]] = {
    "emptyDir": {"medium": _alias("StorageMedium"), "sizeLimit": _G_QUANTITY, "mode": _G_INT32},
    "hostPath": {"path": _G_STRING, "type": _alias("HostPathType")},
    "gitRepo": {"repository": _G_STRING, "directory": _G_STRING, "revision": _G_STRING},
    "gcePersistentDisk": {"pdName": _G_STRING, "partition": _G_INT32},
    "awsElasticBlockStore": {"volumeID": _G_STRING, "partition": _G_INT32},
    "secret": {"secretName": _G_STRING, "items": _G_KEY_TO_PATH, **_G_MODES},
    "nfs": {"server": _G_STRING, "path": _G_STRING},
    "glusterfs": {"endpoints": _G_STRING, "path": _G_STRING},
    "flocker": {"datasetName": _G_STRING, "datasetUUID": _G_STRING},
    "persistentVolumeClaim": {"claimName": _G_STRING},
    "rbd": {"monitors": _slice(_G_STRING), "image": _G_STRING, "secretRef": _G_SECRET_REF},
    "cinder": {"volumeID": _G_STRING, "secretRef": _G_SECRET_REF},
    "cephfs": {"monitors": _slice(_G_STRING), "secretRef": _G_SECRET_REF},
    "downwardAPI": {"items": _G_DOWNWARD_FILES, **_G_MODES},
    "fc": {"targetWWNs": _slice(_G_STRING), "wwids": _slice(_G_STRING), "lun": _G_INT32},
    "flexVolume": {"driver": _G_STRING, "options": _G_STRINGS, "secretRef": _G_SECRET_REF},
    "azureFile": {"secretName": _G_STRING, "shareName": _G_STRING},
    "vsphereVolume": {"volumePath": _G_STRING}, "photonPersistentDisk": {"pdID": _G_STRING},
    "portworxVolume": {"volumeID": _G_STRING},
    "scaleIO": {"gateway": _G_STRING, "system": _G_STRING, "volumeName": _G_STRING, "secretRef": _G_SECRET_REF},
    "storageos": {"volumeName": _G_STRING, "volumeNamespace": _G_STRING, "secretRef": _G_SECRET_REF},
    "csi": {"driver": _G_STRING, "nodePublishSecretRef": _G_SECRET_REF},
    "image": {"reference": _G_STRING, "pullPolicy": _alias("PullPolicy")},
    "iscsi": {"targetPortal": _G_STRING, "iqn": _G_STRING, "lun": _G_INT32, "iscsiInterface": _G_STRING,
              "fsType": _G_STRING, "readOnly": _G_BOOL, "portals": _slice(_G_STRING),
              "chapAuthDiscovery": _G_BOOL, "chapAuthSession": _G_BOOL, "secretRef": _G_SECRET_REF,
              "initiatorName": _G_STRING},
    "quobyte": {"registry": _G_STRING, "volume": _G_STRING, "readOnly": _G_BOOL, "user": _G_STRING,
                "group": _G_STRING, "tenant": _G_STRING},
    "azureDisk": {"diskName": _G_STRING, "diskURI": _G_STRING, "cachingMode": _alias("AzureDataDiskCachingMode"),
                  "fsType": _G_STRING, "readOnly": _G_BOOL, "kind": _alias("AzureDataDiskKind")},
    "ephemeral": {"volumeClaimTemplate": _struct("PersistentVolumeClaimTemplate", {
        "metadata": _struct("ObjectMeta", {
            **_G_OBJECT_META_FIELDS, "selfLink": _G_STRING, "resourceVersion": _G_STRING,
            "deletionGracePeriodSeconds": _G_INT64}),
        "spec": _struct("PersistentVolumeClaimSpec", {
            "accessModes": _slice(_alias("PersistentVolumeAccessMode")), "selector": _G_LABEL_SELECTOR,
            "volumeMode": _alias("PersistentVolumeMode"), "volumeName": _G_STRING, "storageClassName": _G_STRING,
            "volumeAttributesClassName": _G_STRING,
            "dataSource": _struct("TypedLocalObjectReference", {
                "apiGroup": _G_STRING, "kind": _G_STRING, "name": _G_STRING}),
            "dataSourceRef": _struct("TypedObjectReference", {
                "apiGroup": _G_STRING, "kind": _G_STRING, "name": _G_STRING, "namespace": _G_STRING}),
            "resources": _struct("VolumeResourceRequirements", {
                "limits": _G_RESOURCES, "requests": _G_RESOURCES})})})},
    "projected": {"sources": _slice(_struct("VolumeProjection", {
        "secret": _struct("SecretProjection", {"items": _G_KEY_TO_PATH, "optional": _G_BOOL},
                          {"name": ("LocalObjectReference", _G_STRING)}),
        "configMap": _struct("ConfigMapProjection", {"items": _G_KEY_TO_PATH, "optional": _G_BOOL},
                             {"name": ("LocalObjectReference", _G_STRING)}),
        "downwardAPI": _struct("DownwardAPIProjection", {"items": _G_DOWNWARD_FILES}),
        "serviceAccountToken": _struct("ServiceAccountTokenProjection", {
            "audience": _G_STRING, "expirationSeconds": _G_INT64, "path": _G_STRING, "user": _G_INT64}),
        "clusterTrustBundle": _struct("ClusterTrustBundleProjection", {
            "name": _G_STRING, "signerName": _G_STRING, "labelSelector": _G_LABEL_SELECTOR, "optional": _G_BOOL,
            "path": _G_STRING, "user": _G_INT64}),
        "podCertificate": _struct("PodCertificateProjection", {
            "signerName": _G_STRING, "keyType": _G_STRING, "maxExpirationSeconds": _G_INT32,
            "credentialBundlePath": _G_STRING, "keyPath": _G_STRING, "certificateChainPath": _G_STRING,
            "userAnnotations": _G_STRINGS, "user": _G_INT64}),
    })), **_G_MODES},
}
# (the sources' other fields, decoded for their type: k8s.io/api v0.37.2
# core/v1, the fields the checks above do not read)
_G_SOURCE_MORE: dict[str, dict[str, _Go]] = {
    "awsElasticBlockStore": {"fsType": _G_STRING, "readOnly": _G_BOOL},
    "azureFile": {"readOnly": _G_BOOL},
    "cephfs": {"path": _G_STRING, "readOnly": _G_BOOL, "secretFile": _G_STRING, "user": _G_STRING},
    "cinder": {"fsType": _G_STRING, "readOnly": _G_BOOL},
    "csi": {"fsType": _G_STRING, "readOnly": _G_BOOL, "volumeAttributes": _G_STRINGS},
    "fc": {"fsType": _G_STRING, "readOnly": _G_BOOL},
    "flexVolume": {"fsType": _G_STRING, "readOnly": _G_BOOL},
    "gcePersistentDisk": {"fsType": _G_STRING, "readOnly": _G_BOOL},
    "glusterfs": {"readOnly": _G_BOOL},
    "nfs": {"readOnly": _G_BOOL},
    "persistentVolumeClaim": {"readOnly": _G_BOOL},
    "photonPersistentDisk": {"fsType": _G_STRING},
    "portworxVolume": {"fsType": _G_STRING, "readOnly": _G_BOOL},
    "rbd": {"fsType": _G_STRING, "keyring": _G_STRING, "pool": _G_STRING, "readOnly": _G_BOOL, "user": _G_STRING},
    "scaleIO": {"fsType": _G_STRING, "protectionDomain": _G_STRING, "readOnly": _G_BOOL, "sslEnabled": _G_BOOL,
                "storageMode": _G_STRING, "storagePool": _G_STRING},
    "secret": {"optional": _G_BOOL},
    "storageos": {"fsType": _G_STRING, "readOnly": _G_BOOL},
    "vsphereVolume": {"fsType": _G_STRING, "storagePolicyID": _G_STRING, "storagePolicyName": _G_STRING},
}
for _source, _more in _G_SOURCE_MORE.items():
    _G_SOURCE_FIELDS[_source] = {**_more, **_G_SOURCE_FIELDS.get(_source, {})}
_G_VOLUME = _struct("Volume", {"name": _G_STRING}, {
    k: ("VolumeSource", _struct(t, {"items": _G_KEY_TO_PATH, "optional": _G_BOOL, **_G_MODES},
                                {"name": ("LocalObjectReference", _G_STRING)})
        if k == "configMap" else _struct(t, _G_SOURCE_FIELDS.get(k, {})))
    for k, t in _G_VOLUME_SOURCES.items()
})
_G_REQUIREMENTS = _struct("ResourceRequirements", {
    "limits": _G_RESOURCES, "requests": _G_RESOURCES, "claims": _slice(_struct("ResourceClaim", {"name": _G_STRING, "request": _G_STRING}))})
# (the fields podnuma.agent.validation_container checks; a port is an
# IntOrString: a string or an int32)
_G_INT_OR_STRING = _Go("intstr", "int32", bits=32)
_G_EXEC = _struct("ExecAction", {"command": _slice(_G_STRING)})
_G_HTTP_GET = _struct("HTTPGetAction", {
    "path": _G_STRING, "port": _G_INT_OR_STRING, "host": _G_STRING, "scheme": _alias("URIScheme"),
    "httpHeaders": _slice(_struct("HTTPHeader", {"name": _G_STRING, "value": _G_STRING})),
    "protocol": _alias("HTTPProtocol")})
_G_TCP_SOCKET = _struct("TCPSocketAction", {"port": _G_INT_OR_STRING, "host": _G_STRING})
_G_PROBE = _struct("Probe", {
    "initialDelaySeconds": _G_INT32, "timeoutSeconds": _G_INT32, "periodSeconds": _G_INT32,
    "successThreshold": _G_INT32, "failureThreshold": _G_INT32, "terminationGracePeriodSeconds": _G_INT64,
}, {
    "exec": ("ProbeHandler", _G_EXEC),
    "httpGet": ("ProbeHandler", _G_HTTP_GET),
    "tcpSocket": ("ProbeHandler", _G_TCP_SOCKET),
    "grpc": ("ProbeHandler", _struct("GRPCAction", {
        "port": _G_INT32, "service": _G_STRING, "mode": _alias("GRPCProbeMode")})),
})
_G_LIFECYCLE_HANDLER = _struct("LifecycleHandler", {
    "exec": _G_EXEC, "httpGet": _G_HTTP_GET, "tcpSocket": _G_TCP_SOCKET,
    "sleep": _struct("SleepAction", {"seconds": _G_INT64})})
_G_LIFECYCLE = _struct("Lifecycle", {
    "postStart": _G_LIFECYCLE_HANDLER, "preStop": _G_LIFECYCLE_HANDLER, "stopSignal": _alias("Signal")})


def _key_selector(name: str) -> _Go:
    return _struct(name, {"key": _G_STRING, "optional": _G_BOOL}, {"name": ("LocalObjectReference", _G_STRING)})


_G_ENV_SOURCE = _struct("EnvVarSource", {
    "fieldRef": _struct("ObjectFieldSelector", {"apiVersion": _G_STRING, "fieldPath": _G_STRING}),
    "resourceFieldRef": _struct("ResourceFieldSelector", {
        "containerName": _G_STRING, "resource": _G_STRING, "divisor": _G_QUANTITY}),
    "configMapKeyRef": _key_selector("ConfigMapKeySelector"),
    "secretKeyRef": _key_selector("SecretKeySelector"),
    "fileKeyRef": _struct("FileKeySelector", {
        "volumeName": _G_STRING, "path": _G_STRING, "key": _G_STRING, "optional": _G_BOOL}),
})
_G_RESIZE_POLICY = _slice(_struct("ContainerResizePolicy", {
    "resourceName": _alias("ResourceName"), "restartPolicy": _alias("ResourceResizeRestartPolicy")}))
# (the fields podnuma.agent.validation_security checks)
_G_PROFILE = {"type": _G_STRING, "localhostProfile": _G_STRING}
_G_SECURITY_SHARED = {
    "seLinuxOptions": _struct("SELinuxOptions", {k: _G_STRING for k in ("user", "role", "type", "level")}),
    "windowsOptions": _struct("WindowsSecurityContextOptions", {
        "gmsaCredentialSpecName": _G_STRING, "gmsaCredentialSpec": _G_STRING, "runAsUserName": _G_STRING,
        "hostProcess": _G_BOOL}),
    "runAsUser": _G_INT64, "runAsGroup": _G_INT64, "runAsNonRoot": _G_BOOL,
    "seccompProfile": _struct("SeccompProfile", {**_G_PROFILE, "type": _alias("SeccompProfileType")}),
    "appArmorProfile": _struct("AppArmorProfile", {**_G_PROFILE, "type": _alias("AppArmorProfileType")}),
}
_G_CONTAINER_SECURITY = {
    "securityContext": _struct("SecurityContext", {
        **_G_SECURITY_SHARED,
        "capabilities": _struct("Capabilities", {
            "add": _slice(_alias("Capability")), "drop": _slice(_alias("Capability"))}),
        "privileged": _G_BOOL, "readOnlyRootFilesystem": _G_BOOL, "allowPrivilegeEscalation": _G_BOOL,
        "procMount": _alias("ProcMountType")}),
    "volumeDevices": _slice(_struct("VolumeDevice", {"name": _G_STRING, "devicePath": _G_STRING})),
}
_G_SECURITY = {
    "securityContext": _struct("PodSecurityContext", {
        **_G_SECURITY_SHARED,
        "supplementalGroups": _slice(_G_INT64), "supplementalGroupsPolicy": _alias("SupplementalGroupsPolicy"),
        "fsGroup": _G_INT64, "sysctls": _slice(_struct("Sysctl", {"name": _G_STRING, "value": _G_STRING})),
        "fsGroupChangePolicy": _alias("PodFSGroupChangePolicy"),
        "seLinuxChangePolicy": _alias("PodSELinuxChangePolicy")}),
    "hostUsers": _G_BOOL, "hostPID": _G_BOOL, "hostIPC": _G_BOOL, "shareProcessNamespace": _G_BOOL,
}
_G_CONTAINER = _struct("Container", {
    **_G_CONTAINER_SECURITY,
    "name": _G_STRING, "image": _G_STRING, "imagePullPolicy": _alias("PullPolicy"),
    "command": _slice(_G_STRING), "args": _slice(_G_STRING), "workingDir": _G_STRING,
    "terminationMessagePath": _G_STRING, "stdin": _G_BOOL, "stdinOnce": _G_BOOL, "tty": _G_BOOL,
    "terminationMessagePolicy": _alias("TerminationMessagePolicy"),
    "restartPolicy": _alias("ContainerRestartPolicy"),
    "ports": _slice(_struct("ContainerPort", {
        "name": _G_STRING, "hostPort": _G_INT32, "containerPort": _G_INT32,
        "protocol": _alias("Protocol"), "hostIP": _G_STRING})),
    "env": _slice(_struct("EnvVar", {"name": _G_STRING, "value": _G_STRING, "valueFrom": _G_ENV_SOURCE})),
    "envFrom": _slice(_struct("EnvFromSource", {
        "prefix": _G_STRING, "configMapRef": _named_struct("ConfigMapEnvSource"), "secretRef": _named_struct("SecretEnvSource")})),
    "volumeMounts": _slice(_struct("VolumeMount", {
        "name": _G_STRING, "mountPath": _G_STRING, "readOnly": _G_BOOL,
        "recursiveReadOnly": _alias("RecursiveReadOnlyMode"), "subPath": _G_STRING,
        "mountPropagation": _alias("MountPropagationMode"), "subPathExpr": _G_STRING,
        "bindMountOptions": _slice(_G_STRING)})),
    "restartPolicyRules": _slice(_struct("ContainerRestartRule", {
        "action": _alias("ContainerRestartRuleAction"),
        "exitCodes": _struct("ContainerRestartRuleOnExitCodes", {
            "operator": _alias("ContainerRestartRuleOnExitCodesOperator"), "values": _slice(_G_INT32)})})),
    "resources": _G_REQUIREMENTS,
    "livenessProbe": _G_PROBE, "readinessProbe": _G_PROBE, "startupProbe": _G_PROBE,
    "lifecycle": _G_LIFECYCLE, "resizePolicy": _G_RESIZE_POLICY,
})
# (an ephemeral container: the container's fields, embedded, and its target)
_G_EPHEMERAL_CONTAINER = _struct("EphemeralContainer", {"targetContainerName": _G_STRING}, {
    k: ("EphemeralContainerCommon", t) for k, (t, _) in _G_CONTAINER.fields.items()})
# (the fields podnuma.agent.validation_scheduling checks)
_G_NODE_SELECTOR_REQUIREMENTS = _slice(_struct("NodeSelectorRequirement", {
    "key": _G_STRING, "operator": _alias("NodeSelectorOperator"), "values": _slice(_G_STRING)}))
_G_NODE_SELECTOR_TERM = _struct("NodeSelectorTerm", {
    "matchExpressions": _G_NODE_SELECTOR_REQUIREMENTS, "matchFields": _G_NODE_SELECTOR_REQUIREMENTS})
_G_POD_AFFINITY_TERM = _struct("PodAffinityTerm", {
    "labelSelector": _G_LABEL_SELECTOR, "namespaces": _slice(_G_STRING), "topologyKey": _G_STRING,
    "namespaceSelector": _G_LABEL_SELECTOR, "matchLabelKeys": _slice(_G_STRING),
    "mismatchLabelKeys": _slice(_G_STRING)})
_G_POD_AFFINITY_TERMS = {
    "requiredDuringSchedulingIgnoredDuringExecution": _slice(_G_POD_AFFINITY_TERM),
    "preferredDuringSchedulingIgnoredDuringExecution": _slice(_struct("WeightedPodAffinityTerm", {
        "weight": _G_INT32, "podAffinityTerm": _G_POD_AFFINITY_TERM}))}
_G_SCHEDULING = {
    "tolerations": _slice(_struct("Toleration", {
        "key": _G_STRING, "operator": _alias("TolerationOperator"), "value": _G_STRING,
        "effect": _alias("TaintEffect"), "tolerationSeconds": _G_INT64})),
    "affinity": _struct("Affinity", {
        "nodeAffinity": _struct("NodeAffinity", {
            "requiredDuringSchedulingIgnoredDuringExecution": _struct("NodeSelector", {
                "nodeSelectorTerms": _slice(_G_NODE_SELECTOR_TERM)}),
            "preferredDuringSchedulingIgnoredDuringExecution": _slice(_struct("PreferredSchedulingTerm", {
                "weight": _G_INT32, "preference": _G_NODE_SELECTOR_TERM}))}),
        "podAffinity": _struct("PodAffinity", _G_POD_AFFINITY_TERMS),
        "podAntiAffinity": _struct("PodAntiAffinity", _G_POD_AFFINITY_TERMS)}),
    "topologySpreadConstraints": _slice(_struct("TopologySpreadConstraint", {
        "maxSkew": _G_INT32, "topologyKey": _G_STRING,
        "whenUnsatisfiable": _alias("UnsatisfiableConstraintAction"), "labelSelector": _G_LABEL_SELECTOR,
        "minDomains": _G_INT32, "nodeAffinityPolicy": _alias("NodeInclusionPolicy"),
        "nodeTaintsPolicy": _alias("NodeInclusionPolicy"), "matchLabelKeys": _slice(_G_STRING)})),
    "os": _struct("PodOS", {"name": _alias("OSName")}),
    "runtimeClassName": _G_STRING, "preemptionPolicy": _alias("PreemptionPolicy"),
    "dnsConfig": _struct("PodDNSConfig", {
        "nameservers": _slice(_G_STRING), "searches": _slice(_G_STRING),
        "options": _slice(_struct("PodDNSConfigOption", {"name": _G_STRING, "value": _G_STRING}))}),
    "hostAliases": _slice(_struct("HostAlias", {"ip": _G_STRING, "hostnames": _slice(_G_STRING)})),
}
# (a pod's status: the kubelet's decoder reads it, so a value of the wrong
# type there refuses the manifest as anywhere else; k8s.io/api v0.37.2
# core/v1 ``PodStatus``: its fields, and those below them that a test
# reaches, a struct without fields taking any fields it holds)
_G_CONTAINER_STATE = _struct("ContainerState", {
    "waiting": _struct("ContainerStateWaiting", {"reason": _G_STRING, "message": _G_STRING}),
    "running": _struct("ContainerStateRunning", {"startedAt": _G_TIME}),
    "terminated": _struct("ContainerStateTerminated", {
        "exitCode": _G_INT32, "signal": _G_INT32, "reason": _G_STRING, "message": _G_STRING,
        "startedAt": _G_TIME, "finishedAt": _G_TIME, "containerID": _G_STRING})})
_G_CONTAINER_STATUSES = _slice(_struct("ContainerStatus", {
    "name": _G_STRING, "state": _G_CONTAINER_STATE, "lastState": _G_CONTAINER_STATE, "ready": _G_BOOL,
    "restartCount": _G_INT32, "image": _G_STRING, "imageID": _G_STRING, "containerID": _G_STRING,
    "started": _G_BOOL, "allocatedResources": _G_RESOURCES, "resources": _G_REQUIREMENTS,
    "volumeMounts": _slice(_struct("VolumeMountStatus", {
        "name": _G_STRING, "mountPath": _G_STRING, "readOnly": _G_BOOL,
        "recursiveReadOnly": _alias("RecursiveReadOnlyMode"), "volumeStatus": _struct("VolumeStatus", {
            "image": _struct("ImageVolumeStatus", {"imageRef": _G_STRING})})})),
    "user": _struct("ContainerUser", {"linux": _struct("LinuxContainerUser", {
        "uid": _G_INT64, "gid": _G_INT64, "supplementalGroups": _slice(_G_INT64)})}),
    "allocatedResourcesStatus": _slice(_struct("ResourceStatus", {
        "name": _alias("ResourceName"), "resources": _slice(_struct("ResourceHealth", {
            "resourceID": _alias("ResourceID"), "health": _alias("ResourceHealthStatus"),
            "message": _G_STRING}))})),
    "stopSignal": _alias("Signal")}))
_G_POD_STATUS = _struct("PodStatus", {
    "observedGeneration": _G_INT64, "phase": _alias("PodPhase"),
    "conditions": _slice(_struct("PodCondition", {
        "type": _alias("PodConditionType"), "observedGeneration": _G_INT64, "status": _alias("ConditionStatus"),
        "lastProbeTime": _G_TIME, "lastTransitionTime": _G_TIME, "reason": _G_STRING, "message": _G_STRING})),
    "message": _G_STRING, "reason": _G_STRING, "nominatedNodeName": _G_STRING, "hostIP": _G_STRING,
    "hostIPs": _slice(_struct("HostIP", {"ip": _G_STRING})), "podIP": _G_STRING,
    "podIPs": _slice(_struct("PodIP", {"ip": _G_STRING})), "startTime": _G_TIME,
    "initContainerStatuses": _G_CONTAINER_STATUSES, "containerStatuses": _G_CONTAINER_STATUSES,
    "qosClass": _alias("PodQOSClass"), "ephemeralContainerStatuses": _G_CONTAINER_STATUSES,
    "resize": _alias("PodResizeStatus"),
    "resourceClaimStatuses": _slice(_struct("PodResourceClaimStatus", {
        "name": _G_STRING, "resourceClaimName": _G_STRING})),
    "extendedResourceClaimStatus": _struct("PodExtendedResourceClaimStatus", {
        "requestMappings": _slice(_struct("ContainerExtendedResourceRequest", {
            "containerName": _G_STRING, "resourceName": _G_STRING, "requestName": _G_STRING})),
        "resourceClaimName": _G_STRING}),
    "allocatedResources": _G_RESOURCES, "resources": _G_REQUIREMENTS,
    "nodeAllocatableResourceClaimStatuses": _slice(_struct("NodeAllocatableResourceClaimStatus", {
        "resourceClaimName": _G_STRING, "containers": _slice(_G_STRING),
        "mapping": _slice(_struct("NodeAllocatableMappedResources", {
            "name": _alias("ResourceName"), "quantity": _G_QUANTITY})),
        "overhead": _slice(_struct("NodeAllocatableOverheadResources", {
            "name": _alias("ResourceName"), "perPod": _G_QUANTITY, "perContainer": _G_QUANTITY}))})),
    "volumeHealth": _slice(_struct("PodVolumeHealth", {
        "name": _G_STRING, "healthConditions": _slice(_struct("VolumeHealthCondition", {
            "status": _alias("VolumeHealthStatusType"), "reason": _G_STRING, "message": _G_STRING})),
        "lastTransitionTime": _G_TIME})),
})
_G_POD = _struct("Pod", {
    "metadata": _struct("ObjectMeta", {
        **_G_OBJECT_META_FIELDS, "selfLink": _G_STRING, "resourceVersion": _G_STRING,
        "deletionGracePeriodSeconds": _G_INT64}),
    "status": _G_POD_STATUS,
    "spec": _struct("PodSpec", {
        "volumes": _slice(_G_VOLUME), "initContainers": _slice(_G_CONTAINER),
        "containers": _slice(_G_CONTAINER),
        "ephemeralContainers": _slice(_G_EPHEMERAL_CONTAINER),
        "restartPolicy": _alias("RestartPolicy"), "activeDeadlineSeconds": _G_INT64,
        "terminationGracePeriodSeconds": _G_INT64,
        "dnsPolicy": _alias("DNSPolicy"), "nodeSelector": _G_STRINGS, "hostNetwork": _G_BOOL,
        "hostname": _G_STRING, "subdomain": _G_STRING, "priorityClassName": _G_STRING,
        "hostnameOverride": _G_STRING, "setHostnameAsFQDN": _G_BOOL,
        "readinessGates": _slice(_struct("PodReadinessGate", {"conditionType": _alias("PodConditionType")})),
        "schedulingGates": _slice(_struct("PodSchedulingGate", {"name": _G_STRING})),
        "nodeName": _G_STRING, "serviceAccountName": _G_STRING, "serviceAccount": _G_STRING,
        "imagePullSecrets": _slice(_struct("LocalObjectReference", {"name": _G_STRING})),
        "resourceClaims": _slice(_struct("PodResourceClaim", {
            "name": _G_STRING, "resourceClaimName": _G_STRING, "resourceClaimTemplateName": _G_STRING})),
        "resources": _G_REQUIREMENTS, "overhead": _G_RESOURCES,
        "automountServiceAccountToken": _G_BOOL, "schedulerName": _G_STRING, "priority": _G_INT32,
        "enableServiceLinks": _G_BOOL, "schedulingGroup": _struct("PodSchedulingGroup", {"podGroupName": _G_STRING}),
        "evictionResponders": _slice(_struct("EvictionResponder", {"name": _G_STRING, "priority": _G_INT32})),
        **_G_SCHEDULING,
        **_G_SECURITY,
    }),
})

#: the pointer fields of the v1 Pod's structs (k8s.io/api v0.37.2
#: ``core/v1``, metav1's ``ObjectMeta``...), by the Go struct that declares
#: them (an embedded struct's own name: ``ProbeHandler``,
#: ``EphemeralContainerCommon``): a ``null`` sets such a field to nil, as
#: it does a slice, a map, a ``metav1.Time`` or a quantity; any other
#: field (a plain string, bool or integer, a struct held by value:
#: ``metadata``, ``spec``, a container's ``resources``) keeps what it held
#: (``encoding/json``, a key given twice in different cases)
_G_POINTERS: dict[str, str] = {
    "Affinity": "nodeAffinity podAffinity podAntiAffinity",
    "AppArmorProfile": "localhostProfile",
    "AzureDiskVolumeSource": "cachingMode fsType kind readOnly",
    "CSIVolumeSource": "fsType nodePublishSecretRef readOnly",
    "CephFSVolumeSource": "secretRef",
    "CinderVolumeSource": "secretRef",
    "ClusterTrustBundleProjection": "labelSelector name optional signerName user",
    "ConfigMapEnvSource": "optional",
    "ConfigMapKeySelector": "optional",
    "ConfigMapProjection": "optional",
    "ConfigMapVolumeSource": "defaultMode defaultUser optional",
    "Container": "lifecycle livenessProbe readinessProbe restartPolicy securityContext startupProbe",
    "ContainerRestartRule": "exitCodes",
    "ContainerState": "running terminated waiting",
    "ContainerStatus": "resources started stopSignal user",
    "ContainerUser": "linux",
    "DownwardAPIVolumeFile": "fieldRef mode resourceFieldRef user",
    "DownwardAPIVolumeSource": "defaultMode defaultUser",
    "EmptyDirVolumeSource": "mode sizeLimit",
    "EnvFromSource": "configMapRef secretRef",
    "EnvVar": "valueFrom",
    "EnvVarSource": "configMapKeyRef fieldRef fileKeyRef resourceFieldRef secretKeyRef",
    "EphemeralContainerCommon": "lifecycle livenessProbe readinessProbe restartPolicy securityContext startupProbe",
    "EphemeralVolumeSource": "volumeClaimTemplate",
    "EvictionResponder": "priority",
    "FCVolumeSource": "lun",
    "FileKeySelector": "optional",
    "FlexVolumeSource": "secretRef",
    "GRPCAction": "mode service",
    "HTTPGetAction": "protocol",
    "HostPathVolumeSource": "type",
    "ISCSIVolumeSource": "initiatorName secretRef",
    "KeyToPath": "mode user",
    "Lifecycle": "postStart preStop stopSignal",
    "LifecycleHandler": "exec httpGet sleep tcpSocket",
    "ManagedFieldsEntry": "fieldsV1 time",
    "NodeAffinity": "requiredDuringSchedulingIgnoredDuringExecution",
    "NodeAllocatableMappedResources": "quantity",
    "NodeAllocatableOverheadResources": "perContainer perPod",
    "ObjectMeta": "deletionGracePeriodSeconds deletionTimestamp",
    "OwnerReference": "blockOwnerDeletion controller",
    "PersistentVolumeClaimSpec": "dataSource dataSourceRef selector storageClassName volumeAttributesClassName volumeMode",
    "PodAffinityTerm": "labelSelector namespaceSelector",
    "PodCertificateProjection": "maxExpirationSeconds user",
    "PodDNSConfigOption": "value",
    "PodResourceClaim": "resourceClaimName resourceClaimTemplateName",
    "PodResourceClaimStatus": "resourceClaimName",
    "PodSchedulingGroup": "podGroupName",
    "PodSecurityContext": "appArmorProfile fsGroup fsGroupChangePolicy runAsGroup runAsNonRoot runAsUser seLinuxChangePolicy seLinuxOptions seccompProfile supplementalGroupsPolicy windowsOptions",
    "PodSpec": "activeDeadlineSeconds affinity automountServiceAccountToken dnsConfig enableServiceLinks hostUsers hostnameOverride os preemptionPolicy priority resources runtimeClassName schedulingGroup securityContext setHostnameAsFQDN shareProcessNamespace terminationGracePeriodSeconds",
    "PodStatus": "extendedResourceClaimStatus resources startTime",
    "Probe": "terminationGracePeriodSeconds",
    "ProbeHandler": "exec grpc httpGet tcpSocket",
    "ProjectedVolumeSource": "defaultMode defaultUser",
    "RBDVolumeSource": "secretRef",
    "ResourceHealth": "message",
    "ScaleIOVolumeSource": "secretRef",
    "SeccompProfile": "localhostProfile",
    "SecretEnvSource": "optional",
    "SecretKeySelector": "optional",
    "SecretProjection": "optional",
    "SecretVolumeSource": "defaultMode defaultUser optional",
    "SecurityContext": "allowPrivilegeEscalation appArmorProfile capabilities privileged procMount readOnlyRootFilesystem runAsGroup runAsNonRoot runAsUser seLinuxOptions seccompProfile windowsOptions",
    "ServiceAccountTokenProjection": "expirationSeconds user",
    "StorageOSVolumeSource": "secretRef",
    "Toleration": "tolerationSeconds",
    "TopologySpreadConstraint": "labelSelector minDomains nodeAffinityPolicy nodeTaintsPolicy",
    "TypedLocalObjectReference": "apiGroup",
    "TypedObjectReference": "apiGroup namespace",
    "VolumeMount": "mountPropagation recursiveReadOnly",
    "VolumeMountStatus": "recursiveReadOnly volumeStatus",
    "VolumeProjection": "clusterTrustBundle configMap downwardAPI podCertificate secret serviceAccountToken",
    "VolumeSource": "awsElasticBlockStore azureDisk azureFile cephfs cinder configMap csi downwardAPI emptyDir ephemeral fc flexVolume flocker gcePersistentDisk gitRepo glusterfs hostPath image iscsi nfs persistentVolumeClaim photonPersistentDisk portworxVolume projected quobyte rbd scaleIO secret storageos vsphereVolume",
    "VolumeStatus": "image",
    "WindowsSecurityContextOptions": "gmsaCredentialSpec gmsaCredentialSpecName hostProcess runAsUserName",
}
POINTER_FIELDS = frozenset(f"{s}.{f}" for s, fs in _G_POINTERS.items() for f in fs.split())

GoType = _Go
POD_TYPE = _G_POD
VOLUME_SOURCES = _G_VOLUME_SOURCES
