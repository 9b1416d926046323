"""The copies of a pod one dump lists twice (same namespace, name and uid:
a damaged dump) are compared as the copies of a pod two dumps hold: a
warning names the pod and the fields its copies differ in, the copy
replayed (the first listed) and the other; copies the replay reads the
same (their phase aside) say nothing. Whatever reads the dump (its index,
the general reader, its pieces, one process, ``--workers 2`` or
``--dask local:2``), the report is the same."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import podnuma.fleet.inputs as inputs_mod

from .conftest import need
from .onedump import analyze, one_dump_fleet, pods_dump
from .test_pieces import _Mapper, _report, small_pieces  # noqa: F401 (fixture)

COPIES = "copies that differ"


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    return one_dump_fleet(tmp_path)


def _listed_twice(fleet: Path, change: Any = None, *, at_end: bool = True) -> tuple[Path, dict[str, Any]]:
    """The fleet's dump with its first bound pod listed again (at its end,
    or right after it), the copy changed by ``change``."""
    path, doc = pods_dump(fleet)
    i, pod = next((i, p) for i, p in enumerate(doc["items"]) if p["spec"].get("nodeName")
                  and p["spec"]["containers"][0].get("resources", {}).get("requests"))
    again = copy.deepcopy(pod)
    if change is not None:
        change(again)
    doc["items"].insert(len(doc["items"]) if at_end else i + 1, again)
    path.write_text(json.dumps(doc, indent=1))
    return path, pod


def _more_memory(pod: dict[str, Any]) -> None:
    pod["spec"]["containers"][0]["resources"]["requests"]["memory"] = "7Gi"


def _said(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in report["issues"] if COPIES in i["message"] or "dumps whose copies" in i["message"]]


@pytest.mark.parametrize("indexed", [True, False])
def test_a_pod_listed_twice_with_other_resources_is_said(
    fleet: Path, monkeypatch: pytest.MonkeyPatch, indexed: bool
) -> None:
    """The later copy asks more memory: a warning on the pod's node names
    the pod, the field and the dump (the copy replayed: the first listed),
    read by the index or by the general reader alike; the figures are those
    of the first copy."""
    if not indexed:
        monkeypatch.setattr(inputs_mod, "index_pod_file", lambda *_: None)
    before = analyze(str(fleet))
    path, pod = _listed_twice(fleet, _more_memory)
    report = analyze(str(fleet))
    (said,) = _said(report)
    meta = pod["metadata"]
    assert said["severity"] == "warning" and said["node"] == pod["spec"]["nodeName"]
    assert said["file"] == str(path)
    assert said["message"] == (
        f"pod {meta['namespace']}/{meta['name']} (uid {meta['uid']}) has 2 copies that differ "
        "(spec.containers[0].resources.requests.memory): the copy of "
        f"{path} is replayed (the first read), not that listed again in {path}; a dump that lists a pod "
        "twice is damaged (`kubectl get` lists each pod once) (the figures are those of the copy replayed)")
    assert [n["baseline"] for n in report["nodes"]] == [n["baseline"] for n in before["nodes"]]
    assert any("listed twice in this dump" in i["message"] for i in report["issues"])


def test_the_first_listed_copy_is_the_one_replayed(fleet: Path) -> None:
    """Listed right after itself, the copy started earlier (and asking
    more memory): the first listed copy is still the one replayed (the
    figures are those without the copy), the warning names both fields."""
    before = analyze(str(fleet))

    def earlier(pod: dict[str, Any]) -> None:
        _more_memory(pod)
        pod["status"]["startTime"] = "2000-01-01T00:00:00Z"

    _, pod = _listed_twice(fleet, earlier, at_end=False)
    out = fleet.parent / "scenarios"
    report = analyze(str(fleet), "--as-scenario", str(out))
    steps = yaml.safe_load((out / f"{pod['spec']['nodeName']}.yaml").read_text())["steps"]
    (added,) = [s["addPod"] for s in steps if "addPod" in s and s["addPod"]["metadata"]["name"] == pod["metadata"]["name"]]
    assert added["spec"]["containers"][0]["resources"] == pod["spec"]["containers"][0]["resources"]
    assert added["status"]["startTime"] == pod["status"]["startTime"]
    (said,) = _said(report)
    assert said["message"].startswith(f"pod {pod['metadata']['namespace']}/{pod['metadata']['name']} ")
    assert "(spec.containers[0].resources.requests.memory, status.startTime)" in said["message"]
    assert [n["baseline"] for n in report["nodes"]] == [n["baseline"] for n in before["nodes"]]


def test_copies_the_replay_reads_the_same_say_nothing(fleet: Path) -> None:
    """A copy alike but for what the replay does not read (an annotation of
    no meaning to it is read; a container image is not), or for its
    phase: no warning, only the dump's own one."""
    def image(pod: dict[str, Any]) -> None:
        pod["spec"]["containers"][0]["image"] = "other:1"
        pod["status"]["phase"] = "Pending"

    _listed_twice(fleet, image)
    report = analyze(str(fleet))
    assert _said(report) == []
    assert any("listed twice in this dump" in i["message"] for i in report["issues"])


def test_the_copies_in_a_dump_and_in_another_dump_are_said_together(fleet: Path) -> None:
    """A pod listed twice by one dump and held by another: one warning
    names the copy replayed (the first dump's, first listed) and both
    others."""
    path, pod = _listed_twice(fleet, _more_memory)
    other = path.parent / "zz-more.json"
    third = copy.deepcopy(pod)
    third["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    other.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [third]}))
    (said,) = _said(analyze(str(fleet)))
    assert "has 3 copies that differ" in said["message"]
    assert f"not that listed again in {path}, that of {other}" in said["message"]


def test_the_pieces_of_a_dump_give_the_report_of_one_process(
    fleet: Path, small_pieces: None  # noqa: F811 (fixture)
) -> None:
    """A dump cut into pieces (as a cluster reads it) gives the report of
    one process, the copies in two pieces compared as well."""
    _listed_twice(fleet, _more_memory)
    serial = _report(fleet)
    assert len(_said(json.loads(serial))) == 1
    assert _report(fleet, _Mapper()) == serial


def test_every_mode_gives_the_same_bytes(fleet: Path, tmp_path: Path) -> None:
    """One process, ``--workers 2`` and ``--dask local:2``: the same
    report, with the warning."""
    need("distributed")
    _listed_twice(fleet, _more_memory)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    got = []
    for mode in ([], ["--workers", "2"], ["--dask", "local:2"]):
        p = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(fleet), "-o", "json",
                            *mode], env=env, capture_output=True, timeout=600, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        got.append(p.stdout)
    assert got[1] == got[0] and got[2] == got[0]
    assert len(_said(json.loads(got[0]))) == 1
