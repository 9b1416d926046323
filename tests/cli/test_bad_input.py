"""Invalid input, end to end: exit code 2, a message naming the file and
the field, no traceback, no checkpoint files written."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli import cli

from ..scenario.helpers import base, dump, pod, write

Doc = dict[str, Any]


@dataclass
class Case:
    id: str
    # builds the files under the directory given; returns the scenario text
    # (or a doc) for scenario.yaml
    build: Callable[[Path, bytes], Doc | str]
    file: str  # name of the file the message must name
    path: str | None  # field path the message must name (None: see words)
    words: str = "line "  # what the message must say when there is no path


def mut(fn: Callable[[Doc], object]) -> Callable[[Path, bytes], Doc]:
    def build(_d: Path, _c: bytes) -> Doc:
        doc = base()
        fn(doc)
        return doc
    return build


def res(doc: Doc) -> Doc:
    r: Doc = doc["steps"][0]["addPod"]["spec"]["containers"][0]["resources"]
    return r


def with_ckpt_file(mangle: Callable[[bytes], bytes]) -> Callable[[Path, bytes], Doc]:
    def build(d: Path, ckpt: bytes) -> Doc:
        (d / "cpu_state.json").write_bytes(mangle(ckpt))
        doc = base()
        doc["state"] = {"cpuManagerFile": "cpu_state.json"}
        return doc
    return build


def bump_checksum(b: bytes) -> bytes:
    obj = json.loads(b)
    key = "dataChecksum" if "dataChecksum" in obj else "checksum"
    obj[key] = (obj[key] + 1) % 2**32
    return json.dumps(obj).encode()


def inline_bad_checksum(d: Path, ckpt: bytes) -> Doc:
    doc = base()
    doc["state"] = {"cpuManager": json.loads(bump_checksum(ckpt))}
    return doc


def kubelet_file(text: str) -> Callable[[Path, bytes], Doc]:
    def build(d: Path, _c: bytes) -> Doc:
        (d / "kubelet.yaml").write_text(text)
        doc = base()
        del doc["kubeletConfig"]
        doc["kubeletConfigFile"] = "kubelet.yaml"
        return doc
    return build


def text(t: str) -> Callable[[Path, bytes], str]:
    return lambda _d, _c: t


CASES = [
    Case("malformed-yaml", text("apiVersion: podnuma.io/v1\nsteps: [\n  {addPod: \n"), "scenario.yaml", None),
    Case("tab-indent", text("apiVersion: podnuma.io/v1\nnode:\n\tsynthetic: {}\n"), "scenario.yaml", None),
    Case("duplicate-key", text(dump(base()) + "steps: []\n"), "scenario.yaml", None),
    Case("not-a-mapping", text("- 1\n"), "scenario.yaml", None, "must be a mapping"),
    Case("empty-file", text(""), "scenario.yaml", None, "empty"),
    Case("unknown-top-level-key", mut(lambda d: d.update(step=[])), "scenario.yaml", "step"),
    Case("wrong-api-version", mut(lambda d: d.update(apiVersion="podnuma.io/v2")), "scenario.yaml", "apiVersion"),
    Case("missing-node", mut(lambda d: d.pop("node")), "scenario.yaml", "node"),
    Case("two-node-forms", mut(lambda d: d["node"].update(sysfs="/sys")), "scenario.yaml", "node"),
    Case("node-wrong-type", mut(lambda d: d.update(node="big")), "scenario.yaml", "node"),
    Case("synthetic-negative", mut(lambda d: d["node"]["synthetic"].update(sockets=-1)), "scenario.yaml", "node.synthetic.sockets"),
    Case("bad-quantity", mut(lambda d: res(d)["limits"].update(cpu="2 cores")), "scenario.yaml",
         "steps[0].addPod.spec.containers[0].resources.limits[cpu]"),
    Case("negative-cpu", mut(lambda d: res(d)["requests"].update(cpu="-1")), "scenario.yaml",
         "steps[0].addPod.spec.containers[0].resources.requests"),
    Case("requests-over-limits", mut(lambda d: res(d)["requests"].update(memory="2Gi")), "scenario.yaml",
         "steps[0].addPod.spec.containers[0].resources.requests"),
    Case("duplicate-container", mut(lambda d: d["steps"][0]["addPod"]["spec"]["containers"].append(
        pod("x")["spec"]["containers"][0])), "scenario.yaml", "steps[0].addPod.spec.containers[1].name"),
    Case("containers-wrong-type", mut(lambda d: d["steps"][0]["addPod"]["spec"].update(containers="app")),
         "scenario.yaml", "steps[0].addPod.spec.containers"),
    Case("kubelet-field-of-wrong-type", mut(lambda d: d["kubeletConfig"].update(maxPods="many")),
         "scenario.yaml", "kubeletConfig.maxPods"),
    Case("bad-reserved-cpus", mut(lambda d: d["kubeletConfig"].update(reservedSystemCPUs="0-")),
         "scenario.yaml", "kubeletConfig.reservedSystemCPUs"),
    Case("bad-policy-name", mut(lambda d: d["kubeletConfig"].update(cpuManagerPolicy=7)),
         "scenario.yaml", "kubeletConfig.cpuManagerPolicy"),
    Case("kubelet-file-wrong-type", kubelet_file("cpuManagerPolicy: static\nreservedSystemCPUs: '0'\nmaxPods: x\n"),
         "kubelet.yaml", "maxPods"),
    Case("kubelet-file-malformed", kubelet_file("cpuManagerPolicy: [static\n"), "kubelet.yaml", None),
    Case("missing-kubelet-file", mut(lambda d: (d.pop("kubeletConfig"), d.update(kubeletConfigFile="nope.yaml"))),
         "nope.yaml", "kubeletConfigFile"),
    Case("missing-machine-info-file", mut(lambda d: d.update(node={"machineInfoFile": "machine.json"})),
         "machine.json", "node.machineInfoFile"),
    Case("missing-checkpoint-file", mut(lambda d: d.update(state={"cpuManagerFile": "gone.json"})),
         "gone.json", "state.cpuManagerFile"),
    # a checkpoint the kubelet cannot restore stops its start (exit 2 too)
    Case("corrupt-checkpoint-json", with_ckpt_file(lambda b: b[: len(b) // 2]), "cpu_state.json", "state.cpuManagerFile"),
    Case("checkpoint-not-json", with_ckpt_file(lambda b: b"hello"), "cpu_state.json", "state.cpuManagerFile"),
    Case("checkpoint-checksum-mismatch", with_ckpt_file(bump_checksum), "cpu_state.json", "state.cpuManagerFile"),
    Case("inline-checkpoint-checksum", inline_bad_checksum, "scenario.yaml", "state.cpuManager"),
    Case("unknown-state-key", mut(lambda d: d.update(state={"cpu_manager_state": {}})), "scenario.yaml", "state.cpu_manager_state"),
    Case("steps-not-a-list", mut(lambda d: d.update(steps="addPod")), "scenario.yaml", "steps"),
    Case("step-two-keys", mut(lambda d: d["steps"].append({"removePod": "uid-a", "addPod": pod("c")})),
         "scenario.yaml", "steps[2]"),
    Case("step-unknown-op", mut(lambda d: d["steps"].append({"deletePod": "uid-a"})), "scenario.yaml", "steps[2].deletePod"),
    Case("step-scalar", mut(lambda d: d["steps"].append("removePod uid-a")), "scenario.yaml", "steps[2]"),
    Case("remove-unknown-pod", mut(lambda d: d["steps"].append({"removePod": "default/ghost"})),
         "scenario.yaml", "steps[2].removePod"),
    Case("remove-unknown-container", mut(lambda d: d["steps"].append(
        {"removeContainer": {"pod": "uid-a", "container": "ghost"}})), "scenario.yaml", "steps[2].removeContainer"),
    Case("remove-container-of-unknown-pod", mut(lambda d: d["steps"].append(
        {"removeContainer": {"pod": "x/y", "container": "app"}})), "scenario.yaml", "steps[2].removeContainer"),
    Case("remove-pod-twice", mut(lambda d: d["steps"].extend([{"removePod": "uid-a"}, {"removePod": "uid-a"}])),
         "scenario.yaml", "steps[3].removePod"),
    Case("remove-wrong-type", mut(lambda d: d["steps"].append({"removeContainer": {"pod": ["a"], "container": "app"}})),
         "scenario.yaml", "steps[2].removeContainer.pod"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, valid_cpu_checkpoint: bytes) -> None:
    built = case.build(tmp_path, valid_cpu_checkpoint)
    scenario = tmp_path / "scenario.yaml"
    write(scenario, built)
    out_dir = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["simulate", str(scenario), "-o", "json", "--checkpoint-dir", str(out_dir)]
    )
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    err = result.stderr
    assert result.stdout == ""
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err  # one line
    assert case.file in err, err
    if case.path is not None:
        assert f": {case.path}" in err, err
    else:
        assert case.words in err, err
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert not out_dir.exists() or not any(out_dir.iterdir())


@pytest.mark.parametrize("case", [c for c in CASES if "checkpoint" in c.id and c.id != "missing-checkpoint-file"],
                         ids=lambda c: c.id)
def test_unrestorable_checkpoint_stops_the_start(case: Case, tmp_path: Path, valid_cpu_checkpoint: bytes) -> None:
    """The kubelet's CPU manager refuses a checkpoint it cannot restore at
    its start: not invalid input, the kubelet's own start-up message."""
    scenario = write(tmp_path / "scenario.yaml", case.build(tmp_path, valid_cpu_checkpoint))
    result = CliRunner().invoke(cli, ["simulate", str(scenario)])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: kubelet would not start: start cpu manager error: could not restore state from checkpoint: "
    ), result.stderr
    assert 'delete the CPU manager checkpoint file "/var/lib/kubelet/cpu_manager_state"' in result.stderr


def test_kubelet_refusing_to_start(tmp_path: Path) -> None:
    doc = base()
    del doc["kubeletConfig"]["reservedSystemCPUs"]  # static policy, nothing reserved
    scenario = write(tmp_path / "s.yaml", doc)
    result = CliRunner().invoke(cli, ["simulate", str(scenario), "--checkpoint-dir", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: kubelet would not start: ")
    assert "s.yaml" in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_unknown_kubelet_field_runs_with_the_kubelets_warning(tmp_path: Path) -> None:
    # the kubelet's codec decodes such a file leniently and logs the strict error
    doc = base()
    doc["kubeletConfig"]["cpuManagerPolicyy"] = "none"
    scenario = write(tmp_path / "s.yaml", doc)
    result = CliRunner().invoke(cli, ["simulate", str(scenario), "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["steps"]
    assert (f"warning: {scenario}: kubeletConfig: Using lenient decoding as strict decoding failed"
            in result.stderr)
    assert result.stderr.rstrip().endswith('strict decoding error: unknown field "cpuManagerPolicyy"')


def test_checkpoint_dir_is_a_file(tmp_path: Path) -> None:
    scenario = write(tmp_path / "s.yaml", base())
    (tmp_path / "f").write_text("x")
    result = CliRunner().invoke(cli, ["simulate", str(scenario), "--checkpoint-dir", str(tmp_path / "f")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_missing_scenario(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(tmp_path / "none.yaml")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'none.yaml'}: scenario file not found\n"


def test_bad_output_option(scenario_path: Path) -> None:
    result = CliRunner().invoke(cli, ["simulate", str(scenario_path), "-o", "xml"])
    assert result.exit_code == 2


def test_kubelet_refusing_to_start_names_the_config_file(tmp_path: Path) -> None:
    doc = base()
    del doc["kubeletConfig"]
    doc["kubeletConfigFile"] = "kubelet.yaml"
    (tmp_path / "kubelet.yaml").write_text("cpuManagerPolicy: static\nreservedSystemCPUs: '0-'\n")
    result = CliRunner().invoke(cli, ["simulate", str(write(tmp_path / "s.yaml", doc))])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: kubelet would not start: ")
    assert f"({tmp_path / 'kubelet.yaml'}: reservedSystemCPUs)" in result.stderr


def test_json_scenario_errors_have_positions(tmp_path: Path) -> None:
    doc = base()
    res(doc)["limits"]["cpu"] = "x"
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc, indent=2))
    result = CliRunner().invoke(cli, ["simulate", str(p)])
    assert result.exit_code == 2
    assert f"error: {p}: steps[0].addPod.spec.containers[0].resources.limits[cpu]: " in result.stderr
    assert "(line " in result.stderr


@pytest.mark.parametrize("where", ["kubeletConfigFile", "state.cpuManagerFile", "state inspect"])
def test_a_file_a_scenario_or_state_names_is_read_within_the_byte_limit(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file a scenario refers to (its kubelet configuration, a checkpoint)
    or a state directory's checkpoint is read within the inputs' byte limit:
    one larger, or an endless one (a link to ``/dev/zero``), is one line and
    exit 2, not read whole (the endless one was read until memory ran out)."""
    from podnuma.inputs import limits

    for endless in (False, True):
        d = tmp_path / ("endless" if endless else "large")
        d.mkdir()
        target = d / "big"
        if endless:
            target.symlink_to("/dev/zero")
        else:
            monkeypatch.setattr(limits, "DEFAULT_LIMITS", limits.DEFAULT_LIMITS.with_bytes(4096))
            target.write_text("#" * 5000 + "\n")
        limit = limits.DEFAULT_LIMITS.max_bytes
        if where == "state inspect":
            (d / "cpu_manager_state").symlink_to(target)
            result = CliRunner().invoke(cli, ["state", "inspect", str(d)])
            # (a checkpoint is a regular file: the link to a device refused as such)
            why = "not a regular file" if endless else f"larger than the limit of {limit} bytes"
            want = f"error: {d / 'cpu_manager_state'}: cannot read: {why}\n"
        else:
            doc = base()
            if where == "kubeletConfigFile":
                del doc["kubeletConfig"]
                doc["kubeletConfigFile"] = str(target)
                what = "kubelet configuration"
            else:
                doc["state"] = {"cpuManagerFile": str(target)}
                what = "checkpoint"
            result = CliRunner().invoke(cli, ["simulate", str(write(d / "s.yaml", doc))])
            want = f"cannot read {what} file {str(target)!r}: larger than the limit of {limit} bytes"
        assert result.exit_code == 2, result.stderr
        assert want in result.stderr and result.stderr.count("\n") == 1, result.stderr
        monkeypatch.undo()
