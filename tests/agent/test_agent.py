"""``podnuma agent`` as a real subprocess: manifests in a directory, the
PodResources API on a real unix socket, checkpoints, restarts, signals,
malformed manifests, a corrupt state directory, metrics over real HTTP."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from podnuma.cm.cpumanager.checkpoint import decode_cpu_checkpoint
from podnuma.grpc import client
from podnuma.grpc.convert import pod_resources_doc
from tests.agent.helpers import DEADLINE, AgentProcess, classic_pod, example_pod, write_manifest

MIXED = "pod-scope-2-mixed.yaml"




@pytest.fixture
def agent() -> Iterator[AgentProcess]:
    base = Path(tempfile.mkdtemp(prefix="pna", dir="/tmp"))
    a = AgentProcess(base, "--metrics-port", "0")
    try:
        yield a
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        shutil.rmtree(base, ignore_errors=True)


def listed(a: AgentProcess) -> dict[str, dict[str, object]]:
    with client.connect(a.socket) as stub:
        return {p.name: pod_resources_doc(p) for p in client.list_pods(stub).pod_resources}


def files_settled(a: AgentProcess, names: set[str]) -> dict[str, object]:
    want = {str(a.manifests / n) for n in names}
    return a.wait(lambda s: {p["file"] for p in s["pods"]} == want, f"pods of {sorted(names)}")


def test_session_admit_change_remove_restart(agent: AgentProcess) -> None:
    a = agent
    a.start()
    a.wait_ready()
    assert listed(a) == {}

    write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
    st = files_settled(a, {"mixed.yaml"})
    (pod,) = st["pods"]  # type: ignore[misc]
    assert pod["admitted"] is True
    # Static pods are named NAME-NODE, as the kubelet names them.
    got = listed(a)["pod-scope-mixed-kep-node"]
    assert got["cpuIds"] == [1, 2, 3, 4]
    containers = {c["name"]: c for c in got["containers"]}  # type: ignore[attr-defined]
    assert containers["container-1"]["cpuIds"] == [1, 2]
    assert containers["container-2"]["cpuIds"] == []
    first_uid = pod["uid"]

    # A second pod; then the first one's file changes: removed, re-admitted
    # with a new UID (its old CPUs are free again, so it gets them back).
    write_manifest(a.manifests, "shared.yaml", example_pod("pod-scope-1-shared.yaml"))
    st = files_settled(a, {"mixed.yaml", "shared.yaml"})
    changed = example_pod(MIXED)
    changed["metadata"]["labels"] = {"rev": "2"}
    write_manifest(a.manifests, "mixed.yaml", changed)
    st = a.wait(
        lambda s: any(p["file"].endswith("mixed.yaml") and p["uid"] != first_uid for p in s["pods"]),
        "re-admission of the changed manifest",
    )
    events = [(r["msg"], r.get("reason")) for r in a.log_records() if r.get("file", "").endswith("mixed.yaml")]
    assert ("Pod removed", "manifest changed") in events
    assert sorted(listed(a)) == ["pod-scope-mixed-kep-node", "pod-scope-shared-kep-node"]
    # Classic Guaranteed pods beside them, for the restart.
    write_manifest(a.manifests, "db.yaml", classic_pod("db", "3"))
    write_manifest(a.manifests, "web.yaml", classic_pod("web", "2"))
    files_settled(a, {"mixed.yaml", "shared.yaml", "db.yaml", "web.yaml"})
    db_uid = next(p["uid"] for p in a.status()["pods"] if p["file"].endswith("db.yaml"))  # type: ignore[index]
    web_uid = next(p["uid"] for p in a.status()["pods"] if p["file"].endswith("web.yaml"))  # type: ignore[index]
    assignments = decode_cpu_checkpoint((a.state / "cpu_manager_state").read_bytes()).entries

    # Restart: the checkpoints are restored and every pod is re-admitted with
    # the same UID. The classic pods keep every CPU. The pod-level pods are
    # rejected, as kubelet v1.37.2 rejects them: its pod-level managers do
    # not take a restored pod entry back (the engine's lifecycle example).
    assert a.signal(signal.SIGTERM) == 0
    a.start()
    st = a.wait(lambda s: len(s["pods"]) == 4, "re-admission")
    by_file = {Path(p["file"]).name: p for p in st["pods"]}
    assert by_file["db.yaml"]["admitted"] and by_file["web.yaml"]["admitted"]
    for name in ("mixed.yaml", "shared.yaml"):
        assert by_file[name]["admitted"] is False
        assert by_file[name]["reason"] == "TopologyAffinityError"
    after = decode_cpu_checkpoint((a.state / "cpu_manager_state").read_bytes()).entries
    assert after[db_uid] == assignments[db_uid]
    assert after[web_uid] == assignments[web_uid]
    started = [r for r in a.log_records() if r["msg"] == "Agent started"]
    assert started[-1]["restoredPods"] == 4

    # The file disappears: the pod is removed, its CPUs go back to the default set.
    (a.manifests / "db.yaml").unlink()
    files_settled(a, {"mixed.yaml", "shared.yaml", "web.yaml"})
    assert sorted(listed(a)) == ["web-kep-node"]
    entries = decode_cpu_checkpoint((a.state / "cpu_manager_state").read_bytes()).entries
    assert set(entries) == {web_uid}
    assert a.signal(signal.SIGINT) == 0
    assert a.status()["stopped"]  # type: ignore[index]


def test_malformed_manifest_is_reported_and_skipped(agent: AgentProcess) -> None:
    a = agent
    a.start()
    a.wait_ready()
    bad = example_pod(MIXED)
    bad["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "lots"
    write_manifest(a.manifests, "bad.yaml", bad)
    write_manifest(a.manifests, "good.yaml", example_pod("pod-scope-1-shared.yaml"))
    st = a.wait(lambda s: len(s["pods"]) == 1 and len(s["skipped"]) == 1, "one pod, one skipped")
    (skipped,) = st["skipped"]
    path = str(a.manifests / "bad.yaml")
    assert skipped["file"] == path
    assert skipped["error"].startswith(f"{path}: spec.containers[0].resources.limits[cpu]: ")
    warned = [r for r in a.log_records() if r["msg"] == "Manifest skipped"]
    assert [w["file"] for w in warned] == [path]
    # Still running and serving; fixing the file admits it.
    assert a.proc is not None and a.proc.poll() is None
    write_manifest(a.manifests, "bad.yaml", example_pod(MIXED))
    a.wait(lambda s: len(s["pods"]) == 2 and not s["skipped"], "fixed manifest admitted")
    assert len(listed(a)) == 2
    assert a.signal() == 0


def test_rejection_logged_with_reason_and_message(agent: AgentProcess) -> None:
    a = agent
    a.start()
    a.wait_ready()
    huge = example_pod(MIXED)
    for key in ("requests", "limits"):
        huge["spec"]["resources"][key]["cpu"] = "12"  # more than one NUMA node holds
    write_manifest(a.manifests, "huge.yaml", huge)
    st = a.wait(lambda s: len(s["pods"]) == 1, "decision")
    (pod,) = st["pods"]
    assert pod["admitted"] is False
    assert pod["reason"] == "TopologyAffinityError"
    rec = next(r for r in a.log_records() if r["msg"] == "Pod rejected")
    assert (rec["result"], rec["reason"]) == ("rejected", "TopologyAffinityError")
    assert rec["message"] == pod["message"]
    # List shows active pods only; Get still finds the rejected pod.
    assert listed(a) == {}
    with client.connect(a.socket) as stub:
        got = client.get_pod(stub, "kep", "pod-scope-mixed-kep-node").pod_resources
    assert [c.name for c in got.containers] == ["container-1", "container-2", "container-3"]
    assert list(got.cpu_ids) == []
    assert a.signal() == 0


def test_corrupt_state_refused_with_the_kubelets_message(agent: AgentProcess) -> None:
    a = agent
    a.start()
    a.wait_ready()
    write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
    files_settled(a, {"mixed.yaml"})
    assert a.signal() == 0
    cpu_file = a.state / "cpu_manager_state"
    blob = bytearray(cpu_file.read_bytes())
    # The payload the kubelet reads (``Data``) changed, its checksum not.
    at = blob.index(b'\\"container-1\\":\\"1-2\\"')
    blob[at + len(b'\\"container-1\\":\\"1-')] = ord("3")
    cpu_file.write_bytes(bytes(blob))
    proc = subprocess.run(a.argv(), capture_output=True, text=True, timeout=DEADLINE)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "error: kubelet would not start: could not restore state from checkpoint: "
        "could not load v4 checkpoint: checkpoint is corrupted, please drain this node "
        "and delete the CPU manager "
        f'checkpoint file "{cpu_file}" before restarting Kubelet'
    )
    assert cpu_file.read_bytes() == bytes(blob)  # never reset


def test_metrics_over_http(agent: AgentProcess) -> None:
    a = agent
    a.start()
    a.wait_ready()
    write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
    huge = example_pod("pod-scope-1-shared.yaml")
    for key in ("requests", "limits"):
        huge["spec"]["resources"][key]["cpu"] = "12"
    write_manifest(a.manifests, "zz-huge.yaml", huge)
    a.wait(lambda s: len(s["pods"]) == 2, "two decisions")
    with client.connect(a.socket) as stub:
        client.list_pods(stub)
    with urllib.request.urlopen(a.metrics_url(), timeout=DEADLINE) as resp:
        text = resp.read().decode()
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }
    assert samples[("podnuma_agent_admissions_total", (("reason", ""), ("result", "admitted")))] == 1
    assert samples[
        ("podnuma_agent_admissions_total", (("reason", "TopologyAffinityError"), ("result", "rejected")))
    ] == 1
    assert samples[("podnuma_agent_admission_duration_seconds_count", ())] == 2
    # pod-scope-mixed holds 1-4 (1-2 for container-1): 4 exclusive CPUs, one
    # pod shared pool of 2 CPUs (3-4).
    assert samples[("podnuma_agent_exclusive_cpus", ())] == 4
    assert samples[("podnuma_agent_pod_shared_pools", ())] == 1
    assert samples[("podnuma_agent_pod_shared_pool_cpus", ())] == 2
    assert samples[("podnuma_agent_pods", (("state", "rejected"),))] == 1
    assert samples[
        ("podnuma_agent_pod_resources_endpoint_requests_total", (("failed", "false"), ("method", "list")))
    ] >= 1
    assert a.signal() == 0


def test_podresources_client_cli(agent: AgentProcess) -> None:
    a = agent
    a.start()
    a.wait_ready()
    write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
    files_settled(a, {"mixed.yaml"})
    run = [sys.executable, "-m", "podnuma.cli", "podresources"]
    env = {**os.environ, "COLUMNS": "120"}
    out = subprocess.run(
        [*run, "list", "--socket", str(a.socket)], capture_output=True, text=True, env=env, timeout=DEADLINE
    )
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith(" kep")]
    assert rows == [
        ["kep", "pod-scope-mixed-kep-node", "(pod)", "1-4", "memory", "4Gi", "@0", "-"],
        ["kep", "pod-scope-mixed-kep-node", "container-1", "1-2", "memory", "2Gi", "@0", "-"],
        ["kep", "pod-scope-mixed-kep-node", "container-2", "-", "-", "-"],
        ["kep", "pod-scope-mixed-kep-node", "container-3", "-", "-", "-"],
    ]
    missing = subprocess.run(
        [*run, "get", "kep", "nope", "--socket", str(a.socket)], capture_output=True, text=True, timeout=DEADLINE
    )
    assert missing.returncode == 2
    assert missing.stderr == f"error: {a.socket}: UNKNOWN: pod nope in namespace kep not found\n"
    alloc = subprocess.run(
        [*run, "allocatable", "--socket", str(a.socket), "-o", "yaml"], capture_output=True, text=True, timeout=DEADLINE
    )
    assert alloc.returncode == 0
    doc = yaml.safe_load(alloc.stdout)
    assert doc["cpuIds"] == list(range(1, 16))
    assert [(m["size"], m["topology"]["nodes"]) for m in doc["memory"]] == [
        (15 << 30, [{"ID": 0}]),
        (16 << 30, [{"ID": 1}]),
    ]
    assert a.signal() == 0
    gone = subprocess.run(
        [*run, "list", "--socket", str(a.socket)], capture_output=True, text=True, timeout=DEADLINE
    )
    assert gone.returncode == 2 and gone.stderr.startswith(f"error: {a.socket}: ")


def test_cgroups_written_and_removed(tmp_path: Path) -> None:
    """--cgroup-root on a plain directory (cgroup v2 layout, cgroupfs
    names): the pod's cgroup and its containers' cpusets follow admission
    and removal."""
    base = Path(tempfile.mkdtemp(prefix="png", dir="/tmp"))
    root = base / "cgroup"
    root.mkdir()
    a = AgentProcess(base, "--cgroup-root", str(root), "--cgroup-version", "2")
    try:
        a.start()
        a.wait_ready()
        write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
        st = files_settled(a, {"mixed.yaml"})
        uid = st["pods"][0]["uid"]  # type: ignore[index]
        pod_dir = root / "kubepods" / f"pod{uid}"
        assert pod_dir.is_dir()
        cpusets = sorted(f.read_text().strip() for f in pod_dir.glob("*/cpuset.cpus"))
        # container-1's own slice; container-2 and -3 on the pod shared pool.
        assert cpusets == ["1-2", "3-4", "3-4"]
        (a.manifests / "mixed.yaml").unlink()
        files_settled(a, set())
        assert not pod_dir.exists()
        assert (root / "kubepods").is_dir()
        assert a.signal() == 0
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        shutil.rmtree(base, ignore_errors=True)


def test_cgroups_follow_the_configuration_root_and_qos_levels(tmp_path: Path) -> None:
    """The configuration's cgroupRoot (here by --set) places the pods'
    cgroups; cgroupsPerQOS: false (with enforceNodeAllocatable: [none], as
    the kubelet requires) leaves out kubepods and the pod level."""
    for qos, where in ((True, ("custom", "a", "kubepods")), (False, ("custom", "a"))):
        base = Path(tempfile.mkdtemp(prefix="pnr", dir="/tmp"))
        root = base / "cgroup"
        root.mkdir()
        sets = () if qos else ("--set", "cgroupsPerQOS=false", "--set", "enforceNodeAllocatable=[none]")
        a = AgentProcess(base, "--cgroup-root", str(root), "--cgroup-version", "2", "--set", "cgroupRoot=/custom/a",
                         *sets)
        try:
            a.start()
            a.wait_ready()
            write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
            st = files_settled(a, {"mixed.yaml"})
            uid = st["pods"][0]["uid"]  # type: ignore[index]
            pod_dir = root.joinpath(*where, f"pod{uid}")
            assert pod_dir.is_dir() == qos
            assert not (root / "kubepods").exists()
            assert (root / "custom" / "a" / "kubepods").exists() == qos
            if qos:
                assert sorted(f.read_text().strip() for f in pod_dir.glob("*/cpuset.cpus")) == ["1-2", "3-4", "3-4"]
            assert a.signal() == 0
        finally:
            if a.proc is not None and a.proc.poll() is None:
                a.kill()
            shutil.rmtree(base, ignore_errors=True)


def test_a_cgroup_root_the_systemd_driver_cannot_name_is_refused(tmp_path: Path) -> None:
    """The kubelet panics naming such a root; the agent refuses it at the
    field that gave it, before anything starts."""
    base = Path(tempfile.mkdtemp(prefix="pns", dir="/tmp"))
    root = base / "cgroup"
    root.mkdir()
    a = AgentProcess(base, "--cgroup-root", str(root), "--cgroup-version", "2", "--cgroup-driver", "systemd",
                     "--set", "cgroupRoot=/custom/")
    try:
        proc = subprocess.run(a.argv(), capture_output=True, text=True, timeout=DEADLINE, check=False)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("error: --set: cgroupRoot: ") and "custom--kubepods.slice" in last, last
        assert list(root.iterdir()) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_polling_mode(tmp_path: Path) -> None:
    """--poll (the fallback where native file events are missing) sees
    creations and deletions too."""
    base = Path(tempfile.mkdtemp(prefix="pnp", dir="/tmp"))
    a = AgentProcess(base, "--poll")
    try:
        a.start()
        a.wait_ready()
        write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
        files_settled(a, {"mixed.yaml"})
        assert sorted(listed(a)) == ["pod-scope-mixed-kep-node"]
        (a.manifests / "mixed.yaml").unlink()
        files_settled(a, set())
        assert a.signal() == 0
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        shutil.rmtree(base, ignore_errors=True)


def test_manifest_directory_removed_and_recreated(tmp_path: Path) -> None:
    """A missing static-pod directory is an empty one, as the kubelet's file
    source treats it: its pods go; when it comes back, they come back."""
    base = Path(tempfile.mkdtemp(prefix="pnd", dir="/tmp"))
    a = AgentProcess(base)
    try:
        a.start()
        a.wait_ready()
        write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
        files_settled(a, {"mixed.yaml"})
        shutil.rmtree(a.manifests)
        a.wait(lambda s: s["pods"] == [], "pods gone with the directory")
        assert listed(a) == {}
        a.manifests.mkdir()
        write_manifest(a.manifests, "mixed.yaml", example_pod(MIXED))
        files_settled(a, {"mixed.yaml"})
        assert sorted(listed(a)) == ["pod-scope-mixed-kep-node"]
        assert a.signal() == 0
    finally:
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize(("config", "line"), [
    ("cpuManagerPolicy: statik\n", 'error: kubelet would not start: unknown policy: "statik" ({f}: cpuManagerPolicy)'),
    ("cpuManagerPolicy: static\nreservedSystemCPUs: \"0-999\"\n",
     "error: kubelet would not start: reserved-cpus: 0-999 is not a subset of online-cpus: 0-{last} "
     "({f}: reservedSystemCPUs)"),
])
def test_a_configuration_the_kubelet_refuses_names_its_file_and_field(tmp_path: Path, config: str,
                                                                        line: str) -> None:
    """As every other command names it: the file and the field, after the
    kubelet's own message; exit 2, nothing started, no state written."""
    import re

    f = tmp_path / "kubelet.yaml"
    f.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" + config)
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    state = tmp_path / "state"
    proc = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "agent", "--manifests", str(manifests), "--state-dir", str(state),
         "--kubelet-config", str(f)],
        capture_output=True, text=True, timeout=DEADLINE, check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    want = re.escape(line.replace("{f}", str(f))).replace(re.escape("{last}"), "[0-9]+")
    assert re.fullmatch(want, last), last
    assert not (state / "cpu_manager_state").exists()


def test_set_overrides_the_agents_configuration(tmp_path: Path) -> None:
    """``--set`` on the agent's kubelet configuration: a value the kubelet
    refuses is named on ``--set``; a valid one is the configuration the
    agent starts with (its checkpoint's policy)."""
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    base = [sys.executable, "-m", "podnuma.cli", "agent", "--manifests", str(manifests)]
    proc = subprocess.run([*base, "--state-dir", str(tmp_path / "s1"), "--set", "reservedSystemCPUs=0-999"],
                          capture_output=True, text=True, timeout=DEADLINE, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().endswith("(--set: reservedSystemCPUs)"), proc.stderr
    state = tmp_path / "s2"
    agent = subprocess.Popen([*base, "--state-dir", str(state), "--set", "cpuManagerPolicy=none",
                              "--set", "reservedSystemCPUs="], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + DEADLINE
        while not (state / "cpu_manager_state").exists() and time.monotonic() < deadline:
            assert agent.poll() is None, agent.stderr.read() if agent.stderr else ""
            time.sleep(0.05)
        assert decode_cpu_checkpoint((state / "cpu_manager_state").read_bytes()).policy_name == "none"
    finally:
        agent.terminate()
        agent.wait(timeout=DEADLINE)


@pytest.mark.parametrize(("files", "given", "where"), [
    # a scenario holding the configuration inline: its kubeletConfig field
    ({"scen.yaml": "kind: Scenario\nkubeletConfig:\n  cgroupRoot: /custom/\n"}, "scen.yaml",
     "{d}/scen.yaml: kubeletConfig.cgroupRoot: "),
    # a scenario naming a configuration file: that file's field
    ({"scen.yaml": "kind: Scenario\nkubeletConfigFile: inner.yaml\n", "inner.yaml": "cgroupRoot: /custom/\n"},
     "scen.yaml", "{d}/inner.yaml: cgroupRoot: "),
    # the kubelet's own file
    ({"k.yaml": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupRoot: /custom/\n"},
     "k.yaml", "{d}/k.yaml: cgroupRoot: "),
])
def test_a_bad_cgroup_root_is_named_where_the_configuration_gives_it(
    tmp_path: Path, files: dict[str, str], given: str, where: str
) -> None:
    """The file and field of cgroupRoot as ``cgroups plan`` names them: a
    scenario's ``kubeletConfig.cgroupRoot``, or ``cgroupRoot`` of the file
    holding the configuration (the one a scenario's kubeletConfigFile names)."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    root = tmp_path / "cgroup"
    root.mkdir()
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "podnuma.cli", "agent", "--manifests", str(manifests), "--state-dir",
         str(tmp_path / "state"), "--kubelet-config", str(tmp_path / given), "--cgroup-root", str(root),
         "--cgroup-version", "2", "--cgroup-driver", "systemd"],
        capture_output=True, text=True, timeout=DEADLINE, check=False,
    )
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: " + where.replace("{d}", str(tmp_path))), last
    assert "custom--kubepods.slice" in last, last
    assert list(root.iterdir()) == []
