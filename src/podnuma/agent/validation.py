"""``ValidatePodCreate`` as the kubelet runs it on a static pod.

Mirrors, for the fields a static-pod manifest plausibly gets wrong,
k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``
(``ValidatePodCreate``, ``validatePodMetadataAndSpec``, ``ValidatePodSpec``,
``ValidateVolumes``, ``validateContainers``, ``validateInitContainers``,
``validateContainerCommon``, ``validateContainerPorts``, ``ValidateEnv``,
``ValidateVolumeMounts``, ``validatePullPolicy``, ``validateRestartPolicy``,
``validateDNSPolicy``, ``validatePodHostNetworkDeps``,
``checkHostPortConflicts``, ``validateContainersOnlyForPod``), the object
metadata rules of k8s.io/apimachinery v0.37.2
``pkg/api/validation/objectmeta.go`` and
``pkg/apis/meta/v1/validation/validation.go`` (``ValidateLabels``), and the
name rules of ``pkg/util/validation/validation.go`` and
``pkg/api/validate/content/kube.go`` (DNS labels and subdomains, qualified
names, label values, port names and numbers, relaxed environment variable
names). The texts are those of ``pkg/util/validation/field``.

The kubelet validates the pod after its file source has defaulted it:
the name already carries ``-NODE``, the namespace is ``default`` when
empty, ``spec.nodeName`` is the node's name; the v1 defaults fill an empty
``restartPolicy``, ``dnsPolicy``, ``imagePullPolicy``,
``terminationMessagePolicy``, a port's ``protocol`` and, with
``hostNetwork``, a port's ``hostPort``. It reports every error it finds, in
its order, as one message: ``invalid pod: [E1 E2 ...]``.

Values of the wrong JSON type are skipped here (the decoder refuses them,
and ``parse_pod`` words that); so is a pod with a quantity that does not
parse (the kubelet never gets to validate it). What is not checked here is
listed in ``podnuma.agent.staticpod``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from podnuma.api.pod_defaults import default_container_requests, round_up_milli
from podnuma.api.pod_validation import (
    check_container_resource_name,
    check_requirements,
    check_resource_quantity,
    qualified_name_errors,
)
from podnuma.api.quantity import Quantity, QuantityError, quantity_from_manifest
from podnuma.errors import InputError
from podnuma.fieldkit import wrong_type

__all__ = ["StaticPodErrors", "validate_static_pod"]

_MAX_INT32 = 2**31 - 1

_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+")
_PORT_NAME_LETTER = re.compile(r".*[a-z].*", re.S)

_LABEL_TEXT = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_TEXT = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_VALUE_TEXT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_ENV_NAME_TEXT = (
    "a valid environment variable name must consist only of printable ASCII characters "
    "other than '='"
)

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_TERMINATION_POLICIES = ("File", "FallbackToLogsOnError")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
#: the volume sources of a v1 Volume, in the order the kubelet counts them
_VOLUME_SOURCES = (
    "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret",
    "nfs", "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "flexVolume",
    "cinder", "cephfs", "downwardAPI", "fc", "azureFile", "vsphereVolume", "quobyte",
    "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO", "storageos",
    "csi", "ephemeral", "image",
)


class StaticPodErrors(InputError):
    """The kubelet's refusal of a static pod: every field error, in order
    (``errors``: ``(path, message)``), as one ``invalid pod: [...]``;
    ``suffix``: podnuma's pointer to the first error's line."""

    def __init__(self, errors: list[tuple[str, str]], *, file: str | None = None, suffix: str = "") -> None:
        self.errors = errors
        text = " ".join(f"{p}: {m}" for p, m in errors)
        super().__init__(f"invalid pod: [{text}]{suffix}", file=file)


# ---------------------------------------------------------------- wording


def _q(value: str) -> str:
    """A string as Go's ``%q`` shows it (close enough: every control
    character escaped, never a raw line break)."""
    return json.dumps(value, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _shown(value: object) -> str:
    if isinstance(value, str):
        return _q(value)
    return str(value)


class _Errors:
    """An ``ErrorList`` being built."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def invalid(self, path: str, value: object, detail: str) -> None:
        self.items.append((path, f"Invalid value: {_shown(value)}: {detail}"))

    def required(self, path: str, detail: str = "") -> None:
        self.items.append((path, "Required value" + (f": {detail}" if detail else "")))

    def unsupported(self, path: str, value: str, supported: tuple[str, ...]) -> None:
        allowed = ", ".join(_q(s) for s in supported)
        self.items.append((path, f"Unsupported value: {_q(value)}: supported values: {allowed}"))

    def forbidden(self, path: str, detail: str) -> None:
        self.items.append((path, f"Forbidden: {detail}"))

    def duplicate(self, path: str, value: str) -> None:
        self.items.append((path, f"Duplicate value: {_q(value)}"))

    def not_found(self, path: str, value: str) -> None:
        self.items.append((path, f"Not found: {_q(value)}"))

    def each(self, path: str, value: str, messages: list[str]) -> None:
        for m in messages:
            self.invalid(path, value, m)

    def raised(self, fn: Callable[[], None]) -> None:
        """The first error a podnuma check raises, as an entry."""
        try:
            fn()
        except InputError as e:
            self.items.append((e.path, e.message))


# ---------------------------------------------------------------- name rules


def _size(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def dns_label_errors(value: str) -> list[str]:
    out = []
    if _size(value) > 63:
        out.append("must be no more than 63 characters")
    if not _LABEL_RE.fullmatch(value):
        out.append("must not contain dots" if _SUBDOMAIN_RE.fullmatch(value) else _LABEL_TEXT)
    return out


def dns_subdomain_errors(value: str) -> list[str]:
    out = []
    if _size(value) > 253:
        out.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.fullmatch(value):
        out.append(_SUBDOMAIN_TEXT)
    return out


def label_value_errors(value: str) -> list[str]:
    out = []
    if _size(value) > 63:
        out.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.fullmatch(value):
        out.append(_LABEL_VALUE_TEXT)
    return out


def port_name_errors(value: str) -> list[str]:
    out = []
    if _size(value) > 15:
        out.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.fullmatch(value):
        out.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.fullmatch(value):
        out.append("must contain at least one letter (a-z)")
    if "--" in value:
        out.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        out.append("must not begin or end with a hyphen")
    return out


def env_name_errors(value: str) -> list[str]:
    if any(ord(ch) > 127 or not ch.isprintable() or ch == "=" for ch in value):
        return [_ENV_NAME_TEXT]
    return []


def _range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


# ---------------------------------------------------------------- shapes


def _get(m: Any, key: str) -> Any:
    return m.get(key) if isinstance(m, Mapping) else None


def _map(m: Any, key: str) -> Mapping[str, Any]:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, Mapping) else {}


def _seq(m: Any, key: str) -> list[Any]:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, list) else []


def _str(m: Any, key: str) -> str | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, str) else None


def _int(m: Any, key: str) -> int | None:
    v = m.get(key) if isinstance(m, Mapping) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _quantities_parse(spec: Mapping[str, Any]) -> bool:
    """Every quantity of the containers' resources parses (else the kubelet
    refuses the file before it validates anything)."""
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in _seq(spec, key):
            res = _map(c, "resources")
            for which in ("limits", "requests"):
                for value in _map(res, which).values():
                    if isinstance(value, bool) or not isinstance(value, str | int | float | type(None)):
                        return False
                    try:
                        quantity_from_manifest(value)
                    except QuantityError:
                        return False
    return True


_STR, _INT, _BOOL = "a string", "an integer", "a boolean"
_CONTAINER_TYPES = (("name", _STR), ("image", _STR), ("imagePullPolicy", _STR),
                    ("terminationMessagePolicy", _STR), ("restartPolicy", _STR))
_PORT_TYPES = (("name", _STR), ("containerPort", _INT), ("hostPort", _INT), ("protocol", _STR),
               ("hostIP", _STR))
_SPEC_TYPES = (("restartPolicy", _STR), ("dnsPolicy", _STR), ("hostname", _STR), ("subdomain", _STR),
               ("priorityClassName", _STR), ("activeDeadlineSeconds", _INT), ("hostNetwork", _BOOL))


def _fits(value: Any, kind: str) -> bool:
    if value is None:
        return True
    if kind == _BOOL:
        return isinstance(value, bool)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


def _check_types(doc: Mapping[str, Any]) -> None:
    """The fields read here hold values of their Go types (else the
    kubelet's decoder refuses the file): the first that does not, as
    podnuma words it."""
    checks: list[tuple[str, Any, str]] = []
    spec = _map(doc, "spec")
    checks += [(f"spec.{k}", spec.get(k), t) for k, t in _SPEC_TYPES]
    checks += [(f"spec.nodeSelector[{k}]", v, _STR) for k, v in _map(spec, "nodeSelector").items()]
    for i, vol in enumerate(_seq(spec, "volumes")):
        checks += [(f"spec.volumes[{i}].name", _get(vol, "name"), _STR),
                   (f"spec.volumes[{i}].hostPath.path", _map(vol, "hostPath").get("path"), _STR)]
    for key in ("containers", "initContainers"):
        for i, c in enumerate(_seq(spec, key)):
            path = f"spec.{key}[{i}]"
            checks += [(f"{path}.{k}", _get(c, k), t) for k, t in _CONTAINER_TYPES]
            for j, port in enumerate(_seq(c, "ports")):
                checks += [(f"{path}.ports[{j}].{k}", _get(port, k), t) for k, t in _PORT_TYPES]
            checks += [(f"{path}.env[{j}].name", _get(e, "name"), _STR)
                       for j, e in enumerate(_seq(c, "env"))]
            for j, m in enumerate(_seq(c, "volumeMounts")):
                checks += [(f"{path}.volumeMounts[{j}].{k}", _get(m, k), _STR)
                           for k in ("name", "mountPath")]
    for path, value, kind in checks:
        if not _fits(value, kind):
            raise wrong_type(path, kind, value)


# ---------------------------------------------------------------- the pod


def validate_static_pod(doc: Mapping[str, Any], *, node_name: str, restart_rules: bool) -> list[tuple[str, str]]:
    """The field errors ``ValidatePodCreate`` finds in the static pod
    ``doc`` (as decoded, before the file source's defaults) on the node
    ``node_name``, in the kubelet's order; ``restart_rules``: the
    ``ContainerRestartRules`` gate. Empty when podnuma finds none."""
    spec = _map(doc, "spec")
    _check_types(doc)
    if not _quantities_parse(spec):
        return []
    errs = _Errors()
    meta = _map(doc, "metadata")
    _metadata(errs, meta, node_name)
    _spec(errs, spec, node_name, restart_rules)
    return errs.items


def _metadata(errs: _Errors, meta: Mapping[str, Any], node_name: str) -> None:
    name = _str(meta, "name")
    if name:
        full = f"{name}-{node_name.lower()}"
        errs.each("metadata.name", full, dns_subdomain_errors(full))
    namespace = _str(meta, "namespace") or "default"
    errs.each("metadata.namespace", namespace, dns_label_errors(namespace))
    labels = _map(meta, "labels")
    for key in sorted(k for k in labels if isinstance(k, str)):
        errs.each("metadata.labels", key, qualified_name_errors(key))
        value = labels[key]
        if isinstance(value, str):
            errs.each("metadata.labels", value, label_value_errors(value))
    annotations = _map(meta, "annotations")
    for key in sorted(k for k in annotations if isinstance(k, str)):
        errs.each("metadata.annotations", key, qualified_name_errors(key.lower()))
    size = sum(_size(k) + _size(v) for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str))
    if size > 256 * 1024:
        errs.items.append(("metadata.annotations", f"Too long: may not be more than {256 * 1024} bytes"))


def _spec(errs: _Errors, spec: Mapping[str, Any], node_name: str, restart_rules: bool) -> None:
    volumes = _volumes(errs, spec)
    host_network = spec.get("hostNetwork") is True
    containers = [c for c in _seq(spec, "containers") if isinstance(c, Mapping)]
    inits = [c for c in _seq(spec, "initContainers") if isinstance(c, Mapping)]
    if "containers" in spec and isinstance(spec.get("containers"), list | type(None)) and not containers:
        errs.required("spec.containers")
    names: set[str] = set()
    for i, c in enumerate(containers):
        path = f"spec.containers[{i}]"
        _container_common(errs, c, path, volumes, host_network)
        cname = _str(c, "name") or ""
        if cname in names:
            errs.duplicate(f"{path}.name", cname)
        names.add(cname)
        _probes(errs, c, path)
        policy = _str(c, "restartPolicy")
        if policy is not None:
            if not restart_rules:
                errs.forbidden(f"{path}.restartPolicy", "may not be set for non-init containers")
            elif policy not in _CONTAINER_RESTART_POLICIES:
                errs.unsupported(f"{path}.restartPolicy", policy, _CONTAINER_RESTART_POLICIES)
    _host_port_conflicts(errs, containers, "spec.containers", spec)
    for i, c in enumerate(inits):
        path = f"spec.initContainers[{i}]"
        _container_common(errs, c, path, volumes, host_network)
        policy = _str(c, "restartPolicy")
        if policy is not None and (
            (restart_rules and policy not in _CONTAINER_RESTART_POLICIES)
            or (not restart_rules and policy != "Always")
        ):
            allowed = _CONTAINER_RESTART_POLICIES if restart_rules else ("Always",)
            errs.unsupported(f"{path}.restartPolicy", policy, allowed)
        cname = _str(c, "name") or ""
        if cname in names:
            errs.duplicate(f"{path}.name", cname)
        elif cname:
            names.add(cname)
        _host_port_conflicts(errs, [c], "spec.initContainers", spec, first=i)
        if policy == "Always":
            _probes(errs, c, path)
        else:
            for key in ("lifecycle", *_PROBES):
                if c.get(key) is not None:
                    errs.forbidden(f"{path}.{key}", "may not be set for init containers without restartPolicy=Always")
    if host_network:
        for i, c in enumerate(containers):
            for j, port in enumerate(_seq(c, "ports")):
                cport, hport = _int(port, "containerPort"), _int(port, "hostPort")
                if cport is not None and hport and hport != cport:
                    errs.invalid(f"spec.containers[{i}].ports[{j}].hostPort", hport,
                                 "must match `containerPort` when `hostNetwork` is true")
    restart = _str(spec, "restartPolicy")
    if restart and restart not in _RESTART_POLICIES:
        errs.unsupported("spec.restartPolicy", restart, _RESTART_POLICIES)
    dns = _str(spec, "dnsPolicy")
    if dns and dns not in _DNS_POLICIES:
        errs.unsupported("spec.dnsPolicy", dns, _DNS_POLICIES)
    selector = _map(spec, "nodeSelector")
    for key in sorted(k for k in selector if isinstance(k, str)):
        errs.each("spec.nodeSelector", key, qualified_name_errors(key))
        value = selector[key]
        if isinstance(value, str):
            errs.each("spec.nodeSelector", value, label_value_errors(value))
    errs.each("spec.nodeName", node_name, dns_subdomain_errors(node_name))
    deadline = _int(spec, "activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= _MAX_INT32:
        errs.invalid("spec.activeDeadlineSeconds", deadline, _range_error(1, _MAX_INT32))
    for key in ("hostname", "subdomain"):
        value = _str(spec, key)
        if value:
            errs.each(f"spec.{key}", value, dns_label_errors(value))
    priority_class = _str(spec, "priorityClassName")
    if priority_class:
        errs.each("spec.priorityClassName", priority_class, dns_subdomain_errors(priority_class))
    # (pod-only checks, then ValidatePodCreate's own)
    for key, ctrs in (("containers", containers), ("initContainers", inits)):
        for i, c in enumerate(ctrs):
            image = _str(c, "image")
            if image and image != image.strip(_GO_SPACE):
                errs.invalid(f"spec.{key}[{i}].image", image, "must not have leading or trailing whitespace")
    if _seq(spec, "ephemeralContainers"):
        errs.forbidden("spec.ephemeralContainers", "cannot be set on create")
    if _seq(spec, "schedulingGates"):
        errs.forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared")


#: what Go's strings.TrimSpace trims (Unicode white space)
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _volumes(errs: _Errors, spec: Mapping[str, Any]) -> set[str]:
    """``ValidateVolumes``: the names of the volumes without errors."""
    good: set[str] = set()
    for i, vol in enumerate(_seq(spec, "volumes")):
        if not isinstance(vol, Mapping):
            continue
        path = f"spec.volumes[{i}]"
        found = _Errors()
        sources = [k for k in _VOLUME_SOURCES if vol.get(k) is not None]
        for extra in sources[1:]:
            found.forbidden(f"{path}.{extra}", "may not specify more than 1 volume type")
        host = vol["hostPath"] if sources and sources[0] == "hostPath" else None
        if isinstance(host, Mapping) and not _str(host, "path"):
            found.required(f"{path}.hostPath.path")
        name = _str(vol, "name") or ""
        if not name:
            found.required(f"{path}.name")
        else:
            found.each(f"{path}.name", name, dns_label_errors(name))
        if name in good:
            found.duplicate(f"{path}.name", name)
        if found.items:
            errs.items.extend(found.items)
        else:
            good.add(name)
    return good


def _container_common(
    errs: _Errors, c: Mapping[str, Any], path: str, volumes: set[str], host_network: bool
) -> None:
    name = _str(c, "name")
    if not name:
        errs.required(f"{path}.name")
    else:
        errs.each(f"{path}.name", name, dns_label_errors(name))
    if not _str(c, "image"):
        errs.required(f"{path}.image")
    policy = _str(c, "terminationMessagePolicy")
    if policy and policy not in _TERMINATION_POLICIES:
        errs.unsupported(f"{path}.terminationMessagePolicy", policy, _TERMINATION_POLICIES)
    _ports(errs, c, f"{path}.ports", host_network)
    for i, env in enumerate(_seq(c, "env")):
        env_name = _str(env, "name")
        if not env_name:
            errs.required(f"{path}.env[{i}].name")
        else:
            errs.each(f"{path}.env[{i}].name", env_name, env_name_errors(env_name))
    mount_paths: set[str] = set()
    for i, mnt in enumerate(_seq(c, "volumeMounts")):
        if not isinstance(mnt, Mapping):
            continue
        where = f"{path}.volumeMounts[{i}]"
        vol = _str(mnt, "name") or ""
        if not vol:
            errs.required(f"{where}.name")
        if vol not in volumes:
            errs.not_found(f"{where}.name", vol)
        mount_path = _str(mnt, "mountPath") or ""
        if not mount_path:
            errs.required(f"{where}.mountPath")
        if mount_path in mount_paths:
            errs.invalid(f"{where}.mountPath", mount_path, "must be unique")
        mount_paths.add(mount_path)
    pull = _str(c, "imagePullPolicy")
    if pull and pull not in _PULL_POLICIES:
        errs.unsupported(f"{path}.imagePullPolicy", pull, _PULL_POLICIES)
    _resources(errs, _map(c, "resources"), f"{path}.resources")


def _host_port(port: Mapping[str, Any], host_network: bool) -> int:
    """A port's host port, defaulted (to its container port with host
    networking) as the kubelet's decoder defaults it."""
    hport = _int(port, "hostPort") or 0
    if not hport and host_network:
        hport = _int(port, "containerPort") or 0
    return hport


def _ports(errs: _Errors, c: Mapping[str, Any], path: str, host_network: bool) -> None:
    names: set[str] = set()
    for i, port in enumerate(_seq(c, "ports")):
        if not isinstance(port, Mapping):
            continue
        where = f"{path}[{i}]"
        name = _str(port, "name")
        if name:
            msgs = port_name_errors(name)
            if msgs:
                errs.each(f"{where}.name", name, msgs)
            elif name in names:
                errs.duplicate(f"{where}.name", name)
            else:
                names.add(name)
        cport = _int(port, "containerPort")
        if not cport:
            if cport == 0 or port.get("containerPort") is None:
                errs.required(f"{where}.containerPort")
        elif not 1 <= cport <= 65535:
            errs.invalid(f"{where}.containerPort", cport, _range_error(1, 65535))
        hport = _host_port(port, host_network)
        if hport and not 1 <= hport <= 65535:
            errs.invalid(f"{where}.hostPort", hport, _range_error(1, 65535))
        protocol = _str(port, "protocol")
        if protocol and protocol not in _PROTOCOLS:
            errs.unsupported(f"{where}.protocol", protocol, _PROTOCOLS)


def _host_port_conflicts(
    errs: _Errors, ctrs: list[Mapping[str, Any]], path: str, spec: Mapping[str, Any], first: int = 0
) -> None:
    """``checkHostPortConflicts``: protocol, host IP and host port unique
    (after defaulting: TCP; with host networking the container port)."""
    seen: set[str] = set()
    host_network = spec.get("hostNetwork") is True
    for ci, c in enumerate(ctrs):
        for pi, port in enumerate(_seq(c, "ports")):
            if not isinstance(port, Mapping):
                continue
            hport = _host_port(port, host_network)
            if not hport:
                continue
            key = f"{_str(port, 'protocol') or 'TCP'}/{_str(port, 'hostIP') or ''}/{hport}"
            if key in seen:
                errs.duplicate(f"{path}[{first + ci}].ports[{pi}].hostPort", key)
            seen.add(key)


def _probes(errs: _Errors, c: Mapping[str, Any], path: str) -> None:
    for key in _PROBES:
        probe = c.get(key)
        if not isinstance(probe, Mapping):
            continue
        handlers = [h for h in _PROBE_HANDLERS if probe.get(h) is not None]
        for extra in handlers[1:]:
            errs.forbidden(f"{path}.{key}.{extra}", "may not specify more than 1 handler type")
        if not handlers:
            errs.required(f"{path}.{key}", "must specify a handler type")
        elif handlers[0] == "exec" and not _seq(probe["exec"], "command"):
            errs.required(f"{path}.{key}.exec.command")


def _quantity(raw: Any) -> Quantity:
    return round_up_milli(quantity_from_manifest(raw))


def _resources(errs: _Errors, res: Mapping[str, Any], path: str) -> None:
    """``ValidateContainerResourceRequirements`` with podnuma's checks (the
    first error of each list, then of the pair)."""
    lists: dict[str, dict[str, Quantity]] = {}
    ok = True
    for which in ("limits", "requests"):
        out: dict[str, Quantity] = {}
        for name, raw in sorted(_map(res, which).items()):
            where = f"{path}.{which}[{name}]"
            before = len(errs.items)
            errs.raised(partial(check_container_resource_name, name, where))
            if len(errs.items) > before:
                ok = False
                continue
            qty = _quantity(raw)
            errs.raised(partial(check_resource_quantity, name, qty, where))
            out[name] = qty
        lists[which] = out
    if ok:
        requests, limits = lists["requests"], lists["limits"]
        default_container_requests(requests, limits)
        errs.raised(partial(check_requirements, requests, limits, path))
