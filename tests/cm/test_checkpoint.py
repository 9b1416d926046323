"""Tests of the shared checkpoint machinery (podnuma.cm.checkpoint).

Reference values were produced with Go 1.19, go-spew 1.1.1 and the kubelet's
hash printer config, for values declared with the kubelet's type names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podnuma.cm.checkpoint import (
    CHECKSUM,
    CheckpointError,
    dump_checksum,
    object_checksum,
    string_checksum,
)
from podnuma.errors import KubeletStartupError
from podnuma.fileio import atomic_write
from podnuma.golang.fnv import fnv32a
from podnuma.golang.json import (
    GoJSONError,
    JSONNumber,
    go_json_check,
    go_json_marshal,
    go_json_parse,
    go_json_quote,
    go_json_unmarshal,
    to_json_value,
)
from podnuma.golang.spew import spew_sdump
from podnuma.golang.strconv import go_quote
from podnuma.golang.types import (
    GO_BOOL,
    GO_INT,
    GO_STRING,
    GO_UINT64,
    GoBasic,
    GoField,
    GoMap,
    GoPtr,
    GoSlice,
    GoStruct,
)

# -- FNV-32a ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", 0x811C9DC5),
        (b"a", 0xE40C292C),
        (b"foobar", 0xBF9CF968),
        # FNV-32a of "(string)" (the dump of an empty Go string)
        (b"(string)", 441364273),
    ],
)
def test_fnv32a_known_values(data: bytes, expected: int) -> None:
    assert fnv32a(data) == expected


def test_string_checksum_is_fnv_of_typed_dump() -> None:
    # upstream fixture: the V4 "data" of "Restore default CPU set"
    assert string_checksum('{"policyName":"none","defaultCPUSet":"4-6"}') == 657950972
    assert string_checksum("") == fnv32a(b"(string)")


# -- go-spew %#v of memory-manager shaped and miscellaneous values -----------

_RESOURCE = GO_STRING.named("v1.ResourceName")
_TABLE = GoStruct(
    "state.MemoryTable",
    (
        GoField("TotalMemSize", GO_UINT64, "total"),
        GoField("SystemReserved", GO_UINT64, "systemReserved"),
        GoField("Allocatable", GO_UINT64, "allocatable"),
        GoField("Reserved", GO_UINT64, "reserved"),
        GoField("Free", GO_UINT64, "free"),
    ),
)
_NODE = GoStruct(
    "state.NUMANodeState",
    (
        GoField("NumberOfAssignments", GO_INT, "numberOfAssignments"),
        GoField("MemoryMap", GoMap(_RESOURCE, GoPtr(_TABLE)), "memoryMap"),
        GoField("Cells", GoSlice(GO_INT), "cells"),
    ),
)
_BLOCK = GoStruct(
    "state.Block",
    (
        GoField("NUMAAffinity", GoSlice(GO_INT), "numaAffinity"),
        GoField("Type", _RESOURCE, "type"),
        GoField("Size", GO_UINT64, "size"),
    ),
)
_MEM_CP = GoStruct(
    "state.MemoryManagerCheckpoint",
    (
        GoField("PolicyName", GO_STRING, "policyName"),
        GoField("MachineState", GoMap(GO_INT, GoPtr(_NODE), "state.NUMANodeMap"), "machineState"),
        GoField(
            "Entries",
            GoMap(GO_STRING, GoMap(GO_STRING, GoSlice(_BLOCK)), "state.ContainerMemoryAssignments"),
            "entries",
            omitempty=True,
        ),
        GoField("Checksum", CHECKSUM, "checksum"),
    ),
)
_MISC = GoStruct(
    "state.Misc",
    (
        GoField("B", GO_BOOL),
        GoField("I8", GoBasic("int8")),
        GoField("I64", GoBasic("int64")),
        GoField("U8", GoBasic("uint8")),
        GoField("U32", GoBasic("uint32")),
        GoField("PP", GoPtr(GoPtr(GO_INT))),
        GoField("NP", GoPtr(GO_INT)),
        GoField("SL", GoSlice(GO_STRING)),
        GoField("NS", GoSlice(GO_STRING)),
        GoField("ES", GoSlice(GO_STRING)),
        GoField("MB", GoMap(GO_BOOL, GO_STRING)),
        GoField("MI", GoMap(GO_INT, GO_INT)),
        GoField("M", GoMap(GO_STRING, GoPtr(GO_INT))),
    ),
)


def _table(reserved: int) -> dict[str, int]:
    return {
        "TotalMemSize": 17179869184,
        "SystemReserved": 1073741824,
        "Allocatable": 16106127360,
        "Reserved": reserved,
        "Free": 16106127360 - reserved,
    }


def _mem_full() -> dict[str, Any]:
    machine: dict[int, Any] = {
        i: {
            "NumberOfAssignments": i,
            "MemoryMap": {
                "memory": _table(i << 30),
                "hugepages-1Gi": {"TotalMemSize": 0},
                "hugepages-2Mi": None,
            },
            "Cells": [i, 0],
        }
        for i in (10, 2, 0, 1)
    }
    machine[3] = None
    machine[4] = {}
    entries = {
        "pod-b": {
            "c2": [
                {"NUMAAffinity": [0, 1], "Type": "memory", "Size": 1 << 31},
                {"NUMAAffinity": None, "Type": "hugepages-1Gi", "Size": 0},
            ]
        },
        "pod-a": {"c1": None, "c0": []},
    }
    return {"PolicyName": "Static", "MachineState": machine, "Entries": entries, "Checksum": 12345}


_SPEW_CASES: dict[str, tuple[Any, Any]] = {
    "mem_empty": ({}, GoPtr(_MEM_CP)),
    "mem_empty_maps": (
        {"PolicyName": "Static", "MachineState": {}, "Entries": {}},
        GoPtr(_MEM_CP),
    ),
    "mem_full": (_mem_full(), GoPtr(_MEM_CP)),
    "misc": (
        {
            "B": True, "I8": -5, "I64": -(1 << 63), "U8": 255, "U32": 4294967295,
            "PP": 7, "NP": None, "SL": ["a b", "<&>", "é"], "NS": None, "ES": [],
            "MB": {True: "t", False: "f"}, "MI": {-3: 1, 10: 2, 2: 3}, "M": {"z": None, "a": 7},
        },
        GoPtr(_MISC),
    ),
    "misc_zero": ({}, _MISC),
    "string": ('hello <world> & "x"', GO_STRING),
    "ptr_nil": (None, GoPtr(_MEM_CP)),
}

# name: (FNV-32a, spew dump, json.Marshal) -- json "ERR" where Go refuses
_GO_REFERENCE: dict[str, tuple[int, str, str]] = {
    'mem_empty': (2066138859, '(*state.MemoryManagerCheckpoint){PolicyName:(string) MachineState:(state.NUMANodeMap)<nil> Entries:(state.ContainerMemoryAssignments)<nil> Checksum:(checksum.Checksum)0}', '{"policyName":"","machineState":null,"checksum":0}'),
    'mem_empty_maps': (3940083781, '(*state.MemoryManagerCheckpoint){PolicyName:(string)Static MachineState:(state.NUMANodeMap)map[] Entries:(state.ContainerMemoryAssignments)map[] Checksum:(checksum.Checksum)0}', '{"policyName":"Static","machineState":{},"checksum":0}'),
    'mem_full': (1131054921, '(*state.MemoryManagerCheckpoint){PolicyName:(string)Static MachineState:(state.NUMANodeMap)map[0:<*>{NumberOfAssignments:(int)0 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[hugepages-1Gi:<*>{TotalMemSize:(uint64)0 SystemReserved:(uint64)0 Allocatable:(uint64)0 Reserved:(uint64)0 Free:(uint64)0} hugepages-2Mi:<nil> memory:<*>{TotalMemSize:(uint64)17179869184 SystemReserved:(uint64)1073741824 Allocatable:(uint64)16106127360 Reserved:(uint64)0 Free:(uint64)16106127360}] Cells:([]int)[0 0]} 1:<*>{NumberOfAssignments:(int)1 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[hugepages-1Gi:<*>{TotalMemSize:(uint64)0 SystemReserved:(uint64)0 Allocatable:(uint64)0 Reserved:(uint64)0 Free:(uint64)0} hugepages-2Mi:<nil> memory:<*>{TotalMemSize:(uint64)17179869184 SystemReserved:(uint64)1073741824 Allocatable:(uint64)16106127360 Reserved:(uint64)1073741824 Free:(uint64)15032385536}] Cells:([]int)[1 0]} 2:<*>{NumberOfAssignments:(int)2 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[hugepages-1Gi:<*>{TotalMemSize:(uint64)0 SystemReserved:(uint64)0 Allocatable:(uint64)0 Reserved:(uint64)0 Free:(uint64)0} hugepages-2Mi:<nil> memory:<*>{TotalMemSize:(uint64)17179869184 SystemReserved:(uint64)1073741824 Allocatable:(uint64)16106127360 Reserved:(uint64)2147483648 Free:(uint64)13958643712}] Cells:([]int)[2 0]} 3:<nil> 4:<*>{NumberOfAssignments:(int)0 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)<nil> Cells:([]int)<nil>} 10:<*>{NumberOfAssignments:(int)10 MemoryMap:(map[v1.ResourceName]*state.MemoryTable)map[hugepages-1Gi:<*>{TotalMemSize:(uint64)0 SystemReserved:(uint64)0 Allocatable:(uint64)0 Reserved:(uint64)0 Free:(uint64)0} hugepages-2Mi:<nil> memory:<*>{TotalMemSize:(uint64)17179869184 SystemReserved:(uint64)1073741824 Allocatable:(uint64)16106127360 Reserved:(uint64)10737418240 Free:(uint64)5368709120}] Cells:([]int)[10 0]}] Entries:(state.ContainerMemoryAssignments)map[pod-a:map[c0:[] c1:<nil>] pod-b:map[c2:[{NUMAAffinity:([]int)[0 1] Type:(v1.ResourceName)memory Size:(uint64)2147483648} {NUMAAffinity:([]int)<nil> Type:(v1.ResourceName)hugepages-1Gi Size:(uint64)0}]]] Checksum:(checksum.Checksum)12345}', '{"policyName":"Static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"hugepages-1Gi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"hugepages-2Mi":null,"memory":{"total":17179869184,"systemReserved":1073741824,"allocatable":16106127360,"reserved":0,"free":16106127360}},"cells":[0,0]},"1":{"numberOfAssignments":1,"memoryMap":{"hugepages-1Gi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"hugepages-2Mi":null,"memory":{"total":17179869184,"systemReserved":1073741824,"allocatable":16106127360,"reserved":1073741824,"free":15032385536}},"cells":[1,0]},"10":{"numberOfAssignments":10,"memoryMap":{"hugepages-1Gi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"hugepages-2Mi":null,"memory":{"total":17179869184,"systemReserved":1073741824,"allocatable":16106127360,"reserved":10737418240,"free":5368709120}},"cells":[10,0]},"2":{"numberOfAssignments":2,"memoryMap":{"hugepages-1Gi":{"total":0,"systemReserved":0,"allocatable":0,"reserved":0,"free":0},"hugepages-2Mi":null,"memory":{"total":17179869184,"systemReserved":1073741824,"allocatable":16106127360,"reserved":2147483648,"free":13958643712}},"cells":[2,0]},"3":null,"4":{"numberOfAssignments":0,"memoryMap":null,"cells":null}},"entries":{"pod-a":{"c0":[],"c1":null},"pod-b":{"c2":[{"numaAffinity":[0,1],"type":"memory","size":2147483648},{"numaAffinity":null,"type":"hugepages-1Gi","size":0}]}},"checksum":12345}'),
    'misc': (2231645420, '(*state.Misc){B:(bool)true I8:(int8)-5 I64:(int64)-9223372036854775808 U8:(uint8)255 U32:(uint32)4294967295 PP:(**int)7 NP:(*int)<nil> SL:([]string)[a b <&> é] NS:([]string)<nil> ES:([]string)[] MB:(map[bool]string)map[false:f true:t] MI:(map[int]int)map[-3:1 2:3 10:2] M:(map[string]*int)map[a:<*>7 z:<nil>]}', 'ERR'),
    'misc_zero': (3760775977, '(state.Misc){B:(bool)false I8:(int8)0 I64:(int64)0 U8:(uint8)0 U32:(uint32)0 PP:(**int)<nil> NP:(*int)<nil> SL:([]string)<nil> NS:([]string)<nil> ES:([]string)<nil> MB:(map[bool]string)<nil> MI:(map[int]int)<nil> M:(map[string]*int)<nil>}', 'ERR'),
    'string': (792366195, '(string)hello <world> & "x"', '"hello \\u003cworld\\u003e \\u0026 \\"x\\""'),
    'ptr_nil': (2456171424, '(*state.MemoryManagerCheckpoint)<nil>', 'null'),
}


@pytest.mark.parametrize("name", sorted(_SPEW_CASES))
def test_spew_dump_matches_go(name: str) -> None:
    value, typ = _SPEW_CASES[name]
    checksum, dump, _ = _GO_REFERENCE[name]
    assert spew_sdump(value, typ) == dump
    assert object_checksum(value, typ) == checksum
    assert dump_checksum(dump) == checksum


@pytest.mark.parametrize("name", sorted(n for n in _SPEW_CASES if _GO_REFERENCE[n][2] != "ERR"))
def test_json_marshal_matches_go(name: str) -> None:
    value, typ = _SPEW_CASES[name]
    assert go_json_marshal(value, typ) == _GO_REFERENCE[name][2]


def test_json_marshal_sorts_int_keys_as_strings() -> None:
    out = go_json_marshal({10: 1, 2: 2, 1: 3}, GoMap(GO_INT, GO_INT))
    assert out == '{"1":3,"10":1,"2":2}'


def test_spew_sorts_int_keys_numerically_and_strings_bytewise() -> None:
    assert spew_sdump({10: 1, 2: 2, -1: 3}, GoMap(GO_INT, GO_INT)) == "(map[int]int)map[-1:3 2:2 10:1]"
    keys = {"b": "", "B": "", "é": "", "z": "", "": ""}
    assert spew_sdump(keys, GoMap(GO_STRING, GO_STRING)) == "(map[string]string)map[: B: b: z: é:]"


# -- json string escaping -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", '"plain"'),
        ("<a&b>", '"\\u003ca\\u0026b\\u003e"'),
        ('q"b\\', '"q\\"b\\\\"'),
        ("\n\r\t", '"\\n\\r\\t"'),
        # Go >= 1.22 writes \b and \f as short escapes (the kubelet is built
        # with a recent Go)
        ("\b\f", '"\\b\\f"'),
        ("\x00\x01\x1f\x7f", '"\\u0000\\u0001\\u001f\x7f"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ("é中😀", '"é中😀"'),
    ],
)
def test_go_json_quote(text: str, expected: str) -> None:
    assert go_json_quote(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("static", '"static"'),
        ('a"b', '"a\\"b"'),
        ("é\t\x00\x7f\u00a0", '"é\\t\\x00\\x7f\\u00a0"'),
        ("😀", '"😀"'),
    ],
)
def test_go_quote(text: str, expected: str) -> None:
    assert go_quote(text) == expected


# -- json syntax errors, Go's messages (checked against Go 1.19) -------------


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"", "unexpected end of JSON input"),
        (b"   ", "unexpected end of JSON input"),
        (b"{", "unexpected end of JSON input"),
        (b'{"a":"x', "unexpected end of JSON input"),
        (b"{} x", "invalid character 'x' after top-level value"),
        (b'{"a":tru}', "invalid character '}' in literal true (expecting 'e')"),
        (b'{"a":nul}', "invalid character '}' in literal null (expecting 'l')"),
        (b'{"a":-}', "invalid character '}' in numeric literal"),
        (b'{"a":1.}', "invalid character '}' after decimal point in numeric literal"),
        (b'{"a":1e}', "invalid character '}' in exponent of numeric literal"),
        (b'{"a":01}', "invalid character '1' after object key:value pair"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b'{"a":"\\x"}', "invalid character 'x' in string escape code"),
        (b'{"a":"\\u12g4"}', "invalid character 'g' in \\u hexadecimal character escape"),
        (b'{"a":"\x01"}', "invalid character '\\x01' in string literal"),
        (b"{,}", "invalid character ',' looking for beginning of object key string"),
        (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        (b"\xef\xbb\xbf{}", "invalid character '\u00ef' looking for beginning of value"),
        (b"'", "invalid character '\\'' looking for beginning of value"),
        # at the end, Go's scanner steps a virtual space
        (b'{"a":tr', "invalid character ' ' in literal true (expecting 'u')"),
        (b'{"a":"\\u00', "invalid character ' ' in \\u hexadecimal character escape"),
        (b'{"a":1e+', "invalid character ' ' in exponent of numeric literal"),
        (b"-", "invalid character ' ' in numeric literal"),
    ],
)
def test_go_json_check_messages(blob: bytes, message: str) -> None:
    with pytest.raises(GoJSONError) as exc:
        go_json_check(blob)
    assert str(exc.value) == message


@pytest.mark.parametrize("blob", [b"null", b" {} ", b'{"a":[1,-0.5e+3,true,false,null,"\\u00e9"]}', b"1"])
def test_go_json_check_accepts(blob: bytes) -> None:
    go_json_check(blob)


# -- json.Unmarshal semantics --------------------------------------------------

def _nz(struct: dict[str, Any]) -> dict[str, Any]:
    """A struct value without its zero-valued fields (absent == zero)."""
    return {k: v for k, v in struct.items() if v not in ("", 0, None, False)}


_S = GoStruct(
    "state.S",
    (
        GoField("Name", GO_STRING, "name"),
        GoField("Count", GO_UINT64.named("checksum.Checksum"), "count"),
        GoField("M", GoMap(GO_STRING, GoMap(GO_STRING, GO_STRING)), "m"),
        GoField("Skip", GO_STRING, "-"),
    ),
)


@pytest.mark.parametrize(
    ("blob", "value", "error"),
    [
        ('{"name":"a","NAME":"b"}', {"Name": "b"}, None),  # keys match case-insensitively, last wins
        ('{"name":"a","unknown":1}', {"Name": "a"}, None),
        ('{"Skip":"x","-":"y"}', {}, None),
        ('{"m":{"a":{"x":"1"}},"m":{"b":{"y":"2"}}}', {"M": {"a": {"x": "1"}, "b": {"y": "2"}}}, None),
        ('{"m":null}', {"M": None}, None),
        ('{"name":null}', {}, None),
        ("null", {}, None),
        ('{"count":-1}', {},
         "json: cannot unmarshal number -1 into Go struct field S.count of type checksum.Checksum"),
        ('{"count":1.0,"name":"x"}', {"Name": "x"},
         "json: cannot unmarshal number 1.0 into Go struct field S.count of type checksum.Checksum"),
        ('{"count":18446744073709551616}', {},
         "json: cannot unmarshal number 18446744073709551616 into Go struct field S.count of type checksum.Checksum"),
        ('{"count":18446744073709551615}', {"Count": 18446744073709551615}, None),
        # past Python's 4,300-digit int() bound: out of range as in Go, not a ValueError
        ('{"count":' + "9" * 5000 + "}", {},
         "json: cannot unmarshal number " + "9" * 5000
         + " into Go struct field S.count of type checksum.Checksum"),
        ('{"m":{"p":"x"}}', {"M": {"p": None}},
         "json: cannot unmarshal string into Go struct field S.m of type map[string]string"),
        ("[]", {}, "json: cannot unmarshal array into Go value of type state.S"),
        ('{"name":5}', {}, "json: cannot unmarshal number into Go struct field S.name of type string"),
    ],
)
def test_go_json_unmarshal(blob: str, value: dict[str, Any], error: str | None) -> None:
    got, err = go_json_unmarshal(go_json_parse(blob), _S)
    assert err == error
    assert _nz(got) == _nz(value)


def test_to_json_value_from_mapping() -> None:
    jv = to_json_value({"name": "a", "count": 3, "m": {"p": {"c": "1"}}})
    got, err = go_json_unmarshal(jv, _S)
    assert err is None
    assert got == {"Name": "a", "Count": 3, "M": {"p": {"c": "1"}}}
    assert to_json_value(5) == JSONNumber("5")


def test_parse_replaces_lone_surrogates() -> None:
    got, err = go_json_unmarshal(go_json_parse('{"name":"\\ud800x"}'), _S)
    assert err is None
    assert got == {"Name": "\ufffdx"}


# -- errors ---------------------------------------------------------------------


def test_checkpoint_error_is_a_startup_error() -> None:
    err = CheckpointError("checkpoint is corrupted")
    assert isinstance(err, KubeletStartupError)
    assert str(err) == "checkpoint is corrupted"


# -- atomic_write -----------------------------------------------------------------


def test_atomic_write_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "cpu_manager_state"
    atomic_write(target, b"one")
    assert target.read_bytes() == b"one"
    atomic_write(target, b"two, longer")
    assert target.read_bytes() == b"two, longer"
    assert sorted(os.listdir(tmp_path)) == ["cpu_manager_state"]


def test_atomic_write_leaves_old_content_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "state"
    atomic_write(target, b"old")

    def boom(src: str, dst: str) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["state"]


# -- properties ----------------------------------------------------------------------

_names = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)


@given(st.dictionaries(_names, st.dictionaries(_names, _names, max_size=3), max_size=4), _names)
def test_marshal_then_unmarshal_is_identity(entries: dict[str, dict[str, str]], name: str) -> None:
    value = {"Name": name, "M": entries}
    text = go_json_marshal(value, _S)
    got, err = go_json_unmarshal(go_json_parse(text), _S)
    assert err is None
    assert _nz(got) == _nz(value)


@given(st.binary(max_size=40))
def test_check_never_crashes(blob: bytes) -> None:
    try:
        go_json_check(blob)
    except GoJSONError as err:
        assert str(err).startswith(("invalid character", "unexpected end of JSON input"))


def test_checkpoint_and_state_files_are_read_within_the_byte_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A checkpoint file (``read_file``) or a file under a state directory
    (``StateWriter.read``) larger than the inputs' byte limit is refused with
    ``EFBIG``, not read whole; one within it is read as it is."""
    import errno

    from podnuma.fileio import StateWriter, read_file
    from podnuma.inputs import limits

    monkeypatch.setattr(limits, "DEFAULT_LIMITS", limits.DEFAULT_LIMITS.with_bytes(100))
    (tmp_path / "small").write_bytes(b"x" * 100)
    (tmp_path / "large").write_bytes(b"x" * 101)
    assert read_file(tmp_path / "small") == b"x" * 100
    with StateWriter(tmp_path) as tree:
        assert tree.read("small") == b"x" * 100
        for read in (lambda: read_file(tmp_path / "large"), lambda: tree.read("large")):
            with pytest.raises(OSError) as err:
                read()
            assert err.value.errno == errno.EFBIG


def test_atomic_write_leaves_a_pipe_or_a_device_in_place(tmp_path: Path) -> None:
    """A named pipe (or a device: /dev/null as root) at the path is not
    replaced by a file: ``OSError`` saying so, the node as it was, no
    temporary file left; a symbolic link is replaced, not followed."""
    import stat

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="it exists and is not a regular file"):
        atomic_write(fifo, b"x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]
    outside = tmp_path / "outside"
    outside.write_bytes(b"old")
    link = tmp_path / "link"
    link.symlink_to(outside)
    atomic_write(link, b"new")
    assert not link.is_symlink() and link.read_bytes() == b"new" and outside.read_bytes() == b"old"
