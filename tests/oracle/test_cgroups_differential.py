"""``podnuma cgroups plan`` against the kubelet's own cgroup code
(``kubelet-oracle cgroups``), cgroup v2 (systemd driver) and v1 (cgroupfs
driver): every example scenario and seeded random scenarios
(``PODNUMA_ORACLE_SEED``; ``PODNUMA_ORACLE_CGROUPS_COUNT``, default 300).
See tests/oracle/cgroups_harness.py for what is compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.oracle import generate
from tests.oracle.cgroups_harness import cgroup_differences
from tests.oracle.harness import env_int, random_settings, write_scenario
from tests.oracle.test_differential import EXAMPLES, ROOT, _load

SEED, _ = random_settings()
COUNT = env_int("PODNUMA_ORACLE_CGROUPS_COUNT", 300)
CHUNK = 100


def _fail(diffs: list[tuple[str, list[str]]], total: int) -> None:
    lines = [f"{name}:\n  " + "\n  ".join(d[:12]) for name, d in diffs[:10]]
    pytest.fail(f"{len(diffs)} of {total} cgroup plans differ from the kubelet's:\n" + "\n".join(lines), pytrace=False)


def test_examples(oracle_binary: str) -> None:
    items = [(str(p.relative_to(ROOT)), _load(p), p) for p in EXAMPLES]
    stats: dict[str, int] = {}
    diffs = cgroup_differences(oracle_binary, items, stats)
    print(f"cgroups, examples: {stats}")
    if diffs:
        _fail(diffs, stats.get("compared", 0))
    # the examples are scenarios the kubelet runs: every one is compared
    assert stats.get("compared", 0) >= 2 * len(EXAMPLES) - 2 * stats.get("failed_alike", 0)
    assert stats.get("compared", 0) > 0


@pytest.mark.parametrize("chunk", range((COUNT + CHUNK - 1) // CHUNK), ids=lambda c: f"seed{SEED}-chunk{c}")
def test_random(chunk: int, oracle_binary: str, tmp_path: Path) -> None:
    start = chunk * CHUNK
    n = min(CHUNK, COUNT - start)
    scenarios = generate.scenarios(SEED, n, tmp_path, start=start)
    items = [(name, doc, write_scenario(doc, tmp_path / f"{i:05d}.json")) for i, (name, doc) in enumerate(scenarios)]
    stats: dict[str, int] = {}
    diffs = cgroup_differences(oracle_binary, items, stats)
    print(f"cgroups, seed {SEED}, scenarios {start}..{start + n - 1}: {stats}")
    if diffs:
        _fail(diffs, stats.get("compared", 0))
    # most random scenarios reach a comparison (the rest fail alike, or the
    # engines already differ, which tests/oracle/test_differential.py reports)
    assert stats.get("compared", 0) >= n, stats
