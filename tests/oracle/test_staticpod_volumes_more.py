"""The volume sources ``podnuma.agent.validation_volumes`` mirrors in
detail since the first volume suite (``iscsi``, ``quobyte``,
``azureDisk``, the ``clusterTrustBundle`` and ``podCertificate``
projections, an ``ephemeral`` volume's claim template) and the pod's
``metadata.managedFields``, against the kubelet's file source
(``kubelet-oracle staticpod``: k8s.io/kubernetes v1.37.2
``validateVolumeSource``, ``validateProjectionSources``,
``validateEphemeralVolumeSource`` with ``ValidateTemplateObjectMeta`` and
``ValidatePersistentVolumeClaimSpec``; k8s.io/apimachinery v0.37.2
``ValidateManagedFields``), with the Go decoder's words for a value of the
wrong type there.

Every manifest goes through the oracle and through podnuma: both accept
it, or both refuse it with the phrase given and the kubelet's whole
message (every error, in its order). A source the kubelet validates but
that needs the API server (a cluster trust bundle, a pod certificate, a
claim, a secret) is then refused by ``HasAPIObjectReference``: that
refusal is the "accepted by validation" variant.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.oracle.staticpod_cases import assert_as_the_kubelet, decoded_cases
from tests.oracle.test_staticpod_differential import HEAD
from tests.oracle.test_staticpod_volumes import _vols

_UNMARSHAL = "couldn't parse as pod(json: cannot unmarshal "
V = "spec.volumes[0]"
S = f"{V}.projected.sources[0]"
T = f"{V}.ephemeral.volumeClaimTemplate"
_IQN = "iqn.2001-04.com.example:storage.disk1"
_PAIRS = "must be a host:port pair or multiple pairs separated by commas"
_SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
_BLOB_URI = 'supported values: "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"'
_CLAIM = "static pods may not reference persistentvolumeclaims (via ephemeral volumes)"


def _claim(spec: str, meta: str = "") -> str:
    """A pod with one ephemeral volume ``a`` whose claim template has the
    spec fields ``spec`` (and the metadata ``meta``)."""
    template = ("{metadata: {" + meta + "}, " if meta else "{") + "spec: {" + spec + "}}"
    return _vols("{name: a, ephemeral: {volumeClaimTemplate: " + template + "}}")


_RWO = "accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}"


def _meta(extra: str) -> str:
    """A pod of one container whose metadata has ``extra`` besides its name."""
    return HEAD + "metadata: {name: web, " + extra + "}\nspec: {containers: [{name: c, image: nginx}]}\n"


#: name -> (manifest text, a phrase of the kubelet's error; None: accepted)
CASES: dict[str, tuple[str, str | None]] = {
    # ---- iscsi (validateISCSIVolumeSource, and the volume name's length)
    "iscsi-accepted.yaml": (_vols(f"{{name: a, iscsi: {{targetPortal: '10.0.0.1:3260', iqn: '{_IQN}', lun: 0, "
                                  "initiatorName: 'iqn.1994-05.com.redhat:abc'}}"), None),
    "iscsi-eui-naa-accepted.yaml": (_vols("{name: a, iscsi: {targetPortal: p, iqn: eui.0123456789ABCDEF, lun: 255, "
                                          "initiatorName: naa.0123456789abcdef0123456789abcdef}}"), None),
    "iscsi-empty.yaml": (_vols("{name: a, iscsi: {}}"),
                         f"invalid pod: [{V}.iscsi.targetPortal: Required value {V}.iscsi.iqn: Required value]"),
    "iscsi-unknown-prefixes.yaml": (_vols("{name: a, iscsi: {targetPortal: p, iqn: foo, lun: 256, "
                                          "initiatorName: bar}}"),
                                    f'{V}.iscsi.initiatorname: Invalid value: "bar": must be valid format starting '
                                    "with iqn, eui, or naa"),
    "iscsi-bad-formats.yaml": (_vols("{name: a, iscsi: {targetPortal: p, iqn: 'iqn.20-1.x:y', lun: -1, "
                                     "initiatorName: eui.123}}"),
                               f'{V}.iscsi.iqn: Invalid value: "iqn.20-1.x:y": must be valid format'),
    "iscsi-naa-and-space.yaml": (_vols("{name: a, iscsi: {targetPortal: p, iqn: naa.12, "
                                       "initiatorName: 'iqn.2001-04.com.example:a b'}}"),
                                 f'{V}.iscsi.iqn: Invalid value: "naa.12": must be valid format'),
    "iscsi-iqn-trailing-newline.yaml": (_vols('{name: a, iscsi: {targetPortal: p, iqn: "iqn.2001-04.com.example:x\\n"}}'),
                                        f'{V}.iscsi.iqn: Invalid value: "iqn.2001-04.com.example:x\\n": must be valid '
                                        "format"),
    "iscsi-chap-without-secret.yaml": (_vols(f"{{name: a, iscsi: {{targetPortal: p, iqn: '{_IQN}', "
                                             "chapAuthDiscovery: true, chapAuthSession: true}}"),
                                       f"invalid pod: [{V}.iscsi.secretRef: Required value]"),
    "iscsi-chap-with-secret.yaml": (_vols(f"{{name: a, iscsi: {{targetPortal: p, iqn: '{_IQN}', chapAuthSession: true, "
                                          "secretRef: {name: s}}}"), "static pods may not reference secrets"),
    "iscsi-name-too-long.yaml": (_vols("{name: " + "a" * 40 + ", iscsi: {targetPortal: '" + "1" * 30
                                       + f"', iqn: '{_IQN}', initiatorName: ''}}}}"),
                                 f'{V}.name: Invalid value: "{"a" * 40}": Total length of <volume name>:'
                                 "<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is "
                                 "specified."),
    "iscsi-name-too-long-second-source.yaml": (_vols("{name: " + "a" * 40 + ", emptyDir: {}, iscsi: {targetPortal: '"
                                                     + "1" * 30 + f"', initiatorName: '{_IQN}'}}}}"),
                                               f"invalid pod: [{V}.iscsi: Forbidden: may not specify more than 1 "
                                               f'volume type {V}.name: Invalid value: "{"a" * 40}": Total length'),
    "iscsi-name-64-fits.yaml": (_vols("{name: " + "a" * 33 + ", iscsi: {targetPortal: '" + "1" * 30
                                      + f"', iqn: '{_IQN}', initiatorName: '{_IQN}'}}}}"), None),
    "type-iscsi-lun-string.yaml": (_vols("{name: a, iscsi: {targetPortal: p, iqn: x, lun: '1'}}"),
                                   _UNMARSHAL + "string into Go struct field ISCSIVolumeSource.spec.volumes."
                                   "VolumeSource.iscsi.lun of type int32)"),
    # ---- quobyte (validateQuobyteVolumeSource; net.SplitHostPort on each pair)
    "quobyte-accepted.yaml": (_vols("{name: a, quobyte: {registry: 'reg1:7861,[::1]:7861', volume: v, tenant: t}}"),
                              None),
    "quobyte-empty.yaml": (_vols("{name: a, quobyte: {}}"),
                           f"invalid pod: [{V}.quobyte.registry: Required value: {_PAIRS} {V}.quobyte.volume: "
                           "Required value]"),
    "quobyte-bad-pairs.yaml": (_vols("{name: a, quobyte: {registry: 'a,b:1,c:d:e,[x]y:1,[x:1,x]:1', volume: v}}"),
                               f'{V}.quobyte.registry: Invalid value: "a,b:1,c:d:e,[x]y:1,[x:1,x]:1": {_PAIRS}'),
    "quobyte-tenant-65.yaml": (_vols("{name: a, quobyte: {registry: 'nope', volume: v, tenant: " + "t" * 65 + "}}"),
                               f"invalid pod: [{V}.quobyte.tenant: Required value: must be a UUID and may not exceed "
                               "a length of 64 characters]"),
    "quobyte-tenant-64.yaml": (_vols("{name: a, quobyte: {registry: 'nope', volume: v, tenant: " + "t" * 64 + "}}"),
                               f'invalid pod: [{V}.quobyte.registry: Invalid value: "nope": {_PAIRS}]'),
    # ---- azureDisk (validateAzureDisk after the v1 defaults: kind Shared)
    "azure-disk-accepted.yaml": (_vols("{name: a, azureDisk: {diskName: d, diskURI: "
                                       "'https://acct.blob.core.windows.net/c/d.vhd'}}"), None),
    "azure-disk-managed-accepted.yaml": (_vols("{name: a, azureDisk: {diskName: d, diskURI: /subscriptions/s/x, "
                                               "kind: Managed, cachingMode: None}}"), None),
    "azure-disk-empty.yaml": (_vols("{name: a, azureDisk: {}}"),
                              f"invalid pod: [{V}.azureDisk.diskName: Required value {V}.azureDisk.diskURI: Required "
                              f'value {V}.azureDisk.diskURI: Unsupported value: "": {_BLOB_URI}]'),
    "azure-disk-bad-enums.yaml": (_vols("{name: a, azureDisk: {diskName: d, diskURI: 'http://x', cachingMode: 'Fast<', "
                                        "kind: Special}}"),
                                  f'{V}.azureDisk.cachingMode: Unsupported value: "Fast\\u003c": supported values: '
                                  '"None", "ReadOnly", "ReadWrite"'),
    "azure-disk-managed-bad-uri.yaml": (_vols("{name: a, azureDisk: {diskName: d, diskURI: 'https://x', "
                                              "kind: Managed}}"),
                                        f'{V}.azureDisk.diskURI: Unsupported value: "https://x": supported values: '
                                        '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/'
                                        'microsoft.compute/disks/{disk-id}"'),
    "azure-disk-dedicated-bad-uri.yaml": (_vols("{name: a, azureDisk: {diskName: d, diskURI: /subscriptions/s, "
                                                "kind: Dedicated}}"),
                                          f'{V}.azureDisk.diskURI: Unsupported value: "/subscriptions/s": {_BLOB_URI}'),
    # ---- clusterTrustBundle projections
    "ctb-name-validated.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {name: bundle, "
                                      "path: ca.pem}}]}}"), "static pods may not reference clustertrustbundles"),
    "ctb-signer-validated.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {signerName: "
                                        "example.com/signer, labelSelector: {matchLabels: {a: b}}, path: ca.pem}}]}}"),
                                  "static pods may not reference clustertrustbundles"),
    "ctb-neither.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {}}]}}"),
                         f"invalid pod: [{S}.clusterTrustBundle: Required value: either name or signerName must be "
                         f"specified {S}.clusterTrustBundle.path: Required value]"),
    "ctb-both.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {name: bundle, signerName: "
                            "example.com/s, labelSelector: {matchLabels: {a: b}}, optional: true, path: p, user: 5}}]}}"),
                      "only one of name and signerName may be used"),
    "ctb-name-bad.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {name: 'Bad_Name', "
                                "labelSelector: {}, path: /abs}}]}}"),
                          f"{S}.clusterTrustBundle.labelSelector: Invalid value: {{}}: labelSelector must be unset if "
                          "name is specified"),
    "ctb-name-signer-prefix.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {name: "
                                          "'example.com:s:Bad', path: p}}]}}"),
                                    f'{S}.clusterTrustBundle.name: Invalid value: "example.com:s:Bad": not a valid '
                                    f"clustertrustbundlename: {_SUBDOMAIN}"),
    "ctb-name-empty.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {name: '', path: '../x', "
                                  "user: -1}}]}}"),
                            f"{S}.clusterTrustBundle.name: Required value: must be a valid object name"),
    "ctb-signer-bad.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {signerName: 'Example/s/t', "
                                  "labelSelector: {matchLabels: {'a b': c}}, path: p}}]}}"),
                            "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    "ctb-signer-empty.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {signerName: ''}}]}}"),
                              f"invalid pod: [{S}.clusterTrustBundle.signerName: Required value: must be a valid "
                              f"signer name {S}.clusterTrustBundle.signerName: Required value "
                              f"{S}.clusterTrustBundle.path: Required value]"),
    "ctb-signer-labels.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {signerName: "
                                     "'ex_a.b-/x.Y_', path: p}}]}}"),
                               f'{S}.clusterTrustBundle.signerName: Invalid value: "ex_a.b-": validating label '
                               '"ex_a": a lowercase RFC 1123 label'),
    "ctb-signer-one-segment.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {signerName: "
                                          "'example/s', path: p}}]}}"),
                                    "should be a domain with at least two segments separated by dots"),
    "ctb-signer-too-long.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {signerName: '"
                                       + ".".join(["a" * 60] * 5) + "/" + ".".join(["b" * 60] * 6)
                                       + "', path: p}}]}}"),
                                 f"invalid pod: [{S}.clusterTrustBundle.signerName: Too long: may not be more than "
                                 f"253 bytes {S}.clusterTrustBundle.signerName: Too long: may not be more than 571 "
                                 "bytes]"),
    "ctb-duplicate-paths.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {name: b1, path: p}}, "
                                       "{clusterTrustBundle: {name: b2, path: p}}, {clusterTrustBundle: {name: b3}}, "
                                       "{clusterTrustBundle: {name: b4}}]}}"),
                                 f'{V}.projected: Invalid value: "p": conflicting duplicate paths'),
    "type-ctb-name-number.yaml": (_vols("{name: a, projected: {sources: [{clusterTrustBundle: {name: 1, path: p}}]}}"),
                                  _UNMARSHAL + "number into Go struct field ClusterTrustBundleProjection.spec.volumes."
                                  "VolumeSource.projected.sources.clusterTrustBundle.name of type string)"),
    # ---- podCertificate projections
    "pc-validated.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: example.com/s, "
                                "keyType: ED25519, credentialBundlePath: creds.pem, maxExpirationSeconds: 7862400}}]}}"),
                          "static pods may not reference podcertificates"),
    "pc-empty.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {}}]}}"),
                      f'{S}.podCertificate.keyType: Unsupported value: "": supported values: "RSA3072", "RSA4096", '
                      '"ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"'),
    "pc-many-problems.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: kubernetes.io/x, "
                                    "keyType: rsa, maxExpirationSeconds: 86401, keyPath: /k, certificateChainPath: '..', "
                                    "credentialBundlePath: c, user: -2, userAnnotations: {'A b': z, "
                                    "'Example.COM/Key': w}}}]}}"),
                              f'{S}.podCertificate.userAnnotations: Invalid value: "a b": name part must consist'),
    # (one bad key a case: Go walks the annotations in no fixed order)
    "pc-annotation-not-prefixed.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: "
                                              "example.com/s, keyType: ED25519, keyPath: k, userAnnotations: "
                                              "{Plain: z, example.com/ok: w}}}]}}"),
                                        f'invalid pod: [{S}.podCertificate.userAnnotations: Invalid value: "plain": '
                                        'must be a domain-prefixed key (such as "acme.io/foo")]'),
    "pc-annotation-empty-key.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: "
                                           "example.com/s, keyType: ED25519, keyPath: k, userAnnotations: "
                                           "{'': z}}}]}}"),
                                     f"invalid pod: [{S}.podCertificate.userAnnotations: Required value]"),
    "pc-annotations-too-big.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: "
                                          "example.com/s, keyType: ED25519, keyPath: k, userAnnotations: "
                                          "{example.com/k: " + "v" * (256 * 1024) + "}}}]}}"),
                                    f"invalid pod: [{S}.podCertificate.userAnnotations: Too long: may not be more "
                                    f"than {256 * 1024} bytes]"),
    "pc-short-expiry.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: example.com/s, "
                                   "keyType: RSA3072, maxExpirationSeconds: 3599, keyPath: k}}]}}"),
                             f"invalid pod: [{S}.podCertificate.maxExpirationSeconds: Invalid value: 3599: if "
                             "provided, maxExpirationSeconds must be >= 3600]"),
    "pc-kubernetes-signer-expiry.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: "
                                               "x.kubernetes.io/s, keyType: RSA4096, maxExpirationSeconds: 86401, "
                                               "keyPath: k}}]}}"),
                                         "if provided, maxExpirationSeconds must be <= 86400"),
    "pc-other-signer-expiry.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: "
                                          "example.com/s, keyType: RSA4096, maxExpirationSeconds: 7862401, "
                                          "keyPath: k}}]}}"),
                                    "if provided, maxExpirationSeconds must be <= 7862400"),
    "pc-duplicate-paths.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: example.com/s, "
                                      "keyType: ECDSAP256, keyPath: k, certificateChainPath: k}}, {downwardAPI: "
                                      "{items: [{path: k, fieldRef: {fieldPath: metadata.name}}]}}]}}"),
                                f'invalid pod: [{V}.projected: Invalid value: "k": conflicting duplicate paths '
                                f'{V}.projected: Invalid value: "k": conflicting duplicate paths]'),
    "pc-and-ctb-one-source.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {signerName: example.com/s, "
                                         "keyType: ECDSAP384, keyPath: k}, clusterTrustBundle: {name: b1, "
                                         "path: p}}]}}"),
                                   f"{S}: Forbidden: may not specify more than 1 volume type per source"),
    "type-pc-annotations-list.yaml": (_vols("{name: a, projected: {sources: [{podCertificate: {userAnnotations: "
                                            "[a]}}]}}"),
                                      _UNMARSHAL + "array into Go struct field PodCertificateProjection.spec.volumes."
                                      "VolumeSource.projected.sources.podCertificate.userAnnotations of type "
                                      "map[string]string)"),
    # ---- ephemeral: the claim template (ValidatePersistentVolumeClaimTemplate)
    "eph-validated.yaml": (_claim(_RWO + ", storageClassName: fast", "labels: {a: b}, annotations: {x: z}"), _CLAIM),
    "eph-meta-forbidden.yaml": (_claim(_RWO, "name: nm, generateName: g, namespace: ns, selfLink: s, uid: u, "
                                       "resourceVersion: '1', generation: 2, creationTimestamp: "
                                       "'2024-01-01T00:00:00Z', deletionGracePeriodSeconds: 0, ownerReferences: [], "
                                       "finalizers: [f], managedFields: [{}], labels: {'a b': 'c d'}, "
                                       "annotations: {'A/B/C': x}"),
                                f"{T}.metadata.uID: Forbidden: cannot be set"),
    "eph-meta-zero-values.yaml": (_claim(_RWO, "name: '', generation: 0, creationTimestamp: null, uid: ''"), _CLAIM),
    "eph-spec-bad.yaml": (_claim("accessModes: [], selector: {matchExpressions: [{key: k, operator: In}]}, "
                                 "storageClassName: 'Fast_', volumeAttributesClassName: 'Gold_', "
                                 "resources: {requests: {storage: '0'}}"),
                          f'{T}.spec.resources[storage]: Invalid value: "0": must be greater than zero'),
    "eph-storage-negative.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: {storage: '-1Gi'}}"),
                                  f'invalid pod: [{T}.spec.resources[storage]: Invalid value: "-1Gi": must be greater '
                                  "than zero]"),
    "eph-storage-rounded-up.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: {storage: '0.1m'}}"),
                                    _CLAIM),
    "eph-data-sources.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: {storage: 1}}, "
                                     "dataSource: {kind: Snapshot}, dataSourceRef: {apiGroup: 'Bad_', name: nm, "
                                     "kind: k, namespace: 'Bad.ns'}"),
                              f'{T}.spec.dataSource: Invalid value: "Snapshot": must be \'PersistentVolumeClaim\' '
                              "when referencing the default apiGroup"),
    "eph-data-sources-differ.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: {storage: 1}}, "
                                            "dataSource: {kind: PersistentVolumeClaim, name: c1}, "
                                            "dataSourceRef: {kind: PersistentVolumeClaim, name: c2}"),
                                     f"invalid pod: [{T}.spec: Invalid value: {{}}: must match dataSourceRef]"),
    "eph-data-sources-same.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: {storage: 1}}, "
                                          "dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, "
                                          "name: c1}, dataSourceRef: {apiGroup: snapshot.storage.k8s.io, "
                                          "kind: VolumeSnapshot, name: c1}"), _CLAIM),
    "eph-data-sources-group-empty-vs-absent.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: "
                                                           "{storage: 1}}, dataSource: {apiGroup: '', kind: "
                                                           "PersistentVolumeClaim, name: c1}, dataSourceRef: {kind: "
                                                           "PersistentVolumeClaim, name: c1}"),
                                                    "must match dataSourceRef"),
    "eph-data-source-ref-namespace.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: {storage: 1}}, "
                                                  "dataSource: {kind: PersistentVolumeClaim, name: c1}, dataSourceRef: "
                                                  "{kind: PersistentVolumeClaim, name: c1, namespace: other}"),
                                           f"invalid pod: [{T}.spec: Invalid value: {{}}: may not be specified when "
                                           "dataSourceRef.namespace is specified]"),
    "eph-quantity-bad.yaml": (_claim("accessModes: [ReadWriteOnce], resources: {requests: {storage: lots}}"),
                              "couldn't parse as pod(quantities must match the regular expression"),
    "type-eph-storage-class-number.yaml": (_claim("storageClassName: 1"),
                                           _UNMARSHAL + "number into Go struct field PersistentVolumeClaimSpec.spec."
                                           "volumes.VolumeSource.ephemeral.volumeClaimTemplate.spec.storageClassName "
                                           "of type string)"),
    "type-eph-labels-list.yaml": (_claim("", "labels: [a]"),
                                  _UNMARSHAL + "array into Go struct field ObjectMeta.spec.volumes.VolumeSource."
                                  "ephemeral.volumeClaimTemplate.metadata.labels of type map[string]string)"),
    # ---- metadata.managedFields (ValidateManagedFields, before the kube finalizer rule)
    "managed-fields-accepted.yaml": (_meta("managedFields: [{manager: kubectl, operation: Apply, fieldsType: FieldsV1, "
                                           "fieldsV1: {'f:spec': {}}, time: '2024-01-01T00:00:00Z'}]"), None),
    "managed-fields-bad.yaml": (_meta("finalizers: [x], managedFields: [{}, {operation: 'Patch<', fieldsType: FieldsV2, "
                                      'manager: "a\\tb\\u0007c\\u00e9\\u200b", subresource: ' + "s" * 257
                                      + "}, {operation: Update, manager: " + "m" * 129 + "}]"),
                                'metadata.managedFields[1].manager: Invalid value: "a\\tb\\acé\\u200b": invalid '
                                "character U+200B (at position 7)"),
    # (a source's secretRef is a LocalObjectReference: `n` is YAML's false)
    **{f"type-{src}-secret-ref-name-bool.yaml": (
        _vols(f"{{name: a, {src}: {{{body}, secretRef: {{name: n}}}}}}"),
        _UNMARSHAL + f"bool into Go struct field LocalObjectReference.spec.volumes.VolumeSource.{src}.secretRef.name "
        "of type string)") for src, body in (("scaleIO", "gateway: g, system: s, volumeName: v"),
                                             ("rbd", "monitors: [m], image: i"), ("cephfs", "monitors: [m]"),
                                             ("flexVolume", "driver: d"))},
    **{f"type-{src}-secret-ref-list.yaml": (
        _vols(f"{{name: a, {src}: {{{body}, secretRef: [s]}}}}"),
        _UNMARSHAL + f"array into Go struct field {t}.spec.volumes.VolumeSource.{src}.secretRef of type "
        "v1.LocalObjectReference)") for src, body, t in (
            ("scaleIO", "gateway: g, system: s, volumeName: v", "ScaleIOVolumeSource"),
            ("rbd", "monitors: [m], image: i", "RBDVolumeSource"), ("cephfs", "monitors: [m]", "CephFSVolumeSource"),
            ("flexVolume", "driver: d", "FlexVolumeSource"))},
    "type-managed-fields-operation-number.yaml": (_meta("managedFields: [{operation: 1}]"),
                                                  _UNMARSHAL + "number into Go struct field ManagedFieldsEntry."
                                                  "metadata.managedFields.operation of type "
                                                  "v1.ManagedFieldsOperationType)"),
}


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), CASES)


def test_enough_cases() -> None:
    passed = [n for n, (_, phrase) in CASES.items() if not phrase or phrase.startswith("static pods may not")]
    assert len(CASES) >= 50 and len(CASES) - len(passed) >= 40 and len(passed) >= 12


@pytest.mark.parametrize("name", sorted(CASES))
def test_volume_sources_as_the_kubelet_checks_them(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert_as_the_kubelet(kubelet, ours, CASES[name][1])
