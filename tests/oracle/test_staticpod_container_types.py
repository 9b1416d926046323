"""Values of the wrong JSON type in a container's fields, against the
kubelet's file source (``kubelet-oracle staticpod``).

The kubelet's decoder refuses them (``json: cannot unmarshal string into
Go struct field Container.spec.containers.stdin of type bool``; in an
ephemeral container the field is named through the embedded
``EphemeralContainerCommon``), before any validation: for every field of
``v1.Container`` (listed here from the v1 API, independently of podnuma's
decoder schema) each JSON type it is not, in ``initContainers``,
``containers`` and ``ephemeralContainers``; then every field below a
container that podnuma's decoder schema knows, with one wrong type. Both
refuse with the kubelet's whole message inside podnuma's, or both accept.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from podnuma.agent import validation
from tests.oracle.staticpod_cases import decoded_cases
from tests.oracle.test_staticpod_differential import kubelet_words

# the JSON types of v1.Container's fields (k8s.io/api v0.37.2 core/v1):
# s string, n number, b bool, a array, o object
CONTAINER_FIELDS: dict[str, str] = {
    "name": "s", "image": "s", "command": "a", "args": "a", "workingDir": "s", "ports": "a",
    "envFrom": "a", "env": "a", "resources": "o", "resizePolicy": "a", "restartPolicy": "s",
    "restartPolicyRules": "a", "volumeMounts": "a", "volumeDevices": "a", "livenessProbe": "o",
    "readinessProbe": "o", "startupProbe": "o", "lifecycle": "o", "terminationMessagePath": "s",
    "terminationMessagePolicy": "s", "imagePullPolicy": "s", "securityContext": "o", "stdin": "b",
    "stdinOnce": "b", "tty": "b",
}
_WRONG: dict[str, Any] = {"s": "x", "n": 5, "b": True, "a": [1], "o": {"a": 1}}
_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _manifest(where: str, container: dict[str, Any]) -> str:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if where == "containers":
        spec["containers"] = [container]
    else:
        spec[where] = [container]
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": spec})


def _top_level() -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    for where in _LISTS:
        for field, kind in CONTAINER_FIELDS.items():
            for shown, value in _WRONG.items():
                if shown == kind or (field == "name" and where == "ephemeralContainers" and shown == "s"):
                    continue
                c = {"name": "d", "image": "x", field: value}
                out[f"{where}-{field}-{shown}.json"] = (_manifest(where, c), "json: cannot unmarshal")
    return out


def _wrong_for(t: Any) -> Any:
    return {"string": 5, "int": "x", "intstr": True, "bool": "x", "slice": "x", "map": [1],
            "struct": "x"}.get(t.kind)


def _nested() -> dict[str, tuple[str, str | None]]:
    """Every field podnuma's schema knows below a container (YAML too:
    the kubelet's YAML-to-JSON step sorts the keys)."""
    out: dict[str, tuple[str, str | None]] = {}

    def walk(t: Any, build: Any, path: str, depth: int) -> None:
        for name, (ft, _) in sorted(t.fields.items()):
            wrong = _wrong_for(ft)
            here = f"{path}.{name}"
            if wrong is not None and depth > 0:
                c = {"name": "d", "image": "x", **build({name: wrong})}
                out[f"nested-{here.lstrip('.')}.json"] = (_manifest("containers", c), "json: cannot unmarshal")
            sub = ft.elem if ft.kind == "slice" else ft
            if sub is not None and sub.kind == "struct" and depth < 5:
                walk(sub, (lambda b, n=name, s=ft.kind == "slice": lambda v: b({n: [v] if s else v}))(build),
                     here, depth + 1)

    walk(validation._G_CONTAINER, lambda v: v, "", 0)
    return out


#: nested fields written out independently of podnuma's schema (from the
#: v1 API): name -> a container's extra fields with one wrong-typed value
EXPLICIT: dict[str, dict[str, Any]] = {
    "env-from-prefix": {"envFrom": [{"prefix": 5, "configMapRef": {"name": "x"}}]},
    "env-from-config-map-optional": {"envFrom": [{"configMapRef": {"name": "x", "optional": "yes"}}]},
    "env-from-secret-optional": {"envFrom": [{"secretRef": {"name": "x", "optional": 1}}]},
    "env-secret-key-optional": {"env": [{"name": "A", "valueFrom": {"secretKeyRef": {"key": "k", "optional": "x"}}}]},
    "probe-grpc-service": {"livenessProbe": {"grpc": {"port": 1, "service": 5}}},
    "lifecycle-sleep-seconds": {"lifecycle": {"preStop": {"sleep": {"seconds": "1"}}}},
    "security-seccomp-localhost": {"securityContext": {"seccompProfile": {"type": "Localhost",
                                                                          "localhostProfile": 5}}},
    "security-windows-host-process": {"securityContext": {"windowsOptions": {"hostProcess": "true"}}},
    "mount-recursive-read-only": {"volumeMounts": [{"name": "v", "mountPath": "/m", "recursiveReadOnly": True}]},
    "resize-policy-name": {"resizePolicy": [{"resourceName": 5, "restartPolicy": "NotRequired"}]},
    "claims-request": {"resources": {"claims": [{"name": "a", "request": 5}]}},
}
_EXPLICIT_CASES = {f"explicit-{where}-{name}.json": (_manifest(where, {"name": "d", "image": "x", **extra}),
                                                     "json: cannot unmarshal")
                   for name, extra in EXPLICIT.items() for where in _LISTS}
TOP = {**_top_level(), **_EXPLICIT_CASES}
NESTED = _nested()


@pytest.fixture(scope="module")
def decoded(oracle_binary: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decoded_cases(oracle_binary, tmp_path_factory.mktemp("manifests"), {**TOP, **NESTED})


def test_enough_cases() -> None:
    assert len(TOP) >= 3 * 25 * 4 - 1 + 3 * len(EXPLICIT) and len(NESTED) >= 80


def _same(kubelet: dict[str, Any], ours: dict[str, Any]) -> None:
    if "error" not in kubelet:
        assert "error" not in ours, f"the kubelet accepts it; podnuma refuses: {ours['error']}"
        return
    assert "error" in ours, f"the kubelet refuses it ({kubelet['error']}); podnuma admits it"
    assert kubelet_words(kubelet["error"]) in ours["error"], (kubelet["error"], ours["error"])


@pytest.mark.parametrize("name", sorted(TOP))
def test_a_container_field_of_the_wrong_type(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    assert "error" in kubelet and "json: cannot unmarshal" in kubelet["error"], kubelet
    _same(kubelet, ours)


@pytest.mark.parametrize("name", sorted(NESTED))
def test_a_nested_container_field_of_the_wrong_type(decoded: dict[str, Any], name: str) -> None:
    kubelet, ours = decoded[name]
    _same(kubelet, ours)
