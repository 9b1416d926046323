"""A scenario read from a request's text is kept (by text, name and
overrides) and answers the next questions about the same text: the answers
are those of a fresh reading, whatever was asked before, and nothing a run
does changes the kept scenario."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podnuma.analysis.restart import restart_document
from podnuma.inputs.overrides import request_overrides
from podnuma.inputs.text import TextInput
from podnuma.service import scenario as service
from podnuma.service.restart import restart_after_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = (
    "examples/static-dual-socket.yaml",
    "examples/pod-level/full-pcpus-only.yaml",
    "examples/pod-level/restart.yaml",
    "examples/topology/single-numa-node.yaml",
)


def _answers(text: str, name: str) -> list[Any]:
    src = TextInput(text, name)
    explained = service.explain(src, search=True)
    rejected = [a["step"] for a in explained.document["admissions"] if a["admitted"] is False]
    return [
        service.simulate(src),
        service.simulate(src, detail=True),
        explained.document,
        [service.explain(src, step=i).document for i in rejected],
        service.topology_owners(src, step=0),
        service.topology_owners(src),
        restart_document(restart_after_scenario(src)),
        service.simulate(src, overrides=request_overrides(["topologyManagerPolicy=best-effort"])),
    ]


def _state(scenario: service.Scenario) -> str:
    """Everything the scenario holds, written out (dataclass reprs go all the
    way down, read-only mappings included)."""
    assert scenario.document is not None
    return repr(scenario) + repr(scenario.document.data)


@pytest.mark.parametrize("name", EXAMPLES)
def test_answers_are_those_of_a_fresh_reading(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / name).read_text()
    monkeypatch.setattr(service, "KEEP_SCENARIOS", 0)
    service._kept.clear()
    fresh = _answers(text, name)
    assert not service._kept
    monkeypatch.setattr(service, "KEEP_SCENARIOS", 4)
    kept = service.load(TextInput(text, name))
    before = _state(kept)
    assert _answers(text, name) == fresh
    assert _answers(text, name) == fresh
    assert service.load(TextInput(text, name)) is kept
    assert _state(kept) == before


def test_kept_by_text_name_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    service._kept.clear()
    text = (ROOT / EXAMPLES[0]).read_text()
    first = service.load(TextInput(text, "a.yaml"))
    assert service.load(TextInput(text, "a.yaml")) is first
    assert service.load(TextInput(text + "\n", "a.yaml")) is not first
    renamed = service.load(TextInput(text, "b.yaml"))
    assert renamed is not first and renamed.name == "b.yaml"
    changed = service.load(TextInput(text, "a.yaml"), overrides=request_overrides(["topologyManagerPolicy=best-effort"]))
    assert changed is not first and changed.config.topology_manager_policy == "best-effort"
    # the oldest goes first, and a long text is never kept
    for i in range(service.KEEP_SCENARIOS):
        service.load(TextInput(f"{text}\n# {i}\n", "a.yaml"))
    assert service.load(TextInput(text, "a.yaml")) is not first
    monkeypatch.setattr(service, "KEEP_TEXT", len(text) - 1)
    assert service.load(TextInput(text, "c.yaml")) is not service.load(TextInput(text, "c.yaml"))
