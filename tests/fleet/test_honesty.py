"""The fleet report on partial input: totals over known configurations,
assumed nodes apart, rejected pods' CPUs apart from pinned ones, changes
over the same nodes, consistent counts, unique headers, file modes."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.replay import node_scenarios, replay_node
from podnuma.fleet.whatif import parse_what_if
from podnuma.render.fleet import fleet_tables, free_cell, headline
from podnuma.service import fleet as service

from .figures import is_static, report_figures
from .partial import ASSUMED, KNOWN, NONE, write_partial_fleet

SNN = "policy=single-numa-node"
FULL = "cpu-option=full-pcpus-only"


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_partial_fleet(tmp_path_factory.mktemp("partial") / "dump")


@pytest.fixture(scope="module")
def report(dump: Path) -> dict[str, Any]:
    fleet = service.load([dump])
    return service.analyze(fleet, service.what_ifs([SNN, FULL], workers=None, dask_target=None))


def _node(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in report["nodes"] if n["name"] == name)


def test_totals_hold_only_the_nodes_whose_configuration_is_known(report: dict[str, Any]) -> None:
    base = report["summary"]["as running"]
    assert base["nodes"] == 2 and base["cpus"] == 32  # n-known and n-none, not n-assumed
    assert report["fleet"]["nodesInTotals"] == 2 and report["fleet"]["nodesAssumed"] == 1
    (assumed,) = report["assumed"]["nodes"]
    assert assumed["name"] == ASSUMED
    text = " | ".join(assumed["contradictions"])
    assert "status.allocatable cpu is 14, the configuration gives 16" in text
    assert "status.allocatable memory is 14236Mi, the configuration gives 16284Mi" in text
    assert "topologyManagerPolicy is 'single-numa-node', the configuration's 'none'" in text
    assert report["assumed"]["as running"]["pods"] == 1
    # a node group with a known configuration and consistent objects says nothing
    assert not any("status.allocatable" in i["message"] for i in report["issues"])


def test_cpus_of_a_pod_rejected_at_memory_allocation_are_not_pinned(report: dict[str, Any]) -> None:
    b = _node(report, KNOWN)["baseline"]
    (big,) = b["rejected"]
    assert big["pod"] == "t/big" and big["stage"] == "allocate:memory"
    # a (2) and wide (10) are pinned; big's 2 CPUs go back to the shared pool
    assert b["exclusiveCpus"] == 12 and b["rejectedPodCpus"] == 2
    assert b["freeCpus"] == 16 - 1 - 12
    assert report["summary"]["as running"]["rejectedPodCpus"] == 2


def test_a_what_if_failing_on_a_node_leaves_it_out_of_both_sides(report: dict[str, Any]) -> None:
    w = report["summary"][FULL]
    assert w["excludedNodes"] == [NONE] and w["nodes"] == 1
    assert w["change"]["nodes"] == 0 and w["change"]["cpus"] == 0
    # n-none's 16 free CPUs are not a loss of the what-if
    assert w["change"]["freeCpus"] == w["freeCpus"] - _node(report, KNOWN)["baseline"]["freeCpus"]
    assert w["change"]["freeCpus"] > -16


def test_pods_turned_away_are_no_cpus_freed(report: dict[str, Any]) -> None:
    w = report["summary"][SNN]
    assert w["change"]["freeCpus"] == 10  # wide is rejected: its 10 CPUs are free
    freed = w["freedForOtherPods"]
    assert freed["cpus"] == 0 and freed["nodes"] == 1
    assert freed["nodesRejectingRunningPods"] == [
        {"node": KNOWN, "rejectedPods": 1, "freeCpusChange": 10}]
    node = _node(report, KNOWN)
    assert free_cell(node["baseline"], node["whatIfs"][SNN]) == "13 (+10) 1 rejected"


def test_html_never_shows_cpus_of_rejected_pods_as_a_gain(report: dict[str, Any]) -> None:
    pytest.importorskip("plotly")
    page = service.report_html(None, report)
    assert '29 <span class="neg">(+10)</span>' in page
    assert '<span class="pos">(+10)</span>' not in page
    assert "CPUs freed for other pods" in page and "Nodes whose configuration is assumed" in page


def test_counts_agree_and_a_pod_dumped_twice_counts_once(report: dict[str, Any]) -> None:
    f = report["fleet"]
    assert f["podsInDumps"] == 5 and f["podsDumpedTwice"] == 1
    assert f["podsReplayed"] == 5 and f["podsInTotals"] == report["summary"]["as running"]["pods"] == 4
    assert len(_node(report, KNOWN)["baseline"]["rejected"]) == 1  # a is replayed once
    assert _node(report, KNOWN)["baseline"]["pods"] == 3
    assert headline(report).endswith(
        "5 pods replayed: 4 in the totals, 1 on 1 node(s) whose configuration is assumed "
        "(1 pod(s) found in two dumps, counted once)")
    assert any("appear in more than one dump" in i["message"] for i in report["issues"])


def _header_lines(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title))
    rule = next(i for i in range(start, len(lines)) if "───" in lines[i])
    return lines[start + 1 : rule]


@pytest.mark.parametrize("width", [80, 120, 200])
def test_what_if_headers_stay_apart_at_any_width(dump: Path, width: int) -> None:
    labels = ["policy=single-numa-node,scope=pod", "policy=single-numa-node,scope=container"]
    fleet = service.load([dump])
    report = service.analyze(fleet, service.what_ifs(labels, workers=None, dask_target=None))
    console = Console(width=width, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(fleet_tables(report))
    text = console.export_text()
    assert all(len(ln) <= width for ln in text.splitlines())
    for title in ("fleet: the nodes", "density:", "nodes with the most"):
        head = "\n".join(_header_lines(text, title))
        assert head.count("(1)") == 1 and head.count("(2)") == 1, (title, head)
    assert f"(1) {labels[0]}; (2) {labels[1]}" in re.sub(r"\s*\n\s*", " ", text)


def test_report_and_scenario_files_are_world_readable(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    scen = tmp_path / "scenarios"
    proc = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(dump), "--what-if", SNN,
         "-o", "json", "--output-file", str(out), "--as-scenario", str(scen)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    files = sorted(p.name for p in scen.iterdir())
    report = json.loads(out.read_text())
    density = [f"{node['name']}{s}.density-{k}.yaml" for node in report["nodes"]
               for s, run in (("", node["baseline"]), (".whatif-1", node["whatIfs"][SNN]))
               for k in range(1, len(run["density"]) + 1)]
    assert density  # (each density figure has its scenario beside its run's)
    assert files == sorted([*(f"{n}{s}.yaml" for n in (ASSUMED, KNOWN, NONE) for s in ("", ".whatif-1")), *density])
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in scen.iterdir())


def test_an_unknown_gate_in_a_node_group_reads_as_another_kubelet_version(tmp_path: Path) -> None:
    d = write_partial_fleet(tmp_path / "dump")
    doc = yaml.safe_load((d / "fleet.yaml").read_text())
    doc["nodeGroups"][0]["kubeletConfig"] = {"featureGates": {"SomeGateOfV140": True}}
    (d / "fleet.yaml").write_text(yaml.safe_dump(doc))
    spec = next(n for n in load_fleet([d]).nodes if n.name == ASSUMED)
    r = replay_node(spec)
    assert r["status"] == "warning" and "baseline" in r
    (msg,) = [i["message"] for i in r["issues"] if "SomeGateOfV140" in i["message"]]
    assert "most likely a newer one" in msg and "would not start" not in msg


def test_scenarios_of_a_node_replay_to_the_report_figures(dump: Path, tmp_path: Path) -> None:
    spec = next(n for n in load_fleet([dump]).nodes if n.name == KNOWN)
    what_ifs = [parse_what_if(SNN)]
    report = replay_node(spec, what_ifs)
    for label, doc in node_scenarios(spec, what_ifs).items():
        path = tmp_path / f"{label}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "simulate", str(path), "-o", "json"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        run = report["baseline"] if label == "as running" else report["whatIfs"][label]
        got = report_figures(json.loads(proc.stdout), is_static(doc))
        assert got == {k: (len(run[k]) if k == "rejected" else run[k]) for k in got}, label


def test_a_node_name_that_is_no_file_name_writes_no_scenario(dump: Path, tmp_path: Path) -> None:
    d = tmp_path / "dump"
    d.mkdir()
    for f in dump.rglob("*"):
        target = d / f.relative_to(dump)
        if f.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.write_text(f.read_text().replace(f'"{NONE}"', '"../../escape"'))
    proc = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(d), "-o", "json",
         "--as-scenario", str(tmp_path / "out" / "scenarios")],
        capture_output=True, text=True, timeout=300,
    )
    # no Node can have that name (the apiserver's ValidateNodeName): the
    # node is left out, said, and the other nodes' scenarios are written
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert "../../escape" not in {n["name"] for n in report["nodes"]}
    assert any(i["path"].endswith(".metadata.name") and i["message"].startswith('Invalid value: "../../escape"')
               and i["message"].endswith("the node is not read") for i in report["issues"])
    assert not (tmp_path / "escape.yaml").exists() and not (tmp_path / "out" / "escape.yaml").exists()
    written = sorted(p.name for p in (tmp_path / "out" / "scenarios").glob("*.yaml"))
    assert written and not any("escape" in w for w in written)


def test_a_pod_dumped_twice_counts_once_when_files_are_scanned_apart(tmp_path: Path) -> None:
    """Files scanned in different processes (as the executors scan them)
    are matched when their scans are merged: the pod found in two dumps is
    counted once, as one process counts it."""
    from podnuma.fleet.inputs import Scan, assemble, merge_scan, scan_files, walk_inputs

    d = write_partial_fleet(tmp_path / "dump")
    files: list[Path] = []
    walk_inputs(d, Scan(), files)
    whole = Scan()
    for part in scan_files([str(f) for f in files]):  # one scan per file, merged
        merge_scan(whole, part)
    apart = assemble(whole)
    together = load_fleet([d])
    assert apart.pods_duplicated == together.pods_duplicated == 1
    assert apart.pods_total == together.pods_total
    assert {n.name: n.pods_bound for n in apart.nodes} == {n.name: n.pods_bound for n in together.nodes}
