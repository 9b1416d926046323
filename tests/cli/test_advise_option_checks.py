"""``advise`` and ``compare`` refuse a bad option before any work, one
line naming the option (or the file), exit 2, nothing else printed or
written: ``--as-scenario`` whose other-shape sibling cannot be written
(no half of the output left), ``--shared-pool-cpus`` past the fleet's
bound (the most CPUs Linux runs on a node) or past what a pod's CPU budget
can hold, a ``--sidecar`` naming no container (with a
"did you mean"), and ``--set`` values of thousands of characters (shown
shortened, one readable line). The service refuses them alike for the
web API (``sharedPoolCpus``, ``sidecars[i]``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.errors import InputError, InputErrors
from podnuma.service import whatif

ROOT = Path(__file__).resolve().parents[2]
TRAINER = ROOT / "examples/whatif/trainer-pod.yaml"

BIG = """\
apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml}
spec:
  initContainers:
    - name: side
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
    - name: train
      resources: {limits: {cpu: "16", memory: 8Gi}}
"""

WEB = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
    - name: app
      resources: {limits: {cpu: "4", memory: 4Gi}}
    - name: log-agent
      resources: {limits: {cpu: "1", memory: 256Mi}}
"""


def _run(*args: str) -> tuple[int, str, str]:
    got = CliRunner().invoke(cli, list(args))
    assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
    return got.exit_code, got.stdout, got.stderr


def _one_error(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


# --as-scenario -----------------------------------------------------------


def test_as_scenario_with_a_shape_sibling_that_is_a_directory_writes_and_prints_nothing(tmp_path: Path) -> None:
    pod = tmp_path / "big.yaml"
    pod.write_text(BIG)
    replay = tmp_path / "replay.yaml"
    (tmp_path / "replay.shape-1.yaml").mkdir()
    code, out, err = _run("advise", str(pod), "--as-scenario", str(replay))
    assert code == 2
    assert _one_error(err) == f"error: {tmp_path / 'replay.shape-1.yaml'}: --as-scenario: cannot write: Is a directory"
    assert out == ""
    assert not replay.exists()  # nothing half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml", "replay.shape-1.yaml"]  # no temporary file


def test_as_scenario_writes_the_scenario_and_its_shape_then_prints_the_advice(tmp_path: Path) -> None:
    pod = tmp_path / "big.yaml"
    pod.write_text(BIG)
    replay = tmp_path / "replay.yaml"
    code, out, err = _run("advise", str(pod), "--as-scenario", str(replay))
    assert code == 0, err
    assert "ml/big" in out or "name: big" in out
    assert yaml.safe_load(replay.read_text())["steps"]
    assert yaml.safe_load((tmp_path / "replay.shape-1.yaml").read_text())["steps"]
    assert f"note: {tmp_path / 'replay.shape-1.yaml'}: ml/big on the other node shape" in err


def test_as_scenario_in_a_missing_directory_is_refused_before_any_work(tmp_path: Path) -> None:
    pod = tmp_path / "big.yaml"
    pod.write_text(BIG)
    target = tmp_path / "nowhere" / "replay.yaml"
    code, out, err = _run("advise", str(pod), "--as-scenario", str(target))
    assert code == 2 and out == ""
    assert _one_error(err) == f"error: {target}: --as-scenario: cannot write: its directory does not exist"


# --shared-pool-cpus -------------------------------------------------------


#: a pod whose exclusive CPUs leave less than the bound's pool in the int64
#: the kubelet counts the pod's CPU budget in (millicores)
NEAR_INT64 = BIG.replace('cpu: "16", memory: 8Gi', 'cpu: "9223372036850000", memory: 8Gi')


@pytest.mark.parametrize("value", ["9223372036854775807", "9223372036854776", "99999", "8193", "9" * 5000])
def test_a_shared_pool_past_the_bound_is_refused_naming_the_option(value: str) -> None:
    code, out, err = _run("advise", str(TRAINER), "--shared-pool-cpus", value)
    assert code == 2 and out == ""
    line = _one_error(err)
    assert line.startswith("error: Invalid value for '--shared-pool-cpus': ")
    assert f": at most {whatif.MAX_SHARED_POOL_CPUS} CPUs (Linux runs at most" in line
    assert "spec.containers" not in line and len(line) < 300


def test_the_bound_itself_is_tried_as_the_fleet_tries_it() -> None:
    """The bound (8192 CPUs) is the fleet's ``shared-pool-cpus=N`` bound:
    a pool of that size is a size to try, refused by the kubelet on this
    node, not a usage error."""
    assert whatif.MAX_SHARED_POOL_CPUS == 8192
    code, out, err = _run("advise", str(TRAINER), "--shared-pool-cpus", str(whatif.MAX_SHARED_POOL_CPUS))
    assert code == 0, err
    assert f"# tried: shared pool {whatif.MAX_SHARED_POOL_CPUS} CPU(s), budget cpu=8200: refused: " in out


def test_the_bound_beyond_what_this_pod_holds_names_the_option_and_the_most(tmp_path: Path) -> None:
    pod = tmp_path / "near.yaml"
    pod.write_text(NEAR_INT64)
    code, out, err = _run("advise", str(pod), "--shared-pool-cpus", str(whatif.MAX_SHARED_POOL_CPUS))
    assert code == 2 and out == ""
    line = _one_error(err)
    assert line.startswith(f"error: --shared-pool-cpus {whatif.MAX_SHARED_POOL_CPUS}: the pod's CPU budget")
    assert "at most 4775 CPUs for this pod" in line and "spec.containers" not in line


def test_the_service_refuses_the_web_field_with_its_bound() -> None:
    with pytest.raises(InputError) as e:
        whatif.whatif_request({"pod": TRAINER.read_text(), "sharedPoolCpus": 9223372036854775807}, True)
    assert e.value.path == "sharedPoolCpus"
    assert e.value.message.endswith(f": at most {whatif.MAX_SHARED_POOL_CPUS} CPUs (Linux runs at most "
                                    f"{whatif.MAX_SHARED_POOL_CPUS} CPUs on a node: a larger shared pool fits on none)")
    assert whatif.parse_shared_pool(str(whatif.MAX_SHARED_POOL_CPUS)) == whatif.MAX_SHARED_POOL_CPUS
    assert whatif.parse_shared_pool(3) == 3


# --sidecar ------------------------------------------------------------------


def test_a_sidecar_naming_no_container_is_refused_with_a_hint(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(WEB)
    code, out, err = _run("advise", str(pod), "--sidecar", "log-agnet")
    assert code == 2 and out == ""
    assert _one_error(err) == ('error: --sidecar log-agnet: no container of that name in any pod read '
                               '(did you mean "log-agent"?)')
    code, out, err = _run("advise", str(pod), "--sidecar", "zzz", "-o", "json")
    assert code == 2 and out == ""
    assert _one_error(err) == "error: --sidecar zzz: no container of that name in any pod read"


def test_a_bad_sidecar_and_a_missing_file_are_each_named_on_a_line(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(WEB)
    missing = tmp_path / "missing.yaml"
    code, out, err = _run("advise", str(pod), str(missing), "--sidecar", "nope")
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: {missing}: pod file not found",
                                "error: --sidecar nope: no container of that name in any pod read"]


def test_a_sidecar_named_rightly_rewrites(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(WEB)
    code, out, err = _run("advise", str(pod), "--sidecar", "log-agent", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["pods"][0]["status"] == "rewritten"


def test_a_sidecar_of_another_pod_read_is_not_refused(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(WEB)
    (tmp_path / "big.yaml").write_text(BIG)
    code, out, err = _run("advise", str(tmp_path / "big.yaml"), str(tmp_path / "pod.yaml"),
                          "--sidecar", "log-agent", "-o", "json")
    assert code == 0, err
    pods = json.loads(out)["pods"]
    assert len(pods) == 2 and pods[1]["status"] == "rewritten"  # (big: no form admitted on this node)


def test_the_web_request_names_the_sidecars_entry() -> None:
    with pytest.raises(InputErrors) as e:
        whatif.whatif_request({"pod": WEB, "sidecars": ["log-agent", "log-agnet"]}, True)
    assert e.value.problems == ['sidecars[1]: no container named \'log-agnet\' in any pod read '
                                '(did you mean "log-agent"?)']
    # blank and padded names are names too (as on the command line): the
    # index a refusal gives is the request's own
    with pytest.raises(InputErrors) as e:
        whatif.whatif_request({"pod": WEB, "sidecars": ["", "log-agnet"]}, True)
    assert [p.split(":")[0] for p in e.value.problems] == ["sidecars[0]", "sidecars[1]"]
    with pytest.raises(InputErrors) as e:
        whatif.whatif_request({"pod": WEB, "sidecars": [" log-agent "]}, True)
    assert e.value.problems[0].startswith("sidecars[0]: no container named ' log-agent '")
    with pytest.raises(InputError) as err:
        whatif.whatif_request({"pod": WEB, "sidecars": ["app", 5]}, True)
    assert str(err.value).startswith("sidecars[1]: ")


# --set ----------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    "cpuManagerPolicy=" + "x" * 20000,
    "cpuManagerPolicy=" + "[" * 5000,
    "x" * 20000,
    "x" * 20000 + "=1",
    "featureGates." + "x" * 20000 + "=true",
    "cpuManagerPolicyOptions." + "x" * 20000 + "=" + "[" * 5000,
])
def test_a_long_set_value_is_shown_shortened(tmp_path: Path, value: str) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(WEB)
    code, out, err = _run("compare", str(pod), "--set", value)
    assert code == 2 and out == ""
    line = _one_error(err)
    assert line.startswith("error: --set: ") and len(line) < 400, line[:500]
    assert "characters)" in line


def test_a_nested_set_value_still_says_why() -> None:
    with pytest.raises(InputError) as e:
        whatif.whatif_request({"pod": WEB, "set": ["cpuManagerPolicy=" + "[" * 5000]}, False)
    assert "nested more than 100 levels deep" in e.value.message
    assert "(5000 characters)" in e.value.message and len(str(e.value)) < 300
