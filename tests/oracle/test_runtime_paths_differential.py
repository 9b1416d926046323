"""Where the runtime puts each pod's sandbox and containers in ``podnuma
cgroups plan``, against containerd's and runc's own code
(``runtime-oracle``): the cgroup parent the kubelet hands the runtime is
the pod cgroup's name in the driver's form, as the kubelet oracle gives it
(``kubelet-oracle cgroups``); containerd turns it into the spec's cgroups
path and runc into a cgroup (a ``.scope`` unit under the pod's slice with
systemd, a directory with cgroupfs). Without ``cgroupsPerQOS`` the kubelet
hands no parent: containerd's default ``/k8s.io/<id>`` with cgroupfs, and
with systemd runc's refusal, which podnuma's plan says instead of planning
containers that cannot start. Both cgroup versions: with v1, runc's v1
managers (``fs``, the legacy ``systemd`` one) give the path under every
controller's mount, which must be the one podnuma plans for cgroup v1."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.cgroups_harness import _podnuma_run, plan_oracle, plan_podnuma
from tests.oracle.harness import write_scenario
from tests.oracle.test_cgroup_root_differential import BASE
from tests.oracle.test_differential import EXAMPLES, _load


def _runtime(binary: str, requests: list[dict[str, str]]) -> list[dict[str, str]]:
    proc = subprocess.run([binary], input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(requests)
    return answers


def _compare(kubelet: str, runtime: str, path: Path, driver: str, cgroup_root: str | None = None,
             version: int = 2) -> int:
    """Every sandbox and container podnuma plans, placed by the runtime
    from the parent the kubelet hands it (with cgroup v1, by runc's v1
    managers: the path under each controller's mount); the number
    compared."""
    scn, run, outcome = _podnuma_run(path)
    assert scn is not None, outcome.message
    mine = plan_podnuma(scn, run, None, version, driver, cgroup_root=cgroup_root)
    theirs = plan_oracle(kubelet, [path], version, driver, cgroup_root=cgroup_root)[0]
    assert mine.doc is not None and theirs.doc is not None, (mine.error, theirs.error)
    parents = {c["podUID"]: c["path"] for c in theirs.doc["cgroups"] if c["kind"] == "pod"}
    placed = [c for c in mine.doc["cgroups"] if c["kind"] in ("sandbox", "container")]
    requests = [{"driver": driver, "parent": parents.get(c["podUID"], ""), "id": c["containerID"], "version": version}
                for c in placed]
    for c, answer in zip(placed, _runtime(runtime, requests), strict=True):
        assert answer.get("error") is None, (c, answer)
        assert answer["path"] == c["path"], (c, answer)
    return len(placed)


@pytest.mark.parametrize("version", [2, 1], ids=["cgroup v2", "cgroup v1"])
def test_examples(oracle_binary: str, runtime_oracle: str, version: int) -> None:
    compared = 0
    for example in EXAMPLES:
        doc = _load(example)
        if not doc.get("steps"):
            continue
        scn, _, _ = _podnuma_run(example)
        if scn is None:
            continue
        for driver in ("systemd", "cgroupfs"):
            compared += _compare(oracle_binary, runtime_oracle, example, driver, version=version)
    assert compared > 100


#: (name, kubelet configuration fields, --cgroup-root)
ROOTS: tuple[tuple[str, dict[str, Any], str | None], ...] = (
    ("default", {}, None),
    ("nested", {"cgroupRoot": "/custom/a-b"}, None),
    ("dots", {}, "/a-b/../c-d/./e"),
    ("flag", {"cgroupRoot": "/x"}, "/from-flag"),
    ("no-qos", {"cgroupsPerQOS": False, "enforceNodeAllocatable": []}, None),
    ("no-qos-root", {"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "/custom"}, None),
)


@pytest.mark.parametrize("version", [2, 1], ids=["cgroup v2", "cgroup v1"])
@pytest.mark.parametrize("driver", ["systemd", "cgroupfs"])
@pytest.mark.parametrize(("name", "fields", "flag"), ROOTS, ids=[r[0] for r in ROOTS])
def test_roots(oracle_binary: str, runtime_oracle: str, tmp_path: Path, name: str, fields: dict[str, Any],
               flag: str | None, driver: str, version: int) -> None:
    doc = copy.deepcopy(BASE)
    doc["kubeletConfig"].update(fields)
    path = write_scenario(doc, tmp_path / f"{name}.json")
    no_qos = fields.get("cgroupsPerQOS") is False
    if no_qos and driver == "systemd":
        # no parent: runc refuses containerd's default path; podnuma plans
        # no sandbox or container and says why, in runc's words
        scn, run, _ = _podnuma_run(path)
        mine = plan_podnuma(scn, run, None, version, driver, cgroup_root=flag)
        assert mine.doc is not None
        assert not [c for c in mine.doc["cgroups"] if c["kind"] in ("sandbox", "container")]
        (answer,) = _runtime(runtime_oracle, [{"driver": "systemd", "parent": "", "id": "<id>", "version": version}])
        assert answer["error"] in " ".join(mine.doc["notes"])
        assert "no pod sandbox or container of the 4 running pods can start" in " ".join(mine.doc["notes"])
        return
    compared = _compare(oracle_binary, runtime_oracle, path, driver, flag, version)
    assert compared == 4 + 5  # four sandboxes, five containers
