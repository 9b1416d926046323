"""Port of upstream ``policy_options_test.go`` for v1.37, where both
options are stable: gates no longer matter for them. Upstream's tests add
``fancy-*-option`` to the package's alpha/beta sets; here the sets are
passed in.
"""

from __future__ import annotations

import pytest

from podnuma.cm.topologymanager.policy_options import (
    ALPHA_OPTIONS,
    BETA_OPTIONS,
    MAX_ALLOWABLE_NUMA_NODES,
    PREFER_CLOSEST_NUMA_NODES,
    PolicyOptions,
    check_policy_option_available,
    go_quote,
    new_policy_options,
)
from podnuma.errors import KubeletStartupError
from podnuma.golang.strconv import go_atoi
from podnuma.golang.strconv import parse_go_bool as go_parse_bool

from .helpers import Gates

FANCY_BETA = "fancy-new-option"
FANCY_ALPHA = "fancy-alpha-option"
ALPHA = ALPHA_OPTIONS | {FANCY_ALPHA}
BETA = BETA_OPTIONS | {FANCY_BETA}

ALPHA_GATE = "TopologyManagerPolicyAlphaOptions"
BETA_GATE = "TopologyManagerPolicyBetaOptions"

OK_CASES: list[tuple[str, dict[str, str] | None, dict[str, bool], PolicyOptions]] = [
    ("PreferClosestNUMA set to true", {PREFER_CLOSEST_NUMA_NODES: "true", MAX_ALLOWABLE_NUMA_NODES: "8"},
     {}, PolicyOptions(True, 8)),
    ("MaxAllowableNUMANodes set to 12", {MAX_ALLOWABLE_NUMA_NODES: "12"}, {BETA_GATE: True},
     PolicyOptions(False, 12)),
    # Upstream (v1.31-v1.34) expected a beta-gate error here; the option is
    # GA since v1.35, so the gate no longer matters.
    ("MaxAllowableNUMANodes with the beta gate off", {MAX_ALLOWABLE_NUMA_NODES: "8"},
     {BETA_GATE: False}, PolicyOptions(False, 8)),
    ("PreferClosestNUMA with alpha and beta gates off", {PREFER_CLOSEST_NUMA_NODES: "true"},
     {ALPHA_GATE: False, BETA_GATE: False}, PolicyOptions(True, 8)),
    ("return empty TopologyManagerOptions", None, {}, PolicyOptions(False, 8)),
    ("empty map", {}, {}, PolicyOptions(False, 8)),
    ("ParseBool spellings", {PREFER_CLOSEST_NUMA_NODES: "T"}, {}, PolicyOptions(True, 8)),
    ("ParseBool false", {PREFER_CLOSEST_NUMA_NODES: "False"}, {}, PolicyOptions(False, 8)),
    ("Atoi accepts a sign", {MAX_ALLOWABLE_NUMA_NODES: "+16"}, {}, PolicyOptions(False, 16)),
    ("Atoi accepts leading zeros", {MAX_ALLOWABLE_NUMA_NODES: "010"}, {}, PolicyOptions(False, 10)),
]


@pytest.mark.parametrize(("name", "opts", "gates", "expected"), OK_CASES, ids=[c[0] for c in OK_CASES])
def test_new_policy_options(
    name: str, opts: dict[str, str] | None, gates: dict[str, bool], expected: PolicyOptions
) -> None:
    assert new_policy_options(opts, Gates(gates), alpha=ALPHA, beta=BETA) == expected


ERR_CASES: list[tuple[str, dict[str, str], dict[str, bool], str]] = [
    ("fail to parse PreferClosestNUMANodes", {PREFER_CLOSEST_NUMA_NODES: "not a boolean"}, {},
     'bad value for option "prefer-closest-numa-nodes": '
     'strconv.ParseBool: parsing "not a boolean": invalid syntax'),
    ("fail to parse MaxAllowableNUMANodes", {MAX_ALLOWABLE_NUMA_NODES: "can't parse to int"},
     {ALPHA_GATE: True},
     'unable to convert policy option to integer "max-allowable-numa-nodes": '
     'strconv.Atoi: parsing "can\'t parse to int": invalid syntax'),
    ("MaxAllowableNUMANodes below the default", {MAX_ALLOWABLE_NUMA_NODES: "7"}, {},
     'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    ("MaxAllowableNUMANodes negative", {MAX_ALLOWABLE_NUMA_NODES: "-1"}, {},
     'the minimum value of "max-allowable-numa-nodes" should not be less than 8'),
    ("MaxAllowableNUMANodes with spaces", {MAX_ALLOWABLE_NUMA_NODES: " 9"}, {},
     'unable to convert policy option to integer "max-allowable-numa-nodes": '
     'strconv.Atoi: parsing " 9": invalid syntax'),
    ("MaxAllowableNUMANodes out of int64 range", {MAX_ALLOWABLE_NUMA_NODES: "9223372036854775808"}, {},
     'unable to convert policy option to integer "max-allowable-numa-nodes": '
     'strconv.Atoi: parsing "9223372036854775808": value out of range'),
    ("empty ParseBool value", {PREFER_CLOSEST_NUMA_NODES: ""}, {},
     'bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing "": invalid syntax'),
    # Upstream's "test beta/alpha options success": the option passes the gate
    # check and then hits NewPolicyOptions' default branch (upstream's test
    # ignores that error and only compares the returned defaults).
    ("test beta options success", {FANCY_BETA: "true"}, {BETA_GATE: True},
     'unsupported topologymanager option: "fancy-new-option" (true)'),
    ("test beta options fail", {FANCY_BETA: "true"}, {BETA_GATE: False},
     'topology manager policy beta-level options not enabled, but option "fancy-new-option" provided'),
    ("test alpha options success", {FANCY_ALPHA: "true"}, {ALPHA_GATE: True},
     'unsupported topologymanager option: "fancy-alpha-option" (true)'),
    ("test alpha options fail", {FANCY_ALPHA: "true"}, {},
     'topology manager policy alpha-level options not enabled, but option "fancy-alpha-option" provided'),
    ("unknown option", {"unknown-option": "true"}, {},
     'unknown Topology Manager Policy option: "unknown-option"'),
]


@pytest.mark.parametrize(("name", "opts", "gates", "message"), ERR_CASES, ids=[c[0] for c in ERR_CASES])
def test_new_policy_options_errors(
    name: str, opts: dict[str, str], gates: dict[str, bool], message: str
) -> None:
    with pytest.raises(KubeletStartupError) as e:
        new_policy_options(opts, Gates(gates), alpha=ALPHA, beta=BETA)
    assert str(e.value) == message


def test_options_are_checked_in_name_order() -> None:
    # Go's map order is random; ours is sorted by name.
    with pytest.raises(KubeletStartupError, match="max-allowable-numa-nodes"):
        new_policy_options(
            {PREFER_CLOSEST_NUMA_NODES: "nope", MAX_ALLOWABLE_NUMA_NODES: "x"}, Gates()
        )


@pytest.mark.parametrize(
    ("option", "expected"),
    [("this-option-does-not-exist", False), (PREFER_CLOSEST_NUMA_NODES, True), (MAX_ALLOWABLE_NUMA_NODES, True)],
)
def test_policy_defaults_available(option: str, expected: bool) -> None:
    assert (check_policy_option_available(option, Gates()) is None) is expected


@pytest.mark.parametrize(
    ("option", "gate", "enable", "expected"),
    [
        ("this-option-does-not-exist", BETA_GATE, False, False),
        ("this-option-does-not-exist", BETA_GATE, True, False),
        (PREFER_CLOSEST_NUMA_NODES, BETA_GATE, False, True),
        (PREFER_CLOSEST_NUMA_NODES, ALPHA_GATE, False, True),
        (FANCY_ALPHA, ALPHA_GATE, True, True),
        (FANCY_ALPHA, ALPHA_GATE, False, False),
        (FANCY_BETA, BETA_GATE, True, True),
        (FANCY_BETA, BETA_GATE, False, False),
        (MAX_ALLOWABLE_NUMA_NODES, BETA_GATE, False, True),
        (MAX_ALLOWABLE_NUMA_NODES, ALPHA_GATE, False, True),
    ],
)
def test_policy_options_available(option: str, gate: str, enable: bool, expected: bool) -> None:
    err = check_policy_option_available(option, Gates({gate: enable}), alpha=ALPHA, beta=BETA)
    assert (err is None) is expected


def test_unknown_option_message() -> None:
    assert check_policy_option_available("x", Gates()) == 'unknown Topology Manager Policy option: "x"'


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1", True), ("t", True), ("TRUE", True), ("True", True), ("0", False), ("f", False), ("FALSE", False)],
)
def test_go_parse_bool(value: str, expected: bool) -> None:
    assert go_parse_bool(value) is expected


@pytest.mark.parametrize("value", ["yes", "tRUE", "", " true"])
def test_go_parse_bool_rejects(value: str) -> None:
    with pytest.raises(ValueError, match="invalid syntax"):
        go_parse_bool(value)


@pytest.mark.parametrize("value", ["1_0", "0x10", "1e3", "", "+", "٣"])
def test_go_atoi_rejects(value: str) -> None:
    with pytest.raises(ValueError, match="invalid syntax"):
        go_atoi(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("abc", '"abc"'), ('a"b', '"a\\"b"'), ("a\\b", '"a\\\\b"'), ("a\nb", '"a\\nb"'), ("\x01", '"\\x01"'),
     ("é", '"é"')],
)
def test_go_quote(value: str, expected: str) -> None:
    assert go_quote(value) == expected


def test_real_feature_gates_if_available() -> None:
    fg = pytest.importorskip("podnuma.api.featuregates")
    gates = fg.FeatureGates.defaults()
    assert new_policy_options({PREFER_CLOSEST_NUMA_NODES: "true"}, gates) == PolicyOptions(True, 8)
