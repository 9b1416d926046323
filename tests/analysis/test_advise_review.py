"""``podnuma advise`` after review: the restart what-if of workloads, the
budget raised for an init container, the other node shape against the pod
as written, the replay of skipped pods, named restart lines, and the words
under topology scope container. Each figure printed is checked against
``-o json``, ``-o yaml`` and the ``--as-scenario`` replay in ``podnuma
simulate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli

#: a Deployment and a CronJob with a 1-CPU native sidecar (the review's p6)
DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
        - name: logs
          restartPolicy: Always
          resources: {limits: {cpu: "1", memory: 256Mi}}
      containers:
        - name: web
          resources: {limits: {cpu: "6", memory: 6Gi}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: prod}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          initContainers:
            - name: logs
              restartPolicy: Always
              resources: {limits: {cpu: "1", memory: 256Mi}}
          containers:
            - name: job
              resources: {limits: {cpu: "2", memory: 2Gi}}
"""

#: a ReplicationController, a PodTemplate, a Deployment in a DeploymentList (p12)
KINDS = """\
apiVersion: v1
kind: ReplicationController
metadata: {name: rc1}
spec:
  template:
    metadata: {labels: {a: b}}
    spec:
      initContainers:
        - {name: logs, restartPolicy: Always, resources: {limits: {cpu: "1", memory: 256Mi}}}
      containers:
        - {name: web, resources: {limits: {cpu: "2", memory: 2Gi}}}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: pt1}
template:
  spec:
    initContainers:
      - {name: logs, restartPolicy: Always, resources: {limits: {cpu: "1", memory: 256Mi}}}
    containers:
      - {name: web, resources: {limits: {cpu: "2", memory: 2Gi}}}
---
apiVersion: apps/v1
kind: DeploymentList
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: d1}
    spec:
      template:
        spec:
          initContainers:
            - {name: logs, restartPolicy: Always, resources: {limits: {cpu: "1", memory: 256Mi}}}
          containers:
            - {name: web, resources: {limits: {cpu: "2", memory: 2Gi}}}
"""

#: an init container asking 6 CPUs, a native sidecar 1, the app 4 (p1)
INIT = """\
apiVersion: v1
kind: Pod
metadata: {name: initpod, namespace: default}
spec:
  initContainers:
    - name: setup
      resources: {limits: {cpu: "6", memory: 1Gi}}
    - name: envoy
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
    - name: app
      resources: {limits: {cpu: "4", memory: 4Gi}}
"""

#: two pods with a native sidecar each (p7)
TWO = """\
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  initContainers:
    - name: logs
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
    - name: web
      resources: {limits: {cpu: "6", memory: 6Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  initContainers:
    - name: logs
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
    - name: web
      resources: {limits: {cpu: "2", memory: 2Gi}}
"""

#: a 16-CPU trainer that fits no NUMA node of the built-in node (p8)
BIG = """\
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml}
spec:
  initContainers:
    - name: side
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
    - name: train
      resources: {limits: {cpu: "16", memory: 8Gi}}
"""


def _file(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _run(*args: str) -> Result:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, (r.stdout, r.stderr)
    return r


def _report(*args: str) -> dict[str, Any]:
    """advise's ``-o json`` report; ``-o yaml`` is the same document."""
    doc: dict[str, Any] = json.loads(_run("advise", *args, "-o", "json").stdout)
    as_yaml = yaml.safe_load(_run("advise", *args, "-o", "yaml").stdout)
    assert json.loads(json.dumps(as_yaml)) == doc
    return doc


def _simulate(path: Path) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = json.loads(_run("simulate", str(path), "-o", "json").stdout)["steps"]
    return steps


def _held(step: dict[str, Any], empty: str) -> int:
    from podnuma.machine.cpuset import CPUSet

    return CPUSet.parse(empty).size() - CPUSet.parse(step["defaultCpuSet"]).size()


def _isolated(step: dict[str, Any], isolation: str) -> int:
    from podnuma.machine.cpuset import CPUSet

    cpus = CPUSet()
    for c in step["containers"]:
        if c["type"] != "init" and c["isolation"] == isolation:
            cpus = cpus | CPUSet.parse(c["cpus"])
    return cpus.size()


def _density(steps: list[dict[str, Any]], first: int, copies: int) -> int:
    added = [s for s in steps[first:] if s["op"] == "addPod"][:copies]
    return sum(1 for s in added if s["admitted"])


# --------------------------------------------------------------------------
# 1. the restart what-if restarts the workload's pod


def test_restart_what_if_runs_the_pod_of_every_workload_kind(tmp_path: Path) -> None:
    for name, text, pods in (("deploy.yaml", DEPLOY, ["Deployment prod/web", "CronJob prod/nightly"]),
                             ("kinds.yaml", KINDS, ["ReplicationController default/rc1",
                                                    "PodTemplate default/pt1", "Deployment default/d1"])):
        f = _file(tmp_path, name, text)
        doc = _report(str(f))
        assert [p["status"] for p in doc["pods"]] == ["rewritten"] * len(pods)
        assert sorted({r["pod"] for r in doc["restart"]}) == sorted(pods)
        for r in doc["restart"]:
            assert r["outcome"] != "notAdmitted", r["summary"]
            assert "not a valid pod" not in r["summary"]
            assert r["scenario"] is not None
            (step,) = r["scenario"]["steps"][:1]
            assert step["addPod"]["apiVersion"] == "v1" and step["addPod"]["kind"] == "Pod"
        text_out = _run("advise", str(f)).stdout
        assert "not a valid pod" not in text_out
        # the same outcome as compare's, which measures the workload's pod
        compared = json.loads(_run("compare", str(f), "-o", "json").stdout)["restart"]
        for r in doc["restart"]:
            same = [c for c in compared if (c["pod"], c["form"], c["scope"]) == (r["pod"], r["form"], r["scope"])]
            assert [c["outcome"] for c in same] == [r["outcome"]], r["pod"]


# --------------------------------------------------------------------------
# 2. the budget raised to cover an init container: figures and words agree


def test_budget_raised_for_an_init_container_is_said_and_the_pool_is_the_real_one(tmp_path: Path) -> None:
    f = _file(tmp_path, "init.yaml", INIT)
    doc = _report(str(f))
    (p,) = doc["pods"]
    assert p["status"] == "rewritten"
    assert p["rewrite"]["spec"]["resources"]["requests"]["cpu"] == "6"
    # the pool the budget gives is the pool measured, everywhere
    assert p["sharedPoolCpus"] == p["savings"]["podSharedCpusAfter"] == 2
    assert p["askedSharedPoolCpus"] == 1
    (c,) = p["candidates"]
    assert c["sharedPoolCpus"] == 2 and c["askedSharedPoolCpus"] == 1 and c["budgetCpus"] == "6"
    assert c["budgetBeyondSlicesCpus"] == 2
    assert c["budgetRaised"].startswith("budget raised from 5 (exclusive slices 4 + 1) to 6: the init container "
                                        "setup asks for 6 CPU(s)")
    assert any(n.startswith("pod shared pool of 2 CPU(s), not the 1 asked for: budget raised from 5")
               for n in p["notes"])
    out = _run("advise", str(f)).stdout
    assert "# tried: shared pool 2 CPU(s), budget cpu=6 (1 CPU(s) asked for; budget raised from 5" in out
    assert "shared pool 1 CPU(s)" not in out
    assert "the 1 go to the pod's shared pool" not in out
    assert "CPUs taken from the node unchanged (6): the pod's shared pool holds 2" in out
    assert "pod shared pool 2 CPU(s)" in out
    # --shared-pool-cpus 1 says the budget was raised; 2 is slices + 2 and says nothing
    one = _report(str(f), "--shared-pool-cpus", "1")["pods"][0]
    two = _report(str(f), "--shared-pool-cpus", "2")["pods"][0]
    assert one["rewrite"] == two["rewrite"]
    assert one["candidates"][0]["budgetRaised"] is not None
    assert two["candidates"][0]["budgetRaised"] is None
    assert two["sharedPoolCpus"] == two["askedSharedPoolCpus"] == 2
    # the replay gives the pool printed
    replay = tmp_path / "replay.yaml"
    got = _run("advise", str(f), "--as-scenario", str(replay), "-o", "json")
    (ix,) = json.loads(got.stdout)["replay"]
    steps = _simulate(replay)
    assert _isolated(steps[ix["afterStep"]], "pod") == 2
    assert _isolated(steps[ix["afterStep"]], "container") == 4


def test_shared_pool_cpus_help_says_the_budget_may_be_raised() -> None:
    out = _run("advise", "--help").stdout
    assert "init container" in " ".join(out.split())


# --------------------------------------------------------------------------
# 3. the other node shape: is the bigger node alone enough?


def test_other_shape_says_the_bigger_node_alone_is_enough(tmp_path: Path) -> None:
    f = _file(tmp_path, "big.yaml", BIG)
    doc = _report(str(f))
    (p,) = doc["pods"]
    assert p["status"] == "skipped" and p["before"]["admitted"] is False
    shape = p["otherNodeShape"]
    assert shape["nodeAloneEnough"] is True
    written = shape["asWritten"]
    assert written["admitted"] is True and written["density"] == shape["density"] == 1
    out = _run("advise", str(f)).stdout
    assert "# as written: rejected on this node: TopologyAffinityError" in out
    assert "the bigger node alone is enough: the pod as written is admitted there too" in out
    assert "(no more copies than as written)" in out
    # compare on that shape's node says the same of the pod as written
    node = _file(tmp_path, "shape.yaml", yaml.safe_dump(shape["node"]))
    compared = json.loads(_run("compare", str(f), "--node", str(node), "-o", "json").stdout)
    (pod,) = compared["pods"]
    runs = {(r["form"], r["scope"]): r for r in pod["runs"]}
    as_written = runs[("perContainer", doc["kubeletConfig"]["topologyManagerScope"])]
    assert as_written["admitted"] is True
    assert as_written["density"] == written["density"]
    assert as_written["exclusiveCpus"]["count"] == written["exclusiveCpus"]


# --------------------------------------------------------------------------
# 4. --as-scenario replays the pods no form of which is admitted


def test_as_scenario_replays_a_skipped_pod_and_its_other_shape(tmp_path: Path) -> None:
    f = _file(tmp_path, "big.yaml", BIG)
    replay = tmp_path / "replay.yaml"
    got = _run("advise", str(f), "--as-scenario", str(replay), "-o", "json")
    report = json.loads(got.stdout)
    (p,) = report["pods"]
    ix, at_shape = report["replay"]
    assert ix["status"] == "skipped" and ix["afterStep"] is None and ix["shape"] is None
    steps = _simulate(replay)
    assert steps, "the scenario replays nothing"
    b0 = steps[ix["beforeStep"]]
    assert (b0["admitted"], b0["reason"], b0["message"]) == (
        p["before"]["admitted"], p["before"]["reason"], p["before"]["message"])
    assert len(ix["triedSteps"]) == len(p["candidates"]) == 3
    for c, at in zip(p["candidates"], ix["triedSteps"], strict=True):
        s = steps[at]
        assert s["admitted"] is False
        assert f"{s['reason']}: {s['message']}" == c["reason"]
    assert f"{replay}: ml/big: as written at step 0, the refused forms tried at step(s) 1, 2, 3" in got.stderr
    # the other shape: a scenario of its own, beside the first
    shaped = tmp_path / "replay.shape-1.yaml"
    assert f"{shaped}: ml/big on the other node shape" in got.stderr
    scenario = yaml.safe_load(shaped.read_text())
    # (the YAML's integer keys, NUMA ids, are JSON's strings)
    assert json.loads(json.dumps(scenario["node"])) == p["otherNodeShape"]["node"]
    steps = _simulate(shaped)
    shape = p["otherNodeShape"]
    adds = [s for s in steps if s["op"] == "addPod"]
    written = [s for s in adds if "-as-written-" in s["pod"]]
    rewritten = [s for s in adds if "-pod-level-" in s["pod"]]
    assert sum(s["admitted"] for s in written) == shape["asWritten"]["density"]
    assert sum(s["admitted"] for s in rewritten) == shape["density"]
    assert _isolated(written[0], "container") == shape["asWritten"]["exclusiveCpus"]
    assert _isolated(rewritten[0], "container") == shape["exclusiveCpus"]
    # -o json's replay[] says where the shape's figures sit in that file
    assert (at_shape["shape"], at_shape["podIndex"], at_shape["status"]) == (1, 0, "otherNodeShape")
    first = steps[at_shape["beforeStep"]:at_shape["beforeStep"] + at_shape["beforeCopies"]]
    assert [s["pod"] for s in first] == [s["pod"] for s in written]
    assert sum(s["admitted"] for s in first) == shape["asWritten"]["density"]
    after = steps[at_shape["afterStep"]:at_shape["afterStep"] + at_shape["afterCopies"]]
    assert [s["pod"] for s in after] == [s["pod"] for s in rewritten]
    assert sum(s["admitted"] for s in after) == shape["density"]


def test_as_scenario_replays_the_refused_forms_of_a_rewritten_pod(tmp_path: Path) -> None:
    """Under full-pcpus-only the odd budget is refused (SMTAlignmentError)
    before the even one is chosen: the refusal replays too, and the chosen
    form's figures still sit where the index says."""
    root = Path(__file__).resolve().parents[2] / "examples" / "whatif"
    args = [str(root / "trainer-mesh.yaml"), "--node", str(root / "node.yaml"), "--kubelet-config",
            str(root / "kubelet-config-full-pcpus.yaml"), "--strategy", "max-freed"]
    replay = tmp_path / "replay.yaml"
    report = json.loads(_run("advise", *args, "--as-scenario", str(replay), "-o", "json").stdout)
    (p,) = report["pods"]
    (ix,) = report["replay"]
    steps = _simulate(replay)
    assert [c["verdict"] for c in p["candidates"]] == ["refused", "chosen"]
    refused = steps[ix["triedSteps"][0]]
    assert refused["admitted"] is False
    assert f"{refused['reason']}: {refused['message']}" == p["candidates"][0]["reason"]
    assert ix["triedSteps"][1] == ix["afterStep"]
    a0 = steps[ix["afterStep"]]
    assert a0["admitted"] is True
    assert _isolated(a0, "container") == p["after"]["exclusiveCpus"]["count"]
    assert _isolated(a0, "pod") == p["sharedPoolCpus"] == p["after"]["podSharedCpus"]["count"]
    assert _density(steps, ix["afterStep"], ix["afterCopies"]) == p["after"]["density"]
    assert _density(steps, ix["beforeStep"], ix["beforeCopies"]) == p["before"]["density"]


def test_as_scenario_says_when_nothing_printed_is_replayable(tmp_path: Path) -> None:
    f = _file(tmp_path, "burst.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: burst}\nspec:\n  containers:\n"
              "    - name: a\n      resources: {requests: {cpu: '1'}}\n")
    replay = tmp_path / "replay.yaml"
    got = _run("advise", str(f), "--as-scenario", str(replay))
    assert f"{replay}: default/burst: nothing to replay: skipped before anything was measured" in got.stderr
    assert f"{replay}: nothing printed is replayable" in got.stderr


# --------------------------------------------------------------------------
# 5. the restart lines name their pod


def test_restart_lines_name_the_pod(tmp_path: Path) -> None:
    f = _file(tmp_path, "two.yaml", TWO)
    out = _run("advise", str(f)).stdout
    lines = [ln for ln in out.splitlines() if " / scope " in ln]
    assert len(lines) == 4
    assert [ln.split(":")[0] for ln in lines] == ["#   default/a"] * 2 + ["#   default/b"] * 2
    assert lines[0].startswith("#   default/a: per-container / scope pod: ")


# --------------------------------------------------------------------------
# 6. topology scope container: no pod shared pool is named


def test_container_scope_names_the_node_shared_pool(tmp_path: Path) -> None:
    f = _file(tmp_path, "two.yaml", TWO)
    args = [str(f), "--set", "topologyManagerScope=container"]
    doc = _report(*args)
    out = _run("advise", *args).stdout
    assert "pod shared pool: logs" not in out
    assert "tried: shared pool" not in out
    assert "pod's shared pool holds" not in out
    assert out.count("node shared pool (scope container): logs") == 2
    assert "# tried: budget cpu=7 (exclusive slices + 1 CPU(s); scope container: no pod shared pool): " in out
    assert out.count("no pod shared pool: on the node shared pool: logs") == 2
    replay = tmp_path / "replay.yaml"
    got = json.loads(_run("advise", *args, "--as-scenario", str(replay), "-o", "json").stdout)
    steps = _simulate(replay)
    for p, ix in zip(doc["pods"], got["replay"], strict=True):
        assert p["status"] == "rewritten"
        assert p["sharedPoolCpus"] == p["savings"]["podSharedCpusAfter"] == 0
        assert p["after"]["nodeSharedContainers"] == ["logs"]
        (c,) = p["candidates"]
        assert c["sharedPoolCpus"] == 0 and c["budgetBeyondSlicesCpus"] == 1
        # (the words of the tried line, for the web page: no pod shared pool named)
        assert c["form"] == (f"budget cpu={c['budgetCpus']} (exclusive slices + 1 CPU(s); "
                             "scope container: no pod shared pool)")
        a0 = steps[ix["afterStep"]]
        assert _isolated(a0, "pod") == 0
        assert [x["name"] for x in a0["containers"] if x["isolation"] == "host"] == ["logs"]


SERVED = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  template:
    spec:
      initContainers:
        - name: side
          restartPolicy: Always
          resources: {limits: {cpu: "1", memory: MEM}}
      containers:
        - name: app
          resources: {limits: {cpu: "4", memory: 4Gi}}
"""


def test_the_pod_is_advised_as_the_api_server_stores_it(tmp_path: Path) -> None:
    """0.5Gi reaches the kubelet as 512Mi (the API server stores quantities
    canonically): the same advice as for 512Mi, not a pod 'rejected as
    written'; a value past int64 is one line naming the file and field."""
    docs = [_report(str(_file(tmp_path, f"{m}.yaml", SERVED.replace("MEM", m)))) for m in ("0.5Gi", "512Mi")]
    for doc in docs:
        for p in doc["pods"]:
            p.pop("source")
    assert docs[0] == docs[1]
    assert docs[0]["pods"][0]["status"] == "rewritten"
    huge = _file(tmp_path, "huge.yaml", SERVED.replace('cpu: "4"', "cpu: 99999999999999999999999")
                 .replace("MEM", "512Mi"))
    r = CliRunner().invoke(cli, ["advise", str(huge)])
    assert r.exit_code == 2 and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"error: {huge}: spec.template.spec.containers[0].resources.limits[cpu]: ")
    assert "more than the kubelet counts in an int64" in line
