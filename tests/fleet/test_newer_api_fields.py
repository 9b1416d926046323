"""Pods served by a newer API server, with fields v1.37.2 does not know.

A pods dump is what the API server served; a newer one's types have
fields v1.37.2 lacks, anywhere in a pod. The kubelet reads its pods with
client-go's lenient decoding, which drops an unknown field at any depth,
so it runs the same pods: ``podnuma fleet analyze`` replays them as it
replays them without the field (the same pods replayed, the same
answer), wherever the field is, in the structs the fleet keeps of a pod
(an owner reference, a container's ``resources`` and its resource
claims, the pod-level ``resources``) as elsewhere. A pod a user is about
to apply (``podnuma advise``: the API server's strict decoding) still
has its unknown field refused."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.errors import InputError


def _podnuma(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False)


def _analyze(fleet: Path) -> dict[str, Any]:
    proc = _podnuma("fleet", "analyze", str(fleet), "-o", "json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    fleet_doc: dict[str, Any] = json.loads(proc.stdout)["fleet"]
    return fleet_doc


def _owner(pod: dict[str, Any]) -> None:
    refs = pod["metadata"].setdefault("ownerReferences", [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u"}])
    refs[0]["zzNewerField"] = True


def _claim(pod: dict[str, Any]) -> None:
    pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "gpu", "zzNewerField": 1}]


def _resources(pod: dict[str, Any]) -> None:
    pod["spec"]["containers"][0].setdefault("resources", {})["zzNewerField"] = 1


def _limits_beside(pod: dict[str, Any]) -> None:
    pod["spec"]["containers"][0].setdefault("resources", {})["zzNewerField"] = {"limits": {"cpu": "64"}}


def _pod_resources(pod: dict[str, Any]) -> None:
    pod["spec"]["resources"] = {"zzNewerField": {"cpu": "1"}}


def _spec(pod: dict[str, Any]) -> None:
    pod["spec"]["zzNewerField"] = [{"a": 1}]


def _status(pod: dict[str, Any]) -> None:
    pod.setdefault("status", {})["zzNewerField"] = "x"


#: where a newer API server's field lands in a pod
NEWER: dict[str, Callable[[dict[str, Any]], None]] = {
    "an owner reference": _owner, "a resource claim": _claim, "a container's resources": _resources,
    "a container's resources, a mapping": _limits_beside, "the pod-level resources": _pod_resources,
    "the spec": _spec, "the status": _status,
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    fleet = tmp_path_factory.mktemp("newer") / "fleet"
    proc = _podnuma("fleet", "generate", "--nodes", "2", "--pods-per-node", "3", "--output-dir", str(fleet))
    assert proc.returncode == 0, proc.stderr
    clean = _analyze(fleet)
    assert clean["podsReplayed"] > 0
    return fleet, clean


@pytest.mark.parametrize("place", sorted(NEWER))
def test_a_fleet_pod_with_a_newer_api_servers_field_is_replayed(
    generated: tuple[Path, dict[str, Any]], tmp_path: Path, place: str
) -> None:
    source, clean = generated
    fleet = tmp_path / "fleet"
    subprocess.run(["cp", "-r", str(source), str(fleet)], check=True)
    dump = fleet / "pods" / "pods-0000.json"
    doc = json.loads(dump.read_text())
    for pod in doc["items"]:
        NEWER[place](pod)
    dump.write_text(json.dumps(doc))
    # (client-go drops the unknown field: the kubelet runs the same pods)
    assert _analyze(fleet) == clean


POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w", "namespace": "x"},
                       "spec": {"containers": [{"name": "a", "image": "x",
                                                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]}}


def _without(value: Any) -> Any:
    """``value`` without the key ``zzNewerField``, at any depth."""
    if isinstance(value, dict):
        return {k: _without(v) for k, v in value.items() if k != "zzNewerField"}
    if isinstance(value, list):
        return [_without(v) for v in value]
    return value


@pytest.mark.parametrize("place", sorted(NEWER))
def test_leniently_the_unknown_field_is_dropped_strictly_refused(place: str) -> None:
    gates = FeatureGates.defaults()
    pod = json.loads(json.dumps(POD))
    NEWER[place](pod)
    before = json.dumps(pod)
    # (lenient: the pod as without the field; the input left as it was)
    assert parse_pod(pod, gates=gates, lenient=True) == parse_pod(_without(pod), gates=gates)
    assert json.dumps(pod) == before
    # (the API server's strict decoding: advise, compare)
    with pytest.raises(InputError, match="zzNewerField"):
        parse_pod(pod, gates=gates)
