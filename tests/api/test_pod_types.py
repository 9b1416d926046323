"""A known field of an API-server pod with a value of the wrong JSON type is
refused (the API server's decoding into the Go types), in podnuma's
field-path wording, wherever it is: metadata, spec, every container field,
volumes and their sources, status. The types are the static-pod decoder's
(``podnuma.api.pod_schema``, shared with ``podnuma.agent.validation``)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podnuma.api import pod_schema
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_types import check_pod_types
from podnuma.errors import InputError


class _Gates:
    def enabled(self, name: str) -> bool:
        return True


GATES = _Gates()


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "labels": {"a": "b"}, "generation": 2,
                     "creationTimestamp": "2026-01-01T00:00:00Z",
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r",
                                          "uid": "u", "controller": True}]},
        "spec": {
            "nodeSelector": {"k": "v"}, "hostNetwork": False, "priority": 10,
            "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 30}],
            "volumes": [{"name": "v", "hostPath": {"path": "/x"}},
                        {"name": "w", "projected": {"sources": [{"serviceAccountToken": {
                            "path": "t", "expirationSeconds": 3600}}]}}],
            "containers": [{
                "name": "c", "image": "i", "command": ["a"], "args": ["b"],
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "env": [{"name": "E", "value": "v"}],
                "livenessProbe": {"httpGet": {"port": "http"}, "periodSeconds": 5},
                "securityContext": {"runAsUser": 1000, "privileged": False},
                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
            }],
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0}]},
    }


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    parts = path.replace("[", ".").replace("]", "").split(".")
    at: Any = out
    for p in parts[:-1]:
        at = at[int(p)] if p.isdigit() else at.setdefault(p, {})
    last = parts[-1]
    if last.isdigit():
        at[int(last)] = value
    else:
        at[last] = value
    return out


def test_a_clean_pod_passes() -> None:
    check_pod_types(_pod())
    parse_pod(_pod(), gates=GATES)


@pytest.mark.parametrize(("path", "value", "message"), [
    ("spec.nodeSelector", 5, "spec.nodeSelector: must be a mapping, got an integer"),
    ("spec.containers[0].image", {"a": 1}, "spec.containers[0].image: must be a string, got a mapping"),
    ("spec.containers[0].ports", 5, "spec.containers[0].ports: must be a list, got an integer"),
    ("spec.containers[0].env", "x", "spec.containers[0].env: must be a list, got a string"),
    ("spec.containers[0].command", 5, "spec.containers[0].command: must be a list, got an integer"),
    ("spec.containers[0].args", {"a": 1}, "spec.containers[0].args: must be a list, got a mapping"),
    ("spec.containers[0].command", ["a", 1], "spec.containers[0].command[1]: must be a string, got an integer"),
    ("spec.containers[0].securityContext", 7,
     "spec.containers[0].securityContext: must be a mapping, got an integer"),
    ("spec.containers[0].securityContext.runAsUser", "0",
     "spec.containers[0].securityContext.runAsUser: json: cannot unmarshal string into Go struct field "
     "SecurityContext.spec.containers.securityContext.runAsUser of type int64"),
    ("spec.containers[0].ports[0].containerPort", "80",
     "spec.containers[0].ports[0].containerPort: json: cannot unmarshal string into Go struct field "
     "ContainerPort.spec.containers.ports.containerPort of type int32"),
    ("spec.containers[0].livenessProbe.httpGet.port", True,
     "spec.containers[0].livenessProbe.httpGet.port: json: cannot unmarshal bool into Go struct field "
     "HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32"),
    ("spec.containers[0].env[0].valueFrom", [],
     "spec.containers[0].env[0].valueFrom: must be a mapping, got a list"),
    ("spec.volumes", 3, "spec.volumes: must be a list, got an integer"),
    ("spec.volumes[0].hostPath.path", 5, "spec.volumes[0].hostPath.path: must be a string, got an integer"),
    ("spec.volumes[1].projected.sources[0].serviceAccountToken.expirationSeconds", "1h",
     "spec.volumes[1].projected.sources[0].serviceAccountToken.expirationSeconds: json: cannot unmarshal string "
     "into Go struct field ServiceAccountTokenProjection.spec.volumes.VolumeSource.projected.sources."
     "serviceAccountToken.expirationSeconds of type int64"),
    ("spec.tolerations", "x", "spec.tolerations: must be a list, got a string"),
    ("spec.hostNetwork", "yes", "spec.hostNetwork: must be a boolean, got a string"),
    ("spec.priority", "high", "spec.priority: json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int32"),
    ("spec.priority", 1.5, "spec.priority: json: cannot unmarshal number 1.5 into Go struct field "
     "PodSpec.spec.priority of type int32"),
    ("spec.priority", 2**31,
     "spec.priority: json: cannot unmarshal number 2147483648 into Go struct field PodSpec.spec.priority "
     "of type int32"),
    ("spec.terminationGracePeriodSeconds", True,
     "spec.terminationGracePeriodSeconds: json: cannot unmarshal bool into Go struct field "
     "PodSpec.spec.terminationGracePeriodSeconds of type int64"),
    ("spec.nodeSelector.k", 1, "spec.nodeSelector[k]: must be a string, got an integer"),
    ("spec.affinity.nodeAffinity", "x", "spec.affinity.nodeAffinity: must be a mapping, got a string"),
    ("spec.ephemeralContainers", [{"name": "e", "image": 5}],
     "spec.ephemeralContainers[0].image: must be a string, got an integer"),
    ("metadata.generation", "2", "metadata.generation: json: cannot unmarshal string into Go struct field "
     "ObjectMeta.metadata.generation of type int64"),
    ("metadata.finalizers", "f", "metadata.finalizers: must be a list, got a string"),
    ("metadata.ownerReferences[0].controller", "yes",
     "metadata.ownerReferences[0].controller: must be a boolean, got a string"),
    ("metadata.creationTimestamp", 5, "metadata.creationTimestamp: json: cannot unmarshal number into Go struct "
     "field ObjectMeta.metadata.creationTimestamp of type string"),
    ("status.phase", 1, "status.phase: must be a string, got an integer"),
    ("status.conditions", {}, "status.conditions: must be a list, got a mapping"),
    ("status.containerStatuses[0].restartCount", "0",
     "status.containerStatuses[0].restartCount: json: cannot unmarshal string into Go struct field "
     "ContainerStatus.status.containerStatuses.restartCount of type int32"),
])
def test_a_wrong_type_at_a_known_field_is_refused(path: str, value: Any, message: str) -> None:
    doc = _set(_pod(), path, value)
    with pytest.raises(InputError) as got:
        parse_pod(doc, gates=GATES)
    assert f"{got.value.path}: {got.value.message}" == message


@pytest.mark.parametrize(("path", "value"), [
    ("spec.priority", 2.0),  # (YAML's 2.0: written 2 by the conversion to JSON)
    ("spec.priority", None),  # (a null: the zero value)
    ("spec.tolerations", None),
    ("spec.containers[0].command", ["a", None]),
    ("spec.containers[0].livenessProbe.httpGet.port", 8080),
    ("spec.containers[0].resources.limits.cpu", 2),
    ("spec.unknownField", {"x": 1}),  # (a field the schema does not know: left to the readers)
    ("spec.nodeSelector.k", None),
])
def test_what_the_decoder_takes_is_taken(path: str, value: Any) -> None:
    check_pod_types(_set(_pod(), path, value))


def test_a_json_number_with_an_exponent_is_no_integer() -> None:
    """Go's encoding/json refuses ``1e3`` for an int field (strconv.ParseInt
    of the number's text); podnuma's JSON reader keeps that text."""
    from podnuma.golang.jsonnumbers import json_float

    value = json_float("1e3")
    with pytest.raises(InputError, match="cannot unmarshal number 1e3 into Go struct field PodSpec.spec.priority"):
        check_pod_types(_set(_pod(), "spec.priority", value))


def test_the_agent_reads_the_same_schema() -> None:
    from podnuma.agent import validation, validation_container

    assert validation._G_POD is pod_schema.POD_TYPE
    assert validation_container._G_VOLUME_SOURCES is pod_schema.VOLUME_SOURCES
    every_source = pod_schema.POD_TYPE.fields["spec"][0].fields["volumes"][0].elem
    assert every_source is not None
    assert set(pod_schema.VOLUME_SOURCES) <= set(every_source.fields)


def test_compare_refuses_a_pod_file_with_a_wrong_type(tmp_path: Path) -> None:
    """The defect as reported: ``compare`` took the pod silently."""
    f = tmp_path / "f.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                 "    image: {a: 1}\n    resources: {limits: {cpu: \"2\", memory: 1Gi}}\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = subprocess.run([str(Path(sys.executable).with_name("podnuma")), "compare", str(f)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{f}: spec.containers[0].image: must be a string, got a mapping" in lines[0]
