"""The scenario loader: documents, fields, references, error paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.inputs.documents import parse_document
from podnuma.inputs.scenario import load_scenario, load_scenario_text
from tests.scenario.helpers import base, dump, pod, write

# ---------------------------------------------------------------- documents


def test_yaml_and_positions() -> None:
    text = "a:\n  b:\n    - x: 1\n    - z: 2\n  example.com/gpu: 3\n"
    doc = parse_document(text, name="f.yaml")
    assert doc.data == {"a": {"b": [{"x": 1}, {"z": 2}], "example.com/gpu": 3}}
    assert doc.locate("a.b[1].z") == (4, 10)
    # dotted keys are matched whole
    assert doc.locate("a.example.com/gpu") == (5, 20)
    # unknown tails stop at the deepest field found
    assert doc.locate("a.b[7].z") == (2, 3)


def test_an_unknown_field_points_at_its_key() -> None:
    """An error about a value points at the value; an unknown field is about
    the key, so its position is the key's, whether the value is a scalar
    on the same line or a block below it."""
    doc = parse_document("a:\n  b: 1\n  c:\n    d: 2\n", name="f.yaml")
    assert doc.locate("a.b") == (2, 6)
    assert doc.locate("a.b", key=True) == (2, 3)
    assert doc.locate("a.c", key=True) == doc.locate("a.c") == (3, 3)
    assert doc.locate("a.c.d", key=True) == (4, 5)
    scalar = doc.enrich(InputError('unknown field "b"', path="a.b"))
    assert scalar.message.endswith("(line 2, column 3)")
    value = doc.enrich(InputError("must be a string, got an integer", path="a.b"))
    assert value.message.endswith("(line 2, column 6)")


def test_duplicate_keys_are_an_error() -> None:
    with pytest.raises(InputError) as e:
        parse_document("a: 1\nb: 2\na: 3\n", name="dup.yaml")
    assert e.value.file == "dup.yaml"
    assert "duplicate key 'a'" in e.value.message
    assert "line 3" in e.value.message


def test_timestamps_stay_strings() -> None:
    doc = parse_document("when: 2024-01-02\n", name="t.yaml")
    assert doc.data == {"when": "2024-01-02"}


@pytest.mark.parametrize(
    ("text", "line"),
    [("a: [1, 2\n", 2), ("a: b\n c: d: e\n", 2), ("- a\nb: c\n", 2), ("a: 'x\n", 2)],
)
def test_malformed_yaml_has_a_position(text: str, line: int) -> None:
    with pytest.raises(InputError) as e:
        parse_document(text, name="bad.yaml")
    assert e.value.file == "bad.yaml"
    assert e.value.message.startswith("invalid YAML:")
    assert f"line {line}" in e.value.message


def test_json_errors_have_a_position() -> None:
    with pytest.raises(InputError) as e:
        parse_document('{"a": 1,\n "b": }', name="bad.json")
    assert e.value.file == "bad.json"
    assert "invalid JSON" in e.value.message and "line 2" in e.value.message
    with pytest.raises(InputError, match="duplicate key 'a'"):
        parse_document('{"a": 1, "a": 2}', name="dup.json")


# ---------------------------------------------------------------- scenarios


def test_load_minimal(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path / "s.yaml", base()))
    assert sc.name == str(tmp_path / "s.yaml")
    assert sc.base_dir == tmp_path
    assert sc.machine.name == "test-node"
    assert sc.machine.topology.num_cpus == 16
    assert [s.op for s in sc.steps] == ["addPod", "addPod"]
    assert [s.path for s in sc.steps] == ["steps[0].addPod", "steps[1].addPod"]
    assert sc.steps[0].pod is not None and sc.steps[0].pod.uid == "uid-a"
    assert sc.steps[0].ref == "default/a"
    assert sc.cpu_checkpoint is None and sc.memory_checkpoint is None


def test_uid_is_derived_and_stable() -> None:
    doc = base()
    a = load_scenario_text(dump(doc), name="x.yaml", base_dir=Path("."))
    b = load_scenario_text(dump(doc), name="x.yaml", base_dir=Path("."))
    assert a.steps[1].pod is not None and b.steps[1].pod is not None
    assert a.steps[1].pod.uid == b.steps[1].pod.uid != ""


def test_json_scenario(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text(json.dumps(base()))
    assert len(load_scenario(p).steps) == 2


def test_removal_steps() -> None:
    doc = base()
    doc["steps"] += [
        {"removeContainer": {"pod": "default/a", "container": "app"}},
        {"removePod": "uid-a"},
    ]
    sc = load_scenario_text(dump(doc), name="x.yaml", base_dir=Path("."))
    rc, rp = sc.steps[2], sc.steps[3]
    assert (rc.op, rc.ref, rc.container, rc.path) == (
        "removeContainer", "default/a", "app", "steps[2].removeContainer",
    )
    assert (rp.op, rp.ref, rp.path) == ("removePod", "uid-a", "steps[3].removePod")


def test_kubelet_config_file_is_relative_to_the_scenario(tmp_path: Path) -> None:
    doc = base()
    cfg = doc.pop("kubeletConfig")
    write(tmp_path / "conf" / "kubelet.yaml", {
        "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **cfg,
    })
    doc["kubeletConfigFile"] = "conf/kubelet.yaml"
    sc = load_scenario(write(tmp_path / "s.yaml", doc))
    assert sc.config.cpu_manager_policy == "static"
    assert str(tmp_path / "conf" / "kubelet.yaml") in sc.files


def test_default_kubelet_config() -> None:
    doc = base()
    del doc["kubeletConfig"]
    sc = load_scenario_text(dump(doc), name="x.yaml", base_dir=Path("."))
    assert sc.config.cpu_manager_policy == "none"


def _err(doc: object, name: str = "x.yaml") -> InputError:
    text = doc if isinstance(doc, str) else dump(doc)
    with pytest.raises(InputError) as e:
        load_scenario_text(text, name=name, base_dir=Path("/nonexistent"))
    assert e.value.file is not None
    return e.value


@pytest.mark.parametrize(
    ("mutate", "path", "words"),
    [
        (lambda d: d.update(nodes={}), "nodes", "unknown field"),
        (lambda d: d.pop("node"), "node", "required"),
        (lambda d: d.pop("steps"), "steps", "required"),
        (lambda d: d.pop("apiVersion"), "apiVersion", "required"),
        (lambda d: d.update(apiVersion="v1"), "apiVersion", "podnuma.io/v1"),
        (lambda d: d.update(kind="Pod"), "kind", "Scenario"),
        (lambda d: d.update(steps={"a": 1}), "steps", "list"),
        (lambda d: d.update(node=[1]), "node", "mapping"),
        (lambda d: d.update(kubeletConfig="static"), "kubeletConfig", "mapping"),
        (lambda d: d.update(kubeletConfigFile="k.yaml"), "kubeletConfigFile", "not both"),
        (lambda d: d.update(state=[]), "state", "mapping"),
        (lambda d: d.update(state={"cpu": {}}), "state.cpu", "unknown field"),
        (lambda d: d.update(state={"cpuManagerFile": "a", "cpuManager": {}}), "state.cpuManagerFile", "not both"),
        (lambda d: d.update(state={"cpuManagerFile": "missing.json"}), "state.cpuManagerFile", "not found"),
        (lambda d: d.update(state={"cpuManagerFile": 3}), "state.cpuManagerFile", "string"),
        (lambda d: d.update(state={"deviceManagerFile": "a", "deviceManager": {}}), "state.deviceManagerFile", "not both"),
        (lambda d: d.update(state={"deviceManagerFile": "missing.json"}), "state.deviceManagerFile", "not found"),
        (lambda d: d.update(state={"deviceManager": [1]}), "state.deviceManager", "mapping"),
        (lambda d: d["steps"].append("removePod"), "steps[2]", "mapping"),
        (lambda d: d["steps"].append({}), "steps[2]", "exactly one"),
        (lambda d: d["steps"].append({"removePod": "a", "addPod": {}}), "steps[2]", "exactly one"),
        (lambda d: d["steps"].append({"deletePod": "a"}), "steps[2].deletePod", "unknown field"),
        (lambda d: d["steps"].append({"removePod": 5}), "steps[2].removePod", "string"),
        (lambda d: d["steps"].append({"removePod": ""}), "steps[2].removePod", "empty"),
        (lambda d: d["steps"].append({"removeContainer": "a/b"}), "steps[2].removeContainer", "mapping"),
        (lambda d: d["steps"].append({"removeContainer": {"pod": "a"}}), "steps[2].removeContainer.container", "required"),
        (lambda d: d["steps"].append({"removeContainer": {"pod": "a", "container": "c", "x": 1}}), "steps[2].removeContainer.x", "unknown field"),
        (lambda d: d["steps"].append({"addPod": []}), "steps[2].addPod", "mapping"),
    ],
)
def test_scenario_field_errors(mutate, path: str, words: str) -> None:  # type: ignore[no-untyped-def]
    doc = base()
    mutate(doc)
    err = _err(doc)
    assert err.file == "x.yaml"
    assert err.path == path
    assert words in err.message
    if words == "required" and "." not in path:
        assert "(line " not in err.message  # a missing top-level field has no position
    else:
        assert "(line " in err.message  # the field's position is given


def test_errors_from_components_get_prefixed() -> None:
    doc = base()
    doc["steps"][0]["addPod"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "2x"
    err = _err(doc)
    assert err.path == "steps[0].addPod.spec.containers[0].resources.limits[cpu]"
    doc = base()
    doc["kubeletConfig"]["maxPods"] = "many"
    assert _err(doc).path.startswith("kubeletConfig.maxPods")
    doc = base()
    doc["node"]["synthetic"]["sockets"] = "two"
    assert _err(doc).path == "node.synthetic.sockets"


def test_empty_and_non_mapping_documents() -> None:
    assert "empty" in _err("").message
    assert "mapping" in _err("- 1\n- 2\n").message


def test_kubelet_config_file_errors_name_that_file(tmp_path: Path) -> None:
    doc = base()
    del doc["kubeletConfig"]
    doc["kubeletConfigFile"] = "kubelet.yaml"
    write(tmp_path / "kubelet.yaml", "cpuManagerPolicy: static\nmaxPods: many\n")
    with pytest.raises(InputError) as e:
        load_scenario(write(tmp_path / "s.yaml", doc))
    assert e.value.file == str(tmp_path / "kubelet.yaml")
    assert e.value.path.startswith("maxPods")
    write(tmp_path / "kubelet.yaml", "cpuManagerPolicy: [\n")
    with pytest.raises(InputError) as e:
        load_scenario(tmp_path / "s.yaml")
    assert e.value.file == str(tmp_path / "kubelet.yaml")
    assert "invalid YAML" in e.value.message


def test_missing_scenario_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        load_scenario(tmp_path / "nope.yaml")
    assert e.value.file == str(tmp_path / "nope.yaml")
    assert "not found" in e.value.message


def test_pod_names_are_validated() -> None:
    doc = base()
    doc["steps"].append({"addPod": pod("Bad_Name")})
    err = _err(doc)
    assert err.path.startswith("steps[2].addPod.metadata.name")


# the device manager's checkpoint as kubelet v1.37.2 writes it (its own
# checkpoint package made these bytes)
_DEVICE_CHECKPOINT = (
    b'{"Data":{"PodDeviceEntries":[{"PodUID":"u1","ContainerName":"app","ResourceName":"example.com/gpu",'
    b'"DeviceIDs":{"0":["gpu0","gpu1"],"1":["gpu2"]},"AllocResp":"CgYKAUESAWIaFAoGL2Rldi94EgYvZGV2L3kaAnJ3"},'
    b'{"PodUID":"u1","ContainerName":"side","ResourceName":"example.com/nic","DeviceIDs":{"-1":["nic0"]},'
    b'"AllocResp":""}],"RegisteredDevices":{"example.com/gpu":["gpu0","gpu1","gpu2","gpu3"],'
    b'"example.com/nic":["nic0"]}},"Checksum":1052997933}'
)


@pytest.mark.parametrize("inline", [False, True], ids=["file", "inline"])
def test_device_manager_state(tmp_path: Path, inline: bool) -> None:
    doc = base()
    if inline:
        doc["state"] = {"deviceManager": json.loads(_DEVICE_CHECKPOINT)}
    else:
        (tmp_path / "dev.json").write_bytes(_DEVICE_CHECKPOINT)
        doc["state"] = {"deviceManagerFile": "dev.json"}
    sc = load_scenario_text(dump(doc), name="x.yaml", base_dir=tmp_path)
    assert sc.device_checkpoint is not None and sc.device_checkpoint.error is None
    assert sc.device_checkpoint.pods()["u1"]["app"] == {"example.com/gpu": ("gpu0", "gpu1", "gpu2")}
    assert sc.device_state_path == ("state.deviceManager" if inline else f"state.deviceManagerFile ({tmp_path / 'dev.json'})")
    assert sc.files == (() if inline else (str(tmp_path / "dev.json"),))


@pytest.mark.parametrize("raw", [b"not json", _DEVICE_CHECKPOINT.replace(b"1052997933", b"1")])
def test_unreadable_device_state_is_not_invalid_input(tmp_path: Path, raw: bytes) -> None:
    # the kubelet logs it and starts with no device state
    (tmp_path / "dev.json").write_bytes(raw)
    doc = base()
    doc["state"] = {"deviceManagerFile": "dev.json"}
    sc = load_scenario_text(dump(doc), name="x.yaml", base_dir=tmp_path)
    assert sc.device_checkpoint is not None and sc.device_checkpoint.error is not None
    assert sc.device_checkpoint.pods() == {}


def test_servers_refuse_a_device_checkpoint_file() -> None:
    from podnuma.inputs.text import NO_FILES, refuse_files

    doc = parse_document(dump({**base(), "state": {"deviceManagerFile": "/etc/passwd"}}), name="req.yaml")
    with pytest.raises(InputError) as e:
        refuse_files(doc)
    assert e.value.path == "state.deviceManagerFile" and NO_FILES in e.value.message
