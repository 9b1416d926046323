"""The security settings of a static pod, as ``ValidatePodCreate`` checks them.

Mirrors k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``:
``ValidateSeccompPodAnnotations``, ``ValidateSeccompProfile`` and
``ValidateAppArmorPodAnnotations`` (from ``ValidatePodSpecificAnnotations``),
``validatePodSpecSecurityContext`` with ``validateSysctls``,
``ValidateHostSysctl``, ``validateFSGroupChangePolicy``,
``validateSupplementalGroupsPolicy``, ``validateSELinuxChangePolicy``;
``validateShareProcessNamespace``; ``ValidateSecurityContext`` (the last step
of ``validateContainerCommon``) with ``ValidateProcMountType``,
``validateSeccompProfileField``, ``ValidateAppArmorProfileField``,
``validateWindowsSecurityContextOptions`` and ``validateLocalDescendingPath``;
``validateWindowsHostProcessPod`` and ``validateHostUsers``; and the end of
``ValidatePodCreate``:
``validateSeccompAnnotationsAndFields`` and
``validateAppArmorAnnotationsAndFieldsMatchOnCreate``. Namespaces of
sysctls are those of k8s.io/component-helpers v0.37.2
``node/util/sysctl`` (``GetNamespace``, ``NormalizeName``).

What the kubelet's file source passes (``GetValidationOptionsFromPodSpecAndMeta``
on a new pod, the kubelet's gates: ``validation_kit.options()``):
``SELinuxMount`` (on: both ``seLinuxChangePolicy`` values allowed, off:
only ``Recursive``), ``UserNamespacesHostNetworkSupport`` (off:
``hostNetwork`` is refused with ``hostUsers: false``), namespaced
sysctls are refused with ``hostNetwork``/``hostIPC``, ``CAP_SYS_ADMIN`` with
``allowPrivilegeEscalation: false`` is refused. The kubelet process allows
privileged containers (``capabilities.Initialize`` with ``AllowPrivileged``),
so ``privileged: true`` and host-process containers are not refused for that.

A value the Go code hands to ``field.Invalid``/``field.NotSupported`` as a
pointer, a named string type or a struct is shown as ``encoding/json``
writes it (``_json``: Go's field names of the internal type, in its order);
a plain string as ``%q``, a number or bool as it is. Field errors are
appended to the ``_Errors`` of ``podnuma.agent.validation`` handed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from podnuma.agent.validation_kit import _Errors, _json_str, _q, options
from podnuma.api.pod_validation import dns_subdomain_errors, go_len

__all__ = [
    "annotations_match_fields",
    "container_security_context",
    "host_process_and_users",
    "pod_security_annotations",
    "pod_security_context",
]



_MAX_ID = 2**31 - 1
_ID_RANGE = f"must be between 0 and {_MAX_ID}, inclusive"

_SECCOMP_POD_KEY = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_CONTAINER_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
_LOCALHOST = "localhost/"

_PROFILE_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
_PROC_MOUNTS = ("Default", "Unmasked")
_FS_GROUP_POLICIES = ("Always", "OnRootMismatch")
_SUPPLEMENTAL_POLICIES = ("Merge", "Strict")
_SELINUX_POLICIES = ("MountOption", "Recursive")

_SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_RE = re.compile(f"({_SYSCTL_SEGMENT}[\\./])*{_SYSCTL_SEGMENT}")
_SYSCTL_TEXT = f"must have at most 253 characters and match regex ^{_SYSCTL_RE.pattern}$"
#: sysctls (exact names, then prefixes) in a namespace the pod may share
_SYSCTL_NAMES = {"kernel.domainname": "UTS", "kernel.sem": "IPC", "kernel.shmall": "IPC",
                 "kernel.shmmax": "IPC", "kernel.shmmni": "IPC", "kernel.shm_rmid_forced": "IPC",
                 "kernel.shm": "IPC", "kernel.msgmax": "IPC", "kernel.msgmnb": "IPC",
                 "kernel.msgmni": "IPC", "kernel.msg": "IPC"}
_SYSCTL_PREFIXES = {"net": "Net", "fs.mqueue": "IPC", "user": "User"}

_WIN_NETBIOS = re.compile(r'[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}')
_WIN_DNS_LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_WIN_DNS = re.compile(f"{_WIN_DNS_LABEL}(?:\\.{_WIN_DNS_LABEL})*")
_WIN_BAD_USER_CHARS = re.compile(r'["/\\:;|=,+*?<>@\[\]]')
_WIN_DOTS_SPACES = re.compile(r"[. ]+")
_ASCII_CONTROL = re.compile("[\x00-\x1f\x7f]")

#: what Go's strings.TrimSpace trims
_GO_SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
             "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


# ---------------------------------------------------------------- wording


def _json(value: Any) -> str:
    """``json.Marshal`` of a value built by the helpers below: ``None`` is
    null, a dict a struct (its keys in order), a list a slice."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _json_str(value)
    if isinstance(value, list):
        return "[" + ",".join(_json(v) for v in value) + "]"
    return "{" + ",".join(f"{_json_str(k)}:{_json(v)}" for k, v in value.items()) + "}"


def _invalid_json(errs: _Errors, path: str, value: Any, detail: str) -> None:
    errs.items.append((path, f"Invalid value: {_json(value)}: {detail}"))


def _invalid_bool(errs: _Errors, path: str, value: bool, detail: str) -> None:
    errs.items.append((path, f"Invalid value: {_json(value)}: {detail}"))



# ---------------------------------------------------------------- shapes


def _map(m: Any, key: str) -> Mapping[str, Any] | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, Mapping) else None


def _str(m: Any, key: str) -> str | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, str) else None


def _int(m: Any, key: str) -> int | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _bool(m: Any, key: str) -> bool | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, bool) else None


def _list(m: Any, key: str) -> list[Any] | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, list) else None


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Every container with its path: init containers, app containers,
    ephemeral containers (the kubelet's visiting order)."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(_list(spec, key) or []):
            if isinstance(c, Mapping):
                yield c, f"spec.{key}[{i}]"


def _profile_struct(p: Mapping[str, Any]) -> dict[str, Any]:
    return {"Type": _str(p, "type") or "", "LocalhostProfile": _str(p, "localhostProfile")}


def _security_context_struct(sc: Mapping[str, Any]) -> dict[str, Any]:
    """A container's ``securityContext`` as the internal Go struct."""
    caps = _map(sc, "capabilities")
    selinux = _map(sc, "seLinuxOptions")
    windows = _map(sc, "windowsOptions")
    seccomp = _map(sc, "seccompProfile")
    apparmor = _map(sc, "appArmorProfile")
    return {
        "Capabilities": None if caps is None else {
            "Add": _list(caps, "add"), "Drop": _list(caps, "drop")},
        "Privileged": _bool(sc, "privileged"),
        "SELinuxOptions": None if selinux is None else {
            k.capitalize(): _str(selinux, k) or "" for k in ("user", "role", "type", "level")},
        "WindowsOptions": None if windows is None else {
            "GMSACredentialSpecName": _str(windows, "gmsaCredentialSpecName"),
            "GMSACredentialSpec": _str(windows, "gmsaCredentialSpec"),
            "RunAsUserName": _str(windows, "runAsUserName"),
            "HostProcess": _bool(windows, "hostProcess")},
        "RunAsUser": _int(sc, "runAsUser"),
        "RunAsGroup": _int(sc, "runAsGroup"),
        "RunAsNonRoot": _bool(sc, "runAsNonRoot"),
        "ReadOnlyRootFilesystem": _bool(sc, "readOnlyRootFilesystem"),
        "AllowPrivilegeEscalation": _bool(sc, "allowPrivilegeEscalation"),
        "ProcMount": _str(sc, "procMount"),
        "SeccompProfile": None if seccomp is None else _profile_struct(seccomp),
        "AppArmorProfile": None if apparmor is None else _profile_struct(apparmor),
    }


# ---------------------------------------------------------------- annotations


def _descending_path(errs: _Errors, path: str, target: str) -> None:
    """``validateLocalDescendingPath``: relative, no ``..`` element."""
    if target.startswith("/"):
        errs.invalid(path, target, "must be a relative path")
    if ".." in target.split("/"):
        errs.invalid(path, target, "must not contain '..'")


def _seccomp_annotation(errs: _Errors, path: str, value: str) -> None:
    if value in ("runtime/default", "docker/default", "unconfined"):
        return
    if value.startswith(_LOCALHOST):
        _descending_path(errs, path, value.removeprefix(_LOCALHOST))
        return
    errs.invalid(path, value, "must be a valid seccomp profile")


def pod_security_annotations(errs: _Errors, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    """The seccomp and AppArmor annotations (the end of
    ``ValidatePodSpecificAnnotations``): each seccomp profile a known one
    or ``localhost/`` and a relative path without ``..``; each AppArmor
    annotation for a container of the pod, its profile empty,
    ``runtime/default``, ``unconfined`` or ``localhost/...``. (Go walks the
    annotations in no fixed order: here sorted.)"""
    annotations = _map(meta, "annotations") or {}
    keys = sorted(k for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str))
    pod_profile = annotations.get(_SECCOMP_POD_KEY)
    if isinstance(pod_profile, str):
        _seccomp_annotation(errs, f"metadata.annotations.{_SECCOMP_POD_KEY}", pod_profile)
    for key in keys:
        if key.startswith(_SECCOMP_CONTAINER_PREFIX):
            _seccomp_annotation(errs, f"metadata.annotations.{key}", annotations[key])
    names = {_str(c, "name") or "" for c, _ in _containers(spec)}
    for key in keys:
        if not key.startswith(_APPARMOR_CONTAINER_PREFIX):
            continue
        path = f"metadata.annotations[{key}]"
        container = key.removeprefix(_APPARMOR_CONTAINER_PREFIX)
        if container not in names:
            errs.invalid(path, container, "container not found")
        value = annotations[key]
        if value not in ("", "runtime/default", "unconfined") and not value.startswith(_LOCALHOST):
            errs.invalid(path, value, f"invalid AppArmor profile name: {_q(value)}")


# ---------------------------------------------------------------- profiles


def _seccomp_field(errs: _Errors, profile: Mapping[str, Any] | None, path: str) -> None:
    """``validateSeccompProfileField``."""
    if profile is None:
        return
    kind = _str(profile, "type") or ""
    if not kind:
        errs.required(f"{path}.type", "type is required when seccompProfile is set")
    elif kind not in _PROFILE_TYPES:
        errs.unsupported_named(f"{path}.type", kind, _PROFILE_TYPES)
    local = _str(profile, "localhostProfile")
    if kind == "Localhost":
        if local is None:
            errs.required(f"{path}.localhostProfile", "must be set when seccomp type is Localhost")
        else:
            _descending_path(errs, f"{path}.localhostProfile", local)
    elif local is not None:
        _invalid_json(errs, f"{path}.localhostProfile", _profile_struct(profile),
                      "can only be set when seccomp type is Localhost")


def _apparmor_field(errs: _Errors, profile: Mapping[str, Any] | None, path: str) -> None:
    """``ValidateAppArmorProfileField``."""
    if profile is None:
        return
    kind = _str(profile, "type") or ""
    local = _str(profile, "localhostProfile")
    where = f"{path}.localhostProfile"
    if kind == "Localhost":
        if local is None:
            errs.required(where, "must be set when AppArmor type is Localhost")
        else:
            if local.strip(_GO_SPACE) != local:
                errs.invalid(where, local, "must not be padded with whitespace")
            elif not local:
                errs.required(where, "must be set when AppArmor type is Localhost")
            if go_len(local) > 4095:
                errs.items.append((where, "Too long: may not be more than 4095 bytes"))
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            _invalid_json(errs, where, local, "can only be set when AppArmor type is Localhost")
    elif not kind:
        errs.required(f"{path}.type", "type is required when appArmorProfile is set")
    else:
        errs.unsupported_named(f"{path}.type", kind, _PROFILE_TYPES)


def _windows_options(errs: _Errors, options: Mapping[str, Any] | None, path: str) -> None:
    """``validateWindowsSecurityContextOptions``."""
    if options is None:
        return
    spec_name = _str(options, "gmsaCredentialSpecName")
    if spec_name is not None:
        for msg in dns_subdomain_errors(spec_name):
            _invalid_json(errs, f"{path}.gmsaCredentialSpecName", spec_name, msg)
    cred = _str(options, "gmsaCredentialSpec")
    if cred is not None:
        if not cred:
            _invalid_json(errs, f"{path}.gmsaCredentialSpec", cred, "gmsaCredentialSpec cannot be an empty string")
        elif go_len(cred) > 64 * 1024:
            _invalid_json(errs, f"{path}.gmsaCredentialSpec", cred, "gmsaCredentialSpec size must be under 64 KiB")
    user_name = _str(options, "runAsUserName")
    if user_name is None:
        return
    where = f"{path}.runAsUserName"
    parts = user_name.split("\\")
    if not user_name:
        _invalid_json(errs, where, user_name, "runAsUserName cannot be an empty string")
        return
    if _ASCII_CONTROL.search(user_name):
        _invalid_json(errs, where, user_name, "runAsUserName cannot contain control characters")
        return
    if len(parts) > 2:
        _invalid_json(errs, where, user_name, "runAsUserName cannot contain more than one backslash")
        return
    domain, user = ("", parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    if go_len(domain) >= 256:
        _invalid_json(errs, where, user_name, "runAsUserName's Domain length must be under 256 characters")
    if len(parts) == 2 and not (_WIN_NETBIOS.fullmatch(domain) or _WIN_DNS.fullmatch(domain)):
        _invalid_json(errs, where, user_name, "runAsUserName's Domain doesn't match the NetBios nor the DNS format")
    if not user:
        _invalid_json(errs, where, user_name, "runAsUserName's User cannot be empty")
    elif go_len(user) > 104:
        _invalid_json(errs, where, user_name, "runAsUserName's User length must not be longer than 104 characters")
    if _WIN_DOTS_SPACES.fullmatch(user):
        _invalid_json(errs, where, user_name, "runAsUserName's User cannot contain only periods or spaces")
    if _WIN_BAD_USER_CHARS.search(user):
        _invalid_json(errs, where, user_name,
                      "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]")


def _id(errs: _Errors, sc: Mapping[str, Any], key: str, path: str) -> None:
    value = _int(sc, key)
    if value is not None and not 0 <= value <= _MAX_ID:
        errs.invalid(f"{path}.{key}", value, _ID_RANGE)


# ---------------------------------------------------------------- the pod


def _sysctl_namespace(name: str) -> str:
    """``GetNamespace``: the kernel namespace of a sysctl (slashes
    normalized, a ``*`` ends it), or ``""``."""
    first = next((i for i, ch in enumerate(name) if ch in "./"), -1)
    if first != -1 and name[first] == "/":
        name = name.translate(str.maketrans("./", "/."))
    name = name.split("*", 1)[0]
    if name in _SYSCTL_NAMES:
        return _SYSCTL_NAMES[name]
    for prefix, ns in _SYSCTL_PREFIXES.items():
        if name.startswith(prefix + "."):
            return ns
    return ""


def _sysctls(errs: _Errors, sysctls: list[Any], spec: Mapping[str, Any], path: str) -> None:
    seen: set[str] = set()
    host_network = spec.get("hostNetwork") is True
    host_ipc = spec.get("hostIPC") is True
    for i, sysctl in enumerate(sysctls):
        name = _str(sysctl, "name") or ""
        where = f"{path}[{i}].name"
        if not name:
            errs.required(where)
        elif go_len(name) > 253 or not _SYSCTL_RE.fullmatch(name):
            errs.invalid(where, name, _SYSCTL_TEXT)
        elif name in seen:
            errs.duplicate(where, name)
        ns = _sysctl_namespace(name)
        if host_network and ns == "Net":
            errs.invalid(where, name, "may not be specified when 'hostNetwork' is true")
        elif host_ipc and ns == "IPC":
            errs.invalid(where, name, "may not be specified when 'hostIPC' is true")
        seen.add(name)


def pod_security_context(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validatePodSpecSecurityContext`` then ``validateShareProcessNamespace``."""
    sc = _map(spec, "securityContext")
    path = "spec.securityContext"
    if sc is not None:
        _id(errs, sc, "fsGroup", path)
        _id(errs, sc, "runAsUser", path)
        _id(errs, sc, "runAsGroup", path)
        for g, gid in enumerate(_list(sc, "supplementalGroups") or []):
            if isinstance(gid, int) and not isinstance(gid, bool) and not 0 <= gid <= _MAX_ID:
                errs.invalid(f"{path}.supplementalGroups[{g}]", gid, _ID_RANGE)
        sysctls = _list(sc, "sysctls")
        if sysctls:
            _sysctls(errs, sysctls, spec, f"{path}.sysctls")
        policy = _str(sc, "fsGroupChangePolicy")
        if policy is not None and policy not in _FS_GROUP_POLICIES:
            errs.unsupported_named(f"{path}.fsGroupChangePolicy", policy, _FS_GROUP_POLICIES)
        _seccomp_field(errs, _map(sc, "seccompProfile"), f"{path}.seccompProfile")
        _windows_options(errs, _map(sc, "windowsOptions"), f"{path}.windowsOptions")
        _apparmor_field(errs, _map(sc, "appArmorProfile"), f"{path}.appArmorProfile")
        policy = _str(sc, "supplementalGroupsPolicy")
        if policy is not None and policy not in _SUPPLEMENTAL_POLICIES:
            errs.unsupported_named(f"{path}.supplementalGroupsPolicy", policy, _SUPPLEMENTAL_POLICIES)
        policy = _str(sc, "seLinuxChangePolicy")
        allowed = ("Recursive",) if options().only_recursive_selinux else _SELINUX_POLICIES
        if policy is not None and policy not in allowed:
            errs.unsupported_named(f"{path}.seLinuxChangePolicy", policy, allowed)
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        _invalid_bool(errs, "spec.shareProcessNamespace", True,
                      "ShareProcessNamespace and HostPID cannot both be enabled")


def container_security_context(errs: _Errors, c: Mapping[str, Any], path: str, spec: Mapping[str, Any]) -> None:
    """``ValidateSecurityContext`` of the container ``c`` at ``path``."""
    sc = _map(c, "securityContext")
    if sc is None:
        return
    path = f"{path}.securityContext"
    _id(errs, sc, "runAsUser", path)
    _id(errs, sc, "runAsGroup", path)
    proc_mount = _str(sc, "procMount")
    if proc_mount is not None:
        if proc_mount not in _PROC_MOUNTS:
            errs.unsupported_named(f"{path}.procMount", proc_mount, _PROC_MOUNTS)
        if proc_mount == "Unmasked" and spec.get("hostUsers") is not False:
            _invalid_json(errs, f"{path}.procMount", proc_mount, "`hostUsers` must be false to use `Unmasked`")
    _seccomp_field(errs, _map(sc, "seccompProfile"), f"{path}.seccompProfile")
    if _bool(sc, "allowPrivilegeEscalation") is False:
        if _bool(sc, "privileged") is True:
            _invalid_json(errs, path, _security_context_struct(sc),
                          "cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
        for cap in _list(_map(sc, "capabilities"), "add") or []:
            if cap == "CAP_SYS_ADMIN":
                _invalid_json(errs, path, _security_context_struct(sc),
                              "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN")
    _windows_options(errs, _map(sc, "windowsOptions"), f"{path}.windowsOptions")
    _apparmor_field(errs, _map(sc, "appArmorProfile"), f"{path}.appArmorProfile")


def host_process_and_users(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """``validateWindowsHostProcessPod`` then ``validateHostUsers`` (their
    place in ``ValidatePodSpec``: after the topology spread constraints)."""
    pod_hp = _bool(_map(_map(spec, "securityContext"), "windowsOptions"), "hostProcess")
    total = host_process = 0
    for c, path in _containers(spec):
        total += 1
        hp = _bool(_map(_map(c, "securityContext"), "windowsOptions"), "hostProcess")
        if pod_hp is not None and hp is not None and pod_hp != hp:
            _invalid_bool(errs, f"{path}.securityContext.windowsOptions.hostProcess", hp,
                          f"pod hostProcess value must be identical if both are specified, was {_json(pod_hp)}")
        if hp is True or (hp is None and pod_hp is True):
            host_process += 1
    if host_process:
        if host_process != total:
            errs.invalid("spec", "", "If pod contains any hostProcess containers then all containers "
                         "must be HostProcess containers")
        if spec.get("hostNetwork") is not True:
            _invalid_bool(errs, "spec.hostNetwork", False,
                          "hostNetwork must be true if pod contains any hostProcess containers")
    if spec.get("hostUsers") is not False:
        return
    if spec.get("hostNetwork") is True and not options().userns_host_network:
        errs.forbidden("spec.hostNetwork", "when `hostUsers` is false")
    if spec.get("hostPID") is True:
        errs.forbidden("spec.HostPID", "when `hostUsers` is false")
    if spec.get("hostIPC") is True:
        errs.forbidden("spec.HostIPC", "when `hostUsers` is false")
    for c, path in _containers(spec):
        if _list(c, "volumeDevices"):
            errs.forbidden(f"{path}.volumeDevices", "when `hostUsers` is false")


# ---------------------------------------------------------------- annotations and fields


def _seccomp_match(errs: _Errors, annotation: str, profile: Mapping[str, Any], path: str) -> None:
    kind = _str(profile, "type")
    if kind == "Unconfined" and annotation != "unconfined" or kind == "RuntimeDefault" and annotation not in (
            "runtime/default", "docker/default") or kind == "Localhost" and not annotation.startswith(_LOCALHOST):
        errs.forbidden(f"{path}.type", "seccomp type in annotation and field must match")
    elif kind == "Localhost" and annotation.removeprefix(_LOCALHOST) != _str(profile, "localhostProfile"):
        errs.forbidden(f"{path}.localhostProfile", "seccomp profile in annotation and field must match")


def annotations_match_fields(errs: _Errors, meta: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    """The end of ``ValidatePodCreate``: where a seccomp annotation and
    field both say something they agree (the pod's, then each container's
    own), then likewise for AppArmor (a container's field, else the pod's;
    not for a Windows pod)."""
    annotations = _map(meta, "annotations") or {}
    pod_sc = _map(spec, "securityContext")
    pod_seccomp = _map(pod_sc, "seccompProfile")
    value = annotations.get(_SECCOMP_POD_KEY)
    if pod_seccomp is not None and isinstance(value, str):
        _seccomp_match(errs, value, pod_seccomp, "spec.securityContext.seccompProfile")
    for c, path in _containers(spec):
        profile = _map(_map(c, "securityContext"), "seccompProfile")
        value = annotations.get(_SECCOMP_CONTAINER_PREFIX + (_str(c, "name") or ""))
        if profile is not None and isinstance(value, str):
            _seccomp_match(errs, value, profile, f"{path}.securityContext.seccompProfile")
    if _str(_map(spec, "os"), "name") == "windows":
        return
    pod_apparmor = _map(pod_sc, "appArmorProfile")
    for c, path in _containers(spec):
        profile = _map(_map(c, "securityContext"), "appArmorProfile") or pod_apparmor
        value = annotations.get(_APPARMOR_CONTAINER_PREFIX + (_str(c, "name") or ""))
        if profile is None or not isinstance(value, str):
            continue
        where = f"{path}.securityContext.appArmorProfile"
        kind = _str(profile, "type")
        if kind == "Unconfined" and value != "unconfined" or kind == "RuntimeDefault" and value != (
                "runtime/default") or kind == "Localhost" and not value.startswith(_LOCALHOST):
            errs.forbidden(f"{where}.type", "apparmor type in annotation and field must match")
        elif kind == "Localhost" and value.removeprefix(_LOCALHOST) != _str(profile, "localhostProfile"):
            errs.forbidden(f"{where}.localhostProfile", "apparmor profile in annotation and field must match")

