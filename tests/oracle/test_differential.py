"""podnuma against the real kubelet code (``kubelet-oracle``): every example,
every scenario the end-to-end tests run, the kept regressions and seeded
random scenarios must give the same kubelet-produced output, checkpoint
files byte for byte where compared.

``PODNUMA_ORACLE_SEED`` / ``PODNUMA_ORACLE_COUNT`` set the random part
(default: the day's seed, 1,000 scenarios); the seed is printed in the
report header. A random mismatch is shrunk and written to
``tests/oracle/regressions/`` (see docs/oracle.md).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.oracle import generate
from tests.oracle.harness import (
    Outcome,
    compare,
    random_settings,
    run_both,
    run_oracle,
    run_oracle_checkpoints,
    run_podnuma,
)
from tests.oracle.shrink import REGRESSIONS, oracle_mismatch, save_regression, shrink

ROOT = Path(__file__).resolve().parents[2]
CHUNK = 50


SEED, COUNT = random_settings()


def _is_scenario(path: Path) -> bool:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return False
    return isinstance(doc, dict) and doc.get("kind") == "Scenario"


EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.yaml") if _is_scenario(p))
REGRESSION_FILES = sorted(REGRESSIONS.glob("*.yaml"))


def _open_mismatch(path: Path) -> str:
    """The reason on a regression's ``# open:`` line: a known podnuma
    mismatch, not fixed yet (see docs/oracle.md)."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# open:"):
            return line.removeprefix("# open:").strip()
    return ""


def _load(path: Path) -> Mapping[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _report(name: str, diffs: list[str]) -> str:
    return f"{name}: podnuma differs from kubelet v1.37.2:\n  " + "\n  ".join(diffs)


# -- examples ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_outcomes(oracle_binary: str) -> dict[Path, Outcome]:
    return dict(zip(EXAMPLES, run_oracle(oracle_binary, EXAMPLES), strict=True))


@pytest.mark.parametrize("path", EXAMPLES, ids=[str(p.relative_to(ROOT / "examples")) for p in EXAMPLES])
def test_example(path: Path, oracle_binary: str, example_outcomes: dict[Path, Outcome]) -> None:
    doc = _load(path)
    mine = run_podnuma(path)
    diffs = compare(mine, example_outcomes[path], doc)
    assert not diffs, _report(str(path), diffs)
    if mine.kind == "ok":
        theirs = run_oracle_checkpoints(oracle_binary, path)
        diffs = compare(mine, theirs, doc, check_bytes=True)
        assert not diffs, _report(f"{path} (checkpoint files)", diffs)


# -- the end-to-end tests' scenarios ----------------------------------------------------------


def _collect_e2e_scenarios(workdir: Path) -> list[Path]:
    """Run tests/e2e with scenario recording on; every distinct scenario
    file they loaded."""
    record = workdir / "scenarios.txt"
    env = dict(os.environ, PODNUMA_COLLECT_SCENARIOS=str(record))
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         f"--basetemp={workdir / 'base'}", str(ROOT / "tests" / "e2e")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    if proc.returncode not in (0, 1) or not record.exists():
        pytest.fail(f"could not run tests/e2e to collect scenarios: {proc.stdout[-2000:]}", pytrace=False)
    seen: dict[str, Path] = {}
    for line in record.read_text(encoding="utf-8").splitlines():
        p = Path(line)
        if not p.is_file():
            continue
        key = hashlib.sha256(p.read_bytes() + str(p.parent).encode()).hexdigest()
        seen.setdefault(key, p)
    return list(seen.values())


def test_e2e_scenarios(oracle_binary: str, tmp_path: Path) -> None:
    paths = _collect_e2e_scenarios(tmp_path)
    assert len(paths) > 50, "the end-to-end tests ran fewer scenarios than expected"
    failures = []
    for path, theirs in zip(paths, run_oracle(oracle_binary, paths), strict=True):
        try:
            doc = _load(path) if path.suffix != ".json" else __import__("json").loads(path.read_text())
        except Exception:  # noqa: BLE001 - a deliberately malformed input file
            doc = {}
        diffs = compare(run_podnuma(path), theirs, doc)
        if diffs:
            failures.append(_report(str(path), diffs))
    assert not failures, f"{len(failures)} of {len(paths)} e2e scenarios differ:\n" + "\n".join(failures[:20])


# -- regressions ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", REGRESSION_FILES, ids=[p.stem for p in REGRESSION_FILES])
def test_regression(path: Path, oracle_binary: str, request: pytest.FixtureRequest) -> None:
    open_reason = _open_mismatch(path)
    if open_reason:
        # a known mismatch not fixed yet: it must still fail (strict), so the
        # day it is fixed the mark has to go
        request.node.add_marker(pytest.mark.xfail(reason=open_reason, strict=True))
    doc = _load(path)
    mine = run_podnuma(path)
    theirs = run_oracle_checkpoints(oracle_binary, path) if mine.kind == "ok" else run_oracle(oracle_binary, [path])[0]
    diffs = compare(mine, theirs, doc, check_bytes=mine.kind == "ok" and theirs.kind == "ok")
    assert not diffs, _report(str(path), diffs)


def _missing_hugepage_size(topology_policy: str, scope: str) -> dict[str, Any]:
    def pod(name: str, extra: Mapping[str, str]) -> dict[str, Any]:
        limits = {"cpu": "1", "memory": "256Mi", **extra}
        return {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
                "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}}

    return {
        "apiVersion": "podnuma.io/v1", "kind": "Scenario",
        "node": {"synthetic": {"sockets": 1, "numaNodesPerSocket": 2, "coresPerNumaNode": 2,
                               "threadsPerCore": 1, "memoryPerNumaNode": "8Gi"}},
        "kubeletConfig": {"memoryManagerPolicy": "Static", "kubeReserved": {"memory": "924Mi"},
                          "evictionHard": {"memory.available": "100Mi"},
                          "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
                          "topologyManagerPolicy": topology_policy, "topologyManagerScope": scope},
        "steps": [{"addPod": pod("plain", {})}, {"addPod": pod("huge", {"hugepages-2Mi": "4Mi"})}],
    }  # fmt: skip


@pytest.mark.parametrize("scope", ["container", "pod"])
@pytest.mark.parametrize("topology_policy", ["none", "best-effort", "restricted", "single-numa-node"])
def test_kubelet_panics_on_a_hugepage_size_the_node_lacks(
    oracle_binary: str, tmp_path: Path, topology_policy: str, scope: str
) -> None:
    """A Guaranteed pod asking for 2Mi pages on a node without them: the
    Static memory manager's calculateHints dereferences the missing table
    and the kubelet dies; podnuma names that panic in the pod's rejection
    (found by the random differential, seed 20261210)."""
    doc = _missing_hugepage_size(topology_policy, scope)
    path = tmp_path / "s.json"
    path.write_text(__import__("json").dumps(doc), encoding="utf-8")
    mine, theirs = run_podnuma(path), run_oracle(oracle_binary, [path])[0]
    assert theirs.kind == "crash", theirs
    assert "memorymanager.(*staticPolicy).calculateHints" in theirs.message, theirs.message
    notes: list[str] = []
    assert not compare(mine, theirs, doc, notes=notes)
    assert notes == ["kubelet panic confirmed"]


# -- seeded random scenarios -----------------------------------------------------------------


@pytest.mark.parametrize("chunk", range((COUNT + CHUNK - 1) // CHUNK), ids=lambda c: f"seed{SEED}-chunk{c}")
def test_random(chunk: int, oracle_binary: str, tmp_path: Path) -> None:
    start = chunk * CHUNK
    n = min(CHUNK, COUNT - start)
    print(f"kubelet oracle: seed {SEED}, scenarios {start}..{start + n - 1}")
    items = generate.scenarios(SEED, n, tmp_path, start=start, oracle=oracle_binary)
    mismatches = run_both(oracle_binary, items, tmp_path, bytes_every=5)
    if not mismatches:
        return
    saved = []
    for name, doc, diffs in mismatches[:3]:
        small = shrink(dict(doc), oracle_mismatch(oracle_binary, diffs))
        saved.append(save_regression(name, small, diffs))
    lines = [_report(name, diffs) for name, _, diffs in mismatches[:10]]
    pytest.fail(
        f"{len(mismatches)} of {n} random scenarios differ (seed {SEED}); shrunk into "
        + ", ".join(str(p.relative_to(ROOT)) for p in saved)
        + "\n"
        + "\n".join(lines),
        pytrace=False,
    )
