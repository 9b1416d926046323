"""podnuma against a real kubelet v1.37.2 on this machine.

The kubelet runs as root with the fake CRI runtime, the static CPU manager
(CPU 0 reserved), the Static memory manager, the single-numa-node topology
manager and both pod-level gates, on this machine's cgroups (cgroupfs
driver, a cgroup root of its own): once in pod scope, once in container
scope (each a kubelet of its own, one after the other, each with its pods
in a namespace of its own). Pods are created through the API, one at a
time, each waited for until the kubelet admitted it (Running) or rejected
it (Failed, with the kubelet's reason and message). Then:

- ``podnuma simulate`` of the same pods, on this machine's sysfs with the
  same configuration, admits and rejects the same pods with the same
  reasons and messages, and writes the same checkpoint files;
- ``podnuma state inspect`` reads the kubelet's checkpoint files;
- ``podnuma podresources list`` reads the kubelet's PodResources socket;
- ``podnuma cgroups plan`` gives the values of the pod cgroups the kubelet
  created and of the container resources it asked the runtime for;
- ``fleet analyze --kubeconfig`` reads the kubelet's configz through the
  API server's nodes/proxy.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from . import controlplane, node
from .conftest import need_binaries
from .controlplane import ControlPlane
from .node import Kubelet

NS = {"pod": "kubelet-test", "container": "kubelet-container-scope"}
IMAGE = "registry.k8s.io/pause:3.10"


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"terminationGracePeriodSeconds": 0, **spec}}


def _c(name: str, **resources: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": IMAGE}
    if resources:
        c["resources"] = resources
    return c


G1 = {"cpu": "1", "memory": "256Mi"}
# In creation order: what this 2-CPU machine (CPU 0 reserved) allows to show.
POD_SCOPE = [
    # Pod-level budget, a sidecar and an app container sharing it: the
    # pod's pool is exclusive CPU 1, memory pinned to NUMA node 0.
    _pod("pod-level", {"resources": {"requests": G1, "limits": G1},
                       "initContainers": [{**_c("side"), "restartPolicy": "Always"}],
                       "containers": [_c("app")]}),
    # Guaranteed with an integral CPU: no exclusive CPU left, no hint can
    # satisfy single-numa-node.
    _pod("exclusive", {"containers": [_c("app", requests=G1, limits=G1)]}),
    # BestEffort: the shared pool.
    _pod("besteffort", {"containers": [_c("app")]}),
    # Burstable: node allocatable CPU is all taken.
    _pod("burstable", {"containers": [_c("app", requests={"cpu": "100m", "memory": "64Mi"})]}),
]
APP = {"cpu": "1", "memory": "128Mi"}
CONTAINER_SCOPE = [
    # Pod-level budget; the app container (Guaranteed-equivalent, 1 CPU)
    # gets exclusive CPU 1 and 128Mi pinned on NUMA node 0, aligned on its
    # own; the sidecar runs in the node's shared pool (CPU 0).
    _pod("mixed", {"resources": {"requests": G1, "limits": G1},
                   "initContainers": [{**_c("side"), "restartPolicy": "Always"}],
                   "containers": [_c("app", requests=APP, limits=APP)]}),
    *POD_SCOPE[1:],
]
PODS = {"pod": POD_SCOPE, "container": CONTAINER_SCOPE}

HONOURED = ("featureGates", "cpuManagerPolicy", "cpuManagerPolicyOptions", "reservedSystemCPUs",
            "kubeReserved", "systemReserved", "evictionHard", "memoryManagerPolicy",
            "reservedMemory", "topologyManagerPolicy", "topologyManagerScope",
            "topologyManagerPolicyOptions")


def _environment_lacks() -> str | None:
    """Why the kubelet cannot run here, if this machine lacks what it needs."""
    if sys.platform != "linux":
        return "the kubelet runs on Linux only"
    if os.geteuid() != 0:
        return "the kubelet needs root (it creates cgroups and runs as the node agent)"
    if node.cgroup_version() == 1 and "cpuset" not in node.v1_hierarchies():
        return "no cpuset cgroup controller is mounted"
    if node.host_ip() is None:
        return ("no non-loopback IPv4 address: the API server does not proxy to a kubelet "
                "on loopback (nodes/proxy: 400 address not allowed)")
    if not os.access(node.CGROUP_FS, os.W_OK) and not any(
            os.access(p, os.W_OK) for p in node.v1_hierarchies().values()):
        return f"{node.CGROUP_FS} is not writable"
    return None


@pytest.fixture(scope="module", params=["pod", "container"])
def kubelet(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory,
            request: pytest.FixtureRequest) -> Iterator[Kubelet]:
    need_binaries(controlplane.NODE_BINARIES)
    lacks = _environment_lacks()
    if lacks:
        if os.environ.get("CI") == "true":
            pytest.fail(lacks)
        pytest.skip(lacks)
    with node.running(control_plane, tmp_path_factory.mktemp("kubelet"), scope=request.param) as kl:
        yield kl


@pytest.fixture(scope="module")
def admitted(control_plane: ControlPlane, kubelet: Kubelet) -> list[dict[str, Any]]:
    """The pods, created one by one on the kubelet's node; each as the API
    shows it once the kubelet decided."""
    cp = control_plane
    scope = kubelet.config["topologyManagerScope"]
    ns = NS[scope]
    controlplane.ensure_namespaces(cp, [ns])
    out = []
    for pod in PODS[scope]:
        pod = json.loads(json.dumps(pod))
        pod["metadata"]["namespace"] = ns
        pod["spec"]["nodeName"] = kubelet.name
        cp.apply(pod)
        name = pod["metadata"]["name"]
        deadline = time.monotonic() + 90
        while True:
            got = cp.get_json("pod", "-n", ns, name)
            phase = got.get("status", {}).get("phase")
            statuses = got["status"].get("containerStatuses") or []
            if phase == "Failed" or (phase == "Running" and statuses
                                     and all(s.get("ready") or s.get("started") for s in statuses)):
                out.append(got)
                break
            if time.monotonic() > deadline or not kubelet.alive():
                raise AssertionError(f"pod {name} still {phase}:\n{json.dumps(got.get('status'))}\n"
                                     f"{kubelet.log()}")
            time.sleep(0.5)
    return out


def _machine(control_plane: ControlPlane, kubelet: Kubelet) -> dict[str, Any]:
    """The node form of this machine: ``podnuma node discover`` of /sys (the
    CPUs, and the machine's memory, which must be the node's memory
    capacity as the kubelet reported it), with each NUMA node's memory as
    the kubelet read it at start (its memory checkpoint's machine state).
    Some virtual machines grow a node's MemTotal after boot (the kernel
    initialising memory lazily), so a later read of sysfs can differ from
    what the kubelet saw."""
    r = controlplane.podnuma("node", "discover", "--sysfs", "/sys", "-o", "json")
    assert r.returncode == 0, r.stderr
    machine: dict[str, Any] = json.loads(r.stdout)["node"]
    status = control_plane.get_json("node", kubelet.name)["status"]
    assert machine.get("memoryCapacity", machine["memory"]["0"]["memory"]) == \
        status["capacity"]["memory"]
    state = json.loads((kubelet.root / "memory_manager_state").read_text())
    for nid, cell in state["machineState"].items():
        machine["memory"][nid]["memory"] = cell["memoryMap"]["memory"]["total"]
    machine["name"] = kubelet.name
    return machine


@pytest.fixture(scope="module")
def scenario_file(control_plane: ControlPlane, kubelet: Kubelet, admitted: list[dict[str, Any]],
                  tmp_path_factory: pytest.TempPathFactory) -> Path:
    cfg = {k: kubelet.config[k] for k in HONOURED if k in kubelet.config}
    cfg.update(apiVersion="kubelet.config.k8s.io/v1beta1", kind="KubeletConfiguration")
    steps = [{"addPod": {k: v for k, v in p.items() if k != "status"}} for p in admitted]
    doc = {"apiVersion": "podnuma.io/v1", "kind": "Scenario",
           "node": _machine(control_plane, kubelet), "kubeletConfig": cfg, "steps": steps}
    p = tmp_path_factory.mktemp("scenario") / "kubelet.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_simulate_admits_and_rejects_as_the_kubelet(
        kubelet: Kubelet, admitted: list[dict[str, Any]], scenario_file: Path,
        tmp_path: Path) -> None:
    r = controlplane.podnuma("simulate", str(scenario_file), "-o", "json", "--checkpoint-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    seen = []
    for step, pod in zip(doc["steps"], admitted, strict=True):
        st = pod["status"]
        real = (st["phase"] != "Failed", st.get("reason"), st.get("message"))
        seen.append((pod["metadata"]["name"], real))
        assert (step["admitted"], step["reason"], step["message"]) == real, pod["metadata"]["name"]
    # The machine allows both outcomes, and both happened.
    assert {ok for _, (ok, _, _) in seen} == {True, False}
    # The same checkpoint files, byte for byte.
    for f in ("cpu_manager_state", "memory_manager_state"):
        assert (tmp_path / f).read_bytes() == (kubelet.root / f).read_bytes(), f


def test_state_inspect_reads_the_kubelets_checkpoints(
        kubelet: Kubelet, admitted: list[dict[str, Any]], tmp_path: Path) -> None:
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": admitted}))
    r = controlplane.podnuma("state", "inspect", str(kubelet.root), "--pods", str(pods), "-o", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["cpuManager"]["version"] == 4 and doc["cpuManager"]["policyName"] == "static"
    assert doc["memoryManager"]["policyName"] == "Static"
    assert doc["cpuManager"]["defaultCpuSet"] == "0"
    assert doc["inconsistencies"] == []
    uid = admitted[0]["metadata"]["uid"]
    assert [p["uid"] for p in doc["pods"]] == [uid]
    pod = doc["pods"][0]
    if kubelet.config["topologyManagerScope"] == "pod":
        # Only the pod-level pod holds CPUs or memory: its pool is CPU 1 and
        # 256Mi on NUMA node 0, and both its containers run in that pool.
        assert pod["podCpus"] == "1"
        assert [(m["numaAffinity"], m["type"], m["size"]) for m in pod["podMemory"]] == \
            [([0], "memory", 256 << 20)]
        assert sorted((c["name"], c["cpus"], c["numaNodes"]) for c in pod["containers"]) == \
            [("app", "1", [0]), ("side", "1", [0])]
    else:
        # Container scope: no pod-level reservation; only the app container
        # holds CPU 1 and 128Mi on NUMA node 0 (the sidecar holds nothing).
        assert not pod.get("podCpus") and not pod.get("podMemory"), pod
        assert [(c["name"], c["cpus"], c["numaNodes"]) for c in pod["containers"]] == [("app", "1", [0])], pod
        assert [(m["numaAffinity"], m["type"], m["size"]) for m in pod["containers"][0]["memory"]] == \
            [([0], "memory", 128 << 20)], pod
    t = controlplane.podnuma("state", "inspect", str(kubelet.root), "--pods", str(pods))
    assert t.returncode == 0, t.stderr
    assert admitted[0]["metadata"]["name"] in t.stdout


def test_podresources_list_reads_the_kubelets_socket(
        kubelet: Kubelet, admitted: list[dict[str, Any]], scenario_file: Path) -> None:
    r = controlplane.podnuma("podresources", "list", "--socket", str(kubelet.pod_resources_socket), "-o", "json")
    assert r.returncode == 0, r.stderr
    pods = {p["name"]: p for p in json.loads(r.stdout)}
    running = {p["metadata"]["name"] for p in admitted if p["status"]["phase"] == "Running"}
    assert running == set(pods), (running, sorted(pods))
    first = admitted[0]["metadata"]["name"]
    pl = pods[first]
    if kubelet.config["topologyManagerScope"] == "pod":
        # KEP-5526, pod scope: the pod reports its whole pool (CPU 1, its
        # memory on NUMA node 0); the containers that share it report none
        # of their own.
        assert pl["cpuIds"] == [1], pl
        assert [(m["memoryType"], m["size"], m["topology"]["nodes"]) for m in pl["memory"]] == \
            [("memory", 256 << 20, [{"ID": 0}])]
        assert [c["name"] for c in pl["containers"]] == ["side", "app"]
        assert all(not c["cpuIds"] and not c["memory"] for c in pl["containers"]), pl
    else:
        # Container scope: nothing at pod level; the app container reports
        # its exclusive CPU 1 and 128Mi on NUMA node 0, the node-shared
        # sidecar nothing.
        assert not pl.get("cpuIds") and not pl.get("memory"), pl
        side, app = pl["containers"]
        assert (side["name"], side["cpuIds"], side["memory"]) == ("side", [], []), pl
        assert app["name"] == "app" and app["cpuIds"] == [1], pl
        assert [(m["memoryType"], m["size"], m["topology"]["nodes"]) for m in app["memory"]] == \
            [("memory", 128 << 20, [{"ID": 0}])]
    # The same answer as podnuma's model of the server (simulate --detail:
    # the List answer after the last step).
    sim = controlplane.podnuma("simulate", str(scenario_file), "-o", "json", "--detail")
    assert sim.returncode == 0, sim.stderr
    model = json.loads(sim.stdout)["steps"][-1]["podResources"]

    def key(p: dict[str, Any]) -> tuple[str, str]:
        return (p["namespace"], p["name"])

    assert sorted(model, key=key) == sorted(pods.values(), key=key)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def test_cgroups_plan_matches_the_kubelets_cgroups(
        kubelet: Kubelet, admitted: list[dict[str, Any]], scenario_file: Path) -> None:
    r = controlplane.podnuma("cgroups", "plan", str(scenario_file), "--driver", "cgroupfs",
                 "--cgroup-version", str(node.cgroup_version()), "--cgroup-root", kubelet.cgroup_root,
                 "-o", "json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    v2 = node.cgroup_version() == 2
    hier = node.v1_hierarchies()
    compared = 0
    for cg in plan["cgroups"]:
        if cg["writer"] != "kubelet" or cg["kind"] not in ("pod", "qos", "node"):
            continue
        for fname, want in cg["files"].items():
            ctrl = fname.split(".", 1)[0]
            if v2:
                base = node.CGROUP_FS / cg["path"].lstrip("/")
            elif ctrl in hier:
                base = hier[ctrl] / cg["path"].lstrip("/")
            else:  # a controller this machine does not mount
                continue
            assert base.is_dir(), f"{cg['path']}: no {ctrl} cgroup"
            got = _read(base / fname)
            if got is None and fname in cg.get("ifPresent", []):
                continue
            assert got == want, f"{cg['path']}/{fname}: kubelet wrote {got}, plan says {want}"
            compared += 1
    assert compared >= 6
    # Containers: what the kubelet asked the runtime for (the fake runtime
    # records it) against the plan's container values.
    recs = {(r["podUID"], r["container"]): r["linux"] for r in kubelet.records()
            if r["call"] == "CreateContainer"}
    fields = {"cpuset.cpus": "cpuset_cpus", "cpuset.mems": "cpuset_mems", "cpu.shares": "cpu_shares",
              "cpu.cfs_quota_us": "cpu_quota", "cpu.cfs_period_us": "cpu_period",
              "memory.limit_in_bytes": "memory_limit_in_bytes"}
    containers = 0
    for cg in plan["cgroups"]:
        if cg["kind"] != "container":
            continue
        linux = recs.get((cg["podUID"], cg["container"]))
        assert linux is not None, f"the kubelet never created {cg['pod']}/{cg['container']}"
        for fname, key in fields.items():
            if fname in cg["files"]:
                got = str(linux.get(key, 0) if key not in ("cpuset_cpus", "cpuset_mems")
                          else linux.get(key, ""))
                assert got == cg["files"][fname], f"{cg['pod']}/{cg['container']} {fname}"
        containers += 1
    assert containers >= 3


def test_fleet_reads_the_kubelets_configz(
        control_plane: ControlPlane, kubelet: Kubelet, admitted: list[dict[str, Any]]) -> None:
    from podnuma.fleet.live import load_live

    fleet = load_live(str(control_plane.admin_kubeconfig))
    spec = next(n for n in fleet.nodes if n.name == kubelet.name)
    assert f"/api/v1/nodes/{kubelet.name}/proxy/configz" in spec.config_source
    cfg = dict(spec.config or {})
    for k in ("cpuManagerPolicy", "memoryManagerPolicy", "topologyManagerPolicy",
              "topologyManagerScope", "reservedSystemCPUs", "featureGates"):
        assert cfg.get(k) == kubelet.config[k], k
    running = {p["metadata"]["name"] for p in admitted if p["status"]["phase"] == "Running"}
    assert {p["metadata"]["name"] for p in spec.pods or ()} >= running
