"""The service layer: the documents the doors print, from text inputs; a
request's input names no file; the words of every error; the ``-o``
grammar in one place."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from podnuma.cli.app import cli
from podnuma.cm.checkpoint import CheckpointError
from podnuma.errors import InputError, KubeletStartupError
from podnuma.inputs.text import TextInput, request_name
from podnuma.render.output import FORMATS, render_output, serialize
from podnuma.service import scenario, whatif
from podnuma.service.messages import error_message, no_step_matches, not_modelled_notes

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "examples/pod-level/pod-scope-2-mixed.yaml"
POD, NODE, CONFIG = ("examples/whatif/trainer-pod.yaml", "examples/whatif/node.yaml",
                     "examples/whatif/kubelet-config.yaml")


def _cli_json(*args: str) -> object:
    result = CliRunner().invoke(cli, [*args, "-o", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _read(path: str) -> TextInput:
    return TextInput.read(ROOT / path, what="file")


def test_the_cli_prints_the_service_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert _cli_json("simulate", SCENARIO) == scenario.simulate(
        TextInput((ROOT / SCENARIO).read_text(), SCENARIO, ROOT)
    )
    assert _cli_json("explain", SCENARIO, "--no-search") == scenario.explain(
        TextInput((ROOT / SCENARIO).read_text(), SCENARIO, ROOT), search=False
    ).document
    compared = whatif.compare(
        TextInput((ROOT / POD).read_text(), POD), TextInput((ROOT / NODE).read_text(), NODE, ROOT),
        TextInput((ROOT / CONFIG).read_text(), CONFIG, ROOT),
    ).document()
    assert _cli_json("compare", POD, "--node", NODE, "--kubelet-config", CONFIG) == compared
    advised = whatif.advise(
        [TextInput((ROOT / POD).read_text(), POD)], TextInput((ROOT / NODE).read_text(), NODE, ROOT),
        TextInput((ROOT / CONFIG).read_text(), CONFIG, ROOT),
    ).document()
    assert _cli_json("advise", POD, "--node", NODE, "--kubelet-config", CONFIG) == advised
    assert _cli_json("demo") == scenario.demo().document()


def test_simulate_detail_is_the_detail_document(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    full = scenario.simulate(_read(SCENARIO), detail=True)
    assert "providerHints" in json.dumps(full)
    assert "providerHints" not in json.dumps(scenario.simulate(_read(SCENARIO)))


def test_a_request_names_no_file(tmp_path: Path) -> None:
    config = tmp_path / "kubelet.yaml"
    config.write_text("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n")
    text = (
        "apiVersion: podnuma.io/v1\nkind: Scenario\nkubeletConfigFile: kubelet.yaml\n"
        "node: {synthetic: {sockets: 1, numaNodesPerSocket: 1, coresPerNumaNode: 2, threadsPerCore: 1,"
        " memoryPerNumaNode: 1Gi}}\nsteps: []\n"
    )
    # from the command line the file is read beside the scenario ...
    assert scenario.simulate(TextInput(text, "s.yaml", tmp_path))["steps"] == []
    # ... in a request it is refused at its field, before anything is loaded
    with pytest.raises(InputError) as err:
        scenario.simulate(TextInput(text, "s.yaml"))
    assert str(err.value).startswith(
        "s.yaml: kubeletConfigFile: the server reads no files named in a request"
    )
    with pytest.raises(InputError, match=r"node.yaml: sysfs: the server reads no files"):
        whatif.compare(TextInput((ROOT / POD).read_text(), "p.yaml"), TextInput("sysfs: /sys\n", "node.yaml"))


def test_whatif_request_takes_a_scenario_step() -> None:
    text = (ROOT / SCENARIO).read_text()
    doc = whatif.whatif_request({"scenario": text, "step": 0}, advise_it=False)
    assert doc["node"]["from"] == "scenario.yaml (node)"
    with pytest.raises(InputError, match=r"step 5 is not an addPod step \(addPod steps: 0\)"):
        whatif.whatif_request({"scenario": text, "step": 5}, advise_it=True)


@pytest.mark.parametrize(("err", "message"), [
    (InputError("bad", path="a.b", file="f.yaml"), "f.yaml: a.b: bad"),
    (CheckpointError("checksum mismatch"), "invalid checkpoint: checksum mismatch"),
    (KubeletStartupError("no CPUs left"), "kubelet would not start: no CPUs left"),
    (RuntimeError("kaboom"), "internal error: RuntimeError: kaboom"),
])
def test_error_message(err: Exception, message: str) -> None:
    assert error_message(err) == message


def test_messages() -> None:
    assert str(no_step_matches(3, "a/b", "s.yaml")) == "s.yaml: no addPod step matches step 3 and pod a/b"
    assert not_modelled_notes(scenario.load(_read(SCENARIO)).config, "s.yaml") == []
    assert request_name("../../etc/passwd", "x.yaml") == "passwd"
    assert request_name(None, "x.yaml") == "x.yaml"


def _choices(path: list[str]) -> tuple[str, ...]:
    command: click.Command = cli
    ctx = click.Context(cli)
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(ctx, name)
        assert found is not None
        command = found
    for param in command.params:
        if isinstance(param, click.Option) and "-o" in param.opts:
            assert isinstance(param.type, click.Choice)
            # (the table's other names every command takes: -o table|wide)
            aliases = getattr(param.type, "aliases", {})
            assert set(aliases) <= {"table", "wide"}
            return tuple(c for c in param.type.choices if c not in aliases)
    raise AssertionError(f"no -o in {path}")


@pytest.mark.parametrize("command", sorted(FORMATS))
def test_every_command_takes_its_formats_from_the_one_table(command: str) -> None:
    path = ["podresources", "list"] if command == "podresources" else command.split()
    assert _choices(path) == FORMATS[command]


def test_the_one_dispatch() -> None:
    doc = {"name": "ünïcode", "list": [1, 2]}
    assert serialize(doc, "json") == '{\n  "name": "ünïcode",\n  "list": [\n    1,\n    2\n  ]\n}\n'
    assert serialize(doc, "yaml") == "name: ünïcode\nlist:\n  - 1\n  - 2\n"
    assert render_output("table", lambda: doc, {"table": lambda: "T\n"}) == "T\n"
    with pytest.raises(ValueError):
        serialize(doc, "table")


def test_advise_tells_its_progress_pod_by_pod() -> None:
    """``advise`` tells ``(done, total)`` as each pod's search ends, every
    input read first (a 200,000-pod advise ran 49 s without a word); the
    advices are those of a run without it."""
    from podnuma.inputs.text import TextInput
    from podnuma.service import whatif

    pod = (Path(__file__).resolve().parents[2] / "examples/whatif/trainer-pod.yaml").read_text()
    three = "\n---\n".join(pod.replace("name: trainer", f"name: trainer-{i}", 1) for i in range(3))
    told: list[tuple[int, int]] = []
    got = whatif.advise([TextInput(three, "pods.yaml"), TextInput(pod, "one.yaml")],
                        progress=lambda done, total: told.append((done, total)))
    assert told == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    plain = whatif.advise([TextInput(three, "pods.yaml"), TextInput(pod, "one.yaml")])
    assert [a.pod for a in got.advices] == [a.pod for a in plain.advices] and len(got.advices) == 4
