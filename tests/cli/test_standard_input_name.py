"""Standard input is ``<stdin>`` wherever a message or a report names an
input read from it: the pods' ``source.file``, and the ``node.from`` and
``kubeletConfig.from`` of ``compare`` and ``advise`` (their headers say
``node: <stdin>: ...``), never ``-``, the command line's name for it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from podnuma.cli import cli

WHATIF = Path(__file__).resolve().parents[2] / "examples" / "whatif"
TRAINER = WHATIF / "trainer-pod.yaml"
NODE = WHATIF / "node.yaml"
CONFIG = WHATIF / "kubelet-config.yaml"


def _invoke(*args: str, stdin: str) -> Result:
    r = CliRunner().invoke(cli, list(args), input=stdin)
    assert r.exit_code == 0, r.output
    return r


def test_compare_names_standard_input_as_every_other_reader() -> None:
    r = _invoke("compare", "-", "--node", str(NODE), "-o", "json", stdin=TRAINER.read_text())
    assert json.loads(r.stdout)["pods"][0]["source"]["file"] == "<stdin>"
    r = _invoke("compare", str(TRAINER), "--node", "-", "-o", "json", stdin=NODE.read_text())
    assert json.loads(r.stdout)["node"]["from"] == "<stdin>"
    r = _invoke("compare", str(TRAINER), "--node", str(NODE), "--kubelet-config", "-", "-o", "json", stdin=CONFIG.read_text())
    assert json.loads(r.stdout)["kubeletConfig"]["from"] == "<stdin>"


def test_advise_names_standard_input_as_every_other_reader() -> None:
    r = _invoke("advise", str(TRAINER), "--node", "-", stdin=NODE.read_text())
    assert "# node: <stdin>: 64 CPUs, NUMA nodes 0,1\n" in r.stdout
    r = _invoke("advise", str(TRAINER), "--node", str(NODE), "--kubelet-config", "-", "-o", "json",
                stdin=CONFIG.read_text())
    assert json.loads(r.stdout)["kubeletConfig"]["from"] == "<stdin>"
    r = _invoke("advise", str(TRAINER), "--node", str(NODE), "--kubelet-config", "-", "--set",
                "topologyManagerScope=pod", "-o", "json",
                stdin=CONFIG.read_text())
    assert json.loads(r.stdout)["kubeletConfig"]["from"] == "<stdin> with --set topologyManagerScope=pod"
