"""Validation of the Pod fields podnuma reads.

Mirrors ``pkg/apis/core/validation/validation.go`` (``validateContainerResourceName``,
``validatePodResourceName``, ``ValidateResourceQuantityValue``,
``validateResourceRequirements``, ``validatePodResourceConsistency``) and the
name rules of ``k8s.io/apimachinery/pkg/util/validation``
(``IsDNS1123Label``, ``IsDNS1123Subdomain``, ``IsQualifiedName``), with the
field error texts of ``apimachinery/pkg/util/validation/field``
(``Invalid value``, ``Required value``, ``Unsupported value``,
``Forbidden``, ``Duplicate value``); the container checks of
``validateContainerPorts``, ``AccumulateUniqueHostPorts``,
``validatePodHostNetworkDeps``, ``validateLifecycle``, ``validateHandler``
(``validateExecAction``, ``validateHTTPGetAction``,
``validateTCPSocketAction``, ``validateGRPCAction``,
``validateSleepAction``), ``validateStopSignal``, ``validateProbe`` with
``validateLivenessProbe``, ``validateReadinessProbe`` and
``validateStartupProbe``, ``validateInitContainers``' refusal of hooks and probes on a
regular init container and ``validateEphemeralContainers``'
``validateFieldAllowList`` and ``targetContainerName`` check; with the
fields ``pkg/api/pod/util.go``'s ``dropContainerStopSignals``,
``dropHTTPProbeProtocol`` and ``dropDisabledGRPCContainerProbeTLS`` drop
before validation when their gates are off.

Field paths are relative to the pod document; resource keys are written
``requests.cpu`` (``requests[example.com/gpu]`` when the key holds a dot or
slash).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Final

from podnuma.api.pod import Container
from podnuma.api.quantity import Quantity, QuantityError, parse_quantity
from podnuma.api.resources import (
    HUGEPAGES_PREFIX,
    is_hugepage_resource,
    is_native_resource,
    is_overcommit_allowed,
    is_supported_pod_level_resource,
)
from podnuma.errors import InputError
from podnuma.fieldkit import field_path
from podnuma.golang.json import go_json_quote
from podnuma.golang.strconv import go_quote

__all__ = [
    "qualified_name_errors",
    "INTEGER_RESOURCES",
    "quote",
    "invalid",
    "invalid_named",
    "required",
    "unsupported",
    "forbidden",
    "duplicate",
    "resource_path",
    "check_dns_label",
    "dns_label_errors",
    "dns_subdomain_errors",
    "go_len",
    "check_dns_subdomain",
    "HandlerRules",
    "check_handlers",
    "check_target_container",
    "effective_lifecycle",
    "handler_rules",
    "json_quote",
    "check_container_ports",
    "check_host_port_conflicts",
    "check_host_network_ports",
    "check_init_container_handlers",
    "check_ephemeral_fields",
    "check_port_num_or_name",
    "port_name_errors",
    "check_qualified_name",
    "is_extended_resource",
    "check_container_resource_name",
    "check_pod_resource_name",
    "check_resource_quantity",
    "hugepage_divisible",
    "check_requirements",
    "check_pod_resource_consistency",
]

_ZERO = Quantity.from_int(0)


_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+")

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_QUALIFIED_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# helper.IsStandardResourceName (quota names included) and the container subset.
_STANDARD_RESOURCES = frozenset(
    {
        "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
        "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
        "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
        "persistentvolumeclaims", "storage", "requests.storage", "services.nodeports",
        "services.loadbalancers",
    }
)  # fmt: skip
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
INTEGER_RESOURCES = frozenset(
    {
        "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
        "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
    }
)  # fmt: skip


def quote(value: object) -> str:
    """A field error's value as ``field.Error`` shows it: a string as
    ``%q`` (``strconv.Quote``: control and non-printable characters
    escaped; a lone surrogate, which Go's decoder made U+FFFD, as U+FFFD),
    anything else (a quantity's text...) in double quotes as it is."""
    if type(value) is str:
        return go_quote("".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value))
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def invalid(path: str, value: object, detail: str) -> InputError:
    return InputError(f"Invalid value: {quote(value)}: {detail}", path=path)


def invalid_named(path: str, value: str, detail: str) -> InputError:
    """``field.Invalid`` of a value of a named string type (a resource
    name...): the value as ``encoding/json`` writes it (:func:`json_quote`)."""
    return InputError(f"Invalid value: {json_quote(value)}: {detail}", path=path)


def required(path: str, detail: str = "") -> InputError:
    return InputError("Required value" + (f": {detail}" if detail else ""), path=path)


def unsupported(path: str, value: object, supported: Sequence[str]) -> InputError:
    allowed = ", ".join(quote(s) for s in supported)
    return InputError(f"Unsupported value: {quote(value)}: supported values: {allowed}", path=path)


def forbidden(path: str, detail: str) -> InputError:
    return InputError(f"Forbidden: {detail}", path=path)


def duplicate(path: str, value: object) -> InputError:
    return InputError(f"Duplicate value: {quote(value)}", path=path)


def resource_path(base: str, key: str) -> str:
    """``field.Path.Key``: a map key in brackets, whatever it holds."""
    return f"{base}[{key}]"


def go_len(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes (a lone surrogate as the
    three bytes it was read from)."""
    return len(value.encode("utf-8", "surrogatepass"))


def dns_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``: its messages in order."""
    errors: list[str] = []
    if go_len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            errors.append("must not contain dots")  # a subdomain: its dots are the fault
        else:
            errors.append(_DNS1123_LABEL_MSG)
    return errors


def dns_subdomain_errors(value: str, max_len: str = "characters") -> list[str]:
    """``IsDNS1123Subdomain`` (``max_len``: util/validation says
    "characters", validate/content "bytes")."""
    errors: list[str] = []
    if go_len(value) > 253:
        errors.append(f"must be no more than 253 {max_len}")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(_DNS1123_SUBDOMAIN_MSG)
    return errors


def _check(value: str, path: str, errors: Sequence[str]) -> None:
    """The first of a name rule's messages as a field error (the rules list
    them all; podnuma reports one)."""
    if errors:
        raise invalid(path, value, errors[0])


def check_dns_label(value: str, path: str) -> None:
    _check(value, path, dns_label_errors(value))


def check_dns_subdomain(value: str, path: str) -> None:
    _check(value, path, dns_subdomain_errors(value))


_PORT_NAME_CHARS: Final = re.compile(r"[-a-z0-9]+")
_PORT_NAME_LETTER: Final = re.compile(r"[a-z]")
_PORT_RANGE_MSG: Final = "must be between 1 and 65535, inclusive"


def port_name_errors(value: str) -> list[str]:
    """``IsValidPortName``: its messages in order (at most 15 bytes, only
    lower-case letters, digits and hyphens, a letter at least, no two
    hyphens together, none first or last)."""
    errors: list[str] = []
    if go_len(value) > 15:
        errors.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.fullmatch(value):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(value):
        errors.append("must contain at least one letter (a-z)")
    if "--" in value:
        errors.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def check_port_num_or_name(port: object, path: str) -> None:
    """``ValidatePortNumOrName``: a port given by name follows the port
    name rules, one given by number (absent or null: the number 0) is
    from 1 to 65535 (its value shown unquoted, as Go shows an int)."""
    if isinstance(port, str):
        errors = port_name_errors(port)
        if errors:  # (the value as Go's %q shows it: a newline escaped)
            raise InputError(f"Invalid value: {go_quote(port)}: {errors[0]}", path=path)
        return
    number = int(port) if isinstance(port, int | float) and not isinstance(port, bool) else 0
    if not 1 <= number <= 65535:
        raise InputError(f"Invalid value: {number}: {_PORT_RANGE_MSG}", path=path)


#: a probe's handlers (Go's ProbeHandler: no sleep, which only a
#: lifecycle hook has; validation.go handlerFromProbe) and a lifecycle
#: hook's, in the order ``validateHandler`` looks at them (the first one
#: set is validated, any other refused)
_PROBE_HANDLERS: Final = ("exec", "httpGet", "tcpSocket", "grpc")
_HOOK_HANDLERS: Final = ("exec", "httpGet", "tcpSocket", "sleep")
_ONE_HANDLER: Final = "may not specify more than 1 handler type"
_HTTP_SCHEMES: Final = ("HTTP", "HTTPS")
_HTTP_PROTOCOLS: Final = ("HTTP1", "HTTP2")
_GRPC_MODES: Final = ("Plaintext", "TLS")
_HEADER_NAME: Final = re.compile(r"[-A-Za-z0-9]+")
_HEADER_NAME_MSG: Final = (
    "a valid HTTP header must consist of alphanumeric characters or '-' "
    "(e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')"
)
#: a probe's counters in the order ``validateProbe`` checks them, each with
#: the value the v1 defaults give it when left at 0 (``SetDefaults_Probe``)
_PROBE_COUNTERS: Final = (
    ("initialDelaySeconds", 0), ("timeoutSeconds", 1), ("periodSeconds", 10),
    ("successThreshold", 1), ("failureThreshold", 3),
)
_SIGNALS_WINDOWS: Final = ("SIGKILL", "SIGTERM")
#: the Linux stop signals, sorted as ``sets.List`` sorts them
_SIGNALS_LINUX: Final = tuple(sorted(
    ["SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL",
     "SIGINT", "SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT",
     "SIGSEGV", "SIGSTKFLT", "SIGSTOP", "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN",
     "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU", "SIGXFSZ",
     "SIGRTMIN", "SIGRTMAX"]
    + [f"SIGRTMIN+{n}" for n in range(1, 16)] + [f"SIGRTMAX-{n}" for n in range(1, 15)]
))


def json_quote(value: str) -> str:
    """A string as ``encoding/json`` writes it: how a field error shows a
    value of a named string type (``Protocol``, ``URIScheme``, ``Signal``...)
    or a pointer to one (:func:`podnuma.golang.json.go_json_quote`: ``\\b``
    and ``\\f`` by name since Go 1.22, ``<``, ``>``, ``&`` and other control
    characters as ``\\u00XX``, a lone surrogate as U+FFFD)."""
    return go_json_quote(value)


def unsupported_named(path: str, value: str, supported: Sequence[str]) -> InputError:
    """``field.NotSupported`` of a value of a named string type (a policy,
    an operator, an OS name...): the value as ``encoding/json`` writes it
    (``ErrorBody``'s fallback for anything but a plain ``string``), the
    supported values ``strconv.Quote``d."""
    allowed = ", ".join(go_quote(s) for s in supported)
    return InputError(f"Unsupported value: {json_quote(value)}: supported values: {allowed}", path=path)


class HandlerRules:
    """What the checks of hooks and probes need from the pod and the
    gates: the pod's termination grace period once defaulted (30 when
    absent, 1 when negative: ``SetDefaults_PodSpec``), which a ``sleep``
    hook may not exceed; whether ``spec.os`` is set and its name (for a
    ``stopSignal``); and the gates with which ``PrepareForCreate`` keeps a
    field it otherwise drops: ``ContainerStopSignals`` (a hook's
    ``stopSignal``; a ``lifecycle`` left empty by the drop is dropped
    too), ``H2CContainerProbe`` (an ``httpGet``'s ``protocol``, HTTP1 by
    default then) and ``GRPCContainerProbeTLS`` (a ``grpc`` probe's
    ``mode``). A gate is asked (``enabled``; none: all off) only when a
    container sets its field."""

    __slots__ = ("grace", "has_os", "os_name", "_enabled")

    def __init__(self, grace: int = 30, *, has_os: bool = False, os_name: str = "",
                 enabled: Callable[[str], bool] | None = None) -> None:
        self.grace = grace
        self.has_os = has_os
        self.os_name = os_name
        self._enabled = enabled

    def gate(self, name: str) -> bool:
        return self._enabled is not None and self._enabled(name)


def handler_rules(spec: Mapping[str, object], enabled: Callable[[str], bool]) -> HandlerRules:
    """The :class:`HandlerRules` of a pod's ``spec`` (``enabled``: its gates)."""
    raw_grace = spec.get("terminationGracePeriodSeconds")
    grace = 30 if raw_grace is None else _int_field(raw_grace)
    os = spec.get("os")
    os_name = os.get("name") if isinstance(os, Mapping) else None
    return HandlerRules(1 if grace < 0 else grace, has_os=isinstance(os, Mapping),
                        os_name=os_name if isinstance(os_name, str) else "",
                        enabled=enabled)



def effective_lifecycle(container: Mapping[str, object], rules: HandlerRules) -> object:
    """A container's ``lifecycle`` as validation sees it: without the
    ``ContainerStopSignals`` gate a ``stopSignal`` is dropped, and the
    ``lifecycle`` with it when no hook is left (``dropContainerStopSignals``;
    ``{}`` alone stays)."""
    lifecycle = container.get("lifecycle")
    if (isinstance(lifecycle, Mapping) and lifecycle.get("stopSignal") is not None
            and lifecycle.get("postStart") is None and lifecycle.get("preStop") is None
            and not rules.gate("ContainerStopSignals")):
        return None
    return lifecycle


def _check_http_get(action: Mapping[str, object], path: str, rules: HandlerRules) -> None:
    """``validateHTTPGetAction`` after the v1 defaults (an empty ``path`` is
    ``/``, an empty ``scheme`` HTTP): the port, the scheme, each header's
    name (reported under ``httpHeaders``, without an index), then the
    ``protocol`` (only with ``H2CContainerProbe``)."""
    check_port_num_or_name(action.get("port"), f"{path}.port")
    scheme = action.get("scheme")
    scheme = scheme if isinstance(scheme, str) and scheme else "HTTP"
    if scheme not in _HTTP_SCHEMES:
        raise unsupported_named(f"{path}.scheme", scheme, _HTTP_SCHEMES)
    headers = action.get("httpHeaders")
    if isinstance(headers, Sequence) and not isinstance(headers, str):
        for header in headers:
            name = header.get("name") if isinstance(header, Mapping) else None
            name = name if isinstance(name, str) else ""
            if not _HEADER_NAME.fullmatch(name):
                raise InputError(f"Invalid value: {go_quote(name)}: {_HEADER_NAME_MSG}", path=f"{path}.httpHeaders")
    protocol = action.get("protocol")
    if not isinstance(protocol, str) or not rules.gate("H2CContainerProbe"):
        return  # (HTTP1 by default, a valid one; without the gate dropped before validation)
    host = action.get("host")
    if protocol not in _HTTP_PROTOCOLS:
        raise unsupported_named(f"{path}.protocol", protocol, _HTTP_PROTOCOLS)
    if protocol == "HTTP2" and scheme != "HTTP":
        raise InputError(f"Invalid value: {json_quote(protocol)}: is only supported with HTTP (H2C)",
                         path=f"{path}.protocol")
    if protocol == "HTTP2" and isinstance(host, str) and host:
        raise InputError(f"Invalid value: {go_quote(host)}: must be empty when `protocol` is \"HTTP2\"",
                         path=f"{path}.host")


def _check_action(kind: str, action: object, path: str, rules: HandlerRules) -> None:
    """The action of the handler type set (``validateExecAction``,
    ``validateHTTPGetAction``, ``validateTCPSocketAction``,
    ``validateGRPCAction``, ``validateSleepAction``)."""
    doc: Mapping[str, object] = action if isinstance(action, Mapping) else {}
    if kind == "exec":
        command = doc.get("command")
        if not isinstance(command, Sequence) or isinstance(command, str) or not command:
            raise required(f"{path}.command")
    elif kind == "httpGet":
        _check_http_get(doc, path, rules)
    elif kind == "tcpSocket":
        check_port_num_or_name(doc.get("port"), f"{path}.port")
    elif kind == "grpc":
        # (the port an int32, never a name; ``service`` is not checked)
        check_port_num_or_name(_int_field(doc.get("port")), f"{path}.port")
        mode = doc.get("mode")
        if isinstance(mode, str) and mode not in _GRPC_MODES and rules.gate("GRPCContainerProbeTLS"):
            raise unsupported_named(f"{path}.mode", mode, _GRPC_MODES)
    else:  # sleep: 0 up to the pod's grace period (0 allowed: no gate in v1.37)
        seconds = _int_field(doc.get("seconds"))
        if not 0 <= seconds <= rules.grace:
            raise InputError(f"Invalid value: {seconds}: must be non-negative and less than "
                             f"terminationGracePeriodSeconds ({rules.grace})", path=path)


def _check_handler(handler: object, kinds: Sequence[str], path: str, rules: HandlerRules) -> None:
    """``validateHandler``: the first handler type set is validated, a
    second one is forbidden (the first one's errors come first), none is
    required."""
    if not isinstance(handler, Mapping):
        return
    first = True
    for kind in kinds:
        action = handler.get(kind)
        if action is None:
            continue
        if not first:
            raise forbidden(f"{path}.{kind}", _ONE_HANDLER)
        first = False
        _check_action(kind, action, f"{path}.{kind}", rules)
    if first:
        raise required(path, "must specify a handler type")


def _check_probe(probe: object, kind: str, path: str, rules: HandlerRules) -> None:
    """``validateLivenessProbe``, ``validateReadinessProbe`` and
    ``validateStartupProbe``: ``validateProbe`` (the handler, the counters
    after the v1 defaults not negative, in order, a
    ``terminationGracePeriodSeconds`` greater than 0), then a readiness
    probe may not set ``terminationGracePeriodSeconds`` and the other two
    must have a ``successThreshold`` of 1."""
    if not isinstance(probe, Mapping):
        return
    _check_handler(probe, _PROBE_HANDLERS, path, rules)
    success = 1
    for key, default in _PROBE_COUNTERS:
        value = _int_field(probe.get(key)) or default
        if value < 0:
            raise InputError(f"Invalid value: {value}: must be greater than or equal to 0", path=f"{path}.{key}")
        if key == "successThreshold":
            success = value
    raw_grace = probe.get("terminationGracePeriodSeconds")
    if raw_grace is not None:
        grace = _int_field(raw_grace)
        if grace <= 0:
            raise InputError(f"Invalid value: {grace}: must be greater than 0",
                             path=f"{path}.terminationGracePeriodSeconds")
    if kind == "readinessProbe":
        if raw_grace is not None:
            raise InputError(f"Invalid value: {_int_field(raw_grace)}: must not be set for readinessProbes",
                             path=f"{path}.terminationGracePeriodSeconds")
    elif success != 1:
        raise InputError(f"Invalid value: {success}: must be 1", path=f"{path}.successThreshold")


def _check_stop_signal(signal: str, path: str, rules: HandlerRules) -> None:
    """``validateStopSignal``: refused without ``spec.os``; else one of its
    operating system's signals (none checked for another name)."""
    if not rules.has_os:
        raise forbidden(path, "may not be set for containers with empty `spec.os.name`")
    if rules.os_name == "windows" and signal not in _SIGNALS_WINDOWS:
        raise unsupported_named(path, signal, _SIGNALS_WINDOWS)
    if rules.os_name == "linux" and signal not in _SIGNALS_LINUX:
        raise unsupported_named(path, signal, _SIGNALS_LINUX)


def check_handlers(container: Mapping[str, object], path: str, rules: HandlerRules | None = None) -> None:
    """A container's lifecycle hooks and probes, as ``validateContainers``
    checks them (for an app container, and for a restartable init
    container): ``validateLifecycle`` (``postStart``, ``preStop``, then the
    ``stopSignal``), then the liveness, readiness and startup probes."""
    rules = HandlerRules() if rules is None else rules
    lifecycle = effective_lifecycle(container, rules)
    if isinstance(lifecycle, Mapping):
        for hook in ("postStart", "preStop"):
            _check_handler(lifecycle.get(hook), _HOOK_HANDLERS, f"{path}.lifecycle.{hook}", rules)
        signal = lifecycle.get("stopSignal")
        if isinstance(signal, str) and rules.gate("ContainerStopSignals"):  # (else dropped before validation)
            _check_stop_signal(signal, f"{path}.lifecycle.stopSignal", rules)
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _check_probe(container.get(probe), probe, f"{path}.{probe}", rules)



def _qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (``content.IsLabelKey``): its messages in order."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + m for m in dns_subdomain_errors(prefix, "bytes"))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _QUALIFIED_NAME_PART.fullmatch(name):
        errors.append(_QUALIFIED_NAME_MSG)
    return errors


#: ``IsQualifiedName``'s messages for ``value`` (also a label key's, for selectors)
qualified_name_errors = _qualified_name_errors


def check_qualified_name(value: str, path: str) -> None:
    """``validateResourceName``: a resource name (``core.ResourceName``, a
    named string type: its value written as ``encoding/json`` writes it)."""
    errors = _qualified_name_errors(value)
    if errors:
        raise invalid_named(path, value, errors[0])


def is_extended_resource(name: str) -> bool:
    """``helper.IsExtendedResourceName``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    try:
        check_qualified_name("requests." + name, "")
    except InputError:
        return False
    return True


def check_container_resource_name(name: str, path: str) -> None:
    """``validateContainerResourceName`` (after ``validateResourceName``)."""
    check_qualified_name(name, path)
    if "/" not in name:
        if not (name in _STANDARD_RESOURCES or name.startswith(HUGEPAGES_PREFIX)
                or name.startswith("requests." + HUGEPAGES_PREFIX)):
            raise invalid_named(path, name, "must be a standard resource type or fully qualified")
        if not (name in _STANDARD_CONTAINER_RESOURCES or name.startswith(HUGEPAGES_PREFIX)):
            raise invalid_named(path, name, "must be a standard resource for containers")
    elif not is_native_resource(name) and not is_extended_resource(name):
        raise invalid_named(path, name, "doesn't follow extended resource name standard")


def check_pod_resource_name(name: str, path: str) -> None:
    """``validatePodResourceName``."""
    check_qualified_name(name, path)
    if "/" not in name and not (
        name in _STANDARD_RESOURCES or name.startswith(HUGEPAGES_PREFIX)
        or name.startswith("requests." + HUGEPAGES_PREFIX)
    ):
        raise invalid_named(path, name, "must be a standard resource type or fully qualified")
    if not is_supported_pod_level_resource(name):
        raise unsupported_named(path, name, ("cpu", "hugepages-", "memory"))


def check_resource_quantity(name: str, qty: Quantity, path: str) -> None:
    """``ValidateResourceQuantityValue``: not negative; a whole number for
    integer and extended resources."""
    if qty < _ZERO:
        raise invalid(path, qty, "must be greater than or equal to 0")
    if (name in INTEGER_RESOURCES or is_extended_resource(name)) and qty.milli_value() % 1000:
        raise invalid(path, qty, "must be an integer")


def hugepage_divisible(name: str, qty: Quantity) -> bool:
    """``helper.IsHugePageResourceValueDivisible``."""
    try:
        page = parse_quantity(name[len(HUGEPAGES_PREFIX):])
    except QuantityError:
        return False
    if page <= _ZERO:
        return False
    return qty.value() % page.value() == 0


def check_requirements(
    requests: Mapping[str, Quantity], limits: Mapping[str, Quantity], path: str
) -> None:
    """``validateResourceRequirements`` on already-parsed (defaulted) lists."""
    req_path = field_path(path, "requests")
    lim_path = field_path(path, "limits")
    has_cpu_mem = False
    has_huge = False
    for name, qty in limits.items():
        if is_hugepage_resource(name):
            has_huge = True
            if not hugepage_divisible(name, qty):
                raise invalid(resource_path(lim_path, name), qty,
                               f"{qty} is not positive integer multiple of {name}")
        if name in ("cpu", "memory"):
            has_cpu_mem = True
    for name, qty in requests.items():
        limit = limits.get(name)
        if limit is not None:
            if qty != limit and not is_overcommit_allowed(name):
                raise invalid(req_path, qty, f"must be equal to {name} limit of {limit}")
            if qty > limit:
                raise invalid(req_path, qty, f"must be less than or equal to {name} limit of {limit}")
        elif not is_overcommit_allowed(name):
            raise required(lim_path, "Limit must be set for non overcommitable resources")
        if is_hugepage_resource(name):
            has_huge = True
            if not hugepage_divisible(name, qty):
                raise invalid(resource_path(req_path, name), qty,
                               f"{qty} is not positive integer multiple of {name}")
        if name in ("cpu", "memory"):
            has_cpu_mem = True
    if has_huge and not has_cpu_mem:
        raise forbidden(path, "HugePages require cpu or memory")


def check_pod_resource_consistency(
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
    aggregate_requests: Mapping[str, Quantity],
    aggregate_limits: Mapping[str, Quantity],
    containers: Sequence[Container],
    path: str,
) -> None:
    """``validatePodResourceConsistency``: pod-level requests cover the
    containers' aggregated requests (hugepage limits their aggregated
    limits); no container limit exceeds the pod-level limit."""
    for name, aggregate in sorted(aggregate_requests.items()):
        if not is_supported_pod_level_resource(name):
            continue
        pod_req = requests.get(name)
        if pod_req is not None and pod_req < aggregate:
            raise invalid(resource_path(field_path(path, "requests"), name), pod_req,
                          f"must be greater than or equal to aggregate container requests of {aggregate}")
    for name, aggregate in sorted(aggregate_limits.items()):
        if not is_hugepage_resource(name):
            continue
        pod_lim = limits.get(name)
        if pod_lim is not None and pod_lim < aggregate:
            raise invalid(resource_path(field_path(path, "limits"), name), pod_lim,
                          f"must be greater than or equal to aggregate container limits of {aggregate}")
    for ctr in containers:
        for name, ctr_lim in ctr.limits.items():
            if not is_supported_pod_level_resource(name):
                continue
            pod_lim = limits.get(name)
            if pod_lim is not None and ctr_lim > pod_lim:
                # Reproduced quirk: upstream builds this path under spec.resources.
                where = field_path(resource_path(f"{path}.containers[{ctr.index}]", name), "limits")
                raise invalid(where, ctr_lim, f"must be less than or equal to pod limits of {pod_lim}")


def _int_field(value: object) -> int:
    """An int32 field as Go holds it once decoded (absent or null: 0)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    return 0


_PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")


def _host_port(port: Mapping[str, object], host_network: bool) -> int:
    """A port's ``hostPort`` after the v1 defaults: with ``hostNetwork``
    an unset (0) one is the ``containerPort`` (``defaultHostNetworkPorts``,
    app and init containers)."""
    host = _int_field(port.get("hostPort"))
    return _int_field(port.get("containerPort")) if host == 0 and host_network else host


def _port_list(ports: object) -> list[Mapping[str, object]]:
    """A container's ``ports`` (a null entry: Go's zero port)."""
    if not isinstance(ports, Sequence) or isinstance(ports, str):
        return []
    return [raw if isinstance(raw, Mapping) else {} for raw in ports]


def check_container_ports(ports: object, path: str, *, host_network: bool = False) -> None:
    """``validateContainerPorts`` on a container's ``ports`` (after the v1
    defaults: an empty ``protocol`` is TCP, and with ``host_network`` an
    unset ``hostPort`` the ``containerPort``): of each port in turn, the
    name (``IsValidPortName``, unique within the container),
    ``containerPort`` (required: 0 or absent; else 1-65535), ``hostPort``
    (0 is none; else 1-65535) and ``protocol`` (SCTP, TCP or UDP)."""
    names: set[str] = set()
    for i, port in enumerate(_port_list(ports)):
        at = f"{path}.ports[{i}]"
        name = port.get("name")
        if isinstance(name, str) and name:
            errors = port_name_errors(name)
            if errors:
                raise InputError(f"Invalid value: {go_quote(name)}: {errors[0]}", path=f"{at}.name")
            if name in names:
                raise duplicate(f"{at}.name", name)
            names.add(name)
        number = _int_field(port.get("containerPort"))
        if number == 0:
            raise required(f"{at}.containerPort")
        if not 1 <= number <= 65535:
            raise InputError(f"Invalid value: {number}: {_PORT_RANGE_MSG}", path=f"{at}.containerPort")
        host = _host_port(port, host_network)
        if host != 0 and not 1 <= host <= 65535:
            raise InputError(f"Invalid value: {host}: {_PORT_RANGE_MSG}", path=f"{at}.hostPort")
        protocol = port.get("protocol")
        if isinstance(protocol, str) and protocol and protocol not in _PORT_PROTOCOLS:
            raise unsupported_named(f"{at}.protocol", protocol, _PORT_PROTOCOLS)


def check_host_port_conflicts(
    containers: Sequence[Mapping[str, object]], path: str, *, host_network: bool = False
) -> None:
    """``AccumulateUniqueHostPorts`` over ``containers`` (their documents,
    listed under ``path``): a host port, with its protocol (TCP when
    empty) and ``hostIP``, taken twice is a duplicate, shown as
    ``PROTOCOL/HOSTIP/PORT``. The API server checks the app containers
    together and each init container on its own, passing it as a list of
    one: its path then has index 0 whatever the container's (an upstream
    quirk, reproduced). ``host_network``: an unset host port is the
    container port (the v1 defaults)."""
    taken: set[str] = set()
    for ci, ctr in enumerate(containers):
        for pi, port in enumerate(_port_list(ctr.get("ports"))):
            host = _host_port(port, host_network)
            if host == 0:
                continue
            protocol = port.get("protocol")
            host_ip = port.get("hostIP")
            key = "{}/{}/{}".format(protocol if isinstance(protocol, str) and protocol else "TCP",
                                    host_ip if isinstance(host_ip, str) else "", host)
            if key in taken:
                raise duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key)
            taken.add(key)


def check_host_network_ports(containers: Sequence[Mapping[str, object]], path: str) -> None:
    """``validatePodHostNetworkDeps`` for a pod with ``hostNetwork``: each
    app container's host ports (after the v1 defaults) equal their
    container ports."""
    for ci, ctr in enumerate(containers):
        for pi, port in enumerate(_port_list(ctr.get("ports"))):
            host = _host_port(port, True)
            if host != _int_field(port.get("containerPort")):
                raise InputError(f"Invalid value: {host}: must match `containerPort` when `hostNetwork` is true",
                                 path=f"{path}[{ci}].ports[{pi}].hostPort")


_INIT_FORBIDDEN: Final = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")


def check_init_container_handlers(container: Mapping[str, object], path: str, *, sidecar: bool,
                                  rules: HandlerRules | None = None) -> None:
    """``validateInitContainers``' rule for hooks and probes: a sidecar (an
    init container with ``restartPolicy: Always``) has them validated as an
    app container's (:func:`check_handlers`); any other init container
    may set none of ``lifecycle``, ``livenessProbe``, ``readinessProbe``,
    ``startupProbe`` (in that order; an empty one is set, a null one is
    not, nor a ``lifecycle`` holding only a ``stopSignal`` the gate
    drops)."""
    rules = HandlerRules() if rules is None else rules
    if sidecar:
        check_handlers(container, path, rules)
        return
    for key in _INIT_FORBIDDEN:
        value = effective_lifecycle(container, rules) if key == "lifecycle" else container.get(key)
        if value is not None:
            raise forbidden(f"{path}.{key}", "may not be set for init containers without restartPolicy=Always")


def check_target_container(container: Mapping[str, object], path: str, names: AbstractSet[str]) -> None:
    """``validateEphemeralContainers``: a ``targetContainerName`` names an
    app or init container of the pod (``names``), else it is "Not found"
    (checked on create too, before the "cannot be set on create" the
    API server adds)."""
    target = container.get("targetContainerName")
    if isinstance(target, str) and target and target not in names:
        raise InputError(f"Not found: {go_quote(target)}", path=f"{path}.targetContainerName")


#: the fields of Go's EphemeralContainerCommon in declaration order, each
#: with whether an ephemeral container may set it
#: (``allowedEphemeralContainerFields``; the restart fields and
#: ``resizePolicy`` are not in that list: refused too)
_EPHEMERAL_FIELDS: Final = (
    ("name", True), ("image", True), ("command", True), ("args", True), ("workingDir", True),
    ("ports", False), ("envFrom", True), ("env", True), ("resources", False),
    ("resizePolicy", False), ("restartPolicy", False), ("restartPolicyRules", False),
    ("volumeMounts", True), ("volumeDevices", True), ("livenessProbe", False),
    ("readinessProbe", False), ("startupProbe", False), ("lifecycle", False),
    ("terminationMessagePath", True), ("terminationMessagePolicy", True),
    ("imagePullPolicy", True), ("securityContext", True), ("stdin", True), ("stdinOnce", True),
    ("tty", True),
)


def _go_set(key: str, value: object) -> bool:
    """Whether a refused field of an ephemeral container differs from its
    Go zero value once decoded: a list or pointer is set when not null (an
    empty list too; ``restartPolicy`` is a pointer), ``resources`` when
    one of its lists is."""
    if value is None:
        return False
    if key == "resources":
        return isinstance(value, Mapping) and any(v is not None for v in value.values())
    return True


def check_ephemeral_fields(container: Mapping[str, object], path: str, rules: HandlerRules | None = None) -> None:
    """``validateFieldAllowList`` on an ephemeral container: the first field
    (in Go's field order) it may not set and does, refused with "cannot be
    set for an Ephemeral Container" (a ``lifecycle`` as the gates leave it:
    :func:`effective_lifecycle`)."""
    rules = HandlerRules() if rules is None else rules
    for key, allowed in _EPHEMERAL_FIELDS:
        value = effective_lifecycle(container, rules) if key == "lifecycle" else container.get(key)
        if not allowed and _go_set(key, value):
            raise forbidden(f"{path}.{key}", "cannot be set for an Ephemeral Container")
