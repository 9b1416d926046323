"""Every YAML text podnuma writes reads back, through podnuma's own reader,
as the document that was written.

podnuma reads YAML as go-yaml v2 does (:mod:`podnuma.inputs.goyaml`), and
go-yaml resolves more plain scalars than PyYAML's YAML 1.1 resolver does:
``1e3`` and ``1e10`` are floats, ``0o17`` an integer, ``y`` and ``N``
booleans. The writers are PyYAML's emitter, so a string such as ``1e3``
must be quoted by them although PyYAML alone would write it plain; a file
written by ``simulate --as-scenario`` otherwise names a pod with a number
and no longer replays. Each writer is held here to the reader, on strings
that go-yaml or PyYAML resolve to something else and on ordinary names,
as values, as keys, in block and in flow style.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podnuma.cli import cli
from podnuma.cli.options import write_scenario_file
from podnuma.inputs.documents import parse_documents
from podnuma.render.serialize import dump_scenario_yaml, dump_yaml
from podnuma.render.yaml_text import write_yaml_run

from ..scenario.helpers import base

#: strings that some YAML 1.1 or go-yaml resolver reads as a number, a
#: boolean, a null, a timestamp or a merge key, strings the emitter must
#: quote for their characters, and plain names
TRICKY = [
    "1e3", "0o17", "1e10", "0x1F", ".inf", "-.5", "+1", "1_000", "y", "N", "off", "~", "null",
    "", " x", "a: b", "#c", "2026-01-01", "12:30",
    "Y", "n", "yes", "On", "NULL", "TRUE", ".NaN", "-.inf", "<<", "0755", "0b101", ".5",
    "1e-3", "-1", "0", "1.", "1E3", "+.5", "0x_1F", "1_0.5", "2026-1-1", "2026-01-01T10:00:00Z",
    "12:30:45", "1:20", "=",
    "app", "pod-1", "nginx", "default", "ns/name", "0-3,8", "uid-a", "e3", "1e", "0o8", "yy",
    "nope", "x1e3", "a b", "1.2.3", "v1", "-", "é",
]


def _document() -> dict[str, Any]:
    """The tricky strings as mapping values, as keys (with a value that is
    one of them, too), as list items (a list of scalars: flow style in the
    scenario writer) and in mappings inside a list."""
    return {
        "values": {f"k{i}": s for i, s in enumerate(TRICKY)},
        "keys": {s: i for i, s in enumerate(TRICKY)},
        "pairs": {s: s for s in TRICKY},
        "list": list(TRICKY),
        "rows": [{"name": s, "n": i} for i, s in enumerate(TRICKY)],
    }


def _read(text: str) -> Any:
    docs = parse_documents(text, name="written")
    assert len(docs) == 1
    return docs[0].data


def _run_text(node: Any, steps: list[Any], checkpoints: Any) -> str:
    out = io.StringIO()
    write_yaml_run(out, node, iter(steps), lambda: (checkpoints, {"extra": dict(node)}))
    return out.getvalue()


def test_dump_yaml_reads_back() -> None:
    doc = _document()
    assert _read(dump_yaml(doc)) == doc


def test_dump_scenario_yaml_reads_back() -> None:
    doc = _document()
    doc["node"] = {"name": "1e3", "cpus": [{"id": 0, "core": 0, "name": s} for s in TRICKY]}
    assert _read(dump_scenario_yaml(doc)) == doc


@pytest.mark.parametrize("text", TRICKY, ids=repr)
def test_each_string_reads_back_from_each_writer(text: str, tmp_path: Path) -> None:
    doc = {"name": text, text: [text, {text: text}]}
    assert _read(dump_yaml(doc)) == doc, dump_yaml(doc)
    assert _read(dump_scenario_yaml(doc)) == doc, dump_scenario_yaml(doc)
    path = tmp_path / "s.yaml"
    write_scenario_file(path, doc)
    assert _read(path.read_text(encoding="utf-8")) == doc, path.read_text(encoding="utf-8")


def test_write_scenario_file_reads_back(tmp_path: Path) -> None:
    doc = _document()
    path = tmp_path / "scenario.yaml"
    write_scenario_file(path, doc, ["cpuManagerPolicy=static"])
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# kubeletConfig with --set cpuManagerPolicy=static\n")
    assert _read(text) == doc


def test_run_document_reads_back() -> None:
    # the first step goes through the emitter, the others through the
    # writer beside it where it can take them (yaml_steps): both quote
    node = {"name": "1e3", "cpus": "0-3", "labels": {s: s for s in TRICKY}}
    steps = [{"index": i, "pod": s, "containers": [{"name": s, s: s}]} for i, s in enumerate(TRICKY)]
    steps.insert(0, {"index": -1, "pod": "1e3", "containers": [{"name": "y"}]})
    checkpoints = {"cpuManager": {"entries": {s: {"1e3": "0,2"} for s in TRICKY}}}
    text = _run_text(node, [dict(s) for s in steps], checkpoints)
    assert _read(text) == {"node": node, "steps": steps, "checkpoints": checkpoints, "extra": node}


def test_simulate_as_scenario_replays_a_pod_named_like_a_number(tmp_path: Path) -> None:
    doc = base()
    meta = doc["steps"][0]["addPod"]["metadata"]
    meta["name"] = "1e3"
    doc["steps"][0]["addPod"]["spec"]["containers"][0]["name"] = "0o17"
    doc["node"]["name"] = "y"
    original = tmp_path / "original.json"
    original.write_text(json.dumps(doc), encoding="utf-8")
    written = tmp_path / "written.yaml"
    runner = CliRunner()
    first = runner.invoke(cli, ["simulate", str(original), "-o", "json", "--as-scenario", str(written)])
    assert first.exit_code == 0, first.output
    replay = runner.invoke(cli, ["simulate", str(written), "-o", "json"])
    assert replay.exit_code == 0, replay.output
    assert replay.output == first.output
    assert json.loads(replay.output)["steps"][0]["pod"] == "default/1e3"
    # and the run's YAML output reads back as its JSON output
    as_yaml = runner.invoke(cli, ["simulate", str(original), "-o", "yaml"])
    assert as_yaml.exit_code == 0, as_yaml.output
    assert _read(as_yaml.output) == json.loads(first.output)


def test_a_number_past_the_float_range_is_written_as_its_text() -> None:
    """A JSON number past the float range (kept as its text, a ``str``
    that remembers it was a number) is written by each YAML writer, as the
    text (a quantity of that text reads the same), not refused."""
    from podnuma.golang.jsonnumbers import JSONNumberText, json_float

    big = json_float("1e400")
    assert type(big) is JSONNumberText
    doc = {"limits": {"cpu": big}, "list": [big]}
    for dump in (dump_yaml, dump_scenario_yaml):
        assert _read(dump(doc)) == {"limits": {"cpu": "1e400"}, "list": ["1e400"]}
