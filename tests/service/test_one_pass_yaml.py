"""``simulate FILE.yaml -o json|yaml`` reads a YAML file in one pass too
(inputs/scenario_yaml.py): the same output, refusals (wording, field path,
line and column) and notes as the whole-document read, on the one-pass
JSON cases written as YAML (block and flow style), on YAML's own cases
(anchors and aliases across steps, merge keys, alias bombs, a second
document, tags, tabs, problems late in the file) and on every example
scenario; with reads of the default size and of a few bytes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from podnuma.errors import InputError
from podnuma.inputs import scenario_yaml
from podnuma.inputs.documents import parse_document, read_text
from podnuma.inputs.limits import ReadLimits
from podnuma.inputs.scenario_stream import ReadWhole, ScenarioFile
from podnuma.inputs.scenario_yaml import YAMLStepReader
from tests.service.test_one_pass import CASES, _examples, _long, _one_pass, _pod, _scenario, _whole


def _dump(doc: Any, flow: bool = False) -> str:
    out: str = yaml.safe_dump(doc, sort_keys=False, default_flow_style=flow, allow_unicode=True)
    return out


def _yaml_cases() -> dict[str, str]:
    cases: dict[str, str] = {}
    for name, text in CASES.items():
        try:
            doc = json.loads(text)
        except ValueError:
            continue
        cases[name] = _dump(doc)
    long = _scenario(_long(200, 7))
    cases["long-flow"] = _dump(long, flow=True)
    cases["json-text"] = CASES["long"]  # JSON is YAML
    block = _dump(long)
    lines = block.splitlines(keepends=True)
    late = max(i for i, line in enumerate(lines) if line.startswith("- addPod:"))
    cases["malformed-late"] = "".join(lines[:late] + ["- addPod: {]\n"] + lines[late:])
    cases["tab-late"] = "".join(lines[:late] + ["- addPod:\n\t  kind: Pod\n"] + lines[late:])
    cases["duplicate-key-late"] = "".join(
        lines[:late] + ["- addPod:\n    kind: Pod\n    kind: Pod\n"] + lines[late:])
    cases["second-document"] = block + "---\nkind: Other\n"
    cases["steps-twice"] = block + "steps: []\n"
    cases["key-after-steps"] = block + "apiServer: {}\n"
    cases["document-end"] = block + "...\n"
    cases["unknown-alias-late"] = "".join(lines[:late] + ["- *nowhere\n"] + lines[late:])
    cases["timestamp-and-ints"] = block.replace("uid: u-3\n", "uid: 2024-01-01\n").replace(
        "uid: u-4\n", "uid: 0x1F\n")
    # anchors in the head and in steps, aliases and merge keys across steps
    pod = yaml.safe_dump(_pod(1), sort_keys=False)
    indented = "".join("    " + line for line in pod.splitlines(keepends=True))
    first = indented.replace("    spec:\n", "    spec: &spec\n", 1)
    assert first != indented
    cases["anchors"] = (
        "apiVersion: podnuma.io/v1\nkind: Scenario\n"
        f"node: {json.dumps(_scenario([])['node'])}\n"
        "kubeletConfig: {cpuManagerPolicy: &policy static, reservedSystemCPUs: '0,16'}\n"
        "steps:\n"
        f"- addPod: &first\n{first}"
        "- removePod: u-1\n"
        "- addPod: *first\n"
        "- removePod: ns/p-1\n"
        "- addPod:\n    <<: *first\n    metadata: {name: p-2, namespace: ns, uid: u-2}\n"
        "- addPod: {apiVersion: v1, kind: Pod, spec: *spec,\n"
        "    metadata: {name: p-3, namespace: ns, annotations: {policy: *policy}}}\n"
        "- {removePod: ns/p-3}\n"
        "- &again {addPod: *first}\n"
        "- {removePod: u-1}\n"
        "- *again\n"
    )
    cases["anchor-in-head-unknown-top"] = cases["anchors"].replace(
        "steps:\n", "x-spare: &spare [1]\nsteps:\n- *spare\n", 1)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(6)
    )
    cases["alias-bomb-late"] = block + "".join(
        "  " + line for line in ("- addPod:\n    x:\n" + "".join(
            "      " + b for b in bomb.splitlines(keepends=True))).splitlines(keepends=True)
    ).replace("  - addPod", "- addPod", 1)
    cases["tagged-steps"] = block.replace("steps:\n", "steps: !!seq\n", 1)
    cases["anchored-steps"] = block.replace("steps:\n", "steps: &all\n", 1)
    cases["quoted-steps-key"] = block.replace("steps:\n", "'steps':\n", 1)
    cases["steps-alias"] = "lst: &l []\n" + block.replace("steps:\n", "steps: *l\nx:\n", 1)
    cases["empty-document"] = "# nothing\n"
    cases["scalar-document"] = "just text\n"
    return cases


YAML_CASES = _yaml_cases()


@pytest.mark.parametrize("chunk", [1 << 20, 5])
@pytest.mark.parametrize("name", sorted(YAML_CASES))
def test_one_pass_is_the_whole_read(
    name: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scenario_yaml, "_CHUNK", chunk)
    path = tmp_path / f"{name}.yaml"
    path.write_text(YAML_CASES[name], encoding="utf-8")
    want = _whole(path)
    assert _one_pass(path) == want
    if name in ("long", "long-flow", "anchors", "memory-static", "remove-rejected"):
        assert _one_pass(path, "yaml", True) == _whole(path, "yaml", True)


def test_cases_cover_outputs_and_refusals(tmp_path: Path) -> None:
    """The cases are not all refusals (nor all runs), and the YAML ones
    refuse where meant to."""
    got = {}
    for name, text in YAML_CASES.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        got[name] = _whole(path)[0]
    ok = {n for n, text in got.items() if not text.startswith("error: ")}
    assert {"long", "long-flow", "anchors", "json-text", "document-end", "quoted-steps-key",
            "tagged-steps", "anchored-steps", "timestamp-and-ints"} <= ok
    for name in ("malformed-late", "tab-late", "steps-twice", "duplicate-key-late", "second-document",
                 "unknown-alias-late", "alias-bomb-late", "anchor-in-head-unknown-top"):
        assert got[name].startswith("error: "), name
    assert "(line " in got["malformed-late"]


def test_not_utf8_late(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_yaml, "_CHUNK", 64)
    path = tmp_path / "s.yaml"
    text = YAML_CASES["long"].encode()
    path.write_bytes(text[:-200] + b"\xff" + text[-199:])
    got = _one_pass(path)
    assert got == _whole(path)
    assert got[0].startswith(f"error: {path}: scenario file is not UTF-8 text (byte ")


@pytest.mark.parametrize("example", _examples(), ids=lambda p: p.name)
def test_examples(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example scenario (YAML, with files beside it) both ways."""
    want = _whole(example)
    assert _one_pass(example) == want
    monkeypatch.setattr(scenario_yaml, "_CHUNK", 11)
    assert _one_pass(example, "yaml", True) == _whole(example, "yaml", True)


@pytest.mark.parametrize("limits", [
    ReadLimits(max_bytes=3000), ReadLimits(max_nodes=400), ReadLimits(max_depth=6),
    ReadLimits(max_alias_nodes=0), ReadLimits(max_alias_nodes=50), ReadLimits(max_nodes=100_000),
])
def test_reader_limits_are_the_whole_reads(limits: ReadLimits, tmp_path: Path) -> None:
    """A file over a limit is refused with the whole read's message, even
    when steps before the limit was passed were handed out."""
    rng = random.Random(5)
    text = YAML_CASES["anchors"] + "".join(
        "- addPod: *first\n- removePod: u-1\n" for _ in range(rng.randint(10, 20))
    )
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        whole = parse_document(
            read_text(path, what="scenario", limits=limits), name=str(path), limits=limits
        ).data
    except InputError as e:
        with pytest.raises(InputError) as got:
            _read(path, limits)
        assert str(got.value) == str(e)
        return
    verdict = _read(path, limits)
    assert verdict != "whole"
    top, items = verdict
    assert {**top, "steps": items} == whole


def _read(path: Path, limits: ReadLimits) -> Any:
    src = ScenarioFile(path, limits=limits)
    try:
        reader = YAMLStepReader(src)
        try:
            top = reader.head()
            return top, list(reader.items())
        except ReadWhole:
            return "whole"
    finally:
        src.close()


def test_flat_tree(tmp_path: Path) -> None:
    """No step's nodes are held once handed out: the reader's composer
    keeps only the head (its anchors aside)."""
    import gc

    path = tmp_path / "s.yaml"
    path.write_text(YAML_CASES["long"], encoding="utf-8")
    def nodes() -> int:
        gc.collect()
        return sum(isinstance(o, yaml.Node) for o in gc.get_objects())

    before = nodes()  # (what earlier tests left)
    src = ScenarioFile(path)
    try:
        reader = YAMLStepReader(src)
        reader.head()
        counts = []
        for i, _ in enumerate(reader.items()):
            if i % 50 == 0:
                counts.append(nodes() - before)
    finally:
        src.close()
    assert len(counts) >= 6
    # the 300 steps compose to thousands of nodes; a step's are a few dozen
    assert max(counts) <= 150, counts
    assert max(counts[len(counts) // 2:]) <= max(counts[:len(counts) // 2]) + 20, counts


def test_a_refused_file_is_read_whole_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the whole read refuses is parsed whole once: the answer's
    check asks the reader for the verdict it already has."""
    calls: list[str] = []

    def counted(text: str, **kw: Any) -> Any:
        calls.append(kw.get("name", ""))
        return parse_document(text, **kw)

    monkeypatch.setattr(scenario_yaml, "parse_document", counted)
    path = tmp_path / "s.yaml"
    path.write_text(YAML_CASES["malformed-late"], encoding="utf-8")
    got = _one_pass(path)
    assert got == _whole(path)
    assert got[0].startswith("error: ")
    assert len(calls) == 1
