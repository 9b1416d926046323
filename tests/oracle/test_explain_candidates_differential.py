"""Every change explain's nearest-configuration search tries replays: the
scenario ``podnuma explain --as-scenario --candidate N`` writes for it gives,
in ``podnuma simulate`` and in the kubelet oracle (kubelet v1.37.2's own
code), the same documents; its step of the changed pod has the verdict and
reason the search reported (and, when admitted, the CPUs), and each later
step the search compared (for its side effects) the verdict it reported."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from podnuma.inputs.text import TextInput
from podnuma.render.serialize import dump_scenario_yaml
from podnuma.service import scenario as service
from tests.oracle.harness import compare, run_oracle, run_podnuma

ROOT = Path(__file__).resolve().parents[2]

#: (scenario, rejected step): a family of changes each
CASES = (
    ("examples/pod-level/sidecar-smt.yaml", 0),  # the container at fault, options, rewrite + gates
    ("examples/pod-level/full-pcpus-only.yaml", 2),  # a classic 1-CPU pod
    ("examples/pod-level/pod-scope-3-empty-shared-pool.yaml", None),  # a larger pod budget
    ("examples/topology/restricted.yaml", 6),  # devices, policy, removals
    ("examples/topology/restricted.yaml", 10),  # fewer CPUs
    ("examples/topology/restricted.yaml", 7),  # less memory
)


def _sidecar_gates_on(tmp: Path) -> Path:
    """sidecar-smt.yaml with the gates on and its configuration in a file
    beside it (relative reference): the rewrite without a gate change, and
    a configuration change written inline from the file."""
    doc = yaml.safe_load((ROOT / "examples/pod-level/sidecar-smt.yaml").read_text(encoding="utf-8"))
    cfg = copy.deepcopy(doc.pop("kubeletConfig"))
    cfg["featureGates"] = {"PodLevelResourceManagers": True}
    (tmp / "conf").mkdir()
    (tmp / "conf" / "kubelet.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    doc["kubeletConfigFile"] = "conf/kubelet.yaml"
    path = tmp / "gates-on.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _explain(path: Path, step: int | None) -> service.Explanation:
    return service.explain(TextInput.read(str(path), what="scenario"), step=step)


def _check(oracle: str, path: Path, step: int | None, out: Path) -> int:
    got = _explain(path, step)
    rejected = [a for a in got.document["admissions"] if a["admitted"] is False]
    if step is None:
        if not rejected:
            return 0
        step = rejected[0]["step"]
        got = _explain(path, step)
    candidates = got.document["admissions"][0]["search"]["candidates"]
    assert candidates, f"{path}: no change tried"
    paths: list[Path] = []
    changed: list[int] = []
    for c in candidates:
        doc, at = service.candidate_scenario_at(got, candidate=c["order"])
        p = out / f"{path.stem}-{c['order']}.yaml"
        p.write_text(dump_scenario_yaml(doc), encoding="utf-8")
        paths.append(p)
        changed.append(at)
    theirs_all = run_oracle(oracle, paths)
    report = got.reports[step]
    for c, p, theirs, outcome, at in zip(candidates, paths, theirs_all, report.tried_outcomes, changed, strict=True):
        mine = run_podnuma(p)
        scenario = yaml.safe_load(p.read_text(encoding="utf-8"))
        assert compare(mine, theirs, scenario) == [], (p, c["change"])
        assert mine.doc is not None, (p, mine.message)
        last = mine.doc["steps"][at]
        for effect in outcome.side_effects:  # each other admission as the search reported it
            # (where the step is now: a removal inserted before the changed
            # pod, the steps that no longer apply left out)
            at_now = (effect.step - sum(1 for g in outcome.gone if g < effect.step)
                      + (outcome.variation.kind == "removePod" and effect.step > step))
            now = mine.doc["steps"][at_now]
            assert now["pod"] == effect.pod, (p, effect)
            assert ("admitted" if now["admitted"] else f"rejected ({now['reason']})") == effect.now, (p, effect)
        assert last["admitted"] is c["admitted"], (p, c["change"], last["reason"])
        if not c["admitted"]:
            assert last["reason"] == c["reason"], (p, c["change"])
        elif outcome.cpus is not None:
            taken = [last["podAllocation"]["cpus"]] if last.get("podAllocation") else []
            taken += [x["cpus"] for x in last["containers"] if x["isolation"] != "host"]
            assert outcome.cpus in taken or len(taken) > 1, (p, c["change"], taken)
    return len(candidates)


@pytest.mark.parametrize(("name", "step"), CASES, ids=[f"{c[0].rsplit('/', 1)[-1]}-{c[1]}" for c in CASES])
def test_every_change_tried_replays_in_the_oracle(
    oracle_binary: str, tmp_path: Path, name: str, step: int | None
) -> None:
    _check(oracle_binary, ROOT / name, step, tmp_path)


def test_rewrite_and_options_from_a_configuration_file(oracle_binary: str, tmp_path: Path) -> None:
    path = _sidecar_gates_on(tmp_path)
    got = _explain(path, 0)
    kinds = [c["kind"] for c in got.document["admissions"][0]["search"]["candidates"]]
    assert kinds[:4] == ["containerCPUs", "containerCPUs", "cpuOption", "podLevel"], kinds
    out = tmp_path / "out"
    out.mkdir()
    assert _check(oracle_binary, path, 0, out) == len(kinds)
    # the configuration change is written inline, the file reference dropped
    option = service.candidate_scenario(got, candidate=3)
    assert "kubeletConfigFile" not in option
    assert "cpuManagerPolicyOptions" not in option["kubeletConfig"]
    assert option["kubeletConfig"]["featureGates"] == {"PodLevelResourceManagers": True}
    # a pod change too: the configuration as it ran, inline
    nearest = service.candidate_scenario(got)
    assert "kubeletConfigFile" not in nearest
    assert nearest["kubeletConfig"]["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}


def test_a_topology_option_off(oracle_binary: str, tmp_path: Path) -> None:
    doc = yaml.safe_load((ROOT / "examples/topology/restricted.yaml").read_text(encoding="utf-8"))
    doc["kubeletConfig"]["topologyManagerPolicyOptions"] = {"prefer-closest-numa-nodes": "true"}
    path = tmp_path / "closest.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    got = _explain(path, 6)
    kinds = [c["kind"] for c in got.document["admissions"][0]["search"]["candidates"]]
    assert "topologyOption" in kinds, kinds
    out = tmp_path / "out"
    out.mkdir()
    assert _check(oracle_binary, path, 6, out) == len(kinds)
