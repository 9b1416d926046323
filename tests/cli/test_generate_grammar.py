"""``podnuma fleet generate``: the directory is ``--output-dir``, ``-o`` the
format of the summary of what was written, as ``-o`` is everywhere
(docs/cli.md): ``table`` (the default) a note on standard error that
``--quiet`` silences, ``json``/``yaml`` a document on standard output; the
old ``-o DIR`` refused in one line that says where the directory goes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from podnuma.cli import cli

GENERATE = ("fleet", "generate", "--nodes", "3", "--pods-per-node", "4", "--seed", "7")


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), prog_name="podnuma")


def _on_disk(d: Path) -> list[str]:
    return sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())


def _pods_on_disk(d: Path) -> int:
    return sum(len(json.loads(f.read_text())["items"]) for f in (d / "pods").iterdir())


def _nodes_on_disk(d: Path) -> int:
    return len(json.loads((d / "nodes.json").read_text())["items"])


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("per_file", ["100", "1", "0"])
def test_a_document_of_what_was_written(tmp_path: Path, fmt: str, per_file: str) -> None:
    out = tmp_path / "fleet"
    r = _invoke(*GENERATE, "--nodes-per-pods-file", per_file, "--output-dir", str(out), "-o", fmt)
    assert r.exit_code == 0, r.output
    assert r.stderr == ""  # the document says it: no note
    doc: dict[str, Any] = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
    files = _on_disk(out)
    assert doc == {
        "directory": str(out),
        "counts": {"nodes": 3, "pods": _pods_on_disk(out), "files": len(files)},
        "files": files,
    }
    assert doc["counts"]["nodes"] == _nodes_on_disk(out)
    assert doc["counts"]["pods"] > 0
    assert "nodes.json" in doc["files"] and "fleet.yaml" in doc["files"]


def test_json_and_yaml_are_the_same_document(tmp_path: Path) -> None:
    j = _invoke(*GENERATE, "--output-dir", str(tmp_path / "a"), "--output", "json")
    y = _invoke(*GENERATE, "--output-dir", str(tmp_path / "a2"), "-oyaml")
    assert j.exit_code == 0 and y.exit_code == 0, (j.output, y.output)
    jd, yd = json.loads(j.stdout), yaml.safe_load(y.stdout)
    assert jd["directory"].endswith("/a") and yd["directory"].endswith("/a2")
    assert {k: v for k, v in jd.items() if k != "directory"} == {k: v for k, v in yd.items() if k != "directory"}


def test_a_relative_directory_is_named_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = _invoke(*GENERATE, "--output-dir", "sub/f", "-o", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["directory"] == "sub/f"
    assert doc["files"] == _on_disk(tmp_path / "sub" / "f")


@pytest.mark.parametrize("table", [[], ["-o", "table"]], ids=["default", "table"])
def test_the_table_is_a_note_on_standard_error_only(tmp_path: Path, table: list[str]) -> None:
    out = tmp_path / "fleet"
    r = _invoke(*GENERATE, "--output-dir", str(out), *table)
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    files = _on_disk(out)
    assert r.stderr == (f"note: wrote 3 nodes, {_pods_on_disk(out)} pods in {len(files)} files "
                        f"to {out}\n")


@pytest.mark.parametrize("fmt", [None, "table"])
def test_quiet_silences_the_note(tmp_path: Path, fmt: str | None) -> None:
    out = tmp_path / "fleet"
    r = _invoke("-q", *GENERATE, "--output-dir", str(out), *(["-o", fmt] if fmt else []))
    assert r.exit_code == 0, r.output
    assert r.stdout == "" and r.stderr == ""
    assert (out / "nodes.json").is_file()


def test_quiet_keeps_the_document(tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    r = _invoke("-q", *GENERATE, "--output-dir", str(out), "-o", "json")
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert json.loads(r.stdout)["files"] == _on_disk(out)


REFUSED = ("error: Invalid value for '--output' / '-o': {value!r} is not one of table, wide, json, yaml: "
           "-o is the output format; the directory is given with --output-dir DIRECTORY "
           "(see 'podnuma fleet generate --help')\n")


@pytest.mark.parametrize("args", [
    ["-o", "{d}"],  # the old form, alone
    ["-o{d}"],
    ["--output", "{d}"],
    ["--output-dir", "{d}", "-o", "{d}"],
    ["-o", "{d}", "--output-dir", "{d}"],
], ids=["o", "o-joined", "output", "dir-then-o", "o-then-dir"])
def test_the_old_dash_o_directory_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    d = str(tmp_path / "fleet")
    r = _invoke(*GENERATE, *(a.format(d=d) for a in args))
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == REFUSED.format(value=d)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_directory_named_like_a_format_is_given_with_output_dir(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = _invoke(*GENERATE, "-o", "json")  # the format: the directory is still required
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("error: Missing option '--output-dir'") and r.stderr.count("\n") == 1
    r = _invoke(*GENERATE, "--output-dir", "json", "-o", "yaml")
    assert r.exit_code == 0, r.output
    assert yaml.safe_load(r.stdout)["directory"] == "json"
    assert (tmp_path / "json" / "nodes.json").is_file()


def test_a_directory_name_with_a_line_break_stays_one_line(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = _invoke(*GENERATE, "-o", "a\nb")
    assert r.exit_code == 2
    assert r.stderr == REFUSED.format(value="a\nb")
    assert r.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_output_dir_has_no_short_form() -> None:
    help_text = _invoke("fleet", "generate", "--help").stdout
    assert "--output-dir DIRECTORY" in help_text
    assert "-o, --output [table|wide|json|yaml]" in help_text
    assert "-o, --output-dir" not in help_text and "--output-dir, -o" not in help_text
