"""The nearest-admissible search gives the same results however it is run.

``data/explain_search.json`` holds the search results (every rejected
admission's ``alternatives`` and ``suggestions``) of the example scenarios
and of a few rejected steps of the 200-pod bench scenario, as an earlier,
unoptimised version of the search produced them. The whole-scenario run and
the one-step run (``--step N``, with and without the node copies of
:func:`run_for_explain`) must both reproduce them.

One deliberate difference: the side effects of a configuration change
(``topologyPolicy``, ``topologyScope``). The earlier search stopped that
re-run at the last rejected step it was asked about, so ``--step N`` and
the whole run listed different side effects, and effects on the steps after
it were missed while ``sideEffectsCheckedSteps`` claimed every step. Both
now compare the same steps (the earlier ones and the next ``REPLAY_STEPS``,
checked against full re-runs in ``test_explain.py``); those two fields,
and the summary text they add to, are left out of the comparison here.

Regenerate (only when the search itself is meant to change):
``python tests/analysis/test_explain_search_stable.py``
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from podnuma.analysis.explain import explain_run, run_for_explain
from podnuma.inputs.scenario import Scenario, load_scenario, load_scenario_text
from podnuma.scenario.run import RunResult, run_scenario

from ..records import replace

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).with_name("data") / "explain_search.json"

#: example scenarios with rejected pods
SCENARIOS = (
    "examples/pod-level/full-pcpus-only.yaml",
    "examples/pod-level/init-and-sidecars.yaml",
    "examples/pod-level/lifecycle.yaml",
    "examples/pod-level/pod-scope-3-empty-shared-pool.yaml",
    "examples/pod-level/pod-scope-table.yaml",
    "examples/pod-level/tutorial-2-empty-shared-pool.yaml",
    "examples/static-dual-socket.yaml",
    "examples/topology/best-effort.yaml",
    "examples/topology/none.yaml",
    "examples/topology/pod-scope.yaml",
    "examples/topology/restricted.yaml",
    "examples/topology/single-numa-node.yaml",
    "src/podnuma/scenario/demo/demo.yaml",
)

#: the bench scenario (bench/bench_explain.py) and some of its rejected steps
BENCH = "bench/bench_explain.py"
BENCH_PODS = 200
BENCH_STEPS = (110, 111, 121, 132, 199)


def _searches(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        str(a["step"]): {"alternatives": a["alternatives"], "suggestions": a["suggestions"]}
        for a in doc["admissions"]
        if a["admitted"] is False
    }


_CONFIG_KINDS = ("topologyPolicy", "topologyScope")
_EFFECT_FIELDS = ("sideEffects", "sideEffectsCheckedSteps", "summary")


def _comparable(searches: dict[str, Any]) -> dict[str, Any]:
    """The search results without a configuration change's side effects
    (see the module docstring)."""
    out: dict[str, Any] = {}
    for step, found in searches.items():
        alts = []
        changed_summaries = set()
        for alt in found["alternatives"]:
            if alt["kind"] in _CONFIG_KINDS:
                changed_summaries.add(alt["summary"])
                alt = {k: v for k, v in alt.items() if k not in _EFFECT_FIELDS}
            alts.append(alt)
        suggestions = [
            s.split("; but then ")[0] if s in changed_summaries else s for s in found["suggestions"]
        ]
        out[step] = {"alternatives": alts, "suggestions": suggestions}
    return out


def _step_search(scenario: Scenario, result: RunResult, index: int) -> dict[str, Any]:
    """``--step N`` both ways; they must agree exactly."""
    plain = _searches(explain_run(scenario, result, step=index))
    prepared = run_for_explain(scenario, step=index)
    # the same run, each step's PodResources list left out (an explanation
    # does not show it)
    assert all(not s.pod_resources for s in prepared.run.steps)
    assert prepared.run.steps == tuple(replace(s, pod_resources=()) for s in result.steps)
    assert set(prepared.snapshots) == {index}
    kept = _searches(
        explain_run(scenario, prepared.run, step=index, snapshots=prepared.snapshots)
    )
    assert kept == plain
    return plain


def _bench_scenario() -> Scenario:
    spec = importlib.util.spec_from_file_location("bench_explain", ROOT / BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = module.scenario(BENCH_PODS)
    return load_scenario_text(json.dumps(doc), name="bench-explain-200.json", base_dir=ROOT)


def _run(name: str) -> tuple[Scenario, RunResult]:
    scenario = _bench_scenario() if name == BENCH else load_scenario(ROOT / name)
    return scenario, run_scenario(scenario)


def generate() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in SCENARIOS:
        scenario, result = _run(name)
        out[name] = _searches(explain_run(scenario, result))
    scenario, result = _run(BENCH)
    out[BENCH] = {}
    for index in BENCH_STEPS:
        out[BENCH].update(_searches(explain_run(scenario, result, step=index)))
    return out


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", SCENARIOS)
def test_whole_run_and_each_step_reproduce_the_search(name: str, expected: dict[str, Any]) -> None:
    scenario, result = _run(name)
    want = _comparable(expected[name])
    assert want, "every listed scenario has a rejected pod"
    whole = _searches(explain_run(scenario, result))
    assert _comparable(whole) == want
    for index in want:
        # one step alone: exactly the whole run's entry, side effects included
        assert _step_search(scenario, result, int(index)) == {index: whole[index]}


def test_bench_steps_reproduce_the_search(expected: dict[str, Any]) -> None:
    scenario, result = _run(BENCH)
    want = _comparable(expected[BENCH])
    assert sorted(want) == sorted(str(i) for i in BENCH_STEPS)
    for index in BENCH_STEPS:
        assert _comparable(_step_search(scenario, result, index)) == {str(index): want[str(index)]}


if __name__ == "__main__":
    EXPECTED.parent.mkdir(exist_ok=True)
    EXPECTED.write_text(json.dumps(generate(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    sys.exit(0)
