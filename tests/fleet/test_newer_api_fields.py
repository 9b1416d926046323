"""Pods served by a newer API server, with fields v1.37.2 does not know.

A pods dump is what the API server served; a newer one's types have
fields v1.37.2 lacks, anywhere in a pod. The kubelet reads its pods with
client-go's lenient decoding, which drops an unknown field at any depth,
so it runs the same pods: ``podnuma fleet analyze`` replays them as it
replays them without the field (the same pods replayed, the same
answer), wherever the field is, in the structs the fleet keeps of a pod
(an owner reference, a container's ``resources`` and its resource
claims, the pod-level ``resources``) as elsewhere: the whole report, every
node's figures and the what-ifs' (a pod-level rewrite, a restart), is the
one for the pods without the field, and the scenarios ``--as-scenario``
writes hold the pods without it, so that ``podnuma simulate`` (strict)
replays them to the report's figures. A pod a user is about
to apply (``podnuma advise``: the API server's strict decoding) still
has its unknown field refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.errors import InputError

from .figures import is_static, report_figures


def _podnuma(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podnuma.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False, cwd=cwd)


def _analyze(fleet: Path, *options: str, what_if: str = "pod-level") -> dict[str, Any]:
    """The whole report on ``fleet`` (every node's figures, the what-if's
    included), read from the directory's parent so that the sources it
    names are the same for two fleets of one name."""
    proc = _podnuma("fleet", "analyze", fleet.name, "--what-if", what_if, *options, "-o", "json",
                    cwd=fleet.parent)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


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
    # (beside the pod-level resources a pod has: the same pod once dropped)
    pod["spec"].setdefault("resources", {})["zzNewerField"] = {"cpu": "1"}


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
    proc = _podnuma("fleet", "generate", "--nodes", "2", "--pods-per-node", "8", "--output-dir", str(fleet))
    assert proc.returncode == 0, proc.stderr
    clean = _analyze(fleet)
    assert clean["fleet"]["podsReplayed"] > 0 and len(clean["nodes"]) == 2
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


ORACLE = os.environ.get("PODNUMA_ORACLE", "")


@pytest.mark.parametrize("place", ["a container's resources", "an owner reference", "the spec"])
def test_the_scenarios_written_for_pods_with_a_newer_field_simulate_to_the_report(
    generated: tuple[Path, dict[str, Any]], tmp_path: Path, place: str
) -> None:
    """``fleet analyze --as-scenario`` writes each pod as the replay read
    it, without the field v1.37.2 lacks (in the metadata too, which a
    pod-level what-if's rewrite keeps): ``podnuma simulate``, which decodes
    strictly as the API server does, replays every file written to the
    report's figures for that node and run, and the files are those written
    for the same pods without the field."""
    source, _ = generated
    fleet = tmp_path / "fleet"
    subprocess.run(["cp", "-r", str(source), str(fleet)], check=True)
    dump = fleet / "pods" / "pods-0000.json"
    doc = json.loads(dump.read_text())
    for pod in doc["items"]:
        NEWER[place](pod)
    dump.write_text(json.dumps(doc))
    report = _analyze(fleet, "--as-scenario", str(tmp_path / "newer"))
    clean = _analyze(source, "--as-scenario", str(tmp_path / "clean"))
    assert report == clean
    assert len(report["notRewritten"]["pod-level"]) < report["fleet"]["podsReplayed"]  # (a pod rewritten)
    written = sorted(p.name for p in (tmp_path / "newer").iterdir())
    assert written == sorted(p.name for p in (tmp_path / "clean").iterdir())
    # (each node: as running, the what-if; and a density figure's replay beside each, the same bytes)
    assert len([w for w in written if ".density-" not in w]) == 2 * len(report["nodes"])
    for name in (w for w in written if ".density-" in w):
        assert (tmp_path / "newer" / name).read_bytes() == (tmp_path / "clean" / name).read_bytes(), name
    for node in report["nodes"]:
        runs = {"": node["baseline"], ".whatif-1": node["whatIfs"]["pod-level"]}
        for suffix, run in runs.items():
            path = tmp_path / "newer" / f"{node['name']}{suffix}.yaml"
            assert path.read_bytes() == (tmp_path / "clean" / path.name).read_bytes()
            sim = _podnuma("simulate", str(path), "-o", "json")
            assert sim.returncode == 0, sim.stderr[-2000:]
            got = report_figures(json.loads(sim.stdout), is_static(yaml.safe_load(path.read_text())))
            assert got == {k: (len(run[k]) if k == "rejected" else run[k]) for k in got}, path.name
            if ORACLE:  # (the kubelet oracle decodes a scenario's pods strictly too)
                from tests.oracle.harness import compare, run_oracle, run_podnuma

                (theirs,) = run_oracle(ORACLE, [path])
                assert theirs.doc is not None, path.name
                assert compare(run_podnuma(path), theirs, yaml.safe_load(path.read_text())) == [], path.name


@pytest.mark.parametrize("place", ["a container's resources", "an owner reference"])
def test_the_restart_of_pods_with_a_newer_field_is_replayed(
    generated: tuple[Path, dict[str, Any]], tmp_path: Path, place: str
) -> None:
    """A ``restart`` what-if re-admits the pods the run admitted, as the
    replay read them (without the field): the same restart figures as for
    the pods without it, none "not replayed"."""
    source, _ = generated
    fleet = tmp_path / "fleet"
    subprocess.run(["cp", "-r", str(source), str(fleet)], check=True)
    dump = fleet / "pods" / "pods-0000.json"
    doc = json.loads(dump.read_text())
    for pod in doc["items"]:
        NEWER[place](pod)
    dump.write_text(json.dumps(doc))
    report = _analyze(fleet, what_if="restart")
    assert report == _analyze(source, what_if="restart")
    for node in report["nodes"]:
        restart = node["whatIfs"]["restart"]["restart"]
        assert "error" not in restart and restart, node["name"]


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
