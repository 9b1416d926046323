"""A small generated fleet whose pods are in one dump, and the fleet report
on it: shared by the tests of how the fleet reads its inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from podnuma.cli.app import cli
from podnuma.fleet.generate import generate_fleet


def analyze(*args: str) -> dict[str, Any]:
    """``fleet analyze ARGS -o json``'s report (the command must succeed)."""
    r = CliRunner().invoke(cli, ["fleet", "analyze", *args, "-o", "json"])
    assert r.exit_code == 0, r.stderr[-2000:]
    report: dict[str, Any] = json.loads(r.stdout)
    return report


def one_dump_fleet(tmp_path: Path) -> Path:
    """A small generated fleet, its pods in one dump (``pods/pods.json``)."""
    d = tmp_path / "fleet"
    generate_fleet(d, nodes=3, pods_per_node=6, seed=11, nodes_per_pods_file=0)
    return d


def pods_dump(d: Path) -> tuple[Path, dict[str, Any]]:
    """The fleet's one pods dump and its document."""
    path = d / "pods" / "pods.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    return path, doc


def guaranteed(doc: dict[str, Any]) -> dict[str, Any]:
    """The dump's first Guaranteed pod without pod-level resources."""
    pod: dict[str, Any] = next(p for p in doc["items"] if p.get("status", {}).get("qosClass") == "Guaranteed"
                               and not p["spec"].get("resources"))
    return pod
