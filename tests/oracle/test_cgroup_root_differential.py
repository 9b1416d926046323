"""The kubelet configuration's ``cgroupRoot`` and ``cgroupsPerQOS`` (and
the kubelet's ``--cgroup-root`` flag in place of the field) in ``podnuma
cgroups plan``, against the kubelet's own code (``kubelet-oracle cgroups``):
cgroup v1 and v2, cgroupfs and systemd drivers. Compared as
tests/oracle/cgroups_harness.py compares plans (every kubelet-written
cgroup by path and files, containers by pod and name), and the start-up
refusals (``enforceNodeAllocatable`` without ``cgroupsPerQOS``, a root
the systemd driver cannot name) by their message."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.oracle.cgroups_harness import (
    Cgroups,
    _podnuma_run,
    compare_cgroups,
    plan_oracle,
    plan_podnuma,
)
from tests.oracle.harness import write_scenario

#: every (cgroup version, driver) pair
PAIRS = ((2, "systemd"), (2, "cgroupfs"), (1, "systemd"), (1, "cgroupfs"))

_POD_G = {
    "metadata": {"name": "g", "namespace": "t", "uid": "11111111-aaaa-bbbb-cccc-000000000001"},
    "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "2", "memory": "1Gi",
                                                                   "hugepages-2Mi": "64Mi"}}}]},
}
_POD_B = {
    "metadata": {"name": "b", "namespace": "t", "uid": "11111111-aaaa-bbbb-cccc-000000000002"},
    "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "256Mi"},
                                                         "limits": {"cpu": "1", "memory": "512Mi"}}}]},
}
_POD_BE = {
    "metadata": {"name": "be", "namespace": "t", "uid": "11111111-aaaa-bbbb-cccc-000000000003"},
    "spec": {"containers": [{"name": "app"}]},
}
#: pod-level resources (a pod limit the containers inherit; no pod cgroup
#: holds it without cgroupsPerQOS)
_POD_PLR = {
    "metadata": {"name": "plr", "namespace": "t", "uid": "11111111-aaaa-bbbb-cccc-000000000004"},
    "spec": {"resources": {"requests": {"cpu": "500m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
             "containers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "100m"}}}]},
}

BASE: dict[str, Any] = {
    "apiVersion": "podnuma.io/v1",
    "kind": "Scenario",
    "node": {"name": "tree", "synthetic": {
        "sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4, "threadsPerCore": 2,
        "memoryPerNumaNode": "16Gi", "hugepagesPerNumaNode": {"hugepages-2Mi": "1Gi"}}},
    "kubeletConfig": {
        "cpuManagerPolicy": "static", "reservedSystemCPUs": "0", "memoryManagerPolicy": "Static",
        "systemReserved": {"memory": "924Mi"}, "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}],
    },
    "steps": [{"addPod": p} for p in (_POD_G, _POD_B, _POD_BE, _POD_PLR)],
}

#: (name, kubelet configuration fields set, --cgroup-root or None)
CASES: tuple[tuple[str, dict[str, Any], str | None], ...] = (
    ("root-nested", {"cgroupRoot": "/custom/a-b"}, None),
    ("root-underscore-no-slash", {"cgroupRoot": "k_8/x.y"}, None),
    ("root-flag-wins", {"cgroupRoot": "/from-config"}, "/from-flag"),
    ("root-flag-empty", {"cgroupRoot": "/from-config"}, ""),
    ("root-slash", {"cgroupRoot": "/"}, None),
    ("capacity-sized-kubepods", {"cgroupRoot": "/custom", "enforceNodeAllocatable": []}, None),
    ("no-qos-root", {"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "/custom/n-q"}, None),
    ("no-qos-flag", {"cgroupsPerQOS": False, "enforceNodeAllocatable": ["none"]}, "/flagged"),
    ("no-qos-no-root", {"cgroupsPerQOS": False, "enforceNodeAllocatable": ["none"]}, None),
    ("no-qos-slash", {"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "/"}, None),
    # a root of slashes only: the name ["", ""], updated at "/" (ToCgroupfs
    # "/"; ToSystemd: ExpandSlice("-.slice") is "/")
    ("no-qos-two-slashes", {"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "//"}, None),
    ("no-qos-two-slashes-flag", {"cgroupsPerQOS": False, "enforceNodeAllocatable": []}, "//"),
    # "." and "..": cleaned by path.Join (cgroupfs), parts of slice names (systemd)
    ("root-dot", {"cgroupRoot": "/a/./b"}, None),
    ("root-dotdot", {"cgroupRoot": "/custom/.."}, None),
    ("root-dot-flag", {"cgroupRoot": "/x"}, "./a-b/c"),
    ("root-dotdot-inside", {}, "/a-b/../c-d/./e"),
    ("root-just-dot", {}, "."),
    ("no-qos-dot", {"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "/."}, None),
    ("no-qos-dotdot-inside", {"cgroupsPerQOS": False, "enforceNodeAllocatable": []}, "/x/../y"),
    ("no-qos-memory-qos-off", {"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "/m",
                               "featureGates": {"MemoryQoS": False}}, None),
    ("no-qos-policy-none", {"cgroupsPerQOS": False, "enforceNodeAllocatable": [], "cgroupRoot": "/c",
                            "cpuManagerPolicy": "none", "reservedSystemCPUs": None, "memoryManagerPolicy": "None",
                            "reservedMemory": None}, None),
)  # fmt: skip


def _scenario(tmp_path: Path, name: str, fields: dict[str, Any]) -> Path:
    doc = copy.deepcopy(BASE)
    kc = doc["kubeletConfig"]
    for key, value in fields.items():
        if value is None:
            kc.pop(key, None)
        else:
            kc[key] = value
    return write_scenario(doc, tmp_path / f"{name}.json")


def _both(binary: str, path: Path, version: int, driver: str, flag: str | None) -> tuple[Cgroups, Cgroups]:
    scn, run, outcome = _podnuma_run(path)
    # (a configuration the kubelet refuses at start stops the run itself,
    # as it stops simulate and every other command)
    mine = (plan_podnuma(scn, run, None, version, driver, cgroup_root=flag) if scn is not None
            else Cgroups(None, outcome.message))
    theirs = plan_oracle(binary, [path], version, driver, cgroup_root=flag)[0]
    return mine, theirs


@pytest.mark.parametrize(("version", "driver"), PAIRS, ids=lambda v: str(v))
@pytest.mark.parametrize(("name", "fields", "flag"), CASES, ids=[c[0] for c in CASES])
def test_plans_agree(
    oracle_binary: str, tmp_path: Path, name: str, fields: dict[str, Any], flag: str | None, version: int, driver: str
) -> None:
    mine, theirs = _both(oracle_binary, _scenario(tmp_path, name, fields), version, driver, flag)
    assert mine.doc is not None, mine.error
    assert theirs.doc is not None, theirs.error
    assert compare_cgroups(mine, theirs) == []
    kinds = {c["kind"] for c in mine.doc["cgroups"]}
    per_qos = fields.get("cgroupsPerQOS", True)
    # the layouts are what the case is about, not only equal
    assert ("pod" in kinds) == per_qos and ("node" in kinds) == per_qos
    written_roots = [c["path"] for c in mine.doc["cgroups"] if c["kind"] == "root" and c["files"]]
    root = fields.get("cgroupRoot", "") if flag is None else flag
    if per_qos or root in ("", "/"):
        assert written_roots == []
    else:
        theirs_roots = [c["path"] for c in theirs.doc["cgroups"] if c["kind"] == "root"]
        assert len(written_roots) == 1 and written_roots == ["/" if p == "/." else p for p in theirs_roots]


_NO_QOS_WORDS = ('invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" '
                 "contained in enforceNodeAllocatable (--enforce-node-allocatable)")

#: the kubelet refuses to start: (name, fields, flag, the words both give)
REFUSALS: tuple[tuple[str, dict[str, Any], str | None, str, tuple[str, ...]], ...] = (
    ("no-qos-default-enforcement", {"cgroupsPerQOS": False}, None, "",
     ('invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" contained in '
      "enforceNodeAllocatable (--enforce-node-allocatable)",)),
    ("no-qos-pods-and-none", {"cgroupsPerQOS": False, "enforceNodeAllocatable": ["pods", "none"]}, None, "",
     ('[invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when "pods" contained in '
      "enforceNodeAllocatable (--enforce-node-allocatable), invalid configuration: enforceNodeAllocatable "
      '(--enforce-node-allocatable) may not contain additional enforcements when "none" is specified]',)),
    ("enforcement-values", {"cgroupsPerQOS": False, "enforceNodeAllocatable": ["bogus", "pods", "pods", "kube-reserved"]},
     None, "",
     ('[invalid configuration: option "bogus" specified for enforceNodeAllocatable (--enforce-node-allocatable). '
      'Valid options are "pods", "system-reserved", "system-reserved-compressible", "kube-reserved", '
      '"kube-reserved-compressible" or "none", invalid configuration: cgroupsPerQOS (--cgroups-per-qos) must be set '
      'to true when "pods" contained in enforceNodeAllocatable (--enforce-node-allocatable), invalid configuration: '
      'duplicated enforcements "pods" in enforceNodeAllocatable (--enforce-node-allocatable), invalid configuration: '
      'kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "kube-reserved" or '
      '"kube-reserved-compressible" included in enforceNodeAllocatable (--enforce-node-allocatable), invalid '
      'configuration: cgroupsPerQOS (--cgroups-per-qos) must be set to true when "kube-reserved" contained in '
      "enforceNodeAllocatable (--enforce-node-allocatable)]",)),
    ("systemd-empty-component", {"cgroupRoot": "/custom/"}, None, "systemd", ("invalid slice name: custom--kubepods.slice",)),
    ("systemd-empty-component-no-qos", {"cgroupsPerQOS": False, "enforceNodeAllocatable": []}, "a//b", "systemd",
     ("invalid slice name: a--b.slice",)),
    ("systemd-three-slashes-no-qos", {"cgroupsPerQOS": False, "enforceNodeAllocatable": []}, "///", "systemd",
     ("invalid slice name: --.slice",)),
    ("systemd-two-slashes-qos", {"cgroupRoot": "//"}, None, "systemd", ("invalid slice name: --kubepods.slice",)),
    # a bad root and an invalid configuration: the configuration is
    # validated first (server.go ValidateKubeletConfiguration, before
    # NodeAllocatableRoot)
    ("bad-root-and-invalid-config", {"cgroupsPerQOS": False}, "/a//b", "", (_NO_QOS_WORDS,)),
    ("bad-config-root-and-invalid-config", {"cgroupsPerQOS": False, "cgroupRoot": "/a//b"}, None, "",
     (_NO_QOS_WORDS,)),
)  # fmt: skip


@pytest.mark.parametrize(("version", "driver"), PAIRS, ids=lambda v: str(v))
@pytest.mark.parametrize(("name", "fields", "flag", "only", "words"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_refusals_agree(
    oracle_binary: str, tmp_path: Path, name: str, fields: dict[str, Any], flag: str | None, only: str,
    words: tuple[str, ...], version: int, driver: str,
) -> None:
    mine, theirs = _both(oracle_binary, _scenario(tmp_path, name, fields), version, driver, flag)
    if only and driver != only:  # (cgroupfs drops an empty component: both plan)
        assert mine.doc is not None and theirs.doc is not None, (mine.error, theirs.error)
        assert compare_cgroups(mine, theirs) == []
        return
    assert mine.doc is None and theirs.doc is None, (mine.error, theirs.error)
    for w in words:
        assert w in mine.error and w in theirs.error, (mine.error, theirs.error)


@pytest.mark.parametrize(("version", "driver"), PAIRS, ids=lambda v: str(v))
@pytest.mark.parametrize("name", ["bad-root-and-invalid-config", "bad-config-root-and-invalid-config"])
def test_configuration_refused_before_the_root(oracle_binary: str, tmp_path: Path, name: str, version: int,
                                                driver: str) -> None:
    # plan_cgroups without a run (the CLI's way): the scenario's start-up
    # validation comes before the root is read, as in the kubelet
    from podnuma.cgroups import plan_cgroups
    from podnuma.errors import InputError, KubeletStartupError
    from podnuma.inputs.scenario import load_scenario

    _, fields, flag, _, words = next(r for r in REFUSALS if r[0] == name)
    path = _scenario(tmp_path, name, fields)
    with pytest.raises((InputError, KubeletStartupError)) as err:
        plan_cgroups(load_scenario(path), driver=driver, version=version, cgroup_root=flag)  # type: ignore[arg-type]
    theirs = plan_oracle(oracle_binary, [path], version, driver, cgroup_root=flag)[0]
    assert theirs.doc is None
    for w in words:
        assert w in str(err.value) and w in theirs.error, (str(err.value), theirs.error)


@pytest.mark.parametrize("version", [2, 1])
@pytest.mark.parametrize("flag", ["/..", "../x", "/a/../.."])
def test_cgroupfs_root_above_the_root_is_podnumas_refusal(oracle_binary: str, tmp_path: Path, flag: str,
                                                          version: int) -> None:
    # the one deliberate difference: path.Join keeps a leading "..", so the
    # kubelet's cgroupfs name is "/../kubepods" (above the hierarchy's
    # root); podnuma writes only under its root and refuses it
    mine, theirs = _both(oracle_binary, _scenario(tmp_path, "up", {}), version, "cgroupfs", flag)
    assert theirs.doc is not None, theirs.error
    assert all(c["path"].startswith("/../") for c in theirs.doc["cgroups"] if c["kind"] in ("node", "qos"))
    assert mine.doc is None and "names a cgroup above the cgroup root" in (mine.error or "")
    # the systemd driver names slices: both plan the same
    mine, theirs = _both(oracle_binary, _scenario(tmp_path, "up", {}), version, "systemd", flag)
    assert compare_cgroups(mine, theirs) == []
