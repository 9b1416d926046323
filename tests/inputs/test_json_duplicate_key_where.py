"""A JSON text that repeats a key is refused with WHERE: the repeated key's
field path (as a YAML file's errors write it) and its line and column
(1-based, in characters, lines broken as YAML breaks them), the words
``invalid JSON: duplicate key 'k'`` kept:
``FILE: steps[0].pod.spec.containers[0].name: invalid JSON: duplicate key
'name' (line 1, column 77)``. The same text read as YAML gives the same
path and position. Every door that reads JSON says it: ``simulate
FILE.json`` (streamed or not), the web server's 400 answer; the readers
that take a repeated key as Go does (a fleet dump, ``pairs=``) still take
it, without looking for where."""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import podnuma.inputs.documents as documents
import podnuma.inputs.scenario_stream as scenario_stream
from podnuma.cli import cli
from podnuma.errors import InputError
from podnuma.inputs.documents import (
    DuplicateJSONKey,
    load_json,
    load_json_streamed,
    parse_documents,
)

from ..scenario.helpers import base

SRC = Path(__file__).resolve().parents[2] / "src"
FLEET_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fleet"

DUP_POD = '{"steps":[{"pod":{"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","name":"d"}]}}}]}'

# text -> (field path, key, line, column)
CASES: dict[str, tuple[str, tuple[str, str, int, int]]] = {
    "top-level": ('{"a": 1, "b": 2, "a": 3}', ("a", "a", 1, 18)),
    "the brief's example": (DUP_POD, ("steps[0].pod.spec.containers[0].name", "name", 1, 77)),
    "in arrays and objects": ('[1, [2, {"q": [{}, {"z": 1, "y": 2, "z": 3}]}]]', ("[1][1].q[1].z", "z", 1, 37)),
    "pretty-printed": ('{\n  "a": {\n    "b": 1,\n    "c": [],\n    "b": 3\n  }\n}\n', ("a.b", "b", 5, 5)),
    "an escape equal to a plain key": ('{"ab": 1, "a\\u0062": 2}', ("ab", "ab", 1, 11)),
    "a plain key equal to an escape": ('{"x": {"\\u00e9": 1, "é": 2}}', ("x.é", "é", 1, 21)),
    "non-ASCII before it": ('{"é€😀": "ñ", "a": 1, "a": 2}', ("a", "a", 1, 22)),
    "CRLF lines": ('{"x": 1,\r\n "a": 1,\r\n "a": 2}', ("a", "a", 3, 2)),
    "a key with a dot": ('{"m": {"example.com/gpu": 1, "example.com/gpu": 2}}', ("m.example.com/gpu", "example.com/gpu", 1, 30)),
}  # fmt: skip


def _message(path: str, key: str, line: int, column: int) -> str:
    return f"f.json: {path}: invalid JSON: duplicate key {key!r} (line {line}, column {column})"


def _refusal(text: str | bytes) -> InputError:
    with pytest.raises(InputError) as e:
        load_json(text, name="f.json")
    return e.value


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_message_says_where(case: str) -> None:
    text, (path, key, line, column) = CASES[case]
    err = _refusal(text)
    assert isinstance(err, DuplicateJSONKey)
    assert str(err) == _message(path, key, line, column)
    assert err.path == path
    assert err.message == f"invalid JSON: duplicate key {key!r} (line {line}, column {column})"
    assert str(_refusal(text.encode())) == str(err)  # bytes (a request body): the same, in characters


@pytest.mark.parametrize("case", sorted(CASES))
def test_where_is_where_yaml_says(case: str) -> None:
    """The same text read as YAML (JSON is YAML) names the same field and
    position: columns in characters (not bytes), a CRLF one break."""
    text, (path, key, line, column) = CASES[case]
    with pytest.raises(InputError) as e:
        parse_documents(text, name="f.json")
    assert str(e.value) == f"f.json: {path}: duplicate key {key!r} (line {line}, column {column})"


def test_line_breaks_are_yaml_s() -> None:
    """A lone CR, and NEL, LS and PS inside strings, break lines as YAML
    (libyaml, PyYAML) breaks them."""
    for brk in ("\r", "\x85", "\u2028", "\u2029"):
        text = '{"x": "p' + brk + 'q", "a": 1, "a": 2}' if brk != "\r" else '{"x": 1,\r "a": 1,\r "a": 2}'
        err = _refusal(text)
        with pytest.raises(InputError) as y:
            parse_documents(text, name="f.json")
        assert err.message == "invalid JSON: " + y.value.message, repr(brk)


def test_the_first_object_to_end_is_told() -> None:
    """The key refused is the one the decoder refuses: of the first object
    to end that repeats a key (an inner one before its parent), its first
    key given again."""
    text = '{"a": 1, "a": {"b": 1, "c": 1, "c": 2, "b": 2}}'
    assert str(_refusal(text)) == _message("a.c", "c", 1, 32)
    text = '{"a": 1, "b": 1, "b": 2, "a": 2}'
    assert str(_refusal(text)) == _message("b", "b", 1, 18)


def test_a_parent_s_own_earlier_repeat_does_not_hide_it() -> None:
    """An object that repeats a key of its own before the value refused
    (which ends first) still gives where the refused one is."""
    for text, path, key in [('{"a": 1, "a": 2, "b": {"c": 1, "c": 2}}', "b.c", "c"),
                            ('{"x": {"a":1,"a":2,"b":{"c":1,"c":2}}}', "x.b.c", "c"),
                            ('{"a":1,"a":2,"b":[{"c":1,"c":2}]}', "b[0].c", "c"),
                            ('{"k":1,"k":2,"b":{"k":1,"x":2,"x":3}}', "b.x", "x")]:
        assert str(_refusal(text)) == _message(path, key, 1, text.rindex(f'"{key}"') + 1)


def test_deep_nesting_and_long_runs_are_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where is found in one pass over the text, whatever its nesting: a
    body of about 1 MB nested 900 deep, the repeat at the bottom (looking
    item by item, level by level, decoded its 1 MB 900 times). Each key is
    decoded once: the string scanner runs once per string of the text."""
    depth = 900
    text = "[" * depth + '{"x": [' + ",".join(["0"] * 500_000) + '], "s": "' + "y" * 1000 \
        + '", "a": 1, "a": 2}' + "]" * depth
    calls = []
    real = documents._scanstring

    def counted(t: str, i: int) -> tuple[str, int]:
        calls.append(i)
        return real(t, i)

    monkeypatch.setattr(documents, "_scanstring", counted)
    err = _refusal(text)
    assert str(err) == _message("[0]" * depth + ".a", "a", 1, text.index('"a": 2') + 1)
    assert len(calls) == text.count('"') // 2 == 5


def test_a_path_or_message_set_is_kept() -> None:
    """A field path or message set on the refusal is not replaced by the
    one found later."""
    err = _refusal('{"a": {"b": 1, "b": 2}}')
    err.path = "outer"
    assert str(err) == "f.json: outer: invalid JSON: duplicate key 'b' (line 1, column 16)"
    err = _refusal('{"a": {"b": 1, "b": 2}}')
    err.message = "renamed"
    assert (err.path, str(err)) == ("a.b", "f.json: a.b: renamed")


def test_a_text_malformed_after_the_duplicate() -> None:
    """The decoder stops at the object that repeats a key: what follows it
    is not read, nor looked at for where."""
    text = '{"a": {"k": 1, "k": 2}, "b": [1, 2,'
    assert str(_refusal(text)) == _message("a.k", "k", 1, 16)


def test_a_reader_that_takes_repeated_keys_still_does() -> None:
    """``pairs=`` (Go's decoder: the last duplicate wins) is untouched."""
    def last_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        return dict(pairs)

    assert load_json('{"a": 1, "a": 2}', name="f.json", pairs=last_wins) == {"a": 2}


def test_where_is_found_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that catches the refusal (and reads the text its own way)
    pays nothing for the position: it is looked for when the message is
    read, once."""
    calls: list[str] = []
    real = documents._duplicate_where

    def counted(*args: Any) -> Any:
        calls.append("x")
        return real(*args)

    monkeypatch.setattr(documents, "_duplicate_where", counted)
    try:
        load_json(DUP_POD, name="f.json")
    except DuplicateJSONKey as e:
        err = e
    assert calls == []
    assert err.path == "steps[0].pod.spec.containers[0].name"
    assert str(err).endswith("(line 1, column 77)")
    assert calls == ["x"]


def test_the_refusal_pickles_without_the_text() -> None:
    """(A refusal may cross between processes: its pickle holds the
    message, not the text it was found in. The pickle's size depends on
    what else is installed: tblib, when there, pickles the traceback too.)"""
    err = _refusal(DUP_POD)
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, DuplicateJSONKey)
    assert str(again) == str(err) == _message("steps[0].pod.spec.containers[0].name", "name", 1, 77)
    data = pickle.dumps(_refusal(DUP_POD + " " * 100_000))
    assert b" " * 1000 not in data and len(data) < 20_000


def test_where_unknown_keeps_the_old_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "_duplicate_where", lambda *_: None)
    err = _refusal(DUP_POD)
    assert str(err) == "f.json: invalid JSON: duplicate key 'name'"


def test_the_streamed_reader_says_where() -> None:
    """``load_json_streamed`` (a scenario's steps one at a time) refuses
    with the same words, an item's duplicate too."""
    items = ",".join(['{"x": 1}'] * 50 + ['{"p": {"q": 1,\n "q": 2}}'])
    text = '{"top": 1, "steps": [' + items + "]}"
    with pytest.raises(InputError) as e:
        load_json_streamed(text, name="f.json", key="steps")
    assert str(e.value) == _message("steps[50].p.q", "q", 2, 2)
    with pytest.raises(InputError) as e:
        load_json_streamed('{"a": 1, "a": 2, "steps": []}', name="f.json", key="steps")
    assert str(e.value) == _message("a", "a", 1, 10)


# -- the doors -------------------------------------------------------------


def _pod_scenario_text(dup_at: int, steps: int) -> tuple[str, int, int]:
    """A JSON scenario whose step ``dup_at`` repeats a container's name,
    one step a line: the text, the line and the column of the repeat."""
    doc = base()
    step = doc["steps"][0]
    lines = [json.dumps(step) for _ in range(steps)]
    good = lines[dup_at]
    lines[dup_at] = good.replace('"name": "app"', '"name": "app", "name": "app"', 1)
    head = json.dumps({k: v for k, v in doc.items() if k != "steps"})[:-1] + ', "steps": [\n'
    text = head + ",\n".join(lines) + "\n]}\n"
    line = head.count("\n") + dup_at + 1
    column = lines[dup_at].index('"name": "app", "name"') + len('"name": "app", ') + 1
    return text, line, column


def test_simulate_a_json_file(tmp_path: Path) -> None:
    text, line, column = _pod_scenario_text(1, 2)
    path = tmp_path / "scenario.json"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["simulate", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: {path}: steps[1].addPod.spec.containers[0].name: invalid JSON: duplicate key 'name' "
        f"(line {line}, column {column})\n"
    )


def test_simulate_the_brief_s_file_in_a_process(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text(DUP_POD)
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "simulate", str(path)],
                          capture_output=True, text=True, timeout=60, env=_env())
    assert proc.returncode == 2
    assert proc.stderr == (f"error: {path}: steps[0].pod.spec.containers[0].name: invalid JSON: "
                           "duplicate key 'name' (line 1, column 77)\n")


@pytest.mark.parametrize("msgspec_from", [0, 1 << 40], ids=["msgspec", "standard-library"])
def test_simulate_a_long_json_file_read_a_step_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, msgspec_from: int
) -> None:
    """The duplicate far into the steps (some played already, read in
    chunks): the whole read's refusal, with where."""
    if msgspec_from == 0:
        pytest.importorskip("msgspec")
    monkeypatch.setattr(scenario_stream, "MSGSPEC_FROM", msgspec_from)
    monkeypatch.setattr(scenario_stream, "_CHUNK", 4096)
    text, line, column = _pod_scenario_text(300, 400)
    path = tmp_path / "long.json"
    path.write_text(text)
    for output in ("json", "yaml"):
        result = CliRunner().invoke(cli, ["simulate", str(path), "-o", output])
        assert result.exit_code == 2, result.output
        assert result.stderr == (
            f"error: {path}: steps[300].addPod.spec.containers[0].name: invalid JSON: duplicate key "
            f"'name' (line {line}, column {column})\n"
        )


def test_simulate_standard_input_says_where_too() -> None:
    """Standard input is read as YAML (JSON is YAML): the YAML reader's
    words, the same field and position."""
    result = CliRunner().invoke(cli, ["simulate", "-"], input=DUP_POD)
    assert result.exit_code == 2
    assert result.stderr == ("error: <stdin>: steps[0].pod.spec.containers[0].name: duplicate key 'name' "
                             "(line 1, column 77)\n")
    text = '{"é€😀": "ñ", "steps": [], "steps": []}'
    result = CliRunner().invoke(cli, ["simulate", "-"], input=text)
    assert result.stderr == "error: <stdin>: steps: duplicate key 'steps' (line 1, column 27)\n"
    assert str(_refusal(text)) == _message("steps", "steps", 1, 27)


def _env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(SRC)
    return env


def _fleet_with_duplicates(tmp_path: Path) -> Path:
    d = tmp_path / "fleet"
    shutil.copytree(FLEET_EXAMPLE, d)
    pods = d / "pods.json"
    pods.write_text(pods.read_text().replace('"kind": "Pod",', '"kind": "Pod", "kind": "Pod",', 1))
    return d


def test_a_fleet_dump_with_a_repeated_key_is_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fleet dump is decoded as Go decodes it (the last duplicate wins):
    not refused, and the position of the repeat is not looked for (a dump
    of hundreds of MB)."""
    from podnuma.fleet.files import read_document

    d = _fleet_with_duplicates(tmp_path)

    def never(*_: Any) -> Any:
        raise AssertionError("looked for where")

    monkeypatch.setattr(documents, "_duplicate_where", never)
    doc, issue = read_document(d / "pods.json")
    assert issue is None
    assert doc["items"][0]["kind"] == "Pod"


def test_fleet_analyze_reads_a_dump_with_a_repeated_key(tmp_path: Path) -> None:
    d = _fleet_with_duplicates(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "podnuma.cli", "fleet", "analyze", str(d), "-o", "json"],
                          capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "duplicate key" not in proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["kind"] == "FleetReport"


# -- the web server ----------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from tests.web.conftest import running

    with running() as url:
        yield url


def _error_of(server: str, path: str, body: bytes) -> str:
    from tests.web.test_api import call

    status, ctype, data = call(server + path, body, "application/json")
    assert status == 400, (status, data[:300])
    assert ctype.startswith("application/json")
    answer = json.loads(data)
    assert list(answer) == ["error"], answer
    return str(answer["error"])


@pytest.mark.parametrize("endpoint", ["/api/compare", "/api/advise"])
def test_the_web_s_json_body_says_where(server: str, endpoint: str) -> None:
    body = '{"pod": {"metadata": {"name": "é"},\n "metadata": {}}}'.encode()
    assert _error_of(server, endpoint, body) == (
        "request body: pod.metadata: invalid JSON: duplicate key 'metadata' (line 2, column 2)"
    )


def test_the_web_s_json_scenario_says_where(server: str) -> None:
    """A scenario posted as ``x.json`` is read as JSON (in a worker
    process: its message, worded there, is what comes back)."""
    assert _error_of(server, "/api/simulate?name=x.json", DUP_POD.encode()) == (
        "x.json: steps[0].pod.spec.containers[0].name: invalid JSON: duplicate key 'name' (line 1, column 77)"
    )


def test_the_web_s_fleet_report_says_where(server: str) -> None:
    from podnuma.web.app import FLEET_EXTRA

    if not FLEET_EXTRA:
        pytest.skip("the fleet extra (plotly) is not installed")
    body = b'{"apiVersion": "podnuma.io/v1", "kind": "FleetReport", "kind": "FleetReport"}'
    assert _error_of(server, "/api/fleet/html", body) == (
        "fleet-report.json: kind: invalid JSON: duplicate key 'kind' (line 1, column 56)"
    )
