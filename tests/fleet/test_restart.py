"""``fleet analyze --what-if ...,restart``: the pods a kubelet restart
would move or reject on each node, under the node's own configuration and
under the pod-level what-if."""

from __future__ import annotations

import pytest

from podnuma.errors import InputError
from podnuma.fleet.inputs import load_fleet
from podnuma.fleet.replay import replay_node
from podnuma.fleet.whatif import parse_what_if
from podnuma.service.fleet import analyze

from .conftest import EXAMPLE
from .test_inputs import A1


def test_restart_grammar() -> None:
    assert parse_what_if("restart").restart and not parse_what_if("scope=pod").restart
    w = parse_what_if("pod-level,scope=pod,restart")
    assert w.restart and w.pod_level and w.label == "pod-level,scope=pod,restart"
    with pytest.raises(InputError, match="restart"):
        parse_what_if("reboot")


def test_restart_per_node() -> None:
    node = next(n for n in load_fleet([EXAMPLE]).nodes if n.name == A1)
    r = replay_node(node, [parse_what_if("restart"), parse_what_if("pod-level,scope=pod,restart")])
    # as configured (scope container, the PodLevelResourceManagers gate off): all kept
    today = r["whatIfs"]["restart"]["restart"]
    assert (today["kept"], today["moved"], today["rejected"], today["pods"]) == (11, 0, 0, [])
    # the rewrite under scope pod: every pod-level pod is allocated afresh at the
    # restart (kubernetes#140989) and single-NUMA alignment fails; the
    # per-container ones keep their CPUs
    gated = r["whatIfs"]["pod-level,scope=pod,restart"]
    assert gated["rewrittenPods"] == 4
    after = gated["restart"]
    assert (after["kept"], after["rejected"]) == (6, 5)
    assert {p["outcome"] for p in after["pods"]} == {"rejected"}
    assert all(p["podLevel"] and p["reason"] == "TopologyAffinityError" for p in after["pods"])
    assert any(p["pod"].startswith("analytics/query-engine") for p in after["pods"])  # pod-level as written


def test_restart_section_of_the_report() -> None:
    fleet = load_fleet([EXAMPLE])
    report = analyze(fleet, [parse_what_if("scope=pod"), parse_what_if("pod-level,scope=pod,restart")])
    assert list(report["restart"]) == ["pod-level,scope=pod,restart"]
    sec = report["restart"]["pod-level,scope=pod,restart"]
    nodes = [n for n in report["nodes"] if "restart" in n.get("whatIfs", {}).get("pod-level,scope=pod,restart", {})]
    assert sec["nodes"] == len(nodes) > 0
    assert sec["rejected"] == len([p for p in sec["pods"] if p["outcome"] == "rejected"]) > 0
    assert sec["kept"] + sec["moved"] + sec["rejected"] + sec["unknown"] == sum(
        n["whatIfs"]["pod-level,scope=pod,restart"]["admitted"] for n in nodes)
    plain = analyze(fleet, [parse_what_if("scope=pod")])
    assert "restart" not in plain
