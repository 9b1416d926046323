"""The fleet's parse memo (keyed on a pod's spec) judges every pod by
itself: a field outside the key (a time, the identity, an owner
reference, the node, the phase) that the API server's decoding refuses
refuses that pod alone, with its own message, whatever pod came first and
whether the nodes are replayed in one process or by workers; its
siblings are replayed. Two pods of the recorded cluster share one spec:
``query-engine-58d4c9f7b6-k7m2n`` (node ``ip-10-20-1-17``) and ``-w2q8f``
(node ``ip-10-20-2-41``); the first comes first in the dump.

The message is the one :func:`podnuma.api.pod_manifest.parse_pod` gives
the pod alone (whose decoding is checked against the kubelet oracle's in
``tests/oracle/test_pod_decode_differential.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.inputs.documents import load_json

FIRST, SECOND = "query-engine-58d4c9f7b6-k7m2n", "query-engine-58d4c9f7b6-w2q8f"
MARK = "@@VALUE@@"
BASELINE_REPLAYED = 35

#: field path -> JSON text put there
CASES: dict[str, tuple[tuple[Any, ...], str]] = {
    "startTime-no-zone": (("status", "startTime"), '"2026-12-03T10:04:43"'),
    "creationTimestamp-word": (("metadata", "creationTimestamp"), '"yesterday"'),
    "creationTimestamp-number": (("metadata", "creationTimestamp"), "1e400"),
    "startTime-number": (("status", "startTime"), "1e400"),
    "uid-number": (("metadata", "uid"), "1e400"),
    "label-number": (("metadata", "labels", "app"), "1e400"),
    "generateName-number": (("metadata", "generateName"), "1e400"),
    "qosClass-number": (("status", "qosClass"), "1e400"),
    "owner-apiVersion-number": (("metadata", "ownerReferences", 0, "apiVersion"), "1e400"),
    "owner-blockOwnerDeletion-string": (("metadata", "ownerReferences", 0, "blockOwnerDeletion"), '"yes"'),
}


def _fleet(tmp_path: Path, example: Path, pod: str, where: tuple[Any, ...], value: str) -> tuple[Path, str]:
    """The recorded cluster with ``value`` (JSON text) at ``where`` in
    ``pod``; and that pod's JSON text."""
    doc = json.loads((example / "pods.json").read_text())
    item = next(p for p in doc["items"] if p["metadata"]["name"] == pod)
    at = item
    for k in where[:-1]:
        at = at[k]
    at[where[-1]] = MARK
    (example / "pods.json").write_text(json.dumps(doc, indent=1).replace(json.dumps(MARK), value))
    return example, json.dumps(item).replace(json.dumps(MARK), value)


def _alone(pod_text: str) -> InputError:
    """parse_pod's refusal of the pod by itself."""
    with pytest.raises(InputError) as e:
        parse_pod(load_json(pod_text, name="pod.json"), gates=FeatureGates.defaults())
    return e.value


def _analyze(fleet: Path, workers: list[str]) -> dict[str, Any]:
    r = CliRunner().invoke(cli, ["fleet", "analyze", str(fleet), "-o", "json", *workers])
    assert r.exit_code == 0, r.output
    report: dict[str, Any] = json.loads(r.stdout)
    return report


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one-process", "workers"])
@pytest.mark.parametrize("pod", [FIRST, SECOND], ids=["first", "second"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_pod_refused_for_a_field_outside_the_key_is_refused_alone(
    tmp_path: Path, example: Path, case: str, pod: str, workers: list[str]
) -> None:
    where, value = CASES[case]
    fleet, text = _fleet(tmp_path, example, pod, where, value)
    err = _alone(text)
    report = _analyze(fleet, workers)
    refused = [i for i in report["issues"] if "query-engine" in i["message"]]
    assert [(i["message"], i["path"]) for i in refused] == [
        (f"pod analytics/{pod} not replayed: {err.message}", err.path)]
    assert report["fleet"]["podsReplayed"] == BASELINE_REPLAYED - 1


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]], ids=["one-process", "workers"])
def test_the_siblings_of_a_clean_spec_still_share_its_parse(example: Path, workers: list[str]) -> None:
    report = _analyze(example, workers)
    assert report["fleet"]["podsReplayed"] == BASELINE_REPLAYED
    assert not [i for i in report["issues"] if "query-engine" in i["message"]]


@pytest.mark.parametrize("where,value,said", [
    (("spec", "nodeName"), "1e400", "items[{i}].spec.nodeName: must be a string, got a number"),
    (("spec", "nodeName"), "5", "items[{i}].spec.nodeName: must be a string, got an integer"),
    (("status", "phase"), "1e400", "items[{i}].status.phase: must be a string, got a number: the apiserver "
                                   "serves no such Pod (a damaged dump); the pod is not read"),
    (("metadata", "name"), "1e400", "items[{i}].metadata.name: must be a string, got a number: the apiserver "
                                    "serves no such Pod (a damaged dump); the pod is not read"),
    (("metadata", "ownerReferences", 0, "kind"), "1e400",
     "items[{i}].metadata.ownerReferences[0].kind: must be a string, got a number: the apiserver serves no "
     "such Pod (a damaged dump); the pod is not read"),
], ids=["nodeName-1e400", "nodeName-5", "phase-1e400", "name-1e400", "ownerKind-1e400"])
def test_a_number_past_the_float_range_is_a_number_to_the_dump_reader(
    tmp_path: Path, example: Path, where: tuple[Any, ...], value: str, said: str
) -> None:
    """As ``5`` is: the pod is not read (not bound to a node ``1e400``, not
    skipped as an inactive phase)."""
    index = [p["metadata"]["name"] for p in json.loads((example / "pods.json").read_text())["items"]].index(SECOND)
    fleet, _ = _fleet(tmp_path, example, SECOND, where, value)
    report = _analyze(fleet, [])
    path, message = said.format(i=index).split(": ", 1)
    assert [(i["path"], i["message"]) for i in report["issues"] if i["path"] == path] == [(path, message)]
    assert "bound to node 1e400" not in json.dumps(report)
    assert report["fleet"]["podsReplayed"] == BASELINE_REPLAYED - 1


def test_a_pod_named_by_a_number_is_not_named_by_its_text() -> None:
    from podnuma.fleet.replay import _pod_ref
    from podnuma.golang.jsonnumbers import JSONNumberText

    assert _pod_ref({"metadata": {"name": JSONNumberText("1e400"), "namespace": "a"}}) == \
        "a pod in namespace a whose name is a number"
    assert _pod_ref({"metadata": {"name": "x", "namespace": JSONNumberText("1e400")}}) == \
        "pod x (its namespace is a number)"
    assert _pod_ref({"metadata": {"name": "x"}}) == "pod default/x"


def test_the_memo_still_serves_the_pods_that_are_fine(
    tmp_path: Path, example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One process: a pod refused for a field outside the key costs its
    own parse, and no more (its sibling's parse is memoised as before)."""
    import podnuma.fleet.replay as replay

    calls: list[str] = []

    def counted(doc: Any, **kw: Any) -> Any:
        calls.append(doc["metadata"]["name"])
        return parse_pod(doc, **kw)

    monkeypatch.setattr(replay, "parse_pod", counted)
    monkeypatch.setattr(replay, "_PROCESS_CACHE", replay.ReplayCache())  # (nothing memoised before)
    _analyze(example, [])
    clean = list(calls)
    assert clean.count(FIRST) + clean.count(SECOND) == 1  # (one spec: one parse)
    calls.clear()
    monkeypatch.setattr(replay, "_PROCESS_CACHE", replay.ReplayCache())
    where, value = CASES["startTime-no-zone"]
    fleet, _ = _fleet(tmp_path, example, FIRST, where, value)
    _analyze(fleet, [])
    assert calls.count(FIRST) == 1 and calls.count(SECOND) == 1
    assert len(calls) == len(clean) + 1
