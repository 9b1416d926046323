"""podnuma's pod validation and defaulting against the API server's own
code (``kubelet-oracle validate``: v1 decoding and defaults, the pod
registry's PrepareForCreate and ValidatePodCreate of v1.37.2).

``PODNUMA_VALIDATION_COUNT`` pods (default 2,500) from ``podgen``, seed
``PODNUMA_ORACLE_SEED``: about half of them carry deliberate faults in the
fields podnuma reads. Each must get the same verdict from both, and:
accepted pods the same defaulted requests, limits, pod-level resources and
QoS class; refused pods a podnuma error that is one of the API server's
field errors word for word (see ``validation.compare_verdicts``).
"""

from __future__ import annotations

import collections
import copy
from typing import Any

import pytest

from tests.oracle import podgen
from tests.oracle.harness import env_int, random_settings
from tests.oracle.validation import compare_verdicts, validate_oracle, validate_podnuma

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_VALIDATION_COUNT", 2500)


def _verdicts(binary: str, items: list[tuple[dict[str, Any], str]]) -> list[dict[str, Any]]:
    by_gates: dict[str, list[int]] = collections.defaultdict(list)
    for i, (_, gates) in enumerate(items):
        by_gates[gates].append(i)
    out: dict[int, dict[str, Any]] = {}
    for gates, idx in by_gates.items():
        answers = validate_oracle(binary, [items[i][0] for i in idx], podgen.GATE_SETS[gates])
        out.update(zip(idx, answers, strict=True))
    return [out[i] for i in range(len(items))]


def test_pod_validation_matches_the_api_server(oracle_binary: str) -> None:
    generated = podgen.pods(SEED, COUNT)
    theirs = _verdicts(oracle_binary, [(doc, gates) for doc, gates, _ in generated])
    mismatches = []
    counts: collections.Counter[str] = collections.Counter()
    faults_seen: set[str] = set()
    for (doc, gates, faults), answer in zip(generated, theirs, strict=True):
        mine = validate_podnuma(doc, podgen.GATE_SETS[gates])
        counts["accepted" if answer["accepted"] else "decode" if answer.get("decode") else "refused"] += 1
        if not answer["accepted"]:
            faults_seen.update(faults)
        diffs = compare_verdicts(mine, answer, podgen.GATE_SETS[gates])
        if diffs:
            mismatches.append((doc["metadata"].get("name"), gates, faults, diffs))
    print(f"pod validation: {len(generated)} pods (seed {SEED}): {counts['accepted']} accepted, "
          f"{counts['refused']} refused, {counts['decode']} undecodable; {len(mismatches)} differences")
    assert not mismatches, "\n".join(f"{n} [{g}] {f}: {d[0]}" for n, g, f, d in mismatches[:20])
    # the generator reaches every kind of fault it knows (so the audit covers them)
    assert faults_seen == set(podgen.FAULTS), sorted(set(podgen.FAULTS) - faults_seen)
    assert counts["accepted"] > len(generated) // 3 and counts["refused"] > len(generated) // 3


#: Pods the API server refuses for fields podnuma does not read, which
#: podnuma therefore accepts: the scenario contract asks only for the
#: fields the resource managers read (the oracle gives an image-less
#: scenario container a placeholder image for the same reason).
NOT_READ: list[tuple[str, Any, str]] = [
    ("no image", lambda d: d["spec"]["containers"][0].pop("image"),
     "spec.containers[0].image: Required value"),
    ("empty image", lambda d: d["spec"]["containers"][0].__setitem__("image", ""),
     "spec.containers[0].image: Required value"),
]


@pytest.mark.parametrize("name,mutate,error", NOT_READ, ids=[n for n, _, _ in NOT_READ])
def test_fields_podnuma_does_not_read(oracle_binary: str, name: str, mutate: Any, error: str) -> None:
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "app:1", "resources": {"limits": {"cpu": "1"}}}]},
    }
    assert validate_oracle(oracle_binary, [doc], {})[0]["accepted"]
    bad = copy.deepcopy(doc)
    mutate(bad)
    answer = validate_oracle(oracle_binary, [bad], {})[0]
    assert not answer["accepted"]
    assert [e["error"] for e in answer["errors"]] == [error]
    assert not validate_podnuma(bad, {}).error


def test_ephemeral_containers_are_refused_on_create_only(oracle_binary: str) -> None:
    """``ValidatePodCreate`` refuses ephemeral containers (they are added
    through the ephemeralcontainers subresource), and so does podnuma on
    the API server's path; a scenario's pod (the oracle's scenario path
    creates the pod, then adds them) and a pod an API server serves keep
    them."""
    from podnuma.api.featuregates import FeatureGates
    from podnuma.api.pod_manifest import parse_pod

    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "app:1"}],
                 "ephemeralContainers": [{"name": "debug", "image": "busybox"}]},
    }
    answer = validate_oracle(oracle_binary, [doc], {})[0]
    assert [e["error"] for e in answer["errors"]] == ["spec.ephemeralContainers: Forbidden: cannot be set on create"]
    assert validate_podnuma(doc, {}).error == answer["errors"][0]["error"]
    gates = FeatureGates.from_mapping({})
    for kw in ({"unknown_in_order": True}, {"lenient": True}):
        assert parse_pod(copy.deepcopy(doc), gates=gates, **kw).ephemeral_containers == ("debug",)
