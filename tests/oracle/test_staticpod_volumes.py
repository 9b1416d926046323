"""Volume sources, volume mounts and devices, restart rules and the pod's
other odd fields of a static pod against the kubelet's file source
(``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
pkg/kubelet/config/common.go, ``ValidatePodCreate`` after the v1
defaults; ``podnuma.agent.validation_volumes``) and the Go decoder's
words for a value of the wrong type there.

Every manifest goes through the oracle and through podnuma: both accept
it, or both refuse it with the phrase given and the kubelet's whole
message (every error, in its order).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle.staticpod_cases import assert_as_the_kubelet, decoded_cases
from tests.oracle.test_staticpod_differential import HEAD

_UNMARSHAL = "couldn't parse as pod(json: cannot unmarshal "
_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_HOST_PATH_TYPES = ('supported values: "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", '
                    '"FileOrCreate", "Socket"')
_VOLUME_FIELDS = ('supported values: "metadata.annotations", "metadata.labels", "metadata.name", '
                  '"metadata.namespace", "metadata.uid"')


def _vols(volumes: str, body: str = "", spec: str = "", meta: str = "{name: web}") -> str:
    """A pod with the volumes ``volumes`` (one flow mapping a line), one
    app container ``c`` (``body``: its further fields) and the spec fields
    ``spec``."""
    vols = "".join(f"  - {line}\n" for line in volumes.splitlines())
    extra = "".join(f"  {line}\n" for line in spec.splitlines())
    fields = "".join(f"    {line}\n" for line in body.splitlines())
    return (HEAD + f"metadata: {meta}\nspec:\n" + extra + ("  volumes:\n" + vols if vols else "")
            + "  containers:\n  - name: c\n    image: nginx\n" + fields)


def _init(body: str) -> str:
    fields = "".join(f"    {line}\n" for line in body.splitlines())
    return (HEAD + "metadata: {name: web}\nspec:\n  containers: [{name: c, image: nginx}]\n"
            "  initContainers:\n  - name: i\n    image: busybox\n" + fields)


V = "spec.volumes[0]"
C = "spec.containers[0]"
I = "spec.initContainers[0]"  # noqa: E741
M = f"{C}.volumeMounts"

#: name -> (manifest text, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    # ---- emptyDir and hostPath
    "empty-dir-accepted.yaml": (_vols("{name: a, emptyDir: {medium: Memory, sizeLimit: 1Gi, mode: 01777}}",
                                      "volumeMounts: [{name: a, mountPath: /a}]"), None),
    "empty-dir-negative-size.yaml": (_vols("{name: a, emptyDir: {sizeLimit: '-1Mi'}}"),
                                     f"{V}.emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource "
                                     "quantity"),
    "empty-dir-mode-too-big.yaml": (_vols("{name: a, emptyDir: {mode: 2048}}"),
                                    f"{V}.emptyDir.mode: Invalid value: 2048: must be a number between 0 and 01777 "
                                    "(octal), both inclusive"),
    "empty-dir-size-not-quantity.yaml": (_vols("{name: a, emptyDir: {sizeLimit: lots}}"),
                                         "couldn't parse as pod(quantities must match the regular expression"),
    "empty-dir-medium-number.yaml": (_vols("{name: a, emptyDir: {medium: 1}}"),
                                     _UNMARSHAL + "number into Go struct field EmptyDirVolumeSource.spec.volumes."
                                     "VolumeSource.emptyDir.medium of type v1.StorageMedium"),
    "host-path-accepted.yaml": (_vols("{name: a, hostPath: {path: /var/log/..x, type: DirectoryOrCreate}}"), None),
    "host-path-backsteps.yaml": (_vols("{name: a, hostPath: {path: '/var/../etc'}}"),
                                 f"{V}.hostPath.path: Invalid value: \"/var/../etc\": must not contain '..'"),
    "host-path-type-unknown.yaml": (_vols("{name: a, hostPath: {path: /x, type: Dir}}"),
                                    f'{V}.hostPath.type: Unsupported value: "Dir": {_HOST_PATH_TYPES}'),
    "host-path-type-html.yaml": (_vols("{name: a, hostPath: {path: /x, type: '<b>'}}"),
                                 f'{V}.hostPath.type: Unsupported value: "\\u003cb\\u003e": {_HOST_PATH_TYPES}'),
    "host-path-empty-skips-type.yaml": (_vols("{name: a, hostPath: {path: '', type: Dir}}"),
                                        f"{V}.hostPath.path: Required value]"),
    "host-path-type-number.yaml": (_vols("{name: a, hostPath: {path: /x, type: 5}}"),
                                   _UNMARSHAL + "number into Go struct field HostPathVolumeSource.spec.volumes."
                                   "VolumeSource.hostPath.type of type v1.HostPathType"),
    # ---- the one-source rule, in the kubelet's order and spelling
    "two-sources-config-map.yaml": (_vols("{name: a, emptyDir: {}, configMap: {name: m}}"),
                                    f"{V}.configMap: Forbidden: may not specify more than 1 volume type"),
    "two-sources-misspelt.yaml": (_vols("{name: a, emptyDir: {}, downwardAPI: {}, cephfs: {monitors: [m]}}"),
                                  f"{V}.cephFS: Forbidden: may not specify more than 1 volume type "
                                  f"{V}.downwarAPI: Forbidden: may not specify more than 1 volume type"),
    # ---- secret and configMap (validated before the API-reference refusal)
    "secret-items.yaml": (_vols("{name: a, secret: {secretName: s, defaultMode: 01000, defaultUser: -1, "
                                "items: [{key: '', path: ''}, {key: k, path: /abs, mode: -1, user: 2147483648}]}}"),
                          f"{V}.secret.defaultMode: Invalid value: 512: {_FILE_MODE} "
                          f"{V}.secret.defaultUser: Invalid value: -1: must be between 0 and 2147483647, inclusive "
                          f"{V}.secret.items[0].key: Required value {V}.secret.items[0].path: Required value "
                          f'{V}.secret.items[1].path: Invalid value: "/abs": must be a relative path '
                          f"{V}.secret.items[1].mode: Invalid value: -1: {_FILE_MODE} "
                          f"{V}.secret.items[1].user: Invalid value: 2147483648: must be between 0 and 2147483647"),
    "secret-without-name.yaml": (_vols("{name: a, secret: {}}"), f"{V}.secret.secretName: Required value"),
    "secret-named-is-api-reference.yaml": (_vols("{name: a, secret: {secretName: s, items: [{key: k, path: p}]}}"),
                                           "static pods may not reference secrets"),
    "config-map-items.yaml": (_vols("{name: a, configMap: {name: m, items: [{key: k, path: '..a'}, "
                                    "{key: k, path: 'a/../b'}]}}"),
                              f"{V}.configMap.items[0].path: Invalid value: \"..a\": must not start with '..' "
                              f"{V}.configMap.items[1].path: Invalid value: \"a/../b\": must not contain '..'"),
    "config-map-without-name.yaml": (_vols("{name: a, configMap: {defaultMode: 1000}}"),
                                     f"{V}.configMap.name: Required value {V}.configMap.defaultMode: Invalid value: "
                                     f"1000: {_FILE_MODE}"),
    "config-map-item-mode-string.yaml": (_vols("{name: a, configMap: {name: m, items: [{key: k, path: p, "
                                               "mode: '0644'}]}}"),
                                         _UNMARSHAL + "string into Go struct field KeyToPath.spec.volumes.VolumeSource.configMap."
                                         "items.mode of type int32"),
    # ---- downwardAPI
    "downward-accepted.yaml": (_vols("{name: a, downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: "
                                     "metadata.labels}}, {path: cpu, resourceFieldRef: {containerName: c, "
                                     "resource: limits.cpu, divisor: 1m}}, {path: k, fieldRef: {fieldPath: "
                                     "\"metadata.annotations['a.b/c']\"}, mode: 0400}]}}",
                                     "volumeMounts: [{name: a, mountPath: /etc/podinfo}]"), None),
    "downward-items.yaml": (_vols("{name: a, downwardAPI: {items: [{path: '', fieldRef: {fieldPath: spec.nodeName}}, "
                                  "{path: x, resourceFieldRef: {resource: limits.cpu}, mode: 512}, {path: z}]}}"),
                            f"{V}.downwardAPI.path: Required value {V}.downwardAPI.fieldRef.fieldPath: Unsupported "
                            f'value: "spec.nodeName": {_VOLUME_FIELDS} {V}.downwardAPI.resourceFieldRef.containerName: '
                            f"Required value {V}.downwardAPI.mode: Invalid value: 512: {_FILE_MODE} "
                            f"{V}.downwardAPI: Required value: one of fieldRef and resourceFieldRef is required"),
    "downward-both-refs.yaml": (_vols("{name: a, downwardAPI: {items: [{path: x, fieldRef: {fieldPath: "
                                      "metadata.name}, resourceFieldRef: {containerName: c, resource: limits.cpu}}]}}"),
                                f'{V}.downwardAPI: Invalid value: "resource": fieldRef and resourceFieldRef can not '
                                "be specified simultaneously"),
    "downward-bad-resource.yaml": (_vols("{name: a, downwardAPI: {items: [{path: x, resourceFieldRef: "
                                         "{containerName: c, resource: limits.gpu}}]}}"),
                                   f'{V}.downwardAPI.resourceFieldRef.resource: Unsupported value: "limits.gpu"'),
    "downward-field-version.yaml": (_vols("{name: a, downwardAPI: {items: [{path: x, fieldRef: {apiVersion: v2, "
                                          "fieldPath: metadata.name}}]}}"),
                                    f'{V}.downwardAPI.fieldRef.fieldPath: Invalid value: "metadata.name": error '
                                    "converting fieldPath: unsupported pod version: v2"),
    # ---- projected
    "projected-accepted.yaml": (_vols("{name: a, projected: {defaultMode: 0440, sources: [{downwardAPI: {items: "
                                      "[{path: name, fieldRef: {fieldPath: metadata.name}}]}}]}}",
                                      "volumeMounts: [{name: a, mountPath: /p, readOnly: true}]"), None),
    "projected-duplicate-paths.yaml": (_vols("{name: a, projected: {sources: [{downwardAPI: {items: [{path: f, "
                                             "fieldRef: {fieldPath: metadata.name}}]}}, {downwardAPI: {items: "
                                             "[{path: f, fieldRef: {fieldPath: metadata.uid}}]}}]}}"),
                                       f'{V}.projected: Invalid value: "f": conflicting duplicate paths'),
    "projected-two-kinds-one-source.yaml": (_vols("{name: a, projected: {sources: [{configMap: {name: ''}, "
                                                  "downwardAPI: {}}]}}"),
                                            f"{V}.projected.sources[0].configMap.name: Required value "
                                            f"{V}.projected.sources[0]: Forbidden: may not specify more than 1 volume "
                                            "type per source"),
    "projected-token.yaml": (_vols("{name: a, projected: {defaultMode: -1, sources: [{serviceAccountToken: "
                                   "{expirationSeconds: 60, path: ''}}, {serviceAccountToken: {path: ../t, "
                                   "user: -5}}]}}"),
                             f"{V}.projected.defaultMode: Invalid value: -1: {_FILE_MODE} "
                             f"{V}.projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may "
                             f"not specify a duration less than 10 minutes {V}.projected.path: Required value "
                             f"{V}.projected.path: Invalid value: \"../t\": must not contain '..' "
                             f"{V}.projected.sources[1].serviceAccountToken.user: Invalid value: -5: must be between 0 "
                             f"and 2147483647, inclusive {V}.projected.sources[0].serviceAccountToken: Forbidden: must "
                             "not be specified when serviceAccountName is not set"),
    "projected-secret-items.yaml": (_vols("{name: a, projected: {sources: [{secret: {name: s, items: [{key: k, "
                                          "path: p}]}}, {configMap: {name: m, items: [{key: k, path: p}]}}]}}"),
                                    f'{V}.projected: Invalid value: "m": conflicting duplicate paths'),
    "projected-expiration-string.yaml": (_vols("{name: a, projected: {sources: [{serviceAccountToken: "
                                               "{expirationSeconds: '3600', path: t}}]}}"),
                                         _UNMARSHAL + "string into Go struct field ServiceAccountTokenProjection."
                                         "spec.volumes.VolumeSource.projected.sources.serviceAccountToken.expirationSeconds of "
                                         "type int64"),
    # ---- image and ephemeral volumes
    "image-accepted.yaml": (_vols("{name: a, image: {reference: 'quay.io/x/y:1'}}",
                                  "volumeMounts: [{name: a, mountPath: /img}]"), None),
    "image-empty-reference.yaml": (_vols("{name: a, image: {reference: '', pullPolicy: Sometimes}}"),
                                   f"{V}.image.reference: Required value {V}.image.pullPolicy: Unsupported value: "
                                   '"Sometimes": supported values: "Always", "IfNotPresent", "Never"'),
    "image-bind-mount-options.yaml": (_vols("{name: a, image: {reference: x}}",
                                            "volumeMounts: [{name: a, mountPath: /i, bindMountOptions: [noexec, "
                                            "noexec, ro]}]"),
                                      f'{M}[0].bindMountOptions[1]: Duplicate value: "noexec" {M}[0].bindMountOptions'
                                      '[2]: Unsupported value: "ro": supported values: "nodev", "noexec", "nosuid" '
                                      f'{M}[0].bindMountOptions: Invalid value: ["noexec","noexec","ro"]: '
                                      "bindMountOptions may not be used with image volumes"),
    "ephemeral-without-template.yaml": (_vols("{name: a, ephemeral: {}}"),
                                        f"{V}.ephemeral.volumeClaimTemplate: Required value"),
    "ephemeral-empty-spec.yaml": (_vols("{name: a, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                                        "[ReadWriteOncePod, ReadWriteOnce, Sometimes], volumeMode: Raw}}}}"),
                                  f"{V}.ephemeral.volumeClaimTemplate.spec.accessModes: Unsupported value: "
                                  '"Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", '
                                  f'"ReadWriteOncePod" {V}.ephemeral.volumeClaimTemplate.spec.accessModes: Forbidden: '
                                  "may not use ReadWriteOncePod with other access modes "
                                  f"{V}.ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value "
                                  f'{V}.ephemeral.volumeClaimTemplate.spec.volumeMode: Unsupported value: "Raw": '
                                  'supported values: "Block", "Filesystem"'),
    # ---- other sources' required fields
    "other-sources-required.yaml": (_vols("{name: a, nfs: {server: '', path: rel}}\n{name: b, gitRepo: {directory: "
                                          "/abs}}\n{name: c, rbd: {}}\n{name: d, flocker: {datasetName: a/b, "
                                          "datasetUUID: u}}\n{name: e, gcePersistentDisk: {pdName: p, partition: "
                                          "300}}\n{name: f, persistentVolumeClaim: {}}"),
                                    "spec.volumes[0].nfs.server: Required value spec.volumes[0].nfs.path: Invalid "
                                    'value: "rel": must be an absolute path spec.volumes[1].gitRepo.repository: '
                                    'Required value spec.volumes[1].gitRepo.directory: Invalid value: "/abs": must be '
                                    "a relative path spec.volumes[2].rbd.monitors: Required value spec.volumes[2].rbd."
                                    'image: Required value spec.volumes[3].flocker: Invalid value: "resource": '
                                    "datasetName and datasetUUID can not be specified simultaneously "
                                    'spec.volumes[3].flocker.datasetName: Invalid value: "a/b": must not contain \'/\' '
                                    "spec.volumes[4].persistentDisk.partition: Invalid value: 300: must be between 1 "
                                    "and 255, inclusive spec.volumes[5].persistentVolumeClaim.claimName: Required "
                                    "value"),
    "other-sources-more.yaml": (_vols("{name: a, flexVolume: {driver: '', options: {'x.k8s.io/y': '1', z: '2'}}}\n"
                                      "{name: b, fc: {targetWWNs: [w], wwids: [i]}}\n{name: c, csi: {driver: "
                                      "Bad_Driver}}\n{name: d, storageos: {volumeName: Vol}}\n{name: e, "
                                      "scaleIO: {gateway: g}}"),
                                "spec.volumes[0].flexVolume.driver: Required value spec.volumes[0].flexVolume.options"
                                '[x.k8s.io/y]: Invalid value: "x.k8s.io/y": kubernetes.io and k8s.io namespaces are '
                                "reserved spec.volumes[1].fc.targetWWNs: Invalid value: [\"w\"]: targetWWNs and wwids "
                                "can not be specified simultaneously spec.volumes[1].fc.lun: Required value: lun is "
                                "required if targetWWNs is specified spec.volumes[2].csi.driver: Invalid value: "
                                '"Bad_Driver": a lowercase RFC 1123 subdomain'),
    "pvc-names-ephemeral-claim.yaml": (_vols("{name: e, ephemeral: {volumeClaimTemplate: {spec: {accessModes: "
                                             "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}\n"
                                             "{name: p, persistentVolumeClaim: {claimName: web-node-a-e}}"),
                                       'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: '
                                       '"web-node-a-e": must not reference a PVC that gets created for an ephemeral '
                                       "volume"),
    "rbd-monitors-string.yaml": (_vols("{name: a, rbd: {monitors: m, image: i}}"),
                                 _UNMARSHAL + "string into Go struct field RBDVolumeSource.spec.volumes.VolumeSource.rbd.monitors of "
                                 "type []string"),
    # ---- volume mounts
    "mounts-accepted.yaml": (_vols("{name: a, emptyDir: {}}",
                                   "securityContext: {privileged: true}\nvolumeMounts: [{name: a, mountPath: /a, "
                                   "subPath: x/y, mountPropagation: Bidirectional}, {name: a, mountPath: /b, "
                                   "subPathExpr: $(POD)/z, readOnly: true, recursiveReadOnly: IfPossible}]"), None),
    "mount-sub-path-backsteps.yaml": (_vols("{name: a, emptyDir: {}}",
                                            "volumeMounts: [{name: a, mountPath: /a, subPath: '../x'}]"),
                                      f"{M}.subPath: Invalid value: \"../x\": must not contain '..'"),
    "mount-sub-path-and-expr.yaml": (_vols("{name: a, emptyDir: {}}",
                                           "volumeMounts: [{name: a, mountPath: /a, subPath: x, subPathExpr: /y}]"),
                                     f'{M}[0].subPathExpr: Invalid value: "/y": subPathExpr and subPath are mutually '
                                     f'exclusive {M}.subPathExpr: Invalid value: "/y": must be a relative path'),
    "mount-propagation-unknown.yaml": (_vols("{name: a, emptyDir: {}}",
                                             "volumeMounts: [{name: a, mountPath: /a, mountPropagation: Shared}]"),
                                       f'{M}.mountPropagation: Unsupported value: "Shared": supported values: '
                                       '"Bidirectional", "HostToContainer", "None"'),
    "mount-bidirectional-unprivileged.yaml": (_vols("{name: a, emptyDir: {}}",
                                                    "volumeMounts: [{name: a, mountPath: /a, mountPropagation: "
                                                    "Bidirectional}]"),
                                              f"{M}.mountPropagation: Forbidden: Bidirectional mount propagation is "
                                              "available only to privileged containers"),
    "mount-rro-unknown.yaml": (_vols("{name: a, emptyDir: {}}",
                                     "volumeMounts: [{name: a, mountPath: /a, readOnly: true, recursiveReadOnly: "
                                     "Always}]"),
                               f'{M}.recursiveReadOnly: Unsupported value: "Always": supported values: "Disabled", '
                               '"Enabled", "IfPossible"'),
    "mount-rro-not-read-only.yaml": (_vols("{name: a, emptyDir: {}}",
                                           "volumeMounts: [{name: a, mountPath: /a, recursiveReadOnly: Enabled, "
                                           "mountPropagation: HostToContainer}]"),
                                     f"{M}.recursiveReadOnly: Forbidden: may only be specified when readOnly is true "
                                     f"{M}.recursiveReadOnly: Forbidden: may only be specified when mountPropagation "
                                     "is None or not specified"),
    "mount-rro-disabled-accepted.yaml": (_vols("{name: a, emptyDir: {}}",
                                               "volumeMounts: [{name: a, mountPath: /a, recursiveReadOnly: Disabled, "
                                               "mountPropagation: HostToContainer}]"), None),
    "mount-read-only-string.yaml": (_vols("{name: a, emptyDir: {}}",
                                          "volumeMounts: [{name: a, mountPath: /a, readOnly: 'yes'}]"),
                                    _UNMARSHAL + "string into Go struct field VolumeMount.spec.containers.volumeMounts."
                                    "readOnly of type bool"),
    "init-mount-sub-path.yaml": (HEAD + "metadata: {name: web}\nspec:\n  volumes: [{name: a, emptyDir: {}}]\n"
                                 "  containers: [{name: c, image: x}]\n  initContainers:\n  - {name: i, image: x, "
                                 "volumeMounts: [{name: a, mountPath: /a, subPathExpr: '..'}]}\n",
                                 f"{I}.volumeMounts.subPathExpr: Invalid value: \"..\": must not contain '..'"),
    # ---- volume devices
    "device-not-a-claim.yaml": (_vols("{name: a, emptyDir: {}}",
                                      "volumeDevices: [{name: a, devicePath: /dev/a}, {name: a, devicePath: /dev/a}, "
                                      "{name: '', devicePath: ''}]"),
                                f'{C}.volumeDevices[0].name: Invalid value: "a": can only use volume source type of '
                                "PersistentVolumeClaim or Ephemeral for block mode "
                                f'{C}.volumeDevices[1].name: Invalid value: "a": must be unique '
                                f'{C}.volumeDevices[1].name: Invalid value: "a": can only use volume source type of '
                                "PersistentVolumeClaim or Ephemeral for block mode "
                                f'{C}.volumeDevices[1].devicePath: Invalid value: "/dev/a": must be unique '
                                f"{C}.volumeDevices[2].name: Required value "
                                f'{C}.volumeDevices[2].name: Not found: "" '
                                f"{C}.volumeDevices[2].devicePath: Required value"),
    "device-conflicts-with-mount.yaml": (_vols("{name: a, emptyDir: {}}",
                                               "volumeMounts: [{name: a, mountPath: /dev/x}]\n"
                                               "volumeDevices: [{name: a, devicePath: '/dev/../x'}]"),
                                         f'{M}[0].name: Invalid value: "a": must not already exist in volumeDevices '
                                         f'{C}.volumeDevices[0].name: Invalid value: "a": can only use volume source '
                                         "type of PersistentVolumeClaim or Ephemeral for block mode "
                                         f'{C}.volumeDevices[0].devicePath: Invalid value: "/dev/../x": can not '
                                         "contain backsteps ('..') "
                                         f'{C}.volumeDevices[0].name: Invalid value: "a": must not already exist in '
                                         "volumeMounts"),
    "device-same-path-as-mount.yaml": (_vols("{name: a, emptyDir: {}}",
                                             "volumeMounts: [{name: a, mountPath: /d}]\n"
                                             "volumeDevices: [{name: b, devicePath: /d}]"),
                                       f'{M}[0].mountPath: Invalid value: "/d": must not already exist as a path in '
                                       f'volumeDevices {C}.volumeDevices[0].name: Not found: "b" '
                                       f'{C}.volumeDevices[0].devicePath: Invalid value: "/d": must not already exist '
                                       "as a path in volumeMounts"),
    # ---- restart rules
    "restart-rules-accepted.yaml": (_vols("", "restartPolicy: Never\nrestartPolicyRules: [{action: Restart, "
                                          "exitCodes: {operator: In, values: [42]}}]"), None),
    "restart-rules-without-policy.yaml": (_vols("", "restartPolicyRules: [{action: Restart, exitCodes: "
                                                "{operator: In, values: [1]}}]"),
                                          f"{C}.restartPolicy: Required value: must specify restartPolicy when "
                                          "restart rules are used"),
    "restart-rules-bad.yaml": (_vols("", "restartPolicy: OnFailure\nrestartPolicyRules: [{action: Stop, exitCodes: "
                                     "{operator: Equals}}, {action: RestartAllContainers}]"),
                               f'{C}.restartPolicyRules[0].action: Unsupported value: "Stop": supported values: '
                               f'"Restart", "RestartAllContainers" {C}.restartPolicyRules[0].exitCodes.operator: '
                               'Unsupported value: "Equals": supported values: "In", "NotIn" '
                               f"{C}.restartPolicyRules[1].exitCodes: Required value: must be specified"),
    "restart-rules-too-many.yaml": (_vols("", "restartPolicy: Never\nrestartPolicyRules: ["
                                          + ", ".join(["{action: Restart, exitCodes: {operator: In}}"] * 21) + "]"),
                                    f"{C}.restartPolicyRules: Too many: 21: must have at most 20 items"),
    "init-restart-rules-without-policy.yaml": (_init("restartPolicyRules: [{action: Restart}]"),
                                               f"{I}.restartPolicy: Required value: must specify restartPolicy when "
                                               "restart rules are used"),
    "init-sidecar-restart-rules.yaml": (_init("restartPolicy: Always\nrestartPolicyRules: [{action: Nope, exitCodes: "
                                              "{operator: NotIn, values: [0]}}]"),
                                        f'{I}.restartPolicyRules[0].action: Unsupported value: "Nope"'),
    "restart-rules-values-string.yaml": (_vols("", "restartPolicy: Never\nrestartPolicyRules: [{action: Restart, "
                                               "exitCodes: {operator: In, values: '1'}}]"),
                                         _UNMARSHAL + "string into Go struct field ContainerRestartRuleOnExitCodes."
                                         "spec.containers.restartPolicyRules.exitCodes.values of type []int32"),
    # ---- readiness gates, hostnameOverride
    "readiness-gates.yaml": (_vols("", spec="readinessGates: [{conditionType: example.com/ready}, {conditionType: "
                                   "'bad gate'}, {}]"),
                             'spec.readinessGates[1].conditionType: Invalid value: "bad gate": name part must '
                             "consist of alphanumeric characters"),
    "hostname-override-accepted.yaml": (_vols("", spec="hostnameOverride: my.host.example"), None),
    "hostname-override-bad.yaml": (_vols("", spec="hostnameOverride: " + "A" * 65 + "\nhostNetwork: true\n"
                                         "setHostnameAsFQDN: true"),
                                   "spec.hostnameOverride: Forbidden: may not be specified when setHostnameAsFQDN is "
                                   "true spec.hostnameOverride: Forbidden: may not be specified when hostNetwork is "
                                   "true spec.hostnameOverride: Too long: may not be more than 64 bytes "
                                   f'spec.hostnameOverride: Invalid value: "{"A" * 65}": a lowercase RFC 1123 subdomain'),
    "hostname-override-empty.yaml": (_vols("", spec="hostnameOverride: ''"),
                                     'spec.hostnameOverride: Invalid value: "": a lowercase RFC 1123 subdomain'),
    "readiness-gate-number.yaml": (_vols("", spec="readinessGates: [{conditionType: 1}]"),
                                   _UNMARSHAL + "number into Go struct field PodReadinessGate.spec.readinessGates."
                                   "conditionType of type v1.PodConditionType"),
    "image-pull-secret-empty-name-accepted.yaml": (_vols("", spec="imagePullSecrets: [{name: ''}, {}]"), None),
    # ---- metadata
    "generate-name-bad.yaml": (_vols("", meta="{name: web, generateName: 'Web-'}"),
                               'metadata.generateName: Invalid value: "Web-": a lowercase RFC 1123 subdomain'),
    "generate-name-accepted.yaml": (_vols("", meta="{name: web, generateName: web-}"), None),
    "owner-references.yaml": (_vols("", meta="{name: web, ownerReferences: [{apiVersion: 'a/b/c', kind: Node, "
                                    "name: nd, uid: u, controller: true}, {apiVersion: v1, kind: Event, name: e, "
                                    "uid: u2, controller: true}, {}]}"),
                              'metadata.ownerReferences[0].apiVersion: Invalid value: "a/b/c": must be <group>/'
                              "<version> or <version> metadata.ownerReferences[1]: Invalid value: "
                              '{"apiVersion":"v1","kind":"Event","name":"e","uid":"u2","controller":true}: /v1, '
                              "Kind=Event is disallowed from being an owner metadata.ownerReferences: Invalid value: "
                              '[{"apiVersion":"a/b/c","kind":"Node","name":"nd","uid":"u","controller":true},'
                              '{"apiVersion":"v1","kind":"Event","name":"e","uid":"u2","controller":true},'
                              '{"apiVersion":"","kind":"","name":"","uid":""}]: Only one reference can have '
                              'Controller set to true. Found "true" in references for Node/nd and Event/e '
                              "metadata.ownerReferences[2].apiVersion: Required value: must not be empty "
                              "metadata.ownerReferences[2].kind: Required value: must not be empty "
                              "metadata.ownerReferences[2].name: Required value: must not be empty "
                              "metadata.ownerReferences[2].uid: Required value: must not be empty"),
    "finalizers.yaml": (_vols("", meta="{name: web, finalizers: [orphan, foregroundDeletion, custom, 'a/b', "
                              "'bad name/x']}"),
                        'metadata.finalizers: Invalid value: "bad name/x": prefix part a lowercase RFC 1123 '
                        "subdomain"),
    "finalizers-standard-accepted.yaml": (_vols("", meta="{name: web, finalizers: [kubernetes, example.com/f]}"),
                                          None),
    "generation-negative.yaml": (_vols("", meta="{name: web, generation: -1, labels: {'a b': c}}"),
                                 "metadata.generation: Invalid value: -1: must be greater than or equal to 0 "
                                 'metadata.labels: Invalid value: "a b"'),
    "deletion-cost.yaml": (_vols("", meta="{name: web, annotations: {controller.kubernetes.io/pod-deletion-cost: "
                                 "'+5'}}"),
                           'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+5": '
                           "must be a 32bit integer"),
    "deletion-cost-too-big.yaml": (_vols("", meta="{name: web, annotations: {controller.kubernetes.io/"
                                         "pod-deletion-cost: '2147483648'}}"),
                                   "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "
                                   '"2147483648": must be a 32bit integer'),
    "deletion-cost-accepted.yaml": (_vols("", meta="{name: web, annotations: {controller.kubernetes.io/"
                                          "pod-deletion-cost: '-2147483648'}}"), None),
    "owner-controller-string.yaml": (_vols("", meta="{name: web, ownerReferences: [{controller: 'yes'}]}"),
                                     _UNMARSHAL + "string into Go struct field OwnerReference.metadata.ownerReferences."
                                     "controller of type bool"),
    # ---- several kinds of error in one pod, in the kubelet's order
    "everything-at-once.yaml": (HEAD + """\
metadata: {name: web, generateName: '-', finalizers: [custom]}
spec:
  hostnameOverride: 'x_y'
  readinessGates: [{conditionType: ''}]
  volumes:
  - {name: a, hostPath: {path: '/a/..', type: Nope}}
  - {name: b, emptyDir: {}}
  initContainers:
  - {name: i, image: x, restartPolicy: Never, restartPolicyRules: [{action: X, exitCodes: {operator: In}}],
     volumeMounts: [{name: b, mountPath: /b, subPath: /s}]}
  containers:
  - name: c
    image: nginx
    volumeMounts: [{name: a, mountPath: /a}, {name: b, mountPath: /b, mountPropagation: Bidirectional}]
    volumeDevices: [{name: b, devicePath: /b}]
""", 'invalid pod: [metadata.generateName: Invalid value: "-": a lowercase RFC 1123 subdomain'),
}


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), CASES)


def test_enough_cases() -> None:
    refused = [n for n, (_, phrase) in CASES.items() if phrase]
    assert len(CASES) >= 50 and len(refused) >= 35 and len(CASES) - len(refused) >= 10


@pytest.mark.parametrize("name", sorted(CASES))
def test_volumes_and_odd_fields_as_the_kubelet_checks_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert_as_the_kubelet(kubelet, ours, CASES[name][1])
