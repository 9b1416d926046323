"""``podnuma restart --state-dir DIR`` without ``--kubelet-config`` infers
what the checkpoints tell of the configuration, and no more.

A checkpoint holding a pod's own set (``podEntries``: a pod budget) is
written only by the pod scope of a topology manager policy other than
``none`` (the ``none`` policy allocates container by container, whatever
scope is configured: tests/oracle/test_pod_sets_written_by_policy.py has
the kubelet's code say so), so such a state rules ``none`` out. The
restart is run under each policy that writes them (best-effort,
restricted, single-numa-node): when they all give the same restart, that
is the answer, said so; when they differ, the restart asks for the node's
configuration and says what each gives, never picking one (a pod-level
pod is moved under best-effort, where the next kubelet start fails, and
rejected under the others: kubernetes#140989)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "pod-level" / "restart.yaml"


def _invoke(*args: str) -> Result:
    r = CliRunner().invoke(cli, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


@pytest.fixture()
def node_state(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The state directory the example leaves (best-effort, scope pod), its
    pods as a ``kubectl get pods -o json`` dump, and its node."""
    doc = yaml.safe_load(SCENARIO.read_text())
    state = tmp_path / "state"
    r = _invoke("simulate", str(SCENARIO), "--checkpoint-dir", str(state), "-o", "json")
    assert r.exit_code == 0, r.output
    uids = {s["pod"]: s["podUID"] for s in json.loads(r.stdout)["steps"]}
    items = []
    for step in doc["steps"]:
        pod = json.loads(json.dumps(step["addPod"]))
        pod.update(apiVersion="v1", kind="Pod")
        pod["metadata"]["uid"] = uids[f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"]
        pod["spec"]["nodeName"] = "restart-node"
        pod["status"] = {"phase": "Running"}
        items.append(pod)
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(doc["node"]))
    assert "podEntries" in (state / "cpu_manager_state").read_text()
    return state, pods, node


def _restart(state: Path, pods: Path, node: Path, *more: str) -> Result:
    return _invoke("restart", "--state-dir", str(state), "--pods", str(pods), "--node", str(node),
                   "--set", "reservedSystemCPUs=0", *more)


def _outcomes(r: Result) -> dict[str, str]:
    assert r.exit_code == 0, r.output
    return {p["pod"]: p["outcome"] for p in json.loads(r.stdout)["pods"]}


def test_a_restart_that_depends_on_the_policy_asks_for_it(node_state: tuple[Path, Path, Path]) -> None:
    r = _restart(*node_state)
    assert r.exit_code == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: --kubelet-config: the node's topology manager policy is needed: the "
                           "checkpoints hold pod-level sets (pod budgets), which the kubelet writes under "
                           "best-effort, restricted or single-numa-node only (never none)")
    assert "(ml/trainer: moved to CPUs 7,10-12 under best-effort, rejected under restricted and single-numa-node)" \
        in line
    assert line.endswith("give --kubelet-config FILE, or --set topologyManagerPolicy=POLICY")
    assert "kept" not in line


@pytest.mark.parametrize(("policy", "trainer"), [
    ("best-effort", "moved"), ("restricted", "rejected"), ("single-numa-node", "rejected"),
])
def test_each_policy_that_writes_pod_sets_gives_what_the_refusal_says(
    node_state: tuple[Path, Path, Path], policy: str, trainer: str
) -> None:
    r = _restart(*node_state, "--set", f"topologyManagerPolicy={policy}", "-o", "json")
    assert _outcomes(r) == {"shop/cache": "kept", "shop/web": "kept", "ml/trainer": trainer}
    notes = json.loads(r.stdout)["notes"]
    assert not any("none assumed" in n for n in notes)  # (the policy was given)


def test_the_nodes_own_configuration_is_taken_as_given(node_state: tuple[Path, Path, Path]) -> None:
    r = _restart(*node_state, "--kubelet-config", str(SCENARIO), "-o", "json")
    assert _outcomes(r)["ml/trainer"] == "moved"
    assert json.loads(r.stdout)["nextStart"]["starts"] is False


def test_a_restart_the_same_under_every_such_policy_is_answered(
    node_state: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Without the trainer's spec the pod keeps its entries and is not
    re-admitted: the restart is the same under the three policies, and is
    answered with a note saying why no policy was needed; its scenario
    runs the first of them and replays to the same outcomes."""
    state, pods, node = node_state
    dump = json.loads(pods.read_text())
    dump["items"] = [p for p in dump["items"] if p["metadata"]["name"] != "trainer"]
    pods.write_text(json.dumps(dump))
    out = tmp_path / "r.yaml"
    r = _restart(state, pods, node, "-o", "json", "--as-scenario", str(out))
    got = _outcomes(r)
    assert sorted(got.values()) == ["kept", "kept", "unknown"]
    notes = json.loads(r.stdout)["notes"]
    assert not any("none assumed" in n for n in notes)
    (note,) = [n for n in notes if "topology manager policy is not recorded" in n]
    assert "written under best-effort, restricted or single-numa-node only (never none), and the restart is " \
        "the same under each (its scenario runs best-effort)" in note
    config = yaml.safe_load(out.read_text())["kubeletConfig"]
    assert (config["topologyManagerPolicy"], config["topologyManagerScope"]) == ("best-effort", "pod")
    for policy in ("restricted", "single-numa-node"):
        assert _outcomes(_restart(state, pods, node, "--set", f"topologyManagerPolicy={policy}", "-o", "json")) == got
