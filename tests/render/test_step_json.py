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


def test_cpu_list_is_the_cpusets_text() -> None:
    import random

    from podnuma.machine.cpuset import CPUSet
    from podnuma.render import step_json as module

    rng = random.Random(3)
    part = (1 << 48) - 1
    masks = [
        0, 1, 2, 3, 5, 6, 7, 1 << 300, (1 << 256) - 1, (1 << 256) - 2,
        # runs that end at, start at or cross the edges of the bytes the
        # compiled build reads, whole bytes of ones between them, and longer
        # runs of whole bytes
        0xFF, 0xFF00, 0x1FF, 0xFF80, 0x180, 0x7F80, 0xFF00FF, 0x8001, 1 << 7, 1 << 8, 3 << 7,
        part, 1 << 47, 1 << 48, 3 << 47, part << 48, (part << 48) | part, (1 << 97) - (1 << 95),
        (part << 96) | 1, ((1 << 200) - 1) ^ (1 << 96),
    ]
    for _ in range(2000):
        width = rng.choice([8, 48, 64, 96, 256, 1024])
        density = rng.random()
        masks.append(sum(1 << i for i in range(width) if rng.random() < density))
    for _ in range(500):  # long runs
        lo, hi = sorted(rng.sample(range(300), 2))
        masks.append(((1 << hi) - (1 << lo)) | rng.choice([0, 1, 1 << 299]))
    for mask in masks:
        want = str(CPUSet.from_mask(mask))
        assert module.cpu_list(mask) == want, bin(mask)
        # both ways (the build picks one) on every mask
        numbers = [str(i) for i in range(max(1, mask.bit_length()))]
        assert module._cpu_list_bytes(mask, numbers) == want, bin(mask)
        assert module._cpu_list_runs(mask, numbers) == want, bin(mask)


def test_random_scenarios_document_text(tmp_path: Path) -> None:
    """On many random scenarios (the differential tests' generator: every
    policy, devices, restarts, rejections, pod-level resources), the run
    document written step by step is the generic encoder's text of the
    whole document, with and without ``--detail``."""
    import io
    import json

    from podnuma.render.serialize import write_run_document
    from podnuma.scenario.document import build_document
    from tests.oracle.generate import scenario

    ran = steps = 0
    for index in range(60):
        doc = scenario(24, index, tmp_path)
        path = tmp_path / f"s{index}.yaml"
        path.write_text(yaml.safe_dump(doc), encoding="utf-8")
        try:
            result = run_scenario(load_scenario(path))
        except (InputError, KubeletStartupError):
            continue
        ran += 1
        steps += len(result.steps)
        for detail in (False, True):
            out = io.StringIO()
            write_run_document(result, out, "json", detail=detail)
            want = build_document(result, detail=detail)
            assert out.getvalue() == json.dumps(want, indent=2, ensure_ascii=False) + "\n", path
    assert ran >= 30 and steps >= 150, (ran, steps)
