"""The security settings of a static pod, as ``ValidatePodCreate`` checks them.

The checks themselves are the API server's, shared with the API server's
path: :mod:`podnuma.api.pod_validation_security` (k8s.io/kubernetes v1.37.2
``pkg/apis/core/validation/validation.go``: ``ValidatePodSpecificAnnotations``'
seccomp and AppArmor annotations, ``validatePodSpecSecurityContext``,
``validateShareProcessNamespace``, ``ValidateSecurityContext``,
``validateWindowsHostProcessPod``, ``validateHostUsers``,
``validateSeccompAnnotationsAndFields`` and
``validateAppArmorAnnotationsAndFieldsMatchOnCreate``). This module hands
them the options the kubelet's file source passes
(``GetValidationOptionsFromPodSpecAndMeta`` on a new pod, the kubelet's
gates: ``validation_kit.options()``: ``SELinuxMount``,
``UserNamespacesHostNetworkSupport``) and appends their field errors to
the ``_Errors`` of ``podnuma.agent.validation`` handed in. The kubelet
process allows privileged containers (``capabilities.Initialize`` with
``AllowPrivileged``), so ``privileged: true`` and host-process containers
are not refused for that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from podnuma.agent.validation_kit import _Errors, options
from podnuma.api import pod_validation_security as shared

__all__ = [
    "annotations_match_fields",
    "container_security_context",
    "host_process_and_users",
    "pod_security_annotations",
    "pod_security_context",
]

def _annotations(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def pod_security_annotations(errs: _Errors, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    """The seccomp and AppArmor annotations (the end of
    ``ValidatePodSpecificAnnotations``)."""
    errs.items.extend(shared.annotation_errors(_annotations(meta), spec))


def pod_security_context(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validatePodSpecSecurityContext`` then ``validateShareProcessNamespace``."""
    errs.items.extend(shared.pod_security_context_errors(
        spec, only_recursive_selinux=options().only_recursive_selinux))


def container_security_context(errs: _Errors, c: Mapping[str, Any], path: str, spec: Mapping[str, Any]) -> None:
    """``ValidateSecurityContext`` of the container ``c`` at ``path``."""
    errs.items.extend(shared.container_security_context_errors(c, path, spec))


def host_process_and_users(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validateWindowsHostProcessPod`` then ``validateHostUsers``."""
    errs.items.extend(shared.host_process_and_users_errors(
        spec, userns_host_network=options().userns_host_network))


def annotations_match_fields(errs: _Errors, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    """The end of ``ValidatePodCreate``: annotations and fields agree."""
    errs.items.extend(shared.annotations_match_fields_errors(_annotations(meta), spec))
