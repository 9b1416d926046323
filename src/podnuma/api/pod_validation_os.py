"""The checks of a pod's fields that depend on its ``spec.os``.

Mirrors ``pkg/apis/core/validation/validation.go`` (k8s.io/kubernetes
v1.37.2): ``validateLinux`` and ``validateWindows``, which
``ValidatePodSpec`` runs once ``validateOS`` found the name valid (and
only then), after every other check podnuma models; containers in the
order of ``VisitContainersWithPath`` (``pkg/apis/core/pods/helpers.go``):
init containers, app containers, then ephemeral containers.

A field is "set" as Go sees it once the request is decoded: a pointer or a
list that is not ``null`` (an empty list or object is set), a boolean that
is ``true``; ``sysctls`` only when it holds an entry. None of these fields
is changed before validation in v1.37 (the gates that drop some of them,
``UserNamespacesSupport``, ``ProcMountType``, ``SupplementalGroupsPolicy``,
``SELinuxChangePolicy``, are locked on).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from podnuma.errors import InputError

__all__ = ["check_os_fields", "os_field_errors"]

_LINUX_MSG: Final = "windows options cannot be set for a linux pod"
_WINDOWS_MSG: Final = "cannot be set for a windows pod"

#: the pod security context's fields a Windows pod may not set, in the
#: order the API server checks them
_WINDOWS_POD_CONTEXT: Final = (
    "appArmorProfile", "seLinuxOptions", "seccompProfile", "fsGroup", "fsGroupChangePolicy",
    "sysctls", "runAsUser", "runAsGroup", "supplementalGroups", "supplementalGroupsPolicy",
    "seLinuxChangePolicy",
)
#: then the pod's own fields (a pointer: set unless null)
_WINDOWS_POD_POINTERS: Final = ("hostUsers",)
#: (booleans: set when true)
_WINDOWS_POD_FLAGS: Final = ("hostPID", "hostIPC")
#: then, last of the pod's, ``shareProcessNamespace`` (a pointer)
_WINDOWS_SHARE: Final = "shareProcessNamespace"
#: a container security context's fields a Windows pod may not set, in order
_WINDOWS_CONTAINER_CONTEXT: Final = (
    "appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities", "readOnlyRootFilesystem",
    "privileged", "allowPrivilegeEscalation", "procMount", "runAsUser", "runAsGroup",
)
_CONTAINER_LISTS: Final = ("initContainers", "containers", "ephemeralContainers")


def _is_set(doc: object, key: str) -> bool:
    return isinstance(doc, Mapping) and doc.get(key) is not None


def _context(doc: object) -> object:
    return doc.get("securityContext") if isinstance(doc, Mapping) else None


def _containers(spec: Mapping[str, object]) -> Iterator[tuple[str, object]]:
    """Each container's path and document (a null entry is Go's zero
    container: nothing set)."""
    for key in _CONTAINER_LISTS:
        items = spec.get(key)
        if isinstance(items, Sequence) and not isinstance(items, str):
            for i, item in enumerate(items):
                yield f"spec.{key}[{i}]", item


def _linux_errors(spec: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    """``validateLinux``: no ``windowsOptions``, the pod's then each
    container's."""
    if _is_set(_context(spec), "windowsOptions"):
        yield "spec.securityContext.windowsOptions", _LINUX_MSG
    for path, container in _containers(spec):
        if _is_set(_context(container), "windowsOptions"):
            yield f"{path}.securityContext.windowsOptions", _LINUX_MSG


def _windows_errors(spec: Mapping[str, object]) -> Iterator[tuple[str, str]]:
    """``validateWindows``: the pod security context's Linux fields, then
    ``hostUsers``, ``hostPID``, ``hostIPC``, ``shareProcessNamespace``,
    then each container's security context."""
    context = _context(spec)
    for key in _WINDOWS_POD_CONTEXT:
        if key == "sysctls":
            sysctls = context.get(key) if isinstance(context, Mapping) else None
            refused = isinstance(sysctls, Sequence) and len(sysctls) > 0
        else:
            refused = _is_set(context, key)
        if refused:
            yield f"spec.securityContext.{key}", _WINDOWS_MSG
    for key in _WINDOWS_POD_POINTERS:
        if _is_set(spec, key):
            yield f"spec.{key}", _WINDOWS_MSG
    for key in _WINDOWS_POD_FLAGS:
        if spec.get(key) is True:
            yield f"spec.{key}", _WINDOWS_MSG
    if _is_set(spec, _WINDOWS_SHARE):
        yield f"spec.{_WINDOWS_SHARE}", _WINDOWS_MSG
    for path, container in _containers(spec):
        context = _context(container)
        for key in _WINDOWS_CONTAINER_CONTEXT:
            if _is_set(context, key):
                yield f"{path}.securityContext.{key}", _WINDOWS_MSG


def os_field_errors(spec: Mapping[str, object], os_name: str) -> Iterator[tuple[str, str]]:
    """Every ``Forbidden`` error (field path, detail), in the API server's
    order, of ``validateLinux`` (``os_name`` ``linux``) or
    ``validateWindows`` (``windows``) on a pod's ``spec`` (as decoded); any
    other name gives none (``validateOS`` refused it). The kubelet's
    validation of a static pod lists them all; the API server's path
    reports the first."""
    if os_name == "linux":
        yield from _linux_errors(spec)
    elif os_name == "windows":
        yield from _windows_errors(spec)


def check_os_fields(spec: Mapping[str, object], os_name: str) -> None:
    """Refuse the pod with the first of :func:`os_field_errors`."""
    for path, detail in os_field_errors(spec, os_name):
        raise InputError(f"Forbidden: {detail}", path=path)
