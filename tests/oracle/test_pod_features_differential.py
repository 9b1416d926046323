"""The kubelet's pod features admit handler (lifecycle
``NewPodFeaturesAdmitHandler``) against the real one: pods with
``spec.resources`` reach a kubelet whose ``PodLevelResources`` gate is off
when the API server they went through has it on (the scenario's
``apiServer`` section: its own gates, v1.37 defaults). The kubelet runs the
resource-allocation and predicate handlers first, so such a pod may get
CPUs and memory before the pod features handler rejects it
(``PodLevelResourcesNotSupported``, "PodLevelResources feature gate is
disabled"); what it got waits for the next removeStaleState.

Every example scenario and seeded random scenarios are turned into such
scenarios (the kubelet's pod-level gates off, an API server with its
defaults) and compared step by step with ``kubelet-oracle simulate``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import generate
from tests.oracle.harness import env_int, random_settings, run_both, write_scenario
from tests.oracle.test_differential import EXAMPLES, ROOT, _load

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_ORACLE_POD_FEATURES_COUNT", 200)

#: The kubelet's gates that must be off with PodLevelResources (they depend
#: on it: the kubelet would not start).
GATES_OFF = {
    "PodLevelResources": False,
    "PodLevelResourceManagers": False,
    "PodLevelResourcesFixDefaulting": False,
    "PodLevelResourcesFixKubeletQOSClass": False,
    "InPlacePodLevelResourcesVerticalScaling": False,
}


def gates_off_behind_api_server(doc: Any) -> dict[str, Any]:
    """The scenario on a kubelet with the pod-level gates off, its pods
    created through an API server with its default gates."""
    out = copy.deepcopy(dict(doc))
    kc = out.get("kubeletConfig")
    if not isinstance(kc, dict):
        kc = {}
    kc = dict(kc)
    gates = dict(kc.get("featureGates") or {})
    gates.update(GATES_OFF)
    kc["featureGates"] = gates
    out.pop("kubeletConfigFile", None)
    out["kubeletConfig"] = kc
    out["apiServer"] = {}
    return out


def _rejected_by_features(mismatches: list[Any], items: list[tuple[str, dict[str, Any]]], tmp: Path) -> int:
    from tests.oracle.harness import run_podnuma

    count = 0
    for i, (_, doc) in enumerate(items):
        out = run_podnuma(write_scenario(doc, tmp / f"count-{i}.json"))
        for step in (out.doc or {}).get("steps", []):
            if step.get("reason") == "PodLevelResourcesNotSupported":
                assert step["message"] == "Pod was rejected: PodLevelResources feature gate is disabled"
                count += 1
    return count


def _check(binary: str, items: list[tuple[str, dict[str, Any]]], tmp: Path, label: str) -> None:
    stats: dict[str, int] = {}
    mismatches = run_both(binary, items, tmp, bytes_every=5, stats=stats)
    rejected = _rejected_by_features(mismatches, items, tmp)
    print(f"pod features, {label}: {len(items)} scenarios, {stats}, "
          f"{rejected} pods rejected by the pod features handler, {len(mismatches)} differences")
    if mismatches:
        lines = [f"{name}:\n  " + "\n  ".join(d[:10]) for name, _, d in mismatches[:8]]
        pytest.fail(f"{len(mismatches)} of {len(items)} differ from the kubelet:\n" + "\n".join(lines), pytrace=False)
    assert rejected > 0, "no pod met the pod features handler"


def test_examples(oracle_binary: str, tmp_path: Path) -> None:
    items = [(f"{p.relative_to(ROOT)} [gates off, API server on]", gates_off_behind_api_server(_load(p)))
             for p in EXAMPLES]
    _check(oracle_binary, items, tmp_path, "examples")


def test_random(oracle_binary: str, tmp_path: Path) -> None:
    scenarios = generate.scenarios(SEED + 25, COUNT, tmp_path)
    items = [(f"{name} [gates off, API server on]", gates_off_behind_api_server(doc)) for name, doc in scenarios]
    _check(oracle_binary, items, tmp_path, f"seed {SEED + 25}")


def test_message_and_late_rejection(oracle_binary: str, tmp_path: Path) -> None:
    """A Guaranteed pod-level pod gets its exclusive CPU from the CPU
    manager, then the pod features handler rejects it; the next pod's
    allocation collects the stale CPU first and is given it."""
    doc = gates_off_behind_api_server({
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 2,
                               "threadsPerCore": 1, "memoryPerNumaNode": "4Gi"}},
        "kubeletConfig": {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0"},
        "steps": [
            {"addPod": {"metadata": {"name": "plr", "namespace": "default"}, "spec": {
                "resources": {"limits": {"cpu": "1", "memory": "256Mi"}},
                "containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}]}}},
            {"addPod": {"metadata": {"name": "plain", "namespace": "default"}, "spec": {
                "containers": [{"name": "app", "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}}]}}},
        ],
    })
    stats: dict[str, int] = {}
    assert run_both(oracle_binary, [("late", doc)], tmp_path, bytes_every=1, stats=stats) == []
    from tests.oracle.harness import run_podnuma

    out = run_podnuma(write_scenario(doc, tmp_path / "late.json"))
    assert out.doc is not None
    first, second = out.doc["steps"]
    assert (first["admitted"], first["reason"], first["message"]) == (
        False, "PodLevelResourcesNotSupported", "Pod was rejected: PodLevelResources feature gate is disabled")
    assert second["admitted"] is True and second["containers"][0]["cpus"] == "1"
    # without the apiServer section the API server drops spec.resources: admitted
    plain = copy.deepcopy(doc)
    del plain["apiServer"]
    out = run_podnuma(write_scenario(plain, tmp_path / "plain.json"))
    assert out.doc is not None and out.doc["steps"][0]["admitted"] is True
