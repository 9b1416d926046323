"""Each step written straight to JSON (render/step_json.py) is the text the
generic encoder gives for the step's document, on every scenario of the
repository that runs, with and without ``--detail``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.scenario import load_scenario
from podnuma.render.step_json import json_at, step_json
from podnuma.scenario.document import step_document
from podnuma.scenario.run import run_scenario

ROOT = Path(__file__).resolve().parents[2]


def _scenarios() -> list[Path]:
    out = []
    for path in sorted([*ROOT.glob("examples/**/*.yaml"), *ROOT.glob("tests/**/*.yaml")]):
        try:
            head = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if "kind: Scenario" in head:
            out.append(path)
    return out


SCENARIOS = _scenarios()


def test_there_are_scenarios() -> None:
    assert len(SCENARIOS) >= 20


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(ROOT)))
def test_step_json_is_the_generic_text(path: Path) -> None:
    try:
        result = run_scenario(load_scenario(path))
    except (InputError, KubeletStartupError, yaml.YAMLError):
        pytest.skip("not a scenario that runs")
    assert result.steps
    for step in result.steps:
        for detail in (False, True):
            want = json_at(step_document(step, detail=detail), "    ")
            assert step_json(step, "    ", detail=detail) == want
