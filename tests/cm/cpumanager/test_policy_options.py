"""Static policy options: upstream policy_options_test.go and
TestStaticPolicyOptions (policy_static_test.go), with v1.37 maturity."""

from __future__ import annotations

import pytest

from podnuma.cm.cpumanager.policy_options import (
    ALIGN_BY_SOCKET_OPTION,
    DISTRIBUTE_CPUS_ACROSS_CORES_OPTION,
    DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION,
    FULL_PCPUS_ONLY_OPTION,
    PREFER_ALIGN_BY_UNCORE_CACHE_OPTION,
    STRICT_CPU_RESERVATION_OPTION,
    StaticPolicyOptions,
    check_policy_option_available,
    go_quote,
    new_static_policy_options,
    parse_go_bool,
    validate_static_policy_options,
)
from podnuma.errors import KubeletStartupError
from tests.cm.cpumanager.cpu_policy_helpers import ALPHA, DEFAULTS, Gates
from tests.cm.cpumanager.topologies import (
    FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT,
    TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
)


def _available(option: str, gates: Gates) -> bool:
    try:
        check_policy_option_available(option, gates)
    except KubeletStartupError:
        return False
    return True


# TestPolicyDefaultsAvailable
@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("this-option-does-not-exist", False),
        (FULL_PCPUS_ONLY_OPTION, True),
        # v1.37 defaults: beta gate on, alpha gate off
        (STRICT_CPU_RESERVATION_OPTION, True),
        (DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION, True),
        (PREFER_ALIGN_BY_UNCORE_CACHE_OPTION, True),
        (ALIGN_BY_SOCKET_OPTION, False),
        (DISTRIBUTE_CPUS_ACROSS_CORES_OPTION, False),
    ],
)
def test_policy_defaults_available(option: str, expected: bool) -> None:
    assert _available(option, DEFAULTS) is expected


# TestPolicyOptionsAvailable, with v1.37 maturity (full-pcpus-only is GA and
# needs no gate; distribute-cpus-across-numa is beta).
@pytest.mark.parametrize(
    ("option", "gate", "enabled", "expected"),
    [
        ("this-option-does-not-exist", "CPUManagerPolicyBetaOptions", False, False),
        ("this-option-does-not-exist", "CPUManagerPolicyBetaOptions", True, False),
        (FULL_PCPUS_ONLY_OPTION, "CPUManagerPolicyBetaOptions", True, True),
        (FULL_PCPUS_ONLY_OPTION, "CPUManagerPolicyBetaOptions", False, True),
        (FULL_PCPUS_ONLY_OPTION, "CPUManagerPolicyAlphaOptions", False, True),
        (ALIGN_BY_SOCKET_OPTION, "CPUManagerPolicyAlphaOptions", True, True),
        (ALIGN_BY_SOCKET_OPTION, "CPUManagerPolicyAlphaOptions", False, False),
        (ALIGN_BY_SOCKET_OPTION, "CPUManagerPolicyBetaOptions", True, False),
        (DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION, "CPUManagerPolicyBetaOptions", True, True),
        (DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION, "CPUManagerPolicyBetaOptions", False, False),
        (DISTRIBUTE_CPUS_ACROSS_CORES_OPTION, "CPUManagerPolicyAlphaOptions", True, True),
        (DISTRIBUTE_CPUS_ACROSS_CORES_OPTION, "CPUManagerPolicyBetaOptions", True, False),
        (STRICT_CPU_RESERVATION_OPTION, "CPUManagerPolicyBetaOptions", True, True),
        # GA at v1.37.2 (TestPolicyOptionsAlwaysAvailableOnceGA)
        (STRICT_CPU_RESERVATION_OPTION, "CPUManagerPolicyBetaOptions", False, True),
        (PREFER_ALIGN_BY_UNCORE_CACHE_OPTION, "CPUManagerPolicyBetaOptions", True, True),
        (PREFER_ALIGN_BY_UNCORE_CACHE_OPTION, "CPUManagerPolicyBetaOptions", False, True),
    ],
)
def test_policy_options_available(option: str, gate: str, enabled: bool, expected: bool) -> None:
    assert _available(option, Gates(**{gate: enabled})) is expected


@pytest.mark.parametrize(
    ("option", "gates", "message"),
    [
        ("foo", DEFAULTS, 'unknown CPU Manager Policy option: "foo"'),
        (
            ALIGN_BY_SOCKET_OPTION,
            DEFAULTS,
            'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided',
        ),
        (
            DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION,
            Gates(CPUManagerPolicyBetaOptions=False),
            "CPU Manager Policy Beta-level Options not enabled, but option "
            '"distribute-cpus-across-numa" provided',
        ),
    ],
)
def test_option_availability_messages(option: str, gates: Gates, message: str) -> None:
    with pytest.raises(KubeletStartupError) as exc:
        check_policy_option_available(option, gates)
    assert str(exc.value) == message


# TestValidateStaticPolicyOptions (alpha gate on)
@pytest.mark.parametrize(
    ("description", "options", "topology", "tm_policy", "expect_error"),
    [
        ("Align by socket not enabled", {FULL_PCPUS_ONLY_OPTION: "true"},
         TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT, "single-numa-node", False),
        ("Align by socket enabled with topology manager single numa node",
         {ALIGN_BY_SOCKET_OPTION: "true"}, TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
         "single-numa-node", True),
        ("Align by socket enabled with num_sockets > num_numa", {ALIGN_BY_SOCKET_OPTION: "true"},
         FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT, "none", True),
        ("Align by socket enabled: with topology manager None policy",
         {ALIGN_BY_SOCKET_OPTION: "true"}, TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT, "none", False),
        ("Align by socket enabled: with topology manager best-effort policy",
         {ALIGN_BY_SOCKET_OPTION: "true"}, TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
         "best-effort", False),
        ("Align by socket enabled: with topology manager restricted policy",
         {ALIGN_BY_SOCKET_OPTION: "true"}, TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT,
         "restricted", False),
    ],
)
def test_validate_static_policy_options(
    description: str, options: dict[str, str], topology: object, tm_policy: str, expect_error: bool
) -> None:
    from podnuma.machine.topology import CPUTopology

    assert isinstance(topology, CPUTopology)
    opts = new_static_policy_options(options, ALPHA)
    if expect_error:
        with pytest.raises(KubeletStartupError):
            validate_static_policy_options(opts, topology, tm_policy)
    else:
        validate_static_policy_options(opts, topology, tm_policy)


def test_validate_messages() -> None:
    opts = StaticPolicyOptions(align_by_socket=True)
    with pytest.raises(KubeletStartupError) as exc:
        validate_static_policy_options(opts, TOPO_DUAL_SOCKET_MULTI_NUMA_PER_SOCKET_HT, "single-numa-node")
    assert str(exc.value) == (
        "Topolgy manager single-numa-node policy is incompatible with CPUManager "
        "align-by-socket policy option"
    )
    with pytest.raises(KubeletStartupError) as exc:
        validate_static_policy_options(opts, FAKE_TOPO_MULTI_SOCKET_DUAL_SOCKET_PER_NUMA_HT, "none")
    assert str(exc.value) == (
        "Align by socket is not compatible with hardware where number of sockets are more "
        "than number of NUMA"
    )


# TestPolicyOptionsCompatibility, plus every exclusion rule of v1.37
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({FULL_PCPUS_ONLY_OPTION: "true"}, None),
        ({DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "true"}, None),
        (
            {FULL_PCPUS_ONLY_OPTION: "true", DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "true"},
            "static policy options full-pcpus-only and distribute-cpus-across-cores can not be "
            "used at the same time",
        ),
        (
            {DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "true", DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "true"},
            "static policy options distribute-cpus-across-numa and distribute-cpus-across-cores "
            "can not be used at the same time",
        ),
        (
            {PREFER_ALIGN_BY_UNCORE_CACHE_OPTION: "true", DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "true"},
            "static policy options prefer-align-cpus-by-uncorecache and "
            "distribute-cpus-across-cores can not be used at the same time",
        ),
        (
            {PREFER_ALIGN_BY_UNCORE_CACHE_OPTION: "true", DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "true"},
            "static policy options prefer-align-cpus-by-uncorecache and "
            "distribute-cpus-across-numa can not be used at the same time",
        ),
        # exclusions apply only to options set to true
        ({FULL_PCPUS_ONLY_OPTION: "true", DISTRIBUTE_CPUS_ACROSS_CORES_OPTION: "false"}, None),
        ({FULL_PCPUS_ONLY_OPTION: "true", DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "true"}, None),
    ],
)
def test_policy_options_compatibility(options: dict[str, str], message: str | None) -> None:
    if message is None:
        new_static_policy_options(options, ALPHA)
    else:
        with pytest.raises(KubeletStartupError) as exc:
            new_static_policy_options(options, ALPHA)
        assert str(exc.value) == message


# TestStaticPolicyOptions (policy_static_test.go)
@pytest.mark.parametrize(
    ("description", "options", "expected"),
    [
        ("nil args", None, StaticPolicyOptions()),
        ("empty args", {}, StaticPolicyOptions()),
        ("bad single arg", {"badValue1": ""}, None),
        ("bad multiple arg", {"badValue1": "", "badvalue2": "aaaa"}, None),
        ("good arg", {FULL_PCPUS_ONLY_OPTION: "true"}, StaticPolicyOptions(full_physical_cpus_only=True)),
        ("good arg, bad value", {FULL_PCPUS_ONLY_OPTION: "enabled!"}, None),
        ("bad arg intermixed", {FULL_PCPUS_ONLY_OPTION: "1", "badvalue2": "lorem ipsum"}, None),
    ],
)
def test_static_policy_options(
    description: str, options: dict[str, str] | None, expected: StaticPolicyOptions | None
) -> None:
    if expected is None:
        with pytest.raises(KubeletStartupError):
            new_static_policy_options(options, DEFAULTS)
    else:
        assert new_static_policy_options(options, DEFAULTS) == expected


def test_every_option_parses() -> None:
    opts = new_static_policy_options(
        {
            FULL_PCPUS_ONLY_OPTION: "T",
            ALIGN_BY_SOCKET_OPTION: "1",
            STRICT_CPU_RESERVATION_OPTION: "TRUE",
            PREFER_ALIGN_BY_UNCORE_CACHE_OPTION: "False",
            DISTRIBUTE_CPUS_ACROSS_NUMA_OPTION: "0",
        },
        ALPHA,
    )
    assert opts == StaticPolicyOptions(
        full_physical_cpus_only=True, align_by_socket=True, strict_cpu_reservation=True
    )


def test_bad_value_message() -> None:
    with pytest.raises(KubeletStartupError) as exc:
        new_static_policy_options({FULL_PCPUS_ONLY_OPTION: "enabled!"}, DEFAULTS)
    assert str(exc.value) == (
        'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "enabled!": invalid syntax'
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", True), ("t", True), ("T", True), ("TRUE", True), ("true", True), ("True", True),
     ("0", False), ("f", False), ("F", False), ("FALSE", False), ("false", False), ("False", False)],
)
def test_parse_go_bool(text: str, value: bool) -> None:
    assert parse_go_bool(text) is value


@pytest.mark.parametrize("text", ["", "yes", "tRUE", " true", "on"])
def test_parse_go_bool_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_go_bool(text)


def test_go_quote() -> None:
    assert go_quote('a"b\\c\n\x01') == '"a\\"b\\\\c\\n\\x01"'
