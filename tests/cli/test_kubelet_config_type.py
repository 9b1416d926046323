"""``--kubelet-config FILE`` read as the kubelet reads its ``--config``
file: the type comes from the file alone (cmd/kubelet/app/server.go
``loadConfigFile``, pkg/kubelet/kubeletconfig/configfiles, the codec's
universal decoder), so a file without ``apiVersion``/``kind``, or with
another, is refused in one line naming the file (exit 2). A scenario's
configuration (inline, or the file its ``kubeletConfigFile`` names) keeps
the scenario contract: v1beta1 when it says nothing. The refusals are
checked against the kubelet's loader in
tests/oracle/test_kubeletconfig_differential.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli

POD = """apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers: [{name: app, resources: {limits: {cpu: "2", memory: 1Gi}}}]
"""
HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
BODY = 'cpuManagerPolicy: static\nreservedSystemCPUs: "0"\n'


@pytest.fixture
def here(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "pod.yaml").write_text(POD)
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)


def _run(args: list[str], stdin: str | None = None) -> Any:
    return CliRunner().invoke(cli, args, input=stdin)


def _error(res: Any) -> str:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.output
    return str(lines[0])


def test_a_file_with_its_type_is_read(here: Path) -> None:
    (here / "config.yaml").write_text(HEAD + BODY)
    res = _run(["compare", "pod.yaml", "--kubelet-config", "config.yaml"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(("text", "words"), [
    (BODY, "config.yaml: failed to decode: Object 'Kind' is missing"),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\n" + BODY, "config.yaml: failed to decode: Object 'Kind' is missing"),
    ("kind: KubeletConfiguration\n" + BODY, "config.yaml: failed to decode: Object 'apiVersion' is missing"),
    ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n" + BODY,
     'config.yaml: kind: failed to decode: no kind "KubeProxyConfiguration" is registered for version '
     '"kubelet.config.k8s.io/v1beta1"'),
    ("apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n" + BODY,
     'config.yaml: kind: failed to decode: no kind "KubeletConfiguration" is registered for version '
     '"kubelet.config.k8s.io/v1"'),
])
@pytest.mark.parametrize("command", [["compare", "pod.yaml"], ["advise", "pod.yaml"]])
def test_a_file_without_its_type_is_refused_as_the_kubelet_refuses_it(
    here: Path, text: str, words: str, command: list[str]
) -> None:
    (here / "config.yaml").write_text(text)
    line = _error(_run([*command, "--kubelet-config", "config.yaml"]))
    assert line.startswith("error: " + words), line


def test_standard_input_is_named(here: Path) -> None:
    line = _error(_run(["compare", "pod.yaml", "--kubelet-config", "-"], stdin=BODY))
    assert line.startswith("error: <stdin>: failed to decode: Object 'Kind' is missing"), line


def test_a_scenarios_configuration_keeps_the_contract(here: Path) -> None:
    (here / "plain.yaml").write_text(BODY)
    (here / "named.yaml").write_text("kind: Scenario\nkubeletConfigFile: plain.yaml\n")
    (here / "inline.yaml").write_text("kind: Scenario\nkubeletConfig: {cpuManagerPolicy: static, reservedSystemCPUs: \"0\"}\n")
    for given in ("named.yaml", "inline.yaml"):
        res = _run(["compare", "pod.yaml", "--kubelet-config", given])
        assert res.exit_code == 0, res.output
