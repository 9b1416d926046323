"""The security checks of a pod, shared by the API server's path and the kubelet's static pods.

Mirrors k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``:
``ValidateSeccompPodAnnotations``, ``ValidateSeccompProfile`` and
``ValidateAppArmorPodAnnotations`` (the end of
``ValidatePodSpecificAnnotations``); ``validatePodSpecSecurityContext``
with ``validateSysctls``, ``ValidateHostSysctl``,
``validateFSGroupChangePolicy``, ``validateSupplementalGroupsPolicy`` and
``validateSELinuxChangePolicy``; ``validateShareProcessNamespace``;
``ValidateSecurityContext`` (the last step of ``validateContainerCommon``)
with ``ValidateProcMountType``, ``validateSeccompProfileField``,
``ValidateAppArmorProfileField``, ``validateWindowsSecurityContextOptions``
and ``validateLocalDescendingPath``; ``validateWindowsHostProcessPod`` and
``validateHostUsers``; and the end of ``ValidatePodCreate``: the refusal
of ``ephemeralContainers`` on create, ``validateSeccompAnnotationsAndFields``
and ``validateAppArmorAnnotationsAndFieldsMatchOnCreate``. The namespaces
of sysctls are those of k8s.io/component-helpers v0.37.2
``node/util/sysctl`` (``GetNamespace``, ``NormalizeName``).

Every function returns the field errors of its Go counterpart as
``(field path, message)`` pairs in Go's order: the kubelet's validation of
a static pod (``podnuma.agent.validation``) lists them all, the API
server's path (``podnuma.api.pod_manifest``) reports the first.

The validation options a new pod gets (``GetValidationOptionsFromPodSpecAndMeta``
with no old pod) are handed in: ``only_recursive_selinux``
(``SELinuxMount`` off: ``seLinuxChangePolicy`` may only be ``Recursive``),
``userns_host_network`` (``UserNamespacesHostNetworkSupport``:
``hostNetwork`` allowed with ``hostUsers: false``). The others are fixed
for a new pod: namespaced sysctls are refused with
``hostNetwork``/``hostIPC``, ``CAP_SYS_ADMIN`` with
``allowPrivilegeEscalation: false`` is refused, and so are
``volumeDevices`` with ``hostUsers: false``.

A value Go hands to ``field.Invalid``/``field.NotSupported`` as a pointer,
a named string type or a struct is shown as ``encoding/json`` writes it
(:func:`go_json`: a struct with Go's field names of the internal type, in
its order); a plain string as ``%q``, a number or a bool as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from podnuma.api.pod_validation import dns_subdomain_errors, go_len
from podnuma.errors import InputError
from podnuma.golang.json import go_json_quote
from podnuma.golang.strconv import go_quote

__all__ = [
    "Errors",
    "annotation_errors",
    "annotations_match_fields_errors",
    "apparmor_version_skew",
    "check_first",
    "container_security_context_errors",
    "ephemeral_on_create_errors",
    "gate_options",
    "go_json",
    "sysctl_namespace",
    "host_process_and_users_errors",
    "pod_security_context_errors",
]

#: field errors: (path, message), in Go's order
Errors = list[tuple[str, str]]

_MAX_ID: Final = 2**31 - 1
_ID_RANGE: Final = f"must be between 0 and {_MAX_ID}, inclusive"

_SECCOMP_POD_KEY: Final = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_PREFIX: Final = "container.seccomp.security.alpha.kubernetes.io/"
_APPARMOR_CONTAINER_PREFIX: Final = "container.apparmor.security.beta.kubernetes.io/"
_LOCALHOST: Final = "localhost/"

_PROFILE_TYPES: Final = ("Localhost", "RuntimeDefault", "Unconfined")
_PROC_MOUNTS: Final = ("Default", "Unmasked")
_FS_GROUP_POLICIES: Final = ("Always", "OnRootMismatch")
_SUPPLEMENTAL_POLICIES: Final = ("Merge", "Strict")
_SELINUX_POLICIES: Final = ("MountOption", "Recursive")
_SELINUX_RECURSIVE: Final = ("Recursive",)

_SYSCTL_SEGMENT: Final = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL_RE: Final = re.compile(f"({_SYSCTL_SEGMENT}[\\./])*{_SYSCTL_SEGMENT}")
_SYSCTL_TEXT: Final = f"must have at most 253 characters and match regex ^{_SYSCTL_RE.pattern}$"
#: sysctls in a namespace the pod may share with the host: exact names,
#: then prefixes (a name under the prefix and a dot)
_SYSCTL_NAMES: Final = (
    ("kernel.domainname", "UTS"), ("kernel.sem", "IPC"), ("kernel.shmall", "IPC"),
    ("kernel.shmmax", "IPC"), ("kernel.shmmni", "IPC"), ("kernel.shm_rmid_forced", "IPC"),
    ("kernel.shm", "IPC"), ("kernel.msgmax", "IPC"), ("kernel.msgmnb", "IPC"),
    ("kernel.msgmni", "IPC"), ("kernel.msg", "IPC"),
)  # fmt: skip
_SYSCTL_PREFIXES: Final = (("net", "Net"), ("fs.mqueue", "IPC"), ("user", "User"))

_WIN_NETBIOS: Final = re.compile(r'[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}')
_WIN_DNS_LABEL: Final = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_WIN_DNS: Final = re.compile(f"{_WIN_DNS_LABEL}(?:\\.{_WIN_DNS_LABEL})*")
_WIN_BAD_USER_CHARS: Final = re.compile(r'["/\\:;|=,+*?<>@\[\]]')
_WIN_DOTS_SPACES: Final = re.compile(r"[. ]+")
_ASCII_CONTROL: Final = re.compile("[\x00-\x1f\x7f]")
#: a lone surrogate (no literal: mypyc refuses one in a string)
_SURROGATE: Final = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]")

#: what Go's strings.TrimSpace trims
_GO_SPACE: Final = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_CONTAINER_LISTS: Final = ("initContainers", "containers", "ephemeralContainers")
_USERNS: Final = "when `hostUsers` is false"


# ---------------------------------------------------------------- wording


def go_json(value: Any) -> str:
    """``json.Marshal`` of a value built by the readers below: ``None`` is
    null, a dict a struct (its keys in order), a list a slice."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return go_json_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return "{" + ",".join(f"{go_json(k)}:{go_json(v)}" for k, v in value.items()) + "}"


def _q(value: str) -> str:
    """``%q`` of a string as Go decoded it (a lone surrogate became U+FFFD)."""
    return go_quote(_SURROGATE.sub("\ufffd", value))


def _shown(value: object) -> str:
    return _q(value) if isinstance(value, str) else str(value)


def _invalid(out: Errors, path: str, value: object, detail: str) -> None:
    out.append((path, f"Invalid value: {_shown(value)}: {detail}"))


def _invalid_json(out: Errors, path: str, value: Any, detail: str) -> None:
    out.append((path, f"Invalid value: {go_json(value)}: {detail}"))


def _required(out: Errors, path: str, detail: str = "") -> None:
    out.append((path, "Required value" + (f": {detail}" if detail else "")))


def _forbidden(out: Errors, path: str, detail: str) -> None:
    out.append((path, f"Forbidden: {detail}"))


def _unsupported_named(out: Errors, path: str, value: str, supported: Sequence[str]) -> None:
    allowed = ", ".join(_q(s) for s in supported)
    out.append((path, f"Unsupported value: {go_json(value)}: supported values: {allowed}"))


def check_first(errors: Errors) -> None:
    """Refuse the pod with the first of ``errors`` (the API server's path
    reports the first field error of Go's list)."""
    if errors:
        path, message = errors[0]
        raise InputError(message, path=path)


def gate_options(spec: Mapping[str, Any], enabled: Callable[[str], bool]) -> tuple[bool, bool]:
    """``(only_recursive_selinux, userns_host_network)`` of a new pod from
    the feature gates ``enabled`` answers for (``SELinuxMount``,
    ``UserNamespacesHostNetworkSupport``), each gate asked only when the
    pod's fields make it matter (a ``seLinuxChangePolicy`` other than
    ``Recursive``;
    ``hostNetwork`` with ``hostUsers: false``)."""
    policy = _str(_map(spec, "securityContext"), "seLinuxChangePolicy")
    only_recursive = policy is not None and policy != "Recursive" and not enabled("SELinuxMount")
    userns = (spec.get("hostUsers") is False and spec.get("hostNetwork") is True
              and enabled("UserNamespacesHostNetworkSupport"))
    return only_recursive, userns


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
    """Every container with its path, in the order of
    ``VisitContainersWithPath``: init, app, then ephemeral containers (a
    ``null`` entry is Go's zero container)."""
    for key in _CONTAINER_LISTS:
        for i, c in enumerate(_list(spec, key) or []):
            yield (c if isinstance(c, Mapping) else {}), f"spec.{key}[{i}]"


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
    }  # fmt: skip


# ---------------------------------------------------------------- annotations


def _descending_path(out: Errors, path: str, target: str) -> None:
    """``validateLocalDescendingPath``: relative, no ``..`` element."""
    if target.startswith("/"):
        _invalid(out, path, target, "must be a relative path")
    if ".." in target.split("/"):
        _invalid(out, path, target, "must not contain '..'")


def _seccomp_annotation(out: Errors, path: str, value: str) -> None:
    """``ValidateSeccompProfile`` of one annotation."""
    if value in ("runtime/default", "docker/default", "unconfined"):
        return
    if value.startswith(_LOCALHOST):
        _descending_path(out, path, value.removeprefix(_LOCALHOST))
        return
    _invalid(out, path, value, "must be a valid seccomp profile")


def annotation_errors(annotations: Mapping[str, Any], spec: Mapping[str, Any]) -> Errors:
    """The seccomp and AppArmor annotations (the end of
    ``ValidatePodSpecificAnnotations``): each seccomp profile a known one
    or ``localhost/`` with a relative path without ``..`` (the pod's
    first, then the containers'); each AppArmor annotation for a container
    of the pod, its profile empty, ``runtime/default``, ``unconfined`` or
    ``localhost/...``. (Go walks the annotations in no fixed order: here
    sorted.)"""
    out: Errors = []
    keys = sorted(k for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str))
    pod_profile = annotations.get(_SECCOMP_POD_KEY)
    if isinstance(pod_profile, str):
        _seccomp_annotation(out, f"metadata.annotations.{_SECCOMP_POD_KEY}", pod_profile)
    for key in keys:
        if key.startswith(_SECCOMP_CONTAINER_PREFIX):
            _seccomp_annotation(out, f"metadata.annotations.{key}", annotations[key])
    names = {_str(c, "name") or "" for c, _ in _containers(spec)}
    for key in keys:
        if not key.startswith(_APPARMOR_CONTAINER_PREFIX):
            continue
        path = f"metadata.annotations[{key}]"
        container = key.removeprefix(_APPARMOR_CONTAINER_PREFIX)
        if container not in names:
            _invalid(out, path, container, "container not found")
        value = annotations[key]
        if value not in ("", "runtime/default", "unconfined") and not value.startswith(_LOCALHOST):
            _invalid(out, path, value, f"invalid AppArmor profile name: {_q(value)}")
    return out


# ---------------------------------------------------------------- profiles


def _seccomp_field(out: Errors, profile: Mapping[str, Any] | None, path: str) -> None:
    """``validateSeccompProfileField``."""
    if profile is None:
        return
    kind = _str(profile, "type") or ""
    if not kind:
        _required(out, f"{path}.type", "type is required when seccompProfile is set")
    elif kind not in _PROFILE_TYPES:
        _unsupported_named(out, f"{path}.type", kind, _PROFILE_TYPES)
    local = _str(profile, "localhostProfile")
    if kind == "Localhost":
        if local is None:
            _required(out, f"{path}.localhostProfile", "must be set when seccomp type is Localhost")
        else:
            _descending_path(out, f"{path}.localhostProfile", local)
    elif local is not None:
        _invalid_json(out, f"{path}.localhostProfile", _profile_struct(profile),
                      "can only be set when seccomp type is Localhost")


def _apparmor_field(out: Errors, profile: Mapping[str, Any] | None, path: str) -> None:
    """``ValidateAppArmorProfileField``."""
    if profile is None:
        return
    kind = _str(profile, "type") or ""
    local = _str(profile, "localhostProfile")
    where = f"{path}.localhostProfile"
    if kind == "Localhost":
        if local is None:
            _required(out, where, "must be set when AppArmor type is Localhost")
        else:
            if local.strip(_GO_SPACE) != local:
                _invalid(out, where, local, "must not be padded with whitespace")
            elif not local:
                _required(out, where, "must be set when AppArmor type is Localhost")
            if go_len(local) > 4095:
                out.append((where, "Too long: may not be more than 4095 bytes"))
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            _invalid_json(out, where, local, "can only be set when AppArmor type is Localhost")
    elif not kind:
        _required(out, f"{path}.type", "type is required when appArmorProfile is set")
    else:
        _unsupported_named(out, f"{path}.type", kind, _PROFILE_TYPES)


def _windows_user_name(out: Errors, where: str, user_name: str) -> None:
    """The ``runAsUserName`` part of ``validateWindowsSecurityContextOptions``."""
    if not user_name:
        _invalid_json(out, where, user_name, "runAsUserName cannot be an empty string")
        return
    if _ASCII_CONTROL.search(user_name):
        _invalid_json(out, where, user_name, "runAsUserName cannot contain control characters")
        return
    parts = user_name.split("\\")
    if len(parts) > 2:
        _invalid_json(out, where, user_name, "runAsUserName cannot contain more than one backslash")
        return
    domain, user = ("", parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    if go_len(domain) >= 256:
        _invalid_json(out, where, user_name, "runAsUserName's Domain length must be under 256 characters")
    if len(parts) == 2 and not (_WIN_NETBIOS.fullmatch(domain) or _WIN_DNS.fullmatch(domain)):
        _invalid_json(out, where, user_name, "runAsUserName's Domain doesn't match the NetBios nor the DNS format")
    if not user:
        _invalid_json(out, where, user_name, "runAsUserName's User cannot be empty")
    elif go_len(user) > 104:
        _invalid_json(out, where, user_name, "runAsUserName's User length must not be longer than 104 characters")
    if _WIN_DOTS_SPACES.fullmatch(user):
        _invalid_json(out, where, user_name, "runAsUserName's User cannot contain only periods or spaces")
    if _WIN_BAD_USER_CHARS.search(user):
        _invalid_json(out, where, user_name,
                      "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]")


def _windows_options(out: Errors, options: Mapping[str, Any] | None, path: str) -> None:
    """``validateWindowsSecurityContextOptions``."""
    if options is None:
        return
    spec_name = _str(options, "gmsaCredentialSpecName")
    if spec_name is not None:
        for msg in dns_subdomain_errors(spec_name):
            _invalid_json(out, f"{path}.gmsaCredentialSpecName", spec_name, msg)
    cred = _str(options, "gmsaCredentialSpec")
    if cred is not None:
        if not cred:
            _invalid_json(out, f"{path}.gmsaCredentialSpec", cred, "gmsaCredentialSpec cannot be an empty string")
        elif go_len(cred) > 64 * 1024:
            _invalid_json(out, f"{path}.gmsaCredentialSpec", cred, "gmsaCredentialSpec size must be under 64 KiB")
    user_name = _str(options, "runAsUserName")
    if user_name is not None:
        _windows_user_name(out, f"{path}.runAsUserName", user_name)


def _id(out: Errors, sc: Mapping[str, Any], key: str, path: str) -> None:
    value = _int(sc, key)
    if value is not None and not 0 <= value <= _MAX_ID:
        _invalid(out, f"{path}.{key}", value, _ID_RANGE)


# ---------------------------------------------------------------- the pod


def sysctl_namespace(name: str) -> str:
    """``GetNamespace``: the kernel namespace of a sysctl (``NormalizeName``:
    slashes turned to dots when a slash comes first; a ``*`` ends it), or
    ``""``."""
    first = next((i for i, ch in enumerate(name) if ch in "./"), -1)
    if first != -1 and name[first] == "/":
        name = name.translate(str.maketrans("./", "/."))
    name = name.split("*", 1)[0]
    for exact, ns in _SYSCTL_NAMES:
        if name == exact:
            return ns
    for prefix, ns in _SYSCTL_PREFIXES:
        if name.startswith(prefix + "."):
            return ns
    return ""


def _sysctls(out: Errors, sysctls: list[Any], spec: Mapping[str, Any], path: str) -> None:
    """``validateSysctls`` with ``ValidateHostSysctl`` (a new pod: a
    namespaced sysctl is refused with the host's namespace)."""
    seen: set[str] = set()
    host_network = spec.get("hostNetwork") is True
    host_ipc = spec.get("hostIPC") is True
    for i, sysctl in enumerate(sysctls):
        name = _str(sysctl, "name") or ""
        where = f"{path}[{i}].name"
        if not name:
            _required(out, where)
        elif go_len(name) > 253 or not _SYSCTL_RE.fullmatch(name):
            _invalid(out, where, name, _SYSCTL_TEXT)
        elif name in seen:
            out.append((where, f"Duplicate value: {_q(name)}"))
        ns = sysctl_namespace(name)
        if host_network and ns == "Net":
            _invalid(out, where, name, "may not be specified when 'hostNetwork' is true")
        elif host_ipc and ns == "IPC":
            _invalid(out, where, name, "may not be specified when 'hostIPC' is true")
        seen.add(name)


def pod_security_context_errors(spec: Mapping[str, Any], *, only_recursive_selinux: bool = False) -> Errors:
    """``validatePodSpecSecurityContext`` then ``validateShareProcessNamespace``
    (their place in ``ValidatePodSpec``: after ``nodeSelector``)."""
    out: Errors = []
    sc = _map(spec, "securityContext")
    path = "spec.securityContext"
    if sc is not None:
        _id(out, sc, "fsGroup", path)
        _id(out, sc, "runAsUser", path)
        _id(out, sc, "runAsGroup", path)
        for g, gid in enumerate(_list(sc, "supplementalGroups") or []):
            if isinstance(gid, int) and not isinstance(gid, bool) and not 0 <= gid <= _MAX_ID:
                _invalid(out, f"{path}.supplementalGroups[{g}]", gid, _ID_RANGE)
        sysctls = _list(sc, "sysctls")
        if sysctls:
            _sysctls(out, sysctls, spec, f"{path}.sysctls")
        policy = _str(sc, "fsGroupChangePolicy")
        if policy is not None and policy not in _FS_GROUP_POLICIES:
            _unsupported_named(out, f"{path}.fsGroupChangePolicy", policy, _FS_GROUP_POLICIES)
        _seccomp_field(out, _map(sc, "seccompProfile"), f"{path}.seccompProfile")
        _windows_options(out, _map(sc, "windowsOptions"), f"{path}.windowsOptions")
        _apparmor_field(out, _map(sc, "appArmorProfile"), f"{path}.appArmorProfile")
        policy = _str(sc, "supplementalGroupsPolicy")
        if policy is not None and policy not in _SUPPLEMENTAL_POLICIES:
            _unsupported_named(out, f"{path}.supplementalGroupsPolicy", policy, _SUPPLEMENTAL_POLICIES)
        policy = _str(sc, "seLinuxChangePolicy")
        allowed = _SELINUX_RECURSIVE if only_recursive_selinux else _SELINUX_POLICIES
        if policy is not None and policy not in allowed:
            _unsupported_named(out, f"{path}.seLinuxChangePolicy", policy, allowed)
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        _invalid_json(out, "spec.shareProcessNamespace", True, "ShareProcessNamespace and HostPID cannot both be enabled")
    return out


def container_security_context_errors(c: Mapping[str, Any], path: str, spec: Mapping[str, Any]) -> Errors:
    """``ValidateSecurityContext`` of the container ``c`` at ``path`` (the
    last check of ``validateContainerCommon``)."""
    out: Errors = []
    sc = _map(c, "securityContext")
    if sc is None:
        return out
    path = f"{path}.securityContext"
    _id(out, sc, "runAsUser", path)
    _id(out, sc, "runAsGroup", path)
    proc_mount = _str(sc, "procMount")
    if proc_mount is not None:
        if proc_mount not in _PROC_MOUNTS:
            _unsupported_named(out, f"{path}.procMount", proc_mount, _PROC_MOUNTS)
        if proc_mount == "Unmasked" and spec.get("hostUsers") is not False:
            _invalid_json(out, f"{path}.procMount", proc_mount, "`hostUsers` must be false to use `Unmasked`")
    _seccomp_field(out, _map(sc, "seccompProfile"), f"{path}.seccompProfile")
    if _bool(sc, "allowPrivilegeEscalation") is False:
        if _bool(sc, "privileged") is True:
            _invalid_json(out, path, _security_context_struct(sc),
                          "cannot set `allowPrivilegeEscalation` to false and `privileged` to true")
        for cap in _list(_map(sc, "capabilities"), "add") or []:
            if cap == "CAP_SYS_ADMIN":
                _invalid_json(out, path, _security_context_struct(sc),
                              "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN")
    _windows_options(out, _map(sc, "windowsOptions"), f"{path}.windowsOptions")
    _apparmor_field(out, _map(sc, "appArmorProfile"), f"{path}.appArmorProfile")
    return out


def host_process_and_users_errors(spec: Mapping[str, Any], *, userns_host_network: bool = False) -> Errors:
    """``validateWindowsHostProcessPod`` then ``validateHostUsers`` (their
    place in ``ValidatePodSpec``: after the topology spread constraints)."""
    out: Errors = []
    pod_hp = _bool(_map(_map(spec, "securityContext"), "windowsOptions"), "hostProcess")
    total = host_process = 0
    for c, path in _containers(spec):
        total += 1
        hp = _bool(_map(_map(c, "securityContext"), "windowsOptions"), "hostProcess")
        if pod_hp is not None and hp is not None and pod_hp != hp:
            _invalid_json(out, f"{path}.securityContext.windowsOptions.hostProcess", hp,
                          f"pod hostProcess value must be identical if both are specified, was {go_json(pod_hp)}")
        if hp is True or (hp is None and pod_hp is True):
            host_process += 1
    if host_process:
        if host_process != total:
            _invalid(out, "spec", "", "If pod contains any hostProcess containers then all containers "
                     "must be HostProcess containers")
        if spec.get("hostNetwork") is not True:
            _invalid_json(out, "spec.hostNetwork", False,
                          "hostNetwork must be true if pod contains any hostProcess containers")
    if spec.get("hostUsers") is not False:
        return out
    if spec.get("hostNetwork") is True and not userns_host_network:
        _forbidden(out, "spec.hostNetwork", _USERNS)
    # (Go names these two fields by their Go names)
    if spec.get("hostPID") is True:
        _forbidden(out, "spec.HostPID", _USERNS)
    if spec.get("hostIPC") is True:
        _forbidden(out, "spec.HostIPC", _USERNS)
    for c, path in _containers(spec):
        if _list(c, "volumeDevices"):
            _forbidden(out, f"{path}.volumeDevices", _USERNS)
    return out


# ---------------------------------------------------------------- the API server's PrepareForCreate


def _apparmor_for_annotation(value: str) -> dict[str, Any] | None:
    """``ApparmorFieldForAnnotation`` (``pkg/api/pod/util.go``), kept only
    when ``ValidateAppArmorProfileField`` finds it valid."""
    if value == "runtime/default":
        return {"type": "RuntimeDefault"}
    if value == "unconfined":
        return {"type": "Unconfined"}
    if value.startswith(_LOCALHOST):
        profile = {"type": "Localhost", "localhostProfile": value.removeprefix(_LOCALHOST)}
        errors: Errors = []
        _apparmor_field(errors, profile, "")
        return None if errors else profile
    return None


def apparmor_version_skew(annotations: Mapping[str, Any], spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """``applyAppArmorVersionSkew`` (``pkg/registry/core/pod/strategy.go``,
    the pod strategy's ``PrepareForCreate``, before validation): a
    container (init, app or ephemeral) without an ``appArmorProfile`` of
    its own whose AppArmor annotation names a valid profile other than the
    pod's gets that profile as its field (not a Windows pod's). ``spec``
    is returned as it is when nothing is copied, else a copy holding the
    copied fields (``spec`` is left as it was)."""
    if _str(_map(spec, "os"), "name") == "windows" or not any(
            isinstance(k, str) and k.startswith(_APPARMOR_CONTAINER_PREFIX) for k in annotations):
        return spec
    pod_profile = _map(_map(spec, "securityContext"), "appArmorProfile")
    pod_key = None if pod_profile is None else (_str(pod_profile, "type") or "",
                                                _str(pod_profile, "localhostProfile"))
    out = dict(spec)
    changed = False
    for key in _CONTAINER_LISTS:
        items = _list(spec, key)
        if not items:
            continue
        copied = list(items)
        for i, c in enumerate(items):
            if not isinstance(c, Mapping):
                continue
            value = annotations.get(_APPARMOR_CONTAINER_PREFIX + (_str(c, "name") or ""))
            sc = _map(c, "securityContext")
            if not isinstance(value, str) or _map(sc, "appArmorProfile") is not None:
                continue
            profile = _apparmor_for_annotation(value)
            if profile is None or (profile["type"], profile.get("localhostProfile")) == pod_key:
                continue
            copied[i] = {**c, "securityContext": {**(sc or {}), "appArmorProfile": profile}}
            changed = True
        out[key] = copied
    return out if changed else spec


# ---------------------------------------------------------------- the end of ValidatePodCreate


def ephemeral_on_create_errors(spec: Mapping[str, Any]) -> Errors:
    """``ValidatePodCreate``'s refusal of ephemeral containers (they are
    added later, through the ``ephemeralcontainers`` subresource): after
    ``ValidatePodSpec``, before the annotations' match with the fields."""
    out: Errors = []
    if _list(spec, "ephemeralContainers"):
        _forbidden(out, "spec.ephemeralContainers", "cannot be set on create")
    return out


def _seccomp_match(out: Errors, annotation: str, profile: Mapping[str, Any], path: str) -> None:
    kind = _str(profile, "type")
    if (kind == "Unconfined" and annotation != "unconfined"
            or kind == "RuntimeDefault" and annotation not in ("runtime/default", "docker/default")
            or kind == "Localhost" and not annotation.startswith(_LOCALHOST)):
        _forbidden(out, f"{path}.type", "seccomp type in annotation and field must match")
    elif kind == "Localhost" and annotation.removeprefix(_LOCALHOST) != _str(profile, "localhostProfile"):
        _forbidden(out, f"{path}.localhostProfile", "seccomp profile in annotation and field must match")


def annotations_match_fields_errors(annotations: Mapping[str, Any], spec: Mapping[str, Any]) -> Errors:
    """The end of ``ValidatePodCreate``: where a seccomp annotation and
    field both say something they agree (the pod's, then each container's
    own), then likewise for AppArmor (a container's field, else the pod's;
    not for a Windows pod)."""
    out: Errors = []
    pod_sc = _map(spec, "securityContext")
    pod_seccomp = _map(pod_sc, "seccompProfile")
    value = annotations.get(_SECCOMP_POD_KEY)
    if pod_seccomp is not None and isinstance(value, str):
        _seccomp_match(out, value, pod_seccomp, "spec.securityContext.seccompProfile")
    for c, path in _containers(spec):
        profile = _map(_map(c, "securityContext"), "seccompProfile")
        value = annotations.get(_SECCOMP_CONTAINER_PREFIX + (_str(c, "name") or ""))
        if profile is not None and isinstance(value, str):
            _seccomp_match(out, value, profile, f"{path}.securityContext.seccompProfile")
    if _str(_map(spec, "os"), "name") == "windows":
        return out
    pod_apparmor = _map(pod_sc, "appArmorProfile")
    for c, path in _containers(spec):
        profile = _map(_map(c, "securityContext"), "appArmorProfile") or pod_apparmor
        value = annotations.get(_APPARMOR_CONTAINER_PREFIX + (_str(c, "name") or ""))
        if profile is None or not isinstance(value, str):
            continue
        where = f"{path}.securityContext.appArmorProfile"
        kind = _str(profile, "type")
        if (kind == "Unconfined" and value != "unconfined" or kind == "RuntimeDefault" and value != "runtime/default"
                or kind == "Localhost" and not value.startswith(_LOCALHOST)):
            _forbidden(out, f"{where}.type", "apparmor type in annotation and field must match")
        elif kind == "Localhost" and value.removeprefix(_LOCALHOST) != _str(profile, "localhostProfile"):
            _forbidden(out, f"{where}.localhostProfile", "apparmor profile in annotation and field must match")
    return out
