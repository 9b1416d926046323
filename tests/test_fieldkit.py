"""The field kit: one wording and one type namer for every reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from podnuma.errors import InputError
from podnuma.fieldkit import (
    check_known_fields,
    expect_int,
    expect_list,
    expect_mapping,
    expect_str,
    expect_string_keys,
    field_path,
    inert,
    optional_list,
    optional_mapping,
    string_map,
    type_name,
)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"), (True, "a boolean"), (3, "an integer"), (2.5, "a number"),
        ("x", "a string"), ("", "an empty string"), ({}, "a mapping"), ([], "a list"),
        ((), "a list"), (b"x", "a bytes"),
    ],
)
def test_type_names(value: object, name: str) -> None:
    assert type_name(value) == name


def test_the_one_wording() -> None:
    with pytest.raises(InputError) as info:
        expect_mapping(["a"], "spec.containers[0].resources")
    assert str(info.value) == "spec.containers[0].resources: must be a mapping, got a list"
    with pytest.raises(InputError) as info:
        expect_list({"a": 1}, "steps", "a list (of steps)")
    assert str(info.value) == "steps: must be a list (of steps), got a mapping"
    with pytest.raises(InputError) as info:
        expect_int(True, "numaNode")
    assert info.value.message == "must be an integer, got a boolean"
    with pytest.raises(InputError) as info:
        expect_str(None, "name")
    assert info.value.message == "must be a string, got null"


def test_keys_must_be_strings() -> None:
    with pytest.raises(InputError) as info:
        expect_string_keys({1: "x"}, "metadata.labels")
    assert info.value.message == "field names must be strings, got an integer 1"
    assert info.value.path == "metadata.labels"


def test_absent_values_read_as_empty() -> None:
    assert optional_mapping(None, "x") == {}
    assert optional_list(None, "x") == ()
    assert string_map({"a": "b"}, "labels") == {"a": "b"}
    with pytest.raises(InputError) as info:
        string_map({"a": 1}, "labels")
    assert (info.value.path, info.value.message) == ("labels.a", "must be a string, got an integer")


def test_paths() -> None:
    assert field_path("", "spec") == "spec"
    assert field_path("spec", "containers") == "spec.containers"
    assert field_path("spec.containers", 2) == "spec.containers[2]"


def test_unknown_fields_suggest_the_closest_name() -> None:
    with pytest.raises(InputError) as info:
        check_known_fields({"limit": 1}, frozenset({"limits", "requests"}), "resources")
    assert info.value.path == "resources.limit"
    assert info.value.message == 'unknown field "limit" (did you mean "limits"?)'
    check_known_fields({"limits": 1}, {"limits"}, "resources")  # known: no error


def test_every_reader_words_an_unknown_field_the_same(tmp_path: Path) -> None:
    """A scenario's top level, a node form and a FleetConfig node group
    name an unknown field with the field kit's one wording."""
    from podnuma.fleet.groups import _load_groups as load_groups
    from podnuma.inputs.discover import load_node
    from podnuma.inputs.scenario import load_scenario_text

    scenario = ("apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {synthetic: {sockets: 1, "
                "numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1, "
                "memoryPerNumaNode: 1Gi}}\nstepz: []\n")
    with pytest.raises(InputError) as info:
        load_scenario_text(scenario, name="s.yaml", base_dir=tmp_path)
    assert (info.value.path, info.value.message) == (
        "stepz", 'unknown field "stepz" (did you mean "steps"?) (line 4, column 1)')
    with pytest.raises(InputError) as info:
        load_node({"synthetic": {"sockets": 1}, "devicez": {}}, base_dir=tmp_path)
    assert (info.value.path, info.value.message) == ("devicez", 'unknown field "devicez" (did you mean "devices"?)')
    group = tmp_path / "fleet.yaml"
    group.write_text("apiVersion: podnuma.io/v1\nkind: FleetConfig\nnodeGroups:\n"
                     "- {name: a, selector: x=y, selectr: z}\n")
    import yaml

    with pytest.raises(InputError) as info:
        load_groups(yaml.safe_load(group.read_text()), group)
    assert (info.value.file, info.value.path, info.value.message) == (
        str(group), "nodeGroups[0].selectr", 'unknown field "selectr" (did you mean "selector"?)')


def test_inert_escapes_the_bidirectional_controls() -> None:
    # (a right-to-left override in a name would reorder the rest of the
    # line on a terminal: the message would read otherwise than it says)
    for c in ("\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u200f", "\u061c"):
        assert inert(f"pod{c}x") == f"pod\\u{ord(c):04x}x"
    assert inert("déjà vu\tok") == "déjà vu\tok"  # (printable text and the tab as they are)


def test_a_bidirectional_control_in_a_name_reaches_no_terminal(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from podnuma.cli import cli

    f = tmp_path / "s.yaml"
    f.write_text("apiVersion: podnuma.io/v1\nkind: Scenario\nnode: {synthetic: {sockets: 1, "
                 "numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1, memoryPerNumaNode: 1Gi}}\n"
                 "steps:\n- addPod: {metadata: {name: \"a\\u202eb\", namespace: x}, spec: {containers: "
                 "[{name: c, image: i}]}}\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["simulate", str(f)])
    assert r.exit_code == 2
    assert "\u202e" not in r.stderr and "\\u202e" in r.stderr, r.stderr


def test_a_bidirectional_control_is_taken_in_a_node_name_and_a_device_id(tmp_path: Path) -> None:
    # (the kubelet takes them: refused only where a line would break or a
    # terminal would take an escape sequence; escaped where shown)
    from podnuma.inputs.discover import load_node

    cpus = [{"id": 0, "core": 0, "socket": 0, "numaNode": 0}]
    node = load_node({"name": "node\u200f", "cpus": cpus, "memory": {0: {"memory": "1Gi"}},
                      "devices": {"example.com/gpu": [{"id": "gpu\u202e0", "numaNodes": [0]}]}},
                     base_dir=tmp_path)
    assert node.name == "node\u200f"
    assert [d.id for d in node.devices["example.com/gpu"]] == ["gpu\u202e0"]
