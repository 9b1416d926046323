"""podnuma's PodResources server against the kubelet's own
(``kubelet-oracle podresources``), message by message after every step:
every example scenario and seeded random scenarios (``PODNUMA_ORACLE_SEED``;
``PODNUMA_ORACLE_PODRESOURCES_COUNT``, default 100). See
tests/oracle/podresources_harness.py for what is compared and which orders
are made canonical."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.oracle import generate
from tests.oracle.harness import env_int, random_settings, write_scenario
from tests.oracle.podresources_harness import podresources_differences
from tests.oracle.test_differential import EXAMPLES, ROOT, _load

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_ORACLE_PODRESOURCES_COUNT", 100)
CHUNK = 50


def _fail(diffs: list[tuple[str, list[str]]], total: int) -> None:
    lines = [f"{name}:\n  " + "\n  ".join(d[:8]) for name, d in diffs[:10]]
    pytest.fail(f"{len(diffs)} of {total} replays answer differently from the kubelet's server:\n" + "\n".join(lines),
                pytrace=False)  # fmt: skip


def test_examples(oracle_binary: str) -> None:
    items = [(str(p.relative_to(ROOT)), _load(p), p) for p in EXAMPLES]
    stats: dict[str, int] = {}
    diffs = podresources_differences(oracle_binary, items, stats)
    print(f"podresources, examples: {stats}")
    if diffs:
        _fail(diffs, stats.get("replayed", 0))
    assert stats.get("replayed", 0) + stats.get("failed_alike", 0) == len(EXAMPLES), stats


@pytest.mark.parametrize("chunk", range((COUNT + CHUNK - 1) // CHUNK), ids=lambda c: f"seed{SEED}-chunk{c}")
def test_random(chunk: int, oracle_binary: str, tmp_path: Path) -> None:
    start = chunk * CHUNK
    n = min(CHUNK, COUNT - start)
    scenarios = generate.scenarios(SEED, n, tmp_path, start=start)
    items = [(name, doc, write_scenario(doc, tmp_path / f"{i:05d}.json")) for i, (name, doc) in enumerate(scenarios)]
    stats: dict[str, int] = {}
    diffs = podresources_differences(oracle_binary, items, stats)
    print(f"podresources, seed {SEED}, scenarios {start}..{start + n - 1}: {stats}")
    if diffs:
        _fail(diffs, stats.get("replayed", 0))
    assert stats.get("replayed", 0) >= n // 2, stats


def test_list_every_known_pod_with_the_gate_off(oracle_binary: str, tmp_path: Path) -> None:
    """``KubeletPodResourcesListUseActivePods: false`` (deprecated, on by
    default): ``List`` answers with every pod the pod manager knows,
    rejected pods included."""
    items = []
    for p in EXAMPLES:
        doc = dict(_load(p))
        kc = dict(doc.get("kubeletConfig") or {})
        kc["featureGates"] = {**(kc.get("featureGates") or {}), "KubeletPodResourcesListUseActivePods": False}
        doc["kubeletConfig"] = kc
        items.append((f"{p.relative_to(ROOT)} [list all]", doc, write_scenario(doc, tmp_path / f"{p.stem}.yaml")))
    stats: dict[str, int] = {}
    diffs = podresources_differences(oracle_binary, items, stats)
    print(f"podresources, examples, List of every known pod: {stats}")
    if diffs:
        _fail(diffs, stats.get("replayed", 0))
    assert stats.get("replayed", 0) + stats.get("failed_alike", 0) == len(EXAMPLES), stats
