"""Probes, lifecycle hooks, container ports and the order of the errors
against the API server's validation (``kubelet-oracle validate``:
``ValidatePodCreate`` of v1.37.2, ``pkg/apis/core/validation``).

The cases: probes and ``lifecycle`` on regular init containers (refused
for being there, ``lifecycle`` then the liveness, readiness and startup
probes), on sidecars (validated as an app container's), the fields an
ephemeral container may not set (``validateFieldAllowList``, in Go's field
order; an empty list is set, ``resources`` with only null lists is not),
``validateContainerPorts`` (``containerPort`` required and 1-65535,
``hostPort`` 1-65535, port names, protocols), host-port conflicts (app
containers together, each init container alone), ``hostNetwork``'s
defaulted and matching host ports, and seeded random pods combining these
faults with duplicate names, bad container and pod restart policies and
handler ports in init and app containers; besides, unsupported values of
named string types (written as ``encoding/json`` writes them) and a
Windows pod's pod-level ``resources`` (refused whole, in ``validate`` and
in a scenario; after decoding); ``validateLinux`` and ``validateWindows``
(each field they refuse, on every OS and in every kind of container, their
order, and their place after the checks podnuma models before
``validateOS``), and random pods with pod and container security contexts
and host namespaces, on either OS, among the other faults.

Each pod's errors are deterministic here (no resource list with more
than one name), so the comparison is strict: podnuma's error must be the
API server's FIRST error, word for word, the one it would list first
(an ephemeral container's "cannot be set on create" included: podnuma
refuses ephemeral containers on create as ``ValidatePodCreate`` does).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.oracle.harness import env_int, random_settings, run_oracle, run_podnuma
from tests.oracle.validation import compare_verdicts, validate_oracle, validate_podnuma

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_PROBE_VALIDATION_COUNT", 800)
ON_CREATE = "spec.ephemeralContainers: Forbidden: cannot be set on create"
GATE_SETS: dict[str, dict[str, bool]] = {
    "default": {},
    "no-restart-rules": {"ContainerRestartRules": False, "RestartAllContainersOnContainerExits": False},
    # restart rules without the RestartAllContainers action (nor rules on a sidecar)
    "no-restart-all": {"RestartAllContainersOnContainerExits": False},
    # the alpha gates that keep a stopSignal, an httpGet protocol and a grpc mode
    "alpha-handlers": {"ContainerStopSignals": True, "H2CContainerProbe": True, "GRPCContainerProbeTLS": True},
}

Doc = dict[str, Any]


def _pod(containers: list[Doc], init: list[Doc] | None = None, eph: list[Doc] | None = None, **spec: Any) -> Doc:
    s: Doc = {"containers": containers, **spec}
    if init is not None:
        s["initContainers"] = init
    if eph is not None:
        s["ephemeralContainers"] = eph
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w", "namespace": "x"}, "spec": s}


def _c(name: str, **fields: Any) -> Doc:
    return {"name": name, "image": "x", **fields}


GOOD_PROBE: Doc = {"exec": {"command": ["true"]}}
HOOKS: dict[str, Any] = {
    "good": {"postStart": {"exec": {"command": ["true"]}}, "preStop": {"httpGet": {"port": 80}}},
    "bad-port": {"preStop": {"tcpSocket": {"port": 0}}},
    "empty": {},
}
PROBES: dict[str, Any] = {
    "good": GOOD_PROBE, "bad-port": {"httpGet": {"port": "80"}}, "no-handler": {}, "null": None,
    "two-handlers": {"exec": {"command": ["true"]}, "tcpSocket": {"port": 1}},
}
PROBE_KEYS = ("livenessProbe", "readinessProbe", "startupProbe")


def _handler_cases() -> list[tuple[str, str, Doc]]:
    out: list[tuple[str, str, Doc]] = []
    for restart in (None, "Never", "OnFailure", "Always"):
        extra = {} if restart is None else {"restartPolicy": restart}
        for key in PROBE_KEYS:
            for label, probe in PROBES.items():
                out.append((f"init[{restart}].{key}={label}", "default",
                            _pod([_c("a")], [_c("i", **extra, **{key: probe})])))
        for label, hooks in HOOKS.items():
            out.append((f"init[{restart}].lifecycle={label}", "default",
                        _pod([_c("a")], [_c("i", **extra, lifecycle=hooks)])))
        everything = {"lifecycle": HOOKS["good"], **dict.fromkeys(PROBE_KEYS, GOOD_PROBE)}
        out.append((f"init[{restart}].all", "default", _pod([_c("a")], [_c("i", **extra, **everything)])))
        backwards = {"startupProbe": {}, "readinessProbe": {}, "livenessProbe": {}, "lifecycle": {}}
        out.append((f"init[{restart}].all-reversed", "default", _pod([_c("a")], [_c("i", **extra, **backwards)])))
    # without ContainerRestartRules: Never is refused first, then the probe
    for restart in ("Never", "Always"):
        out.append((f"no-rules init[{restart}].liveness", "no-restart-rules",
                    _pod([_c("a")], [_c("i", restartPolicy=restart, livenessProbe=GOOD_PROBE)])))
    # the second init container is the regular one
    out.append(("init[1]", "default", _pod([_c("a")], [_c("s", restartPolicy="Always", startupProbe=GOOD_PROBE),
                                                       _c("i", readinessProbe=GOOD_PROBE)])))
    return out


EPHEMERAL_FIELDS: dict[str, Any] = {
    "ports": [[], [{"containerPort": 80}]],
    "resources": [{"limits": {}}, {"limits": None}, {"requests": {"cpu": "1"}}, {"claims": []}, {}],
    "resizePolicy": [[]],
    "restartPolicy": ["Always", "Never"],
    "restartPolicyRules": [[]],
    "livenessProbe": [GOOD_PROBE, {}],
    "readinessProbe": [GOOD_PROBE],
    "startupProbe": [GOOD_PROBE],
    "lifecycle": [{}, HOOKS["good"]],
    "env": [[{"name": "A", "value": "b"}]],
    "stdin": [True],
}


def _ephemeral_cases() -> list[tuple[str, str, Doc]]:
    out: list[tuple[str, str, Doc]] = []
    for key, values in EPHEMERAL_FIELDS.items():
        for n, value in enumerate(values):
            out.append((f"ephemeral.{key}#{n}", "default", _pod([_c("a")], eph=[_c("e", **{key: value})])))
    rng = random.Random(SEED)
    keys = sorted(EPHEMERAL_FIELDS)
    for n in range(40):
        picked = rng.sample(keys, rng.randint(2, 5))
        fields = {k: rng.choice(EPHEMERAL_FIELDS[k]) for k in rng.sample(picked, len(picked))}
        out.append((f"ephemeral.mix#{n}", "default", _pod([_c("a")], eph=[_c("e", **fields)])))
    out.append(("ephemeral.bad-port", "default", _pod([_c("a")], eph=[_c("e", ports=[{"containerPort": 0}])])))
    out.append(("ephemeral.dup-and-probe", "default", _pod([_c("a")], eph=[_c("a", livenessProbe=GOOD_PROBE)])))
    return out


def _ports_cases() -> list[tuple[str, str, Doc]]:
    out: list[tuple[str, str, Doc]] = []
    ports: list[Doc] = [
        {"containerPort": 0}, {}, {"containerPort": -1}, {"containerPort": 1}, {"containerPort": 65535},
        {"containerPort": 65536}, {"containerPort": 80, "hostPort": 0}, {"containerPort": 80, "hostPort": -1},
        {"containerPort": 80, "hostPort": 65536}, {"containerPort": 70000, "hostPort": 70000},
        {"containerPort": 80, "protocol": "UDP"}, {"containerPort": 80, "protocol": "SCTP"},
        {"containerPort": 80, "protocol": "tcp"}, {"containerPort": 80, "protocol": ""},
        {"containerPort": 80, "name": "http"}, {"containerPort": 80, "name": "80"},
        {"containerPort": 80, "name": "Http"}, {"containerPort": 0, "name": "a--b", "hostPort": -5, "protocol": "X"},
    ]
    for n, port in enumerate(ports):
        for where in ("app", "init", "sidecar"):
            c = _c("c", ports=[port])
            if where == "app":
                out.append((f"port#{n}@app", "default", _pod([c])))
            else:
                if where == "sidecar":
                    c["restartPolicy"] = "Always"
                out.append((f"port#{n}@{where}", "default", _pod([_c("a")], [c])))
        out.append((f"port#{n}@hostNetwork", "default", _pod([_c("c", ports=[port])], hostNetwork=True)))
    out += [
        ("dup-port-name", "default",
         _pod([_c("c", ports=[{"containerPort": 1, "name": "p"}, {"containerPort": 2, "name": "p"}])])),
        ("same-name-two-containers", "default",
         _pod([_c("c", ports=[{"containerPort": 1, "name": "p"}]), _c("d", ports=[{"containerPort": 2, "name": "p"}])])),
        ("hostport-conflict-app", "default",
         _pod([_c("c", ports=[{"containerPort": 1, "hostPort": 9}]), _c("d", ports=[{"containerPort": 2, "hostPort": 9}])])),
        ("hostport-other-protocol", "default",
         _pod([_c("c", ports=[{"containerPort": 1, "hostPort": 9}, {"containerPort": 2, "hostPort": 9, "protocol": "UDP"}])])),
        ("hostport-other-ip", "default",
         _pod([_c("c", ports=[{"containerPort": 1, "hostPort": 9}, {"containerPort": 2, "hostPort": 9, "hostIP": "10.0.0.1"}])])),
        ("hostport-init-apart", "default",
         _pod([_c("a", ports=[{"containerPort": 1, "hostPort": 9}])],
              [_c("i", ports=[{"containerPort": 1, "hostPort": 9}]), _c("j", ports=[{"containerPort": 1, "hostPort": 9}])])),
        # an init container's conflict: reported under index 0, whatever its index
        ("hostport-conflict-init[1]", "default",
         _pod([_c("a")], [_c("i"), _c("j", ports=[{"containerPort": 1, "hostPort": 9}, {"containerPort": 2, "hostPort": 9}])])),
        ("hostNetwork-mismatch", "default", _pod([_c("c", ports=[{"containerPort": 80, "hostPort": 81}])], hostNetwork=True)),
        ("hostNetwork-defaulted-conflict", "default",
         _pod([_c("c", ports=[{"containerPort": 80}]), _c("d", ports=[{"containerPort": 80}])], hostNetwork=True)),
        ("hostNetwork-init-mismatch", "default",
         _pod([_c("c")], [_c("i", ports=[{"containerPort": 80, "hostPort": 81}])], hostNetwork=True)),
    ]
    return out


def _action_cases() -> list[tuple[str, str, Doc]]:
    """Each bad action in a probe and a hook, stop signals per OS, sleeps
    against the pod's grace period, probe counters and ephemeral targets."""
    out: list[tuple[str, str, Doc]] = []
    for n, action in enumerate(BAD_ACTIONS):
        for gates in ("default", "alpha-handlers"):
            out.append((f"action#{n}@probe/{gates}", gates, _pod([_c("a", readinessProbe=action)])))
            if "grpc" not in action:  # (a hook has no grpc: an unknown field)
                out.append((f"action#{n}@hook/{gates}", gates, _pod([_c("a", lifecycle={"preStop": action})])))
    for os_name in (None, "linux", "windows", "", "plan9"):
        for signal in ("SIGTERM", "SIGUSR1", "SIGRTMAX-3", "SIGNOPE", "<&>"):
            for gates in ("default", "alpha-handlers"):
                extra = {} if os_name is None else {"os": {"name": os_name}}
                out.append((f"stopSignal={signal}@os={os_name}/{gates}", gates,
                            _pod([_c("a", lifecycle={"stopSignal": signal})], **extra)))
                out.append((f"init-stopSignal={signal}@os={os_name}/{gates}", gates,
                            _pod([_c("a")], [_c("i", lifecycle={"stopSignal": signal})], **extra)))
    for grace in (None, -3, 0, 10):
        for sleep in BAD_SLEEPS:
            extra = {} if grace is None else {"terminationGracePeriodSeconds": grace}
            out.append((f"sleep={sleep}@grace={grace}", "default",
                        _pod([_c("a", lifecycle={"postStart": {"sleep": sleep}})], **extra)))
    for key in PROBE_KEYS:
        for counter in (*PROBE_COUNTERS, "terminationGracePeriodSeconds"):
            for value in (-1, 0, 2):
                out.append((f"{key}.{counter}={value}", "default",
                            _pod([_c("a", **{key: {**GOOD_PROBE, counter: value}})])))
    for target in ("a", "i", "e", "nope", ""):
        out.append((f"ephemeral.target={target}", "default",
                    _pod([_c("a")], [_c("i")], eph=[_c("e", targetContainerName=target, stdin=True)])))
    out.append(("ephemeral.target+lifecycle", "default",
                _pod([_c("a")], eph=[_c("e", targetContainerName="x", lifecycle={})])))
    return out


#: ``validateWindows``' fields in the API server's order, each with a value
#: the checks before ``validateOS`` accept (a sysctl of the net namespace:
#: these pods have no ``hostNetwork``): the pod's security context's, the
#: pod's own, then a container security context's
WINDOWS_POD_CONTEXT: dict[str, Any] = {
    "appArmorProfile": {"type": "RuntimeDefault"}, "seLinuxOptions": {"level": "s0:c1,c2"},
    "seccompProfile": {"type": "RuntimeDefault"}, "fsGroup": 2000, "fsGroupChangePolicy": "OnRootMismatch",
    "sysctls": [{"name": "net.ipv4.ip_local_port_range", "value": "1024 65000"}], "runAsUser": 1000,
    "runAsGroup": 3000, "supplementalGroups": [4000], "supplementalGroupsPolicy": "Merge",
    "seLinuxChangePolicy": "Recursive",
}
WINDOWS_POD_HOST: dict[str, Any] = {"hostUsers": True, "hostPID": True, "hostIPC": True, "shareProcessNamespace": False}
WINDOWS_CONTAINER_CONTEXT: dict[str, Any] = {
    "appArmorProfile": {"type": "Unconfined"}, "seLinuxOptions": {},
    "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/a.json"}, "capabilities": {},
    "readOnlyRootFilesystem": False, "privileged": True, "allowPrivilegeEscalation": True,
    "procMount": "Default", "runAsUser": 0, "runAsGroup": 0,
}
#: fields neither OS refuses, and Linux's one
OS_NEUTRAL: dict[str, Any] = {"runAsNonRoot": True}
WINDOWS_OPTIONS: list[Doc] = [{}, {"runAsUserName": "ContainerUser"}, {"gmsaCredentialSpecName": "gmsa-spec"},
                              {"hostProcess": False}]
OS_DOCS: list[Doc | None] = [None, {"name": "linux"}, {"name": "windows"}, {"name": "plan9"}, {"name": ""}, {}]
WHERE = ("app", "init", "sidecar", "ephemeral")


def _os_pod(os_doc: Doc | None, sc: Doc | None = None, where: str = "app", **spec: Any) -> Doc:
    """A pod with ``os_doc`` whose container at ``where`` (an app, init,
    sidecar or ephemeral container) has the security context ``sc``."""
    extra = {} if os_doc is None else {"os": copy.deepcopy(os_doc)}
    c = _c("c") if sc is None else _c("c", securityContext=copy.deepcopy(sc))
    if where == "app":
        return _pod([c], **extra, **spec)
    if where == "ephemeral":
        return _pod([_c("a")], eph=[c], **extra, **spec)
    if where == "sidecar":
        c["restartPolicy"] = "Always"
    return _pod([_c("a")], [c], **extra, **spec)


def _os_field_cases() -> list[tuple[str, str, Doc]]:
    """``validateLinux`` and ``validateWindows``: each field alone on every
    OS (none, linux, windows, and names ``validateOS`` refuses: then
    nothing else is checked), in every kind of container; null is unset,
    an empty list or object is set (``sysctls`` needs an entry); the
    order of the checks (each field with every later one set, a pod's
    before a container's, init, app, then ephemeral containers); and the
    checks podnuma models before them."""
    out: list[tuple[str, str, Doc]] = []
    for os_doc in OS_DOCS:
        tag = "none" if os_doc is None else repr(os_doc.get("name"))
        for key, value in {**WINDOWS_POD_CONTEXT, **OS_NEUTRAL}.items():
            out.append((f"os={tag} pod.{key}", "default", _os_pod(os_doc, securityContext={key: value})))
        for key, value in WINDOWS_POD_HOST.items():
            for v in (value, not value):
                out.append((f"os={tag} {key}={v}", "default", _os_pod(os_doc, **{key: v})))
        for n, options in enumerate(WINDOWS_OPTIONS):
            out.append((f"os={tag} pod.windowsOptions#{n}", "default",
                        _os_pod(os_doc, securityContext={"windowsOptions": options})))
        for where in WHERE:
            for key, value in {**WINDOWS_CONTAINER_CONTEXT, **OS_NEUTRAL}.items():
                out.append((f"os={tag} {where}.{key}", "default", _os_pod(os_doc, {key: value}, where)))
            for n, options in enumerate(WINDOWS_OPTIONS):
                out.append((f"os={tag} {where}.windowsOptions#{n}", "default",
                            _os_pod(os_doc, {"windowsOptions": options}, where)))
            out.append((f"os={tag} {where}.securityContext={{}}", "default", _os_pod(os_doc, {}, where)))
    windows, linux = {"name": "windows"}, {"name": "linux"}
    # null is unset; an empty list set (sysctls: only with an entry)
    nulls = dict.fromkeys(WINDOWS_POD_CONTEXT)
    out.append(("windows pod nulls", "default",
                _os_pod(windows, dict.fromkeys(WINDOWS_CONTAINER_CONTEXT), securityContext=nulls,
                        hostUsers=None, shareProcessNamespace=None, hostPID=None)))
    out.append(("windows securityContext=null", "default",
                _pod([_c("a", securityContext=None)], [_c("i", securityContext=None)], os=windows, securityContext=None)))
    out.append(("windows sysctls=[]", "default", _os_pod(windows, securityContext={"sysctls": []})))
    out.append(("windows supplementalGroups=[]", "default",
                _os_pod(windows, securityContext={"supplementalGroups": []})))
    out.append(("windows capabilities.add=[]", "default", _os_pod(windows, {"capabilities": {"add": []}})))
    # the order: each field with every later one set
    host = dict(WINDOWS_POD_HOST)
    pod_keys = list(WINDOWS_POD_CONTEXT)
    everything_ctr = {**WINDOWS_CONTAINER_CONTEXT, "windowsOptions": {}}
    for i, key in enumerate(pod_keys):
        ctx = {k: WINDOWS_POD_CONTEXT[k] for k in reversed(pod_keys[i:])}
        out.append((f"windows order pod.{key}", "default", _os_pod(windows, everything_ctr, securityContext=ctx, **host)))
    host_keys = list(WINDOWS_POD_HOST)
    for i, key in enumerate(host_keys):
        rest = {k: host[k] for k in reversed(host_keys[i:])}
        out.append((f"windows order {key}", "default", _os_pod(windows, everything_ctr, **rest)))
    ctr_keys = list(WINDOWS_CONTAINER_CONTEXT)
    for i, key in enumerate(ctr_keys):
        sc = {k: WINDOWS_CONTAINER_CONTEXT[k] for k in reversed(ctr_keys[i:])}
        for where in WHERE:
            out.append((f"windows order {where}.{key}", "default", _os_pod(windows, sc, where)))
    # containers: init (sidecars alike), app, then ephemeral, each in its list's order
    for os_doc, sc in ((windows, {"runAsUser": 1}), (linux, {"windowsOptions": {}})):
        name = os_doc["name"]
        both = _pod([_c("a"), _c("b", securityContext=sc)], [_c("i"), _c("j", securityContext=sc)],
                    eph=[_c("e", securityContext=sc)], os=os_doc)
        out.append((f"{name} order init before app", "default", copy.deepcopy(both)))
        del both["spec"]["initContainers"][1]["securityContext"]
        out.append((f"{name} order app before ephemeral", "default", copy.deepcopy(both)))
        both["spec"]["containers"][1].pop("securityContext")
        out.append((f"{name} order ephemeral", "default", both))
        pod_too = _os_pod(os_doc, sc, "init", securityContext={"windowsOptions": {}, "runAsUser": 1})
        out.append((f"{name} order pod before containers", "default", pod_too))
    # after every check podnuma models before validateOS
    earlier: dict[str, Any] = {
        "container restartPolicy": lambda p: p["spec"]["containers"][0].update(restartPolicy="Bad"),
        "init port": lambda p: p["spec"].setdefault("initContainers", []).append(
            _c("i", ports=[{"containerPort": 0}])),
        "pod restartPolicy": lambda p: p["spec"].update(restartPolicy="Sometimes"),
        "overhead": lambda p: p["spec"].update(overhead={"cpu": "-1"}),
        "pod-level resources": lambda p: p["spec"].update(resources={"limits": {"cpu": "1"}}),
        "ephemeral target": lambda p: p["spec"].update(ephemeralContainers=[_c("e", targetContainerName="zz")]),
        "bad os": lambda p: p["spec"].update(os={"name": "Windows"}),
    }
    for label, change in earlier.items():
        for os_doc, sc, pod_sc in ((windows, {"procMount": "Default"}, {"fsGroup": 1}),
                                   (linux, {"windowsOptions": {}}, {"windowsOptions": {}})):
            for at_pod in (False, True):
                pod = _os_pod(os_doc, None if at_pod else sc, securityContext=pod_sc if at_pod else None)
                change(pod)
                out.append((f"{os_doc['name']} {'pod' if at_pod else 'container'} field after {label}",
                            "default", pod))
    return out

#: faults the random pods combine: each changes one container (or the pod)
Fault = Callable[[random.Random, Doc], None]


def _some(rng: random.Random, spec: Doc, key: str) -> Doc | None:
    items = spec.get(key) or []
    return rng.choice(items) if items else None


def _f_handler_port(rng: random.Random, spec: Doc) -> None:
    c = _some(rng, spec, rng.choice(["containers", "initContainers"]))
    if c is not None:
        c[rng.choice(PROBE_KEYS)] = {rng.choice(["httpGet", "tcpSocket"]): {"port": rng.choice([0, "80", 70000])}}


def _f_dup_name(rng: random.Random, spec: Doc) -> None:
    every = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    if len(every) > 1:
        a, b = rng.sample(every, 2)
        b["name"] = a["name"]


def _f_pod_restart(rng: random.Random, spec: Doc) -> None:
    spec["restartPolicy"] = "Sometimes"


def _f_ctr_restart(rng: random.Random, spec: Doc) -> None:
    c = _some(rng, spec, rng.choice(["containers", "initContainers"]))
    if c is not None:
        c["restartPolicy"] = rng.choice(["Bad", "Never", "OnFailure"])


def _f_init_probe(rng: random.Random, spec: Doc) -> None:
    c = _some(rng, spec, "initContainers")
    if c is not None:
        key = rng.choice([*PROBE_KEYS, "lifecycle"])
        c[key] = {} if rng.random() < 0.5 else HOOKS["good"] if key == "lifecycle" else GOOD_PROBE


def _f_port(rng: random.Random, spec: Doc) -> None:
    c = _some(rng, spec, rng.choice(["containers", "initContainers"]))
    if c is not None:
        c["ports"] = [rng.choice([{"containerPort": 0}, {"containerPort": 65536}, {"containerPort": 1, "hostPort": -1},
                                  {"containerPort": 1, "protocol": "ICMP"}, {"containerPort": 1, "name": "-x"}])]


def _f_bad_name(rng: random.Random, spec: Doc) -> None:
    c = _some(rng, spec, rng.choice(["containers", "initContainers"]))
    if c is not None:
        c["name"] = "Bad_Name"


def _f_resources(rng: random.Random, spec: Doc) -> None:
    c = _some(rng, spec, rng.choice(["containers", "initContainers"]))
    if c is not None:
        c["resources"] = {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}


#: bad (and a few good) handler actions, probe counters and hooks
BAD_ACTIONS: list[Doc] = [
    {"exec": {}}, {"exec": {"command": []}}, {"exec": {"command": None}}, {"exec": {"command": ["x"]}},
    {"httpGet": {"port": 80, "scheme": "FTP"}}, {"httpGet": {"port": 80, "scheme": "https"}},
    {"httpGet": {"port": 80, "scheme": "HTTPS", "path": ""}}, {"httpGet": {"port": 80, "scheme": "<&>"}},
    {"httpGet": {"port": 80, "httpHeaders": [{"name": "X-Ok", "value": "v"}, {"name": "bad name", "value": ""}]}},
    {"httpGet": {"port": 80, "httpHeaders": [{"name": "", "value": "v"}]}},
    {"httpGet": {"port": 80, "httpHeaders": [{"name": "X_Y"}], "scheme": "FTP"}},
    {"httpGet": {"port": 0, "scheme": "FTP"}},
    {"httpGet": {"port": 80, "protocol": "HTTP3"}}, {"httpGet": {"port": 80, "protocol": "HTTP2", "scheme": "HTTPS"}},
    {"httpGet": {"port": 80, "protocol": "HTTP2", "host": "h"}}, {"httpGet": {"port": 80, "protocol": "HTTP2"}},
    {"tcpSocket": {"port": "Bad"}}, {"tcpSocket": {}},
    {"grpc": {"port": 0, "service": ""}}, {"grpc": {"port": 70000}}, {"grpc": {"port": 9, "service": "a b"}},
    {"grpc": {"port": 9, "mode": "SSL"}}, {"grpc": {"port": 9, "mode": "TLS"}},
]
BAD_SLEEPS: list[Any] = [{"seconds": -1}, {"seconds": 0}, {"seconds": 30}, {"seconds": 31}, {"seconds": 5}, {}]
PROBE_COUNTERS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")


def _some_handled(rng: random.Random, spec: Doc) -> Doc | None:
    """An app container or a sidecar (hooks and probes validated)."""
    every = (spec.get("containers") or []) + [c for c in spec.get("initContainers") or []
                                               if c.get("restartPolicy") == "Always"]
    return rng.choice(every) if every else None


def _f_probe_action(rng: random.Random, spec: Doc) -> None:
    c = _some_handled(rng, spec)
    if c is not None:
        probe = copy.deepcopy(rng.choice(BAD_ACTIONS))
        if rng.random() < 0.2:
            probe["exec"] = {"command": rng.choice([[], ["x"]])}
        c[rng.choice(PROBE_KEYS)] = probe


def _f_probe_counters(rng: random.Random, spec: Doc) -> None:
    c = _some_handled(rng, spec)
    if c is not None:
        probe = c.get(key := rng.choice(PROBE_KEYS)) or copy.deepcopy(GOOD_PROBE)
        for counter in rng.sample(PROBE_COUNTERS, rng.randint(1, 3)):
            probe[counter] = rng.choice([-1, 0, 1, 2, 5])
        if rng.random() < 0.4:
            probe["terminationGracePeriodSeconds"] = rng.choice([-1, 0, 5])
        c[key] = probe


def _f_hook(rng: random.Random, spec: Doc) -> None:
    c = _some_handled(rng, spec) if rng.random() < 0.8 else _some(rng, spec, "initContainers")
    if c is None:
        return
    lifecycle: Doc = {}
    for hook in rng.sample(["postStart", "preStop"], rng.randint(0, 2)):
        lifecycle[hook] = rng.choice([{"sleep": copy.deepcopy(rng.choice(BAD_SLEEPS))},
                                      {"sleep": {"seconds": 1}, "exec": {"command": ["x"]}},
                                      copy.deepcopy(rng.choice(BAD_ACTIONS[:12] + BAD_ACTIONS[16:18])), {}])
    if rng.random() < 0.5:
        lifecycle["stopSignal"] = rng.choice(["SIGTERM", "SIGUSR1", "SIGRTMIN+3", "SIGNOPE", "sigterm"])
    c["lifecycle"] = lifecycle


def _f_grace(rng: random.Random, spec: Doc) -> None:
    spec["terminationGracePeriodSeconds"] = rng.choice([-5, 0, 2, 60])


def _f_os(rng: random.Random, spec: Doc) -> None:
    spec["os"] = rng.choice([{"name": "linux"}, {"name": "windows"}, {"name": "linux"}, {"name": "windows"},
                             {"name": ""}, {}, {"name": "plan9"}, {"name": "Linux"}])


#: restart rules, good and bad: each rule checked (action, exit-code
#: operator, how many exit codes, exitCodes required), and how many rules
RULE = {"action": "Restart", "exitCodes": {"operator": "In", "values": [1, 2]}}
RESTART_RULES: list[Any] = [
    [], [RULE], [{**RULE, "action": "RestartAllContainers"}], [{**RULE, "action": "Explode"}],
    [{"exitCodes": {"operator": "In", "values": [1]}}], [{"action": "Restart"}],
    [{"action": "Restart", "exitCodes": {"operator": "Between", "values": [1]}}],
    [{"action": "Restart", "exitCodes": {"values": [1]}}], [{"action": "Restart", "exitCodes": {"operator": "NotIn"}}],
    [{"action": "Restart", "exitCodes": {"operator": "In", "values": list(range(256))}}],
    [{"action": "Restart", "exitCodes": {"operator": "In", "values": list(range(255))}}],
    [{"action": "Bad", "exitCodes": {"operator": "Bad", "values": list(range(300))}}, {"action": "Bad"}],
    [RULE] * 20, [RULE] * 21, [*([RULE] * 21), {"action": "Bad"}], [RULE, {"action": "Restart"}],
]


def _f_restart_rules(rng: random.Random, spec: Doc) -> None:
    c = _some(rng, spec, rng.choice(["containers", "initContainers"]))
    if c is not None:
        c["restartPolicyRules"] = copy.deepcopy(rng.choice(RESTART_RULES))
        if rng.random() < 0.5:
            c["restartPolicy"] = rng.choice(["Always", "Never", "OnFailure", "Bad"])


def _restart_rule_cases() -> list[tuple[str, str, Doc]]:
    """Each set of rules on an app container, an init container and a
    sidecar, with each container policy (none too), under each gate set;
    and an unknown OS beside the errors ValidatePodSpec lists before it."""
    out: list[tuple[str, str, Doc]] = []
    for n, rules in enumerate(RESTART_RULES):
        for policy in (None, "Always", "Never", "OnFailure", "Bad"):
            extra = {} if policy is None else {"restartPolicy": policy}
            for gates in ("default", "no-restart-rules", "no-restart-all"):
                c = _c("c", restartPolicyRules=copy.deepcopy(rules), **extra)
                out.append((f"rules#{n}@app/{policy}/{gates}", gates, _pod([c])))
                out.append((f"rules#{n}@init/{policy}/{gates}", gates, _pod([_c("a")], [copy.deepcopy(c)])))
    for os_doc in ({}, {"name": ""}, {"name": "plan9"}):
        out.append((f"os={os_doc}+overhead", "default", _pod([_c("a")], os=os_doc, overhead={"cpu": "-1"})))
        out.append((f"os={os_doc}+restartPolicy", "default", _pod([_c("a")], os=os_doc, restartPolicy="Bad")))
        out.append((f"os={os_doc}+container", "default", _pod([_c("a", restartPolicy="Bad")], os=os_doc)))
        out.append((f"os={os_doc}+rules", "default",
                    _pod([_c("a", restartPolicyRules=[{"action": "Restart"}])], os=os_doc)))
        out.append((f"os={os_doc}+stopSignal", "alpha-handlers",
                    _pod([_c("a", lifecycle={"stopSignal": "SIGINT"})], os=os_doc)))
    return out


def _f_ephemeral(rng: random.Random, spec: Doc) -> None:
    names = [c["name"] for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])]
    eph = [_c(f"e{i}") for i in range(rng.randint(1, 2))]
    for e in eph:
        pick = rng.random()
        if pick < 0.6:
            e["targetContainerName"] = rng.choice([*names, "nope", "e0"])
        if rng.random() < 0.3:
            e["lifecycle"] = rng.choice([{"stopSignal": "SIGTERM"}, {}, {"preStop": {"sleep": {"seconds": 1}}}])
        if rng.random() < 0.2:
            e["name"] = rng.choice(names)
    spec["ephemeralContainers"] = eph


#: values the random pods give a pod's security context (each accepted by
#: the checks before ``validateOS``; null: unset)
POD_CONTEXT_CHOICES: dict[str, list[Any]] = {
    "appArmorProfile": [{"type": "RuntimeDefault"}, {"type": "Localhost", "localhostProfile": "k8s-x"}, None],
    "seLinuxOptions": [{}, {"level": "s0:c1,c2"}, None], "seccompProfile": [{"type": "Unconfined"}, None],
    "fsGroup": [0, 2000, None], "fsGroupChangePolicy": ["Always", "OnRootMismatch"], "runAsUser": [0, 1000, None],
    "runAsGroup": [1, None], "supplementalGroups": [[], [1, 2], None], "supplementalGroupsPolicy": ["Strict"],
    "seLinuxChangePolicy": ["Recursive", "MountOption"], "runAsNonRoot": [True, False],
    "windowsOptions": [*WINDOWS_OPTIONS, None],
}
CONTAINER_CONTEXT_CHOICES: dict[str, list[Any]] = {
    "appArmorProfile": [{"type": "Unconfined"}, None], "seLinuxOptions": [{"user": "u"}, None],
    "seccompProfile": [{"type": "RuntimeDefault"}], "capabilities": [{}, {"add": ["NET_ADMIN"], "drop": ["ALL"]}],
    "readOnlyRootFilesystem": [True, False], "privileged": [True, False, None],
    "allowPrivilegeEscalation": [True, False], "procMount": ["Default", None], "runAsUser": [7, None],
    "runAsGroup": [0], "runAsNonRoot": [False], "windowsOptions": [*WINDOWS_OPTIONS, None],
}


#: the pod's fields ``_f_pod_security`` sets
POD_SECURITY_KEYS = ("securityContext", "hostUsers", "hostPID", "hostIPC", "shareProcessNamespace")


def _maybe_os(rng: random.Random, spec: Doc) -> None:
    """Most pods with these fields name an OS (``_f_os`` may set another)."""
    if "os" not in spec and rng.random() < 0.7:
        spec["os"] = {"name": rng.choice(["linux", "windows"])}


def _f_pod_security(rng: random.Random, spec: Doc) -> None:
    """The pod's security context and host namespaces, as the checks
    before ``validateOS`` accept them together (no ``hostPID`` or
    ``hostIPC`` with ``hostUsers: false``, no IPC sysctl with ``hostIPC``,
    no ``shareProcessNamespace`` with ``hostPID``)."""
    _maybe_os(rng, spec)
    for key in POD_SECURITY_KEYS:  # (drawn again as a whole, kept coherent)
        spec.pop(key, None)
    if rng.random() < 0.1:
        spec["securityContext"] = None
    else:
        keys = rng.sample(sorted(POD_CONTEXT_CHOICES), rng.randint(0, 4))
        spec["securityContext"] = {k: copy.deepcopy(rng.choice(POD_CONTEXT_CHOICES[k])) for k in keys}
    users = rng.choice([None, True, False, "-"])
    if users != "-":
        spec["hostUsers"] = users
    for key in ("hostPID", "hostIPC"):
        if rng.random() < 0.3:
            spec[key] = users is not False and rng.random() < 0.7
    if rng.random() < 0.3:
        spec["shareProcessNamespace"] = rng.choice([None, False] if spec.get("hostPID") else [None, False, True])
    if rng.random() < 0.3 and spec["securityContext"] is not None:
        name = "net.core.somaxconn" if spec.get("hostIPC") else rng.choice(["kernel.shm_rmid_forced", "kernel.msgmax"])
        spec["securityContext"]["sysctls"] = rng.choice([[], [{"name": name, "value": "1"}]])


def _f_ctr_security(rng: random.Random, spec: Doc) -> None:
    """One or two containers' security contexts (any kind of container;
    ``procMount: Unmasked`` would need ``hostUsers: false``, and
    ``allowPrivilegeEscalation: false`` no ``privileged: true``)."""
    _maybe_os(rng, spec)
    every = [c for key in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(key) or []]
    for c in rng.sample(every, min(len(every), rng.randint(1, 2))):
        if rng.random() < 0.1:
            c["securityContext"] = None
            continue
        keys = rng.sample(sorted(CONTAINER_CONTEXT_CHOICES), rng.randint(0, 4))
        sc = {k: copy.deepcopy(rng.choice(CONTAINER_CONTEXT_CHOICES[k])) for k in keys}
        if sc.get("allowPrivilegeEscalation") is False and sc.get("privileged") is True:
            sc["privileged"] = False
        c["securityContext"] = sc


FAULTS: list[Fault] = [_f_probe_action, _f_probe_counters, _f_hook, _f_hook, _f_grace, _f_os, _f_ephemeral,
                       _f_handler_port, _f_dup_name, _f_pod_restart, _f_ctr_restart, _f_init_probe, _f_port,
                       _f_bad_name, _f_resources, _f_restart_rules, _f_restart_rules, _f_pod_security,
                       _f_pod_security, _f_ctr_security, _f_ctr_security]


def _random_cases(seed: int, count: int) -> list[tuple[str, str, Doc]]:
    rng = random.Random(seed)
    out: list[tuple[str, str, Doc]] = []
    for n in range(count):
        apps = [_c(f"a{i}") for i in range(rng.randint(1, 3))]
        inits = [_c(f"i{i}", **({"restartPolicy": "Always"} if rng.random() < 0.4 else {}))
                 for i in range(rng.randint(0, 3))]
        spec: Doc = {"containers": apps, "initContainers": inits}
        for fault in rng.sample(FAULTS, rng.randint(1, 5)):
            fault(rng, spec)
        draw = rng.random()
        gates = ("no-restart-rules" if draw < 0.15 else "no-restart-all" if draw < 0.25
                 else "alpha-handlers" if draw < 0.45 else "default")
        extra = {k: spec[k] for k in ("restartPolicy", "terminationGracePeriodSeconds", "os", *POD_SECURITY_KEYS)
                 if k in spec}
        out.append((f"random#{n}", gates, _pod(spec["containers"], spec["initContainers"],
                                               spec.get("ephemeralContainers"), **extra)))
    return out


CASES = (_handler_cases() + _ephemeral_cases() + _ports_cases() + _action_cases() + _restart_rule_cases()
         + _os_field_cases() + _random_cases(SEED, COUNT))


@pytest.fixture(scope="module")
def answers(oracle_binary: str) -> list[dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for gates, flags in GATE_SETS.items():
        idx = [i for i, (_, g, _) in enumerate(CASES) if g == gates]
        out.update(zip(idx, validate_oracle(oracle_binary, [CASES[i][2] for i in idx], flags), strict=True))
    return [out[i] for i in range(len(CASES))]


def _difference(label: str, gates: str, doc: Doc, answer: dict[str, Any]) -> str | None:
    mine = validate_podnuma(copy.deepcopy(doc), GATE_SETS[gates])
    errors = [e["error"] for e in answer.get("errors") or []]
    if answer["accepted"]:
        diffs = compare_verdicts(mine, answer, GATE_SETS[gates])
        return f"{label}: {diffs[0]}" if diffs else None
    if answer.get("decode"):
        return f"{label}: the API server could not decode it: {answer.get('message')}"
    if not errors:
        return f"{label}: the API server refuses without field errors: {answer.get('message')}"
    if mine.error != errors[0]:
        return f"{label}: podnuma {mine.error or 'accepts'!r}; the API server first {errors[0]!r} (of {errors})"
    return None


def test_probes_ports_and_order_match_the_api_servers_first_error(answers: list[dict[str, Any]]) -> None:
    wrong = [d for (label, gates, doc), answer in zip(CASES, answers, strict=True)
             if (d := _difference(label, gates, doc, answer)) is not None]
    assert wrong == [], "\n".join(wrong[:25])
    refused = sum(not a["accepted"] for a in answers)
    print(f"probes/ports/order: {len(CASES)} pods (seed {SEED}), {refused} refused")
    # (the cases reach both verdicts, and the random pods several errors at once)
    assert 0 < refused < len(CASES)
    multi = sum(len(a.get("errors") or []) > 1 for a in answers[-COUNT:])
    assert multi > COUNT // 4


def test_a_regular_init_containers_probe_is_refused_for_being_there(answers: list[dict[str, Any]]) -> None:
    i = next(i for i, (label, _, _) in enumerate(CASES) if label == "init[None].all-reversed")
    want = "spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always"
    assert validate_podnuma(copy.deepcopy(CASES[i][2]), {}).error == want
    assert answers[i]["errors"][0]["error"] == want


_WINDOWS_FORBIDDEN = ": Forbidden: cannot be set for a windows pod"
_LINUX_FORBIDDEN = ": Forbidden: windows options cannot be set for a linux pod"


def test_windows_checks_list_every_field_in_order(oracle_binary: str) -> None:
    """``validateWindows`` on a pod that sets every field it refuses lists
    them all, in the order of the tables the cases above are built from
    (the pod security context's, the pod's own, then a container's);
    podnuma reports the first. Without ``spec.os`` (or with ``linux``)
    the same pod is accepted by both."""
    pod = _os_pod({"name": "windows"}, WINDOWS_CONTAINER_CONTEXT, "init",
                  securityContext=WINDOWS_POD_CONTEXT, **WINDOWS_POD_HOST)
    want = ([f"spec.securityContext.{k}{_WINDOWS_FORBIDDEN}" for k in WINDOWS_POD_CONTEXT]
            + [f"spec.{k}{_WINDOWS_FORBIDDEN}" for k in WINDOWS_POD_HOST]
            + [f"spec.initContainers[0].securityContext.{k}{_WINDOWS_FORBIDDEN}" for k in WINDOWS_CONTAINER_CONTEXT])
    (theirs,) = validate_oracle(oracle_binary, [copy.deepcopy(pod)], {})
    assert [e["error"] for e in theirs["errors"]] == want
    assert validate_podnuma(copy.deepcopy(pod), {}).error == want[0]
    for os_doc in (None, {"name": "linux"}):
        other = copy.deepcopy(pod)
        if os_doc is None:
            del other["spec"]["os"]
        else:
            other["spec"]["os"] = os_doc
        assert validate_oracle(oracle_binary, [copy.deepcopy(other)], {})[0]["accepted"]
        assert validate_podnuma(other, {}).error == ""


def test_the_os_checks_are_reached(answers: list[dict[str, Any]]) -> None:
    """The cases reach ``validateLinux`` and ``validateWindows`` as the
    API server's first error (fixed and random pods), and random pods
    where they come after an earlier error podnuma must report instead."""
    def errors(a: dict[str, Any]) -> list[str]:
        return [e["error"] for e in a.get("errors") or [] if e["error"] != ON_CREATE]

    def of_os(error: str) -> bool:
        return error.endswith((_WINDOWS_FORBIDDEN, _LINUX_FORBIDDEN))

    firsts = [(label, (errors(a) or [""])[0]) for (label, _, _), a in zip(CASES, answers, strict=True)]
    for kind in (_WINDOWS_FORBIDDEN, _LINUX_FORBIDDEN):
        assert any(f.endswith(kind) for label, f in firsts if label.startswith("os=")), kind
    if COUNT >= 200:
        randoms = answers[-COUNT:]
        assert sum(of_os((errors(a) or [""])[0]) for a in randoms) > 0
        assert sum(any(of_os(e) for e in errors(a)[1:]) and not of_os(errors(a)[0]) for a in randoms) > 0


def test_container_port_zero_is_required(answers: list[dict[str, Any]]) -> None:
    i = next(i for i, (label, _, _) in enumerate(CASES) if label == "port#0@init")
    want = "spec.initContainers[0].ports[0].containerPort: Required value"
    assert validate_podnuma(copy.deepcopy(CASES[i][2]), {}).error == want
    assert answers[i]["errors"][0]["error"] == want


@pytest.mark.parametrize(("os_doc", "want"), [
    ({"name": "plan9"}, 'spec.os: Unsupported value: "plan9": supported values: "linux", "windows"'),
    ({"name": ""}, "spec.os.name: Required value"),
    ({}, "spec.os.name: Required value"),
])
def test_an_os_the_api_server_does_not_know_is_refused(oracle_binary: str, os_doc: Doc, want: str) -> None:
    """``validateOS``: a pod's ``spec.os`` names linux or windows; no name
    is required, another is unsupported (under ``spec.os``), a stop signal
    for it (checked against neither list) none the less."""
    gates = {"ContainerStopSignals": True}
    pod = _pod([_c("a", lifecycle={"stopSignal": "SIGINT"})], os=os_doc)
    theirs = validate_oracle(oracle_binary, [pod], gates)[0]
    assert not theirs["accepted"]
    assert [e["error"] for e in theirs["errors"]] == [want]
    assert validate_podnuma(copy.deepcopy(pod), gates).error == want


@pytest.mark.parametrize("kind", ["app", "init"])
def test_restart_rules_without_a_restart_policy_are_refused(oracle_binary: str, kind: str) -> None:
    """With ``ContainerRestartRules`` on (the v1.37 default) a container's
    ``restartPolicyRules`` need its ``restartPolicy``; with the gate off
    the API server drops the rules and the pod is accepted."""
    rules = [{"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}]
    c = _c("c", restartPolicyRules=rules)
    pod = _pod([c]) if kind == "app" else _pod([_c("a")], [c])
    where = "containers" if kind == "app" else "initContainers"
    want = f"spec.{where}[0].restartPolicy: Required value: must specify restartPolicy when restart rules are used"
    theirs = validate_oracle(oracle_binary, [pod], {})[0]
    assert [e["error"] for e in theirs["errors"]] == [want]
    assert validate_podnuma(copy.deepcopy(pod), {}).error == want
    off = GATE_SETS["no-restart-rules"]
    assert validate_oracle(oracle_binary, [pod], off)[0]["accepted"]
    assert validate_podnuma(copy.deepcopy(pod), off).error == ""


#: values with characters ``encoding/json`` escapes and ``strconv.Quote``
#: does not (``<``, ``&``, ``>``, U+2028) or writes alike (a tab)
ESCAPED_VALUES = ["<&>", "tab\there", "a\u2028b"]


def _first_error(oracle: str, pod: Doc) -> str:
    (theirs,) = validate_oracle(oracle, [pod], {})
    assert not theirs["accepted"]
    return str(theirs["errors"][0]["error"])


def _named_type_cases() -> list[tuple[str, Doc]]:
    rule = {"action": "Restart", "exitCodes": {"operator": "In", "values": [1]}}
    out: list[tuple[str, Doc]] = []
    for n, v in enumerate(ESCAPED_VALUES):
        out.append((f"os.name#{n}", _pod([_c("a")], os={"name": v})))
        out.append((f"action#{n}", _pod([_c("a", restartPolicy="Never",
                                               restartPolicyRules=[{**rule, "action": v}])])))
        out.append((f"operator#{n}", _pod([_c("a", restartPolicy="Never", restartPolicyRules=[
            {"action": "Restart", "exitCodes": {"operator": v}}])])))
        out.append((f"app restartPolicy#{n}", _pod([_c("a", restartPolicy=v, restartPolicyRules=[rule])])))
        out.append((f"init restartPolicy#{n}", _pod([_c("a")], [_c("i", restartPolicy=v)])))
        out.append((f"pod restartPolicy#{n}", _pod([_c("a")], restartPolicy=v)))
    return out


@pytest.mark.parametrize(("label", "pod"), _named_type_cases(), ids=[c[0] for c in _named_type_cases()])
def test_a_named_types_unsupported_value_is_written_as_json(oracle_binary: str, label: str, pod: Doc) -> None:
    """A value of a named string type (``OSName``, ``RestartPolicy``,
    ``ContainerRestartPolicy``, a restart rule's action and operator) is
    not a plain ``string`` to ``field.ErrorBody``, which writes it with
    ``encoding/json``: ``spec.os: Unsupported value:
    "\\u003c\\u0026\\u003e": supported values: "linux", "windows"``."""
    want = _first_error(oracle_binary, copy.deepcopy(pod))
    assert "\\u" in want or "\\t" in want, want
    assert validate_podnuma(copy.deepcopy(pod), {}).error == want


def _windows_pod(**resources: Any) -> Doc:
    return _pod([_c("a", resources={"requests": {"cpu": "1", "memory": "1Gi"},
                                    "limits": {"cpu": "1", "memory": "1Gi"}})],
                os={"name": "windows"}, resources=resources)


@pytest.mark.parametrize("resources", [
    {"limits": {"cpu": "2", "memory": "2Gi"}}, {"limits": {"cpu": "-1"}}, {}, {"claims": [{"name": "x"}]},
])
def test_a_windows_pods_pod_level_resources_are_refused(oracle_binary: str, resources: Doc) -> None:
    """``validatePodResources``: a Windows pod may not set pod-level
    ``resources``, even empty ones, and that is the only error reported
    for them (none of the lists' own errors)."""
    pod = _windows_pod(**resources)
    want = "spec.resources: Forbidden: may not be set for a windows pod"
    assert _first_error(oracle_binary, copy.deepcopy(pod)) == want
    assert validate_podnuma(copy.deepcopy(pod), {}).error == want


def test_a_scenario_with_a_windows_pods_pod_level_resources_is_refused(
    oracle_binary: str, tmp_path: Path
) -> None:
    """The kubelet oracle refuses such a scenario as invalid input, and
    ``podnuma simulate`` does too, naming the step's field."""
    scenario = {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"name": "node-1", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                            "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}},
        "kubeletConfig": {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
                          "cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
        "steps": [{"addPod": _windows_pod(limits={"cpu": "2", "memory": "2Gi"})}],
    }
    path = tmp_path / "windows.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    (theirs,) = run_oracle(oracle_binary, [path])
    assert theirs.kind == "input" and "may not be set for a windows pod" in theirs.message
    mine = run_podnuma(path)
    assert (mine.kind, mine.doc is None) == ("input", True)
    assert "steps[0].addPod.spec.resources: Forbidden: may not be set for a windows pod" in mine.message


@pytest.mark.parametrize("resources", [{"limits": {"cpu": "abc"}}, {"limits": "x"}, {"zz": 1}])
def test_a_windows_pods_undecodable_pod_level_resources_fail_to_decode_first(
    oracle_binary: str, resources: Doc
) -> None:
    """Decoding comes before validation: pod-level ``resources`` that do
    not decode (a bad quantity, a list of another type, an unknown field)
    refuse the pod for that, not for being set on a Windows pod."""
    pod = _windows_pod(**resources)
    (theirs,) = validate_oracle(oracle_binary, [copy.deepcopy(pod)], {})
    assert theirs.get("decode") is True and not theirs.get("errors"), theirs
    mine = validate_podnuma(copy.deepcopy(pod), {}).error
    assert mine.startswith("spec.resources.") and "windows" not in mine, mine
