"""Container details of ``ValidatePodCreate`` for a static pod: probes,
``lifecycle`` handlers, env ``valueFrom`` sources and ``resizePolicy``.

Mirrors k8s.io/kubernetes v1.37.2 ``pkg/apis/core/validation/validation.go``:
``validateLifecycle``, ``validateHandler`` (with ``validateExecAction``,
``validateHTTPGetAction``, ``ValidatePortNumOrName``,
``validateTCPSocketAction``, ``validateGRPCAction``,
``validateSleepAction``), ``validateStopSignal``,
``validateLivenessProbe``, ``validateReadinessProbe``,
``validateStartupProbe``, ``validateProbe``, ``validateEnvVarValueFrom``
(``validateObjectFieldSelector``, ``validateContainerResourceFieldSelector``,
``validateContainerResourceDivisor``, ``validateConfigMapKeySelector``,
``validateSecretKeySelector``, ``validateFileKeySelector``,
``validatePathNoBacksteps``), ``validateResizePolicy``, the resize rules
of ``validateInitContainers`` and ``validateFileKeyRefVolumes``; with
``ConvertDownwardAPIFieldLabel`` (``pkg/apis/core/pods/helpers.go``),
``SplitMaybeSubscriptedPath`` (``pkg/fieldpath/fieldpath.go``) and the
name rules of k8s.io/apimachinery v0.37.2 ``pkg/util/validation``
(``IsHTTPHeaderName``, ``IsConfigMapKey``, ``IsValidPortNum``,
``IsValidPortName``, ``IsRelaxedEnvVarName``).

The kubelet validates the pod after the v1 defaults
(``pkg/apis/core/v1/defaults.go``): a probe's ``timeoutSeconds``,
``periodSeconds``, ``successThreshold`` and ``failureThreshold`` left at 0
are 1, 10, 1 and 3; an ``httpGet`` without ``path`` or ``scheme`` has
``/`` and ``HTTP``; a ``fieldRef`` without ``apiVersion`` has ``v1``; the
pod's ``terminationGracePeriodSeconds`` is 30 when absent and 1 when
negative (what a ``sleep`` handler is held to); its ``restartPolicy`` is
``Always`` when empty. The gates as the kubelet's defaults have them:
``EnvFiles`` (``fileKeyRef``) and ``InPlacePodVerticalScaling`` (a
sidecar's ``resizePolicy``) on.

The functions take the pod as :func:`podnuma.agent.validation.go_decode`
decoded it (every value of its Go type, a ``null`` as absent) and append
to the caller's error list in the kubelet's order. A divisor that is no
quantity is the decoder's refusal (``couldn't parse as pod(quantities
must match ...)``): ``go_decode`` raises it first (as a port of the wrong
type, an ``IntOrString`` decoding itself, it ends the decoding at once and
wins over a type error met before it). A container's resources are
checked here too (``check_container_resources``: every error of
``validateResourceRequirements`` with ``ValidateContainerResourceName``,
then ``validateResourceClaimNames``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from podnuma.agent.validation_kit import (
    NulledQuantity,
    _Errors,
    _get,
    _int,
    _q,
    _range_error,
    _seq,
    _str,
    env_name_errors,
    go_lower,
    options,
)
from podnuma.api.pod_schema import _G_VOLUME_SOURCES
from podnuma.api.pod_validation import (
    dns_label_errors,
    dns_subdomain_errors,
    go_len,
    port_name_errors,
    qualified_name_errors,
)
from podnuma.api.quantity import Quantity, QuantityError, parse_quantity, quantity_from_manifest
from podnuma.errors import InputError

__all__ = [
    "check_container_resources",
    "check_env_value_from",
    "check_file_key_ref_volumes",
    "check_init_resize_policy",
    "check_lifecycle_and_probes",
    "check_resize_policy",
    "config_key_errors",
    "container_resource_name_errors",
    "pod_resource_name_errors",
]

_NEGATIVE = "must be greater than or equal to 0"
_ONE_HANDLER = "may not specify more than 1 handler type"

#: a probe's handlers, then a lifecycle hook's, in the order they count
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_HOOK_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
#: the probe timings the decoder fills in when left at 0 (initialDelaySeconds has none)
_PROBE_DEFAULTS = {"initialDelaySeconds": 0, "timeoutSeconds": 1, "periodSeconds": 10,
                   "successThreshold": 1, "failureThreshold": 3}

_SCHEMES = ("HTTP", "HTTPS")
_HTTP_PROTOCOLS = ("HTTP1", "HTTP2")
_GRPC_MODES = ("Plaintext", "TLS")
_HEADER_NAME = re.compile(r"[-A-Za-z0-9]+")
_HEADER_NAME_TEXT = (
    "a valid HTTP header must consist of alphanumeric characters or '-' "
    "(e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"
)

_SIGNALS_WINDOWS = ("SIGKILL", "SIGTERM")
_SIGNALS_LINUX = tuple(sorted((
    "SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL",
    "SIGINT", "SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT",
    "SIGSEGV", "SIGSTKFLT", "SIGSTOP", "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN",
    "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU", "SIGXFSZ",
    "SIGRTMIN", *(f"SIGRTMIN+{n}" for n in range(1, 16)),
    *(f"SIGRTMAX-{n}" for n in range(14, 0, -1)), "SIGRTMAX",
)))

#: the downward-API fields an env var may read (sorted, as the kubelet lists them)
_ENV_FIELD_PATHS = (
    "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
    "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
    "status.podIPs",
)
#: what ConvertDownwardAPIFieldLabel accepts, unsubscripted
_CONVERTIBLE_PATHS = frozenset((
    "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
    "metadata.uid", "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName",
    "spec.schedulerName", "status.phase", "status.hostIP", "status.hostIPs", "status.podIP",
    "status.podIPs",
))
_RESOURCE_FIELDS = (
    "limits.cpu", "limits.ephemeral-storage", "limits.memory",
    "requests.cpu", "requests.ephemeral-storage", "requests.memory",
)
_HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
_UNIT_DIVISORS = frozenset(("1", "1k", "1M", "1G", "1T", "1P", "1E",
                            "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"))
_UNIT_TEXT = "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the"

_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_CONFIG_KEY_TEXT = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)

_RESIZE_RESOURCES = ("cpu", "memory")
_RESIZE_POLICIES = ("NotRequired", "RestartContainer")


def _present(m: Any, key: str) -> bool:
    return _get(m, key) is not None


def _n(m: Any, key: str) -> int:
    """An integer field, Go's zero when absent."""
    return _int(m, key) or 0


# ---------------------------------------------------------------- handlers


def _port(errs: _Errors, port: Any, path: str) -> None:
    """A port given by number or by name (an absent one is the number 0)."""
    if isinstance(port, str):
        errs.each(path, port, port_name_errors(port))
        return
    number = port if isinstance(port, int) and not isinstance(port, bool) else 0
    if not 1 <= number <= 65535:
        errs.invalid(path, number, _range_error(1, 65535))


def _http_get(errs: _Errors, action: Any, path: str) -> None:
    # (the path defaults to "/": never missing once decoded)
    _port(errs, _get(action, "port"), f"{path}.port")
    scheme = _str(action, "scheme") or "HTTP"
    if scheme not in _SCHEMES:
        errs.unsupported_named(f"{path}.scheme", scheme, _SCHEMES)
    for header in _seq(action, "httpHeaders"):
        name = _str(header, "name") or ""
        if not _HEADER_NAME.fullmatch(name):
            errs.invalid(f"{path}.httpHeaders", name, _HEADER_NAME_TEXT)
    protocol = _str(action, "protocol")
    if protocol is None:
        return
    if protocol not in _HTTP_PROTOCOLS:
        errs.unsupported_named(f"{path}.protocol", protocol, _HTTP_PROTOCOLS)
    elif protocol == "HTTP2" and scheme != "HTTP":
        errs.invalid_named(f"{path}.protocol", protocol, "is only supported with HTTP (H2C)")
    elif protocol == "HTTP2" and _str(action, "host"):
        errs.invalid(f"{path}.host", _str(action, "host"), 'must be empty when `protocol` is "HTTP2"')


def _grpc(errs: _Errors, action: Any, path: str) -> None:
    _port(errs, _n(action, "port"), f"{path}.port")
    mode = _str(action, "mode")
    if mode is not None and mode not in _GRPC_MODES:
        errs.unsupported_named(f"{path}.mode", mode, _GRPC_MODES)


def _handler(errs: _Errors, handler: Any, kinds: tuple[str, ...], grace: int, path: str) -> None:
    """Exactly one of ``kinds`` set (the later ones refused), the one set
    valid; ``grace``: the pod's termination grace period."""
    chosen = False
    for kind in kinds:
        action = _get(handler, kind)
        if action is None:
            continue
        where = f"{path}.{kind}"
        if chosen:
            errs.forbidden(where, _ONE_HANDLER)
            continue
        chosen = True
        if kind == "exec":
            if not _seq(action, "command"):
                errs.required(f"{where}.command")
        elif kind == "httpGet":
            _http_get(errs, action, where)
        elif kind == "tcpSocket":
            _port(errs, _get(action, "port"), f"{where}.port")
        elif kind == "grpc":
            _grpc(errs, action, where)
        else:  # sleep
            seconds = _n(action, "seconds")
            if not 0 <= seconds <= grace:
                errs.invalid(where, seconds, "must be non-negative and less than "
                             f"terminationGracePeriodSeconds ({grace})")
    if not chosen:
        errs.required(path, "must specify a handler type")


def _stop_signal(errs: _Errors, signal: str, spec: Mapping[str, Any], path: str) -> None:
    os = _get(spec, "os")
    if not isinstance(os, Mapping):
        errs.forbidden(path, "may not be set for containers with empty `spec.os.name`")
        return
    name = _str(os, "name")
    if name == "windows" and signal not in _SIGNALS_WINDOWS:
        errs.unsupported_named(path, signal, _SIGNALS_WINDOWS)
    elif name == "linux" and signal not in _SIGNALS_LINUX:
        errs.unsupported_named(path, signal, _SIGNALS_LINUX)


def _grace_period(spec: Mapping[str, Any]) -> int:
    """The pod's termination grace period once defaulted."""
    grace = _int(spec, "terminationGracePeriodSeconds")
    if grace is None:
        return 30
    return 1 if grace < 0 else grace


def _probe(errs: _Errors, probe: Mapping[str, Any], kind: str, grace: int, path: str) -> None:
    _handler(errs, probe, _PROBE_HANDLERS, grace, path)
    timings = {k: _n(probe, k) or default for k, default in _PROBE_DEFAULTS.items()}
    for key, value in timings.items():
        if value < 0:
            errs.invalid(f"{path}.{key}", value, _NEGATIVE)
    period = _int(probe, "terminationGracePeriodSeconds")
    if period is not None and period <= 0:
        errs.invalid(f"{path}.terminationGracePeriodSeconds", period, "must be greater than 0")
    if kind == "readinessProbe":
        if period is not None:
            errs.invalid(f"{path}.terminationGracePeriodSeconds", period, "must not be set for readinessProbes")
    elif timings["successThreshold"] != 1:
        errs.invalid(f"{path}.successThreshold", timings["successThreshold"], "must be 1")


def check_lifecycle_and_probes(errs: _Errors, c: Mapping[str, Any], path: str, spec: Mapping[str, Any]) -> None:
    """An app container's (or a sidecar's) ``lifecycle`` hooks and its
    liveness, readiness and startup probes."""
    grace = _grace_period(spec)
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, Mapping):
        for hook in ("postStart", "preStop"):
            handler = lifecycle.get(hook)
            if handler is not None:
                _handler(errs, handler, _HOOK_HANDLERS, grace, f"{path}.lifecycle.{hook}")
        signal = _str(lifecycle, "stopSignal")
        if signal is not None:
            _stop_signal(errs, signal, spec, f"{path}.lifecycle.stopSignal")
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(kind)
        if isinstance(probe, Mapping):
            _probe(errs, probe, kind, grace, f"{path}.{kind}")


# ---------------------------------------------------------------- env


def _field_ref(errs: _Errors, ref: Any, path: str, supported: tuple[str, ...] | None = None) -> None:
    """``validateObjectFieldSelector``: a downward-API field, the version
    ``v1``, one of the fields ``supported`` names (an env var's, unless
    given: a volume's are fewer), or a label or annotation by a valid key."""
    supported = _ENV_FIELD_PATHS if supported is None else supported
    version = _str(ref, "apiVersion") or "v1"
    label = _str(ref, "fieldPath") or ""
    if not label:
        errs.required(f"{path}.fieldPath")
        return
    where = f"{path}.fieldPath"
    if version != "v1":
        errs.invalid(where, label, f"error converting fieldPath: unsupported pod version: {version}")
        return
    split = _subscripted(label)
    if split is not None:
        if split[0] not in ("metadata.annotations", "metadata.labels"):
            errs.invalid(where, label, f"error converting fieldPath: field label does not support subscript: {label}")
            return
    elif label == "spec.host":
        label = "spec.nodeName"  # (an old client's spelling)
    elif label not in _CONVERTIBLE_PATHS:
        errs.invalid(where, label, f"error converting fieldPath: field label not supported: {label}")
        return
    if split is not None:
        key = go_lower(split[1]) if split[0] == "metadata.annotations" else split[1]
        errs.each(path, key, qualified_name_errors(key))
    elif label not in supported:
        errs.unsupported(where, label, supported)


def _subscripted(label: str) -> tuple[str, str] | None:
    """``PATH['KEY']`` as (PATH, KEY); None when not of that form."""
    if not label.endswith("']"):
        return None
    head, sep, key = label[:-2].partition("['")
    if not sep or not head:
        return None
    return head, key


def _divisor_text(raw: Any, path: str) -> str | None:
    """The divisor as Go prints the quantity, None when zero (unset); one
    that does not parse is the decoder's refusal."""
    if isinstance(raw, NulledQuantity):
        return None  # (a null after a value: the amount zeroed)
    try:
        qty = quantity_from_manifest(raw)
    except QuantityError as e:
        raise InputError(f"couldn't parse as pod({e}), please check config file", path=path) from None
    return None if qty.is_zero() else str(qty)


def _resource_field_ref(errs: _Errors, ref: Any, path: str) -> None:
    resource = _str(ref, "resource") or ""
    if not resource:
        errs.required(f"{path}.resource")
    elif resource not in _RESOURCE_FIELDS and not resource.startswith(_HUGEPAGES_PREFIXES):
        errs.unsupported(f"{path}.resource", resource, _RESOURCE_FIELDS)
    divisor = _divisor_text(_get(ref, "divisor"), f"{path}.divisor")
    if divisor is None:
        return
    where = f"{path}.divisor"
    if resource in ("limits.cpu", "requests.cpu"):
        if divisor not in ("1m", "1"):
            errs.invalid(where, resource, "only divisor's values 1m and 1 are supported with the cpu resource")
    elif resource in ("limits.memory", "requests.memory"):
        if divisor not in _UNIT_DIVISORS:
            errs.invalid(where, resource, f"{_UNIT_TEXT} memory resource")
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage") and divisor not in _UNIT_DIVISORS:
        errs.invalid(where, resource, f"{_UNIT_TEXT} local ephemeral storage resource")
    if resource.startswith(_HUGEPAGES_PREFIXES) and divisor not in _UNIT_DIVISORS:
        errs.invalid(where, resource, f"{_UNIT_TEXT} hugepages resource")


def config_key_errors(key: str) -> list[str]:
    """``IsConfigMapKey``."""
    out = []
    if go_len(key) > 253:
        out.append("must be no more than 253 characters")
    if not _CONFIG_KEY.fullmatch(key):
        out.append(_CONFIG_KEY_TEXT)
    if key == ".":
        out.append("must not be '.'")
    elif key == "..":
        out.append("must not be '..'")
    elif key.startswith(".."):
        out.append("must not start with '..'")
    return out


def _key_ref(errs: _Errors, ref: Any, path: str) -> None:
    """A config map's or a secret's key: the object named as a DNS
    subdomain (an empty name too), the key required and valid."""
    name = _str(ref, "name") or ""
    errs.each(f"{path}.name", name, dns_subdomain_errors(name))
    key = _str(ref, "key") or ""
    if not key:
        errs.required(f"{path}.key")
    else:
        errs.each(f"{path}.key", key, config_key_errors(key))


def _file_key_ref(errs: _Errors, ref: Any, path: str) -> None:
    key = _str(ref, "key") or ""
    if not key:
        errs.required(f"{path}.key")
    else:
        errs.each(f"{path}.key", key, env_name_errors(key))
    volume = _str(ref, "volumeName") or ""
    if not volume:
        errs.required(f"{path}.volumeName")
    else:
        errs.each(f"{path}.volumeName", volume, dns_label_errors(volume))
    file = _str(ref, "path") or ""
    if not file:
        errs.required(f"{path}.path")
    elif ".." in file.split("/"):
        errs.invalid(f"{path}.path", file, "must not contain '..'")


_ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def check_env_value_from(errs: _Errors, env: Any, path: str) -> None:
    """One env var's ``valueFrom`` (at ``path``): each source given valid,
    exactly one of them, and no ``value`` beside it."""
    source = _get(env, "valueFrom")
    if source is None:
        return
    given = 0
    for key in _ENV_SOURCES:
        ref = _get(source, key)
        if ref is None:
            continue
        given += 1
        where = f"{path}.{key}"
        if key == "fieldRef":
            _field_ref(errs, ref, where)
        elif key == "resourceFieldRef":
            _resource_field_ref(errs, ref, where)
        elif key == "fileKeyRef":
            _file_key_ref(errs, ref, where)
        else:
            _key_ref(errs, ref, where)
    if given == 0:
        errs.invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                     "`configMapKeyRef`, `secretKeyRef` or `fileKeyRef`" if options().env_files else
                     "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")
    elif _str(env, "value"):
        errs.invalid(path, "", "may not be specified when `value` is not empty")
    elif given > 1:
        errs.invalid(path, "", "may not have more than one field specified at a time")


def check_file_key_ref_volumes(errs: _Errors, spec: Mapping[str, Any]) -> None:
    """Every ``fileKeyRef`` names a volume of the pod that is an
    ``emptyDir`` (a volume without a source is one); init containers
    first, then app containers."""
    volumes: dict[str, bool] = {}
    for vol in _seq(spec, "volumes"):
        if isinstance(vol, Mapping):
            sources = [k for k in _G_VOLUME_SOURCES if vol.get(k) is not None]
            volumes[_str(vol, "name") or ""] = not sources or "emptyDir" in sources
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for i, c in enumerate(_seq(spec, key)):
            for j, env in enumerate(_seq(c, "env")):
                ref = _get(_get(env, "valueFrom"), "fileKeyRef")
                if ref is None:
                    continue
                where = f"spec.{key}[{i}].env[{j}].valueFrom.fileKeyRef.volumeName"
                name = _str(ref, "volumeName") or ""
                if name not in volumes:
                    errs.not_found(where, name)
                elif not volumes[name]:
                    errs.invalid(where, name, "referenced volume must be of type emptyDir")


# ---------------------------------------------------------------- resize


def check_resize_policy(errs: _Errors, c: Mapping[str, Any], path: str, spec: Mapping[str, Any]) -> None:
    """``resizePolicy`` (at ``path``): CPU and memory once each, a known
    policy, and none but ``NotRequired`` in a pod that never restarts."""
    never = _str(spec, "restartPolicy") == "Never"
    seen: set[str] = set()
    for i, entry in enumerate(_seq(c, "resizePolicy")):
        name = _str(entry, "resourceName") or ""
        if name in seen:
            errs.duplicate_named(f"{path}[{i}]", name)
        seen.add(name)
        if not name:
            errs.required(path)
        elif name not in _RESIZE_RESOURCES:
            errs.unsupported_named(path, name, _RESIZE_RESOURCES)
        policy = _str(entry, "restartPolicy") or ""
        if not policy:
            errs.required(path)
        elif policy not in _RESIZE_POLICIES:
            errs.unsupported_named(path, policy, _RESIZE_POLICIES)
        if never and policy != "NotRequired":
            errs.invalid_named(path, policy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'")


def check_init_resize_policy(errs: _Errors, c: Mapping[str, Any], path: str, sidecar: bool) -> None:
    """An init container that is no sidecar may not restart to resize."""
    if sidecar:
        return
    for j, entry in enumerate(_seq(c, "resizePolicy")):
        if _str(entry, "restartPolicy") == "RestartContainer":
            errs.invalid_named(f"{path}.resizePolicy[{j}].restartPolicy", "RestartContainer",
                         "must not be set to 'RestartContainer' for non-sidecar initContainers")



# ---------------------------------------------------------------- resources

#: helper.IsStandardResourceName's set (quota names included; hugepages by prefix)
_STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
    "services.loadbalancers",
))
_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
_INTEGER_RESOURCES = frozenset((
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
))
_HUGEPAGES = "hugepages-"


def _native(name: str) -> bool:
    """``helper.IsNativeResource``."""
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    """``helper.IsExtendedResourceName``."""
    if _native(name) or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _overcommit(name: str) -> bool:
    """``helper.IsOvercommitAllowed``."""
    return _native(name) and not name.startswith(_HUGEPAGES)


def _page_divides(name: str, qty: Quantity) -> bool:
    """``helper.IsHugePageResourceValueDivisible``: the page size (the
    name's suffix) a positive whole number dividing the quantity."""
    try:
        page = parse_quantity(name[len(_HUGEPAGES):])
    except QuantityError:
        return False
    if page.sign() <= 0 or page.milli_value() % 1000:
        return False
    return qty.value() % page.value() == 0


def container_resource_name_errors(errs: _Errors, name: str, path: str) -> None:
    """``ValidateContainerResourceName`` (``validateResourceName`` first:
    the qualified-name rule, then a name without domain a standard one;
    then one a container may ask for, or an extended resource)."""
    found = qualified_name_errors(name)
    for msg in found:
        errs.invalid_named(path, name, msg)
    simple = "/" not in name
    if not found and simple and not (name in _STANDARD_RESOURCES or name.startswith(_HUGEPAGES)
                                     or name.startswith("requests." + _HUGEPAGES)):
        errs.invalid_named(path, name, "must be a standard resource type or fully qualified")
    if simple:
        if not (name in _CONTAINER_RESOURCES or name.startswith(_HUGEPAGES)):
            errs.invalid_named(path, name, "must be a standard resource for containers")
    elif not _native(name) and not _extended(name):
        errs.invalid_named(path, name, "doesn't follow extended resource name standard")


#: what a pod's ``spec.resources`` may name (``SupportedPodLevelResources``,
#: sorted: the kubelet's list of supported values; ``hugepages-`` a prefix)
POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")


def pod_resource_name_errors(errs: _Errors, name: str, path: str) -> None:
    """``validatePodResourceName``: ``validateResourceName`` (the
    qualified-name rule, then a name without domain a standard one), and
    only when that finds nothing, a name pod-level resources support
    (``IsSupportedPodLevelResource``: cpu, memory, a ``hugepages-`` name)."""
    found = qualified_name_errors(name)
    for msg in found:
        errs.invalid_named(path, name, msg)
    if found:
        return
    if "/" not in name and not (name in _STANDARD_RESOURCES or name.startswith(_HUGEPAGES)
                                or name.startswith("requests." + _HUGEPAGES)):
        errs.invalid_named(path, name, "must be a standard resource type or fully qualified")
        return
    if name not in ("cpu", "memory") and not name.startswith(_HUGEPAGES):
        errs.unsupported_named(path, name, POD_LEVEL_RESOURCES)


def _quantity_value(errs: _Errors, name: str, qty: Quantity, path: str) -> None:
    """``ValidateResourceQuantityValue``: not negative; whole for an
    integer resource (the quota counts, an extended resource)."""
    if qty.sign() < 0:
        errs.invalid(path, str(qty), _NEGATIVE)
    if (name in _INTEGER_RESOURCES or _extended(name)) and qty.milli_value() % 1000:
        errs.invalid(path, str(qty), "must be an integer")


def check_container_resources(errs: _Errors, limits: Mapping[str, Quantity], requests: Mapping[str, Quantity],
                              claims: list[Any], claim_names: frozenset[str], path: str,
                              name_rule: Callable[[_Errors, str, str], None] = container_resource_name_errors,
                              ) -> None:
    """``ValidateContainerResourceRequirements`` (``validateResourceRequirements``
    with ``ValidateContainerResourceName``) on a container's limits and
    requests as decoded and defaulted (rounded up to milli; a request
    missing defaulted to its limit). Go walks each map in no fixed order:
    podnuma walks the names sorted. Then ``validateResourceClaimNames``
    (``claim_names``: the pod's ``resourceClaims``). ``name_rule``: the
    resource-name check ``validateResourceRequirements`` is handed (the
    pod-level one for ``spec.resources``: ``validatePodResourceRequirements``)."""
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    cpu_or_memory = hugepages = False
    for name in sorted(limits):
        qty, where = limits[name], f"{lim_path}[{name}]"
        name_rule(errs, name, where)
        _quantity_value(errs, name, qty, where)
        if name.startswith(_HUGEPAGES):
            hugepages = True
            if not _page_divides(name, qty):
                errs.invalid(where, str(qty), f"{qty} is not positive integer multiple of {name}")
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    for name in sorted(requests):
        qty, where = requests[name], f"{req_path}[{name}]"
        name_rule(errs, name, where)
        _quantity_value(errs, name, qty, where)
        limit = limits.get(name)
        if limit is not None:
            if qty != limit and not _overcommit(name):
                errs.invalid(req_path, str(qty), f"must be equal to {name} limit of {limit}")
            elif qty > limit:
                errs.invalid(req_path, str(qty), f"must be less than or equal to {name} limit of {limit}")
        elif not _overcommit(name):
            errs.required(lim_path, "Limit must be set for non overcommitable resources")
        if name.startswith(_HUGEPAGES):
            hugepages = True
            if not _page_divides(name, qty):
                errs.invalid(where, str(qty), f"{qty} is not positive integer multiple of {name}")
        cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
    if hugepages and not cpu_or_memory:
        errs.forbidden(path, "HugePages require cpu or memory")
    _claim_names(errs, claims, claim_names, f"{path}.claims")


def _claim_names(errs: _Errors, claims: list[Any], pod_claims: frozenset[str], path: str) -> None:
    """``validateResourceClaimNames``: each claim named, once (a claim
    whole or by request), and one of the pod's ``resourceClaims``."""
    seen: list[str] = []
    for i, claim in enumerate(claims):
        name = _str(claim, "name") or ""
        where = f"{path}[{i}]"
        if not name:
            errs.required(where)
            continue
        if name in seen:
            errs.duplicate(where, name)
        else:
            request = _str(claim, "request") or ""
            key = name
            if request:
                errs.each(f"{where}.request", request, dns_label_errors(request))
                key = f"{name}/{request}"
            if key in seen:
                errs.duplicate(where, key)
            elif not request:
                for other in seen:
                    head, slash, _ = other.partition("/")
                    if slash and head == name:
                        errs.duplicate(where, name)
            if key not in seen:
                seen.append(key)
        if name not in pod_claims:
            listed = ": " + ", ".join(sorted(pod_claims)) if pod_claims else " which is empty"
            errs.items.append((where, f"Not found: {_q(name)}: must be one of the names in "
                               f"pod.spec.resourceClaims{listed}"))
