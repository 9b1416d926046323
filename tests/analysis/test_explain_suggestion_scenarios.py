"""What explain's suggestions claim, and the scenarios that replay them.

A suggestion of ``podnuma explain`` (a change the nearest-admissible search
tried) is more than the changed pod's verdict: it names what the change does
to the other pods (``sideEffects``: a later pod rejected instead of
admitted), and for the pod-level rewrite what a kubelet restart does to it.
``--candidate N --as-scenario FILE`` writes the scenario of the change; it
holds the later steps the side effects were found on, so that ``podnuma
simulate`` (and the kubelet oracle: tests/oracle/
test_explain_candidates_differential.py) replays every claim. The
pod-level rewrite explain tries is the one ``podnuma advise`` writes, and its
restart risk is the one ``advise`` and ``compare`` give for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[2]
RESTRICTED = ROOT / "examples" / "topology" / "restricted.yaml"
SIDECAR_SMT = ROOT / "examples" / "pod-level" / "sidecar-smt.yaml"


def _invoke(*args: str) -> Result:
    got = CliRunner().invoke(cli, list(args), prog_name="podnuma")
    assert got.exception is None or isinstance(got.exception, SystemExit), repr(got.exception)
    return got


def _json(*args: str) -> Any:
    r = _invoke(*args, "-o", "json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def _verdict(step: dict[str, Any]) -> str:
    return "admitted" if step["admitted"] else f"rejected ({step['reason']})"


def _search(scenario: Path, *args: str) -> dict[str, Any]:
    admission: dict[str, Any] = _json("explain", str(scenario), *args)["admissions"][0]
    return admission


def test_a_candidate_scenario_replays_the_side_effects_it_claims(tmp_path: Path) -> None:
    """restricted.yaml step 6 (demo/nic, TopologyAffinityError): its
    nearest change, router on a shared pool with cpu 900m, admits the pod
    "but then demo/wide-memory (step 11) rejected (UnexpectedAdmissionError)
    instead of admitted". The scenario written for it goes on past the
    changed step to the steps the search compared, and simulate gives each
    side effect as claimed (step 6 itself: admitted)."""
    admission = _search(RESTRICTED, "--step", "6")
    first = admission["search"]["candidates"][0]
    (alt,) = [a for a in admission["alternatives"] if a["change"] == first["change"]]
    assert [e["pod"] for e in alt["sideEffects"]] == ["demo/wide-memory"]
    out = tmp_path / "fixed.yaml"
    r = _invoke("explain", str(RESTRICTED), "--step", "6", "--candidate", "1", "--as-scenario", str(out))
    assert r.exit_code == 0, r.stderr
    assert "the change at step 6, then the 7 later step(s) compared" in r.stderr
    steps = _json("simulate", str(out))["steps"]
    assert len(steps) == len(yaml.safe_load(RESTRICTED.read_text(encoding="utf-8"))["steps"])
    assert steps[6]["pod"] == "demo/nic" and steps[6]["admitted"] is True
    for effect in alt["sideEffects"]:
        assert steps[effect["step"]]["pod"] == effect["pod"]
        assert _verdict(steps[effect["step"]]) == effect["now"]


def test_a_removal_leaves_out_the_later_removal_of_the_same_pod(tmp_path: Path) -> None:
    """The change "remove running pod demo/filler-1 first" admits demo/nic;
    the scenario goes on to remove demo/filler-1 at step 8, which no longer
    applies (a pod that is not running: the kubelet, and simulate, refuse
    the removal). The written scenario leaves that step out, so it replays,
    and its side effect on demo/wide-memory is as claimed."""
    admission = _search(RESTRICTED, "--step", "6")
    (order,) = [c["order"] for c in admission["search"]["candidates"]
                if c["change"] == "remove running pod demo/filler-1 first"]
    (alt,) = [a for a in admission["alternatives"] if a["change"] == "remove running pod demo/filler-1 first"]
    assert alt["admitted"] is True and alt["sideEffects"]
    out = tmp_path / "removed.yaml"
    r = _invoke("explain", str(RESTRICTED), "--step", "6", "--candidate", str(order), "--as-scenario", str(out))
    assert r.exit_code == 0, r.stderr
    written = yaml.safe_load(out.read_text(encoding="utf-8"))["steps"]
    assert {"removePod": "demo/filler-1"} not in written  # the scenario's own removal, step 8
    steps = _json("simulate", str(out))["steps"]
    assert [(s["op"], s["pod"]) for s in steps[6:8]] == [("removePod", "demo/filler-1"), ("addPod", "demo/nic")]
    assert steps[7]["admitted"] is True
    assert [s["pod"] for s in steps if s["op"] == "removePod"].count("demo/filler-1") == 1
    for effect in alt["sideEffects"]:
        (now,) = [s for s in steps if s["op"] == "addPod" and s["pod"] == effect["pod"]]
        assert _verdict(now) == effect["now"]


def test_a_change_that_leaves_the_pod_rejected_ends_at_it(tmp_path: Path) -> None:
    """A change the pod is still rejected with was not followed further:
    its scenario ends at the changed step, with the search's verdict."""
    admission = _search(RESTRICTED, "--step", "6")
    (c,) = [c for c in admission["search"]["candidates"]
            if c["change"] == "remove running pod demo/filler-2 first"]
    assert c["admitted"] is False
    out = tmp_path / "still.yaml"
    r = _invoke("explain", str(RESTRICTED), "--step", "6", "--candidate", str(c["order"]), "--as-scenario", str(out))
    assert r.exit_code == 0, r.stderr
    steps = _json("simulate", str(out))["steps"]
    assert len(steps) == 8
    assert steps[-1]["pod"] == "demo/nic" and steps[-1]["reason"] == c["reason"]


def _advised(tmp_path: Path) -> dict[str, Any]:
    pod = tmp_path / "trainer.json"
    pod.write_text(json.dumps(yaml.safe_load(SIDECAR_SMT.read_text(encoding="utf-8"))["steps"][0]["addPod"]))
    doc: dict[str, Any] = _json("advise", str(pod), "--node", str(SIDECAR_SMT),
                                "--kubelet-config", str(SIDECAR_SMT))
    return doc


def _pod_level_candidate(admission: dict[str, Any], cpu: str) -> int:
    (order,) = [c["order"] for c in admission["search"]["candidates"]
                if c["family"] == "podLevel" and c["admitted"] and f"cpu {cpu}," in c["change"]]
    return int(order)


def test_the_pod_level_candidate_is_the_rewrite_advise_writes(tmp_path: Path) -> None:
    """sidecar-smt.yaml: advise and explain both find the budget cpu 10,
    memory 16640Mi, and write the same pod: under advise's default strategy
    (keep-limits) the moved sidecar fluent-bit keeps its own memory limit
    256Mi (its memory.max), rather than getting the whole pod budget."""
    advised = _advised(tmp_path)["pods"][0]["rewrite"]["spec"]
    admission = _search(SIDECAR_SMT)
    order = _pod_level_candidate(admission, "10")
    assert "fluent-bit (keeping its limits.memory=256Mi)" in admission["search"]["candidates"][order - 1]["change"]
    out = tmp_path / "fixed.yaml"
    r = _invoke("explain", str(SIDECAR_SMT), "--candidate", str(order), "--as-scenario", str(out))
    assert r.exit_code == 0, r.stderr
    written = yaml.safe_load(out.read_text(encoding="utf-8"))["steps"][0]["addPod"]["spec"]
    for key in ("resources", "initContainers", "containers"):
        assert written[key] == advised[key], key
    assert written["initContainers"][0]["resources"] == {"limits": {"memory": "256Mi"}}
    steps = _json("simulate", str(out))["steps"]
    assert steps[0]["admitted"] is True


def test_the_pod_level_suggestion_says_what_a_kubelet_restart_does_to_it(tmp_path: Path) -> None:
    """The pod-level suggestion for sidecar-smt.yaml carries the restart risk
    advise gives for the same rewrite (the pod alone on the node, then a
    restart: rejected, TopologyAffinityError, kubernetes#140989), in -o
    json (``restart`` of its ``alternatives`` entry) and in the text; and
    ``podnuma restart`` on the scenario written for it agrees."""
    admission = _search(SIDECAR_SMT)
    order = _pod_level_candidate(admission, "10")
    change = admission["search"]["candidates"][order - 1]["change"]
    (alt,) = [a for a in admission["alternatives"] if a["change"] == change]
    restart = alt["restart"]
    (theirs,) = [r for r in _advised(tmp_path)["restart"] if r["form"] == "podLevel"]
    for key in ("outcome", "summary", "scope", "detail", "nextStart"):
        assert restart[key] == theirs[key], key
    assert restart["outcome"] == "rejected" and restart["detail"]["reason"] == "TopologyAffinityError"
    assert restart["upstreamIssue"] == "kubernetes#140989"
    out = tmp_path / "fixed.yaml"
    r = _invoke("explain", str(SIDECAR_SMT), "--candidate", str(order), "--as-scenario", str(out))
    assert r.exit_code == 0, r.stderr
    assert ("after a kubelet restart (v1.37.2, kubernetes#140989), the pod alone on the node (scope pod): "
            "rejected: TopologyAffinityError") in " ".join(r.stdout.split())
    (pod,) = _json("restart", str(out))["pods"]
    assert (pod["outcome"], pod["reason"]) == ("rejected", "TopologyAffinityError")
    # only the pod-level rewrite carries one
    assert [a["kind"] for a in admission["alternatives"] if "restart" in a] == ["podLevel"]


def test_the_web_door_gives_the_restart_risk_too() -> None:
    """``/api/explain`` answers with the command's document, the pod-level
    suggestion's ``restart`` included (the page lists it under the
    suggestion)."""
    from podnuma.web import service as web

    want = _json("explain", str(SIDECAR_SMT))
    got = web.explain(SIDECAR_SMT.read_text(encoding="utf-8"), str(SIDECAR_SMT), None, None, True)
    assert [a.get("restart") for a in got["admissions"][0]["alternatives"]] == \
        [a.get("restart") for a in want["admissions"][0]["alternatives"]]
    assert any(a.get("restart") for a in got["admissions"][0]["alternatives"])
