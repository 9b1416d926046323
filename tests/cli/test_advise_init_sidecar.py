"""``--sidecar NAME`` (``sidecars[i]`` on the web) naming only a regular
init container (no ``restartPolicy: Always``) is refused before any
search, one line naming the option (the request's field), exit 2 (a bad
request): such a container runs to completion before the others start and
is never moved, so the name would have no effect. A native sidecar's or an
app container's name is taken."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.errors import InputErrors
from podnuma.service import whatif
from podnuma.web import service as web_service

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
    - name: setup
      resources: {limits: {cpu: "1", memory: 256Mi}}
    - name: side
      restartPolicy: Always
      resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
    - name: app
      resources: {limits: {cpu: "4", memory: 4Gi}}
    - name: log-agent
      resources: {limits: {cpu: "1", memory: 256Mi}}
"""

#: another pod whose app container is called as POD's init container is
OTHER = """\
apiVersion: v1
kind: Pod
metadata: {name: other}
spec:
  containers:
    - name: setup
      resources: {limits: {cpu: "2", memory: 1Gi}}
    - name: main
      resources: {limits: {cpu: "4", memory: 4Gi}}
"""

REFUSED = ("that container is an init container that is not a sidecar (no restartPolicy: Always): "
           "naming it would have no effect")


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    got = CliRunner().invoke(cli, list(args), input=stdin)
    assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
    return got.exit_code, got.stdout, got.stderr


def _no_search(monkeypatch: pytest.MonkeyPatch) -> None:
    def searched(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the search ran")

    monkeypatch.setattr(whatif, "advise_pod", searched)


def test_a_regular_init_container_is_refused_at_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    _no_search(monkeypatch)
    code, out, err = _run("advise", str(pod), "--sidecar", "setup", "-o", "json")
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: --sidecar setup: {REFUSED}"]
    # from standard input alike (read once)
    code, out, err = _run("advise", "-", "--sidecar", "log-agent", "--sidecar", "setup", stdin=POD)
    assert code == 2 and out == ""
    assert err.splitlines() == [f"error: --sidecar setup: {REFUSED}"]


def test_a_native_sidecar_or_an_app_container_is_taken(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    code, out, err = _run("advise", "-", "--sidecar", "side", "--sidecar", "log-agent", "-o", "json", stdin=POD)
    assert code == 0, err
    rules = {s["name"]: s["rule"] for s in json.loads(out)["pods"][0]["sidecars"]}
    assert rules == {"side": "native sidecar (restartPolicy: Always)", "log-agent": "--sidecar log-agent"}


def test_an_init_name_that_is_another_pods_container_is_taken(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "other.yaml").write_text(OTHER)
    code, out, err = _run("advise", str(tmp_path / "pod.yaml"), str(tmp_path / "other.yaml"),
                          "--sidecar", "setup", "-o", "json")
    assert code == 0, err
    assert len(json.loads(out)["pods"]) == 2


def test_the_web_request_names_the_sidecars_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_search(monkeypatch)
    with pytest.raises(InputErrors) as e:
        web_service.whatif_request({"pod": POD, "sidecars": ["log-agent", "setup"]}, True)
    assert e.value.problems == ["sidecars[1]: container 'setup' is an init container that is not a sidecar "
                                "(no restartPolicy: Always): naming it would have no effect"]
    # the comma-separated text form: the index of the name in it
    with pytest.raises(InputErrors) as e:
        web_service.whatif_request({"pod": POD, "sidecars": "setup, side"}, True)
    assert [p.split(":")[0] for p in e.value.problems] == ["sidecars[0]"]


def test_the_web_request_takes_a_native_sidecar() -> None:
    got = web_service.whatif_request({"pod": POD, "sidecars": ["side", "log-agent"]}, True)
    assert got["pods"][0]["status"] == "rewritten"
    assert {s["name"] for s in got["pods"][0]["sidecars"]} == {"side", "log-agent"}
