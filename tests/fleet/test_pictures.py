"""The drill-down of a fleet report: which nodes, and their pictures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.pictures import drill_down, drill_down_nodes
from podnuma.service import fleet as service

ROOT = Path(__file__).resolve().parents[2]


def _report(n: int) -> dict[str, Any]:
    nodes = []
    for i in range(n):
        status = "error" if i % 10 == 0 else "warning" if i % 10 == 1 else "ok"
        nodes.append({"name": f"n{i:03d}", "status": status,
                      "baseline": {"sidecarOnlyCpus": i % 7, "cpus": 64, "exclusiveCpus": 0,
                                   "strandedCpus": 0, "freeCpus": 64, "pods": 1}})
    return {"nodes": nodes, "whatIfs": []}


def test_a_small_fleet_is_drilled_whole() -> None:
    assert drill_down_nodes(_report(5)) == ["n000", "n001", "n002", "n003", "n004"]


def test_a_large_fleet_keeps_the_worst_nodes() -> None:
    chosen = drill_down_nodes(_report(200), limit=20)
    assert len(chosen) <= 20
    errors = [n for n in chosen if int(n[1:]) % 10 == 0]
    assert errors  # nodes with errors are drilled down


def test_pictures_of_the_nodes_that_replay() -> None:
    fleet = load_fleet([ROOT / "examples" / "fleet"])
    report = service.analyze(fleet, [])
    pics, drill = drill_down(fleet, report)
    assert drill == sorted(str(n["name"]) for n in report["nodes"])
    replayed = {str(n["name"]) for n in report["nodes"] if "baseline" in n}
    assert set(pics) == replayed and all(svg.lstrip().startswith("<?xml") for svg in pics.values())
