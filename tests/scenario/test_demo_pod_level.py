"""The demo's pod-level section: the same training pod per-container and
with pod-level resources."""

from __future__ import annotations

import json

from click.testing import CliRunner

from podnuma.cli import cli


def test_demo_json_pod_level_section() -> None:
    out = CliRunner().invoke(cli, ["demo", "-o", "json"])
    assert out.exit_code == 0, out.output
    demo = json.loads(out.stdout)["podLevelDemo"]
    per, pod = demo["perContainer"], demo["podLevel"]
    assert per["admitted"] and pod["admitted"]
    assert per["qosClass"] == pod["qosClass"] == "Guaranteed"
    # per-container: every container exclusive, the pod has no reservation
    assert per["podAllocation"] is None
    assert {c["name"]: c["isolation"] for c in per["containers"]} == {
        "train": "container", "log-shipper": "container", "metrics": "container", "proxy": "container",
    }
    # pod-level: a 9-CPU bubble; the trainer's 8 CPUs are an exclusive slice of
    # it, and the sidecars share the one CPU left (the pod shared pool)
    bubble = pod["podAllocation"]["cpus"]
    containers = {c["name"]: c for c in pod["containers"]}
    assert containers["train"]["isolation"] == "container"
    assert containers["train"]["cpuQuotaDisabled"] is True
    shared = {containers[n]["cpus"] for n in ("log-shipper", "metrics", "proxy")}
    assert len(shared) == 1
    assert all(containers[n]["isolation"] == "pod" for n in ("log-shipper", "metrics", "proxy"))
    assert all(containers[n]["cpuQuotaDisabled"] is False for n in ("log-shipper", "metrics", "proxy"))

    def count(cpus: str) -> int:
        total = 0
        for part in cpus.split(","):
            lo, _, hi = part.partition("-")
            total += int(hi or lo) - int(lo) + 1
        return total

    assert count(bubble) == 9 and count(containers["train"]["cpus"]) == 8
    assert count(shared.pop()) == 1
    # PodResources: the pod reports its bubble, only the trainer reports CPUs
    pr = next(p for p in pod["podResources"] if p["name"] == "trainer")
    assert len(pr["cpuIds"]) == 9
    assert {c["name"]: len(c["cpuIds"]) for c in pr["containers"]} == {
        "train": 8, "log-shipper": 0, "metrics": 0, "proxy": 0,
    }


def test_demo_table_pod_level_section() -> None:
    out = CliRunner().invoke(cli, ["demo"])
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert "Pod-level resource managers (KEP-5526)" in text
    lines = [line.split() for line in text.splitlines()]
    taken = next(line for line in lines if line[:4] == ["CPUs", "taken", "from", "the"])
    assert taken[-2:] == ["11", "9"]
    held = next(line for line in lines if line[:2] == ["sidecar-only", "CPUs"])
    assert held[-2:] == ["3", "0"]
    assert "the node keeps 2 more CPUs" in text
