"""Tests of the CPU manager checkpoint (podnuma.cm.cpumanager.checkpoint).

The restore table follows upstream's TestCheckpointStateRestore
(pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go); the vectors file
holds reference results computed with Go's encoding/json and go-spew for the
kubelet's checkpoint structs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podnuma.cm.checkpoint import CHECKSUM, CheckpointError, object_checksum, string_checksum
from podnuma.cm.cpumanager.checkpoint import (
    CPUCheckpointData,
    check_policy,
    cpu_checkpoint_object,
    debug_dump,
    decode_cpu_checkpoint,
    encode_cpu_checkpoint,
    load_cpu_checkpoint,
    parse_go_cpuset,
    restore_cpu_state,
    restore_error_message,
)
from podnuma.errors import KubeletStartupError
from podnuma.fileio import read_cpu_checkpoint_file, write_cpu_checkpoint_file
from podnuma.golang.types import GO_STRING, GoField, GoMap, GoPtr, GoStruct
from podnuma.machine.cpuset import CPUSet

_VECTORS = json.loads((Path(__file__).parent / "cpu_checkpoint_vectors.json").read_text())

C = CPUSet.parse

# -- upstream restore table ------------------------------------------------------

_V2_BLOB = """{
    "policyName": "static",
    "defaultCPUSet": "7-9",
    "entries": {"pod": {"container1": "4-6", "container2": "1-3"}},
    "checksum": 1942532442
}"""
_V3_BLOB = """{
    "policyName": "static",
    "defaultCPUSet": "1-2",
    "entries": {"pod1": {"container1": "5-6", "container2": "3-4"}},
    "podEntries": {"pod2": {"cpuSet": "7-9"}},
    "checksum": 766259872
}"""
_V4_FULL = r"""{
    "policyName": "other",
    "defaultCPUSet": "1-9",
    "checksum": 1234,
    "data": "{\"policyName\":\"static\",\"defaultCPUSet\":\"1-3\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"7-9\"}},\"podEntries\":{\"pod\":{\"cpuSet\":\"4-10\"}},\"baselines\":{\"pod\":{\"container1\":{\"baseline\":\"4-5\"},\"container2\":{\"baseline\":\"7-8\"}}}}",
    "dataChecksum": 1032795074
}"""

# (description, PodLevelResourceManagers gate or None for both, content,
#  configured policy, expected error (substring) or expected data)
_RESTORE_CASES: list[tuple[str, bool | None, str, str, str | CPUCheckpointData]] = [
    (
        "fail without data section",
        None,
        """{"policyName": "static", "defaultCPUSet": "7-9",
            "entries": {"pod": {"container1": "4-6", "container2": "1-3"}},
            "checksum": 1942532442, "dataChecksum": 1234}""",
        "none",
        "could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: "
        "unexpected end of JSON input",
    ),
    (
        "fail without dataChecksum section",
        None,
        r"""{"policyName": "static", "defaultCPUSet": "7-9",
            "entries": {"pod": {"container1": "4-6", "container2": "1-3"}},
            "checksum": 1942532442,
            "data": "{\"policyName\":\"static\",\"defaultCPUSet\":\"7-9\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"1-3\"}}}"}""",
        "none",
        "could not load v4 checkpoint: checkpoint is corrupted",
    ),
    (
        "restore default CPU set (corrupt V2 part ignored)",
        None,
        r"""{"policyName": "other", "defaultCPUSet": "1-9", "checksum": 1234,
            "data": "{\"policyName\":\"none\",\"defaultCPUSet\":\"4-6\"}",
            "dataChecksum": 657950972}""",
        "none",
        CPUCheckpointData("none", C("4-6")),
    ),
    (
        "restore valid checkpoint",
        None,
        r"""{"policyName": "other", "defaultCPUSet": "1-9", "checksum": 1234,
            "data": "{\"policyName\":\"static\",\"defaultCPUSet\":\"7-9\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"1-3\"}}}",
            "dataChecksum": 1420829534}""",
        "static",
        CPUCheckpointData("static", C("7-9"), {"pod": {"container1": C("4-6"), "container2": C("1-3")}}),
    ),
    (
        "fail with invalid checksum",
        None,
        r"""{"policyName": "static", "defaultCPUSet": "7-9",
            "entries": {"pod": {"container1": "4-6", "container2": "1-3"}},
            "checksum": 1942532442,
            "data": "{\"policyName\":\"static\",\"defaultCPUSet\":\"7-9\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"1-3\"}}}",
            "dataChecksum": 1234}""",
        "static",
        "checkpoint is corrupted",
    ),
    ("fail with invalid JSON", None, "{", "none", "unexpected end of JSON input"),
    (
        "fail with invalid policy name",
        None,
        r"""{"policyName": "static", "defaultCPUSet": "7-9",
            "entries": {"pod": {"container1": "4-6", "container2": "1-3"}},
            "checksum": 1942532442,
            "data": "{\"policyName\":\"other\",\"defaultCPUSet\":\"7-9\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"1-3\"}}}",
            "dataChecksum": 1432271708}""",
        "none",
        'configured policy "none" differs from state checkpoint policy "other"',
    ),
    (
        "fail with unparsable default CPU set",
        None,
        r"""{"policyName": "none", "defaultCPUSet": "7-9", "checksum": 98002435,
            "data": "{\"policyName\":\"none\",\"defaultCPUSet\":\"1.3\"}",
            "dataChecksum": 3033143655}""",
        "none",
        'could not parse default CPU set "1.3": strconv.Atoi: parsing "1.3": invalid syntax',
    ),
    (
        "fail with unparsable assignment entry",
        None,
        r"""{"policyName": "static", "defaultCPUSet": "1-3",
            "entries": {"pod": {"container1": "4-6", "container2": "7-9"}},
            "checksum": 1659543133,
            "data": "{\"policyName\":\"static\",\"defaultCPUSet\":\"1-3\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"asd\"}}}",
            "dataChecksum": 3794806925}""",
        "static",
        'could not parse cpuset "asd" for container "container2" in pod "pod": '
        'strconv.Atoi: parsing "asd": invalid syntax',
    ),
    (
        "unknown fields in data section are ignored",
        None,
        r"""{"policyName": "other", "defaultCPUSet": "1-9", "checksum": 1234,
            "data": "{\"policyName\":\"none\",\"defaultCPUSet\":\"4-6\",\"unknownField\":\"value\"}",
            "dataChecksum": 3492408555}""",
        "none",
        CPUCheckpointData("none", C("4-6")),
    ),
    (
        "fail on a checkpoint with a v1 checksum",
        None,
        '{"policyName": "none", "defaultCPUSet": "1-3", "checksum": 1694838852}',
        "none",
        "checkpoint is corrupted",
    ),
    (
        "fail on a v1 checkpoint (no migration from v1)",
        None,
        """{"policyName": "static", "defaultCPUSet": "7-9",
            "entries": {"containerID1": "4-6", "containerID2": "1-3"},
            "checksum": 2026311253}""",
        "static",
        "cannot unmarshal string into Go struct field CPUManagerCheckpointV2.entries",
    ),
    (
        "migrate from v2",
        None,
        _V2_BLOB,
        "static",
        CPUCheckpointData("static", C("7-9"), {"pod": {"container1": C("4-6"), "container2": C("1-3")}}),
    ),
    (
        "migrate from v3, pod-level gate off",
        False,
        _V3_BLOB,
        "static",
        CPUCheckpointData("static", C("1-2"), {"pod1": {"container1": C("5-6"), "container2": C("3-4")}}),
    ),
    (
        "migrate from v3, pod-level gate on",
        True,
        _V3_BLOB,
        "static",
        CPUCheckpointData(
            "static", C("1-2"), {"pod1": {"container1": C("5-6"), "container2": C("3-4")}}, {"pod2": C("7-9")}
        ),
    ),
    (
        "valid v4, pod-level gate off",
        False,
        _V4_FULL,
        "static",
        CPUCheckpointData("static", C("1-3"), {"pod": {"container1": C("4-6"), "container2": C("7-9")}}),
    ),
    (
        "valid v4, pod-level gate on",
        True,
        _V4_FULL,
        "static",
        CPUCheckpointData(
            "static", C("1-3"), {"pod": {"container1": C("4-6"), "container2": C("7-9")}}, {"pod": C("4-10")}
        ),
    ),
    (
        "v4 pod entries (upstream TestDeletePod content)",
        True,
        r"""{"data": "{\"policyName\":\"static\",\"defaultCPUSet\":\"1-3\",\"entries\":{\"pod1\":{\"container\":\"4-5\"},\"pod2\":{\"container\":\"7-8\"}},\"podEntries\":{\"pod1\":{\"cpuSet\":\"4-6\"},\"pod2\":{\"cpuSet\":\"7-9\"}}}",
            "dataChecksum": 2086345991}""",
        "static",
        CPUCheckpointData(
            "static",
            C("1-3"),
            {"pod1": {"container": C("4-5")}, "pod2": {"container": C("7-8")}},
            {"pod1": C("4-6"), "pod2": C("7-9")},
        ),
    ),
]


def _restore_params() -> list[Any]:
    params = []
    for desc, gate, content, policy, expected in _RESTORE_CASES:
        for g in (False, True) if gate is None else (gate,):
            params.append(pytest.param(content, policy, g, expected, id=f"{desc} [gate={g}]"))
    return params


@pytest.mark.parametrize(("content", "policy", "gate", "expected"), _restore_params())
def test_restore(content: str, policy: str, gate: bool, expected: str | CPUCheckpointData) -> None:
    if isinstance(expected, str):
        with pytest.raises(KubeletStartupError) as exc:
            restore_cpu_state(content.encode(), policy, pod_level_resource_managers=gate)
        message = str(exc.value)
        assert message.startswith("could not restore state from checkpoint: ")
        assert expected in message
        assert message.endswith(
            ', please drain this node and delete the CPU manager checkpoint file '
            '"/var/lib/kubelet/cpu_manager_state" before restarting Kubelet'
        )
    else:
        assert restore_cpu_state(content.encode(), policy, pod_level_resource_managers=gate) == expected
        # the same through the mapping form the scenario file gives
        assert decode_cpu_checkpoint(json.loads(content), pod_level_resource_managers=gate) == expected


def test_restore_message_wraps_exactly() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        restore_cpu_state(b"{", "none")
    assert str(exc.value) == (
        "could not restore state from checkpoint: unexpected end of JSON input, please drain this "
        'node and delete the CPU manager checkpoint file "/var/lib/kubelet/cpu_manager_state" '
        "before restarting Kubelet"
    )
    assert restore_error_message("x", "/tmp/k") == (
        'could not restore state from checkpoint: x, please drain this node and delete the CPU '
        'manager checkpoint file "/tmp/k/cpu_manager_state" before restarting Kubelet'
    )


def test_policy_is_checked_before_cpu_sets_are_parsed() -> None:
    data = '{"policyName":"static","defaultCpuSet":"zz"}'
    blob = json.dumps({"data": data, "dataChecksum": string_checksum(data)})
    with pytest.raises(KubeletStartupError) as exc:
        restore_cpu_state(blob, "none")
    assert 'configured policy "none" differs from state checkpoint policy "static"' in str(exc.value)


def test_check_policy() -> None:
    data = CPUCheckpointData("static", C("0-3"))
    check_policy(data, "static")
    with pytest.raises(KubeletStartupError) as exc:
        check_policy(data, "none")
    assert str(exc.value) == 'configured policy "none" differs from state checkpoint policy "static"'


# -- checksum compatibility (TestCPUManagerCheckpointV3_VerifyChecksum_Compatibility,
#    TestCPUManagerCheckpoint_MarshalCheckpoint_HashCompatibility) ------------------


@pytest.mark.parametrize("checksum", [766259872, 2284712151])  # legacy name, current name
def test_v3_accepts_legacy_and_current_checksum(checksum: int) -> None:
    blob = _V3_BLOB.replace("766259872", str(checksum))
    assert load_cpu_checkpoint(blob) == ("static", 3)


def test_v3_dump_and_checksums() -> None:
    dump, err = debug_dump(_V3_BLOB, 3)
    assert err is None
    assert dump == (
        "(*state.CPUManagerCheckpointV3){PolicyName:(string)static DefaultCPUSet:(string)1-2 "
        "Entries:(map[string]map[string]string)map[pod1:map[container1:5-6 container2:3-4]] "
        "PodEntries:(state.PodCPUAssignments)map[pod2:{CPUSet:(cpuset.CPUSet){elems:(map[int]struct {})"
        "map[7:{} 8:{} 9:{}]}}] Checksum:(checksum.Checksum)0}"
    )


def test_v2_checksum_is_the_legacy_struct_checksum() -> None:
    # what a v1.35 kubelet computes over its struct named CPUManagerCheckpoint
    legacy = GoStruct(
        "state.CPUManagerCheckpoint",
        (
            GoField("PolicyName", GO_STRING),
            GoField("DefaultCPUSet", GO_STRING),
            GoField("Entries", GoMap(GO_STRING, GoMap(GO_STRING, GO_STRING))),
            GoField("Checksum", CHECKSUM),
        ),
    )
    ck = object_checksum({"PolicyName": "none", "DefaultCPUSet": "1-3", "Entries": {}}, GoPtr(legacy))
    blob = json.dumps({"policyName": "none", "defaultCpuSet": "1-3", "checksum": ck})
    for gate in (False, True):
        # V3 rejects it (no podEntries in the legacy V2 struct), V2 accepts it
        assert load_cpu_checkpoint(blob, pod_level_resource_managers=gate) == ("none", 2)


def test_v2_checksum_zero_is_accepted() -> None:
    blob = '{"policyName":"none","defaultCpuSet":"1-3","checksum":0}'
    assert load_cpu_checkpoint(blob) == ("none", 2)


# -- Go reference vectors --------------------------------------------------------


def _outcome(blob: bytes, gate: bool) -> Any:
    try:
        data = decode_cpu_checkpoint(blob, pod_level_resource_managers=gate)
        _, version = load_cpu_checkpoint(blob, pod_level_resource_managers=gate)
    except CheckpointError as err:
        return "ERR " + str(err)
    return data, version


def _expected(go: str) -> Any:
    if go.startswith("ERR "):
        return go
    r = json.loads(go)
    try:
        entries = {
            pod: {c: parse_go_cpuset(s) for c, s in (containers or {}).items()}
            for pod, containers in (r["entries"] or {}).items()
        }
        data = CPUCheckpointData(
            r["policy"],
            parse_go_cpuset(r["default"]),
            entries,
            {uid: parse_go_cpuset(s) for uid, s in r["pods"].items()},
        )
    except ValueError:
        return "PARSE-ERROR"
    return data, r["version"]


@pytest.mark.parametrize("vec", _VECTORS["loads"], ids=lambda v: v["name"])
def test_load_vectors(vec: dict[str, Any]) -> None:
    blob = vec["blob"].encode("utf-8", "surrogatepass")
    for version, dump_key, err_key in ((2, "v2Dump", "v2Err"), (3, "v3Dump", "v3Err")):
        dump, err = debug_dump(blob, version)
        assert dump == vec[dump_key]
        assert err == vec[err_key]
    for gate, key in ((True, "finalOn"), (False, "finalOff")):
        expected = _expected(vec[key])
        got = _outcome(blob, gate)
        if expected == "PARSE-ERROR":
            # Go's loader succeeded; the CPU sets then fail restoreState's parse
            assert isinstance(got, str)
            assert got.startswith("ERR could not parse")
        else:
            assert got == expected


@pytest.mark.parametrize("vec", _VECTORS["writes"], ids=lambda v: v["name"])
def test_write_vectors(vec: dict[str, Any]) -> None:
    blob = json.loads(vec["blob"])
    # every checksum flavour is accepted by the matching reader
    for key, version in (("v3Std", 3), ("v3Legacy", 3), ("v2Legacy", 2)):
        if version == 2:
            blob2 = {k: v for k, v in blob.items() if k.lower() != "podentries"}
        else:
            blob2 = dict(blob)
        blob2["checksum"] = vec[key]
        text = json.dumps(blob2)
        assert load_cpu_checkpoint(text)[1] in (version, 3)
    data = decode_cpu_checkpoint(json.dumps(dict(blob, checksum=vec["v3Std"])))
    assert encode_cpu_checkpoint(data) == vec["v4Written"].encode()


# -- writing -----------------------------------------------------------------------


def test_encode_exact_bytes() -> None:
    data = CPUCheckpointData(
        "static",
        C("0-1,6-15"),
        {"pod-b": {"app": C("2-3")}, "pod-a": {"init": C("4-5"), "app": C("4-5")}},
        {"pod-b": C("2-5")},
    )
    expected = (
        '{"policyName":"static","defaultCpuSet":"0-1,6-15",'
        '"entries":{"pod-a":{"app":"4-5","init":"4-5"},"pod-b":{"app":"2-3"}},'
        '"checksum":'
    )
    data_part = (
        '"data":"{\\"policyName\\":\\"static\\",\\"defaultCpuSet\\":\\"0-1,6-15\\",'
        '\\"entries\\":{\\"pod-a\\":{\\"app\\":\\"4-5\\",\\"init\\":\\"4-5\\"},'
        '\\"pod-b\\":{\\"app\\":\\"2-3\\"}},\\"podEntries\\":{\\"pod-b\\":{\\"cpuSet\\":\\"2-5\\"}}}",'
    )
    out = encode_cpu_checkpoint(data).decode()
    # v1.37.2 V4: the embedded V2 checkpoint (no podEntries, its own V2
    # checksum under the legacy name), then data and dataChecksum
    assert out.startswith(expected)
    assert data_part in out
    assert not out.endswith("\n")
    obj = json.loads(out)
    assert list(obj) == ["policyName", "defaultCpuSet", "entries", "checksum", "data", "dataChecksum"]
    assert obj["checksum"] != 0
    assert decode_cpu_checkpoint(out) == data


def test_encode_policy_none_empty() -> None:
    out = encode_cpu_checkpoint(CPUCheckpointData("none", CPUSet()))
    # entries/podEntries are omitempty; an empty default set is ""
    assert out == (
        b'{"policyName":"none","defaultCpuSet":"","checksum":1353318690,'
        b'"data":"{\\"policyName\\":\\"none\\",\\"defaultCpuSet\\":\\"\\"}","dataChecksum":3028111495}'
    )


def test_encode_escapes_html_in_names() -> None:
    out = encode_cpu_checkpoint(CPUCheckpointData("static", C("0"), {"<p&>": {"c": C("1")}}))
    assert b'"entries":{"\\u003cp\\u0026\\u003e":{"c":"1"}}' in out
    assert b"\\\\u003cp\\\\u0026\\\\u003e" in out  # escaped again inside "data"
    assert decode_cpu_checkpoint(out).entries == {"<p&>": {"c": C("1")}}


def test_empty_pod_entry_is_an_empty_object() -> None:
    out = encode_cpu_checkpoint(CPUCheckpointData("static", C("0"), pod_entries={"p": CPUSet()}))
    assert b'\\"podEntries\\":{\\"p\\":{}}' in out  # inside "data" only
    assert decode_cpu_checkpoint(out).pod_entries == {"p": CPUSet()}


def test_cpu_checkpoint_object() -> None:
    data = CPUCheckpointData("static", C("0-3"), {"p": {"c": C("4")}})
    obj = cpu_checkpoint_object(data)
    assert obj["checksum"] != 0 and "podEntries" not in obj
    assert obj["entries"] == {"p": {"c": "4"}}
    assert json.loads(obj["data"])["defaultCpuSet"] == "0-3"
    assert decode_cpu_checkpoint(obj) == data


# -- files -----------------------------------------------------------------------------


def test_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "cpu_manager_state"
    assert read_cpu_checkpoint_file(path) is None
    data = CPUCheckpointData("static", C("0,2-7"), {"p": {"c": C("1")}}, {"p": C("1")})
    write_cpu_checkpoint_file(path, data)
    assert path.read_bytes() == encode_cpu_checkpoint(data)
    assert read_cpu_checkpoint_file(path) == data
    assert read_cpu_checkpoint_file(path, pod_level_resource_managers=False) == CPUCheckpointData(
        "static", C("0,2-7"), {"p": {"c": C("1")}}
    )


# -- cpuset.Parse errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("", ""),
        ("0-3,8", "0-3,8"),
        ("3,1,2", "1-3"),
        ("1-1", "1"),
        ("+1-+3", "1-3"),
        ("007", "7"),
        ("1.3", 'strconv.Atoi: parsing "1.3": invalid syntax'),
        ("asd", 'strconv.Atoi: parsing "asd": invalid syntax'),
        ("-1", 'strconv.Atoi: parsing "": invalid syntax'),
        ("1,", 'strconv.Atoi: parsing "": invalid syntax'),
        (" 1", 'strconv.Atoi: parsing " 1": invalid syntax'),
        ("3-1", 'invalid range "3-1" (3 > 1)'),
        ("1--2", 'invalid range "1--2" (1 > -2)'),
        ("1-2-3", 'strconv.Atoi: parsing "2-3": invalid syntax'),
        ("99999999999999999999", 'strconv.Atoi: parsing "99999999999999999999": value out of range'),
    ],
)
def test_parse_go_cpuset(text: str, result: str) -> None:
    try:
        got = str(parse_go_cpuset(text))
    except ValueError as err:
        got = str(err)
    assert got == result


# -- properties -------------------------------------------------------------------------------

_names = st.text(st.characters(exclude_categories=("Cs",)), max_size=10)
_cpus = st.integers(min_value=0, max_value=(1 << 200) - 1).map(CPUSet.from_mask)


@settings(max_examples=150, deadline=None)
@given(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=12),
    _cpus,
    st.dictionaries(_names, st.dictionaries(_names, _cpus, max_size=3), max_size=4),
    st.dictionaries(_names, _cpus, max_size=3),
)
def test_encode_decode_identity(
    policy: str, default: CPUSet, entries: dict[str, dict[str, CPUSet]], pods: dict[str, CPUSet]
) -> None:
    data = CPUCheckpointData(policy, default, entries, pods)
    blob = encode_cpu_checkpoint(data)
    assert decode_cpu_checkpoint(blob) == data
    assert load_cpu_checkpoint(blob) == (policy, 4)
    # the top-level V3 part is what an older kubelet reads: checksum 0 fails
    # V3 but V2 accepts it
    legacy = json.loads(blob)
    del legacy["data"], legacy["dataChecksum"]
    assert load_cpu_checkpoint(json.dumps(legacy)) == (policy, 2)
