"""More invalid input, end to end (a QA sweep of every command).

Each case: exit code 2, one ``error:`` line naming the file and the field
path, no traceback, nothing written (no checkpoint file, no output file).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from podnuma.cli import cli
from podnuma.cm.checkpoint import string_checksum
from podnuma.cm.cpumanager.checkpoint import CPUCheckpointData, encode_cpu_checkpoint
from podnuma.machine.cpuset import CPUSet

from ..scenario.helpers import base, dump, pod, write

Doc = dict[str, Any]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = EXAMPLES / "static-dual-socket.yaml"
FLEET_EXAMPLE = EXAMPLES / "fleet"
TRAINER = EXAMPLES / "whatif" / "trainer-pod.yaml"


def assert_input_error(result: Result, *words: str) -> str:
    """Exit 2, one ``error:`` line holding every word, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    err = result.stderr
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    for w in words:
        assert w in err, (w, err)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return err


# --------------------------------------------------------------------------
# simulate: the scenario and the files it references


@dataclass
class Case:
    id: str
    build: Callable[[Path], Doc | str | bytes]  # files under the dir; returns scenario.yaml
    file: str  # the file the message must name
    path: str | None  # the field path it must name (None: see words)
    words: str = ""


def mut(fn: Callable[[Doc], object]) -> Callable[[Path], Doc]:
    def build(_d: Path) -> Doc:
        doc = base()
        fn(doc)
        return doc

    return build


def pod0(doc: Doc) -> Doc:
    p: Doc = doc["steps"][0]["addPod"]
    return p


def ctr0(doc: Doc) -> Doc:
    c: Doc = doc["steps"][0]["addPod"]["spec"]["containers"][0]
    return c


def node(n: Doc) -> Callable[[Path], Doc]:
    return mut(lambda d: d.update(node=n))


def machine_info(**top: Any) -> Doc:
    core = {"core_id": 0, "thread_ids": top.pop("threads", [0])}
    numa = {"node_id": top.pop("node_id", 0), "memory": top.pop("memory", 1 << 30), "cores": [core]}
    return {"machineInfo": {"num_cores": top.pop("num_cores", 1), "num_sockets": 1, "topology": [numa]}}


def with_file(name: str, content: bytes | str, fn: Callable[[Doc], object]) -> Callable[[Path], Doc]:
    def build(d: Path) -> Doc:
        target = d / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
        doc = base()
        fn(doc)
        return doc

    return build


def v4(data: Doc | str) -> Doc:
    """A V4 cpu_manager_state object with a valid data checksum."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    return {"policyName": "static", "defaultCpuSet": "", "checksum": 0, "data": text,
            "dataChecksum": string_checksum(text)}


def valid_cpu_checkpoint() -> bytes:
    return encode_cpu_checkpoint(
        CPUCheckpointData("static", CPUSet.parse("0,2-8,10-15"), {"uid-a": {"app": CPUSet.parse("1,9")}})
    )


def garbage_sysfs(d: Path, *, cpu: int = 0, core_id: str = "0", online: str | None = None) -> Doc:
    """A one-CPU sysfs tree with one bad value."""
    cpu_dir = d / "r" / "devices" / "system" / "cpu"
    topo = cpu_dir / f"cpu{cpu}" / "topology"
    topo.mkdir(parents=True)
    (topo / "core_id").write_text(core_id)
    (topo / "physical_package_id").write_text("0")
    (cpu_dir / "online").write_text(online if online is not None else str(cpu))
    doc = base()
    doc["node"] = {"sysfs": "r"}
    return doc


def no_kubelet_config(d: Doc) -> None:
    d.pop("kubeletConfig")
    d["kubeletConfigFile"] = "kubelet.yaml"


def kc(**fields: Any) -> Callable[[Path], Doc]:
    return mut(lambda d: d["kubeletConfig"].update(fields))


SYN = "node.synthetic"
MI = "node.machineInfo"
P = "steps[0].addPod"
C = "steps[0].addPod.spec.containers[0]"

CASES = [
    # the scenario file itself
    Case("binary-garbage", lambda _d: bytes(range(256)), "scenario.yaml", None, "not UTF-8"),
    Case("latin-1", lambda _d: "apiVersion: podnuma.io/v1 # caf\xe9\n".encode("latin-1"),
         "scenario.yaml", None, "not UTF-8"),
    Case("multi-document", lambda _d: dump(base()) + "---\n" + dump(base()), "scenario.yaml", None,
         "invalid YAML"),
    # a tag go-yaml does not know is ignored (the kubelet reads an empty mapping)
    Case("python-tag", lambda _d: "!!python/object:os.system {}\n", "scenario.yaml", "apiVersion",
         "required"),
    Case("unhashable-key", lambda _d: "? [a, b]\n: 1\n", "scenario.yaml", None, "invalid YAML"),
    Case("only-a-comment", lambda _d: "# nothing\n", "scenario.yaml", None, "empty"),
    Case("top-level-integer", lambda _d: "42\n", "scenario.yaml", None, "must be a mapping"),
    Case("kind-wrong", mut(lambda d: d.update(kind="Pod")), "scenario.yaml", "kind"),
    Case("steps-null", mut(lambda d: d.update(steps=None)), "scenario.yaml", "steps"),
    # synthetic machines: sizes and quantities
    Case("synthetic-billion-sockets", mut(lambda d: d["node"]["synthetic"].update(sockets=10**9)),
         "scenario.yaml", SYN, "more than Linux supports"),
    Case("synthetic-million-threads", mut(lambda d: d["node"]["synthetic"].update(threadsPerCore=10**6)),
         "scenario.yaml", SYN, "logical CPUs"),
    Case("synthetic-zero-cores", mut(lambda d: d["node"]["synthetic"].update(coresPerNumaNode=0)),
         "scenario.yaml", f"{SYN}.coresPerNumaNode"),
    Case("synthetic-string-sockets", mut(lambda d: d["node"]["synthetic"].update(sockets="2")),
         "scenario.yaml", f"{SYN}.sockets"),
    Case("synthetic-memory-1e999", mut(lambda d: d["node"]["synthetic"].update(memoryPerNumaNode="1e999")),
         "scenario.yaml", f"{SYN}.memoryPerNumaNode", "64 bits"),
    Case("synthetic-memory-1.5.3", mut(lambda d: d["node"]["synthetic"].update(memoryPerNumaNode="1.5.3")),
         "scenario.yaml", f"{SYN}.memoryPerNumaNode"),
    Case("synthetic-memory-negative", mut(lambda d: d["node"]["synthetic"].update(memoryPerNumaNode="-1")),
         "scenario.yaml", f"{SYN}.memoryPerNumaNode"),
    Case("synthetic-hugepages-bad-size",
         mut(lambda d: d["node"]["synthetic"].update(hugepagesPerNumaNode={"hugepages-2Mi": "3Mi"})),
         "scenario.yaml", f"{SYN}.hugepagesPerNumaNode.hugepages-2Mi"),
    Case("synthetic-distances-short-row",
         mut(lambda d: d["node"]["synthetic"].update(distances={0: [10, 20], 1: [20]})),
         "scenario.yaml", f"{SYN}.distances.1"),
    Case("synthetic-unknown-field", mut(lambda d: d["node"]["synthetic"].update(coresPerSocket=4)),
         "scenario.yaml", f"{SYN}.coresPerSocket"),
    Case("node-unknown-field", mut(lambda d: d["node"].update(nmae="x")), "scenario.yaml", "node.nmae"),
    # machineInfo: ids and sizes beyond what Linux and cadvisor have
    Case("machine-info-huge-cpu-id", node(machine_info(threads=[10**12])), "scenario.yaml",
         f"{MI}.topology[0].cores[0].thread_ids[0]", "out of range"),
    Case("machine-info-huge-numa-id", node(machine_info(node_id=10**12)), "scenario.yaml",
         f"{MI}.topology[0].node_id", "out of range"),
    Case("machine-info-memory-over-uint64", node(machine_info(memory=10**30)), "scenario.yaml",
         # YAML 1.1 as go-yaml reads it: a number beyond uint64 is a float
         f"{MI}.topology[0].memory", "must be an integer"),
    Case("machine-info-num-cores-huge", node(machine_info(num_cores=10**12)), "scenario.yaml",
         f"{MI}.num_cores"),
    Case("machine-info-thread-string", node(machine_info(threads=["0"])), "scenario.yaml",
         f"{MI}.topology[0].cores[0].thread_ids[0]"),
    Case("machine-info-no-cpus", node({"machineInfo": {}}), "scenario.yaml", f"{MI}.num_cores"),
    Case("machine-info-file-not-utf8",
         with_file("m.json", b"\xff\x00", lambda d: d.update(node={"machineInfoFile": "m.json"})),
         "m.json", "node.machineInfoFile", "UTF-8"),
    Case("machine-info-file-bad-json",
         with_file("m.json", "{", lambda d: d.update(node={"machineInfoFile": "m.json"})),
         "m.json", "node.machineInfoFile", "invalid JSON"),
    Case("machine-info-file-a-list",
         with_file("m.json", "[]", lambda d: d.update(node={"machineInfoFile": "m.json"})),
         "m.json", "node.machineInfoFile"),
    Case("cpus-table-huge-id",
         node({"cpus": [{"id": 10**12, "core": 0, "socket": 0, "numaNode": 0}]}),
         "scenario.yaml", "node.cpus[0].id"),
    Case("cpus-table-huge-numa",
         node({"cpus": [{"id": 0, "core": 0, "socket": 0, "numaNode": 10**12}]}),
         "scenario.yaml", "node.cpus[0].numaNode"),
    Case("cpus-table-empty", node({"cpus": []}), "scenario.yaml", "node.cpus"),
    Case("sysfs-missing", node({"sysfs": "nope"}), "nope", "node.sysfs"),
    Case("sysfs-empty-dir", with_file("e/.keep", "", lambda d: d.update(node={"sysfs": "e"})), "e", "node.sysfs"),
    Case("sysfs-garbage-core-id", lambda d: garbage_sysfs(d, core_id="abc"), "core_id", "node.sysfs"),
    Case("sysfs-garbage-online-list", lambda d: garbage_sysfs(d, online="zz"), "online", "node.sysfs"),
    Case("sysfs-huge-cpu-id", lambda d: garbage_sysfs(d, cpu=99_999_999), "online", "node.sysfs",
         "is not a CPU id"),
    Case("device-numa-id-past-int64",
         mut(lambda d: d["node"].update(devices={"example.com/gpu": [{"id": "g0", "numaNodes": [2**63]}]})),
         "scenario.yaml", "node.devices.example.com/gpu[0].numaNodes[0]"),
    # pods: strict fields, restartPolicy
    Case("pod-unknown-field", mut(lambda d: pod0(d).update(foo=1)), "scenario.yaml", f"{P}.foo"),
    Case("metadata-unknown-field", mut(lambda d: pod0(d)["metadata"].update(lables={})),
         "scenario.yaml", f"{P}.metadata.lables", 'did you mean "labels"'),
    Case("container-typo-resource", mut(lambda d: ctr0(d).update(resource=ctr0(d).pop("resources"))),
         "scenario.yaml", f"{C}.resource", 'did you mean "resources"'),
    Case("resources-typo-limit", mut(lambda d: ctr0(d)["resources"].update(limit={"cpu": "1"})),
         "scenario.yaml", f"{C}.resources.limit", 'did you mean "limits"'),
    Case("spec-typo-init-container", mut(lambda d: pod0(d)["spec"].update(initContainer=[])),
         "scenario.yaml", f"{P}.spec.initContainer", 'did you mean "initContainers"'),
    Case("pod-level-resources-unknown", mut(lambda d: pod0(d)["spec"].update(resources={"limit": {}})),
         "scenario.yaml", f"{P}.spec.resources.limit"),
    Case("ephemeral-container-unknown",
         mut(lambda d: pod0(d)["spec"].update(ephemeralContainers=[{"name": "dbg", "foo": 1}])),
         "scenario.yaml", f"{P}.spec.ephemeralContainers[0].foo"),
    Case("pod-restart-policy", mut(lambda d: pod0(d)["spec"].update(restartPolicy="Sometimes")),
         "scenario.yaml", f"{P}.spec.restartPolicy", "Unsupported value"),
    Case("quantity-1.5.3", mut(lambda d: ctr0(d)["resources"]["limits"].update(cpu="1.5.3")),
         "scenario.yaml", f"{C}.resources.limits[cpu]"),
    Case("quantity-boolean", mut(lambda d: ctr0(d)["resources"]["limits"].update(cpu=True)),
         "scenario.yaml", f"{C}.resources.limits[cpu]"),
    Case("extended-resource-fraction",
         mut(lambda d: ctr0(d)["resources"]["limits"].update({"example.com/gpu": "0.5"})),
         "scenario.yaml", f"{C}.resources.limits[example.com/gpu]"),
    Case("container-name-64-chars", mut(lambda d: ctr0(d).update(name="a" * 64)),
         "scenario.yaml", f"{C}.name"),
    Case("pod-name-300-chars", mut(lambda d: pod0(d)["metadata"].update(name="a" * 300)),
         "scenario.yaml", f"{P}.metadata.name"),
    Case("same-name-other-uid",
         mut(lambda d: d["steps"].append({"addPod": pod("a", uid="other")})), "scenario.yaml", "steps[2].addPod"),
    Case("remove-rejected-pod",
         mut(lambda d: d["steps"].extend([{"addPod": pod("big", "100", uid="big")}, {"removePod": "big"}])),
         "scenario.yaml", "steps[3].removePod"),
    Case("step-null", mut(lambda d: d["steps"].append(None)), "scenario.yaml", "steps[2]"),
    Case("step-empty-mapping", mut(lambda d: d["steps"].append({})), "scenario.yaml", "steps[2]"),
    # configurations the kubelet refuses: the field is named
    Case("reserved-cpus-reversed-range", kc(reservedSystemCPUs="3-1"), "scenario.yaml",
         "kubeletConfig.reservedSystemCPUs"),
    Case("reserved-cpus-letters", kc(reservedSystemCPUs="a"), "scenario.yaml", "kubeletConfig.reservedSystemCPUs"),
    Case("reserved-cpus-huge", kc(reservedSystemCPUs="99999999999"), "scenario.yaml",
         "kubeletConfig.reservedSystemCPUs"),
    Case("cpu-policy-capitalised", kc(cpuManagerPolicy="Static"), "scenario.yaml", "kubeletConfig.cpuManagerPolicy"),
    Case("memory-policy-lowercase", kc(memoryManagerPolicy="static"), "scenario.yaml",
         "kubeletConfig.memoryManagerPolicy"),
    Case("cpu-policy-option-unknown", kc(cpuManagerPolicyOptions={"bogus-option": "true"}), "scenario.yaml",
         "kubeletConfig.cpuManagerPolicyOptions"),
    Case("cpu-policy-option-bad-bool", kc(cpuManagerPolicyOptions={"full-pcpus-only": "yes"}), "scenario.yaml",
         "kubeletConfig.cpuManagerPolicyOptions"),
    Case("topology-option-unknown",
         kc(topologyManagerPolicy="restricted", topologyManagerPolicyOptions={"x": "true"}),
         "scenario.yaml", "kubeletConfig.topologyManagerPolicyOptions"),
    Case("topology-option-not-int",
         kc(topologyManagerPolicy="restricted", topologyManagerPolicyOptions={"max-allowable-numa-nodes": "x"}),
         "scenario.yaml", "kubeletConfig.topologyManagerPolicyOptions"),
    Case("feature-gate-unknown", kc(featureGates={"NoSuchGate": True}), "scenario.yaml", "kubeletConfig.featureGates"),
    Case("feature-gate-unknown-in-file",
         with_file("kubelet.yaml", "cpuManagerPolicy: static\nreservedSystemCPUs: '0'\nfeatureGates: {NoSuchGate: true}\n",
                   no_kubelet_config),
         "kubelet.yaml", "featureGates"),
    Case("memory-static-nothing-reserved", kc(memoryManagerPolicy="Static"), "scenario.yaml",
         "kubeletConfig.reservedMemory"),
    Case("eviction-over-100-percent", kc(evictionHard={"memory.available": "200%"}), "scenario.yaml",
         "kubeletConfig.evictionHard"),
    Case("kube-reserved-unknown-resource", kc(kubeReserved={"bogus": "1"}), "scenario.yaml",
         "kubeletConfig.kubeReserved"),
    Case("kubelet-file-not-utf8", with_file("kubelet.yaml", b"\xff\xfe\x00", no_kubelet_config),
         "kubelet.yaml", None, "UTF-8"),
    Case("kubelet-file-empty", with_file("kubelet.yaml", "", no_kubelet_config), "kubelet.yaml", None, "empty"),
    Case("kubelet-file-is-a-directory", with_file("kubelet.yaml/x", "", no_kubelet_config),
         "scenario.yaml", "kubeletConfigFile", "directory"),
    # checkpoints: corrupt, or not this node's
    Case("checkpoint-empty-file",
         with_file("c.json", b"", lambda d: d.update(state={"cpuManagerFile": "c.json"})),
         "c.json", "state.cpuManagerFile"),
    Case("checkpoint-binary-file",
         with_file("c.json", bytes(range(256)), lambda d: d.update(state={"cpuManagerFile": "c.json"})),
         "c.json", "state.cpuManagerFile"),
    Case("checkpoint-truncated",
         with_file("c.json", valid_cpu_checkpoint()[:-5], lambda d: d.update(state={"cpuManagerFile": "c.json"})),
         "c.json", "state.cpuManagerFile"),
    Case("checkpoint-file-is-null",
         with_file("c.json", "null", lambda d: d.update(state={"cpuManagerFile": "c.json"})),
         "scenario.yaml", "state.cpuManagerFile"),
    Case("checkpoint-other-policy", mut(lambda d: d.update(state={"cpuManager": v4({"policyName": "none",
                                                                                    "defaultCpuSet": ""})})),
         "scenario.yaml", "state.cpuManager", "differs from state checkpoint policy"),
    Case("checkpoint-reversed-range",
         mut(lambda d: d.update(state={"cpuManager": v4({"policyName": "static", "defaultCpuSet": "3-1"})})),
         "scenario.yaml", "state.cpuManager"),
    Case("checkpoint-huge-cpu",
         mut(lambda d: d.update(state={"cpuManager": v4({"policyName": "static",
                                                         "defaultCpuSet": "0-15,99999999999"})})),
         "scenario.yaml", "state.cpuManager"),
    Case("checkpoint-bad-container-cpuset",
         mut(lambda d: d.update(state={"cpuManager": v4({"policyName": "static", "defaultCpuSet": "0,2-15",
                                                         "entries": {"u": {"c": "a"}}})})),
         "scenario.yaml", "state.cpuManager"),
    Case("checkpoint-cpus-not-on-node",
         mut(lambda d: d.update(state={"cpuManager": v4({"policyName": "static", "defaultCpuSet": "0-99"})})),
         "scenario.yaml", "state.cpuManager"),
    Case("checkpoint-data-not-json", mut(lambda d: d.update(state={"cpuManager": v4("hello")})),
         "scenario.yaml", "state.cpuManager"),
    Case("memory-checkpoint-wrong-types",
         mut(lambda d: d.update(state={"memoryManager": {"policyName": "Static", "machineState": "x",
                                                         "entries": {}, "checksum": 1}})),
         "scenario.yaml", "state.memoryManager"),
    Case("memory-checkpoint-other-policy", mut(lambda d: d.update(state={"memoryManager": {}})),
         "scenario.yaml", "state.memoryManager"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_simulate_bad_input(case: Case, tmp_path: Path) -> None:
    built = case.build(tmp_path)
    scenario = tmp_path / "scenario.yaml"
    if isinstance(built, bytes):
        scenario.write_bytes(built)
    else:
        write(scenario, built)
    out_dir = tmp_path / "out"
    result = CliRunner().invoke(cli, ["simulate", str(scenario), "-o", "json", "--checkpoint-dir", str(out_dir)])
    err = assert_input_error(result, case.file)
    assert result.stdout == ""
    if case.path is not None:
        assert f": {case.path}" in err, err
    if case.words:
        assert case.words in err, err
    assert not out_dir.exists()


@pytest.mark.parametrize("command", ["simulate", "explain", "topology"])
def test_scenario_is_a_directory(command: str, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = CliRunner().invoke(cli, [command, str(tmp_path / "d")])
    assert_input_error(result, str(tmp_path / "d"), "scenario file is a directory")


# --------------------------------------------------------------------------
# usage errors: one line, exit 2, like every other invalid input


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["explain", str(EXAMPLE), "--step", "x"], "'--step'"),
        (["topology", str(EXAMPLE), "--step", "1.5"], "'--step'"),
        (["topology", str(EXAMPLE), "-o", "gif"], "'--output'"),
        (["simulate", str(EXAMPLE), "-o", "xml"], "'--output'"),
        (["simulate"], "SCENARIO"),
        (["compare"], "POD"),
        (["advise"], "FILE..."),
        (["no-such-command"], "no-such-command"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], words: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert_input_error(result, words, "--help")


def test_bare_command_shows_help() -> None:
    result = CliRunner().invoke(cli, [])
    assert result.exit_code == 2
    assert "Usage: " in result.output
    assert "simulate" in result.output
    assert "Traceback" not in result.output


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("podnuma, version ")


# --------------------------------------------------------------------------
# explain / topology


@pytest.mark.parametrize("step", ["99", "-1", "4"])  # out of range, negative, a removal step
def test_explain_step_without_admission(step: str) -> None:
    result = CliRunner().invoke(cli, ["explain", str(EXAMPLE), "--step", step])
    assert_input_error(result, str(EXAMPLE), f"step {step}")


def test_explain_and_topology_zero_steps(tmp_path: Path) -> None:
    doc = base()
    doc["steps"] = []
    scenario = write(tmp_path / "s.yaml", doc)
    assert CliRunner().invoke(cli, ["explain", str(scenario)]).exit_code == 0
    assert CliRunner().invoke(cli, ["topology", str(scenario)]).exit_code == 0
    assert CliRunner().invoke(cli, ["simulate", str(scenario)]).exit_code == 0
    result = CliRunner().invoke(cli, ["topology", str(scenario), "--step", "0"])
    assert_input_error(result, "--step 0")


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda d: write(d / "s.yaml", "[1"), "invalid YAML"),  # a bad scenario
        (lambda d: EXAMPLE, "--step 99"),  # a bad step
    ],
    ids=["bad-scenario", "bad-step"],
)
def test_topology_writes_nothing_on_error(
    build: Callable[[Path], Path], words: str, tmp_path: Path
) -> None:
    scenario = build(tmp_path)
    out = tmp_path / "pics" / "x.svg"
    out.parent.mkdir()
    result = CliRunner().invoke(cli, ["topology", str(scenario), "--step", "99", "--output-file", str(out)])
    assert_input_error(result, words)
    assert list(out.parent.iterdir()) == []


def test_topology_output_is_a_directory(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["topology", str(EXAMPLE), "--output-file", str(tmp_path)])
    assert_input_error(result, str(tmp_path), "Is a directory")


def test_topology_output_parent_missing(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "x.svg"
    result = CliRunner().invoke(cli, ["topology", str(EXAMPLE), "--output-file", str(out)])
    assert_input_error(result, str(out))
    assert not (tmp_path / "a").exists()


def test_topology_output_replaces_a_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "x.svg"
    out.write_text("old")
    result = CliRunner().invoke(cli, ["topology", str(EXAMPLE), "--output-file", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<?xml")
    assert [p.name for p in tmp_path.iterdir()] == ["x.svg"]  # no temporary file left


def test_topology_output_to_a_device_is_not_replaced() -> None:
    """A result is never written into a device (as every command's:
    ``-`` is standard output): one line, exit 2, the device as it was."""
    result = CliRunner().invoke(cli, ["topology", str(EXAMPLE), "--output-file", os.devnull, "-o", "svg"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: {os.devnull}: --output-file: cannot write: it exists and is not a regular file (a device, a "
        "named pipe or a socket is not replaced)"]
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


# --------------------------------------------------------------------------
# --checkpoint-dir: all or nothing


def test_checkpoint_target_is_a_directory(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.yaml", base())
    out = tmp_path / "out"
    (out / "memory_manager_state").mkdir(parents=True)
    result = CliRunner().invoke(cli, ["simulate", str(scenario), "--checkpoint-dir", str(out)])
    assert_input_error(result, str(out), "memory_manager_state")
    assert [p.name for p in out.iterdir()] == ["memory_manager_state"]  # cpu_manager_state not written


def test_checkpoint_dir_under_a_file(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.yaml", base())
    (tmp_path / "f").write_text("x")
    result = CliRunner().invoke(cli, ["simulate", str(scenario), "--checkpoint-dir", str(tmp_path / "f" / "d")])
    assert_input_error(result, "--checkpoint-dir")


# --------------------------------------------------------------------------
# compare / advise


def kubelet_file(tmp_path: Path, text: str) -> Path:
    """A kubelet configuration file (its type written, as the kubelet's
    loader wants it) holding ``text``."""
    p = tmp_path / "k.yaml"
    p.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n" + text)
    return p


@pytest.mark.parametrize("command", ["compare", "advise"])
def test_whatif_config_that_does_not_start(command: str, tmp_path: Path) -> None:
    cfg = kubelet_file(tmp_path, "cpuManagerPolicy: static\n")  # nothing reserved
    result = CliRunner().invoke(cli, [command, str(TRAINER), "--kubelet-config", str(cfg)])
    err = assert_input_error(result, "kubelet would not start", f"{cfg}: reservedSystemCPUs")
    assert result.stdout == "", err


@pytest.mark.parametrize("command", ["compare", "advise"])
def test_whatif_config_unknown_gate(command: str, tmp_path: Path) -> None:
    cfg = kubelet_file(tmp_path, "featureGates: {NoSuchGate: true}\n")
    result = CliRunner().invoke(cli, [command, str(TRAINER), "--kubelet-config", str(cfg)])
    assert_input_error(result, "kubelet would not start", f"{cfg}: featureGates")


@pytest.mark.parametrize("command", ["compare", "advise"])
@pytest.mark.parametrize("option", ["--kubelet-config", "--node"])
def test_whatif_option_is_a_directory(command: str, option: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, [command, str(TRAINER), option, str(tmp_path)])
    assert_input_error(result, f"{tmp_path}: {option}: cannot read: Is a directory")


@pytest.mark.parametrize("command", ["compare", "advise"])
def test_whatif_node_too_small_for_the_default_config(command: str, tmp_path: Path) -> None:
    node_file = tmp_path / "n.yaml"
    node_file.write_text(dump(base()["node"]))  # 16 CPUs: the built-in config reserves 0,16
    result = CliRunner().invoke(cli, [command, str(TRAINER), "--node", str(node_file)])
    assert_input_error(result, "kubelet would not start", "reservedSystemCPUs")


def pod_list(*items: Any) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)})


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "no Pod in the file"),
        ("# only a comment\n", "no Pod in the file"),
        (pod_list(), "no Pod in the file"),
        (json.dumps({"apiVersion": "v1", "kind": "List", "items": None}), "no Pod in the file"),
        (json.dumps({"apiVersion": "v1", "kind": "List", "items": "x"}), ": items: must be a list"),
        (pod_list(pod("x"), pod("y", cpu="zz")),
         ": documents[0].items[1].spec.containers[0].resources.limits[cpu]: "),
        (pod_list(pod("x"), 5), ": documents[0].items[1]: must be a mapping (a Kubernetes object), got an integer"),
        # (not "y": YAML 1.1's true, a wrong type the API server reports before the unknown field)
        (dump(pod("x")) + "---\n" + dump({**pod("z"), "foo": 1}), ": documents[1].foo: unknown field"),
    ],
    ids=["empty", "comment", "empty-list", "null-items", "string-items", "invalid-pod-in-list",
         "integer-in-list", "unknown-field-second-document"],
)
def test_advise_bad_pod_files(text: str, words: str, tmp_path: Path) -> None:
    f = tmp_path / "pods.json" if text.startswith("{") else tmp_path / "pods.yaml"
    f.write_text(text)
    result = CliRunner().invoke(cli, ["advise", str(f), "-o", "json"])
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {f}"), lines
    assert words in lines[0], lines
    assert "Traceback" not in result.output


def test_advise_mixed_list_skips_other_kinds(tmp_path: Path) -> None:
    """kubectl get all -o json: Services and such are skipped, not errors."""
    f = tmp_path / "all.json"
    f.write_text(pod_list(pod("x"), {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}))
    result = CliRunner().invoke(cli, ["advise", str(f), "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [p["status"] for p in doc["pods"]] == ["skipped", "skipped"]
    assert doc["errors"] == []


@pytest.mark.parametrize("command", ["compare", "advise"])
def test_whatif_pod_typo(command: str, tmp_path: Path) -> None:
    doc = pod("x")
    c = doc["spec"]["containers"][0]
    c["resource"] = c.pop("resources")
    f = tmp_path / "p.yaml"
    f.write_text(dump(doc))
    result = CliRunner().invoke(cli, [command, str(f)])
    assert_input_error(result, str(f), "spec.containers[0].resource: unknown field")


# --------------------------------------------------------------------------
# what a person sees


def test_table_with_long_names_fits_120_columns(tmp_path: Path) -> None:
    doc = base()
    p = pod("a" * 200, "2", uid="u" * 40)
    p["metadata"]["namespace"] = "n" * 63
    ctr = p["spec"]["containers"][0]
    ctr["name"] = "c" * 63
    p["spec"]["containers"].append({**ctr, "name": "d" * 63})
    doc["steps"] = [{"addPod": p}] + [{"addPod": pod(f"odd{i}", "1")} for i in range(5)]
    doc["node"]["synthetic"]["coresPerNumaNode"] = 32
    result = CliRunner().invoke(cli, ["simulate", str(write(tmp_path / "s.yaml", doc))])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 120
    header = next(line for line in lines if line.lstrip().startswith("#"))
    for column in ("pod", "admission", "container", "CPUs", "isolation", "mems", "memory", "hint"):
        assert column in header.split(), header
    assert any("✓ admitted" in line for line in lines)


@pytest.mark.parametrize("command", [["simulate"], ["explain", "-o", "json"]])
def test_json_outputs_parse(command: list[str]) -> None:
    args = [command[0], str(EXAMPLE), *command[1:]]
    if command == ["simulate"]:
        args += ["-o", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(result.stdout), dict)


def test_a_number_too_long_to_convert_is_an_input_error(tmp_path: Path) -> None:
    """A JSON number of more digits than Python converts to an int (its
    default limit, 4,300) is refused in one line naming the file; in YAML
    such a plain scalar is out of int64 range, so go-yaml reads it as text
    (no internal error either way)."""
    digits = "1" + "0" * 5000
    scenario = base()
    scenario["steps"] = [{"addPod": pod("a", cpu="1", memory="1Gi")}]
    text = json.dumps(scenario).replace('"1Gi"', digits)
    assert digits in text
    (tmp_path / "s.json").write_text(text)
    result = CliRunner().invoke(cli, ["simulate", str(tmp_path / "s.json"), "-o", "json"])
    assert_input_error(result, "s.json", "invalid JSON", "4300 digits")
    yaml_text = dump(scenario).replace("1Gi", digits)
    assert digits in yaml_text
    (tmp_path / "s.yaml").write_text(yaml_text)
    result = CliRunner().invoke(cli, ["simulate", str(tmp_path / "s.yaml"), "-o", "json"])
    assert result.exit_code in (0, 2), (result.exit_code, result.output)
    assert "internal error" not in result.output


def _run_bounded(args: list[str], seconds: float = 60) -> tuple[int, str, str]:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", *args], capture_output=True, text=True,
                          timeout=seconds, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _run_waiting(args: list[str], wait: float) -> subprocess.Popen[str]:
    """The command started with the wait for a named pipe's writer set to
    ``wait`` seconds (``FIFO_WAIT_S``, 30 s by default)."""
    import sys

    code = ("import sys, podnuma.inputs.documents as d; d.FIFO_WAIT_S = float(sys.argv.pop(1)); "
            "from podnuma.cli import run; run()")
    return subprocess.Popen([sys.executable, "-c", code, str(wait), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_named_pipe_is_waited_on_for_a_writer_bounded(tmp_path: Path) -> None:
    """A named pipe given as a file: the open does not wait for a writer
    (it would wait for ever); the read waits, at most ``FIFO_WAIT_S``, for
    something to read: a writer that opens it a moment later is read, none
    is one line, exit 2."""
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)
    proc = _run_waiting(["simulate", str(fifo)], 0.5)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (2, "")
    assert err == (f"error: {fifo}: cannot read scenario file: a named pipe no writer opened "
                   "within 0.5 s\n")

    proc = _run_waiting(["simulate", str(fifo), "-o", "json"], 30)
    time.sleep(0.3)  # (the command started, and waiting: a writer comes later)
    with open(fifo, "wb") as w:  # (opens once the command has it open for reading)
        w.write(EXAMPLE.read_bytes())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["node"]["name"] == "worker-1"

    # a writer that opens it and writes nothing: the end of the input
    proc = _run_waiting(["simulate", str(fifo)], 30)
    with open(fifo, "wb"):
        pass
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (2, "", f"error: {fifo}: the scenario is empty\n")


def test_a_named_pipe_a_scenario_names_is_waited_on_as_one_on_the_command_line(tmp_path: Path) -> None:
    """``kubeletConfigFile: fifo`` in a scenario: the pipe's writer that
    comes a moment later is waited for (it was read at once, as empty:
    "the kubelet configuration file is empty"); none within the wait is one
    line naming the scenario's field, exit 2."""
    import yaml

    doc = yaml.safe_load((EXAMPLES / "pod-level/pod-scope-2-mixed.yaml").read_text())
    config = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
              **doc.pop("kubeletConfig")}
    doc["kubeletConfigFile"] = "fifo"
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(doc, sort_keys=False))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = _run_waiting(["simulate", str(scenario), "-o", "json"], 30)
    time.sleep(0.5)  # (the command started, and waiting: a writer comes later)
    with open(fifo, "w") as w:
        w.write(yaml.safe_dump(config))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["node"]["name"] == doc["node"]["name"]
    proc = _run_waiting(["simulate", str(scenario)], 0.5)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (2, "")
    assert err.startswith(f"error: {scenario}: kubeletConfigFile: kubelet configuration file {str(fifo)!r}: "
                          "cannot read kubelet configuration file: a named pipe no writer opened within 0.5 s"), err
    assert err.count("\n") == 1


def test_a_named_pipe_in_a_directory_is_not_waited_on(tmp_path: Path) -> None:
    """A named pipe met in a directory the command reads (a state
    directory's checkpoint) is not waited on: it reads as empty (one line,
    exit 2); in a fleet's dumps directory it is left out with a warning."""
    state = tmp_path / "state"
    state.mkdir()
    os.mkfifo(state / "cpu_manager_state")
    code, out, err = _run_bounded(["state", "inspect", str(state)])
    assert code == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1, err
    dumps = tmp_path / "dumps"
    shutil.copytree(FLEET_EXAMPLE, dumps)
    os.mkfifo(dumps / "more-pods.json")
    code, out, err = _run_bounded(["fleet", "analyze", str(dumps), "-o", "json"])
    assert code == 0, err
    assert f"warning: {dumps / 'more-pods.json'}: not a regular file: skipped\n" in err
    assert {"severity": "warning", "node": None, "file": str(dumps / "more-pods.json"), "path": None,
            "message": "not a regular file: skipped"} in json.loads(out)["issues"]


def test_a_checkpoint_that_is_a_pipe_with_a_writer_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A named pipe in a checkpoint's place that a process holds open for
    writing (and never writes): refused as not a regular file (one line,
    exit 2), not waited on for ever; the same for a directory."""
    state = tmp_path / "state"
    state.mkdir()
    fifo = state / "cpu_manager_state"
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDWR)  # (a writer that never writes)
    try:
        code, out, err = _run_bounded(["state", "inspect", str(state)])
    finally:
        os.close(holder)
    assert (code, out, err) == (2, "", f"error: {fifo}: cannot read: not a regular file\n")
    fifo.unlink()
    fifo.mkdir()
    code, out, err = _run_bounded(["state", "inspect", str(state)])
    assert (code, out, err) == (2, "", f"error: {fifo}: cannot read: Is a directory\n")


def test_fleet_pipes_are_read_once_and_replayed(tmp_path: Path) -> None:
    """``fleet analyze <(kubectl get pods -A -o json) ...``: a pipe is read
    once, so it is copied before the dumps are read (the replay reads a
    dump's pods back from the file); the report is the one the same dump
    gives as a file, named as given."""
    import sys

    pods = FLEET_EXAMPLE / "pods.json"
    rest = [str(FLEET_EXAMPLE / n) for n in ("nodes.json", "fleet.yaml", "configz",
                                             "noderesourcetopologies.json")]
    named = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(pods), *rest,
                            "-o", "json"], capture_output=True, text=True, timeout=120, check=False)
    assert named.returncode == 0, named.stderr
    r, w = os.pipe()
    writer = subprocess.Popen(["cat", str(pods)], stdout=w)
    os.close(w)
    try:
        piped = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", f"/dev/fd/{r}", *rest,
                                "-o", "json", "--workers", "2"], capture_output=True, text=True, timeout=120,
                               check=False, pass_fds=(r,))
    finally:
        os.close(r)
        writer.wait(timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout.replace(f"/dev/fd/{r}", str(pods))) == json.loads(named.stdout)
    assert json.loads(piped.stdout)["fleet"]["podsReplayed"] > 0


def test_a_pipe_with_a_writer_is_read_as_it_comes(tmp_path: Path) -> None:
    """A shell's ``<(command)``: a pipe whose writer is there from the
    start is read to its end, as standard input is."""
    import subprocess
    import sys

    r, w = os.pipe()
    writer = subprocess.Popen(["cat", str(EXAMPLE)], stdout=w)
    os.close(w)
    try:
        proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "simulate", f"/dev/fd/{r}", "-o", "json"],
                              capture_output=True, text=True, timeout=60, check=False, pass_fds=(r,))
    finally:
        os.close(r)
        writer.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["node"]["name"] == "worker-1"
