"""How a pod's numbers reached Go's decoder (``numbers``), the refusal of
one an integer field does not take (Go's words, at the field's path),
which error comes first when an unknown field is among them, and the
ports of probes and lifecycle hooks (the differential cases:
tests/oracle/test_pod_numbers_differential.py,
tests/oracle/test_pod_handler_ports.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.api.featuregates import FeatureGates
from podnuma.api.pod_manifest import parse_pod
from podnuma.api.pod_types import check_pod_types
from podnuma.api.pod_validation import check_port_num_or_name, port_name_errors
from podnuma.cli.app import cli
from podnuma.errors import InputError
from podnuma.golang.jsonnumbers import json_float
from podnuma.inputs.documents import load_json

GATES = FeatureGates.defaults()
PORT_GO = ("json: cannot unmarshal number {} into Go struct field ContainerPort.spec.containers.ports.containerPort "
           "of type int32")


def _pod(port: Any = 80, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"},
                           "spec": {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": port}]}]}}
    doc.update(extra)
    return doc


def _refusal(doc: dict[str, Any], **kw: Any) -> tuple[str, str] | None:
    try:
        parse_pod(copy.deepcopy(doc), gates=GATES, **kw)
    except InputError as e:
        return e.path or "", e.message
    return None


@pytest.mark.parametrize(("value", "text"), [(80.0, "80.0"), (json_float("1e2"), "1e2"),
                                             (json_float("80.00"), "80.00"), (1.5, "1.5")])
def test_json_text_refuses_any_fraction_or_exponent(value: float, text: str) -> None:
    assert _refusal(_pod(value), numbers="text") == (
        "spec.containers[0].ports[0].containerPort", PORT_GO.format(text))


@pytest.mark.parametrize("value", [80.0, json_float("1e2"), json_float("8080.00"), json_float("0.5e1")])
def test_through_a_float64_a_whole_number_is_taken(value: float) -> None:
    assert _refusal(_pod(value), numbers="float") is None
    assert _refusal(_pod(value), sort_keys=True) is None  # (kubectl's: the default with sorted keys)


@pytest.mark.parametrize(("value", "text"), [(1.5, "1.5"), (1e21, "1e+21"), (2147483648.0, "2147483648"),
                                             (json_float("1e-7"), "1e-7"), (1e20, "100000000000000000000")])
def test_through_a_float64_the_rest_is_refused_as_json_marshal_writes_it(value: float, text: str) -> None:
    assert _refusal(_pod(value), numbers="float") == (
        "spec.containers[0].ports[0].containerPort", PORT_GO.format(text))


def test_as_read_a_plain_float_is_a_float_and_a_kept_text_is_text() -> None:
    assert _refusal(_pod(80.0)) is None
    assert _refusal(_pod(json_float("1e2"))) == ("spec.containers[0].ports[0].containerPort", PORT_GO.format("1e2"))


def test_a_number_past_the_float_range_is_a_string_through_yaml() -> None:
    big = json_float("1e400")
    assert _refusal(_pod(big), numbers="float") == (
        "spec.containers[0].ports[0].containerPort",
        "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort "
        "of type int32")
    assert _refusal(_pod(big), numbers="text") == (
        "spec.containers[0].ports[0].containerPort", PORT_GO.format("1e400"))
    image = _pod()
    image["spec"]["containers"][0]["image"] = big
    check_pod_types(image, numbers="float")
    with pytest.raises(InputError, match="must be a string, got a number"):
        check_pod_types(image, numbers="text")


def test_gos_field_names_an_embedded_struct_and_an_ephemeral_container() -> None:
    probe = _pod()
    probe["spec"]["containers"][0]["livenessProbe"] = {"httpGet": {"port": 8080.0}}
    with pytest.raises(InputError) as e:
        check_pod_types(probe, numbers="text")  # (an int-or-string: its own decoding fails)
    assert (e.value.path, e.value.message) == (
        "spec.containers[0].livenessProbe.httpGet.port",
        "json: cannot unmarshal number 8080.0 into Go struct field "
        "HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32")
    eph = _pod()
    eph["spec"]["ephemeralContainers"] = [{"name": "d", "image": "x", "ports": [{"containerPort": 1.5}]}]
    with pytest.raises(InputError, match="Go struct field ContainerPort.spec.ephemeralContainers."
                                         "EphemeralContainerCommon.ports.containerPort of type int32"):
        check_pod_types(eph)
    vol = _pod(volumes=None)
    vol["spec"]["volumes"] = [{"name": "v", "secret": {"defaultMode": 4294967296}}]
    with pytest.raises(InputError, match="number 4294967296 into Go struct field "
                                         "SecretVolumeSource.spec.volumes.VolumeSource.secret.defaultMode of type int32"):
        check_pod_types(vol)


# ---------------------------------------------------------------- which error first


#: Go's refusal of the string "x" for metadata.generation
GENERATION_GO = "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64"


def _bad_generation(first_key: str) -> dict[str, Any]:
    doc = _pod()
    doc["metadata"]["generation"] = "x"
    return {first_key: 1, **doc}


def test_the_api_servers_unknown_field_comes_after_every_decoding_error() -> None:
    for key in ("aaa", "zzz"):
        assert _refusal(_bad_generation(key)) == ("metadata.generation", GENERATION_GO)
    alone = {**_pod(), "zzz": 1}
    assert _refusal(alone) == ("zzz", 'unknown field "zzz"')
    # (and before the validation: the second container's unknown field, the first's bad name)
    doc = _pod()
    doc["spec"]["containers"] = [{"name": "C_C", "image": "x"}, {"name": "d", "image": "x", "zzz": 1}]
    assert _refusal(doc) == ("spec.containers[1].zzz", 'unknown field "zzz"')


def test_a_misspelt_spec_key_comes_before_the_validation() -> None:
    doc = _pod()
    doc["metadata"]["name"] = "W_W"
    doc["spec"]["container"] = []
    assert _refusal(doc) == ("spec.container", 'unknown field "container" (did you mean "containers"?)')


def test_a_scenarios_unknown_field_comes_where_the_sorted_keys_put_it() -> None:
    kw: dict[str, Any] = {"sort_keys": True, "unknown_in_order": True}
    assert _refusal(_bad_generation("aaa"), **kw) == ("aaa", 'unknown field "aaa"')
    assert _refusal(_bad_generation("zzz"), **kw) == ("metadata.generation", GENERATION_GO)
    timed = _pod()
    timed["metadata"]["creationTimestamp"] = "x"
    path, message = _refusal({"aaa": 1, **timed}, **kw) or ("", "")
    assert path == "metadata.creationTimestamp" and message.startswith("not an RFC 3339 time")  # (it ends the decoding)
    ctr = _pod()
    ctr["spec"]["containers"][0].update({"aaa": 1, "image": 5})
    assert _refusal(ctr, **kw) == ("spec.containers[0].aaa", 'unknown field "aaa"')
    assert _refusal(ctr) == ("spec.containers[0].image", "must be a string, got an integer")


def test_a_status_is_read_strictly_too() -> None:
    # (the API server's strict decoding refuses an unknown field of the
    # status as anywhere else: tests/oracle/test_pod_strict_depth_differential.py)
    doc = _pod(status={"containerStatuses": [{"name": "c", "resources": {"zzz": 1}}]})
    assert _refusal(doc) == ("status.containerStatuses[0].resources.zzz", 'unknown field "zzz"')
    doc["spec"]["containers"][0]["resources"] = {"aaa": 1}
    assert _refusal(doc) == ("spec.containers[0].resources.aaa", 'unknown field "aaa"')


# ---------------------------------------------------------------- scenarios


def _scenario(tmp_path: Path, ext: str, number: str, *, state: bool = False) -> Path:
    pod = json.dumps(_pod(port="@N@")).replace('"@N@"', number)
    node = {"name": "w", "synthetic": {"sockets": 1, "numaNodesPerSocket": 1, "coresPerNumaNode": 4,
                                       "threadsPerCore": 2, "memoryPerNumaNode": "8Gi"}}
    head = json.dumps({"apiVersion": "podnuma.io/v1", "kind": "Scenario", "node": node, "steps": "@S@",
                       **({"state": {"pods": "@P@"}} if state else {})})
    text = head.replace('"@S@"', "[]" if state else '[{"addPod": ' + pod + "}]").replace('"@P@"', "[" + pod + "]")
    path = tmp_path / f"s.{ext}"
    path.write_text(text)
    return path


@pytest.mark.parametrize("state", [False, True], ids=["steps", "state.pods"])
def test_a_json_scenario_refuses_80_0_and_a_yaml_one_takes_it(tmp_path: Path, state: bool) -> None:
    where = "state.pods[0]" if state else "steps[0].addPod"
    r = CliRunner().invoke(cli, ["simulate", str(_scenario(tmp_path, "json", "80.0", state=state))])
    assert r.exit_code == 2
    assert f"{where}.spec.containers[0].ports[0].containerPort: {PORT_GO.format('80.0')}" in r.stderr, r.stderr
    r = CliRunner().invoke(cli, ["simulate", str(_scenario(tmp_path, "yaml", "80.0", state=state))])
    assert r.exit_code == 0, r.stderr
    r = CliRunner().invoke(cli, ["simulate", str(_scenario(tmp_path, "json", "80", state=state))])
    assert r.exit_code == 0, r.stderr


def test_a_json_scenarios_later_twin_is_judged_as_its_first() -> None:
    """The memo's identity check reads the numbers as its pods' first
    parse does: a JSON file's name ``1e400`` is a number, a YAML file's a
    string (a name, then)."""
    from podnuma.inputs.scenario_pods import PodParses

    twin = load_json(json.dumps(_pod()), name="p.json")
    later = copy.deepcopy(twin)
    later["metadata"]["name"] = json_float("1e400")
    memo = PodParses(GATES, json_text=True)
    memo.parse(copy.deepcopy(twin))
    with pytest.raises(InputError) as e:
        memo.parse(copy.deepcopy(later))
    assert (e.value.path, e.value.message) == ("metadata.name", "must be a string, got a number")
    assert _refusal(later, sort_keys=True, numbers="text") == ("metadata.name", "must be a string, got a number")
    memo = PodParses(GATES, json_text=False)
    memo.parse(copy.deepcopy(twin))
    assert memo.parse(copy.deepcopy(later)).name == "1e400"
    assert _refusal(later, sort_keys=True, numbers="float") is None


# ---------------------------------------------------------------- probe and hook ports


@pytest.mark.parametrize(("name", "first"), [
    ("http", None), ("a" * 15, None), ("web-8080", None), ("80", "must contain at least one letter (a-z)"),
    ("a" * 16, "must be no more than 15 characters"),
    ("HTTP", "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
    ("", "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
    ("my--port", "must not contain consecutive hyphens"), ("-http", "must not begin or end with a hyphen"),
    ("http-", "must not begin or end with a hyphen"),
])
def test_port_name_rules(name: str, first: str | None) -> None:
    errors = port_name_errors(name)
    assert (errors[0] if errors else None) == first


def test_a_port_number_is_from_1_to_65535() -> None:
    check_port_num_or_name(65535, "p")
    check_port_num_or_name(80.0, "p")
    for bad in (0, 65536, None, -1):
        with pytest.raises(InputError) as e:
            check_port_num_or_name(bad, "p")
        assert e.value.message == f"Invalid value: {bad or 0}: must be between 1 and 65535, inclusive"
    with pytest.raises(InputError, match=r'Invalid value: "h\\nttp": must contain only'):
        check_port_num_or_name("h\nttp", "p")


@pytest.mark.parametrize(("where", "handler", "refusal"), [
    (("livenessProbe",), {"httpGet": {"port": "80"}},
     ("spec.containers[0].livenessProbe.httpGet.port", 'Invalid value: "80": must contain at least one letter (a-z)')),
    (("lifecycle", "preStop"), {"tcpSocket": {"port": "web--1"}},
     ("spec.containers[0].lifecycle.preStop.tcpSocket.port",
      'Invalid value: "web--1": must not contain consecutive hyphens')),
    (("startupProbe",), {"grpc": {"port": 0}},
     ("spec.containers[0].startupProbe.grpc.port", "Invalid value: 0: must be between 1 and 65535, inclusive")),
    (("readinessProbe",), {"exec": {"command": ["true"]}, "httpGet": {"port": "80"}},
     ("spec.containers[0].readinessProbe.httpGet", "Forbidden: may not specify more than 1 handler type")),
    (("livenessProbe",), {"periodSeconds": 5},
     ("spec.containers[0].livenessProbe", "Required value: must specify a handler type")),
    (("livenessProbe",), {"httpGet": {"port": "http"}}, None),
])
def test_probe_and_hook_ports(where: tuple[str, ...], handler: dict[str, Any], refusal: tuple[str, str] | None) -> None:
    doc = _pod()
    at = doc["spec"]["containers"][0]
    for k in where[:-1]:
        at = at.setdefault(k, {})
    at[where[-1]] = handler
    assert _refusal(doc) == refusal


def test_a_sidecars_probe_port_is_checked_a_regular_init_containers_probe_refused() -> None:
    doc = _pod()
    init = {"name": "i", "image": "x", "livenessProbe": {"httpGet": {"port": "80"}}}
    doc["spec"]["initContainers"] = [init]
    assert _refusal(doc) == ("spec.initContainers[0].livenessProbe",
                             "Forbidden: may not be set for init containers without restartPolicy=Always")
    init["restartPolicy"] = "Always"
    assert _refusal(doc) == ("spec.initContainers[0].livenessProbe.httpGet.port",
                             'Invalid value: "80": must contain at least one letter (a-z)')


def test_a_probe_has_no_sleep_handler() -> None:
    # Go's ProbeHandler has no sleep (only a lifecycle hook has one): exec
    # beside it is one handler, not two (the static pod path drops sleep)
    from podnuma.api.pod_validation import check_handlers

    container = {"name": "c", "image": "x", "livenessProbe": {"exec": {"command": ["a"]}, "sleep": {"seconds": 1}}}
    check_handlers(container, "spec.containers[0]")


def test_an_unknown_spec_field_comes_in_sorted_key_order_on_the_scenario_path() -> None:
    doc = {"metadata": {"name": "w"}, "spec": {"aaa": 1, "priority": 1.5, "containers": [{"name": "c", "image": "x"}]}}
    with pytest.raises(InputError) as err:
        parse_pod(doc, gates=GATES, sort_keys=True, numbers="text", unknown_in_order=True)
    assert 'unknown field "aaa"' in str(err.value)
    # on the API server's path the decoding's own error comes first
    with pytest.raises(InputError) as err:
        parse_pod(doc, gates=GATES, numbers="text")
    assert "cannot unmarshal number 1.5" in str(err.value)
