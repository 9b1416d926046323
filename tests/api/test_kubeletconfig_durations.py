"""Every ``metav1.Duration`` field of a KubeletConfiguration is read as the
kubelet's codec reads it: ``metav1.Duration.UnmarshalJSON`` hands the JSON
string to Go's ``time.ParseDuration``, and a text it refuses stops the
decoding (``failed to decode: time: invalid duration "abc"``). The fields
are those of ``k8s.io/kubelet@v0.37.2/config/v1beta1/types.go``; a JSON
``null`` on a non-pointer field reaches the parser as ``""`` too. The
grammar itself is checked against Go in
``tests/oracle/test_kubeletconfig_durations_differential.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.api.kubeletconfig import load_kubelet_config
from podnuma.cli import cli
from podnuma.errors import InputError
from podnuma.inputs.overrides import parse_override

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "examples" / "static-dual-socket.yaml"

#: (JSON path, the Go field is a pointer): types.go at v0.37.2
VALUE_FIELDS = (
    "syncFrequency", "fileCheckFrequency", "httpCheckFrequency", "streamingConnectionIdleTimeout",
    "nodeStatusUpdateFrequency", "nodeStatusReportFrequency", "imageMinimumGCAge",
    "imageMaximumGCAge", "volumeStatsAggPeriod", "cpuManagerReconcilePeriod",
    "runtimeRequestTimeout", "evictionPressureTransitionPeriod", "shutdownGracePeriod",
    "shutdownGracePeriodCriticalPods", "authorization.webhook.cacheAuthorizedTTL",
    "authorization.webhook.cacheUnauthorizedTTL", "authentication.webhook.cacheTTL",
)
POINTER_FIELDS = (
    "cpuCFSQuotaPeriod", "containerLogMonitorInterval", "crashLoopBackOff.maxContainerRestartPeriod",
)
ALL_FIELDS = VALUE_FIELDS + POINTER_FIELDS


def nested(path: str, value: Any) -> dict[str, Any]:
    doc: Any = value
    for key in reversed(path.split(".")):
        doc = {key: doc}
    out: dict[str, Any] = doc
    return out


def refusal(doc: dict[str, Any]) -> InputError:
    with pytest.raises(InputError) as info:
        load_kubelet_config(doc)
    return info.value


@pytest.mark.parametrize("path", ALL_FIELDS)
def test_an_unparsable_duration_is_refused_at_its_field(path: str) -> None:
    err = refusal(nested(path, "abc"))
    assert err.message == 'time: invalid duration "abc"'
    assert err.path == path


@pytest.mark.parametrize("path", ALL_FIELDS)
@pytest.mark.parametrize("text", ["1h2m3s", "1.5h", "-1s", "+5m", "0", "300ms", "2\u00b5s", "7ns"])
def test_a_go_duration_is_accepted(path: str, text: str) -> None:
    if path == "cpuCFSQuotaPeriod":
        # (accepted by the decoder; validation then wants the feature gate)
        doc = {"cpuCFSQuotaPeriod": text, "featureGates": {"CustomCPUCFSQuotaPeriod": True}}
        load_kubelet_config(doc)
        return
    load_kubelet_config(nested(path, text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("9999999999h", 'time: invalid duration "9999999999h"'),
        ("", 'time: invalid duration ""'),
        (" 1s", 'time: invalid duration " 1s"'),
        ("1", 'time: missing unit in duration "1"'),
        ("1S", 'time: unknown unit "S" in duration "1S"'),
        (".s", 'time: invalid duration ".s"'),
        ("5 m", 'time: unknown unit " m" in duration "5 m"'),
    ],
)
def test_go_s_words_for_each_refusal(text: str, message: str) -> None:
    err = refusal({"nodeStatusUpdateFrequency": text})
    assert (err.message, err.path) == (message, "nodeStatusUpdateFrequency")


@pytest.mark.parametrize("path", VALUE_FIELDS)
def test_null_on_a_value_field_is_parsed_as_the_empty_text(path: str) -> None:
    err = refusal(nested(path, None))
    assert (err.message, err.path) == ('time: invalid duration ""', path)


@pytest.mark.parametrize("path", POINTER_FIELDS)
def test_null_on_a_pointer_field_leaves_it_unset(path: str) -> None:
    load_kubelet_config(nested(path, None))


def test_a_number_is_not_a_duration() -> None:
    err = refusal({"syncFrequency": 5})
    assert err.path == "syncFrequency"


def test_a_bad_duplicate_fails_even_when_a_good_one_follows() -> None:
    import json

    from podnuma.api.kubeletconfig import json_object_pairs

    doc = json.loads('{"syncFrequency": "abc", "syncFrequency": "1s"}', object_pairs_hook=json_object_pairs)
    # (a file's document: the decoder's words, as the kubelet prints them)
    assert refusal(doc).message == 'failed to decode: time: invalid duration "abc"'


def test_the_logging_flush_frequency_string_form_is_a_duration_too() -> None:
    err = refusal({"logging": {"flushFrequency": "1S"}})
    assert (err.message, err.path) == ('time: unknown unit "S" in duration "1S"', "logging.flushFrequency")
    load_kubelet_config({"logging": {"flushFrequency": "5s"}})
    load_kubelet_config({"logging": {"flushFrequency": 5000000000}})  # nanoseconds
    load_kubelet_config({"logging": {"flushFrequency": None}})


def test_set_refuses_a_bad_duration_naming_set_and_the_field() -> None:
    with pytest.raises(InputError) as info:
        parse_override("cpuManagerReconcilePeriod=abc")
    err = info.value
    assert (err.file, err.path, err.message) == ("--set", "cpuManagerReconcilePeriod", 'time: invalid duration "abc"')


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_simulate_with_a_bad_duration_on_set_exits_2() -> None:
    got = run("simulate", str(STATIC), "--set", "cpuManagerReconcilePeriod=abc")
    assert got.exit_code == 2, got.output
    assert 'error: --set: cpuManagerReconcilePeriod: time: invalid duration "abc"' in got.output


def test_simulate_with_a_bad_duration_in_the_scenario_exits_2(tmp_path: Path) -> None:
    sc = yaml.safe_load(STATIC.read_text())
    sc["kubeletConfig"]["nodeStatusUpdateFrequency"] = "xyz"
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(sc))
    got = run("simulate", str(tmp_path / "s.yaml"))
    assert got.exit_code == 2, got.output
    assert "kubeletConfig.nodeStatusUpdateFrequency" in got.output
    assert 'time: invalid duration "xyz"' in got.output
