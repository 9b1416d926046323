"""``--set PATH=VALUE`` on simulate, explain, compare, advise and fleet
analyze; ``compare`` on workloads; a removal naming a rejected pod; and
``state inspect --as-scenario --node`` with the restored state shown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
STATIC = EXAMPLES / "static-dual-socket.yaml"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def as_json(*args: str) -> Any:
    got = run(*args, "-o", "json")
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout)


def test_simulate_set_changes_the_run_and_records_it() -> None:
    plain = as_json("simulate", str(STATIC))
    assert plain["steps"][1]["reason"] == "SMTAlignmentError"
    assert "kubeletConfig" not in plain  # the contract's document, unchanged without --set
    got = as_json("simulate", str(STATIC), "--set", "cpuManagerPolicyOptions.full-pcpus-only=false")
    assert got["steps"][1]["admitted"] is True
    assert got["kubeletConfig"]["set"] == ["cpuManagerPolicyOptions.full-pcpus-only=false"]
    assert got["kubeletConfig"]["effective"] == {
        "cpuManagerPolicy": "static", "cpuManagerPolicyOptions": {"full-pcpus-only": "false"},
        "reservedSystemCPUs": "0,16",
    }
    yaml_out = run("simulate", str(STATIC), "-o", "yaml", "--set", "topologyManagerScope=pod")
    assert yaml.safe_load(yaml_out.stdout)["kubeletConfig"]["set"] == ["topologyManagerScope=pod"]


def test_a_kubelet_config_file_is_overridden_too(tmp_path: Path) -> None:
    (tmp_path / "kc.yaml").write_text("cpuManagerPolicy: static\nreservedSystemCPUs: '0'\n")
    sc = yaml.safe_load(STATIC.read_text())
    del sc["kubeletConfig"]
    sc["kubeletConfigFile"] = "kc.yaml"
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(sc))
    out = tmp_path / "written.yaml"
    got = as_json("simulate", str(tmp_path / "s.yaml"), "--set", "reservedSystemCPUs=0-1",
                  "--as-scenario", str(out))
    assert got["node"]["reservedCpus"] == "0-1"
    written = yaml.safe_load(out.read_text())
    assert "kubeletConfigFile" not in written
    assert written["kubeletConfig"] == {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0-1"}
    assert out.read_text().startswith("# kubeletConfig with --set reservedSystemCPUs=0-1\n")
    assert out.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("command", [
    ["simulate", str(STATIC)],
    ["explain", str(STATIC)],
    ["topology", str(STATIC)],
    ["compare", str(EXAMPLES / "whatif" / "trainer-pod.yaml")],
    ["advise", str(EXAMPLES / "whatif" / "trainer-pod.yaml")],
    ["fleet", "analyze", str(EXAMPLES / "fleet")],
    ["cgroups", "plan", str(STATIC), "--driver", "systemd", "--cgroup-version", "2"],
    ["cgroups", "apply", str(STATIC), "--driver", "systemd", "--cgroup-version", "2", "--root", str(EXAMPLES),
     "--dry-run"],
])
@pytest.mark.parametrize(("item", "line"), [
    ("cpuManagerPolicyy=static",
     'error: --set: cpuManagerPolicyy: unknown field "cpuManagerPolicyy" (did you mean "cpuManagerPolicy"?)'),
    ("featureGates.PodLevelResourceManagers=yes please",
     "error: --set: featureGates.PodLevelResourceManagers: must be a boolean, got a string"),
])
def test_a_bad_override_is_one_line_and_exit_2(command: list[str], item: str, line: str) -> None:
    got = CliRunner().invoke(cli, [*command, "--set", item])
    assert got.exit_code == 2
    assert got.stdout == ""
    assert got.stderr.strip() == line


QUANTITY = ("failed to parse quantity \"abc\" for \"cpu\" resource: quantities must match the regular "
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


@pytest.mark.parametrize("command", [
    ["simulate", str(STATIC)],
    ["explain", str(STATIC)],
    ["compare", str(EXAMPLES / "whatif" / "trainer-pod.yaml")],
    ["compare", str(EXAMPLES / "whatif" / "trainer-pod.yaml"), "--kubelet-config",
     str(EXAMPLES / "whatif" / "kubelet-config.yaml")],
    ["advise", str(EXAMPLES / "whatif" / "trainer-pod.yaml")],
])
@pytest.mark.parametrize(("item", "line"), [
    ("kubeReserved.cpu=abc", f"error: --set: kubeReserved.cpu: {QUANTITY}"),
    ("kubeReserved={cpu: abc}", f"error: --set: kubeReserved.cpu: {QUANTITY}"),
    ("reservedSystemCPUs=0-999", "error: kubelet would not start: reserved-cpus: 0-999 is not a subset of "
                                 "online-cpus: 0-{last} (--set: reservedSystemCPUs)"),
    ("reservedMemory[5].limits.memory=1Gi", "error: --set: reservedMemory[5].limits.memory=1Gi: "
                                            "reservedMemory[5]: past the end of the list"),
])
def test_a_value_the_configuration_refuses_is_blamed_on_set(command: list[str], item: str, line: str) -> None:
    """A value of the right type that the configuration's decoding or the
    kubelet's start refuses names ``--set`` (where the value came from), not
    the scenario or configuration file, which does not hold it."""
    got = CliRunner().invoke(cli, [*command, "--set", item])
    assert got.exit_code == 2
    assert got.stdout == ""
    err = got.stderr.strip()
    assert "\n" not in err, err
    if "{last}" in line:
        assert re.fullmatch(re.escape(line).replace(re.escape("{last}"), "[0-9]+"), err), err
    else:
        assert err.startswith(line), err


def test_cgroups_plan_and_apply_set_on_the_scenario(tmp_path: Path) -> None:
    """``--set cpuCFSQuota=false``: the CPU quota of every cgroup the plan
    limits becomes ``max`` (the kubelet writes no quota); apply writes it."""
    scenario = EXAMPLES / "pod-level" / "restart.yaml"
    args = ["cgroups", "plan", str(scenario), "--driver", "cgroupfs", "--cgroup-version", "2", "-o", "json"]
    quota = [json.loads(run(*args).stdout), json.loads(run(*args, "--set", "cpuCFSQuota=false").stdout)]
    limited = [[c["files"]["cpu.max"] for c in d["cgroups"] if "cpu.max" in c.get("files", {})] for d in quota]
    assert any(v != "max 100000" for v in limited[0])
    assert limited[1] and all(v == "max 100000" for v in limited[1])
    root = tmp_path / "root"
    root.mkdir()
    run("cgroups", "apply", str(scenario), "--driver", "cgroupfs", "--cgroup-version", "2",
        "--root", str(root), "--set", "cpuCFSQuota=false")
    written = [p.read_text().strip() for p in root.rglob("cpu.max")]
    assert written and all(v == "max 100000" for v in written)


def test_topology_set_draws_the_overridden_run() -> None:
    plain = as_json("topology", str(STATIC), "--step", "1")
    got = as_json("topology", str(STATIC), "--step", "1", "--set", "cpuManagerPolicyOptions.full-pcpus-only=false")
    owners = {o["name"]: o["cpus"] for o in got["owners"]}
    assert owners["exclusive: shop/odd/app"] == "3-4,19"
    assert "exclusive: shop/odd/app" not in {o["name"] for o in plain["owners"]}


def test_explain_set_records_the_configuration() -> None:
    got = as_json("explain", str(STATIC), "--step", "1", "--no-search",
                  "--set", "cpuManagerPolicyOptions.full-pcpus-only=false")
    assert got["admissions"][0]["admitted"] is True
    assert got["kubeletConfig"]["set"] == ["cpuManagerPolicyOptions.full-pcpus-only=false"]


def test_compare_and_advise_set_on_the_given_configuration() -> None:
    pod = str(EXAMPLES / "whatif" / "trainer-pod.yaml")
    cfg = str(EXAMPLES / "whatif" / "kubelet-config.yaml")
    node = str(EXAMPLES / "whatif" / "node.yaml")
    got = as_json("compare", pod, "--node", node, "--kubelet-config", cfg,
                  "--set", "topologyManagerPolicy=single-numa-node")
    kc = got["kubeletConfig"]
    assert kc["topologyManagerPolicy"] == "single-numa-node"
    assert kc["from"].endswith(" with --set topologyManagerPolicy=single-numa-node")
    own = yaml.safe_load(Path(cfg).read_text())
    assert kc["effective"] == {**own, "topologyManagerPolicy": "single-numa-node"}
    adv = as_json("advise", pod, "--node", node, "--kubelet-config", cfg,
                  "--set", "cpuManagerPolicy=none")
    assert adv["kubeletConfig"]["cpuManagerPolicy"] == "none"
    assert adv["kubeletConfig"]["effective"]["cpuManagerPolicy"] == "none"
    # the built-in configuration is overridden when none is given
    builtin = as_json("advise", pod, "--set", "topologyManagerScope=container")
    assert builtin["kubeletConfig"]["topologyManagerScope"] == "container"
    assert builtin["kubeletConfig"]["effective"]["cpuManagerPolicy"] == "static"


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: ml}
spec:
  replicas: 3
  selector: {matchLabels: {app: trainer}}
  template:
    metadata: {labels: {app: trainer}}
    spec:
      initContainers:
      - name: log-shipper
        restartPolicy: Always
        resources: {limits: {cpu: "1", memory: 256Mi}}
      containers:
      - name: trainer
        resources: {limits: {cpu: "6", memory: 8Gi}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: ml}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: job
            resources: {limits: {cpu: "2", memory: 1Gi}}
---
apiVersion: v1
kind: Service
metadata: {name: svc}
"""


def test_compare_takes_workloads(tmp_path: Path) -> None:
    path = tmp_path / "workloads.yaml"
    path.write_text(DEPLOYMENT)
    got = run("compare", str(path), "-o", "json")
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert [p["pod"] for p in doc["pods"]] == ["Deployment ml/trainer", "CronJob ml/nightly"]
    assert doc["pods"][0]["asWritten"] == "perContainer"
    assert doc["pods"][0]["derived"]["form"] == "podLevel"
    assert "not a Pod or a workload (kind Service), skipped" in got.stderr
    table = run("compare", str(path))
    assert "Deployment ml/trainer  (as written: per-container" in table.stdout


def test_compare_names_a_workload_without_a_template(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n")
    got = CliRunner().invoke(cli, ["compare", str(path)])
    assert got.exit_code == 2
    assert got.stderr.strip() == (
        f"error: {path}: spec.template: required field is missing: a pod template with a spec (line 4, column 1)"
    )


REJECTED_THEN_REMOVED = """\
apiVersion: podnuma.io/v1
kind: Scenario
node: {name: node1, synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1, memoryPerNumaNode: 8Gi}}
kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: "0"}
steps:
- addPod:
    metadata: {name: big, namespace: d}
    spec: {containers: [{name: c, resources: {limits: {cpu: "4", memory: 1Gi}}}]}
- addPod:
    metadata: {name: small, namespace: d}
    spec: {containers: [{name: c, resources: {limits: {cpu: "1", memory: 1Gi}}}]}
- removePod: d/small
- removePod: %s
"""


@pytest.mark.parametrize(("ref", "why"), [
    ("d/big", "it was rejected at step 0 (UnexpectedAdmissionError)"),
    ("d/small", "it was removed at step 2"),
])
def test_removing_a_rejected_pod_names_the_step(tmp_path: Path, ref: str, why: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(REJECTED_THEN_REMOVED % ref)
    got = CliRunner().invoke(cli, ["simulate", str(path)])
    assert got.exit_code == 2
    assert got.stderr.strip() == (
        f"error: {path}: steps[3].removePod: pod '{ref}' is not running on the node: {why} "
        "(line 13, column 14)"
    )


STATE_RUN = """\
apiVersion: podnuma.io/v1
kind: Scenario
node:
  name: worker-1
  synthetic: {sockets: 2, numaNodesPerSocket: 1, coresPerNumaNode: 8, threadsPerCore: 2, memoryPerNumaNode: 64Gi}
kubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: "0,16"}
steps:
- addPod:
    metadata: {name: db, namespace: shop, uid: db-uid}
    spec: {containers: [{name: postgres, resources: {limits: {cpu: "4", memory: 8Gi}}}]}
"""


def test_state_inspect_as_scenario_with_node_and_config(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(STATE_RUN)
    assert run("simulate", str(tmp_path / "run.yaml"), "--checkpoint-dir", str(tmp_path / "ck")).exit_code == 0
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(yaml.safe_load(STATE_RUN)["node"]))
    got = run("state", "inspect", str(tmp_path / "ck"), "--as-scenario", "--node", str(node),
              "--kubelet-config", str(tmp_path / "run.yaml"), "-o", "yaml")
    assert got.exit_code == 0, got.output
    scenario = yaml.safe_load(got.stdout)
    assert scenario["node"] == yaml.safe_load(STATE_RUN)["node"]
    assert scenario["kubeletConfig"]["reservedSystemCPUs"] == "0,16"
    path = tmp_path / "restored.yaml"
    path.write_text(got.stdout)
    shown = run("simulate", str(path))
    assert shown.exit_code == 0, shown.output
    assert "(no steps)\n" not in shown.stdout
    assert "running at start (restored state)" in shown.stdout
    row = next(line for line in shown.stdout.splitlines() if line.startswith("db-uid"))
    assert row.split()[:4] == ["db-uid", "postgres", "1-2,17-18", "exclusive"]


def test_state_inspect_as_scenario_refuses_a_config_the_kubelet_would_not_start_with(tmp_path: Path) -> None:
    """No scenario is written that ``simulate`` would refuse for its
    configuration: the kubelet's message, the file and the field, exit 2."""
    (tmp_path / "run.yaml").write_text(STATE_RUN)
    assert run("simulate", str(tmp_path / "run.yaml"), "--checkpoint-dir", str(tmp_path / "ck")).exit_code == 0
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(yaml.safe_load(STATE_RUN)["node"]))
    bad = tmp_path / "kubelet.yaml"
    bad.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: statik\n")
    got = run("state", "inspect", str(tmp_path / "ck"), "--as-scenario", "--node", str(node),
              "--kubelet-config", str(bad))
    assert got.exit_code == 2
    assert got.stdout == ""
    assert got.stderr.strip() == f'error: kubelet would not start: unknown policy: "statik" ({bad}: cpuManagerPolicy)'


def test_state_inspect_as_scenario_takes_set(tmp_path: Path) -> None:
    """``--set`` on the scenario's configuration (--kubelet-config's, or
    the kubelet's defaults): baked into the scenario; what the kubelet
    refuses named on ``--set``; without --as-scenario, refused."""
    (tmp_path / "run.yaml").write_text(STATE_RUN)
    assert run("simulate", str(tmp_path / "run.yaml"), "--checkpoint-dir", str(tmp_path / "ck")).exit_code == 0
    node = tmp_path / "node.yaml"
    node.write_text(yaml.safe_dump(yaml.safe_load(STATE_RUN)["node"]))
    args = ["state", "inspect", str(tmp_path / "ck"), "--as-scenario", "--node", str(node),
            "--kubelet-config", str(tmp_path / "run.yaml")]
    got = run(*args, "--set", "cpuManagerPolicyOptions.full-pcpus-only=true", "-o", "yaml")
    assert got.exit_code == 0, got.output
    config = yaml.safe_load(got.stdout)["kubeletConfig"]
    assert config["reservedSystemCPUs"] == "0,16" and config["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}
    bad = run(*args, "--set", "reservedSystemCPUs=0-999")
    assert bad.exit_code == 2 and bad.stdout == ""
    assert bad.stderr.strip().endswith("(--set: reservedSystemCPUs)"), bad.stderr
    alone = run("state", "inspect", str(tmp_path / "ck"), "--set", "maxPods=10")
    assert alone.exit_code == 2
    assert alone.stderr.strip() == "error: --set: changes the configuration of --as-scenario: give --as-scenario too"


def test_state_inspect_node_and_sysfs_are_one_or_the_other(tmp_path: Path) -> None:
    (tmp_path / "ck").mkdir()
    (tmp_path / "node.yaml").write_text("cpus: 4\n")
    got = CliRunner().invoke(cli, ["state", "inspect", str(tmp_path / "ck"), "--as-scenario", "--node",
                                   str(tmp_path / "node.yaml"), "--sysfs", str(tmp_path)])
    assert got.exit_code == 2
    assert "give the machine with --node or --sysfs, not both" in got.stderr


def test_fleet_set_and_the_gates_what_if() -> None:
    report = as_json("fleet", "analyze", str(EXAMPLES / "fleet"), "--what-if", "gates")
    changed = report["changedPods"]["gates"]
    assert {c["pod"] for c in changed} == {
        "analytics/query-engine-58d4c9f7b6-k7m2n", "analytics/query-engine-58d4c9f7b6-w2q8f",
    }
    assert all(c["changes"] == ["container query: the node's shared pool -> exclusive CPUs (4 CPUs)"]
               for c in changed)
    assert report["summary"]["gates"]["changedPods"] == 2
    assert report["summary"]["gates"]["exclusiveCpus"] == report["summary"]["as running"]["exclusiveCpus"] + 8
    # --set turns the gates on for the run as it is: nothing left for the what-if to change
    both = as_json("fleet", "analyze", str(EXAMPLES / "fleet"), "--what-if", "gates",
                   "--set", "featureGates.PodLevelResourceManagers=true")
    assert both["set"] == ["featureGates.PodLevelResourceManagers=true"]
    assert both["changedPods"]["gates"] == []
    assert both["summary"]["as running"]["exclusiveCpus"] == report["summary"]["gates"]["exclusiveCpus"]
    assert all(n["configSource"].endswith("with --set featureGates.PodLevelResourceManagers=true")
               for n in both["nodes"])
    table = run("fleet", "analyze", str(EXAMPLES / "fleet"), "--what-if", "gates")
    assert "pods that change when the gates are on (gates): 2" in table.stdout


@pytest.mark.parametrize("index", ["1000000000000", "9" * 5000, "1025"])
def test_a_list_index_past_the_bound_is_refused_before_anything_is_built(index: str) -> None:
    """An index is bounded (MAX_INDEX) on its digits: no list of that size
    is built, no 5,000-digit number read (Python refuses to), one line."""
    from podnuma.inputs.overrides import MAX_INDEX

    for command in (["simulate", str(STATIC)], ["compare", str(EXAMPLES / "whatif" / "trainer-pod.yaml")]):
        got = run(*command, "--set", f"reservedMemory[{index}].numaNode=0")
        assert got.exit_code == 2
        assert got.stdout == ""
        err = got.stderr.strip()
        assert err.startswith("error: --set: reservedMemory[") and f"is larger than {MAX_INDEX}" in err, err
        assert "\n" not in err and len(err) < 400


@pytest.mark.parametrize("command", [
    ["simulate", str(EXAMPLES / "pod-level" / "restart.yaml")],
    ["explain", str(EXAMPLES / "pod-level" / "restart.yaml")],
    ["compare", str(EXAMPLES / "whatif" / "trainer-pod.yaml")],
    ["advise", str(EXAMPLES / "whatif" / "trainer-pod.yaml")],
])
def test_a_feature_gate_the_start_refuses_is_blamed_on_its_set(command: list[str]) -> None:
    """The kubelet refuses the gates as a whole (featureGates) and names the
    gate: the one --set changed is named, not the file's featureGates."""
    res = CliRunner().invoke(cli, [*command, "--set", "featureGates.PodLevelResources=false"])
    assert res.exit_code == 2, res.output
    line = res.stderr.strip()
    assert "\n" not in line and "depends on features that are disabled: [PodLevelResources]" in line
    assert line.endswith("(--set: featureGates.PodLevelResources)"), line
